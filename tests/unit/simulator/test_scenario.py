"""Scenario validation: every malformed key is named."""

import copy

import pytest

from nova_scoped_policies.simulator import scenario as sc

FLAVOR = {'resources': {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}
BASE = {
    'scopes': {'rack': {}, 'zone': {'allow_identifiers': True}},
    'aggregates': [{'name': 'rack-0', 'scope': 'rack', 'hosts': ['h1']},
                   {'name': 'win', 'hosts': ['h1'], 'metadata': {
                       'trait:CUSTOM_WINDOWS_LICENSED': 'required'}}],
    'hosts': [{'name': 'h1', 'resources': {'VCPU': 16},
               'traits': ['CUSTOM_WINDOWS_LICENSED']}],
    'generate': {'hosts': {'count': 4, 'prefix': 'n',
                           'resources': {'VCPU': 8}},
                 'scopes': {'rack': 2}},
    'config': {'enable_forbidden_aggregates_filter': True},
    'groups': [{'name': 'db', 'project': 'tenant-a',
                'policies': ['anti-affinity:rack'],
                'rules': {'max_server_per_rack': 2}}],
    'requests': [
        {'boot': {'name': 'db', 'group': 'db', 'count': 3,
                  'flavor': FLAVOR}},
        {'delete': 'db-1'},
        {'add_member': {'group': 'db', 'server': 'db-2'}},
        {'remove_member': {'group': 'db', 'server': 'db-3'}},
        {'update_group': {'group': 'db', 'policies': ['anti-affinity:zone']}},
    ],
}


def test_contract_example_parses():
    scenario = sc.parse(copy.deepcopy(BASE))
    assert [h.name for h in scenario.hosts] == ['h1', 'n1', 'n2', 'n3', 'n4']
    assert [a.name for a in scenario.aggregates] == [
        'rack-0', 'win', 'rack-1', 'rack-2']
    assert [type(r).__name__ for _, r in scenario.requests] == [
        'Boot', 'Delete', 'Membership', 'Membership', 'UpdateGroup']


def test_generated_domains_split_hosts_evenly_in_order():
    data = copy.deepcopy(BASE)
    data['aggregates'] = []
    scenario = sc.parse(data)
    racks = {a.name: list(a.hosts) for a in scenario.aggregates}
    assert racks == {'rack-1': ['h1', 'n1'], 'rack-2': ['n2', 'n3', 'n4']}
    assert scenario.config == {'enable_forbidden_aggregates_filter': True}
    (path, boot), = [r for r in scenario.requests if r[0].endswith('boot')]
    assert boot.servers == ['db-1', 'db-2', 'db-3']
    assert boot.project == 'tenant-a'


def mutate(path, value):
    data = copy.deepcopy(BASE)
    data['aggregates'] = data['aggregates'][1:]   # keep rack-N generated
    node = data
    keys = path.split('/')
    for key in keys[:-1]:
        node = node[int(key)] if key.isdigit() else node[key]
    last = keys[-1]
    if value is KeyError:
        del node[int(last) if last.isdigit() else last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize('path, value, key, problem', [
    ('bogus', 1, 'bogus', 'unknown key'),
    ('scopes/host', {}, 'scopes.host', 'implicit scope'),
    ('scopes/bad scope', {}, "scopes.'bad scope'", 'a scope name'),
    ('scopes/rack', {'allow': True}, 'scopes.rack.allow', 'unknown key'),
    ('scopes/zone/namespace', 'x', 'scopes.zone.namespace', 'must be a uuid'),
    ('scopes/zone/allow_identifiers', 'yes',
     'scopes.zone.allow_identifiers', 'true or false'),
    ('hosts/0/name', '', 'hosts[0].name', 'non-empty'),
    ('hosts/0/resources', {}, 'hosts[0].resources', 'at least one'),
    ('hosts/0/resources', {'VCPU': 0}, 'hosts[0].resources.VCPU',
     'integer >= 1'),
    ('hosts/0/resources', {'vcpu': 1}, 'hosts[0].resources.vcpu',
     'nor CUSTOM_'),
    ('hosts/0/traits', ['CUSTOM_x'], 'hosts[0].traits[0]', 'neither'),
    ('hosts/0/resources', KeyError, 'hosts[0].resources', 'is required'),
    ('generate/hosts/count', 0, 'generate.hosts.count', 'integer >= 1'),
    ('generate/hosts/prefix', 'h', 'generate.hosts', 'defined twice'),
    ('generate/scopes/pod', 2, 'generate.scopes.pod', 'not declared'),
    ('generate/scopes/rack', 9, 'generate.scopes.rack', '9 domains for 5'),
    ('aggregates/0/hosts', ['h9'], 'aggregates[0].hosts[0]', 'no such host'),
    ('aggregates/0/scope', 'pod', 'aggregates[0].scope', 'not declared'),
    ('aggregates/0/uuid', 'x', 'aggregates[0].uuid', 'not a uuid'),
    ('aggregates/0/name', 'rack-2', 'aggregates[2]', 'defined twice'),
    ('config/max_query_aggregates', 'many', 'config.max_query_aggregates',
     'many'),
    ('config/bogus', 1, 'config.bogus', 'unknown option'),
    ('config/ram_weight_multipler', 1, 'config.ram_weight_multipler',
     'did you mean ram_weight_multiplier?'),
    ('config/ram_weight_multiplier', 'much', 'config.ram_weight_multiplier',
     'much'),
    ('config/enabled_filters', ['ComputeFilter', 'RamFilter'],
     'config.enabled_filters[1]', "'RamFilter': not among the available"),
    ('config/weight_classes', ['nova.scheduler.weights.no_such'],
     'config.weight_classes', 'no_such'),
    ('config/host_subset_size', 3, 'config.host_subset_size',
     'only 1 is simulated'),
    ('config/filter_scheduler', {'image_props_weight_multiplier': 2},
     'config.filter_scheduler.image_props_weight_multiplier',
     "nova's cell database"),
    ('config/filter_scheduler', {'enable_forbidden_aggregates_filter': 1},
     'config.filter_scheduler.enable_forbidden_aggregates_filter',
     "one of nova's [filter_scheduler] options"),
    ('config/store_driver', 'http', 'config.store_driver',
     'own policy store'),
    ('config/store_cache_ttl', 0, 'config.store_cache_ttl',
     'own policy store'),
    ('groups/0/rules/max_server_per_rack', 0,
     'groups[0].rules.max_server_per_rack', 'integer >= 1'),
    ('groups/0/policies', ['anti-affinty:rack'], 'groups[0].policies[0]',
     'unknown policy type'),
    ('groups/0/colour', 'red', 'groups[0].colour', 'unknown key'),
    ('requests/0', {'boot': {'name': 'x'}}, 'requests[0].boot.flavor',
     'is required'),
    ('requests/0/boot/count', 0, 'requests[0].boot.count', 'integer >= 1'),
    ('requests/0/boot/group', 'nope', 'requests[0].boot.group',
     'no such group'),
    ('requests/0/boot/flavor', {'resources': {'VCPU': -1}},
     'requests[0].boot.flavor.resources.VCPU', 'integer >= 1'),
    ('requests/1', {'delete': 'db-9'}, 'requests[1].delete',
     'no such server'),
    ('requests/2', {'add_member': {'group': 'db'}},
     'requests[2].add_member.server', 'is required'),
    ('requests/3', {'reboot': 'db-2'}, 'requests[3].reboot',
     'unknown request'),
    ('requests/3', {'delete': 'db-2', 'boot': {}}, 'requests[3]',
     'one of boot'),
    ('requests/4/update_group/rules', {'min_domains_zone': 2},
     'requests[4].update_group.rules.min_domains_zone', 'needs rules.size'),
    # what nova's API refuses of a flavor and its image reads of an image
    ('requests/0/boot/flavor', dict(FLAVOR, extra_specs={
        'hw:cpu_policy': 'fast'}),
     'requests[0].boot.flavor.extra_specs.hw:cpu_policy', 'not one of'),
    ('requests/0/boot/flavor', dict(FLAVOR, extra_specs={'hw:nope': 1}),
     'requests[0].boot.flavor.extra_specs.hw:nope', 'valid extra spec'),
    ('requests/0/boot/image', {'properties': {'hw_architecture': 'z80'}},
     'requests[0].boot.image.properties.hw_architecture', 'z80'),
    # every value typed, down to the leaves
    ('requests/0/boot/group', ['db'], 'requests[0].boot.group',
     'non-empty string'),
    ('aggregates/0/hosts', ['h1', ['n1']], 'aggregates[0].hosts[1]',
     'non-empty string'),
    ('config/enable_scoped_policy_query_filter', -1,
     'config.enable_scoped_policy_query_filter', 'true or false'),
    ('config/enable_scoped_policy_query_filter', 'maybe',
     'config.enable_scoped_policy_query_filter', 'maybe'),
    ('config/max_query_aggregates', 0, 'config.max_query_aggregates',
     'at least 1'),
    ('config/ram_weight_multiplier', float('nan'),
     'config.ram_weight_multiplier', 'finite'),
    ('config/enabled_filters', 'ComputeFilter,RamFilter',
     'config.enabled_filters[1]', "'RamFilter'"),
    ('config/available_filters', [''], 'config.available_filters',
     'Empty module name'),
    ('hosts/0/resources/VCPU', 2 ** 31, 'hosts[0].resources.VCPU',
     '<= 2147483647'),
    ('hosts/0/name', 'h' * 256, 'hosts[0].name', 'at most 255'),
    ('hosts/0/inventory', {'VCPU': {'allocation_ratio': 0}},
     'hosts[0].inventory.VCPU.allocation_ratio', 'above 0'),
    ('hosts/0/inventory', {'MEMORY_MB': {'step_size': 2}},
     'hosts[0].inventory.MEMORY_MB', "not among the host's resources"),
    ('hosts/0/inventory', {'VCPU': {'ratio': 2}},
     'hosts[0].inventory.VCPU.ratio', 'unknown key'),
    ('hosts/0/reserved', {'VCPU\n': 1}, "hosts[0].reserved.'VCPU\\n'",
     'neither a standard'),
    ('scopes/rack/namespace', 7, 'scopes.rack.namespace', 'uuid'),
    ('requests/0/boot/count', 100001, 'requests[0].boot.count',
     '<= 100000'),
    ('generate/hosts/count', 10 ** 7, 'generate.hosts.count',
     '<= 1000000'),
])
def test_errors_name_the_key(path, value, key, problem):
    with pytest.raises(sc.ScenarioError) as err:
        sc.parse(mutate(path, value))
    assert err.value.path == key
    assert problem in str(err.value)


def test_server_booted_twice_is_refused():
    data = copy.deepcopy(BASE)
    data['requests'].append({'boot': {'name': 'db', 'count': 2,
                                      'flavor': FLAVOR}})
    with pytest.raises(sc.ScenarioError, match="'db-2' exists already"):
        sc.parse(data)


def test_number_beyond_pythons_limit_is_an_error_not_a_crash(tmp_path):
    huge = tmp_path / 'huge.yaml'
    huge.write_text('generate: {hosts: {count: ' + '9' * 5000
                    + ', resources: {VCPU: 1}}}')
    with pytest.raises(sc.ScenarioError, match='cannot read the scenario'):
        sc.load(str(huge))


def test_unreadable_file(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('hosts: [unclosed')
    with pytest.raises(sc.ScenarioError, match='cannot read the scenario'):
        sc.load(str(bad))


@pytest.mark.parametrize('path, value, key, problem', [
    ('hosts/0/name', 'h 1', 'hosts[0].name', 'without spaces'),
    ('hosts/0/name', 'h1\n', 'hosts[0].name', 'without spaces'),
    ('hosts/0/resources', [1], 'hosts[0].resources',
     'mapping of resource class'),
    ('hosts', {'h1': {}}, 'hosts', 'a list of hosts'),
    ('requests/0', 'boot', 'requests[0]', 'mapping with one key'),
    ('requests/0', {}, 'requests[0]', 'one of boot'),
    ('aggregates/0/metadata', {'k': ['v']}, 'aggregates[0].metadata.k',
     'must be strings'),
    ('stacks', [{'project': ''}], 'stacks[0].project', 'non-empty'),
])
def test_shape_errors_come_from_the_schema(path, value, key, problem):
    """The shape is checked by jsonschema (scenario.SCHEMA) with the paths
    and words the hand-written checks used."""
    with pytest.raises(sc.ScenarioError) as err:
        sc.parse(mutate(path, value))
    assert (err.value.path, problem in str(err.value)) == (key, True)
    assert len(str(err.value)) < 300


def test_nova_options_flat_or_under_filter_scheduler():
    """nova's [filter_scheduler] options join ours in ``config``; a name
    both groups have is ours unless under ``filter_scheduler``; the rest
    are the README's."""
    data = copy.deepcopy(BASE)
    data['config'] = {'soft_affinity_weight_multiplier': 2.0,
                      'ram_weight_multiplier': -1.0,
                      'filter_scheduler': {
                          'soft_affinity_weight_multiplier': 3.0}}
    scenario = sc.parse(data)
    assert scenario.config == {'soft_affinity_weight_multiplier': 2.0}
    assert scenario.nova_config == dict(
        sc.NOVA_DEFAULTS, ram_weight_multiplier=-1.0,
        soft_affinity_weight_multiplier=3.0)
    assert sc.parse(copy.deepcopy(BASE)).nova_config == sc.NOVA_DEFAULTS


def test_empty_sections_may_be_null():
    data = copy.deepcopy(BASE)
    data.update(scopes={'rack': None, 'zone': None}, config=None,
                stacks=None)
    data['aggregates'] = None
    data['requests'][0]['boot']['image'] = None
    scenario = sc.parse(data)
    assert scenario.config == {}
    assert [s.name for s in scenario.scopes] == ['rack', 'zone']


def test_defaults_are_the_readmes_nova_conf():
    """A scenario without ``config`` runs the filters and weighers the
    README tells operators to enable."""
    import configparser
    import pathlib
    import re
    readme = (pathlib.Path(__file__).parents[3] / 'README.md').read_text()
    ini = re.search(r'```ini\n(.*?)```', readme, re.S).group(1)
    conf = configparser.ConfigParser(strict=False)
    conf.read_string(re.sub(r'\n[ \t]+', ' ', ini))
    section = conf['filter_scheduler']
    assert section['enabled_filters'].split(',') == \
        sc.NOVA_DEFAULTS['enabled_filters']
    assert [c.strip() for c in section['weight_classes'].split(',')] == \
        sc.NOVA_DEFAULTS['weight_classes']


def test_a_scenario_written_as_json_reads_as_its_yaml(tmp_path):
    """JSON (YAML's flow style, as a large cloud is exported) is read by
    the JSON parser, with the same result and the same errors."""
    import json
    import yaml
    as_yaml, as_json = tmp_path / 'a.yaml', tmp_path / 'a.json'
    as_yaml.write_text(yaml.safe_dump(BASE))
    as_json.write_text(json.dumps(BASE))
    assert sc.load(str(as_json)) == sc.load(str(as_yaml))
    bad = copy.deepcopy(BASE)
    bad['requests'][0]['boot']['count'] = 'three'
    as_json.write_text(json.dumps(bad))
    with pytest.raises(sc.ScenarioError, match=r'requests\[0\]\.boot\.count'):
        sc.load(str(as_json))


def test_a_yaml_flow_mapping_that_is_not_json_reads_as_yaml(tmp_path):
    flow = tmp_path / 'flow.yaml'
    flow.write_text('{scopes: {rack: {}}, generate: {hosts: {count: 2, '
                    'resources: {VCPU: 4}}, scopes: {rack: 1}}}')
    assert len(sc.load(str(flow)).hosts) == 2
