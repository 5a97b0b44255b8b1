"""Horizon's view-test helpers with the policy API in the test user's
catalog; the API wrapper (``api.scoped_policies``) is mocked by each
test."""

from openstack_dashboard.test import helpers

from nova_scoped_policies.dashboard.api import scoped_policies as api

ENDPOINT = 'http://public.scoped-policies.example.com:8799'


def _with_policy_api(catalog):
    catalog.append({'type': api.SERVICE_TYPE, 'name': 'nova-scoped-policies',
                    'endpoints_links': [], 'endpoints': [
                        {'region': 'RegionOne', 'interface': i,
                         'url': ENDPOINT}
                        for i in ('admin', 'internal', 'public')]})


class TestCase(helpers.TestCase):
    def _setup_test_data(self):
        super()._setup_test_data()
        _with_policy_api(self.service_catalog)


class AdminTestCase(helpers.BaseAdminViewTests):
    def _setup_test_data(self):
        super()._setup_test_data()
        _with_policy_api(self.service_catalog)
