"""The policy API as the dashboard's views see it: typed records, read
through :class:`nova_scoped_policies.client.Client` with a keystoneauth1
session made from the Horizon request's token and the policy API's
endpoint in the user's catalog (service type ``scoped-policies``).

Tenants are answered in their own identifiers (the API's tenant
surrogates); nothing here translates ids.
"""

import collections
import dataclasses
import typing

from django.conf import settings
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack_dashboard.api import base

from nova_scoped_policies import client as api_client
from nova_scoped_policies.conf import store as store_conf

APIError = api_client.APIError
SERVICE_TYPE = store_conf.SERVICE_TYPE
NOWHERE = '(no domain)'
"""A member without allocations, or on a host in no domain of the scope,
in :meth:`Audit.per_domain`."""
RULE_PREFIX = 'max_server_per_'
"""A rule limiting the servers per domain of the scope that follows."""
VERSION = '1.4'
"""The microversion the panels speak (the answers' shapes they read;
1.4: ``POST /repairs/apply`` starts a repair task)."""
TASK_RUNNING = 'running'
TASK_APPLIED = 'applied'
TASK_STOPPED = 'stopped'
TASK_CANCELLED = 'cancelled'
TASK_INTERRUPTED = 'interrupted'
TASK_STATUSES = (TASK_RUNNING, TASK_APPLIED, TASK_STOPPED, TASK_CANCELLED,
                 TASK_INTERRUPTED)
"""A repair task's statuses, as the policy API says them: running, then
applied (every move done), stopped (a move failed), cancelled, or
interrupted (the API process carrying it out stopped)."""


def client(request) -> api_client.Client:
    """The policy API client acting with the request's token."""
    endpoint = base.url_for(request, SERVICE_TYPE)
    verify = (False if getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False)
              else getattr(settings, 'OPENSTACK_SSL_CACERT', None) or True)
    session = ks_session.Session(
        auth=token_endpoint.Token(endpoint, request.user.token.id),
        verify=verify, timeout=getattr(settings, 'SCOPED_POLICIES_TIMEOUT',
                                       120))
    return api_client.Client(session, version=VERSION)


def _call(request, method: str, url: str, body=None):
    return client(request).request(method, url, body)


# --- records ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Group:
    """A server group's scoped policies.

    :param policies: the policy names (``anti-affinity:rack``).
    :param rules: every rule of the group, name -> value.
    """

    id: str
    name: str
    project_id: str
    policies: typing.Tuple[str, ...]
    rules: typing.Mapping[str, typing.Any]
    members: typing.Tuple[str, ...]
    excluded_members: typing.Tuple[str, ...]

    @classmethod
    def of(cls, body: dict) -> 'Group':
        objects = body.get('policy') or []
        if isinstance(objects, dict):
            objects = [objects]
        policies = [p['name'] for p in objects] or body.get('policies', [])
        rules = dict(body.get('rules') or {})
        for found in objects:
            rules.update(found.get('rules') or {})
        return cls(body['id'], body.get('name') or '',
                   body.get('project_id') or '', tuple(policies), rules,
                   tuple(body.get('members') or ()),
                   tuple(body.get('excluded_members') or ()))

    @property
    def scopes(self) -> typing.Tuple[str, ...]:
        """The scopes the policies and rules name, in order
        (``affinity:zone:<id>`` is scope ``zone``, ``max_server_per_rack``
        scope ``rack``); a bare policy's scope is ``host``."""
        found = []
        for name in self.policies:
            parts = name.split(':')
            scope = parts[1] if len(parts) > 1 else 'host'
            if scope not in found:
                found.append(scope)
        for rule in self.rules:
            scope = rule[len(RULE_PREFIX):]
            if rule.startswith(RULE_PREFIX) and scope not in found:
                found.append(scope)
        return tuple(found)


@dataclasses.dataclass(frozen=True)
class Member:
    instance_id: str
    placements: typing.Mapping[str, typing.Optional[str]]


@dataclasses.dataclass(frozen=True)
class Audit:
    """Where a group's members run, per scope, and its violations."""

    group_id: str
    members: typing.Tuple[Member, ...]
    violations: typing.Tuple[str, ...]

    @classmethod
    def of(cls, body: dict) -> 'Audit':
        return cls(body['server_group_id'], tuple(
            Member(m['instance_id'], dict(m.get('placements') or {}))
            for m in body.get('members', ())),
            tuple(body.get('violations', ())))

    @property
    def status(self) -> str:
        return 'violated' if self.violations else 'ok'

    @property
    def scopes(self) -> typing.Tuple[str, ...]:
        found = []
        for member in self.members:
            found += [s for s in member.placements if s not in found]
        return tuple(found)

    def per_domain(self, scope: str) -> typing.Dict[str, int]:
        """Members per domain of ``scope`` (:data:`NOWHERE` for those in
        none)."""
        return dict(collections.Counter(
            m.placements.get(scope) or NOWHERE for m in self.members))


@dataclasses.dataclass(frozen=True)
class Scope:
    uuid: str
    name: str
    allow_identifiers: bool
    obfuscate_identifiers: bool
    aggregates: typing.Tuple[str, ...]
    parent: typing.Optional[str] = None

    @property
    def id(self) -> str:
        return self.name

    @classmethod
    def of(cls, body: dict) -> 'Scope':
        return cls(body['uuid'], body['name'],
                   bool(body.get('allow_identifiers')),
                   bool(body.get('obfuscate_identifiers')),
                   tuple(body.get('aggregates') or ()), body.get('parent'))


@dataclasses.dataclass(frozen=True)
class StackServer:
    name: str
    host: typing.Optional[str]
    state: str
    instance_uuid: typing.Optional[str]

    @property
    def id(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Stack:
    """A joint decision held under a lease."""

    id: str
    name: str
    project_id: str
    status: str
    lease_seconds: typing.Optional[int]
    expires_at: typing.Optional[str]
    servers: typing.Tuple[StackServer, ...]

    @classmethod
    def of(cls, body: dict) -> 'Stack':
        return cls(body['id'], body.get('name') or '',
                   body.get('project_id') or '', body.get('status') or '',
                   body.get('lease_seconds'), body.get('expires_at'),
                   tuple(StackServer(n, s.get('host'), s.get('state', ''),
                                     s.get('instance_uuid'))
                         for n, s in sorted(body.get('servers', {}).items())))


@dataclasses.dataclass(frozen=True)
class StackPolicy:
    field: str
    kind: str
    policies: typing.Tuple[str, ...]
    status: str
    violations: typing.Tuple[str, ...]

    @property
    def id(self) -> str:
        return self.field


@dataclasses.dataclass(frozen=True)
class StackAudit:
    stack_id: str
    status: str
    servers: typing.Mapping[str, typing.Optional[str]]
    policies: typing.Tuple[StackPolicy, ...]

    @classmethod
    def of(cls, body: dict) -> 'StackAudit':
        return cls(body['stack_id'], body.get('status') or '',
                   dict(body.get('servers') or {}), tuple(
                       StackPolicy(p['field'], p.get('kind', ''),
                                   tuple(p.get('policies', ())),
                                   p.get('status', ''),
                                   tuple(p.get('violations', ())))
                       for p in body.get('policies', ())))

    @property
    def violations(self) -> typing.Tuple[str, ...]:
        return tuple(v for p in self.policies for v in p.violations)


@dataclasses.dataclass(frozen=True)
class Move:
    """One live migration of a repair plan (hosts as the caller sees
    them)."""

    server: str
    source: str
    destination: str
    name: str = ''
    temporary: bool = False

    @property
    def id(self) -> str:
        return self.server

    @classmethod
    def of(cls, body: dict) -> 'Move':
        return cls(body['server'], body['from'], body['to'],
                   body.get('name', ''), bool(body.get('temporary')))

    def body(self) -> dict:
        found = {'server': self.server, 'from': self.source,
                 'to': self.destination}
        if self.temporary:
            found['temporary'] = True
        return found


@dataclasses.dataclass(frozen=True)
class Target:
    """What a repair is of: a server group, a stack, or everything
    (``kind`` ``all``, admins)."""

    kind: str
    id: typing.Optional[str] = None

    def body(self) -> dict:
        return {self.kind: self.id} if self.id else {}

    @classmethod
    def of(cls, kind: str, id: typing.Optional[str]) -> 'Target':
        if kind not in ('server_group', 'stack', 'all'):
            raise ValueError(f'kind: {kind!r}: not server_group, stack or '
                             'all')
        return cls(kind, id if kind != 'all' else None)


@dataclasses.dataclass(frozen=True)
class Plan:
    target: Target
    status: str
    moves: typing.Tuple[Move, ...]
    reason: str
    violations: typing.Tuple[str, ...]
    fingerprint: str

    @classmethod
    def of(cls, target: Target, body: dict) -> 'Plan':
        return cls(target, body['status'],
                   tuple(Move.of(m) for m in body.get('moves', ())),
                   body.get('reason') or '',
                   tuple(body.get('violations', ())),
                   body.get('fingerprint', ''))


@dataclasses.dataclass(frozen=True)
class TaskFailure:
    """The move that stopped a repair task, and why.

    :param move: that move, or None when the service failed between
        moves.
    :param reason: why (Nova's, the scheduler's or the service's words).
    :param host: where the server is now, when known.
    """

    move: typing.Optional[Move]
    reason: str
    host: typing.Optional[str]

    @classmethod
    def of(cls, body: dict) -> 'TaskFailure':
        move = body.get('move')
        return cls(Move.of(move) if move else None,
                   body.get('reason') or '', body.get('host'))


@dataclasses.dataclass(frozen=True)
class Task:
    """A repair plan carried out in the policy API's background
    (``/repairs/tasks``, admins).

    :param status: one of :data:`TASK_STATUSES`.
    :param moves: the plan's moves.
    :param done: the moves done, in order.
    :param current: the moves running now.
    :param failed: the move that stopped it (status ``stopped``), or None.
    :param cancel_requested: a cancel was asked: it stops after the
        running moves.
    """

    id: str
    target: str
    status: str
    moves: typing.Tuple[Move, ...]
    done: typing.Tuple[Move, ...]
    current: typing.Tuple[Move, ...]
    failed: typing.Optional[TaskFailure]
    cancel_requested: bool
    created_at: str
    finished_at: typing.Optional[str]

    @classmethod
    def of(cls, body: dict) -> 'Task':
        def moves(key):
            return tuple(Move.of(m) for m in body.get(key) or ())
        failed = body.get('failed')
        return cls(body['id'], body.get('target') or '', body['status'],
                   moves('moves'), moves('done'), moves('current'),
                   TaskFailure.of(failed) if failed else None,
                   bool(body.get('cancel_requested')),
                   body.get('created_at') or '', body.get('finished_at'))

    @property
    def running(self) -> bool:
        return self.status == TASK_RUNNING

    @property
    def applied(self) -> bool:
        """It ended with every move of the plan done."""
        return self.status == TASK_APPLIED and \
            len(self.done) == len(self.moves)


@dataclasses.dataclass(frozen=True)
class Violation:
    """One violation in the cloud (the admin's list)."""

    kind: str
    target_id: str
    name: str
    project_id: str
    text: str

    @property
    def id(self) -> str:
        return f'{self.kind}:{self.target_id}:{self.text}'


@dataclasses.dataclass(frozen=True)
class Heatmap:
    """Members per domain of one scope, per group (admins: real ids)."""

    scope: Scope
    groups: typing.Tuple[Group, ...]
    counts: typing.Mapping[typing.Tuple[str, str], int]

    @property
    def domains(self) -> typing.Tuple[str, ...]:
        seen = list(self.scope.aggregates)
        seen += sorted({d for d, _ in self.counts} - set(seen) - {NOWHERE})
        if any(d == NOWHERE for d, _ in self.counts):
            seen.append(NOWHERE)
        return tuple(seen)

    @property
    def most(self) -> int:
        return max(self.counts.values(), default=0)

    def rows(self):
        """[(domain, [(group, count, shade 0..1)...], total)] for the
        template."""
        most = self.most or 1
        found = []
        for domain in self.domains:
            cells = [(g, self.counts.get((domain, g.id), 0))
                     for g in self.groups]
            found.append((domain, [(g, c, round(c / most, 2))
                                   for g, c in cells],
                          sum(c for _, c in cells)))
        return found


# --- calls -------------------------------------------------------------------

def _query(all_projects: bool) -> str:
    return '?all_projects=true' if all_projects else ''


def group_list(request, all_projects: bool = False) -> typing.List[Group]:
    return [Group.of(g) for g in _call(
        request, 'GET', '/os-server-groups' + _query(all_projects)
    )['server_groups']]


def group_get(request, group_id: str) -> Group:
    return Group.of(_call(request, 'GET', f'/os-server-groups/{group_id}')
                    ['server_group'])


def group_audit(request, group_id: str) -> Audit:
    return Audit.of(_call(request, 'GET',
                          f'/os-server-groups/{group_id}/audit')
                    ['server_group_policy_audit'])


def _document(name: str, policies: typing.Sequence[str],
              rules: typing.Mapping[str, typing.Any]) -> dict:
    found = {'policies': list(policies), 'rules': dict(rules)}
    if name:
        found['name'] = name
    return found


def group_create(request, group_id: str, name: str,
                 policies: typing.Sequence[str],
                 rules: typing.Mapping[str, typing.Any]) -> Group:
    """Give the Nova server group ``group_id`` scoped policies."""
    body = dict(_document(name, policies, rules), id=group_id)
    return Group.of(_call(request, 'POST', '/os-server-groups',
                          {'server_group': body})['server_group'])


def group_update(request, group_id: str, name: str,
                 policies: typing.Sequence[str],
                 rules: typing.Mapping[str, typing.Any]) -> Group:
    """Replace the group's policies and rules (members are not moved)."""
    return Group.of(_call(request, 'POST', f'/os-server-groups/{group_id}',
                          {'server_group': _document(name, policies, rules)})
                    ['server_group'])


def group_delete(request, group_id: str) -> None:
    _call(request, 'DELETE', f'/os-server-groups/{group_id}')


def group_member(request, group_id: str, instance_id: str,
                 add: bool = True) -> None:
    """``add_instance`` (or ``remove_instance``) of an instance."""
    action = 'add_instance' if add else 'remove_instance'
    _call(request, 'POST', f'/os-server-groups/{group_id}/action',
          {action: {'instance_id': instance_id}})


def scope_list(request) -> typing.List[Scope]:
    return [Scope.of(s) for s in _call(request, 'GET', '/os-policy-scopes')
            ['policy_scopes']]


def scope_get(request, scope: str) -> Scope:
    return Scope.of(_call(request, 'GET', f'/os-policy-scopes/{scope}')
                    ['policy_scope'])


def stack_list(request, all_projects: bool = False) -> typing.List[Stack]:
    return [Stack.of(s) for s in _call(
        request, 'GET', '/stacks' + _query(all_projects))['stacks']]


def stack_get(request, stack_id: str) -> Stack:
    return Stack.of(_call(request, 'GET', f'/stacks/{stack_id}')['stack'])


def stack_audit(request, stack_id: str) -> StackAudit:
    return StackAudit.of(_call(request, 'GET', f'/stacks/{stack_id}/audit')
                         ['stack_audit'])


def stack_delete(request, stack_id: str) -> None:
    """Release what is still held and forget the decision."""
    _call(request, 'DELETE', f'/stacks/{stack_id}')


def repair_plan(request, target: Target) -> Plan:
    """The fewest moves that end every hard violation of ``target``."""
    return Plan.of(target, _call(request, 'POST', '/repairs',
                                 {'repair': target.body()})['repair'])


def repair_apply(request, target: Target, fingerprint: str,
                 moves: typing.Sequence[Move]) -> Task:
    """Start the repair task that carries out ``moves`` of a plan made
    on ``fingerprint`` (admins). The policy API refuses (409), before any
    move, a plan whose cloud changed since and one moving a server that
    another running task moves."""
    body = dict(target.body(), fingerprint=fingerprint,
                moves=[m.body() for m in moves])
    return Task.of(_call(request, 'POST', '/repairs/apply',
                         {'repair': body})['task'])


def repair_task(request, task_id: str) -> Task:
    """A repair task's progress (admins)."""
    return Task.of(_call(request, 'GET', f'/repairs/tasks/{task_id}')
                   ['task'])


def repair_task_cancel(request, task_id: str) -> Task:
    """Ask a running task to stop after the moves running now (admins);
    an ended task is refused (409 naming its status)."""
    return Task.of(_call(request, 'DELETE', f'/repairs/tasks/{task_id}')
                   ['task'])


def violations(request) -> typing.List[Violation]:
    """Every violation of every group and stack in the cloud (admins)."""
    found = []
    for group in group_list(request, all_projects=True):
        for text in group_audit(request, group.id).violations:
            found.append(Violation('server_group', group.id, group.name,
                                   group.project_id, text))
    for stack in stack_list(request, all_projects=True):
        if stack.status in ('reserved', 'live'):
            for text in stack_audit(request, stack.id).violations:
                found.append(Violation('stack', stack.id, stack.name,
                                       stack.project_id, text))
    return found


def heatmap(request, scope_name: str) -> Heatmap:
    """Members per domain of a scope, for each group whose policies use
    the scope (admins see every project's groups)."""
    scope = scope_get(request, scope_name)
    groups, counts = [], {}
    for group in group_list(request, all_projects=True):
        if scope.name not in group.scopes:
            continue
        groups.append(group)
        per_domain = group_audit(request, group.id).per_domain(scope.name)
        for domain, count in per_domain.items():
            counts[(domain, group.id)] = count
    return Heatmap(scope, tuple(groups), counts)
