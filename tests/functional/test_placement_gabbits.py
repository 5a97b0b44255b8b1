"""Placement's own gabbi files against the fake Placement.

openstack-placement ships the gabbi YAML files of its functional tests
(``placement/tests/functional/gabbits``). Those of the subset the fake
serves (:data:`FILES`) run here, unchanged, against
:class:`nova_scoped_policies.placement.fake.FakePlacement`: one pytest test
per file, its gabbi suite run with unittest, as
``tests/functional/api/test_gabbits.py`` runs ours.

Placement's fixtures build their world in a database; the fixtures of this
module (same class names, so that the YAML files find them) build the same
world in the fake's model and export the same ``$ENVIRON`` variables.

Files of routes or features the fake does not serve are left out by name
(:data:`LEFT_OUT`, with the reason); single steps of a chosen file that use
such a route are skipped by name (:data:`SKIPPED`, with the reason). Both
lists are printed with the pass count, e.g. ``fake Placement passes 250
of 260 steps``.
"""

import os
import typing
import unittest
import uuid

from gabbi import fixture
from gabbi import handlers
from gabbi import suitemaker
from gabbi import utils
import placement
import pytest
import webob

from nova_scoped_policies.placement import fake
from nova_scoped_policies.placement import model

GABBITS = os.path.join(os.path.dirname(placement.__file__), 'tests',
                       'functional', 'gabbits')

ALL_FILES = sorted(name[:-len('.yaml')] for name in os.listdir(GABBITS)
                   if name.endswith('.yaml'))

_AUTH = 'keystone tokens and policies (every caller is an admin)'
_NESTED = 'nested or sharing providers, granular request groups'
_CLASSES = '/resource_classes'

LEFT_OUT: typing.Dict[str, str] = {
    **{name: _AUTH for name in ALL_FILES
       if name.endswith(('-policy', '-legacy-rbac', '-secure-rbac'))},
    'confirm-auth': _AUTH,
    'cors': 'CORS middleware',
    'reshaper': '/reshaper',
    'resource-class-in-use': _CLASSES,
    'resource-classes': _CLASSES,
    'resource-classes-1-6': _CLASSES,
    'resource-classes-1-7': _CLASSES,
    'resource-classes-last-modified': _CLASSES,
    'allocation-candidates': _NESTED,
    'allocation-candidates-any-traits': _NESTED,
    'allocation-candidates-any-traits-groups': _NESTED,
    'allocation-candidates-bug-1792503': _NESTED,
    'allocation-candidates-mappings-numa': _NESTED,
    'allocation-candidates-mappings-sharing': _NESTED,
    'allocation-candidates-root-required': _NESTED,
    'allocations-mappings': _NESTED,
    'granular': _NESTED,
    'granular-same-subtree': _NESTED,
    'resource-provider': _NESTED,
    'resource-provider-bug-1779818': _NESTED,
    'same-subtree-deep': _NESTED,
}
"""Placement's gabbi files of what the fake does not serve, and why."""

FILES = [name for name in ALL_FILES if name not in LEFT_OUT]
"""The subset the fake serves: each file runs whole, but for
:data:`SKIPPED`."""

SKIPPED: typing.Dict[typing.Tuple[str, str], str] = {
    ('allocation-bad-class', 'create a resource class'): _CLASSES,
    ('allocations-1.28', 'get candidates with shared'): _NESTED,
    ('allocations-1.28', 'put that allocation to new consumer'):
        _NESTED + ' (uses the shared candidate)',
    ('allocations-1.28', 'put that allocation to existing consumer'):
        _NESTED + ' (uses the shared candidate)',
    ('consumer-types-1.38', 'reshaper accepts consumer type'): '/reshaper',
    ('consumer-types-1.38', 'confirm reshaped allocations'): '/reshaper',
    ('consumer-types-1.38', 'reshaper requires consumer type'): '/reshaper',
    ('consumer-types-1.38',
     'reshaper refuses consumer type earlier microversion'): '/reshaper',
    ('shared-resources', 'create custom magic'): _CLASSES,
    ('shared-resources', 'get allocation candidates shared'): _NESTED,
}
"""Steps of :data:`FILES` that use what the fake does not serve: (file,
step name) -> why. They are reported as skipped, never silently."""


# -- the world of the YAML files -------------------------------------------

class _App:
    """The WSGI app gabbi talks to: the current fixture's fake."""

    current: typing.Optional[fake.FakePlacement] = None

    def __call__(self, environ, start_response):
        return self.current(environ, start_response)


APP = _App()


def _uuid() -> str:
    return str(uuid.uuid4())


def _provider(name: str, inventories: typing.Mapping[str, dict],
              uuid_: typing.Optional[str] = None) -> str:
    """Create a provider with inventories in the current fake; its uuid.

    :param name: the provider's name.
    :param inventories: resource class -> inventory fields.
    :param uuid_: its uuid (default: a new one).
    """
    placement = APP.current.model
    provider = placement.add_provider(uuid_ or _uuid(), name)
    records = {}
    for rc, data in inventories.items():
        # one write per class, each a new generation, as Placement's
        # fixtures add them
        records[rc] = model.inventory(data)
        placement.set_inventories(provider.uuid, provider.generation,
                                  dict(records))
    return provider.uuid


class APIFixture(fixture.GabbiFixture):
    """A fresh fake and the variables of Placement's ``APIFixture``."""

    NAMES = ('RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1', 'RP_UUID2',
             'RP_NAME2', 'PROJECT_ID', 'ADMIN_PROJECT_ID',
             'SERVICE_PROJECT_ID', 'USER_ID', 'PROJECT_ID_ALT',
             'USER_ID_ALT', 'INSTANCE_UUID', 'MIGRATION_UUID',
             'CONSUMER_UUID', 'PARENT_PROVIDER_UUID',
             'ALT_PARENT_PROVIDER_UUID')

    def start_fixture(self) -> None:
        APP.current = fake.FakePlacement()
        for name in self.NAMES:
            os.environ[name] = _uuid()
        for suffix in ('', '1', '2'):
            os.environ[f'CUSTOM_RES_CLASS{suffix}'] = \
                f'CUSTOM_IRON_NFV{suffix}'

    def stop_fixture(self) -> None:
        APP.current = None


class AllocationFixture(APIFixture):
    """One provider (VCPU 10, DISK_GB 2048) and three consumers, two of
    ``USER_ID`` and one of ``ALT_USER_ID``, as Placement's fixture."""

    def start_fixture(self) -> None:
        super().start_fixture()
        env = os.environ
        for name in ('ALT_USER_ID', 'CONSUMER_0', 'CONSUMER_ID',
                     'ALT_CONSUMER_ID', 'ALT_RP_UUID', 'ALT_RP_NAME'):
            env[name] = _uuid()
        rp = _provider(env['RP_NAME'], {
            'DISK_GB': {'total': 2048, 'step_size': 10, 'min_unit': 10,
                        'max_unit': 1000},
            'VCPU': {'total': 10, 'max_unit': 10}}, env['RP_UUID'])
        placement = APP.current.model
        for consumer, user, resources in (
                ('CONSUMER_0', 'USER_ID', {'DISK_GB': 1000}),
                ('CONSUMER_ID', 'USER_ID', {'VCPU': 6}),
                ('ALT_CONSUMER_ID', 'ALT_USER_ID',
                 {'DISK_GB': 20, 'VCPU': 1})):
            # written without a consumer type, as Placement's fixture
            placement.write(env[consumer], model.Write(
                {rp: resources}, env['PROJECT_ID'], env[user], None))


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with VCPU, MEMORY_MB and DISK_GB, no
    aggregates, as Placement's fixture."""

    def start_fixture(self) -> None:
        super().start_fixture()
        for name in ('AGGA_UUID', 'AGGB_UUID', 'AGGC_UUID'):
            os.environ[name] = _uuid()
        for n in (1, 2, 3):
            os.environ[f'CN{n}_UUID'] = _provider(f'cn{n}', {
                'VCPU': {'total': 24}, 'MEMORY_MB': {'total': 128 * 1024},
                'DISK_GB': {'total': 2000}})


class GranularFixture(APIFixture):
    """Three compute nodes and three sharing providers in aggregates A, B
    and C with traits, as Placement's fixture (the fake serves them as
    providers of their own, not as shared resources: only the files of
    ``/resource_providers`` queries use it)."""

    TRAITS = {
        'cn_left': ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_GPU_API_DXVA',
                    'HW_NIC_DCB_PFC', 'CUSTOM_FOO'],
        'cn_middle': ['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE',
                      'HW_NIC_ACCEL_TLS'],
        'cn_right': ['HW_CPU_X86_MMX', 'HW_GPU_API_DXVA', 'CUSTOM_DISK_SSD'],
        'shr_disk_1': ['MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_DISK_SSD'],
        'shr_disk_2': ['MISC_SHARES_VIA_AGGREGATE'],
        'shr_net': ['MISC_SHARES_VIA_AGGREGATE']}
    AGGREGATES = {'cn_left': 'A', 'cn_middle': 'AB', 'cn_right': 'BC',
                  'shr_disk_1': 'A', 'shr_disk_2': 'AB', 'shr_net': 'C'}

    def start_fixture(self) -> None:
        super().start_fixture()
        placement = APP.current.model
        for agg in 'ABC':
            os.environ[f'AGG{agg}'] = _uuid()
        for name, traits in self.TRAITS.items():
            uuid_ = os.environ[name.upper()] = _provider(
                name, {'VCPU': {'total': 8}})
            for trait in traits:
                if not placement.known_trait(trait):
                    placement.add_trait(trait)
            provider = placement.provider(uuid_)
            placement.set_traits(uuid_, provider.generation, traits)
            placement.set_aggregates(
                uuid_, provider.generation,
                [os.environ[f'AGG{a}'] for a in self.AGGREGATES[name]])


# -- running a file ----------------------------------------------------------

def _suite(name: str) -> unittest.TestSuite:
    """The gabbi suite of one of Placement's YAML files, its skipped steps
    marked.

    :param name: the file's name without ``.yaml``.
    """
    data = utils.load_yaml(yaml_file=os.path.join(GABBITS, name + '.yaml'))
    for step in data['tests']:
        reason = SKIPPED.get((name, step['name']))
        if reason:
            step['skip'] = f'not served by the fake Placement: {reason}'
    return suitemaker.test_suite_from_dict(
        unittest.TestLoader(), name, data, GABBITS, str(uuid.uuid4()), 8001,
        __import__(__name__, fromlist=['_']), lambda: APP,
        handlers=[h() for h in handlers.RESPONSE_HANDLERS],
        test_loader_name=__name__)


_RESULTS: typing.Dict[str, unittest.TestResult] = {}


def run_file(name: str) -> unittest.TestResult:
    """Run one file's suite (once per session); the unittest result.

    :param name: the file's name without ``.yaml``.
    """
    if name not in _RESULTS:
        result = _RESULTS[name] = unittest.TestResult()
        _suite(name).run(result)
    return _RESULTS[name]


def _passed(result: unittest.TestResult) -> int:
    return (result.testsRun - len(result.failures) - len(result.errors)
            - len(result.skipped))


@pytest.mark.parametrize('name', FILES)
def test_placement_gabbits(name):
    result = run_file(name)
    problems = [f'{test.id()}:\n{trace}'
                for test, trace in result.failures + result.errors]
    print(f'{name}: fake Placement passes {_passed(result)} of '
          f'{result.testsRun} steps, {len(result.skipped)} skipped')
    assert not problems, '\n\n'.join(problems)
    skipped = {test.test_data['name'] for test, _ in result.skipped}
    assert skipped == {step for file, step in SKIPPED if file == name}


def test_lists_name_real_files_and_steps():
    assert set(LEFT_OUT) <= set(ALL_FILES)
    for name, step in SKIPPED:
        assert name in FILES
        data = utils.load_yaml(
            yaml_file=os.path.join(GABBITS, name + '.yaml'))
        assert step in {t['name'] for t in data['tests']}, (name, step)


def test_summary(capsys):
    """N of M steps of the subset pass; the lists of what is left out."""
    results = [run_file(name) for name in FILES]
    steps = sum(r.testsRun for r in results)
    passed = sum(_passed(r) for r in results)
    with capsys.disabled():
        print(f'\nfake Placement passes {passed} of {steps} steps of '
              f'{len(FILES)} of Placement\'s {len(ALL_FILES)} gabbi files')
        for name, why in sorted(LEFT_OUT.items()):
            print(f'  left out {name}: {why}')
        for (name, step), why in sorted(SKIPPED.items()):
            print(f'  skipped {name} / {step}: {why}')
    assert passed == steps - len(SKIPPED)


@pytest.mark.parametrize('method, path', [
    ('GET', '/resource_classes'),
    ('PUT', '/resource_classes/CUSTOM_GOLD'),
    ('POST', '/reshaper'),
    ('GET', '/resource_providers?in_tree=' + str(uuid.UUID(int=1))),
    ('GET', '/allocation_candidates?resources1=VCPU:1'),
])
def test_not_served_routes_say_so(method, path):
    app = fake.FakePlacement()
    req = webob.Request.blank(path, method=method, headers={
        'OpenStack-API-Version': 'placement latest'})
    resp = req.get_response(app)
    assert resp.status_int == 501
    error = resp.json['errors'][0]
    assert 'not served by the simulator\'s embedded Placement' in \
        error['detail']
    assert error['code'] == fake.NOT_SERVED_CODE
