"""What a repair's handlers do beside the planner: the waves of an apply
(moves that run together touch different hosts and different targets,
every target a server is in), a tenant's reason (nothing real named), and
the hosts a live migration names.
"""

import types

from nova_scoped_policies.api.handlers import repairs
from nova_scoped_policies.api import repair_tasks
from nova_scoped_policies.api import moves
from nova_scoped_policies.api import repairs as reads
from nova_scoped_policies.api import visibility
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.repair import planner
from nova_scoped_policies import topology as topo
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

SPREAD = parse_document({'policies': ['anti-affinity:host']})


def _problem(*targets):
    return planner.Problem((), {}, targets, Topology())


def test_moves_of_one_target_never_run_together():
    group = planner.Target.group('g', SPREAD, ['a', 'b'])
    moves = [planner.Move('a', 'h1', 'h2'), planner.Move('b', 'h3', 'h4')]
    assert [len(w) for w in repair_tasks.waves(moves, _problem(group), 4)] == [
        1, 1]


def test_a_server_in_a_group_and_a_stack_counts_for_both():
    # s is in group g and stack st; a is in g only: apart
    group = planner.Target.group('g', SPREAD, ['s', 'a'])
    stack = planner.Target.group('st', SPREAD, ['s', 'x'])
    moves = [planner.Move('s', 'h1', 'h2'), planner.Move('a', 'h3', 'h4')]
    for targets in ((group, stack), (stack, group)):
        assert [len(w) for w in repair_tasks.waves(
            moves, _problem(*targets), 4)] == [1, 1]


def test_independent_moves_share_a_wave_up_to_the_most():
    targets = [planner.Target.group(f'g{i}', SPREAD, [f's{i}'])
               for i in range(3)]
    moves = [planner.Move(f's{i}', f'h{i}', f'k{i}') for i in range(3)]
    assert [len(w) for w in repair_tasks.waves(moves, _problem(*targets), 2)] \
        == [2, 1]


def test_a_tenants_reason_names_no_real_host_or_domain():
    topology = topo.build(
        [Scope('rack', allow_identifiers=False)],
        [Domain('agg-1', 'secret-rack-1', 'rack',
                frozenset({'compute-1', 'compute-10'}))])
    hosts = tuple(planner.Host(n, {}) for n in ('compute-1', 'compute-10'))
    read = reads.Read(planner.Problem(hosts, {}, (), topology), {}, {})
    shown = reads.viewed(read, visibility.Viewer(False, 'p'))
    text = repairs._reason('violations left: group g: anti-affinity:rack: '
                           'secret-rack-1 holds 2 of max 1 (compute-10, '
                           'compute-1)', read, shown)
    for real in ('secret-rack-1', 'agg-1', 'compute-1', 'compute-10'):
        assert real not in text, text
    assert text.count(shown.host('compute-1')) == 1
    assert text.count(shown.host('compute-10')) == 1


class _Nova:
    """A compute API that names hypervisors by FQDN, two pages of them."""

    def __init__(self):
        self.sent = []
        self.host = 'node-1'

    def request(self, path, method, json=None, raise_exc=False,
                headers=None):
        pages = {
            '/os-hypervisors/detail': ({'hypervisors': [
                {'hypervisor_hostname': 'node-1.example.org',
                 'service': {'host': 'node-1'}}],
                'hypervisors_links': [{'rel': 'next', 'href':
                                       'http://nova/os-hypervisors/detail'
                                       '?marker=1'}]}),
            'http://nova/os-hypervisors/detail?marker=1': ({'hypervisors': [
                {'hypervisor_hostname': 'node-2.example.org',
                 'service': {'host': 'node-2'}}]}),
        }
        if path in pages:
            return types.SimpleNamespace(status_code=200,
                                         json=lambda: pages[path])
        if method == 'POST':
            self.sent.append(json)
            self.host = json['os-migrateLive']['host']
            return types.SimpleNamespace(status_code=202, text='')
        return types.SimpleNamespace(status_code=200, json=lambda: {'server': {
            'OS-EXT-SRV-ATTR:host': self.host, 'OS-EXT-STS:task_state': None,
            'status': 'ACTIVE'}})


def test_moves_name_the_compute_service_not_the_hypervisor():
    nova = _Nova()
    mover = moves.NovaMoves(nova, sleep=lambda s: None)
    mover.start('s1', 'node-2.example.org')
    assert nova.sent == [{'os-migrateLive': {
        'host': 'node-2', 'block_migration': 'auto'}}]
    assert mover.wait('s1', 'node-2.example.org', 5).ok
    # a name Nova does not list is used as it is
    assert mover.service_host('h9') == 'h9'
