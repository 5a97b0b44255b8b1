"""Proposal A -> stack document: the translator alone (no Heat, no
service). Errors name the field in Proposal A's terms."""

import copy
import os

import hypothesis
from hypothesis import strategies as st
import pytest
import yaml

from nova_scoped_policies.heat import proposal_a as pa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SERVER = 'OS::Nova::Server'
SMALL = {'name': 'small', 'resources': {'VCPU': 2, 'MEMORY_MB': 2048}}
BIG = {'name': 'big', 'resources': {'VCPU': 8},
       'traits': {'required': ['CUSTOM_SSD']}}
RESOURCES = {
    **{n: pa.TemplateResource(SERVER, 'small')
       for n in ('web-1', 'web-2', 'web-3', 'solo')},
    'db-a': pa.TemplateResource(SERVER, 'big'),
    'db-b': pa.TemplateResource(SERVER, 'big'),
    'disk': pa.TemplateResource('OS::Cinder::Volume'),
    'attach': pa.TemplateResource('OS::Cinder::VolumeAttachment'),
    'nameless': pa.TemplateResource(SERVER, None),
    'odd flavor': pa.TemplateResource(SERVER, 'small'),
}
EXISTING = '9c3f0c7e-7a55-4b33-9d55-0f0e6b1c2d3e'


def ref(tid):
    return {'get_resource': tid}


def document(groups=None, **extra):
    groups = groups if groups is not None else {
        'id': 'root',
        'members': [
            {'id': 'web', 'members': [ref('web-1'), ref('web-2')],
             'policies': [{'type': 'OS::AntiCoLocation',
                           'properties': {'level': 'compute_node'}}],
             'relationships': [
                 {'related': {'get_group': 'db'},
                  'policies': [{'type': 'OS::AntiCoLocation',
                                'properties': {'level': 'rack'}}]}]},
            {'id': 'db', 'members': [ref('db-a'), ref('db-b')]}]}
    return {'name': 'app', 'flavors': [SMALL, BIG], 'groups': groups,
            **extra}


def web_policies(*policies):
    """A document whose group web has ``policies``."""
    doc = document()
    doc['groups']['members'][0]['policies'] = list(policies)
    return doc


def rel_policies(*policies):
    doc = document()
    doc['groups']['members'][0]['relationships'][0]['policies'] = list(
        policies)
    return doc


def refused(doc, field, *words, resources=RESOURCES, check=pa.translate):
    with pytest.raises(pa.ProposalError) as info:
        check(doc, resources)
    assert info.value.field == field, str(info.value)
    for word in words:
        assert word in info.value.message, str(info.value)
    return info.value


def test_groups_policies_relationships_and_flavors():
    stack = pa.validate(document(lease_seconds=300), RESOURCES)
    assert stack == {'stack': {
        'name': 'app', 'lease_seconds': 300,
        'group': {'name': 'root', 'members': [
            {'name': 'web', 'policies': ['anti-affinity:host'],
             'servers': {'names': ['web-1', 'web-2'],
                         'flavor': {'resources': SMALL['resources']}}},
            {'name': 'db', 'servers': {'names': ['db-a', 'db-b'], 'flavor': {
                'resources': BIG['resources'], 'traits': BIG['traits']}}},
        ]},
        'relationships': [{'from': 'web', 'to': 'db',
                           'policies': ['anti-affinity:rack']}]}}


# -- the mapping table --------------------------------------------------------

@pytest.mark.parametrize('ptype,props,words', [
    ('OS::AntiCoLocation', {'level': 'rack'}, ['anti-affinity:rack']),
    ('OS::AntiCoLocation', {'level': 'rack', 'hardConstraint': True},
     ['anti-affinity:rack']),
    ('OS::AntiCoLocation', {'level': 'rack', 'hardConstraint': False},
     ['soft-anti-affinity:rack']),
    ('OS::AntiCoLocation', {'level': 'compute_node'}, ['anti-affinity:host']),
    ('OS::AntiCoLocation', {'level': 'PM'}, ['anti-affinity:host']),
    ('OS::AntiCoLocation', {'level': 'host'}, ['anti-affinity:host']),
    ('OS::CoLocation', {'level': 'chassis'}, ['affinity:chassis']),
    ('OS::CoLocation', {'level': 'row', 'hardConstraint': False},
     ['soft-affinity:row']),
    ('OS::LicensedProductPresence', {'product': 'db2'},
     ['license:db2', 'soft-license-pack:db2']),
    ('OS::LicensedProductPresence', {'product': 'db2',
                                     'hardConstraint': True},
     ['license:db2', 'soft-license-pack:db2']),
    ('OS::LicensedProductPresence', {'product': 'db2',
                                     'hardConstraint': False},
     ['soft-license-pack:db2']),
])
def test_policy_words(ptype, props, words):
    doc = web_policies({'type': ptype, 'properties': props,
                        'metadata': {'description': 'as the spec writes'}})
    web = pa.translate(doc, RESOURCES)['stack']['group']['members'][0]
    assert web['policies'] == words


@pytest.mark.parametrize('ptype', ['OS::LLMNAntiCoLocation', 'OS::LLMN'])
def test_llmn_is_our_shorthand_on_a_group_of_servers(ptype):
    doc = web_policies({'type': ptype,
                        'properties': {'L1': 'rack', 'L2': 'PM', 'N': 2}})
    web = pa.validate(doc, RESOURCES)['stack']['group']['members'][0]
    assert web['llmn'] == {'level1': 'rack', 'level2': 'host', 'n': 2}
    assert 'policies' not in web


def test_relationship_words_soft_and_hard():
    doc = rel_policies(
        {'type': 'OS::CoLocation', 'properties': {'level': 'row'}},
        {'type': 'OS::AntiCoLocation',
         'properties': {'level': 'PM', 'hardConstraint': False}})
    rel = pa.validate(doc, RESOURCES)['stack']['relationships'][0]
    assert rel['policies'] == ['affinity:row', 'soft-anti-affinity:host']


def test_a_licence_on_a_group_of_groups_reaches_every_server():
    # monadic: "applying the policy to every relevant member", recursively
    doc = document()
    doc['groups']['policies'] = [{'type': 'OS::LicensedProductPresence',
                                  'properties': {'product': 'db2',
                                                 'hardConstraint': False}}]
    root = pa.translate(doc, RESOURCES)['stack']['group']
    assert 'policies' not in root
    assert root['members'][0]['policies'] == ['anti-affinity:host',
                                              'soft-license-pack:db2']
    assert root['members'][1]['policies'] == ['soft-license-pack:db2']


# -- members ------------------------------------------------------------------

def test_a_server_beside_groups_is_a_group_of_its_own():
    doc = document()
    doc['groups']['members'].append(ref('solo'))
    doc['groups']['policies'] = [{'type': 'OS::AntiCoLocation',
                                  'properties': {'level': 'rack'}}]
    root = pa.validate(doc, RESOURCES)['stack']['group']
    assert root['policies'] == ['anti-affinity:rack']
    assert root['members'][2] == {
        'name': 'solo', 'servers': {'names': ['solo'], 'flavor': {
            'resources': SMALL['resources']}}}


def test_a_root_of_servers_is_a_leaf():
    doc = document({'id': 'only', 'members': [ref('web-1'), ref('web-2')]})
    group = pa.validate(doc, RESOURCES)['stack']['group']
    assert group['servers']['names'] == ['web-1', 'web-2']


@pytest.mark.parametrize('members,field,words', [
    ([ref('web-1'), ref('disk')], 'groups.members[1].get_resource',
     ['OS::Cinder::Volume', 'only OS::Nova::Server']),
    ([ref('web-1'), ref('attach')], 'groups.members[1].get_resource',
     ['OS::Cinder::VolumeAttachment']),
    ([ref('web-1'), ref('gone')], 'groups.members[1].get_resource',
     ["no resource 'gone'"]),
    ([ref('web-1'), ref('web-1')], 'groups.members[1].get_resource',
     ['exactly one group', 'groups.members[0]']),
    ([ref('web-1'), ref('db-a')], 'groups.members[1]',
     ['share a flavor']),
    ([ref('nameless')], 'groups.members[0].get_resource',
     ['not known at validation']),
    ([ref('web-1'), {'get_resource': 'web-2', 'extra': 1}],
     'groups.members[1].extra', ['a member is a group or']),
    ([], 'groups.members', ['at least 1']),
])
def test_bad_members_are_refused_naming_the_member(members, field, words):
    refused(document({'id': 'g', 'members': members}), field, *words)


def test_a_flavor_not_described_is_refused():
    doc = document()
    doc['flavors'] = [SMALL]
    refused(doc, 'groups.members[1].members[0].get_resource',
            "boots flavor 'big'", 'flavors does not describe')


def test_a_flavor_described_twice_is_refused():
    doc = document()
    doc['flavors'] = [SMALL, BIG, SMALL]
    refused(doc, 'flavors[2].name', 'twice')


def test_a_resource_in_two_groups_is_refused():
    doc = document()
    doc['groups']['members'][1]['members'].append(ref('web-2'))
    refused(doc, 'groups.members[1].members[2].get_resource',
            'groups.members[0].members[1]', 'exactly one group')


# -- what we cannot express ---------------------------------------------------

@pytest.mark.parametrize('ptype,words', [
    ('OS::NetMaxHops', ['network policy']),
    ('OS::NetBandwidth', ['network policy']),
    ('OS::NetReachability', ['network policy']),
    ('OS::VolExclusive', ['volume policy']),
    ('OS::VolNotMoved', ['volume policy']),
    ('OS::Heat::Whatever', ['not a policy type we express',
                            'OS::AntiCoLocation']),
])
def test_network_volume_and_unknown_types_are_refused_naming_them(ptype,
                                                                  words):
    policy = {'type': ptype, 'properties': {'hops': 0}}
    refused(web_policies(policy), 'groups.members[0].policies[0].type',
            ptype, *words)
    refused(rel_policies(policy),
            'groups.members[0].relationships[0].policies[0].type', ptype,
            *words)


@pytest.mark.parametrize('policy,field,words', [
    ({'type': 'OS::AntiCoLocation'}, 'properties.level', ['is required']),
    ({'type': 'OS::AntiCoLocation', 'properties': {'level': 'rack',
                                                   'hops': 1}},
     'properties.hops', ['unknown key']),
    ({'type': 'OS::AntiCoLocation', 'properties': {'level': 'a rack'}},
     'properties.level', ['letters, digits']),
    ({'type': 'OS::CoLocation', 'properties': {'level': 'rack',
                                               'hardConstraint': 'no'}},
     'properties.hardConstraint', ['boolean']),
    ({'type': 'OS::LLMN', 'properties': {'L1': 'rack', 'L2': 'host'}},
     'properties.N', ['is required']),
    ({'type': 'OS::LLMN', 'properties': {'L1': 'rack', 'L2': 'host', 'N': 0}},
     'properties.N', ['at least 1']),
    ({'type': 'OS::LLMN', 'properties': {'L1': 'rack', 'L2': 'host', 'N': 2,
                                         'hardConstraint': False}},
     'properties.hardConstraint', ['hard only']),
    ({'type': 'OS::LicensedProductPresence',
      'properties': {'catalog': 'ibm', 'product': 'db2'}},
     'properties.catalog', ['one catalog']),
    ({'type': 'OS::LicensedProductPresence', 'properties': {}},
     'properties.product', ['is required']),
    ({'type': 'OS::AntiCoLocation', 'properties': ['rack']},
     'properties', ['object']),
    ({'properties': {'level': 'rack'}}, 'type', ['is required']),
    ({'type': 'OS::AntiCoLocation', 'properties': {'level': 'rack'},
      'when': 'always'}, 'when', ['unknown key']),
])
def test_bad_policy_properties_name_the_property(policy, field, words):
    refused(web_policies(policy), f'groups.members[0].policies[0].{field}',
            *words)


@pytest.mark.parametrize('ptype,props', [
    ('OS::LLMN', {'L1': 'rack', 'L2': 'host', 'N': 2}),
    ('OS::LicensedProductPresence', {'product': 'db2'}),
])
def test_a_relationship_takes_dyadic_policies_only(ptype, props):
    refused(rel_policies({'type': ptype, 'properties': props}),
            'groups.members[0].relationships[0].policies[0].type',
            'not to a relationship')


def test_llmn_on_a_group_of_groups_is_refused():
    doc = document()
    doc['groups']['policies'] = [{'type': 'OS::LLMN', 'properties': {
        'L1': 'rack', 'L2': 'host', 'N': 2}}]
    refused(doc, 'groups.policies[0].properties', 'holds groups')


def test_two_llmn_on_one_group_are_refused():
    llmn = {'type': 'OS::LLMN', 'properties': {'L1': 'rack', 'L2': 'host',
                                               'N': 2}}
    refused(web_policies(llmn, llmn), 'groups.members[0].policies[1].type',
            'one LLMN policy per group')


# -- relationships ------------------------------------------------------------

@pytest.mark.parametrize('related,to', [
    ({'get_group': 'db'}, 'db'),
    (EXISTING.upper(), {'server': EXISTING}),
    ({'get_resource': 'solo'}, 'solo'),
])
def test_related(related, to):
    doc = document()
    doc['groups']['members'].append({'id': 'alone',
                                     'members': [ref('solo')]})
    if to == 'solo':
        to = 'alone'
    doc['groups']['members'][0]['relationships'][0]['related'] = related
    rel = pa.validate(doc, RESOURCES)['stack']['relationships'][0]
    assert (rel['from'], rel['to']) == ('web', to)


@pytest.mark.parametrize('related,field,words', [
    ({'get_group': 'nope'}, 'related.get_group', ["no group 'nope'"]),
    ({'get_resource': 'db-a'}, 'related.get_resource',
     ['shares group db', 'get_group']),
    ({'get_resource': 'disk'}, 'related.get_resource',
     ['OS::Cinder::Volume']),
    ({'get_resource': 'solo'}, 'related.get_resource',
     ['not a server of groups']),
    ('not-a-uuid', 'related', ["existing server's uuid"]),
    ({'get_attr': ['x', 'y']}, 'related.get_attr', ['a reference is']),
    ({}, 'related', ['must not be empty']),
    (7, 'related', ['a reference is']),
])
def test_bad_related_is_refused(related, field, words):
    doc = document()
    doc['groups']['members'][0]['relationships'][0]['related'] = related
    refused(doc, f'groups.members[0].relationships[0].{field}', *words)


# -- the stack model's errors, named in Proposal A's fields -------------------

def test_model_errors_name_the_proposal_a_field():
    llmn = {'type': 'OS::LLMN', 'properties': {'L1': 'rack', 'L2': 'host',
                                               'N': 3}}
    refused(web_policies(llmn), 'groups.members[0].policies[0].properties.N',
            'cannot spread 2', check=pa.validate)
    both = [{'type': 'OS::CoLocation', 'properties': {'level': 'rack'}},
            {'type': 'OS::AntiCoLocation', 'properties': {'level': 'rack'}}]
    # the model's message quotes its fields: in Proposal A's terms too
    refused(web_policies(*both), 'groups.members[0]',
            'groups.members[0].policies[0] and groups.members[0].policies[1] '
            'contradict', check=pa.validate)
    # the server's resource name is its name in the stack: ours are words
    doc = document({'id': 'g', 'members': [ref('odd flavor')]})
    refused(doc, 'groups.members[0]', 'must match', check=pa.validate)
    # a relationship between a group and one inside it
    doc = document()
    doc['groups']['relationships'] = [
        {'related': {'get_group': 'db'},
         'policies': [{'type': 'OS::CoLocation',
                       'properties': {'level': 'rack'}}]}]
    refused(doc, 'groups.relationships[0].related', 'share servers',
            check=pa.validate)


def test_a_group_id_used_twice_is_refused():
    doc = document()
    doc['groups']['members'][1]['id'] = 'web'
    refused(doc, 'groups.members[1].id', 'group web is also')


@pytest.mark.parametrize('change,field', [
    (lambda d: d.pop('flavors'), 'flavors'),
    (lambda d: d['groups'].pop('id'), 'groups.id'),
    (lambda d: d['groups'].update(parent='x'), 'groups.parent'),
    (lambda d: d.update(name='no spaces allowed'), 'name'),
    (lambda d: d['flavors'][0].update(resources={}),
     'flavors[0].resources'),
    (lambda d: d.update(lease_seconds=0), 'lease_seconds'),
])
def test_shape_errors_name_the_field(change, field):
    doc = copy.deepcopy(document())
    change(doc)
    refused(doc, field)


def test_groups_nest_at_most_the_model_depth():
    group = {'id': 'leaf', 'members': [ref('web-1')]}
    for depth in range(9):
        group = {'id': f'g{depth}', 'members': [group]}
    refused(document(group), 'groups' + '.members[0]' * 8, 'at most 8')


def test_a_deep_document_is_refused_not_recursed():
    deep: object = 'x'
    for _ in range(5000):
        deep = [deep]
    refused(document({'id': 'g', 'members': [ref('web-1')],
                      'metadata': {'x': deep}}), 'groups', 'deeper')


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(groups=st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.sampled_from(['OS::AntiCoLocation', 'web-1', 'disk', 'id']),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(['id', 'members', 'policies', 'relationships',
                         'type', 'properties', 'level', 'related',
                         'get_resource', 'get_group', 'metadata']),
        inner, max_size=4), max_leaves=30))
def test_anything_is_translated_or_refused_naming_a_field(groups):
    try:
        pa.validate(document(groups), RESOURCES)
    except pa.ProposalError as exc:
        assert exc.field and len(str(exc)) < 1000


# -- the examples -------------------------------------------------------------

def example(name):
    """(the resource's properties with groups loaded, the resources)."""
    with open(os.path.join(ROOT, 'examples', 'heat', name)) as handle:
        tmpl = yaml.safe_load(handle)
    defaults = {k: v.get('default') for k, v in tmpl['parameters'].items()}

    def value(v):
        return defaults[v['get_param']] if isinstance(v, dict) else v
    resources = {}
    for name, res in tmpl['resources'].items():
        resources[name] = pa.TemplateResource(
            res['type'], value(res['properties'].get('flavor')))
    props = dict(tmpl['resources']['placement']['properties'])
    props['groups'] = pa.load(props['groups'])
    props['flavors'] = [{k: (value(v) if k == 'name' else
                             {rc: value(n) for rc, n in v.items()})
                         for k, v in f.items()} for f in props['flavors']]
    return props, resources


def test_ha_clusters_example():
    props, resources = example('proposal-a-ha-clusters.yaml')
    root = pa.validate(props, resources)['stack']['group']
    assert root['name'] == 'GRoot' and 'policies' not in root
    for c, group in enumerate(root['members'], start=1):
        assert group['name'] == f'G{c}'
        assert group['llmn'] == {'level1': 'rack', 'level2': 'host', 'n': 2}
        assert group['servers'] == {
            'names': [f'M{c}{m}' for m in range(1, 5)],
            'flavor': {'resources': {'VCPU': 2, 'MEMORY_MB': 4096}}}


def test_hadoop_example():
    props, resources = example('proposal-a-hadoop.yaml')
    stack = pa.validate(props, resources)['stack']
    names, data = stack['group']['members']
    assert names['servers']['names'] == ['WCA4-hadoop-namenode_1']
    assert data['name'] == 'WCA4-hadoop-datanode-0'
    assert data['policies'] == ['soft-anti-affinity:host']
    assert len(data['servers']['names']) == 4


def test_the_spec_s_whole_hadoop_groups_are_refused_at_its_first_volume():
    # the spec's root group also holds the volumes and their attachments
    props, resources = example('proposal-a-hadoop.yaml')
    resources['Storage volume used by datanode server_3'] = \
        pa.TemplateResource('AWS::EC2::Volume')
    props['groups']['members'].append(
        ref('Storage volume used by datanode server_3'))
    refused(props, 'groups.members[2].get_resource', 'AWS::EC2::Volume',
            resources=resources)


# -- load ---------------------------------------------------------------------

def test_load_reads_yaml_and_json():
    assert pa.load('{"id": "g", "members": []}') == {
        'id': 'g', 'members': []}
    assert pa.load('id: g\nmembers: [{get_resource: a}]\n') == {
        'id': 'g', 'members': [{'get_resource': 'a'}]}


@pytest.mark.parametrize('text,words', [
    ('a: &x [1]\nb: *x\n', 'aliases'),
    ('x' * (pa.MAX_TEXT + 1), 'longer than'),
    ('[' * 40 + ']' * 40, 'deeper than'),
    ('[' * 60000, 'deeper than'),
    ('a: [1\n', 'not YAML'),
    ('!!python/object:os.system x', 'not YAML'),
])
def test_load_refuses(text, words):
    with pytest.raises(pa.ProposalError) as info:
        pa.load(text)
    assert info.value.field == 'groups'
    assert words in info.value.message
