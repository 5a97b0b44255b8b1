"""The slowest tests of every pytest run of tools/run-tests.sh, and the
whole run's time: what the CI log ends with.

Each pytest run (the main suite's processes, Heat's, Tempest's, the
dashboard's) writes a JUnit XML report (pytest's ``--junitxml``) into one
folder; this reads them all::

    python tools/slowest.py FOLDER [--count 20] [--seconds TOTAL]
"""

import argparse
import glob
import os
import sys
import xml.etree.ElementTree as ET


def cases(folder: str):
    """(seconds, run, test id) of every test case in the folder's
    reports."""
    for path in sorted(glob.glob(os.path.join(folder, '*.xml'))):
        run = os.path.splitext(os.path.basename(path))[0]
        for case in ET.parse(path).iter('testcase'):
            test = f"{case.get('classname', '')}::{case.get('name', '')}"
            yield float(case.get('time') or 0), run, test


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('folder')
    parser.add_argument('--count', type=int, default=20)
    parser.add_argument('--seconds', type=int,
                        help='the whole run, as the shell timed it')
    args = parser.parse_args(argv)
    found = sorted(cases(args.folder), reverse=True)
    print(f'{len(found)} tests; the {min(args.count, len(found))} '
          'slowest (seconds, run, test):')
    for seconds, run, test in found[:args.count]:
        print(f'{seconds:8.2f}  {run:<10} {test}')
    if args.seconds is not None:
        print(f'the whole suite took {args.seconds // 60} min '
              f'{args.seconds % 60} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
