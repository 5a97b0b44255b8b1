"""Per-request engine evaluations, shared by our filters and weighers.

nova calls every filter and weigher once per instance of a request with the
same ``RequestSpec``. The first call builds what is costly (the policy
document, the members' hosts from the database, the topology) and keeps it
on a weak reference to the spec; later calls only add the hosts nova chose
for the earlier instances of a multi-instance request (appended by nova to
``instance_group.hosts``) and recompile counts, which is O(members).
"""

import dataclasses
import threading
import typing
import weakref

from oslo_config import cfg
from oslo_log import log as logging
from oslo_serialization import jsonutils

from nova import context as nova_context
from nova import exception
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies import engine
from nova_scoped_policies.engine import reasons as engine_reasons
from nova_scoped_policies import identifiers
from nova_scoped_policies import policy
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.scheduler import members as members_mod
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.scheduler import stores

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

HINT = 'scoped_policies'
"""Scheduler hint carrying a policy document (a JSON string) for a boot."""
GROUP_HINT = 'group'
_FROM_CONF = object()


def _group_of(spec_obj):
    if 'instance_group' in spec_obj and spec_obj.instance_group is not None:
        return spec_obj.instance_group
    return None


def _list_field(group, name: str) -> typing.List[str]:
    # Never lazy-load: an unset field would cost a database query.
    if group is None or name not in group:
        return []
    return list(getattr(group, name) or [])


def _nova_policy(group) -> typing.Optional[str]:
    if 'policy' in group and group.policy:
        return group.policy
    if 'policies' in group and group.policies:
        return group.policies[0]
    return None


def _hard_scoped(document) -> bool:
    """Whether ``document`` has a hard rule on a scope wider than a host
    (nova's own late check covers the host scope)."""
    if document is None:
        return False
    rules = document.rules
    return bool(any(p.hard and p.scope != policy.HOST_SCOPE
                    for p in document.policies)
                or any(s != policy.HOST_SCOPE for s in rules.max_server_per)
                or rules.min_domains)


def _hard(document: policy.PolicyDocument) -> bool:
    """Whether any policy or rule of ``document`` is hard, at any scope."""
    rules = document.rules
    return bool(any(p.hard for p in document.policies)
                or rules.max_server_per or rules.min_domains)


def document_for(spec_obj, stored: typing.Optional[
        policy.PolicyDocument] = None) -> typing.Optional[
        policy.PolicyDocument]:
    """The policies that apply to a request: Nova's group, the group's
    stored policies, and the hint.

    :param spec_obj: nova's RequestSpec.
    :param stored: the group's policies from the policy store, with
        identifiers in the requesting project's form.
    :raises PolicyError: the hint is malformed or contradicts the group.
    """
    group = _group_of(spec_obj)
    document = None
    if group is not None:
        document = policy.from_nova_group(
            _nova_policy(group), group.rules,
            group.name if 'name' in group else None)
    if stored is not None:
        document = (stored if document is None
                    else policy.merge(document, stored,
                                      prefix='policy store'))
    raw = spec_obj.get_scheduler_hint(HINT)
    if raw and not CONF.scoped_policies.allow_policy_hint:
        LOG.warning('Ignoring the %s scheduler hint: [%s] %s is False',
                    HINT, sched_conf.GROUP_NAME, sched_conf.ALLOW_HINT)
        raw = None
    if raw:
        hinted = parse_hint(raw)
        if group is None and (
                hinted.rules.min_domains
                or any(p.identifier is None for p in hinted.policies)):
            raise policy.PolicyError(
                HINT, raw, 'policies without a domain identifier need a '
                f'server group: pass the {GROUP_HINT!r} scheduler hint too')
        document = (hinted if document is None
                    else policy.merge(document, hinted, prefix=HINT))
    if document is None or document.empty:
        return None
    return document


def parse_hint(raw: object) -> policy.PolicyDocument:
    """Decode and validate the ``scoped_policies`` hint value.

    :param raw: the hint as nova stores it (a JSON string).
    :raises PolicyError: naming the hint and the bad field.
    """
    if not isinstance(raw, str):
        raise policy.PolicyError(HINT, raw, 'must be a JSON string holding '
                                 'a policy document')
    try:
        data = jsonutils.loads(raw)
    except ValueError as exc:
        raise policy.PolicyError(HINT, raw, f'is not valid JSON: {exc}')
    return policy.parse_document(data, prefix=HINT)


@dataclasses.dataclass
class _Entry:
    document: typing.Optional[policy.PolicyDocument]
    placements: typing.Mapping[str, typing.Optional[str]] = \
        dataclasses.field(default_factory=dict)
    topology: typing.Any = None
    base_hosts: int = 0
    key: typing.Any = None
    evaluation: typing.Optional[engine.Evaluation] = None


class RequestStates:
    """Builds and caches one :class:`engine.Evaluation` per request.

    :param locator: finds the members' hosts (default: nova's cells).
    :param aggregates: the cached aggregates: scope topology and trait
        index (default: read from nova's API database).
    :param store: the policy store (a :class:`stores.CachedStore`); by
        default the driver named by ``[scoped_policies] store_driver``,
        loaded on first use.
    """

    def __init__(self, locator=None, aggregates=None,
                 store=_FROM_CONF) -> None:
        self.locator = locator or members_mod.InFlightMemberLocator(
            retry_interval=lambda:
                CONF.scoped_policies.placement_retry_interval)
        self._store = store
        self.aggregates = aggregates or aggregate_cache.AggregateCache(
            lambda: CONF.scoped_policies.aggregate_refresh_interval,
            stored=self._stored_scopes)
        self.engine = engine.Engine()
        self._entries: 'weakref.WeakKeyDictionary[typing.Any, _Entry]' = \
            weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def evaluation(self, spec_obj) -> typing.Optional[engine.Evaluation]:
        """The evaluation for this request and instance, or None when no
        policy applies.

        :param spec_obj: nova's RequestSpec.
        :raises NoValidHost: the policies are invalid for this request, or
            the members cannot be located; the message says why.
        """
        with self._lock:
            entry = self._entries.get(spec_obj)
        try:
            if entry is None:
                entry = self._new_entry(spec_obj)
                with self._lock:
                    self._entries[spec_obj] = entry
            if entry.document is None:
                return None
            hosts = _list_field(_group_of(spec_obj), 'hosts')
            key = (spec_obj.instance_uuid
                   if 'instance_uuid' in spec_obj else None, len(hosts))
            if entry.evaluation is None or entry.key != key:
                entry.evaluation = self.engine.prepare(engine.Request(
                    entry.document, entry.topology, entry.placements,
                    in_flight=hosts[entry.base_hosts:],
                    instance_uuid=key[0]))
                entry.key = key
                for warning in entry.evaluation.warnings:
                    LOG.warning('Scoped policies: %s', warning)
            return entry.evaluation
        except policy.PolicyError as exc:
            raise exception.NoValidHost(reason=f'scoped policies: {exc}')
        except members_mod.MemberLookupError as exc:
            raise exception.NoValidHost(
                reason=f'scoped policies: cannot check the group: {exc}')

    def explain(self, spec_obj) -> typing.Optional[str]:
        """Why the group's hard policies left no host, in a line a tenant
        understands (no host or domain named); None when they left some,
        or the request has no scoped policy.

        Called after nova found no valid host, with the evaluation the
        request's filters used.
        """
        with self._lock:
            entry = self._entries.get(spec_obj)
        evaluation = entry.evaluation if entry is not None else None
        if evaluation is None or not evaluation.has_checks():
            return None
        topology = evaluation.context.topology
        hosts = {host for scope in topology.scope_names
                 for domain in topology.domains(scope)
                 for host in domain.hosts}
        hosts.update(evaluation.context.placed_hosts)
        return engine_reasons.summary(
            {host: evaluation.reasons(host) for host in sorted(hosts)})

    def aggregates_changed(self) -> None:
        """nova-api announced an aggregate change: reload at next use."""
        invalidate = getattr(self.aggregates, 'invalidate', None)
        if invalidate is not None:
            invalidate()

    @property
    def store(self) -> typing.Optional[stores.CachedStore]:
        if self._store is _FROM_CONF:
            name = CONF.scoped_policies.store_driver
            try:
                self._store = None if not name else stores.CachedStore(
                    stores.load_driver(name, CONF),
                    lambda: CONF.scoped_policies.store_cache_ttl,
                    retry_interval=lambda:
                        CONF.scoped_policies.store_retry_interval)
            except ValueError as exc:
                # a configuration error: every group boot fails closed
                raise exception.NoValidHost(reason=f'scoped policies: {exc}')
        return self._store

    def _stored_scopes(self) -> typing.List[dict]:
        """Stored scopes for the aggregate cache. A broken store_driver
        fails group boots (see _stored_group), not every boot."""
        try:
            store = self.store
        except exception.NoValidHost as exc:
            LOG.error('%s', exc)
            return []
        return store.scopes() if store is not None else []

    def _stored_group(self, group) -> typing.Optional[stores.StoredGroup]:
        """The group's stored policies; fail closed on hard ones when the
        store is unreachable, skip soft ones with a warning."""
        if group is None or 'uuid' not in group:
            return None
        store = self.store
        if store is None:
            return None
        try:
            return store.group(group.uuid)
        except stores.StoreUnavailable as exc:
            if not stores.known(exc):
                raise exception.NoValidHost(reason=(
                    f'scoped policies: the policy store is unreachable and '
                    f'server group {group.uuid} was never read from it, so '
                    f'its policies are unknown (fail closed): {exc}'))
            last = exc.last_known
            if last is None:
                return None
            if any(p.hard for p in last.document.policies) or \
                    last.document.rules.min_domains:
                raise exception.NoValidHost(reason=(
                    f'scoped policies: the policy store is unreachable and '
                    f'server group {group.uuid} has hard stored policies '
                    f'(fail closed): {exc}'))
            LOG.warning('Policy store unreachable: skipping the soft stored '
                        'policies of server group %s: %s', group.uuid, exc)
            return None

    def serialised_group(self, spec_obj) -> typing.Optional[str]:
        """The uuid of the request's server group when it has hard scoped
        policies (whose checks read other members), else None.

        Reads the group's policies only (store and aggregates are cached),
        not its members. An invalid document answers None: the evaluation
        rejects it later with its reason.

        :raises NoValidHost: the store fails closed for the group.
        """
        group = _group_of(spec_obj)
        if group is None or 'uuid' not in group:
            return None
        context = self._context(spec_obj)
        try:
            document = self._document(context, spec_obj, group)[0]
        except policy.PolicyError:
            return None
        return group.uuid if _hard_scoped(document) else None

    @staticmethod
    def _context(spec_obj):
        context = getattr(spec_obj, '_context', None) or \
            nova_context.get_admin_context()
        return context.elevated()

    def _document(self, context, spec_obj, group):
        stored = self._stored_group(group)
        stored_doc = topology = None
        if stored is not None:
            # stored identifiers are real; the engine reads the tenant's
            topology = self.aggregates.get(context)
            stored_doc = topology.to_tenant(
                stored.document, spec_obj.project_id
                if 'project_id' in spec_obj else None)
        return document_for(spec_obj, stored_doc), stored, topology

    def _new_entry(self, spec_obj) -> _Entry:
        context = self._context(spec_obj)
        group = _group_of(spec_obj)
        document, stored, topology = self._document(context, spec_obj, group)
        if document is None:
            return _Entry(None)
        if topology is None:
            topology = self.aggregates.get(context)
        document = identifiers.to_real(
            document, topology,
            spec_obj.project_id if 'project_id' in spec_obj else None)
        placements: typing.Mapping[str, typing.Optional[str]] = {}
        base_hosts = 0
        if group is not None:
            members = _list_field(group, 'members')
            current = getattr(self.locator, 'current_members', None)
            if current and _hard_scoped(document) and 'uuid' in group:
                # The spec's member list is the conductor's snapshot; boots
                # POSTed since then may be scheduled (and claimed) already.
                members += [m for m in current(context, group.uuid)
                            if m not in members]
            if stored is not None:
                members += [m for m in stored.members if m not in members]
            try:
                placements = self.locator.locate(context, members)
            except members_mod.MemberLookupError as exc:
                # soft policies only weigh: decide without the members
                # whose claims could not be read (logged by the locator)
                if exc.partial is None or _hard(document):
                    raise
                placements = exc.partial
            base_hosts = len(_list_field(group, 'hosts'))
        return _Entry(document, placements, topology, base_hosts)


STATES = RequestStates()
"""The process-wide cache our filters and weighers share."""


def states() -> RequestStates:
    """The shared :class:`RequestStates` (tests swap ``STATES``)."""
    return STATES
