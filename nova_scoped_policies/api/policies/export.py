"""Rules of ``/export`` (microversion 1.5)."""

from nova_scoped_policies.api.policies import base

EXPORT = 'scoped_policies:export'

rules = [
    base.rule(EXPORT, base.ADMIN, base.OLD_ADMIN, 'Export the live cloud '
              'as a simulator scenario (every project\'s servers, groups '
              'and stacks; microversion 1.5).',
              [{'method': 'GET', 'path': '/export'}]),
]


def list_rules():
    return rules
