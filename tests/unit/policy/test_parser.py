"""Table-driven tests of the policy document parser."""

import pytest

from nova_scoped_policies.policy import parser
from nova_scoped_policies.policy import Policy
from nova_scoped_policies.policy import PolicyError
from nova_scoped_policies.policy import PolicyType as T


@pytest.mark.parametrize('text, expected', [
    ('affinity', Policy(T.AFFINITY, 'host')),
    ('anti-affinity', Policy(T.ANTI_AFFINITY, 'host')),
    ('soft-affinity:switch', Policy(T.SOFT_AFFINITY, 'switch')),
    ('soft-anti-affinity:maintenance_zone',
     Policy(T.SOFT_ANTI_AFFINITY, 'maintenance_zone')),
    ('anti-affinity:rack:0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11',
     Policy(T.ANTI_AFFINITY, 'rack', '0b7d4a3e-2f0c-4a57-9d55-3f3c8b1f0a11')),
    ('affinity:zone:zone-a', Policy(T.AFFINITY, 'zone', 'zone-a')),
    ('affinity:host:h1', Policy(T.AFFINITY, 'host', 'h1')),
])
def test_parse_policy(text, expected):
    assert parser.parse_policy(text) == expected
    assert parser.parse_policy(str(expected)) == expected


@pytest.mark.parametrize('text, problem', [
    ('affnity', "unknown policy type 'affnity'"),
    ('', "unknown policy type ''"),
    ('Affinity', 'unknown policy type'),
    ('affinity:', "invalid scope ''"),
    ('affinity:ra ck', 'invalid scope'),
    ('affinity:' + 'r' * 65, 'invalid scope'),
    ('affinity:rack:', "invalid identifier ''"),
    ('affinity:rack:a b', 'invalid identifier'),
    (3, 'a policy is a string'),
    (None, 'a policy is a string'),
])
def test_parse_policy_errors_name_field_and_value(text, problem):
    with pytest.raises(PolicyError) as err:
        parser.parse_policy(text, field='policies[4]')
    assert err.value.field == 'policies[4]'
    assert err.value.value == text
    assert problem in str(err.value)
    assert str(err.value).startswith('policies[4]: ')


@pytest.mark.parametrize('document, policies, rules', [
    ({'policies': ['anti-affinity:host', 'anti-affinity:rack',
                   'soft-affinity:switch'],
      'rules': {'max_server_per_rack': 2}},
     ['anti-affinity:host', 'anti-affinity:rack', 'soft-affinity:switch'],
     {'max_server_per_rack': 2}),
    # Nova's plain groups, the legacy and the 2.64 forms.
    ({'policies': ['anti-affinity']}, ['anti-affinity:host'], {}),
    ({'policy': 'anti-affinity', 'rules': {'max_server_per_host': 3}},
     ['anti-affinity:host'], {'max_server_per_host': 3}),
    # complex-anti-affinity.rst's object form.
    ({'policy': {'name': 'anti-affinity',
                 'rules': {'max_server_per_host': 3}}},
     ['anti-affinity:host'], {'max_server_per_host': 3}),
    ({'policy': {'name': 'soft-affinity'}}, ['soft-affinity:host'], {}),
    # LLMN, the contract's example: ceil(7/2) = 4.
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 7}},
     ['anti-affinity:host', 'anti-affinity:rack'],
     {'max_server_per_rack': 4, 'min_domains_rack': 2, 'size': 7}),
    # LLMN next to a policy it also implies: kept once.
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 3},
      'policies': ['anti-affinity:host', 'soft-affinity:pod'],
      'rules': {'size': 4}},
     ['anti-affinity:host', 'soft-affinity:pod', 'anti-affinity:rack'],
     {'max_server_per_rack': 2, 'min_domains_rack': 3, 'size': 4}),
    ({'policies': ['anti-affinity:zone'],
      'rules': {'min_domains_zone': 2, 'size': 4}},
     ['anti-affinity:zone'], {'min_domains_zone': 2, 'size': 4}),
    # Several exclusions in one scope are fine.
    ({'policies': ['anti-affinity:zone:a', 'anti-affinity:zone:b']},
     ['anti-affinity:zone:a', 'anti-affinity:zone:b'], {}),
    # A targeted affinity plus a per-domain limit in that scope.
    ({'policies': ['affinity:zone:a', 'anti-affinity:zone'],
      'rules': {'max_server_per_zone': 3}},
     ['affinity:zone:a', 'anti-affinity:zone'], {'max_server_per_zone': 3}),
    # Nova keeps rule values as strings.
    ({'policy': 'anti-affinity', 'rules': {'max_server_per_host': '2'}},
     ['anti-affinity:host'], {'max_server_per_host': 2}),
    ({}, [], {}),
])
def test_parse_document(document, policies, rules):
    doc = parser.parse_document(document)
    assert [str(p) for p in doc.policies] == policies
    assert doc.rules.to_dict() == rules
    # The normalised form parses to the same document.
    assert parser.parse_document(doc.to_dict()) == doc


@pytest.mark.parametrize('document, field, problem', [
    ([], 'document', 'a policy document is an object'),
    ({'polices': []}, 'polices', 'unknown key'),
    ({'policies': 'anti-affinity'}, 'policies', 'must be a list'),
    ({'policies': ['anti-affinity', 'bogus']}, 'policies[1]',
     'unknown policy type'),
    ({'policies': ['affinity:rack', 'affinity:rack']}, 'policies[1]',
     'duplicates policies[0]'),
    ({'policies': ['affinity:rack', 'anti-affinity:rack']}, 'policies',
     'contradict each other'),
    ({'policies': ['soft-affinity:rack', 'anti-affinity:rack']}, 'policies',
     'contradict each other'),
    ({'policies': ['affinity:zone:a', 'affinity:zone:b']}, 'policies',
     'target two different domains'),
    ({'policies': ['affinity:zone:a', 'anti-affinity:zone:a']}, 'policies',
     'contradict each other'),
    ({'rules': []}, 'rules', 'rules must be an object'),
    ({'rules': {'max_servers_per_rack': 2}}, 'rules.max_servers_per_rack',
     'unknown rule'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 0}}, 'rules.max_server_per_rack',
     'integer >= 1'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': True}}, 'rules.max_server_per_rack',
     'integer >= 1'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'max_server_per_rack': 1.5}}, 'rules.max_server_per_rack',
     'integer >= 1'),
    ({'policies': ['affinity:rack'], 'rules': {'max_server_per_rack': 2}},
     'rules.max_server_per_rack', 'needs the policy anti-affinity:rack'),
    ({'policies': ['anti-affinity:rack:x'],
      'rules': {'max_server_per_rack': 2}},
     'rules.max_server_per_rack', 'needs the policy anti-affinity:rack'),
    ({'rules': {'max_server_per_': 2}}, 'rules.max_server_per_',
     'a scope name'),
    ({'policies': ['anti-affinity:rack'], 'rules': {'min_domains_rack': 2}},
     'rules.min_domains_rack', 'needs rules.size'),
    ({'policies': ['anti-affinity:rack'],
      'rules': {'min_domains_rack': 3, 'size': 2}},
     'rules.min_domains_rack', 'cannot spread 2'),
    ({'policies': ['affinity:rack'],
      'rules': {'min_domains_rack': 2, 'size': 4}},
     'rules.min_domains_rack', 'contradicts affinity:rack'),
    ({'rules': {'size': 0}}, 'rules.size', 'integer >= 1'),
    ({'rules': {'size': 'seven'}}, 'rules.size', 'integer >= 1'),
    ({'name': ''}, 'name', 'must be a string'),
    ({'name': 7}, 'name', 'must be a string'),
    ({'policy': 'anti-affinity', 'policies': []}, 'policy',
     'either policy or policies'),
    ({'policy': {'rules': {}}}, 'policy.name', 'is required'),
    ({'policy': {'name': 'anti-affinity', 'limit': 3}}, 'policy.limit',
     'unknown key'),
    ({'policy': {'name': 'anti-affinity',
                 'rules': {'max_server_per_host': 2}},
      'rules': {'max_server_per_host': 2}}, 'policy.rules', 'give rules once'),
    ({'llmn': 'rack'}, 'llmn', 'must be an object'),
    ({'llmn': {'level1': 'rack', 'level2': 'host'}, 'rules': {'size': 4}},
     'llmn.n', 'is required'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2, 'm': 4},
      'rules': {'size': 4}}, 'llmn.m', 'unknown key'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2}}, 'rules.size',
     'needs the group size'),
    ({'llmn': {'level1': 'rack', 'level2': 'rack', 'n': 2},
      'rules': {'size': 4}}, 'llmn.level2', 'must differ from level1'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 5},
      'rules': {'size': 4}}, 'llmn.n', 'cannot spread 4'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 0},
      'rules': {'size': 4}}, 'llmn.n', 'integer >= 1'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'rules': {'size': 4, 'max_server_per_rack': 3}},
     'rules.max_server_per_rack', 'is set by llmn'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2},
      'policies': ['soft-affinity:rack'], 'rules': {'size': 4}},
     'policies', 'contradict each other'),
])
def test_parse_document_errors(document, field, problem):
    with pytest.raises(PolicyError) as err:
        parser.parse_document(document)
    assert err.value.field == field
    assert problem in str(err.value)


def test_document_remembers_where_each_policy_came_from():
    doc = parser.parse_document({'policies': ['anti-affinity:zone'],
                                 'llmn': {'level1': 'rack', 'level2': 'host',
                                          'n': 2}, 'rules': {'size': 4}},
                                prefix='scoped_policies')
    assert [doc.field_of(i) for i in range(len(doc.policies))] == [
        'scoped_policies.policies[0]', 'scoped_policies.llmn',
        'scoped_policies.llmn']
    # ... without making equal documents unequal
    assert doc == parser.parse_document(doc.to_dict())


def test_errors_carry_the_prefix_of_the_hint():
    with pytest.raises(PolicyError) as err:
        parser.parse_document({'policies': ['x']}, prefix='scoped_policies')
    assert err.value.field == 'scoped_policies.policies[0]'


@pytest.mark.parametrize('policy, rules, expected', [
    ('anti-affinity', {'max_server_per_host': '3'},
     {'policies': ['anti-affinity:host'],
      'rules': {'max_server_per_host': 3}}),
    ('affinity', {}, {'policies': ['affinity:host'], 'rules': {}}),
    ('soft-anti-affinity', None,
     {'policies': ['soft-anti-affinity:host'], 'rules': {}}),
    (None, None, {'policies': [], 'rules': {}}),
])
def test_from_nova_group(policy, rules, expected):
    assert parser.from_nova_group(policy, rules).to_dict() == expected


@pytest.mark.parametrize('hint, expected', [
    ({'policies': ['anti-affinity:rack']},
     ['anti-affinity:host', 'anti-affinity:rack']),
    ({'policies': ['anti-affinity', 'soft-affinity:switch']},
     ['anti-affinity:host', 'soft-affinity:switch']),
])
def test_merge_unites_policies(hint, expected):
    nova = parser.from_nova_group('anti-affinity',
                                  {'max_server_per_host': 2})
    merged = parser.merge(
        nova, parser.parse_document(hint, prefix='scoped_policies'),
        'scoped_policies')
    assert [str(p) for p in merged.policies] == expected
    assert merged.rules.max_server_per == {'host': 2}


@pytest.mark.parametrize('nova, hint, field', [
    (('anti-affinity', {'max_server_per_host': 2}),
     {'policies': ['anti-affinity'], 'rules': {'max_server_per_host': 3}},
     'scoped_policies.rules.max_server_per_host'),
    (('affinity', None), {'policies': ['anti-affinity:host']},
     'scoped_policies.policies'),
])
def test_merge_refuses_disagreement(nova, hint, field):
    with pytest.raises(PolicyError) as err:
        parser.merge(parser.from_nova_group(*nova),
                     parser.parse_document(hint, prefix='scoped_policies'),
                     'scoped_policies')
    assert err.value.field == field


def test_merge_contradiction_names_both_sources():
    with pytest.raises(PolicyError) as err:
        parser.merge(parser.from_nova_group('affinity'),
                     parser.parse_document({'policies': ['anti-affinity']},
                                           prefix='scoped_policies'),
                     'scoped_policies')
    assert ('server_group.policy and scoped_policies.policies[0] '
            'contradict each other') in str(err.value)


def test_merge_refuses_different_sizes():
    first = parser.parse_document({'rules': {'size': 3}})
    second = parser.parse_document({'rules': {'size': 4}})
    with pytest.raises(PolicyError, match='rules.size'):
        parser.merge(first, second)


def _real(text: str, written: str, prefix: str = 'policy store'):
    """A one-policy document with a real identifier, written otherwise."""
    doc = parser.parse_document({'policies': [text]}, prefix=prefix)
    return parser.PolicyDocument(doc.policies, doc.rules, None, doc.fields,
                                 {doc.policies[0]: written})


@pytest.mark.parametrize('second, problem', [
    ('anti-affinity:zone:real-a', 'ask for affinity and anti-affinity'),
    ('affinity:zone:real-b', 'target two different domains'),
])
def test_merge_errors_use_the_tenants_wording(second, problem):
    stored = _real('affinity:zone:real-a', 'affinity:zone:mine-a')
    hinted = _real(second, second.replace('real', 'mine'),
                   prefix='scoped_policies')
    with pytest.raises(PolicyError) as err:
        parser.merge(stored, hinted, 'scoped_policies')
    assert problem in str(err.value)
    assert 'mine-a' in str(err.value)
    assert 'real-' not in str(err.value)


def test_merge_keeps_the_tenants_wording():
    merged = parser.merge(
        parser.from_nova_group('anti-affinity'),
        _real('affinity:zone:real-a', 'affinity:zone:mine-a'))
    assert [str(p) for p in merged.policies] == [
        'anti-affinity:host', 'affinity:zone:real-a']
    assert [merged.label_of(i) for i in range(2)] == [
        'anti-affinity:host', 'affinity:zone:mine-a']


# -- complex-anti-affinity.rst's REST form (policy API 1.3) -----------------

@pytest.mark.parametrize('data, objects', [
    ({'policy': {'name': 'anti-affinity', 'rules': {
        'max_server_per_host': 3}}},
     {'name': 'anti-affinity:host', 'rules': {'max_server_per_host': 3}}),
    ({'policy': {'name': 'soft-affinity:rack'}},
     {'name': 'soft-affinity:rack', 'rules': {}}),
    ({'policy': [{'name': 'anti-affinity:host'},
                 {'name': 'anti-affinity:rack', 'rules': {
                     'max_server_per_rack': 2}}]},
     [{'name': 'anti-affinity:host', 'rules': {}},
      {'name': 'anti-affinity:rack', 'rules': {'max_server_per_rack': 2}}]),
    # the rules go back to the policy of their scope, wherever given
    ({'policy': [{'name': 'anti-affinity:rack', 'rules': {'size': 4}},
                 {'name': 'anti-affinity:host', 'rules': {
                     'max_server_per_rack': 2, 'min_domains_rack': 2}}]},
     [{'name': 'anti-affinity:rack', 'rules': {
         'max_server_per_rack': 2, 'min_domains_rack': 2, 'size': 4}},
      {'name': 'anti-affinity:host', 'rules': {}}]),
])
def test_the_policy_object_form_round_trips(data, objects):
    document = parser.parse_objects(data, 'server_group')
    assert parser.as_objects(document) == objects
    assert parser.parse_objects({'policy': objects}) == document


@pytest.mark.parametrize('data, field, problem', [
    ({}, 'server_group.policy', 'a group needs a policy'),
    ({'policy': []}, 'server_group.policy', 'non-empty list'),
    ({'policies': ['anti-affinity']}, 'server_group.policies',
     'unknown key'),
    ({'policy': {'rules': {}}}, 'server_group.policy.name', 'required'),
    ({'policy': {'name': 'anti-affinity', 'extra': 1}},
     'server_group.policy.extra', 'unknown key'),
    ({'policy': ['anti-affinity']}, 'server_group.policy[0]',
     'a policy object'),
    ({'policy': [{'name': 'anti-affinity:rack',
                  'rules': {'max_server_per_rack': 2}},
                 {'name': 'anti-affinity:host',
                  'rules': {'max_server_per_rack': 3}}]},
     'server_group.policy[1].rules.max_server_per_rack', 'given twice'),
    ({'policy': {'name': 'affinity:rack',
                 'rules': {'max_server_per_rack': 2}}},
     'server_group.policy.rules.max_server_per_rack',
     'needs the policy anti-affinity:rack'),
    ({'llmn': {'level1': 'rack', 'level2': 'host', 'n': 2}},
     'server_group.policy', 'rules.size of a policy object'),
])
def test_the_policy_object_form_names_the_bad_field(data, field, problem):
    with pytest.raises(PolicyError) as caught:
        parser.parse_objects(data, 'server_group')
    assert caught.value.field == field
    assert problem in caught.value.problem


def test_a_document_without_policy_has_no_object():
    assert parser.as_objects(parser.parse_document({})) is None


# -- network policies (policy-document.md, "Network policies") ----------------

@pytest.mark.parametrize('text, argument, shown', [
    ('hops:2', '2', 'hops:2'), ('hops:0', '0', 'hops:0'),
    ('hops:64', '64', 'hops:64'), ('hops:007', '7', 'hops:7'),
    ('soft-hops:4', '4', 'soft-hops:4'),
    ('bandwidth:2Gbit', '2Gbit', 'bandwidth:2Gbit'),
    ('bandwidth:1000', '1000', 'bandwidth:1000'),
])
def test_network_policies_take_an_argument(text, argument, shown):
    policy = parser.parse_policy(text)
    assert (policy.scope, policy.identifier, policy.argument) == (
        'host', None, argument)
    assert str(policy) == shown
    assert parser.parse_policy(shown) == policy


@pytest.mark.parametrize('text, problem', [
    ('hops', 'expected hops:N, N being an integer from 0 to 64'),
    ('hops:65', "got '65'"), ('hops:-1', "got '-1'"),
    ('hops:two', "got 'two'"), ('hops:rack:2', "got 'rack:2'"),
    ('soft-hops:1.5', 'expected soft-hops:N'),
    ('bandwidth', 'the rate must be a positive integer of kbit/s'),
    ('bandwidth:-2Gbit', 'the rate must be a positive integer'),
    ('bandwidth:0', 'the rate must be at least 1 kbit/s'),
    ('bandwidth:3Tbit', "the rate has an unknown unit 'Tbit'"),
    ('bandwidth:2148Gbit', 'the rate is more than 2147483647 kbit/s'),
])
def test_network_policy_errors_name_the_field(text, problem):
    with pytest.raises(PolicyError) as err:
        parser.parse_policy(text, field='relationships[0].policies[0]')
    assert err.value.field == 'relationships[0].policies[0]'
    assert problem in str(err.value)


@pytest.mark.parametrize('policies, problem', [
    (['hops:2', 'hops:4'], 'set two hop limits on one group'),
    (['hops:0', 'anti-affinity'], 'keep the members on one host'),
    (['anti-affinity:host', 'hops:1'], 'keep the members on one host'),
    (['bandwidth:1Gbit', 'bandwidth:1000Mbit'],
     'ask for two bandwidths between the same servers'),
])
def test_network_contradictions_name_both_policies(policies, problem):
    with pytest.raises(PolicyError) as err:
        parser.parse_document({'policies': policies}, stack=True)
    assert err.value.field == 'policies'
    assert err.value.value == [str(parser.parse_policy(p))
                               for p in policies]
    assert 'policies[0] and policies[1] contradict each other: they ' \
        + problem in str(err.value)


@pytest.mark.parametrize('policies', [
    ['hops:2', 'soft-hops:2'], ['hops:4', 'anti-affinity:host'],
    ['hops:0', 'anti-affinity:rack'], ['soft-hops:2', 'soft-hops:4'],
    ['hops:2', 'bandwidth:1Gbit'],
])
def test_network_policies_that_stand_together(policies):
    assert [str(p) for p in parser.parse_document(
        {'policies': policies}, stack=True).policies] == policies


def test_bandwidth_belongs_in_a_stack():
    problem = ('bandwidth belongs in a stack: give it on a group or a '
               'relationship of a stack document, not on a server group')
    with pytest.raises(PolicyError) as err:
        parser.parse_document({'policies': ['hops:2', 'bandwidth:1Gbit']},
                              prefix='server_group')
    assert (err.value.field, err.value.problem) == (
        'server_group.policies[1]', problem)
    with pytest.raises(PolicyError, match='belongs in a stack'):
        parser.parse_objects({'policy': {'name': 'bandwidth:1Gbit'}})
    with pytest.raises(PolicyError, match='belongs in a stack'):
        parser.merge(parser.parse_document({'policies': ['hops:2']}),
                     parser.parse_document({'policies': ['bandwidth:1']},
                                           stack=True), 'scoped_policies')
    assert parser.parse_document({'policies': ['bandwidth:1Gbit']},
                                 stack=True).to_dict() == {
        'policies': ['bandwidth:1Gbit'], 'rules': {}}


def test_soft_hops_takes_its_weight_rule():
    doc = parser.parse_document({'policies': ['soft-hops:2'],
                                 'rules': {'weight_soft-hops:2': 5}})
    assert doc.rules.weight('soft-hops:2') == 5
