"""The store's errors become HTTP errors in one place, the dispatcher."""

import pytest
import webob
import webob.dec

from nova_scoped_policies.api import handler
from nova_scoped_policies.api import util
from nova_scoped_policies.db import api as store_api


class _App:
    def __init__(self, exc):
        self.exc = exc

    @webob.dec.wsgify
    @util.json_faults
    def __call__(self, req):
        raise self.exc


@pytest.mark.parametrize('exc, status', [
    (store_api.NotFound('server group x has no scoped policies'), 404),
    (store_api.Conflict('instance y is a member of server group z'), 409),
    (webob.exc.HTTPBadRequest(explanation='name: must be a string'), 400),
])
def test_errors_become_json_faults(exc, status):
    resp = webob.Request.blank('/').get_response(_App(exc))
    assert resp.status_int == status
    assert resp.json['errors'][0]['status'] == status
    assert resp.json['errors'][0]['detail'] == (
        getattr(exc, 'explanation', None) or str(exc))


def test_other_errors_are_not_mapped():
    with pytest.raises(KeyError):
        webob.Request.blank('/').get_response(_App(KeyError('x')))


def test_the_dispatcher_maps_store_errors():
    def missing(req):
        raise store_api.NotFound('policy scope rack not found')

    dispatcher = handler.Dispatcher()
    dispatcher._map = handler.make_map({'/x': {'GET': missing}})
    resp = webob.Request.blank('/x').get_response(dispatcher)
    assert resp.status_int == 404
    assert resp.json['errors'][0]['detail'] == 'policy scope rack not found'


def test_handlers_do_not_map_errors_themselves():
    assert not hasattr(util, 'store_errors')
