"""``openstack scoped policy export`` against the running policy API (the
gabbi world of tests/functional/api/fixtures.py): YAML and JSON scenarios
the simulator reads, ``--project`` and ``--obfuscate``, administrators
only."""

import json

from osc_lib import exceptions
import pytest
import yaml

from nova_scoped_policies.osc.v1 import export as osc_export
from nova_scoped_policies.simulator import scenario as sc
from tests.functional.api import fixtures as fx
from tests.functional.api import test_osc
from tests.functional.api.test_osc import api  # noqa: F401 (fixture)
from tests.functional.api.test_osc import run
from tests.functional.api import test_visibility as tv

EXPORT = 'scoped_policy_export'


def export(headers, *argv) -> str:
    """What ``openstack scoped policy export argv`` writes."""
    app = test_osc._app(headers)
    cmd = test_osc.ENTRY_POINTS[EXPORT](app, None)
    parser = cmd.get_parser('openstack scoped policy export')
    assert cmd.run(parser.parse_args(list(argv))) == 0
    return app.stdout.getvalue()


def test_export_command(api, tmp_path):  # noqa: F811
    run(tv.ADMIN, 'scoped_policy_scope_create', 'rack', '--aggregate',
        fx.AGGREGATES['RACK_A'], '--aggregate', fx.AGGREGATES['RACK_B'])
    document = yaml.safe_load(export(tv.ADMIN))
    # the contract's order; the scheduler's options and the stacks' holds
    # when the API has them
    assert [k for k in list(document) if k not in ('config', 'holds')] == [
        'scopes', 'aggregates', 'hosts', 'groups', 'servers', 'stacks']
    assert list(document) == [k for k in osc_export.ORDER if k in document]
    assert [h['name'] for h in document['hosts']] == [
        'h1', 'h2', 'h3', 'h4', 'h5', 'h6']
    assert {s['host'] for s in document['servers']} == {'h1', 'h2', 'h3'}
    assert document['scopes'] == {'rack': {}}
    # a scenario the simulator reads
    path = tmp_path / 'cloud.yaml'
    path.write_text(export(tv.ADMIN))
    assert [s.host for s in sc.load(str(path)).servers] == ['h1', 'h2', 'h3']
    # the same document as JSON
    assert json.loads(export(tv.ADMIN, '--format', 'json')) == document
    text = export(tv.ADMIN, '--project', fx.PROJECTS['PROJECT_B'],
                  '--obfuscate')
    theirs = yaml.safe_load(text)
    assert [s['name'] for s in theirs['servers']] == [
        'load-1', 'load-2', 'load-3']
    for name in ('h1', fx.PROJECTS['PROJECT_A'], fx.INSTANCES['I1'][0],
                 fx.AGGREGATES['RACK_A']):
        assert name not in text
    with pytest.raises(exceptions.CommandError, match='403'):
        export(tv.A)
