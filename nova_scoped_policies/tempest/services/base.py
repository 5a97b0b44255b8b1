"""The policy API's REST client base: JSON bodies and microversions.

Every request asks for :attr:`PolicyClient.api_microversion` in
``OpenStack-API-Version: scoped-policies X.Y`` (none: the service's
minimum), and every answer must name the version asked for, as Tempest's
compute clients check Nova's.
"""

import json
import urllib.parse

from tempest.lib.common import api_version_utils
from tempest.lib.common import rest_client

HEADER = 'OpenStack-API-Version'
SERVICE_TYPE = 'scoped-policies'


class PolicyClient(rest_client.RestClient):
    """A client of the policy API at one microversion.

    :ivar api_microversion: the microversion every request asks for
        (``'1.4'``, ``'latest'``), or None for the service's minimum.
    """

    api_microversion = None

    def get_headers(self, accept_type=None, send_type=None):
        headers = super().get_headers(accept_type, send_type)
        if self.api_microversion:
            headers[HEADER] = f'{SERVICE_TYPE} {self.api_microversion}'
        return headers

    def request(self, method, url, extra_headers=False, headers=None,
                body=None, chunked=False):
        resp, resp_body = super().request(method, url, extra_headers,
                                          headers, body, chunked)
        if self.api_microversion and self.api_microversion != 'latest':
            api_version_utils.assert_version_header_matches_request(
                HEADER, f'{SERVICE_TYPE} {self.api_microversion}', resp)
        return resp, resp_body

    # one request, its status checked, its body decoded

    def call(self, method, url, expected, body=None, params=None):
        """``method url`` (with the query ``params``), its status checked.

        :returns: the decoded body (``{}`` when empty), its response as
            ``.response``.
        :raises tempest.lib.exceptions.RestClientException: any other
            status (``NotFound``, ``Conflict``...).
        """
        if params:
            url = f'{url}?{urllib.parse.urlencode(params, doseq=True)}'
        if method in ('GET', 'DELETE'):
            resp, data = getattr(self, method.lower())(url)
        else:
            resp, data = getattr(self, method.lower())(
                url, None if body is None else json.dumps(body))
        self.expected_success(expected, resp.status)
        return rest_client.ResponseBody(
            resp, json.loads(data) if data else {})
