"""The simulator's table: natural order, identical failures once."""

from nova_scoped_policies.simulator import report


def _failure(server, reason='no host', rejections=None):
    return {'server': server, 'reason': reason,
            'rejections': rejections or {'h10': ['full'], 'h2': ['full']}}


def _result(failures, audit=None):
    return {'placements': [], 'failures': failures, 'audit': audit or {},
            'stats': {'requests': 1, 'placed': 0, 'seconds': 0.1}}


def test_identical_failures_are_grouped_in_natural_order():
    failures = [_failure(f'web-{i}') for i in range(1, 26)]
    failures.append(_failure('db-1', reason='other'))
    table = report.to_table(_result(failures))
    assert table.count('FAILED') == 2
    assert 'FAILED 25 servers (web-1, web-2, ..., web-25): no host' in table
    assert 'FAILED db-1: other' in table
    # rejections in natural order: h2 before h10
    assert table.index('  h2: full') < table.index('  h10: full')


def test_a_few_identical_failures_are_all_named():
    table = report.to_table(_result([_failure('a-10'), _failure('a-2')]))
    assert 'FAILED a-2, a-10: no host' in table


def test_groups_in_natural_order():
    empty = {'policies': {'policies': [], 'rules': {}}, 'members': [],
             'violations': []}
    table = report.to_table(_result([], {'g10': empty, 'g2': empty}))
    assert table.index('Group g2:') < table.index('Group g10:')


def test_natural_key():
    names = ['web-10', 'web-2', 'web-1', 'db']
    assert sorted(names, key=report.natural) == ['db', 'web-1', 'web-2',
                                                 'web-10']


def test_a_failed_move_is_told_from_a_failed_boot():
    moved = dict(_failure('db-1'), why='migrate')
    table = report.to_table(_result([_failure('db-1'), moved,
                                     dict(_failure('db-2'),
                                          why='evacuate')]))
    assert 'FAILED db-1: no host' in table
    assert 'FAILED to migrate db-1: no host' in table
    assert 'FAILED to evacuate db-2: no host' in table


def test_moves_repairs_and_stack_audits():
    result = _result([])
    result['moves'] = [{'server': 'db-1', 'from': 'h1', 'to': 'h3',
                        'why': 'repair'}]
    result['repairs'] = [
        {'target': 'group db', 'status': 'repaired', 'reason': '',
         'seconds': 0.02, 'moves': [
             {'server': 'db-1', 'from': 'h1', 'to': 'h3'}]},
        {'target': 'all', 'status': 'impossible', 'seconds': 0.01,
         'reason': 'group db: no room', 'moves': []}]
    policy = {'field': 'stack.group', 'kind': 'group',
              'policies': ['anti-affinity:rack'], 'status': 'violated',
              'violations': ['rack-1 holds 2 of max 1']}
    result['stacks'] = {'app': {'status': 'violated', 'servers': {},
                                'policies': [policy]}}
    table = report.to_table(result)
    assert ('Moves\n  server  from  to  why\n  ------  ----  --  ------\n'
            '  db-1    h1    h3  repair') in table
    assert 'Repair group db: repaired in 0.02 s\n  server  from  to\n' \
        in table
    assert 'Repair all: impossible in 0.01 s: group db: no room' in table
    assert ('Stack app audit: violated\n'
            '  stack.group (group): anti-affinity:rack: violated\n'
            '    VIOLATION rack-1 holds 2 of max 1') in table
    assert table.endswith('1 request, 0 servers placed, 0 failed boots, '
                          '1 moved, 0 refused moves, 1 of 2 repairs done, '
                          '0.1 s')


def test_a_move_to_a_named_host_names_only_the_hosts_that_matter():
    refused = _failure('db-2', 'No valid host', {
        f'h{i}': ['not the requested host'] for i in range(1, 8)})
    refused['rejections']['h6'] = ['anti-affinity:rack: rack-3 holds 1']
    refused['why'] = 'migrate'
    result = _result([refused])
    result['moves'] = []
    table = report.to_table(result)
    assert ('FAILED to migrate db-2: No valid host\n'
            '  h6: anti-affinity:rack: rack-3 holds 1\n'
            '  (6 other hosts: not the requested host)') in table
    assert table.endswith('0 failed boots, 0 moved, 1 refused move, 0.1 s')


def test_servers_at_the_end():
    result = _result([])
    result['servers'] = [
        {'server': 'a', 'host': 'h2', 'domains': {'rack': 'r1'},
         'first': 'h1', 'running': True, 'deleted': False,
         'moves': [{'to': 'h3', 'why': 'migrate'},
                   {'to': 'h2', 'why': 'repair'}]},
        {'server': 'b', 'host': None, 'domains': {}, 'first': 'h4',
         'running': False, 'deleted': True, 'moves': []},
        {'server': 'c', 'host': None, 'domains': {}, 'first': None,
         'running': False, 'deleted': False, 'moves': []}]
    result['failed_hosts'] = [{'host': 'h1', 'evacuated': ['a'],
                               'stayed': ['d', 'e']}]
    lines = report.to_table(result).splitlines()
    assert lines[:6] == [
        'Servers at the end',
        '  server  host  rack  notes',
        '  ------  ----  ----  ' + '-' * 49,
        '  a       h2    r1    running before; h1 -> h3 (migrate) -> h2 '
        '(repair)',
        '  b       -     -     deleted',
        '  c       -     -     no host']
    assert ('Host h1 failed: 1 server evacuated, d, e stayed on it (no host '
            'took them)') in lines
