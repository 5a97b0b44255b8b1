"""The openstackclient plugin's commands as openstackclient loads them
(their ``openstack.scoped_policies.v1`` entry points, through cliff's
command manager): help without reStructuredText, the overview of every
command, the repair plan's summary, dicts in tables."""

import io
import types

from cliff import commandmanager
import pytest
import stevedore

from nova_scoped_policies.osc.v1 import common
from nova_scoped_policies.osc.v1 import repairs
from nova_scoped_policies.repair import planner

ENTRY_POINTS = {ext.name: ext.plugin for ext in stevedore.ExtensionManager(
    'openstack.scoped_policies.v1')}


def _app():
    return types.SimpleNamespace(
        command_manager=commandmanager.CommandManager(
            'openstack.scoped_policies.v1'),
        stdout=io.StringIO(), stderr=io.StringIO(), options=None)


def _help(name) -> str:
    cmd = ENTRY_POINTS[name](_app(), None)
    return cmd.get_parser(f'openstack {name.replace("_", " ")}') \
        .format_help()


@pytest.mark.parametrize('name', sorted(ENTRY_POINTS))
def test_help_has_no_rst_markup(name):
    text = _help(name)
    assert '``' not in text and ':doc:`' not in text, text


def test_help_says_what_markup_said():
    assert 'as git diff' in _help('scoped_policy_group_audit')
    assert common.plain('``audit`` and :doc:`the guide <repair>` and '
                        ':mod:`x.y`') == 'audit and the guide and x.y'


def test_repair_plan_help_says_no_option_means_everything():
    text = ' '.join(_help('scoped_policy_repair_plan').split())
    assert ('With neither --server-group nor --stack, the plan covers '
            'every server group and stack') in text
    assert 'with -f json, yaml, csv or value, the output is the moves ' \
        'alone' in text


def test_overview_lists_every_command_with_its_description():
    app = _app()
    overview = common.Overview(app, None)
    text = overview.get_parser('openstack scoped policy').format_help()
    lines = {ln.strip() for ln in text.splitlines()}
    for name, plugin in ENTRY_POINTS.items():
        if plugin is common.Overview:
            continue
        first = common.one_line(plugin(app, None).get_description())
        spaced = name.replace('_', ' ')
        assert any(ln.startswith(spaced + ' ') and ln.endswith(first)
                   for ln in lines), (spaced, first, text)
    overview.run(overview.get_parser('x').parse_args([]))
    assert app.stdout.getvalue().strip() in text


def test_one_line_is_the_first_sentence():
    assert common.one_line('Where each member runs, per scope, and the\n'
                           'policies they violate.\n\nWith --exit-code, '
                           'exits 1.') == \
        'Where each member runs, per scope, and the policies they violate.'
    assert common.one_line('Show it. Then more.') == 'Show it.'


def test_plan_statuses_are_the_planners():
    assert (repairs.REPAIRED, repairs.NOTHING) == (planner.REPAIRED,
                                                   planner.NOTHING)


@pytest.mark.parametrize('plan, expected', [
    ({'status': 'repaired', 'moves': [{}], 'violations': ['v'],
      'reason': ''},
     'repaired: 1 move(s); violations before the repair: 1, after it: 0'),
    ({'status': 'nothing to do', 'moves': [], 'violations': [],
      'reason': ''},
     'nothing to do: 0 move(s); violations before the repair: 0, '
     'nothing to repair'),
    ({'status': 'impossible', 'moves': [], 'violations': ['v', 'w'],
      'reason': 'group g: no host left'},
     'impossible: 0 move(s); violations before the repair: 2, after it: '
     '2 (no plan); group g: no host left'),
])
def test_repair_plan_summary(plan, expected):
    assert repairs.summary(plan) == expected


def test_dicts_in_tables():
    assert common.Mapping({'max_server_per_rack': 2}).human_readable() == \
        'max_server_per_rack=2'
    assert common.Mapping({'b': 'h1 (held)', 'a': 'x=1, y=2'}) \
        .human_readable() == "a='x=1, y=2', b=h1 (held)"
    assert common.Mapping({'k': 2}).machine_readable() == {'k': 2}


def _as(roles, project='project-a', auth_ref=None):
    """An app whose caller has ``roles`` (noauth2's --os-scoped-policies-
    roles), or the Keystone token ``auth_ref`` when ``roles`` is None."""
    app = _app()
    config = {} if roles is None else {
        'scoped_policies_roles': roles,
        'scoped_policies_project_id': project}
    app.client_manager = types.SimpleNamespace(
        _cli_options=types.SimpleNamespace(config=config),
        auth_ref=auth_ref)
    return app


def _listed(app, *args):
    overview = common.Overview(app, None)
    overview.run(overview.get_parser('x').parse_args(list(args)))
    return app.stdout.getvalue()


WRITES = ('scoped policy group set ', 'scoped policy stack create ',
          'scoped policy stack renew ', 'scoped policy stack delete ',
          'scoped policy group add instance ', 'scoped policy repair plan ')
ADMINS = ('scoped policy scope create ', 'scoped policy repair apply ',
          'scoped policy export ', 'scoped policy repair task cancel ')


def test_a_reader_is_shown_only_what_it_may_run():
    text = _listed(_as('reader'))
    for read in ('scoped policy group list ', 'scoped policy stack show ',
                 'scoped policy stack audit ', 'scoped policy scope list ',
                 'scoped policy repair task list '):
        assert read in text, read
    for hidden in WRITES + ADMINS:
        assert hidden not in text, hidden
    assert 'more command(s) need roles you do not have (--all lists ' \
        'them)' in text
    # --all lists every command
    text = _listed(_as('reader'), '--all')
    assert all(name in text for name in WRITES + ADMINS)


def test_a_member_is_shown_its_writes_not_the_admins():
    text = _listed(_as('member,reader'))
    assert all(name in text for name in WRITES)
    assert not any(name in text for name in ADMINS)


def test_the_roles_of_a_keystone_token_count():
    ref = types.SimpleNamespace(project_id='project-a',
                                role_names=['admin', 'member', 'reader'])
    text = _listed(_as(None, auth_ref=ref))
    assert all(name in text for name in WRITES + ADMINS)
    assert 'need roles you do not have' not in text


def test_unknown_roles_show_every_command():
    assert 'need roles you do not have' not in _listed(_as(None))
