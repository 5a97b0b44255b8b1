"""The world of the policy API's gabbi tests.

Six hosts in Placement (our fake, conformance-tested against the real
one), five aggregates and four instances:

====== ========================= =============================
host   aggregates                instances (allocations)
====== ========================= =============================
h1     RACK_A, ZONE_X            I1
h2     RACK_A, ZONE_X            I2
h3     RACK_B, ZONE_X            I3
h4     RACK_B, RACK_C, ZONE_Y
h5     RACK_C, ZONE_Y
h6     ZONE_Y
====== ========================= =============================

I4 has no allocations. RACK_C overlaps RACK_B at h4, so a scope holding
both would put h4 in two domains. Every id is exported to the YAML files
through ``$ENVIRON``, with each tenant's obfuscated form of the zone
aggregates (namespace ``NS``), computed here from the formula of
scoped-policies.rst.
"""

import os
import tempfile
import uuid

from gabbi import fixture
from oslo_config import cfg

from nova_scoped_policies.api import deploy
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import api as store_api
from nova_scoped_policies.db import migration
from nova_scoped_policies.placement import fake
from nova_scoped_policies import topology as topo
from tests import db_backends
from tests import placement_fixtures as pf


def _id(n: int) -> str:
    return f'00000000-0000-4000-8000-{n:012d}'


AGGREGATES = {'RACK_A': _id(101), 'RACK_B': _id(102), 'RACK_C': _id(103),
              'ZONE_X': _id(201), 'ZONE_Y': _id(202)}
HOSTS = {'h1': ['RACK_A', 'ZONE_X'], 'h2': ['RACK_A', 'ZONE_X'],
         'h3': ['RACK_B', 'ZONE_X'], 'h4': ['RACK_B', 'RACK_C', 'ZONE_Y'],
         'h5': ['RACK_C', 'ZONE_Y'], 'h6': ['ZONE_Y']}
INSTANCES = {'I1': (_id(1), 'h1'), 'I2': (_id(2), 'h2'),
             'I3': (_id(3), 'h3'), 'I4': (_id(4), None)}
PROJECTS = {'PROJECT_A': 'project-a', 'PROJECT_B': 'project-b',
            'ADMIN_PROJECT': 'admin-project'}
NS = '6f72348f-df5d-4e0f-a043-4be92996dbfe'
GROUPS = {'GROUP_1': _id(901), 'GROUP_2': _id(902), 'GROUP_3': _id(903)}


def environment() -> dict:
    env = {'NS': NS}
    env.update(AGGREGATES)
    env.update(PROJECTS)
    env.update(GROUPS)
    env.update({name: u for name, (u, _) in INSTANCES.items()})
    for agg in ('ZONE_X', 'ZONE_Y'):
        for proj in ('PROJECT_A', 'PROJECT_B'):
            env[f'{agg}_FOR_{proj[-1]}'] = topo.obfuscate(
                uuid.UUID(NS), PROJECTS[proj], AGGREGATES[agg])
    return env


os.environ.update(environment())

_APP = None


def setup_app():
    """gabbi's intercept. gabbi asks for it before the fixture starts, so
    it hands out a proxy to the application of the running fixture."""
    def proxy(environ, start_response):
        return _APP(environ, start_response)
    return proxy


def build_placement(client) -> None:
    for i, (host, aggs) in enumerate(sorted(HOSTS.items()), start=1):
        rp = _id(500 + i)
        client.create_provider(host, rp)
        client.set_inventory(rp, 0, {'VCPU': {'total': 8},
                                     'MEMORY_MB': {'total': 4096}})
        client.set_aggregates(rp, 1, [AGGREGATES[a] for a in aggs])
    providers = {p['name']: p['uuid'] for p in client.list_providers()}
    for instance, host in INSTANCES.values():
        if host:
            client.put_allocations(instance, {
                'allocations': {providers[host]: {'resources': {
                    'VCPU': 1, 'MEMORY_MB': 512}}},
                'project_id': PROJECTS['PROJECT_A'], 'user_id': 'u',
                'consumer_generation': None})


def make_conf(**api_overrides) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    nsp_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override('auth_strategy', 'noauth2',
                      group='scoped_policies_api')
    for key, value in api_overrides.items():
        conf.set_override(key, value, group='scoped_policies_api')
    return conf


def fresh_app(directory: str, conf: cfg.ConfigOpts = None, nova=None):
    """The policy API on a fresh fake Placement (:func:`build_placement`)
    and a SQLite store in ``directory``: (app, store, Placement fixture).
    """
    placement = pf.FakePlacementFixture(fake.FakePlacement())
    placement.setUp()
    client = pf.client_for(placement)
    build_placement(client)
    store = store_api.PolicyStore(f'sqlite:///{directory}/store.db')
    migration.upgrade(store.engine)
    app = deploy.loadapp(conf or make_conf(), store, client, nova)
    return app, store, placement


BACKEND = 'sqlite'
"""The store's database for the next fixture (see tests/db_backends.py)."""


class APIFixture(fixture.GabbiFixture):
    """A fresh store (on ``BACKEND``) and Placement for each YAML file."""

    def start_fixture(self):
        global _APP
        self.tmp = tempfile.TemporaryDirectory()
        self.placement = pf.FakePlacementFixture(fake.FakePlacement())
        self.placement.setUp()
        client = pf.client_for(self.placement)
        build_placement(client)
        url, self.drop = db_backends.create(BACKEND, self.tmp.name)
        self.store = store_api.PolicyStore(url)
        migration.upgrade(self.store.engine)
        _APP = deploy.loadapp(make_conf(max_group_members=3), self.store,
                              client)

    def stop_fixture(self):
        global _APP
        _APP = None
        self.store.engine.dispose()
        self.drop()
        self.placement.cleanUp()
        self.tmp.cleanup()
