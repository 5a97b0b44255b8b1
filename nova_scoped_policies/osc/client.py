"""The policy API client the commands use (keystoneauth1)."""

from osc_lib import exceptions

from nova_scoped_policies import client as api_client


class Client(api_client.Client):
    """Calls the policy API at its latest microversion; the API's errors
    are the command's (:class:`osc_lib.exceptions.CommandError`)."""

    def request(self, method, url, body=None):
        """Send one request and return the decoded body (None for 204).

        :raises osc_lib.exceptions.CommandError: the API's error detail.
        """
        try:
            return super().request(method, url, body)
        except api_client.APIError as exc:
            raise exceptions.CommandError(str(exc))
