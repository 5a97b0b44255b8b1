"""From nova's RequestSpec to the engine's request, without I/O.

:func:`view` copies what matters of a RequestSpec into a :class:`SpecView`
(never lazy-loading a field: that would cost a database query). The other
functions are pure functions of plain data: which document applies
(:func:`document`), whether its boots must be serialised
(:func:`hard_scoped`), which members to locate (:func:`members_to_locate`)
and the engine request (:func:`engine_request`). What they need from the
outside world (stored policies, aggregates, members' hosts) is read by
:class:`nova_scoped_policies.scheduler.sources.Sources`;
:class:`nova_scoped_policies.scheduler.state.RequestStates` ties the two
together and caches the result per request.
"""

import dataclasses
import functools
import typing

from oslo_serialization import jsonutils

from nova_scoped_policies.db import records
from nova_scoped_policies import engine
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies import policy

HINT = 'scoped_policies'
"""Scheduler hint carrying a policy document (a JSON string) for a boot."""
GROUP_HINT = 'group'
PLAN_HINT = 'scoped_plan'
"""Scheduler hint: the stack decision a server belongs to (kept by nova
in the RequestSpec for the server's whole life)."""
PLAN_MEMBER_HINT = 'scoped_plan_member'
"""Scheduler hint: the server's name in that decision."""


@dataclasses.dataclass(frozen=True)
class SpecView:
    """What the scoped policies read of one RequestSpec.

    :param in_group: the request names a server group.
    :param group_uuid: its uuid, when set.
    :param nova_policy: the group's nova policy (``anti-affinity``...).
    :param nova_rules: the group's nova rules (``max_server_per_host``).
    :param group_name: the group's name.
    :param members: the group's members as the conductor saw them.
    :param hosts: the hosts of the members, plus the hosts nova chose for
        the earlier instances of a multi-instance request.
    :param hint: the ``scoped_policies`` hint as given, or None.
    :param project_id: the requesting project.
    :param instance_uuid: the instance being scheduled.
    :param plan: the ``scoped_plan`` hint (a stack decision id), or None.
    :param plan_member: the ``scoped_plan_member`` hint, or None.
    """

    in_group: bool = False
    group_uuid: typing.Optional[str] = None
    nova_policy: typing.Optional[str] = None
    nova_rules: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    group_name: typing.Optional[str] = None
    members: typing.Tuple[str, ...] = ()
    hosts: typing.Tuple[str, ...] = ()
    hint: typing.Any = None
    project_id: typing.Optional[str] = None
    instance_uuid: typing.Optional[str] = None
    plan: typing.Optional[str] = None
    plan_member: typing.Optional[str] = None


def hint(spec_obj, name: str) -> typing.Optional[str]:
    """A scheduler hint's single value (nova keeps hints as lists), or
    None; never lazy-loads the hints."""
    hints = spec_obj.scheduler_hints if (
        'scheduler_hints' in spec_obj and spec_obj.scheduler_hints) else {}
    value = hints.get(name)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) and value else None


def _list_field(group, name: str) -> typing.Tuple[str, ...]:
    # never lazy-load: an unset field would cost a database query
    if group is None or name not in group:
        return ()
    return tuple(getattr(group, name) or ())


def _group_of(spec_obj):
    if 'instance_group' in spec_obj and \
            spec_obj.instance_group is not None:
        return spec_obj.instance_group
    return None


def evaluation_key(spec_obj) -> typing.Tuple[typing.Optional[str], int]:
    """What tells one instance of a request from the next: its uuid and
    how many hosts the group's instances were given so far (the
    ``instance_uuid`` and ``len(hosts)`` of :func:`view`, without copying
    the rest)."""
    group = _group_of(spec_obj)
    hosts = group.hosts if group is not None and 'hosts' in group else None
    return (spec_obj.instance_uuid if 'instance_uuid' in spec_obj else None,
            len(hosts) if hosts else 0)


def view(spec_obj) -> SpecView:
    """Copy the fields of a RequestSpec the scoped policies read."""
    group = _group_of(spec_obj)
    nova_policy = None
    rules: typing.Mapping[str, typing.Any] = {}
    if group is not None:
        if 'policy' in group and group.policy:
            nova_policy = group.policy
        elif 'policies' in group and group.policies:
            nova_policy = group.policies[0]
        # a property over ``_rules``; {} when unset, without a query
        rules = dict(group.rules or {})
    return SpecView(
        in_group=group is not None,
        group_uuid=group.uuid if group is not None and 'uuid' in group
        else None,
        nova_policy=nova_policy, nova_rules=rules,
        group_name=group.name if group is not None and 'name' in group
        else None,
        members=_list_field(group, 'members'),
        hosts=_list_field(group, 'hosts'),
        hint=spec_obj.get_scheduler_hint(HINT),
        project_id=spec_obj.project_id if 'project_id' in spec_obj
        else None,
        instance_uuid=spec_obj.instance_uuid
        if 'instance_uuid' in spec_obj else None,
        plan=hint(spec_obj, PLAN_HINT),
        plan_member=hint(spec_obj, PLAN_MEMBER_HINT))


def hard_scoped(document: typing.Optional[policy.PolicyDocument]) -> bool:
    """Whether ``document`` has a hard item on a scope wider than a host,
    or a host-scope one that reads the group's members and that
    nova-compute does not check again at the claim (nova's own policies
    are ``nova_policy``): its boots are serialised."""
    if document is None:
        return False
    return any(plugin.hard and (
        item.scope != policy.HOST_SCOPE
        or (not plugin.nova_policy
            and (item.policy is None or plugin.needs_members(item.policy))))
        for plugin, item in registry.items(document))


def hard(document: policy.PolicyDocument) -> bool:
    """Whether any policy or rule of ``document`` is hard, at any scope."""
    return registry.hard(document)


_PARSED = 1024
"""How many hints and nova group policies keep their parsed document:
every instance and every retry of a request, and every request of one
group, parse the same text (documents are immutable)."""


def parse_hint(raw: object) -> policy.PolicyDocument:
    """Decode and validate the ``scoped_policies`` hint value.

    :param raw: the hint as nova stores it (a JSON string).
    :raises PolicyError: naming the hint and the bad field.
    """
    if not isinstance(raw, str):
        raise policy.PolicyError(HINT, raw, 'must be a JSON string holding '
                                 'a policy document')
    return _parsed_hint(raw)


@functools.lru_cache(maxsize=_PARSED)
def _parsed_hint(raw: str) -> policy.PolicyDocument:
    try:
        data = jsonutils.loads(raw)
    except ValueError as exc:
        raise policy.PolicyError(HINT, raw, f'is not valid JSON: {exc}')
    return policy.parse_document(data, prefix=HINT)


Translate = typing.Callable[[policy.PolicyDocument], policy.PolicyDocument]
"""A tenant's document -> the same with real identifiers (and how the
tenant wrote them): ``identifiers.to_real`` bound to a topology and a
project."""


NOVA_ENFORCERS = {
    'affinity': ('ServerGroupAffinityFilter',),
    'anti-affinity': ('ServerGroupAntiAffinityFilter',),
    'soft-affinity': ('nova.scheduler.weights.all_weighers',
                      'nova.scheduler.weights.affinity.'
                      'ServerGroupSoftAffinityWeigher'),
    'soft-anti-affinity': ('nova.scheduler.weights.all_weighers',
                           'nova.scheduler.weights.affinity.'
                           'ServerGroupSoftAntiAffinityWeigher'),
}
"""Each plain nova group policy -> the entries of nova-scheduler's
``enabled_filters`` (filters) or ``weight_classes`` (weighers) any of which
makes Nova enforce it."""


@functools.lru_cache(maxsize=8)
def nova_enforces(enabled_filters: typing.Tuple[str, ...],
                  weight_classes: typing.Tuple[str, ...]
                  ) -> typing.FrozenSet[str]:
    """The plain nova policies Nova's own filters and weighers enforce
    with this configuration (``[filter_scheduler]`` options, as tuples)."""
    enabled = set(enabled_filters) | set(weight_classes)
    return frozenset(name for name, enforcers in NOVA_ENFORCERS.items()
                     if enabled.intersection(enforcers))


def document(spec: SpecView, stored: typing.Optional[
        policy.PolicyDocument] = None, use_hint: bool = True,
             to_real: typing.Optional[Translate] = None,
             left_to_nova: typing.AbstractSet[str] = frozenset()
             ) -> typing.Optional[policy.PolicyDocument]:
    """The policies that apply to a request: Nova's group, the group's
    stored policies, and the hint; None when none does.

    A plain nova group (no stored policies, no hint) whose policy is in
    ``left_to_nova`` (:func:`nova_enforces`) is Nova's alone: one
    enforcement per policy, Nova's, as if we were not installed.

    Identifiers are translated once, before merging: the hint by
    ``to_real``; stored policies are real already. Merge errors name
    policies as the tenant wrote them (``PolicyDocument.written``).

    :param spec: the request.
    :param stored: the group's policies from the policy store, with real
        identifiers (and, in ``written``, the requesting project's form).
    :param use_hint: False ignores the hint (the deployer's choice).
    :param to_real: translates the hint's identifiers (None: leave them).
    :param left_to_nova: the plain nova policies Nova enforces.
    :raises PolicyError: the hint is malformed, names a domain the tenant
        cannot target, or contradicts the group.
    """
    found = None
    with_hint = bool(spec.hint and use_hint)
    if (spec.in_group and stored is None and not with_hint
            and spec.nova_policy in left_to_nova):
        return None
    if spec.in_group:
        found = _nova_document(spec.nova_policy, spec.nova_rules,
                               spec.group_name)
    if stored is not None:
        found = (stored if found is None
                 else policy.merge(found, stored, prefix='policy store'))
    if with_hint:
        hinted = parse_hint(spec.hint)
        if not spec.in_group and (
                hinted.rules.min_domains
                or any(registry.plugin_of(p.type).needs_members(p)
                       for p in hinted.policies)):
            raise policy.PolicyError(
                HINT, spec.hint, 'policies without a domain identifier '
                f'need a server group: pass the {GROUP_HINT!r} scheduler '
                'hint too')
        if to_real is not None:
            hinted = to_real(hinted)
        found = (hinted if found is None
                 else policy.merge(found, hinted, prefix=HINT))
    if found is None or found.empty:
        return None
    return found


def _nova_document(nova_policy: typing.Optional[str],
                   rules: typing.Mapping[str, typing.Any],
                   name: typing.Optional[str]) -> policy.PolicyDocument:
    """:func:`policy.from_nova_group`, parsed once per policy, rules and
    name."""
    try:
        key = tuple(sorted(rules.items()))
        hash(key)
    except TypeError:  # a rule nova would refuse: parse it to say so
        return policy.from_nova_group(nova_policy, rules, name)
    return _nova_group_document(nova_policy, key, name)


@functools.lru_cache(maxsize=_PARSED)
def _nova_group_document(nova_policy, rules, name) -> policy.PolicyDocument:
    return policy.from_nova_group(nova_policy, dict(rules), name)


def members_to_locate(spec: SpecView, current: typing.Iterable[str] = (),
                      stored: typing.Optional[records.GroupRecord] = None
                      ) -> typing.List[str]:
    """The request's members, in order and once each.

    :param current: the group's members in the API database now (the
        spec carries the conductor's older snapshot), read for hard scoped
        groups only.
    :param stored: the group's record in the policy store (its members
        added through the policy service count too; those it excludes,
        booted by Nova but taken out of the scoped policies, do not).
    """
    members = list(spec.members)
    for extra in (current, stored.members if stored is not None else ()):
        members += [m for m in extra if m not in members]
    if stored is not None and stored.excluded:
        members = [m for m in members if m not in stored.excluded]
    return members


def engine_request(document: policy.PolicyDocument, topology,
                   placements: typing.Mapping[str, typing.Optional[str]],
                   spec: SpecView, base_hosts: int) -> engine.Request:
    """The engine's request for one instance.

    :param base_hosts: how many of ``spec.hosts`` were there when the
        members were located; nova appends the hosts it chose for the
        earlier instances of this request after them.
    """
    return engine.Request(document, topology, placements,
                          in_flight=list(spec.hosts[base_hosts:]),
                          instance_uuid=spec.instance_uuid)
