"""P1: our group filter + weigher against nova's in-tree ones.

Same FakeHostStates for both: N hosts, each running 10 unrelated instances,
and M group members spread over the hosts. nova's ServerGroupAntiAffinityFilter
and ServerGroupSoftAntiAffinityWeigher rebuild the member set for every host;
ours build per-domain counts once per request.

Measured per request: ``filter_all`` + ``weigh_objects`` (what differs
between the two; nova's normalisation afterwards is common to both), each
on a new ``RequestSpec`` built before the timer starts (nova-conductor
builds it, not the scheduler's filters; with 1,000 members its
oslo.versionedobjects coercion costs about 0.5 ms, which both sides paid
inside the timer before). Ours
includes building its per-request state, with members located by an
in-memory locator built from the same HostStates (in production that is one
database query per cell per request, not included, like nova's own
HostState.instances bookkeeping).

Prints microseconds per host and nova time / ours, then as its last line
``ratio_vs_nova_10k_hosts_1k_members: <x>`` (the smaller of the host-scope
and rack-scope ratios at 10,000 hosts and 1,000 members).

Run with ``tools/benchmark.sh`` (creates the virtualenv if needed).
"""

import argparse
import sys
import warnings

warnings.simplefilter('ignore')

from oslo_serialization import jsonutils  # noqa: E402

from nova import objects  # noqa: E402
from nova.scheduler.filters import affinity_filter  # noqa: E402
from nova.scheduler.weights import affinity as nova_affinity  # noqa: E402
from nova.scheduler import weights as nova_weights  # noqa: E402
from nova.tests.unit.scheduler import fakes  # noqa: E402
from benchmarks.common import timed  # noqa: E402
from nova_scoped_policies import topology as topo  # noqa: E402
from nova_scoped_policies.scheduler import aggregate_cache  # noqa: E402
from nova_scoped_policies.scheduler import members as locators  # noqa: E402,E501
from nova_scoped_policies.scheduler import state  # noqa: E402
from nova_scoped_policies.scheduler.filters.scoped_anti_affinity import \
    ScopedAntiAffinityFilter  # noqa: E402
from nova_scoped_policies.scheduler.weights.scoped_soft_anti_affinity \
    import ScopedSoftAntiAffinityWeigher  # noqa: E402

RACK_SIZE = 40
FILLER_PER_HOST = 10


def build_hosts(n_hosts, n_members):
    hosts = [fakes.FakeHostState(f'host{i}', f'node{i}', {})
             for i in range(n_hosts)]
    for i, hs in enumerate(hosts):
        for j in range(FILLER_PER_HOST):
            uuid = f'other-{i}-{j}'
            hs.instances[uuid] = objects.Instance(uuid=uuid)
    members = [f'member-{k}' for k in range(n_members)]
    placements = {}
    for k, uuid in enumerate(members):
        hs = hosts[(k * 7919) % n_hosts]
        hs.instances[uuid] = objects.Instance(uuid=uuid)
        placements[uuid] = hs.host
    racks = [topo.AggregateInfo(f'rack-{r}', f'rack-{r}',
                                [h.host for h in
                                 hosts[r * RACK_SIZE:(r + 1) * RACK_SIZE]],
                                {'policy_scope': 'rack'})
             for r in range((n_hosts + RACK_SIZE - 1) // RACK_SIZE)]
    return hosts, members, placements, topo.from_aggregates(racks)


def spec(policy, members, hint=None):
    hints = {'scoped_policies': [jsonutils.dumps(hint)]} if hint else {}
    return objects.RequestSpec(
        instance_group=objects.InstanceGroup(
            uuid='g', name='g', policy=policy, members=list(members),
            rules={}, hosts=[]),
        scheduler_hints=hints, instance_uuid='new', project_id='p')


def run_nova(hosts, members, repeat):
    filt = affinity_filter.ServerGroupAntiAffinityFilter()
    weigher = nova_affinity.ServerGroupSoftAntiAffinityWeigher()
    weighed = [nova_weights.WeighedHost(h, 0.0) for h in hosts]

    def specs():
        return (spec('anti-affinity', members),
                spec('soft-anti-affinity', members))

    def once(request):
        for_filter, for_weigher = request
        kept = list(filt.filter_all(hosts, for_filter))
        weigher.weigh_objects(weighed, for_weigher)
        return kept
    return timed(once, repeat, specs), once(specs())


def run_ours(hosts, members, placements, topology, scope, repeat):
    state.STATES = state.RequestStates(
        locators.StaticMemberLocator(placements),
        aggregate_cache.StaticAggregates(topology=topology))
    filt = ScopedAntiAffinityFilter()
    weigher = ScopedSoftAntiAffinityWeigher()
    weighed = [nova_weights.WeighedHost(h, 0.0) for h in hosts]
    if scope == 'host':
        def specs():
            return (spec('anti-affinity', members),
                    spec('soft-anti-affinity', members))
    else:
        hint = {'policies': [f'anti-affinity:{scope}',
                             f'soft-anti-affinity:{scope}'],
                'rules': {f'max_server_per_{scope}': 64}}

        def specs():
            one = spec('soft-anti-affinity', members, hint)
            return one, one

    def once(request):
        for_filter, for_weigher = request
        kept = list(filt.filter_all(hosts, for_filter))
        weigher.weigh_objects(weighed, for_weigher)
        return kept
    return timed(once, repeat, specs), once(specs())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--quick', action='store_true',
                        help='1,000 hosts only (a smoke run)')
    args = parser.parse_args(argv)
    objects.register_all()
    sizes = [(1000, 10), (1000, 1000)]
    if not args.quick:
        sizes += [(10000, 10), (10000, 1000)]
    print(f'{"hosts":>6} {"members":>7} {"scope":>5} {"nova us/host":>13} '
          f'{"ours us/host":>13} {"ratio":>8}')
    final = []
    for n_hosts, n_members in sizes:
        hosts, members, placements, topology = build_hosts(n_hosts,
                                                           n_members)
        nova_s, nova_kept = run_nova(hosts, members, args.repeat)
        for scope in ('host', 'rack'):
            ours_s, ours_kept = run_ours(hosts, members, placements,
                                         topology, scope, args.repeat)
            if scope == 'host':
                # Same policy, same world: same verdicts as nova.
                assert [h.host for h in ours_kept] == \
                    [h.host for h in nova_kept], 'verdicts differ from nova'
            ratio = nova_s / ours_s
            print(f'{n_hosts:>6} {n_members:>7} {scope:>5} '
                  f'{nova_s / n_hosts * 1e6:>13.2f} '
                  f'{ours_s / n_hosts * 1e6:>13.2f} {ratio:>8.1f}')
            if (n_hosts, n_members) == (10000, 1000):
                final.append(ratio)
    print('(nova has no rack scope: rack rows compare our rack-scope '
          'policies with nova\'s host-scope ones)')
    if final:
        print(f'ratio_vs_nova_10k_hosts_1k_members: {min(final):.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
