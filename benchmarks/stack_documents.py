"""P5's stack documents through the policy API, end to end (issue #48).

Each document under ``benchmarks/p5/`` names a world and a stack. The
world is put in our fake Placement (its hosts as resource providers with
their inventories, what already runs as one allocation per host, traits,
and the domains as aggregates stored as scopes through the policy API);
the stack is posted to ``POST /stacks`` as a tenant waits, from the
request to the answer, with the service's defaults (``stack_time_limit``
10 s, ``stack_relative_gap``, every core). Printed per document, under
``stacks_<key>_...``:

* ``_api_s``: the API's wall time (median of ``repeat`` posts, each
  deleted after), held to the document's ``target_s`` (the limit, or
  2 s for 3 x 4); ``_answered``: every post answered 201;
* outside ``--quick``, beside a **60 s reference run** (the solver alone
  on the same world, ``time_limit`` 60, gap 0, every core): ``_ref_cost``
  (the reference decision's soft cost) and ``_cost`` (the API decision's,
  held to the reference's plus the relative gap), so that fast cannot
  mean worse; a stack the reference decides and the API does not fails
  ``_answered``. ``--quick`` leaves the reference runs out (a minute
  each).

Worlds (``world.kind``): ``uniform`` (alike hosts, :data:`worlds.SIZES`
``[3]``, in racks of ``per_rack`` consecutive hosts, nothing running);
``cloud`` (P3's varied world, :func:`worlds.cloud` with no groups: its
running servers booted through the simulator's scheduler first);
``full`` (P3's varied hosts, each running servers of P3's five flavors up
to ``share`` of its size).
"""

import contextlib
import dataclasses
import glob
import json
import os
import random
import statistics
import tempfile
import time
import typing
import uuid as uuidlib

import yaml

from benchmarks import worlds
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'p5')
LIMIT = 10.0
"""The service's default ``stack_time_limit``."""
GAP = 0.05
"""The service's default ``stack_relative_gap``."""
REFERENCE = 60.0
"""Seconds of the reference run."""


@dataclasses.dataclass(frozen=True)
class Host:
    """A host of a world: its size, what already runs on it, its traits."""

    name: str
    total: typing.Mapping[str, int]
    used: typing.Mapping[str, int]
    traits: typing.FrozenSet[str] = frozenset()

    @property
    def provider(self) -> str:
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, self.name))


@dataclasses.dataclass(frozen=True)
class Cloud:
    """A world: hosts and their domains (``topology``)."""

    hosts: typing.Tuple[Host, ...]
    topology: Topology

    def world(self) -> solver.World:
        """What a decision reads of it (free = size less what runs)."""
        return solver.World(tuple(
            solver.HostState(h.name, h.provider, {
                rc: n - h.used.get(rc, 0) for rc, n in h.total.items()},
                h.traits) for h in self.hosts), self.topology)


def uniform(hosts: int, per_rack: int) -> Cloud:
    """Alike hosts, racks of ``per_rack`` consecutive ones, empty."""
    names = [f'n{i:05d}' for i in range(hosts)]
    domains = [Domain(f'rack-{r:03d}', f'rack-{r:03d}', 'rack',
                      frozenset(names[i:i + per_rack]))
               for r, i in enumerate(range(0, hosts, per_rack))]
    return Cloud(tuple(Host(n, worlds.SIZES[3], {}) for n in names),
                 Topology([Scope('rack')], domains))


def _varied(document: dict, used: typing.Mapping[str, typing.Mapping[
        str, int]]) -> Cloud:
    """The hosts and aggregates of a :func:`worlds.cloud` document, with
    ``used`` per host."""
    hosts = tuple(Host(h['name'], h['resources'], used.get(h['name'], {}),
                       frozenset(h['traits'])) for h in document['hosts'])
    domains = [Domain(a['name'], a['name'], a['scope'],
                      frozenset(a['hosts']))
               for a in document['aggregates']]
    return Cloud(hosts, Topology([Scope(s) for s in document['scopes']],
                                 domains))


def cloud(hosts: int) -> Cloud:
    """P3's varied world at ``hosts``: its running servers booted through
    the simulator's scheduler (the fast engine), as P3 boots them."""
    from nova_scoped_policies.simulator import engines
    from nova_scoped_policies.simulator import scenario as sc
    document = worlds.cloud(hosts, groups=0)
    with engines.simulation(sc.parse(document), 'fast') as sim:
        final = sim.run()['final']
    used: typing.Dict[str, typing.Dict[str, int]] = {}
    for server, host in final.items():
        # servers of flavor f are named vm<f>-b<boot>-<n>
        flavor = worlds.FLAVORS[int(server[2:server.index('-')])]
        load = used.setdefault(host, dict.fromkeys(flavor, 0))
        for rc, n in flavor.items():
            load[rc] += n
    return _varied(document, used)


def full(hosts: int, share: float, seed: int = 48) -> Cloud:
    """P3's varied hosts at ``hosts``, each running servers of P3's five
    flavors up to ``share`` of its size."""
    document = worlds.cloud(hosts, groups=0, running=0)
    rng = random.Random(seed)
    used = {}
    for host in document['hosts']:
        total = host['resources']
        load = dict.fromkeys(total, 0)
        misses = 0
        while misses < 5:
            flavor = rng.choice(worlds.FLAVORS)
            if any(load[rc] + n > total[rc] * share
                   for rc, n in flavor.items()):
                misses += 1
                continue
            for rc, n in flavor.items():
                load[rc] += n
        used[host['name']] = load
    return _varied(document, used)


def make(world: typing.Mapping[str, typing.Any]) -> Cloud:
    """The cloud a document's ``world`` names."""
    kind = world['kind']
    if kind == 'uniform':
        return uniform(world['hosts'], world['per_rack'])
    if kind == 'cloud':
        return cloud(world['hosts'])
    if kind == 'full':
        return full(world['hosts'], world['share'])
    raise ValueError(f'world.kind: {kind}: uniform, cloud or full')


TENANT = {'X-Project-Id': 'tenant', 'X-Roles': 'member'}
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}


class Service:
    """The policy API (noauth2, a SQLite store) on our fake Placement
    holding ``cloud``; a context manager.

    :param limit: ``stack_time_limit``.
    """

    def __init__(self, cloud: Cloud, limit: float = LIMIT) -> None:
        self.cloud = cloud
        self.limit = limit

    def __enter__(self) -> 'Service':
        from nova_scoped_policies.api import deploy
        from nova_scoped_policies.db import api as store_api
        from nova_scoped_policies.db import migration
        from nova_scoped_policies.placement import fake
        from nova_scoped_policies.placement import model as pmodel
        from tests.functional.api import fixtures as fx
        from tests import placement_fixtures as pf
        self._stack = contextlib.ExitStack()
        placement = pf.FakePlacementFixture(fake.FakePlacement())
        placement.setUp()
        self._stack.callback(placement.cleanUp)
        state = placement.app.model
        for trait in sorted({t for h in self.cloud.hosts for t in h.traits}):
            state.add_trait(trait)
        topology = self.cloud.topology
        # parents first
        scopes = sorted((topology.scope(n) for n in topology.scope_names),
                        key=lambda sc: sc.parent is not None)
        domains = [d for sc in scopes for d in topology.domains(sc.name)]
        aggregates = {d.id: str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, d.id))
                      for d in domains}
        member_of: typing.Dict[str, typing.Set[str]] = {
            h.name: set() for h in self.cloud.hosts}
        for domain in domains:
            for host in domain.hosts:
                member_of[host].add(aggregates[domain.id])
        for host in self.cloud.hosts:
            rp = host.provider
            state.add_provider(rp, host.name)
            state.set_inventories(rp, pmodel.UNCHECKED, {
                rc: pmodel.inventory({'total': n})
                for rc, n in host.total.items()})
            state.set_aggregates(rp, pmodel.UNCHECKED, member_of[host.name])
            state.set_traits(rp, pmodel.UNCHECKED, host.traits)
            if any(host.used.values()):
                state.claim(f'running-{host.name}', {rp: dict(host.used)},
                            'others', 'u')
        tmp = self._stack.enter_context(tempfile.TemporaryDirectory())
        store = store_api.PolicyStore(f'sqlite:///{tmp}/store.db')
        migration.upgrade(store.engine)
        self.app = deploy.loadapp(fx.make_conf(stack_time_limit=self.limit),
                                  store, pf.client_for(placement))
        for scope in scopes:
            body = {'policy_scope': {
                'name': scope.name, 'parent': scope.parent,
                'aggregates': sorted(aggregates[d.id] for d in
                                     topology.domains(scope.name))}}
            status, body = self.call('POST', '/os-policy-scopes', body,
                                     ADMIN)
            assert status == 201, body
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def call(self, method: str, path: str, body=None, headers=TENANT
             ) -> typing.Tuple[int, typing.Any]:
        import webob
        req = webob.Request.blank(path, method=method, headers=dict(
            headers, **{'OpenStack-API-Version': 'scoped-policies 1.1'}))
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(self.app)
        return resp.status_code, (resp.json if resp.body else None)

    def post(self, document: dict) -> typing.Tuple[float, int, dict]:
        """``POST /stacks`` as the tenant: (the API's wall time, its
        status, its body)."""
        started = time.perf_counter()
        status, body = self.call('POST', '/stacks', document)
        return time.perf_counter() - started, status, body

    def hosts(self, stack_id: str) -> typing.Dict[str, str]:
        """server -> host of a decision (the admin's view)."""
        status, body = self.call('GET', f'/stacks/{stack_id}',
                                 headers=ADMIN)
        assert status == 200, body
        return {name: s['host'] for name, s in
                body['stack']['servers'].items()}

    def delete(self, stack_id: str) -> None:
        status, body = self.call('DELETE', f'/stacks/{stack_id}')
        assert status == 204, body


def documents() -> typing.List[dict]:
    """The documents of :data:`FOLDER`, by file name."""
    found = []
    for path in sorted(glob.glob(os.path.join(FOLDER, '*.yaml'))):
        with open(path, encoding='utf-8') as handle:
            found.append(dict(yaml.safe_load(handle),
                              file=os.path.relpath(path, os.path.dirname(
                                  FOLDER))))
    return found


def _figure(targets, key: str, value) -> None:
    """A figure with no target (``Targets.figure`` where it exists)."""
    printed = getattr(targets, 'figure', None)
    if printed is not None:
        printed(key, value)
    else:
        print(f'{key}: {value}', flush=True)


def measure(document: dict, targets, repeat: int = 1,
            reference: bool = True,
            clouds: typing.Optional[typing.Dict[str, Cloud]] = None
            ) -> None:
    """One document through the API, against its targets (see the
    module).

    :param clouds: worlds made already, by their ``world`` (JSON): two
        documents on one world build it once.
    """
    key = f'stacks_{document["key"]}'
    begun = time.perf_counter()
    named = json.dumps(document['world'], sort_keys=True)
    clouds = {} if clouds is None else clouds
    if named not in clouds:
        clouds[named] = make(document['world'])
    cloud = clouds[named]
    stack = model.parse(document['stack'])
    print(f'{document["file"]}: {len(cloud.hosts):,} hosts, '
          f'{len(stack.servers)} servers (world built in '
          f'{time.perf_counter() - begun:.0f} s)', flush=True)
    runs = []
    with Service(cloud) as service:
        for _ in range(repeat):
            seconds, status, body = service.post(document['stack'])
            hosts = optimal = None
            if status == 201:
                stack_id = body['stack']['id']
                hosts = service.hosts(stack_id)
                optimal = body['stack']['optimal']
                service.delete(stack_id)
            runs.append((seconds, status, hosts, optimal, body))
    seconds = statistics.median(r[0] for r in runs)
    _, status, hosts, optimal, body = runs[-1]
    print(f'  POST /stacks: {[r[1] for r in runs]}, min '
          f'{min(r[0] for r in runs):.2f} s' +
          (f' (its decision {body["stack"]["seconds"]:.2f} s), optimal '
           f'{optimal}' if status == 201 else
           f': {body["errors"][0]["detail"]}'), flush=True)
    world = cloud.world()
    ref = ref_cost = None
    if reference:
        ref = solver.decide(stack, world, time_limit=REFERENCE,
                            workers=len(os.sched_getaffinity(0)), gap=0.0)
        if ref.feasible:
            ref_cost = solver.cost_of(stack, world, ref.assignments)
        print(f'  reference ({REFERENCE:g} s, gap 0): '
              + (f'cost {ref_cost}, stopped: {ref.stop}, {ref.seconds:.1f} s'
                 if ref.feasible else ref.reason), flush=True)
    targets.require(f'{key}_answered', all(r[1] == 201 for r in runs)
                    or (ref is not None and not ref.feasible
                        and not ref.timed_out))
    targets.check(f'{key}_api_s', seconds, document['target_s'],
                  better='lower', unit=' s')
    if ref_cost is not None:
        _figure(targets, f'{key}_ref_cost', ref_cost)
        # both costs read alike, from the decisions' hosts
        cost = (None if hosts is None
                else solver.cost_of(stack, world, hosts))
        if cost is None:   # no decision, or its cost not told
            targets.require(f'{key}_cost', False)
        else:
            targets.check(f'{key}_cost', cost,
                          ref_cost + GAP * max(1, ref_cost), better='lower')


SMOKE = '10x10_full90_1k'
"""The document a smoke run posts (the smallest world)."""


def run(targets, repeat: int = 1, quick: bool = False,
        smoke: bool = False) -> None:
    """Every document (:func:`measure`); ``quick``: no reference run;
    ``smoke``: :data:`SMOKE` once, no reference run."""
    if quick or smoke:
        print('the 60 s reference runs are left out')
    clouds: typing.Dict[str, Cloud] = {}
    for document in documents():
        if smoke and document['key'] != SMOKE:
            continue
        measure(document, targets, 1 if smoke else repeat,
                reference=not (quick or smoke), clouds=clouds)
