"""Scenario validation of the lifetime requests: migrate, fail_host,
repair (shared/contracts/simulation.md, "Servers' lifetime")."""

import copy
import sys

import pytest

from nova_scoped_policies.simulator import scenario as sc

FLAVOR = {'resources': {'VCPU': 2}}
BASE = {
    'scopes': {'rack': {}},
    'hosts': [{'name': h, 'resources': {'VCPU': 8}} for h in ('h1', 'h2')],
    'groups': [{'name': 'db', 'policies': ['anti-affinity:rack']}],
    'stacks': [{'name': 'app', 'group': {
        'name': 'web', 'servers': {'count': 1, 'flavor': FLAVOR}}}],
    'requests': [{'boot': {'name': 'db', 'group': 'db', 'flavor': FLAVOR}}],
}


def with_request(request):
    data = copy.deepcopy(BASE)
    data['requests'].append(request)
    return data


def test_the_contracts_requests_parse():
    data = copy.deepcopy(BASE)
    data['requests'] += [
        {'migrate': {'server': 'db-1'}},
        {'migrate': {'server': 'db-1', 'host': 'h2'}},
        {'fail_host': {'host': 'h2'}},
        {'fail_host': {'server': 'db-1'}},
        {'plan': {'stack': 'app'}}, {'boot_plan': {'stack': 'app'}},
        {'migrate': {'server': 'web-1'}},
        {'repair': {'group': 'db'}}, {'repair': {'stack': 'app'}},
        {'repair': {}}, {'repair': None}]
    requests = [r for _, r in sc.parse(data).requests][1:]
    assert requests[:4] == [sc.Migrate('db-1'), sc.Migrate('db-1', 'h2'),
                            sc.FailHost(host='h2'),
                            sc.FailHost(server='db-1')]
    assert requests[6] == sc.Migrate('web-1')
    assert [r.target for r in requests[7:]] == [
        'group db', 'stack app', 'all', 'all']
    assert [r.kind for r in requests] == [
        'migrate', 'migrate', 'fail_host', 'fail_host', 'plan', 'boot_plan',
        'migrate', 'repair', 'repair', 'repair', 'repair']


@pytest.mark.parametrize('request_, key, problem', [
    ({'migrate': {'server': 'nope'}}, 'requests[1].migrate.server',
     "'nope': no such server"),
    ({'migrate': {'server': 'db-1', 'host': 'h9'}},
     'requests[1].migrate.host', "'h9': no such host"),
    ({'migrate': {'host': 'h1'}}, 'requests[1].migrate.server',
     'is required'),
    ({'migrate': {'server': 'db-1', 'to': 'h1'}}, 'requests[1].migrate.to',
     'unknown key'),
    ({'migrate': {'server': 'web-1'}}, 'requests[1].migrate.server',
     'no such server'),
    ({'fail_host': {}}, 'requests[1].fail_host', 'either host or server'),
    ({'fail_host': {'host': 'h1', 'server': 'db-1'}},
     'requests[1].fail_host', 'either host or server'),
    ({'fail_host': {'host': 'h9'}}, 'requests[1].fail_host.host',
     'no such host'),
    ({'fail_host': {'server': 'x-1'}}, 'requests[1].fail_host.server',
     'no such server'),
    ({'repair': {'group': 'db', 'stack': 'app'}}, 'requests[1].repair',
     'not both'),
    ({'repair': {'group': 'nope'}}, 'requests[1].repair.group',
     "'nope': no such group"),
    ({'repair': {'stack': 'nope'}}, 'requests[1].repair.stack',
     "'nope': no such stack"),
    ({'repair': {'server': 'db-1'}}, 'requests[1].repair.server',
     'unknown key'),
    ({'repair': 'db'}, 'requests[1].repair', 'must be a mapping'),
])
def test_errors_name_the_key(request_, key, problem):
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(with_request(request_))
    assert caught.value.path == key
    assert problem in str(caught.value)


def test_a_deleted_server_cannot_move():
    data = with_request({'delete': 'db-1'})
    data['requests'].append({'migrate': {'server': 'db-1'}})
    with pytest.raises(sc.ScenarioError, match=r'^requests\[2\]\.migrate'
                       r'\.server: .db-1.: no such server$'):
        sc.parse(data)


@pytest.mark.parametrize('request_, key', [
    ({'plan': {'stack': 'app'}}, 'requests[1].plan'),
    ({'repair': {}}, 'requests[1].repair'),
])
def test_without_or_tools_plan_and_repair_are_refused(monkeypatch,
                                                      request_, key):
    monkeypatch.setitem(sys.modules, 'ortools.sat.python.cp_model', None)
    with pytest.raises(sc.ScenarioError) as caught:
        sc.parse(with_request(request_))
    assert caught.value.path == key
    assert str(caught.value).endswith(
        'pip install "nova-scoped-policies[joint]"')
