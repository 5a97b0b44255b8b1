"""``nova-scoped-policies-status upgrade check``: is this cloud ready?

Run it where nova-scheduler runs, with its nova.conf::

    nova-scoped-policies-status --config-file /etc/nova/nova.conf upgrade check

Each check names what to fix. Exit codes are oslo.upgradecheck's: 0 all
passed, 1 warnings, 2 a failure.
"""

import json
import re
import shutil
import subprocess
import sys
import typing
import urllib.parse

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
import requests

from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies import nova_seam
from nova_scoped_policies.db import records
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.scheduler.filters import scoped_affinity
from nova_scoped_policies.scheduler.filters import scoped_anti_affinity
from nova_scoped_policies import topology as topo

CONF = cfg.CONF
Code = upgradecheck.Code
Result = upgradecheck.Result

OUR_FILTERS = 'nova_scoped_policies.scheduler.filters.all_filters'
OUR_WEIGHERS = 'nova_scoped_policies.scheduler.weights.all_weighers'
OUR_FILTER_NAMES = (scoped_affinity.ScopedAffinityFilter.__name__,
                    scoped_anti_affinity.ScopedAntiAffinityFilter.__name__)
OUR_WEIGHER_PATHS = (
    OUR_WEIGHERS,
    'nova_scoped_policies.scheduler.weights.scoped_soft_affinity.'
    'ScopedSoftAffinityWeigher',
    'nova_scoped_policies.scheduler.weights.scoped_soft_anti_affinity.'
    'ScopedSoftAntiAffinityWeigher')
NOVA_GROUP_FILTERS = ('ServerGroupAffinityFilter',
                      'ServerGroupAntiAffinityFilter')


class AggregatesUnavailable(Exception):
    """nova's API database cannot be read; the message is one line."""


def nova_aggregates(conf) -> typing.List[topo.AggregateInfo]:
    """Every host aggregate, from nova's API database.

    :raises AggregatesUnavailable: ``[api_database] connection`` is not set
        or the database does not answer.
    """
    from nova import context as nova_context
    from nova.db.api import api as api_db
    from nova import objects
    if not conf.api_database.connection:
        raise AggregatesUnavailable(
            '[api_database] connection is not set: run the check with the '
            'nova.conf of nova-scheduler (--config-file /etc/nova/nova.conf)')
    objects.register_all()
    api_db.configure(conf)
    try:
        found = objects.AggregateList.get_all(
            nova_context.get_admin_context())
    except Exception as exc:  # any driver or schema error: one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() \
            else type(exc).__name__
        raise AggregatesUnavailable(
            f'cannot read host aggregates from [api_database] connection: '
            f'{first[:200]}') from exc
    return [topo.AggregateInfo(a.uuid, a.name, a.hosts or (),
                               a.metadata or {}) for a in found]


MANAGEMENT_PORT = 15672
"""RabbitMQ's management API port (the ``rabbitmq_management`` plugin)."""


class PoliciesUnavailable(Exception):
    """RabbitMQ's policies cannot be read; the message says what was
    tried."""


def notification_url(conf):
    """The transport nova's notifications, and our listener, use."""
    import oslo_messaging as messaging
    from nova_scoped_policies.nova_seam import aggregates
    aggregates._register(conf)
    return messaging.TransportURL.parse(
        conf, conf.oslo_messaging_notifications.transport_url)


def rabbit_policies(url) -> typing.Tuple[str, typing.List[dict]]:
    """RabbitMQ's policies of the transport's virtual host: from the
    management API of each of its hosts (port 15672, the transport's
    credentials), else from ``rabbitmqctl`` where it runs (on a broker's
    own host, with its Erlang cookie).

    :returns: (where they were read, the policies as RabbitMQ lists
        them: ``name``, ``pattern``, ``apply-to``, ``definition``,
        ``priority``).
    :raises PoliciesUnavailable: neither answered; the message says why.
    """
    vhost = url.virtual_host or '/'
    tried = []
    for host in url.hosts:
        name = host.hostname or '127.0.0.1'
        where = (f'http://{f"[{name}]" if ":" in name else name}:'
                 f'{MANAGEMENT_PORT}/api/policies/'
                 f'{urllib.parse.quote(vhost, safe="")}')
        try:
            answer = requests.get(where, auth=(host.username or 'guest',
                                               host.password or 'guest'),
                                  timeout=5)
            answer.raise_for_status()
            return f'the management API of {name}', answer.json()
        except (requests.RequestException, ValueError) as exc:
            tried.append(f'the management API at {where}: '
                         f'{str(exc).splitlines()[0][:120]}')
    if shutil.which('rabbitmqctl'):
        try:
            done = subprocess.run(
                ['rabbitmqctl', 'list_policies', '-q', '-p', vhost,
                 '--formatter', 'json'], capture_output=True, text=True,
                timeout=30)
            if done.returncode == 0:
                return 'rabbitmqctl', json.loads(done.stdout or '[]')
            tried.append(f'rabbitmqctl: {done.stderr.strip()[:120]}')
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            tried.append(f'rabbitmqctl: {exc}')
    else:
        tried.append('rabbitmqctl: not on this host')
    raise PoliciesUnavailable('; '.join(tried))


def expiry(policies: typing.Iterable[dict], queue: str
           ) -> typing.Tuple[typing.Optional[str], typing.Optional[int]]:
    """(the policy RabbitMQ applies to ``queue``: the highest priority
    among those whose pattern matches, its ``expires`` in ms or None).
    """
    found = [p for p in policies if p.get('apply-to', 'all') in (
        'queues', 'all', 'classic_queues', 'quorum_queues')
        and re.search(p.get('pattern', '$^'), queue)]
    if not found:
        return None, None
    best = max(found, key=lambda p: int(p.get('priority', 0)))
    definition = best.get('definition') or {}
    if isinstance(definition, str):
        definition = json.loads(definition or '{}')
    expires = definition.get('expires')
    return best.get('name'), int(expires) if expires is not None else None


def _result(failures, warnings, ok):
    if failures:
        return Result(Code.FAILURE, '\n'.join(failures + warnings))
    if warnings:
        return Result(Code.WARNING, '\n'.join(warnings))
    return Result(Code.SUCCESS, ok)


def _check_policy_file(checks) -> Result:
    """The policy API's policy file (``[oslo_policy] policy_file`` of the
    configuration given): warn when it overrides a rule whose default
    changed (the Secure RBAC personas, whose old default is deprecated),
    overrides a deprecated rule (``admin_or_owner``: the personas that
    replace it use the override for a release), or when
    ``enforce_new_defaults = False`` ORs the old defaults back in."""
    from oslo_policy import policy as oslo_policy

    from nova_scoped_policies.api import policies

    enforcer = oslo_policy.Enforcer(checks.conf)
    # as the policy API does (api/policy.py)
    checks.conf.set_default('enforce_new_defaults', True, 'oslo_policy')
    defaults = policies.list_rules()
    enforcer.register_defaults(defaults)
    enforcer.suppress_deprecation_warnings = True
    enforcer.suppress_default_change_warnings = True
    try:
        enforcer.load_rules()
    except ValueError as exc:
        return Result(Code.FAILURE, f'policy file {enforcer.policy_file}: '
                      f'{str(exc)[:200]}')
    warnings = []
    if not checks.conf.oslo_policy.enforce_new_defaults:
        warnings.append('[oslo_policy] enforce_new_defaults = False: the '
                        'deprecated defaults are ORed with the new ones '
                        '(a project reader may still write); set it True '
                        'once the roles are assigned')
    found = enforcer.file_rules
    if any(name.startswith('os_compute_api:') for name in found):
        return _result([], warnings, f'{enforcer.policy_path} is nova\'s '
                       'policy file: run the check with the policy API\'s '
                       'configuration file to check its policy file')
    renamed = {}
    for default in defaults:
        old = default.deprecated_rule
        if old is None:
            continue
        if default.name in found:
            warnings.append(
                f'{enforcer.policy_path} overrides {default.name}, whose '
                f'default changed to "{default.check_str}" (deprecated: '
                f'"{old.check_str}"): it is "{found[default.name].check_str}"'
                ' whatever the roles; remove it to enforce the new default')
        elif old.name != default.name and old.name in found:
            renamed.setdefault(old.name, []).append(default.name)
    for name, users in sorted(renamed.items()):
        warnings.append(
            f'{enforcer.policy_path} overrides {name}, whose meaning '
            f'{", ".join(users)} now take(s): they use its '
            f'"{found[name].check_str}" for a release instead of their new '
            'defaults; move the override to them, or remove it')
    where = enforcer.policy_path or f'no policy file ({enforcer.policy_file})'
    return _result([], warnings, f'{where}: every rule whose default '
                   'changed has its new default')


class Checks(upgradecheck.UpgradeCommands):
    """The checks. Sources of aggregates and Placement can be replaced.

    :param conf: the parsed nova.conf.
    :param aggregates: returns every host aggregate.
    :param placement: returns a Placement client.
    :param store: returns the policy store driver, or None when
        ``[scoped_policies] store_driver`` is empty.
    :param policies: returns (where, RabbitMQ's policies of the
        notification transport's virtual host) (:func:`rabbit_policies`).
    """

    def __init__(self, conf: cfg.ConfigOpts = CONF,
                 aggregates: typing.Optional[typing.Callable] = None,
                 placement: typing.Optional[typing.Callable] = None,
                 store: typing.Optional[typing.Callable] = None,
                 policies: typing.Optional[typing.Callable] = None) -> None:
        self.conf = conf
        self.aggregates = aggregates or (lambda: nova_aggregates(conf))
        self.placement = placement or (
            lambda: pc.PlacementClient.from_conf(conf))
        self.store = store or self._store_from_conf
        self.policies = policies or (
            lambda: rabbit_policies(notification_url(conf)))
        self._stored_scopes: typing.Optional[
            typing.List[records.ScopeRecord]] = None

    def _store_from_conf(self):
        name = self.conf.scoped_policies.store_driver
        return stores.load_driver(name, self.conf) if name else None

    def _scopes_of_store(self) -> typing.List[records.ScopeRecord]:
        """The stored scopes, or none when the store fails (reported by
        the policy store check)."""
        if self._stored_scopes is None:
            try:
                driver = self.store()
                self._stored_scopes = driver.scopes() if driver else []
            except (ValueError, stores.StoreUnavailable):
                self._stored_scopes = []
        return self._stored_scopes

    def _check_scheduler(self) -> Result:
        fs = self.conf.filter_scheduler
        sp = self.conf.scoped_policies
        failures, warnings = [], []
        request_filters = [o for o in ('enable_scoped_policy_query_filter',
                                       'enable_forbidden_aggregates_filter')
                           if getattr(sp, o)]
        enabled = [n for n in OUR_FILTER_NAMES if n in fs.enabled_filters]
        weighed = any(w in fs.weight_classes for w in OUR_WEIGHER_PATHS)
        if OUR_FILTERS not in fs.available_filters:
            if enabled:
                failures.append(
                    f'[filter_scheduler] available_filters lacks '
                    f'{OUR_FILTERS}: nova-scheduler cannot load '
                    f'{", ".join(enabled)}; add it as a second '
                    'available_filters line')
            else:
                warnings.append(
                    f'nova-scoped-policies is installed but not enabled: '
                    f'add {OUR_FILTERS} to [filter_scheduler] '
                    'available_filters and our filters to enabled_filters')
        if request_filters and not enabled and not weighed:
            failures.append(
                f'{", ".join(request_filters)} set, but no filter or weigher '
                'of ours is enabled: the nova seam, which installs our '
                'request filters, is installed when nova-scheduler builds '
                'them')
        if OUR_FILTERS in fs.available_filters and not enabled:
            failures.append(
                '[filter_scheduler] enabled_filters names neither '
                f'{" nor ".join(OUR_FILTER_NAMES)}: scoped policies are not '
                'enforced')
        elif len(enabled) == 1:
            missing = (set(OUR_FILTER_NAMES) - set(enabled)).pop()
            warnings.append(f'[filter_scheduler] enabled_filters lacks '
                            f'{missing}: its policies are not enforced')
        if enabled and not weighed:
            warnings.append(f'[filter_scheduler] weight_classes lacks '
                            f'{OUR_WEIGHERS}: soft scoped policies are not '
                            'weighed (weight_classes is one comma-separated '
                            'list)')
        if enabled:
            absent = [n for n in NOVA_GROUP_FILTERS
                      if n not in fs.enabled_filters]
            if absent:
                warnings.append(
                    f'[filter_scheduler] enabled_filters lacks '
                    f'{", ".join(absent)}: nova-conductor refuses boots into '
                    'groups unless its own nova.conf names them; ignore '
                    'this only if this file is read by nova-scheduler alone')
        if sp.enable_forbidden_aggregates_filter and \
                self.conf.scheduler.enable_isolated_aggregate_filtering:
            warnings.append(
                '[scoped_policies] enable_forbidden_aggregates_filter and '
                '[scheduler] enable_isolated_aggregate_filtering do the same '
                'work; disable the latter, which queries the database for '
                'every request')
        return _result(failures, warnings,
                       'nova-scoped-policies is enabled consistently')

    def _check_placement(self) -> Result:
        if not (self.conf.scoped_policies.enable_scoped_policy_query_filter
                or self.conf.scoped_policies
                .enable_forbidden_aggregates_filter):
            return Result(Code.SUCCESS, 'no request filter enabled: any '
                          'Placement will do')
        try:
            found = self.placement().check_version()
        except pc.PlacementVersionError as exc:
            return Result(Code.FAILURE, f'{exc}; upgrade Placement or '
                          'disable the [scoped_policies] request filters')
        except Exception as exc:  # no endpoint, auth, network...
            return Result(Code.FAILURE, f'cannot reach Placement with the '
                          f'[placement] options: {exc}')
        return Result(Code.SUCCESS, f'Placement supports up to {found}')

    def _check_aggregates(self) -> Result:
        try:
            aggregates = self.aggregates()
        except AggregatesUnavailable as exc:
            return Result(Code.FAILURE, str(exc))
        topology = topo.from_aggregates(aggregates, self._scopes_of_store())
        traits = forbidden_aggregates.index(aggregates)
        failures = [f'{p}: move it out of all but one of them'
                    for p in topology.problems if ' domains of scope ' in p]
        failures += [f'{p}: set {topo.NAMESPACE_KEY}=<uuid> on the '
                     "scope's aggregates" for p in topology.problems
                     if f'{topo.NAMESPACE_KEY} is not' in p]
        failures += [f'{p}: remove it from the scope (openstack policy '
                     'scope remove aggregate)' for p in topology.problems
                     if p.endswith(' does not exist')]
        warnings = [p for p in topology.problems + list(traits.problems)
                    if not any(p in f for f in failures)]
        scopes = [s for s in topology.scope_names if s != 'host']
        return _result(failures, warnings,
                       f'{len(scopes)} scope(s) defined'
                       + (f': {", ".join(scopes)}' if scopes else ''))

    def _check_store(self) -> Result:
        try:
            driver = self.store()
        except ValueError as exc:
            return Result(Code.FAILURE, f'{exc}; use sql or http')
        if driver is None:
            return Result(Code.SUCCESS, 'no policy store: scopes come from '
                          'aggregate metadata, policies from Nova groups '
                          'and the scoped_policies hint')
        try:
            scopes = {s.name for s in driver.scopes()}
            groups = driver.groups()
        except stores.StoreUnavailable as exc:
            return Result(Code.FAILURE, f'{exc}; boots into groups with '
                          'hard stored policies fail until it answers')
        # scopes from aggregate metadata count too
        try:
            aggregates = self.aggregates()
        except AggregatesUnavailable as exc:
            return Result(Code.FAILURE, f'cannot check the stored groups\' '
                          f'scopes: {exc}')
        scopes |= set(topo.from_aggregates(aggregates).scope_names)
        failures = []
        for group in groups:
            missing = sorted(group.document.scopes - scopes)
            if missing:
                failures.append(
                    f'server group {group.uuid} (project '
                    f'{group.project_id}) uses undefined scope(s) '
                    f'{", ".join(missing)}: create them, or change the '
                    "group's policies; its boots fail meanwhile")
        return _result(failures, [], f'{len(groups)} stored group(s), '
                       'every scope they use exists')

    def _check_nova_seam(self) -> Result:
        found = nova_seam.planned(self.conf)
        if found.refused is not None:
            if not self.conf.scoped_policies.nova_seam:
                return Result(Code.WARNING, (
                    f'nova seam off ({found.refused}): nothing of nova is '
                    'patched; boots into groups with hard scoped policies '
                    'fail closed, and no request filter of ours runs'))
            return Result(Code.FAILURE, (
                f'nova seam refused: {found.refused}; nova-scheduler patches '
                'nothing and boots into groups with hard scoped policies '
                'fail closed until nova-scoped-policies supports this nova'))
        lines = [f'nova seam ({nova_seam.checks.WRITTEN_FOR} internals '
                 'match); nova-scheduler installs at start: '
                 + '; '.join(found.installed)]
        if self.conf.scoped_policies.enable_forbidden_aggregates_filter:
            lines.append(f'isolation mode {found.isolation}: '
                         + nova_seam.ISOLATION[found.isolation])
        lines += found.notes
        if found.notes:
            return Result(Code.WARNING, '\n'.join(lines + [
                'scopes reach the schedulers within [scoped_policies] '
                'aggregate_refresh_interval (the host filters compare '
                'the candidates\' aggregates with nova-scheduler\'s own '
                'view first)']))
        return Result(Code.SUCCESS, '\n'.join(lines))

    def _check_queue_expiry(self) -> Result:
        """Our notification queues expire when a scheduler dies."""
        from nova_scoped_policies.nova_seam import aggregates
        if nova_seam.planned(self.conf).isolation != nova_seam.LISTENED:
            return Result(Code.SUCCESS, 'no aggregate listener: no queue of '
                          'ours to expire')
        url = notification_url(self.conf)
        if url.transport not in ('rabbit', 'amqp', None):
            return Result(Code.SUCCESS, f'the notification transport is '
                          f'{url.transport}, not RabbitMQ: no queue of ours '
                          'to expire')
        vhost = url.virtual_host or '/'
        command = (f"rabbitmqctl set_policy -p {vhost} {aggregates.POLICY} "
                   f"'{aggregates.POLICY_PATTERN}' "
                   f"'{{\"expires\":{aggregates.POLICY_EXPIRES_MS}}}' "
                   '--apply-to queues')
        queue = aggregates.queue_name()
        try:
            where, policies = self.policies()
        except PoliciesUnavailable as exc:
            return Result(Code.WARNING, (
                f'cannot read RabbitMQ\'s policies of virtual host {vhost} '
                f'(tried {exc}): a scheduler that stops cleanly deletes its '
                'queue; one that dies leaves it unless a policy expires '
                f'it. Check on a broker host with `rabbitmqctl '
                f'list_policies -p {vhost}` that a policy with "expires" '
                f'matches {queue}, or set it: {command}'))
        name, expires = expiry(policies, queue)
        if name is None:
            return Result(Code.WARNING, (
                f'no RabbitMQ policy of virtual host {vhost} matches our '
                f'queues ({queue}; read from {where}): the queue of a '
                f'scheduler that dies stays, receiving every versioned '
                f'notification. Set one: {command}'))
        if expires is None:
            return Result(Code.WARNING, (
                f'RabbitMQ policy {name} applies to our queues ({queue}; '
                f'read from {where}) but sets no "expires" (RabbitMQ '
                'applies one policy per queue): add "expires" to it, or '
                f'give ours a higher priority: {command} --priority 1'))
        return Result(Code.SUCCESS, (
            f'RabbitMQ policy {name} expires the queue of a scheduler that '
            f'dies after {expires / 1000:g} s unused (read from {where})'))

    _upgrade_checks = (
        ('Nova seam', _check_nova_seam),
        ('Scheduler configuration', _check_scheduler),
        ('Placement microversion', _check_placement),
        ('Scope aggregates', _check_aggregates),
        ('Policy store', _check_store),
        ('Aggregate notification queues', _check_queue_expiry),
        ('Policy API rules', _check_policy_file),
    )


def main(argv=None) -> int:
    import nova.conf  # noqa: F401  (registers nova's options on CONF)
    nsp_conf.register_opts(CONF)
    return upgradecheck.main(CONF, project='nova',
                             upgrade_command=Checks(),
                             argv=sys.argv[1:] if argv is None else argv)


if __name__ == '__main__':
    sys.exit(main())
