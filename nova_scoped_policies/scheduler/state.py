"""Per-request engine evaluations, shared by our filters and weighers.

nova calls every filter and weigher once per instance of a request with the
same ``RequestSpec``. The first call builds what is costly (the policy
document, the members' hosts, the topology) and keeps it on a weak reference
to the spec; later calls only add the hosts nova chose for the earlier
instances of a multi-instance request (appended by nova to
``instance_group.hosts``) and recompile counts, which is O(members).

Three parts: :mod:`.request_builder` turns a RequestSpec into the engine's
request without I/O, :mod:`.sources` reads the store, the aggregates and
the members, and :class:`RequestStates` ties them together per request.
"""

import dataclasses
import threading
import typing
import weakref

from oslo_config import cfg
from oslo_log import log as logging

from nova import exception
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies import engine
from nova_scoped_policies.engine import audit as engine_audit
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies import identifiers
from nova_scoped_policies.nova_seam import objects as seam_objects
from nova_scoped_policies import policy
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.scheduler import members as members_mod
from nova_scoped_policies.scheduler import notify
from nova_scoped_policies.scheduler import request_builder as builder
from nova_scoped_policies.scheduler import sources as sources_mod
from nova_scoped_policies.stacks import live
from nova_scoped_policies.stacks import model as stack_model
from nova_scoped_policies.stacks.world import World

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

_FROM_CONF = sources_mod.FROM_CONF


def _document_of(spec: builder.SpecView, stored, to_real):
    """The document that applies (:func:`request_builder.document`); the
    hint counts only while ``[scoped_policies] allow_policy_hint`` is
    True."""
    use_hint = CONF.scoped_policies.allow_policy_hint
    if spec.hint and not use_hint:
        LOG.warning('Ignoring the %s scheduler hint: [%s] %s is False',
                    builder.HINT, sched_conf.GROUP_NAME,
                    sched_conf.ALLOW_HINT)
    options = CONF.filter_scheduler
    return builder.document(spec, stored, use_hint, to_real,
                            builder.nova_enforces(
                                tuple(options.enabled_filters),
                                tuple(options.weight_classes)))


@dataclasses.dataclass
class _Entry:
    document: typing.Optional[policy.PolicyDocument]
    placements: typing.Mapping[str, typing.Optional[str]] = \
        dataclasses.field(default_factory=dict)
    topology: typing.Any = None
    base_hosts: int = 0
    key: typing.Any = None
    evaluation: typing.Any = None
    stack: typing.Tuple[engine.Evaluation, ...] = ()
    compared: bool = False
    """nova-scheduler's view of the candidates' aggregates was compared
    with the copy the entry was built on
    (:meth:`RequestStates.as_nova_sees`)."""

    @property
    def empty(self) -> bool:
        """No policy applies: no group document, no stack."""
        return self.document is None and not self.stack


class RequestStates:
    """Builds and caches one :class:`engine.Evaluation` per request.

    :param locator: finds the members' hosts (default: nova's cells and
        Placement).
    :param aggregates: the cached aggregates (default: read from nova's
        API database).
    :param store: the policy store (a :class:`stores.CachedStore`), None,
        or by default the driver ``[scoped_policies] store_driver`` names.
    :param sources: all three at once (then the others are ignored).
    """

    def __init__(self, locator=None, aggregates=None, store=_FROM_CONF,
                 sources: typing.Optional[sources_mod.Sources] = None
                 ) -> None:
        self.sources = sources or sources_mod.Sources(locator, aggregates,
                                                      store)
        self.engine = engine.Engine()
        self._entries: 'weakref.WeakKeyDictionary[typing.Any, _Entry]' = \
            weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def evaluation(self, spec_obj) -> typing.Optional[typing.Union[
            engine.Evaluation, engine.JointEvaluation]]:
        """The evaluation for this request and instance, or None when no
        policy applies: the group's, joined with the stack's when the
        server belongs to a stack decision (the ``scoped_plan`` hints,
        kept by nova for the server's whole life).

        :param spec_obj: nova's RequestSpec.
        :raises NoValidHost: the policies are invalid for this request, or
            the members cannot be located; the message says why.
        """
        with self._lock:
            entry = self._entries.get(spec_obj)
        if entry is not None and entry.empty:
            return None
        try:
            key = builder.evaluation_key(spec_obj)
            if entry is not None and entry.evaluation is not None and \
                    entry.key == key:
                return entry.evaluation
            spec = builder.view(spec_obj)
            if entry is None:
                entry = self._new_entry(spec_obj, spec)
                with self._lock:
                    self._entries[spec_obj] = entry
            if entry.empty:
                return None
            # a new request, or its next instance (the check above)
            own = None
            if entry.document is not None:
                own = self.engine.prepare(builder.engine_request(
                    entry.document, entry.topology, entry.placements, spec,
                    entry.base_hosts))
            entry.evaluation = engine.join((own,) + entry.stack)
            entry.key = key
            for warning in entry.evaluation.warnings:
                LOG.warning('Scoped policies: %s', warning)
            return entry.evaluation
        except policy.PolicyError as exc:
            raise exception.NoValidHost(reason=f'scoped policies: {exc}')
        except members_mod.MemberLookupError as exc:
            raise exception.NoValidHost(
                reason=f'scoped policies: cannot check the group: {exc}')
        except stack_model.StackError as exc:
            raise exception.NoValidHost(
                reason=f'scoped policies: the stack decision: {exc}')

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
        topology = evaluation.parts[0].context.topology
        hosts = {host for scope in topology.scope_names
                 for domain in topology.domains(scope)
                 for host in domain.hosts}
        for part in evaluation.parts:
            hosts.update(part.context.placed_hosts)
        # nova never considered these (a move's source, mostly)
        if 'ignore_hosts' in spec_obj and spec_obj.ignore_hosts:
            hosts.difference_update(spec_obj.ignore_hosts)
        return engine.summary(
            {host: evaluation.reasons(host) for host in sorted(hosts)})

    def as_nova_sees(self, spec_obj, view: typing.Callable[[], typing.Tuple[
            typing.AbstractSet[typing.Any], typing.AbstractSet[str]]]
                     ) -> bool:
        """Once per request, at its first host filter call (before any of
        its instances is placed): when nova-scheduler's own view of the
        candidates' aggregates shows the cached copy behind, the copy is
        reloaded and the request's evaluation, built on it, built again.

        :param view: returns nova's aggregate objects of the candidates
            (their ``HostState.aggregates``) and the candidates' names;
            called only when the copy may be behind.
        :returns: whether the evaluation must be asked for again.
        """
        with self._lock:
            entry = self._entries.get(spec_obj)
        if entry is None or entry.compared:
            return False
        entry.compared = True
        behind = getattr(self.sources.aggregates, 'behind', None)
        context = seam_objects.request_context(spec_obj)
        if behind is None or not behind(context, view):
            return False
        with self._lock:
            self._entries.pop(spec_obj, None)
        self.evaluation(spec_obj)  # built again, on the reloaded copy
        with self._lock:
            entry = self._entries.get(spec_obj)
        if entry is not None:
            entry.compared = True
        return True

    def aggregates_changed(self) -> None:
        """nova-api announced an aggregate change: reload at next use."""
        invalidate = getattr(self.sources.aggregates, 'invalidate', None)
        if invalidate is not None:
            invalidate()

    def serialised(self, spec_obj) -> typing.Tuple[str, ...]:
        """What the request's decision must be serialised by, sorted (the
        order every scheduler takes them in): its server group when it has
        hard scoped policies (whose checks read other members); for a
        server of a stack, the stack's decision and every existing server
        group its relationships read (whose boots take that group's lock).

        Reads policies and the stack decision only (store and aggregates
        are cached), not members. An invalid document adds nothing: the
        evaluation rejects it later with its reason.

        :raises NoValidHost: the store fails closed.
        """
        spec = builder.view(spec_obj)
        found: typing.Set[str] = set()
        if spec.group_uuid is not None:
            context = seam_objects.request_context(spec_obj)
            try:
                document = self._document(context, spec)[0]
            except policy.PolicyError:
                document = None
            if builder.hard_scoped(document):
                found.add(spec.group_uuid)
        if spec.plan and spec.plan_member:
            found.add(spec.plan)
            # read here for its document (which never changes) before any
            # lock is held; the evaluation reads it again under the locks,
            # for its servers' states
            plan = self.sources.stack_plan(spec.plan)
            if plan is not None and plan.project_id == spec.project_id:
                try:
                    stack = stack_model.parse(plan.document)
                except stack_model.StackError:
                    stack = None
                if stack is not None:
                    found.update(stack.existing('server_group'))
        return tuple(sorted(found))

    def _document(self, context, spec: builder.SpecView):
        """(the document that applies, the stored group, the topology if
        it was read). Identifiers are real from here on: the hint's are
        translated once (``identifiers.to_real``), the stored ones are
        real and only learn the tenant's wording for errors and reasons.
        """
        stored = self.sources.stored_group(spec.group_uuid)
        read: typing.List[typing.Any] = []

        def topology():
            if not read:
                read.append(self.sources.aggregates.get(context))
            return read[0]

        def to_real(document: policy.PolicyDocument):
            if all(p.identifier is None for p in document.policies):
                return document
            return identifiers.to_real(document, topology(),
                                       spec.project_id)

        stored_doc = None
        # an instance taken out of the group's scoped policies moves free
        # of them (Nova still counts it in its own group)
        if stored is not None and spec.instance_uuid not in stored.excluded:
            stored_doc = identifiers.worded(stored.document, topology(),
                                            spec.project_id)
        document = _document_of(spec, stored_doc, to_real)
        return document, stored, read[0] if read else None

    def _stack(self, context, spec: builder.SpecView,
               topology) -> typing.Tuple[engine.Evaluation, ...]:
        """The stack's policies for the request's server: one evaluation
        per document of the stack that relates it to other servers
        (:func:`nova_scoped_policies.stacks.live.requests`), with the
        stack's other servers where they are now (those still held at
        their decided hosts) and the existing servers and groups of its
        relationships. Empty when the request is no stack server's, or
        the stack was deleted.
        """
        plan = self.sources.stack_plan(spec.plan)
        me = spec.plan_member
        if plan is None or plan.project_id != spec.project_id or \
                me not in plan.servers:
            return ()
        stack = stack_model.with_real_ids(
            stack_model.parse(plan.document), topology, plan.project_id)
        topology = self.sources.with_traits(
            context, topology, registry.placement_traits(
                [g.document for g in stack.root.walk()]
                + [r.document for r in stack.relationships]))
        placed: typing.Dict[str, typing.Optional[str]] = {
            name: server.host for name, server in plan.servers.items()
            if server.state == stack_db.HELD and name != me}
        instances = {name: server.instance_uuid
                     for name, server in plan.servers.items()
                     if server.state == stack_db.BOOTED and name != me
                     and server.instance_uuid}
        if spec.instance_uuid:
            instances[me] = spec.instance_uuid
        # soft policies only weigh: decide without what could not be read
        # (logged by the locator); hard ones fail closed
        hard = any(builder.hard(g.document) for g in stack.root.walk()) or \
            any(builder.hard(r.document) for r in stack.relationships)
        others = {n: u for n, u in instances.items() if n != me}
        try:
            hosts = self.sources.locate(context, set(instances.values()))
        except members_mod.MemberLookupError as exc:
            if exc.partial is None or hard:
                raise
            hosts = exc.partial
        placed.update({name: hosts.get(uuid)
                       for name, uuid in instances.items()})
        try:
            # a server moving right now (another request of this stack,
            # under the same lock, chose its destination; its host changes
            # only when the move ends) counts on its destination too
            claims = self.sources.claims(context, set(others.values()))
            servers, groups = self.sources.relationship_ends(
                context, set(stack.existing('server')),
                set(stack.existing('server_group')))
        except members_mod.MemberLookupError:
            if hard:
                raise
            # the existing ends are known, where they run is not
            claims = {}
            servers = dict.fromkeys(stack.existing('server'))
            groups = {g: () for g in stack.existing('server_group')}
        moving = {name: claims.get(uuid, set()) - {placed.get(name)}
                  for name, uuid in others.items()}
        world = World((), topology, servers, groups)
        if placed.get(me):
            # a move: the stack as it is now may break its policies
            notify.violation(context, 'stack', plan.id, plan.project_id,
                             live.audit(stack, world, placed).violations)
        return tuple(self.engine.prepare(request) for request in
                     live.requests(stack, world, placed, me, moving))

    def _new_entry(self, spec_obj, spec: builder.SpecView) -> _Entry:
        context = seam_objects.request_context(spec_obj)
        document, stored, topology = self._document(context, spec)
        stack: typing.Tuple[engine.Evaluation, ...] = ()
        if spec.plan and spec.plan_member:
            if topology is None:
                topology = self.sources.aggregates.get(context)
            stack = self._stack(context, spec, topology)
        if document is None:
            return _Entry(None, stack=stack)
        if topology is None:
            topology = self.sources.aggregates.get(context)
        topology = self.sources.with_traits(
            context, topology, registry.placement_traits([document]))
        placements: typing.Mapping[str, typing.Optional[str]] = {}
        if spec.in_group:
            current = ()
            if builder.hard_scoped(document) and spec.group_uuid:
                # The spec's member list is the conductor's snapshot; boots
                # POSTed since then may be scheduled (and claimed) already.
                current = self.sources.current_members(context,
                                                       spec.group_uuid)
            members = builder.members_to_locate(spec, current, stored)
            try:
                placements = self.sources.locate(context, members)
            except members_mod.MemberLookupError as exc:
                # soft policies only weigh: decide without the members
                # whose claims could not be read (logged by the locator)
                if exc.partial is None or builder.hard(document):
                    raise
                placements = exc.partial
        if spec.group_uuid and placements.get(spec.instance_uuid):
            # a move: the group as it is now may break its policies
            notify.violation(context, 'server_group', spec.group_uuid,
                             spec.project_id, engine_audit.audit(
                                 document, topology, placements).violations)
        return _Entry(document, placements, topology, len(spec.hosts),
                      stack=stack)


STATES = RequestStates()
"""The process-wide cache our filters and weighers share."""


def states() -> RequestStates:
    """The shared :class:`RequestStates` (tests swap ``STATES``)."""
    return STATES
