"""Stand-in for devstack's ini functions (inc/ini-config), same semantics:

  ini.py get FILE SECTION OPTION            first value, or nothing
  ini.py get_multiline FILE SECTION OPTION  every value, one per line
  ini.py set FILE SECTION OPTION VALUE      one line, replacing the others
  ini.py set_multiline FILE SECTION OPTION VALUE...
  ini.py add FILE SECTION OPTION VALUE...   existing values + these
  ini.py delete FILE SECTION OPTION
"""

import re
import sys


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []


def _section_bounds(lines, section):
    start = None
    for i, line in enumerate(lines):
        match = re.match(r'^\[(.+)\]\s*$', line)
        if match:
            if start is not None:
                return start, i
            if match.group(1) == section:
                start = i
    return (start, len(lines)) if start is not None else (None, None)


def _values(lines, section, option):
    start, end = _section_bounds(lines, section)
    if start is None:
        return []
    found = []
    for line in lines[start + 1:end]:
        match = re.match(r'^\s*' + re.escape(option) + r'\s*=\s*(.*)$', line)
        if match:
            found.append(match.group(1).strip())
    return found


def _set(lines, section, option, values):
    start, end = _section_bounds(lines, section)
    if start is None:
        if values:
            lines += [f'[{section}]'] + [f'{option} = {v}' for v in values]
        return lines
    body = [line for line in lines[start + 1:end]
            if not re.match(r'^\s*' + re.escape(option) + r'\s*=', line)]
    new = [f'{option} = {v}' for v in values]
    return lines[:start + 1] + new + body + lines[end:]


def main(argv):
    command, path, section, option, *values = argv
    lines = _read(path)
    if command == 'get':
        found = _values(lines, section, option)
        print(found[0] if found else '')
        return 0
    if command == 'get_multiline':
        print('\n'.join(_values(lines, section, option)))
        return 0
    if command == 'set':
        lines = _set(lines, section, option, [' '.join(values)])
    elif command == 'set_multiline':
        lines = _set(lines, section, option, values)
    elif command == 'add':
        lines = _set(lines, section, option,
                     _values(lines, section, option) + values)
    elif command == 'delete':
        lines = _set(lines, section, option, [])
    else:
        raise SystemExit(f'unknown command {command}')
    with open(path, 'w') as handle:
        handle.write('\n'.join(lines) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
