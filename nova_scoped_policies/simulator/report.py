"""Render a simulation result: a table for people, JSON for programs."""

import re
import typing

import orjson
from oslo_serialization import jsonutils

_MAX_REJECTIONS = 10
_FAILED = {None: 'FAILED', 'migrate': 'FAILED to migrate',
           'evacuate': 'FAILED to evacuate',
           'repair': 'FAILED to move (repair)'}
"""How a failure opens: a boot's, or a move's by why it moved."""


def natural(name: str) -> list:
    """Sort key: web-2 before web-10."""
    return [(0, int(part), '') if part.isdigit() else (1, 0, part)
            for part in re.split(r'(\d+)', str(name))]


def to_json(result: dict) -> str:
    """The result as JSON, keys sorted, indented by two (orjson writes a
    report of 5,000 failed boots' reasons 30 times as fast as the
    standard library's indenting encoder)."""
    return orjson.dumps(result, default=jsonutils.to_primitive,
                        option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                        | orjson.OPT_NON_STR_KEYS).decode()


def to_table(result: dict) -> str:
    lines: typing.List[str] = []
    lines += _servers(result)
    for failed in result.get('failed_hosts', ()):
        evacuated, stayed = failed['evacuated'], failed['stayed']
        lines.append(f'Host {failed["host"]} failed: '
                     + _count(len(evacuated), 'server') + ' evacuated'
                     + (f', {", ".join(stayed)} stayed on it (no host took '
                        'them)' if stayed else ''))
    if result.get('failed_hosts'):
        lines.append('')
    if result.get('moves'):
        lines += ['Moves', *_grid(['server', 'from', 'to', 'why'], [
            [m['server'], m['from'], m['to'], m['why']]
            for m in result['moves']]), '']
    for servers, failure in _grouped_failures(result['failures']):
        who = ', '.join(servers) if len(servers) <= 4 else (
            f'{len(servers)} servers ({servers[0]}, {servers[1]}, ..., '
            f'{servers[-1]})')
        lines.append(f'{_FAILED[failure.get("why")]} {who}: '
                     f'{failure["reason"]}')
        rejections = sorted(failure['rejections'].items(),
                            key=lambda item: natural(item[0]))
        # a move to a named host: every other host says only that
        others = [host for host, reasons in rejections
                  if reasons == [NOT_REQUESTED]]
        rejections = [r for r in rejections if r[1] != [NOT_REQUESTED]]
        for host, reasons in rejections[:_MAX_REJECTIONS]:
            lines.append(f'  {host}: ' + '; '.join(reasons))
        if len(rejections) > _MAX_REJECTIONS:
            lines.append(f'  ... and {len(rejections) - _MAX_REJECTIONS} '
                         'more hosts (--format json lists all)')
        if others:
            lines.append(f'  ({_count(len(others), "other host")}: '
                         f'{NOT_REQUESTED})')
    if result['failures']:
        lines.append('')
    for stack, plan in sorted(result.get('plans', {}).items(),
                              key=lambda item: natural(item[0])):
        status = plan['status'] + (', confirmed'
                                   if plan.get('confirmed') else '')
        if plan['assignments'] and not plan.get('optimal', True):
            # the search stopped before it proved its decision best
            status += f', not proven optimal ({plan.get("stopped")})'

        lines.append(f'Stack {stack}: {status} in '
                     f'{plan["seconds"]} s' + (f': {plan["reason"]}'
                                               if plan['reason'] else ''))
        rows = sorted(plan['assignments'].items(),
                      key=lambda item: natural(item[0]))
        if rows:
            lines += _grid(['server', 'decided host'], rows)
        lines.append('')
    for stack, data in sorted(result.get('stacks', {}).items(),
                              key=lambda item: natural(item[0])):
        lines += _stack_audit(stack, data)
    for repair in result.get('repairs', ()):
        lines += _repair(repair)
    for sweep in result.get('resilience', ()):
        lines += resilience_lines(sweep)
    for group, data in sorted(result['audit'].items(),
                              key=lambda item: natural(item[0])):
        policies = ', '.join(data['policies']['policies']) or '-'
        rules = ', '.join(f'{k}={v}' for k, v in
                          sorted(data['policies']['rules'].items()))
        lines.append(f'Group {group}: {policies}'
                     + (f' ({rules})' if rules else ''))
        members = data['members']
        scopes = sorted({s for m in members for s in m['domains']
                         if s != 'host'})
        rows = [[m['server'], m['host'] or '-']
                + [m['domains'].get(s) or '-' for s in scopes]
                for m in members]
        if rows:
            lines += _grid(['member', 'host'] + scopes, rows)
        lines += [f'  VIOLATION {v}' for v in data['violations']] or \
            ['  no violation']
        lines.append('')
    lines.append(summary(result))
    return '\n'.join(lines)


NOT_REQUESTED = 'not the requested host'
"""What every other host says of a move to a named host (the
simulator's ``specs.NOT_REQUESTED``)."""


def _count(n: int, what: str) -> str:
    """``1 request``, ``2 requests``."""
    return f'{n} {what}' + ('' if n == 1 else 's')


def summary(result: dict) -> str:
    """The last line: requests, servers placed, failed boots, and, when
    servers moved, the moves made and refused and the repairs."""
    stats = result['stats']
    failures = result['failures']
    refused = sum('why' in f for f in failures)
    parts = [_count(stats['requests'], 'request'),
             _count(stats['placed'], 'server') + ' placed',
             _count(len(failures) - refused, 'failed boot')]
    if 'moves' in result:
        parts += [f'{len(result["moves"])} moved',
                  _count(refused, 'refused move')]
    if result.get('repairs'):
        done = sum(r['status'] == 'repaired' for r in result['repairs'])
        parts.append(f'{done} of {_count(len(result["repairs"]), "repair")}'
                     ' done')
    return ', '.join(parts) + f', {stats["seconds"]} s'


def _servers(result: dict) -> typing.List[str]:
    """Where each server is at the end: moved ones with where they
    came from, deleted ones marked (``servers``); or, for a report without
    them, where each was placed."""
    stories = result.get('servers')
    if stories is None:
        stories = [{'server': p['server'], 'host': p['host'],
                    'domains': p['domains'], 'moves': [], 'first': p['host'],
                    'deleted': False, 'running': False}
                   for p in result['placements']]
    if not stories:
        return []
    scopes = sorted({s for story in stories for s in story['domains']})
    rows = []
    for story in stories:
        notes = []
        if story['running']:
            notes.append('running before')
        if story['moves']:
            notes.append(' -> '.join([story['first'] or '-'] + [
                f'{m["to"]} ({m["why"]})' for m in story['moves']]))
        if story['deleted']:
            notes.append('deleted')
        elif story['host'] is None:
            notes.append('no host')
        rows.append([story['server'], story['host'] or '-']
                    + [story['domains'].get(s, '-') for s in scopes]
                    + ['; '.join(notes)])
    return ['Servers at the end', *_grid(
        ['server', 'host'] + scopes + ['notes'], rows), '']


_MAX_CASES = 20
"""Broken cases a table lists (the JSON lists all)."""
_MAX_WHY = 5
"""Broken cases whose reasons a table spells out."""
_MAX_HEADROOM = 10
"""Failed domains a table gives the headroom of (the least first)."""


def resilience_table(result: dict) -> str:
    """The ``resilience`` command's report: the scenario's sweeps and its
    own, then the line of what ran."""
    lines: typing.List[str] = []
    for sweep in result.get('resilience', ()):
        lines += resilience_lines(sweep)
    lines.append(summary(result))
    return '\n'.join(lines)


def resilience_lines(sweep: dict) -> typing.List[str]:
    """One sweep: the verdict, the cases that break (worst first), the
    groups at risk and the least headroom."""
    at_once = ('one at a time' if sweep['count'] == 1
               else f'{sweep["count"]} at once')
    only = (f' (judging only {", ".join(sweep["only"])})'
            if sweep.get('only') else '')
    lines = [f'Resilience: {sweep["fail"]} domains fail {at_once}{only}: '
             f'{sweep["survived"]} of {sweep["cases"]} cases survive '
             f'({sweep["seconds"]} s)']
    broken = sweep['broken']
    if broken:
        rows = [[', '.join(case['domains']), len(case['unplaced']),
                 ', '.join(sorted(case['groups'], key=natural))
                 + (' + stacks ' + ', '.join(sorted(case['stacks']))
                    if case.get('stacks') else '') or '-',
                 ', '.join(f'{g}: {n}' for g, n in
                           sorted(case['soft'].items())) or '-']
                for case in broken[:_MAX_CASES]]
        lines += ['Cases that break, worst first', *_grid(
            ['failed', 'unplaced', 'groups broken', 'soft'], rows)]
        if len(broken) > _MAX_CASES:
            lines.append(f'  ... and {len(broken) - _MAX_CASES} more cases '
                         '(--format json lists all)')
        for case in broken[:_MAX_WHY]:
            lines.append(f'  {", ".join(case["domains"])}:')
            for group, reasons in sorted(case['groups'].items()):
                lines += [f'    {group}: {reason}' for reason in reasons[:3]]
                if len(reasons) > 3:
                    lines.append(f'    {group}: ... and {len(reasons) - 3} '
                                 'more')
        lines.append('')
        if sweep['groups']:
            lines += ['Groups at risk', *_grid(
                ['group', 'broken in'],
                [[g, f'{data["broken_in"]} of {data["of"]} cases']
                 for g, data in sorted(
                     sweep['groups'].items(),
                     key=lambda item: (-item[1]['broken_in'],
                                       natural(item[0])))])]
            lines.append('')
    else:
        lines.append('')
    headroom = sweep['headroom']
    if headroom:
        classes = sorted({rc for left in headroom.values() for rc in left})
        least = sorted(headroom.items(), key=lambda item: (
            [item[1].get(rc, 0) for rc in classes], natural(item[0])))
        lines += [f'Headroom when each {sweep["fail"]} fails (what the '
                  'hosts still up have left), least first', *_grid(
                      [sweep['fail']] + classes,
                      [[domain] + [left.get(rc, 0) for rc in classes]
                       for domain, left in least[:_MAX_HEADROOM]])]
        if len(least) > _MAX_HEADROOM:
            lines.append(f'  ... and {len(least) - _MAX_HEADROOM} more '
                         '(--format json lists all)')
        lines.append('')
    return lines


def _stack_audit(stack: str, data: dict) -> typing.List[str]:
    """A stack's audit: its verdict, then each of its documents'."""
    lines = [f'Stack {stack} audit: {data["status"]}'
             + (f': {data["reason"]}' if data.get('reason') else '')]
    for policy in data['policies']:
        lines.append(f'  {policy["field"]} ({policy["kind"]}): '
                     f'{", ".join(policy["policies"]) or "-"}: '
                     f'{policy["status"]}')
        lines += [f'    VIOLATION {v}' for v in policy['violations']]
    return lines + ['']


def _repair(repair: dict) -> typing.List[str]:
    """A repair: its outcome, then its moves in order."""
    lines = [f'Repair {repair["target"]}: {repair["status"]} in '
             f'{repair["seconds"]} s'
             + (f': {repair["reason"]}' if repair['reason'] else '')]
    if repair['moves']:
        lines += _grid(['server', 'from', 'to', ''], [
            [m['server'], m['from'], m['to'],
             'temporary' if m.get('temporary') else '']
            for m in repair['moves']])
    return lines + ['']


def _grouped_failures(failures):
    """Identical failures (same reason, same rejections) once, with the
    servers they hit, in the order they first happened."""
    groups: typing.Dict[str, typing.Tuple[list, dict]] = {}
    for failure in failures:
        key = to_json({'reason': failure['reason'],
                       'rejections': failure['rejections'],
                       'why': failure.get('why')})
        groups.setdefault(key, ([], failure))[0].append(failure['server'])
    return [(sorted(servers, key=natural), failure)
            for servers, failure in groups.values()]


def _grid(header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells):
        return '  ' + '  '.join(str(c).ljust(w)
                                for c, w in zip(cells, widths)).rstrip()
    return [line(header), line(['-' * w for w in widths])] + \
        [line(r) for r in rows]
