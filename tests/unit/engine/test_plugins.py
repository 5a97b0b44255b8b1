"""Every plugin's views agree: host check, Placement constraint, audit.

One row per plugin at least. A row gives a document and the members
placed so far, and what each view says; ``test_views_agree`` then checks
that a host passes the check iff placing the next member there yields no
audit violation and the Placement constraint does not exclude it.
A new policy type adds its module to ``engine/plugins/registry.py`` and one
row here.
"""

import pytest

from nova_scoped_policies import engine
from nova_scoped_policies.engine import audit
from nova_scoped_policies.engine import placement_query
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy import parse_document
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.policy import PolicyType
from nova_scoped_policies import topology as topo

DOMAINS = {
    'rack': {'rack-1': ['h1', 'h2'], 'rack-2': ['h3', 'h4'],
             'rack-3': ['h5', 'h6']},
    'zone': {'zone-a': ['h1', 'h3'], 'zone-b': ['h2', 'h4', 'h5', 'h6']},
}
HOSTS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7']  # h7: in no domain
TOPOLOGY = topo.from_aggregates(
    [topo.AggregateInfo(name, name, hosts, {'policy_scope': 'rack'})
     for name, hosts in DOMAINS['rack'].items()]
    + [topo.AggregateInfo(name, name, hosts, {
        'policy_scope': 'zone', 'policy_scope_allow_identifiers': 'true'})
       for name, hosts in DOMAINS['zone'].items()])
AGGREGATES = {h: {d for scope in DOMAINS.values()
                  for d, hosts in scope.items() if h in hosts}
              for h in HOSTS}
ALL = set(HOSTS)

# plugin, document, placed, passing hosts, required, forbidden, structure
ROWS = [
    ('affinity', {'policies': ['affinity:rack']}, ['h3'],
     {'h3', 'h4'}, [{'rack-2'}], set(),
     base.Structure(base.Kind.SAME_DOMAIN, 'rack', label='affinity:rack')),
    ('affinity', {'policies': ['affinity:zone:zone-a']}, [],
     {'h1', 'h3'}, [{'zone-a'}], set(),
     base.Structure(base.Kind.IN_DOMAIN, 'zone', identifier='zone-a',
                    label='affinity:zone:zone-a')),
    ('anti-affinity', {'policies': ['anti-affinity:rack']}, ['h1', 'h3'],
     {'h5', 'h6'}, [], {'rack-1', 'rack-2'},
     base.Structure(base.Kind.AT_MOST_PER_DOMAIN, 'rack', limit=1,
                    label='anti-affinity:rack')),
    ('anti-affinity', {'policies': ['anti-affinity:rack'],
                       'rules': {'max_server_per_rack': 2}},
     ['h1', 'h2', 'h3'], {'h3', 'h4', 'h5', 'h6'}, [], {'rack-1'},
     base.Structure(base.Kind.AT_MOST_PER_DOMAIN, 'rack', limit=2,
                    label='anti-affinity:rack')),
    # host scope: no aggregate stands for a host, so no constraint
    ('anti-affinity', {'policies': ['anti-affinity']}, ['h1'],
     ALL - {'h1'}, [], set(),
     base.Structure(base.Kind.AT_MOST_PER_DOMAIN, 'host', limit=1,
                    label='anti-affinity:host')),
    ('anti-affinity', {'policies': ['anti-affinity:zone:zone-a']}, [],
     {'h2', 'h4', 'h5', 'h6'}, [], {'zone-a'},
     base.Structure(base.Kind.NOT_IN_DOMAIN, 'zone', identifier='zone-a',
                    label='anti-affinity:zone:zone-a')),
    # the last member must open a third rack
    ('min-domains', {'policies': ['soft-anti-affinity:rack'],
                     'rules': {'min_domains_rack': 3, 'size': 3}},
     ['h1', 'h3'], {'h5', 'h6'}, [], {'rack-1', 'rack-2'},
     base.Structure(base.Kind.AT_LEAST_DOMAINS, 'rack', limit=3,
                    label='min_domains_rack')),
    ('soft-affinity', {'policies': ['soft-affinity:rack']}, ['h1'],
     ALL, [], set(),
     base.Structure(base.Kind.PREFER_TOGETHER, 'rack', hard=False,
                    label='soft-affinity:rack')),
    ('soft-anti-affinity', {'policies': ['soft-anti-affinity:rack']},
     ['h1'], ALL, [], set(),
     base.Structure(base.Kind.PREFER_APART, 'rack', hard=False,
                    label='soft-anti-affinity:rack')),
]
IDS = [f'{row[0]}-{i}' for i, row in enumerate(ROWS)]


def evaluate(document, placed):
    return engine.Engine().prepare(engine.Request(
        parse_document(document), TOPOLOGY,
        {f'm{i}': h for i, h in enumerate(placed)}))


def excluded(host, found):
    aggs = AGGREGATES[host]
    return bool(aggs & found.forbidden) or any(
        not aggs & required for required in found.required)


@pytest.mark.parametrize('plugin, document, placed, passing, required, '
                         'forbidden, structure', ROWS, ids=IDS)
def test_views(plugin, document, placed, passing, required, forbidden,
               structure):
    ev = evaluate(document, placed)
    assert {h for h in HOSTS if not ev.reasons(h)} == passing
    found = placement_query.constraints(ev)
    assert [set(r) for r in found.required] == required
    assert set(found.forbidden) == forbidden
    assert structure in ev.structures()
    assert plugin in {item.family for _, item in ev.items}
    members = {f'm{i}': h for i, h in enumerate(placed)}
    assert audit.audit(parse_document(document), TOPOLOGY,
                       members).violations == ()


@pytest.mark.parametrize('plugin, document, placed, passing, required, '
                         'forbidden, structure', ROWS, ids=IDS)
def test_views_agree(plugin, document, placed, passing, required, forbidden,
                     structure):
    ev = evaluate(document, placed)
    found = placement_query.constraints(ev)
    doc = parse_document(document)
    for host in HOSTS:
        members = {f'm{i}': h for i, h in enumerate(placed)}
        members['next'] = host
        violations = audit.audit(doc, TOPOLOGY, members).violations
        passes = not ev.reasons(host)
        assert passes == (not violations and not excluded(host, found)), (
            host, ev.reasons(host), violations, found)
        if excluded(host, found):
            assert not passes, host  # the constraint only narrows


def test_soft_weights():
    ev = evaluate({'policies': ['soft-affinity:rack',
                                'soft-anti-affinity:zone']}, ['h1'])
    assert [ev.weight(h, PolicyType.SOFT_AFFINITY) for h in HOSTS] == \
        [1.0, 1.0, 0, 0, 0, 0, 0]
    assert [ev.weight(h, PolicyType.SOFT_ANTI_AFFINITY) for h in HOSTS] == \
        [-1.0, 0, -1.0, 0, 0, 0, 0]


def test_every_policy_type_and_plugin_is_covered():
    names = [p.name for p in registry.PLUGINS]
    assert len(set(names)) == len(names)
    assert {getattr(p, 'policy_type', None) for p in registry.PLUGINS} \
        >= set(PolicyType)
    assert set(names) == {row[0] for row in ROWS}


def test_distinguished():
    ev = evaluate({'policies': ['anti-affinity:rack',
                                'affinity:zone:zone-a', 'anti-affinity']},
                  ['h1', 'h3'])
    assert ev.distinguished() == {'rack': frozenset({'rack-1', 'rack-2'}),
                                  'zone': None}


@pytest.mark.parametrize('plugin, document, placed, passing, required, '
                         'forbidden, structure', ROWS, ids=IDS)
def test_alike_by_member_counts(plugin, document, placed, passing, required,
                                forbidden, structure):
    """What ``distinguished()`` promises (and the simulator's fast engine
    relies on): hosts whose domains hold the same member counts, in the
    scopes it lists by count, and the same domains where it lists a scope
    by identity, get the same verdict and the same weights."""
    ev = evaluate(document, placed)
    ctx = ev.context
    told = ev.distinguished()
    by_host = 'host' in parse_document(document).scopes

    def alike(host):
        key = [host] if by_host else []
        for scope, domains in sorted(told.items()):
            mine = sorted(d for d, hosts in DOMAINS[scope].items()
                          if host in hosts)
            key.append(tuple(mine) if domains is None else tuple(sorted(
                ctx.counts(scope).get(d, 0) for d in mine)))
        return tuple(key)

    seen = {}
    for host in HOSTS:
        verdict = ev.verdict(host)
        found = (verdict.passed, verdict.weights)
        assert seen.setdefault(alike(host), found) == found, host


class _NotOnH7(base.PolicyPlugin):
    """A toy rule: one module adds a type without touching the engine."""

    name = 'not-h7'

    def items(self, document):
        return [base.Item(self.name, 'not-h7', 'rules', 'host')]

    def check(self, item, ctx):
        return lambda host: 'no h7' if host == 'h7' else None

    def structure(self, item, rules):
        return base.Structure(base.Kind.NOT_IN_DOMAIN, 'host',
                              identifier='h7', label='not-h7')


def test_a_new_plugin_needs_no_engine_change():
    ev = engine.Engine(registry.PLUGINS + (_NotOnH7(),)).prepare(
        engine.Request(parse_document({'policies': ['affinity:rack']}),
                       TOPOLOGY, {}))
    assert ev.reasons('h7')[-1] == 'no h7'
    assert not ev.reasons('h1')


class _AwayFrom(base.PolicyTypePlugin):
    """A toy policy type, ``away-from:S``: no two members in one domain of
    S. Its module defines the word; the registry lists the plugin."""

    name = 'away-from'

    def check(self, item, ctx):
        counts = ctx.counts(item.scope)
        return ctx.locate(item.scope, item.label, lambda host, domain: (
            f'{item.label}: {domain} is taken' if counts[domain] else None))

    def structure(self, item, rules):
        return base.Structure(base.Kind.AT_MOST_PER_DOMAIN, item.scope,
                              limit=1, label=item.label)


def test_a_new_policy_type_is_one_plugin(monkeypatch):
    with pytest.raises(PolicyError, match='unknown policy type'):
        parse_document({'policies': ['away-from:rack']})
    # what its module and the registry's entry do, undone after the test
    monkeypatch.setattr(PolicyType, '_defined', dict(PolicyType._defined))
    monkeypatch.setattr(PolicyType, '_traits', dict(PolicyType._traits))
    monkeypatch.setattr(_AwayFrom, 'policy_type', PolicyType.define(
        'away-from', hard=True, attracts=False), raising=False)
    monkeypatch.setattr(registry, 'PLUGINS',
                        registry.PLUGINS + (_AwayFrom(),))
    document = parse_document({'policies': ['away-from:rack']})
    assert [str(p) for p in document.policies] == ['away-from:rack']
    ev = engine.Engine().prepare(engine.Request(
        document, TOPOLOGY, {'m1': 'h1'}))
    assert ev.reasons('h2') == ('away-from:rack: rack-1 is taken',)
    assert not ev.reasons('h3')
