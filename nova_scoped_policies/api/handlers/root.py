"""``GET /``: the version document (no authentication needed)."""

import webob

from nova_scoped_policies.api import microversion
from nova_scoped_policies.api import util


def home(req: webob.Request) -> webob.Response:
    return util.json_response(req, {'versions': [{
        'id': 'v1.0', 'status': 'CURRENT',
        'min_version': microversion.MIN_VERSION,
        'max_version': microversion.MAX_VERSION,
        'links': [{'rel': 'self', 'href': req.application_url + '/'}],
    }]})
