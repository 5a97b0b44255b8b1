"""``openstack scoped policy export [--project P] [--obfuscate]``
(administrators): the live cloud as a simulator scenario on stdout, for
``nova-scoped-policies simulate`` and ``resilience`` (``GET /export``,
microversion 1.5).

YAML by default; ``--format json`` writes the same document as JSON,
which the simulator reads about 30 times as fast (an export of tens of
thousands of hosts).
"""

import json
import urllib.parse

from osc_lib.command import command
import yaml

from nova_scoped_policies.api.policies import export as rules
from nova_scoped_policies.osc.v1 import common

_DUMPER = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)
ORDER = ('scopes', 'aggregates', 'hosts', 'config', 'groups', 'servers',
         'stacks', 'holds')
"""The sections in the order of the contract's scenarios, then the
holds of stacks' decisions (the API answers its keys sorted)."""


class ExportScenario(command.Command):
    """Write the live cloud as a simulator scenario (administrators)."""

    rule = rules.EXPORT

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--project', metavar='<project-id>',
            help='name only this project\'s servers, groups and stacks; '
            'the other projects\' servers stay as load without names')
        parser.add_argument(
            '--obfuscate', action='store_true',
            help='replace host, aggregate, server, group, stack and '
            'project names with stable surrogates, so that the file can '
            'leave the company')
        parser.add_argument(
            '--format', choices=('yaml', 'json'), default='yaml',
            help='the scenario\'s format (default: yaml)')
        return parser

    def take_action(self, args):
        query = {}
        if args.project is not None:
            query['project'] = args.project
        if args.obfuscate:
            query['obfuscate'] = 'true'
        path = '/export' + (f'?{urllib.parse.urlencode(query)}'
                            if query else '')
        found = common.client(self).request('GET', path)
        document = {k: found[k] for k in ORDER if k in found}
        document.update((k, v) for k, v in found.items() if k not in ORDER)
        if args.format == 'json':
            self.app.stdout.write(json.dumps(document, indent=1) + '\n')
        else:
            self.app.stdout.write(yaml.dump(
                document, Dumper=_DUMPER, sort_keys=False,
                default_flow_style=None, width=100))
