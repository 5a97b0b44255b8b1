"""Every rule of the contract's "meaning at scheduling time", table-driven.

Topology: rack-1 = h1 h2, rack-2 = h3 h4, rack-3 = h5 h6; h7 is in no rack;
h8 is in rack-3 and rack-4 (a deployer error).
"""

import uuid

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies import identifiers
from nova_scoped_policies import topology as topo
from nova_scoped_policies.engine.plugins import affinity
from nova_scoped_policies.engine.plugins import anti_affinity
from nova_scoped_policies.engine.plugins import min_domains
from nova_scoped_policies.engine import reasons as R
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.policy import PolicyError

NS = uuid.UUID('6f72348f-df5d-4e0f-a043-4be92996dbfe')
RACKS = {'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
         'rack-3': ['h5', 'h6', 'h8'], 'rack-4': ['h8']}
HOSTS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8']


def topology(extra=()):
    aggs = [topo.AggregateInfo(name, name, hosts, {'policy_scope': 'rack'})
            for name, hosts in RACKS.items()]
    return topo.from_aggregates(aggs + list(extra))


def evaluate(document, placements=(), in_flight=(), instance=None,
             project=None, extra=()):
    placements = dict(placements) if not isinstance(placements, dict) \
        else placements
    if isinstance(document, dict):
        document = parse_document(document)
    world = topology(extra)
    document = identifiers.to_real(document, world, project)
    return engine.Engine().prepare(engine.Request(
        document, world, placements, in_flight, instance))


def members(*hosts):
    return {f'm{i}': host for i, host in enumerate(hosts)}


def passing(evaluation):
    return [h for h in HOSTS if not evaluation.reasons(h)]


@pytest.mark.parametrize('document, placed, expected', [
    # anti-affinity:S - pass iff members in domain_S(h) < max_server_per_S.
    ({'policies': ['anti-affinity:rack']}, (), ['h1', 'h2', 'h3', 'h4',
                                                'h5', 'h6']),
    ({'policies': ['anti-affinity:rack']}, ('h1',), ['h3', 'h4', 'h5', 'h6']),
    ({'policies': ['anti-affinity:rack']}, ('h1', 'h3', 'h5'), []),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 2}}, ('h1', 'h3', 'h3'),
     ['h1', 'h2', 'h5', 'h6']),
    ({'policies': ['anti-affinity:host']}, ('h1', 'h3'),
     ['h2', 'h4', 'h5', 'h6', 'h7', 'h8']),
    ({'policies': ['anti-affinity'], 'rules': {'max_server_per_host': 2}},
     ('h1', 'h1', 'h3'), ['h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8']),
    # affinity:S - pass iff no member yet, or domain_S(h) holds a member.
    ({'policies': ['affinity:rack']}, (), ['h1', 'h2', 'h3', 'h4', 'h5',
                                           'h6']),
    ({'policies': ['affinity:rack']}, ('h3',), ['h3', 'h4']),
    ({'policies': ['affinity:rack']}, ('h3', 'h5'),
     ['h3', 'h4', 'h5', 'h6']),
    ({'policies': ['affinity']}, ('h3',), ['h3']),
    ({'policies': ['affinity']}, (), HOSTS),
    # members on a host in no rack hold no rack: nobody can join them.
    ({'policies': ['affinity:rack']}, ('h7',), []),
    # soft policies never reject.
    ({'policies': ['soft-anti-affinity:rack']}, ('h1', 'h1'), HOSTS),
    ({'policies': ['soft-affinity:rack']}, ('h1',), HOSTS),
    # targeted policies (scope allows identifiers, real ids).
    ({'policies': ['affinity:zone:zone-b']}, (), ['h3', 'h4']),
    ({'policies': ['anti-affinity:zone:zone-b']}, (), ['h1', 'h2']),
    # min_domains_S: used < N and remaining <= N - used -> new domain.
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2, 'size': 2}},
     ('h1',), ['h3', 'h4', 'h5', 'h6']),
    # ... with room left it does not bind yet (remaining 3 > 2 - 1).
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2, 'size': 4}},
     ('h1',), ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']),
    # ... and not once the group holds enough domains.
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2, 'size': 3}},
     ('h1', 'h3'), ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']),
    # ... nor past the group's size.
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2, 'size': 2}},
     ('h1', 'h1'), ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']),
    # LLMN (7 over >= 2 racks, <= 4 a rack, one per host): 3 in rack-1,
    # remaining 4 > 2 - 1, so rack-1 may still take one.
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 7}}, ('h1', 'h2'), ['h3', 'h4', 'h5', 'h6']),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 2}}, ('h1',), ['h3', 'h4', 'h5', 'h6']),
])
def test_hard_rules(document, placed, expected):
    extra = [topo.AggregateInfo(
        'zone-a', 'zone-a', ['h1', 'h2'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'}),
        topo.AggregateInfo(
        'zone-b', 'zone-b', ['h3', 'h4'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})]
    assert passing(evaluate(document, members(*placed), extra=extra)) == \
        expected


@pytest.mark.parametrize('document, placed, host, code, text', [
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 2}}, ('h1', 'h2'), 'h1',
     anti_affinity.DOMAIN_FULL, 'anti-affinity:rack: rack-1 holds 2 of max 2'),
    ({'policies': ['anti-affinity:rack']}, (), 'h7', R.NO_DOMAIN,
     'anti-affinity:rack: host h7 is in no domain of scope rack'),
    ({'policies': ['anti-affinity:rack']}, (), 'h8', R.MULTIPLE_DOMAINS,
     'anti-affinity:rack: host h8 is in 2 domains of scope rack '
     '(rack-3, rack-4); a host may be in at most one'),
    ({'policies': ['affinity:rack']}, ('h3',), 'h8', R.MULTIPLE_DOMAINS,
     'host h8 is in 2 domains of scope rack'),
    ({'policies': ['affinity:rack']}, ('h3',), 'h1', affinity.NOT_WITH_MEMBERS,
     'affinity:rack: rack-1 holds none of the 1 placed member(s) '
     '(they are in rack-2)'),
    ({'policies': ['affinity:rack']}, ('h3',), 'h7', R.NO_DOMAIN,
     'affinity:rack: host h7 is in no domain of scope rack'),
    ({'policies': ['anti-affinity:switch']}, (), 'h1', R.UNKNOWN_SCOPE,
     'anti-affinity:switch: scope switch is not defined'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 3, 'min_domains_rack': 2,
                'size': 2}}, ('h1',), 'h2', min_domains.CODE,
     'min_domains_rack: rack-1 already holds 1 member(s); the 1 member(s) '
     'left must go to domains not used yet to reach 2 (used: 1)'),
])
def test_reasons(document, placed, host, code, text):
    found = evaluate(document, members(*placed)).reasons(host)
    assert [r.code for r in found] == [code]
    assert text in str(found[0])


def test_reason_carries_policy_scope_domain_count_limit():
    (reason,) = evaluate({'policies': ['anti-affinity:rack'],
                          'rules': {'max_server_per_rack': 2}},
                         members('h1', 'h2')).reasons('h2')
    assert reason.to_dict() == {
        'code': anti_affinity.DOMAIN_FULL, 'policy': 'anti-affinity:rack',
        'scope': 'rack', 'domain': 'rack-1', 'count': 2, 'limit': 2,
        'message': 'anti-affinity:rack: rack-1 holds 2 of max 2'}


def test_every_failing_policy_gives_a_reason():
    found = evaluate({'policies': ['anti-affinity:host',
                                   'anti-affinity:rack']},
                     members('h1')).reasons('h1')
    assert [r.policy for r in found] == ['anti-affinity:host',
                                         'anti-affinity:rack']


def test_reasons_filtered_by_family():
    ev = evaluate({'policies': ['affinity:rack', 'anti-affinity:host']},
                  members('h3'))
    assert [r.code for r in ev.reasons('h3', ['anti-affinity'])] == \
        [anti_affinity.DOMAIN_FULL]
    assert [r.code for r in ev.reasons('h1', ['affinity'])] == \
        [affinity.NOT_WITH_MEMBERS]
    assert ev.reasons('h1', ['anti-affinity']) == ()


@pytest.mark.parametrize('document, placed, kind, expected', [
    ({'policies': ['soft-anti-affinity:rack']}, ('h1', 'h2', 'h3'),
     'soft-anti-affinity',
     {'h1': -2, 'h2': -2, 'h3': -1, 'h5': 0, 'h7': 0, 'h8': 0}),
    ({'policies': ['soft-affinity:rack']}, ('h1', 'h2', 'h3'),
     'soft-affinity',
     {'h1': 2, 'h4': 1, 'h6': 0, 'h7': 0}),
    ({'policies': ['soft-affinity']}, ('h1', 'h1', 'h3'), 'soft-affinity',
     {'h1': 2, 'h2': 0, 'h3': 1}),
    # h8 is in rack-3 and rack-4: counts of both.
    ({'policies': ['soft-anti-affinity:rack']}, ('h5', 'h8'),
     'soft-anti-affinity', {'h5': -2, 'h8': -3}),
    # two soft policies of one type add up.
    ({'policies': ['soft-anti-affinity:rack', 'soft-anti-affinity']},
     ('h1', 'h2'), 'soft-anti-affinity', {'h1': -3, 'h3': 0}),
    ({'policies': ['soft-affinity:zone:zone-b']}, (), 'soft-affinity',
     {'h1': 0, 'h3': 1}),
    ({'policies': ['soft-anti-affinity:zone:zone-b']}, (),
     'soft-anti-affinity', {'h1': 0, 'h3': -1}),
    ({'policies': ['anti-affinity:rack']}, ('h1',), 'soft-affinity',
     {'h1': 0}),
])
def test_soft_weights(document, placed, kind, expected):
    extra = [topo.AggregateInfo(
        'zone-b', 'zone-b', ['h3', 'h4'],
        {'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})]
    ev = evaluate(document, members(*placed), extra=extra)
    assert {h: ev.raw_weight(h, kind) for h in expected} == expected


def test_soft_policy_of_unknown_scope_is_skipped_with_a_warning():
    ev = evaluate({'policies': ['soft-affinity:switch']}, members('h1'))
    assert ev.warnings == ['soft-affinity:switch: scope switch is not '
                           'defined; soft policy ignored']
    assert ev.raw_weight('h1', 'soft-affinity') == 0
    assert not ev.has_checks()


def test_counts_every_member_wherever_it_runs():
    # Members on hosts that are not candidates still count for their rack.
    ev = evaluate({'policies': ['anti-affinity:rack']}, members('h2'))
    assert passing(ev) == ['h3', 'h4', 'h5', 'h6']


def test_counts_in_flight_selections():
    doc = {'policies': ['anti-affinity:rack']}
    ev = evaluate(doc, {'new-1': None, 'new-2': None}, in_flight=['h3'])
    assert passing(ev) == ['h1', 'h2', 'h5', 'h6']
    ev = evaluate(doc, {}, in_flight=['h3', 'h1'])
    assert passing(ev) == ['h5', 'h6']


def test_unplaced_members_do_not_count():
    ev = evaluate({'policies': ['affinity:rack']}, {'m1': None})
    assert ev.context.placed == 0
    assert passing(ev) == ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']


def test_moving_instance_does_not_count_against_itself():
    doc = {'policies': ['anti-affinity:rack']}
    ev = evaluate(doc, {'me': 'h1', 'other': 'h3'}, instance='me')
    assert passing(ev) == ['h1', 'h2', 'h5', 'h6']


def test_moving_instance_may_stay_on_its_host_like_nova():
    # Nova's ServerGroupAntiAffinityFilter passes the instance's own host.
    doc = {'policies': ['anti-affinity']}
    ev = evaluate(doc, {'me': 'h1', 'other': 'h1'}, instance='me')
    assert 'h1' in passing(ev)
    ev = evaluate(doc, {'me': 'h2', 'other': 'h1'}, instance='me')
    assert 'h1' not in passing(ev)


def test_obfuscated_target_resolved_for_the_tenant():
    settings = {'policy_scope': 'zone',
                'policy_scope_allow_identifiers': 'true',
                'policy_scope_obfuscate_identifiers': 'true',
                'policy_scope_namespace': str(NS)}
    extra = [topo.AggregateInfo('uuid-a', 'zone-a', ['h1', 'h2'], settings),
             topo.AggregateInfo('uuid-b', 'zone-b', ['h3'], settings)]
    mine = topo.obfuscate(NS, 'tenant-a', 'uuid-b')
    ev = evaluate({'policies': [f'affinity:zone:{mine}']}, project='tenant-a',
                  extra=extra)
    assert passing(ev) == ['h3']
    with pytest.raises(PolicyError) as err:
        evaluate({'policies': [f'affinity:zone:{mine}']},
                 project='tenant-b', extra=extra)
    assert err.value.field == 'policies[0]'


def test_target_in_scope_without_identifiers_is_refused():
    with pytest.raises(PolicyError, match='does not allow targeting'):
        evaluate({'policies': ['affinity:rack:rack-1']})


def test_verdicts_for_tools():
    ev = evaluate({'policies': ['anti-affinity:rack',
                                'soft-affinity:host']}, members('h1'))
    verdicts = ev.verdicts(['h1', 'h3'])
    assert not verdicts['h1'].passed
    assert verdicts['h1'].weights == {'soft-affinity:host': 1.0}
    assert verdicts['h3'] == engine.Verdict(True, (),
                                            {'soft-affinity:host': 0.0})


def test_counts_built_once_per_scope():
    calls = []
    real = topo.Topology.index

    class Counting(topo.Topology):
        def index(self, scope):
            calls.append(scope)
            return real(self, scope)

    base = topology()
    counting = Counting([base.scope('rack')],
                        [d for d in base.domains('rack')])
    doc = parse_document({'policies': ['anti-affinity:rack',
                                       'soft-anti-affinity:rack']})
    placements = {f'm{i}': HOSTS[i % 6] for i in range(100)}
    ev = engine.Engine().prepare(engine.Request(doc, counting, placements))
    for host in HOSTS * 50:
        ev.reasons(host)
        ev.raw_weight(host, 'soft-anti-affinity')
    # One count of the members per scope, and one index per policy: hosts
    # use what was prepared, however many there are.
    assert calls == ['rack'] * len(calls) and len(calls) <= 3
    assert ev.context.counts('rack') == {'rack-1': 34, 'rack-2': 34,
                                         'rack-3': 32}


@pytest.mark.parametrize('placed, in_flight, scope, expected', [
    (('h1', 'h2', 'h3'), (), 'rack', {'rack-1': 2, 'rack-2': 1}),
    # a member on a host in two racks counts in both; in none, nowhere
    (('h8', 'h7', 'h5'), (), 'rack', {'rack-3': 2, 'rack-4': 1}),
    (('h1',), ('h8', 'h1'), 'rack', {'rack-1': 2, 'rack-3': 1, 'rack-4': 1}),
    (('h1', 'h1', 'h7'), ('h7',), 'host', {'h1': 2, 'h7': 2}),
    (('h1',), (), 'switch', {}),          # a scope that is not defined
])
def test_counts_per_domain(placed, in_flight, scope, expected):
    evaluation = evaluate({'policies': ['soft-anti-affinity:host']},
                          members(*placed), in_flight)
    assert dict(evaluation.context.counts(scope)) == expected


def test_summary_for_tenants_names_no_host_or_domain():
    def full(domain):
        return R.Reason(anti_affinity.DOMAIN_FULL, 'anti-affinity:rack',
                        'rack',
                        f'anti-affinity:rack: {domain} holds 1 of max 1',
                        domain=domain, count=1, limit=1)
    found = {f'h{i}': [full(f'rack-{i % 4}')] for i in range(8)}
    assert engine.summary(found) == (
        'scoped policies: anti-affinity:rack: all 4 rack domains hold 1 of '
        'max 1')
    # a host that passed: the policies are not why no host was left
    assert engine.summary(dict(found, h9=[])) is None
    found['h9'] = [R.Reason(affinity.NOT_WITH_MEMBERS, 'affinity:zone',
                            'zone', 'x', domain='zone-a', count=0, limit=2)]
    text = engine.summary(found)
    assert 'affinity:zone: only the zone domain of the 2 placed' in text
    assert 'anti-affinity:rack: 4 rack domains hold 1 of max 1' in text
    assert 'rack-1' not in text and 'h1' not in text and 'zone-a' not in text
