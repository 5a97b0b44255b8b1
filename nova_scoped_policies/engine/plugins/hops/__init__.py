"""hops:N: every pair of members at most N network hops apart.

heat-policy-extension.txt's network hop-count limit, on the network tree
(``topology/network.py``): ``hops(a, b)`` is the number of edges on the
path between the hosts of a and b (0 on one host, 2 under one top-of-rack
switch, 4 under one pod...). N is an integer from 0 to 64, written as
``license:PRODUCT`` writes its product (``hops:2``).

- Host check: h passes iff hops(h, m) <= N for every placed member m; the
  reason names the first member too far, or why there is no path.
- Placement: ``member_of`` the smallest network domain holding every host
  that passes (a superset: the filter decides).
- Audit: every pair of members too far apart (grouped by the switch they
  hang off), or without a path.
- Jointly: on each switch v, the members below two different branches of
  v are hops(a, v) + hops(b, v) apart: at most N (``encode``).

On a leaf group it applies to every pair of members; on a group of groups
to pairs across member groups; on a relationship to every (from, to) pair
(stack-document.md).
"""

import collections
import itertools
import typing

from nova_scoped_policies.engine import reasons
from nova_scoped_policies.engine.context import Check
from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.engine.plugins import base
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.errors import shown
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies.policy.model import Policy
from nova_scoped_policies.policy.model import PolicyType
from nova_scoped_policies.policy.model import Rules
from nova_scoped_policies.topology.network import MAX_HOPS

PolicyType.HOPS = PolicyType.define('hops', hard=True, attracts=None)

TOO_FAR = 'too-far'
"""hops:N: the host is more than N hops from a placed member."""
NO_PATH = 'no-path'
"""hops:N: the host has no network path to a placed member."""
ANY_PATH = 2 ** 31
"""A hop count no path reaches: "any path will do"."""


def limit(item: base.Item) -> int:
    """N of ``hops:N`` (``soft-hops:N``)."""
    return int(item.policy.argument)


class HopsPlugin(base.PolicyTypePlugin):
    """What hops and soft-hops share: the word ``TYPE:N``, and what they
    read of hosts (the network tree)."""

    def parse(self, parts: typing.Sequence[str], text: str,
              field: str) -> Policy:
        value = ':'.join(parts[1:]) if len(parts) > 1 else ''
        if not (value.isascii() and value.isdigit() and len(value) <= 3
                and int(value) <= MAX_HOPS):
            raise PolicyError(field, text, f'expected {self.name}:N, N '
                              f'being an integer from 0 to {MAX_HOPS} (the '
                              'most network hops between two members); got '
                              f'{shown(value or None)}')
        return Policy(self.policy_type, HOST_SCOPE, None, str(int(value)))

    def distinguishes(self, item: base.Item,
                      ctx: PlacementContext) -> base.Distinguished:
        """Every network domain, by identity: where a host is on the
        tree, not a count, says how far it is."""
        return {level: None for level in ctx.topology.network.levels}

    def host_key(self, item: base.Item, topology):
        """The switch a host hangs off (its chain of domains)."""
        return topology.network.leaf


class Reach:
    """How far hosts are from a request's placed members on the network
    tree, worked out once per switch (a host's distance to any member on
    another host depends only on the switch it hangs off when N >= 2).

    :param ctx: the request.
    :param n: the most hops allowed; None: any path will do.
    """

    def __init__(self, ctx: PlacementContext,
                 n: typing.Optional[int]) -> None:
        self.network = ctx.topology.network
        self.n = ANY_PATH if n is None else n
        request = ctx.request
        me = request.instance_uuid
        self.members: typing.List[typing.Tuple[str, str]] = [
            (str(member), host) for member, host in request.placements.items()
            if host and member != me]
        self.members += [('another server of this request', host)
                         for host in request.in_flight]
        self.total = len(self.members)
        self.on_host = collections.Counter(h for _, h in self.members)
        leaf = self.network.leaf
        self.by_leaf = collections.Counter(
            leaf(h) for _, h in self.members)
        self.lost = self.by_leaf.pop(None, 0)
        """Members on hosts in no network domain: no other host reaches
        them."""
        self._far: typing.Dict[typing.Any, int] = {}
        self._first: typing.Dict[typing.Any, typing.Tuple[
            str, str, typing.Optional[int]]] = {}

    def key(self, host: str) -> typing.Any:
        """What a host's distance to the members depends on: its leaf
        (N >= 2), else the host itself."""
        if self.n >= 2:
            found = self.network.leaf(host)
            if found is not None:
                return found
        return ('@', host)

    def keys(self, names: typing.Sequence[str]) -> typing.List[typing.Any]:
        if self.n < 2:
            return [('@', h) for h in names]
        leaves = list(map(self.network.leaf, names))
        return [('@', h) if leaf is None else leaf
                for h, leaf in zip(names, leaves)]

    def far_key(self, key: typing.Any) -> int:
        """Members beyond N hops of a host of ``key``."""
        found = self._far.get(key)
        if found is None:
            if isinstance(key, tuple):
                found = self.total - self.on_host.get(key[1], 0)
            else:
                hops = self.network.leaf_hops
                found = self.lost + sum(
                    count for other, count in self.by_leaf.items()
                    if not within(hops(key, other), self.n))
            self._far[key] = found
        return found

    def far(self, host: str) -> int:
        """Members beyond N hops of ``host`` (or without a path)."""
        return self.far_key(self.key(host))

    def first_far(self, host: str
                  ) -> typing.Optional[typing.Tuple[str, str,
                                                    typing.Optional[int]]]:
        """(member, its host, hops or None) of the first member beyond
        N hops of ``host``; None when none is."""
        if not self.far(host):
            return None
        key = self.key(host)
        if isinstance(key, tuple) or key not in self._first:
            hops = self.network.hops
            found = next((member, there, hops(host, there))
                         for member, there in self.members
                         if not within(hops(host, there), self.n))
            if isinstance(key, tuple):
                return found
            self._first[key] = found
        return self._first[key]

    def passing_leaves(self) -> typing.List[str]:
        """The switches whose hosts all pass (N >= 2)."""
        return sorted(leaf for leaf in self.network.leaves
                      if not self.far_key(leaf))


def within(hops: typing.Optional[int], n: int) -> bool:
    """Whether ``hops`` (None: no path) is at most ``n``."""
    return hops is not None and hops <= n


class Hops(HopsPlugin):
    """Pass iff every placed member is at most N hops away."""

    name = PolicyType.HOPS.value
    policy_type = PolicyType.HOPS
    filter = 'affinity'
    host_constraint = True
    codes = {
        TOO_FAR: '{all}{n} hosts left are more than {limit} network hops '
                 'from a placed member',
        NO_PATH: '{all}{n} hosts left have no network path to a placed '
                 'member',
    }

    def conflict(self, policy: Policy, other: Policy):
        if other.type is PolicyType.HOPS:
            return 'set two hop limits on one group'
        if (other.type is PolicyType.ANTI_AFFINITY
                and other.scope == HOST_SCOPE and other.identifier is None
                and int(policy.argument) < 2):
            return ('keep the members on one host (two hosts are at least '
                    '2 hops apart) and on different hosts')
        return None

    def check(self, item: base.Item,
              ctx: PlacementContext) -> typing.Optional[HostCheck]:
        return check(item, ctx, limit(item))

    def constraint(self, item: base.Item, ctx: PlacementContext
                   ) -> typing.Optional[base.Constraint]:
        return constraint(item, ctx, limit(item))

    def audit(self, item: base.Item, view: base.AuditView
              ) -> typing.List[str]:
        return [f'{item.label}: {text}'
                for text in too_far(view, limit(item))]

    def encode(self, item: base.Item, clause, rules: Rules,
               model: base.JointModel) -> None:
        encode(clause, model, limit(item))


def check(item: base.Item, ctx: PlacementContext,
          n: typing.Optional[int]) -> typing.Optional[HostCheck]:
    """The host check: every placed member at most ``n`` hops away
    (None: with a path); the reason names the first member too far."""
    reach = Reach(ctx, n)
    if not reach.total:
        return None
    label = item.label

    def reason(host: str) -> typing.Optional[reasons.Reason]:
        found = reach.first_far(host)
        if found is None:
            return None
        member, there, hops = found
        if hops is None:
            why = reach.network.no_path(host, there)
            return reasons.Reason(
                NO_PATH, label, HOST_SCOPE,
                f'{label}: host {host} has no network path to member '
                f'{member} (on {there}): {why}', limit=n)
        return reasons.Reason(
            TOO_FAR, label, HOST_SCOPE,
            f'{label}: host {host} is {hops} hops from member {member} '
            f'(on {there}), more than {n}', count=hops, limit=n)

    def rejected(names: typing.Sequence[str]) -> typing.AbstractSet[str]:
        keys = reach.keys(names)
        bad = {key for key in set(keys) if reach.far_key(key)}
        if not bad:
            return frozenset()
        return set(itertools.compress(names, map(bad.__contains__,
                                                 keys)))
    return Check(reason, rejected)


def constraint(item: base.Item, ctx: PlacementContext,
               n: typing.Optional[int]) -> typing.Optional[base.Constraint]:
    """``member_of`` the smallest network domain holding every host that
    passes :func:`check` (a superset: the filter decides)."""
    reach = Reach(ctx, n)
    if not reach.total:
        return None
    network = reach.network
    if reach.n < 2:
        if len(reach.on_host) != 1:
            return None
        (host,) = reach.on_host
        leaves = [network.leaf(host)] if network.leaf(host) else []
    else:
        leaves = reach.passing_leaves()
    domain = network.smallest_domain(leaves)
    if domain is None:
        return None
    return base.Constraint(required=frozenset({domain}),
                           why=f'{item.label}: in {[domain]}')


def too_far(view: base.AuditView, n: int) -> typing.List[str]:
    """Every pair of placed members more than ``n`` hops apart, grouped
    by the switch (or, for ``n`` < 2 and hosts off the tree, the host)
    they are on: one line per pair of groups. A view that tells members
    apart by ``part`` (member -> its member group) judges pairs across
    parts only."""
    network = view.topology.network
    part = getattr(view, 'part', None)
    groups: typing.Dict[typing.Tuple[typing.Any, typing.Any],
                        typing.List[str]] = {}
    for member, host in sorted(view.placed.items()):
        leaf = network.leaf(host) if n >= 2 else None
        key = leaf if leaf is not None else ('@', host)
        groups.setdefault((part(member) if part else None, key),
                          []).append(member)
    found = []
    ordered = sorted(groups.items(), key=lambda kv: view.listed(kv[1]))
    for (one, other) in itertools.combinations(ordered, 2):
        (p1, k1), g1 = one
        (p2, k2), g2 = other
        if part and p1 == p2:
            continue
        a, b = view.placed[g1[0]], view.placed[g2[0]]
        hops = network.hops(a, b)
        if within(hops, n):
            continue
        if hops is None:
            found.append(f'{view.listed(g1)} and {view.listed(g2)} have '
                         f'no network path: {network.no_path(a, b)}')
        else:
            found.append(f'{view.listed(g1)} and {view.listed(g2)} are '
                         f'{hops} hops apart, more than {n}')
    return found


# -- the joint model -----------------------------------------------------

_ROOT = ('root',)
"""Above every top domain and every host off the tree: two branches of it
have no path between them."""


def encode(clause, model: base.JointModel, n: int,
           cost: typing.Optional[typing.List[typing.Any]] = None) -> None:
    """``hops:n`` over a stack's clause: hard constraints, or with
    ``cost`` (a list) the terms of a soft one appended to it.

    On each switch v (and above every top switch and every host off the
    tree, where no pair has a path), two servers below different branches
    of v are their distances to v apart. With ``G(c, k)`` "a server below
    branch c at least k hops from v": for each k2 > n / 2 and
    k1 = max(1, n - k2 + 1), if some branch has ``G(c, k2)`` at most one
    has ``G(c, k1)`` (pairs across parts: none of another part in another
    branch). As a cost: each branch beyond the first.
    """
    network = model.topology.network
    m = model.m
    if clause.fixed:
        def far(host: str) -> int:
            return sum(1 for f in clause.fixed
                       if not within(network.hops(host, f), n))
        if cost is None:
            model.forbid(clause.servers,
                         lambda ti: not far(model.host_of(ti)))
        else:
            for host, xs in model.by_domain(clause.servers,
                                            HOST_SCOPE).items():
                count = far(host)
                cost.extend(count * x for x in xs if count)
    parts = ([tuple(p) for p in clause.parts if p] if clause.across
             else [tuple(clause.servers)])
    if (clause.across and len(parts) < 2) or sum(map(len, parts)) < 2:
        return
    present = [model.present(p, HOST_SCOPE) for p in parts]
    tree = _Tree(network, set().union(*present))
    below = [tree.below(m, p) for p in present]

    def branch(i: int, c, k: int):
        return tree.at(below[i], c, k - 1)

    for v, children in tree.children.items():
        if len(children) < 2:
            continue
        depths = ([(1, 1)] if v is _ROOT else
                  [(max(1, n - k2 + 1), k2)
                   for k2 in range(n // 2 + 1, tree.height[v] + 1)])
        for k1, k2 in depths:
            if clause.across:
                _across(m, parts, children, branch, k1, k2, cost)
            else:
                _within_one(m, children, branch, k1, k2, cost)


def _within_one(m, children, branch, k1: int, k2: int,
                cost: typing.Optional[list]) -> None:
    """All pairs of one part: some branch reaches k2 -> at most one
    branch reaches k1."""
    near = [y for y in (branch(0, c, k1) for c in children)
            if y is not None]
    if len(near) < 2:
        return
    enforce = []
    if k1 != k2:
        deep = [y for y in (branch(0, c, k2) for c in children)
                if y is not None]
        if not deep:
            return
        enforce = [_any(m, deep)]
    if cost is None:
        found = m.Add(sum(near) <= 1)
    else:
        excess = m.NewIntVar(0, len(near), '')
        found = m.Add(excess >= sum(near) - 1)
        cost.append(excess)
    if enforce:
        found.OnlyEnforceIf(enforce)


def _across(m, parts, children, branch, k1: int, k2: int,
            cost: typing.Optional[list]) -> None:
    """Pairs across parts: a server of part i k2 deep in branch c ->
    none of another part k1 deep in another branch."""
    near = {(i, c): branch(i, c, k1) for i in range(len(parts))
            for c in children}
    near = {key: y for key, y in near.items() if y is not None}
    if len(near) < 2:
        return
    total = _count(m, near.values())
    of_part = {i: _count(m, [y for (j, _), y in near.items() if j == i])
               for i in range(len(parts))}
    of_branch = {c: _count(m, [y for (_, d), y in near.items() if d == c])
                 for c in children}
    for i in range(len(parts)):
        for c in children:
            deep = branch(i, c, k2)
            if deep is None:
                continue
            others = total - of_part[i] - of_branch[c] + (
                near.get((i, c), 0))
            if cost is None:
                m.Add(others <= 0).OnlyEnforceIf(deep)
            else:
                broken = m.NewBoolVar('')
                m.Add(others <= 0).OnlyEnforceIf([deep, broken.Not()])
                cost.append(broken)


def _count(m, ys) -> typing.Any:
    ys = list(ys)
    if len(ys) <= 1:
        return sum(ys)
    found = m.NewIntVar(0, len(ys), '')
    m.Add(found == sum(ys))
    return found


def _any(m, ys) -> typing.Any:
    if len(ys) == 1:
        return ys[0]
    found = m.NewBoolVar('')
    m.AddMaxEquality(found, ys)
    return found


class _Tree:
    """The part of the network tree above the hosts a model may use:
    each switch's branches (child switches and hosts), its height."""

    def __init__(self, network, hosts: typing.Iterable[str]) -> None:
        self.children: typing.Dict[typing.Any, typing.List[typing.Any]] = {}
        self.height: typing.Dict[typing.Any, int] = {}
        seen: typing.Set[typing.Any] = set()
        for host in sorted(hosts):
            below = ('h', host)
            self.height[below] = 0
            for depth, domain in enumerate(network.chain(host), 1):
                node = ('d', domain)
                if below not in seen:
                    seen.add(below)
                    self.children.setdefault(node, []).append(below)
                self.height[node] = max(self.height.get(node, 0), depth)
                below = node
            if below not in seen:
                seen.add(below)
                self.children.setdefault(_ROOT, []).append(below)

    def below(self, m, present: typing.Mapping[str, typing.Any]
              ) -> typing.Dict[typing.Any, typing.Dict[int, typing.Any]]:
        """node -> t -> a boolean: a server of ``present`` (host -> its
        boolean) at least t hops below the node (t >= 1 for a switch,
        0 for a host)."""
        found: typing.Dict[typing.Any, typing.Dict[int, typing.Any]] = {
            ('h', h): {0: y} for h, y in present.items()}

        def fill(node):
            if node in found:
                return found[node]
            kids = [fill(c) for c in self.children.get(node, ())]
            depth = {}
            for t in range(1, self.height[node] + 1):
                ys = [y for kid in kids
                      for y in (_deep(kid, t - 1),) if y is not None]
                if ys:
                    depth[t] = _any(m, ys)
            found[node] = depth
            return depth
        for node in self.children:
            if node is not _ROOT:
                fill(node)
        return found

    @staticmethod
    def at(below, node, t: int):
        """A server at least ``t`` hops below ``node``, or None."""
        return _deep(below.get(node, {}), t)


def _deep(depth: typing.Mapping[int, typing.Any], t: int):
    """The boolean of ``depth`` (t -> boolean, see :meth:`_Tree.below`)
    for "at least t below": a switch's hosts are all at least 1 below."""
    if 0 in depth:      # a host
        return depth[0] if t <= 0 else None
    return depth.get(max(t, 1))
