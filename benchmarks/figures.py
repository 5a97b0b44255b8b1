"""Every figure the benchmarks print: its key, what it is, its unit and
the runs that print it.

A suite prints a figure as one line, ``KEY: VALUE[UNIT] (...) -- WHAT``
(:class:`.common.Targets`), and only under a key declared here. A run of
a declared kind fails when a figure declared for that kind was not
printed: ``full`` (the suite's defaults), ``quick`` (``--quick``),
``smoke`` (``--smoke``: the smallest sizes, every correctness check held,
no time target) and ``big`` (``--big``, where a suite has one). A run
whose sizes were changed (``--hosts``...) prints what it measured, keyed
by its sizes, and is held to no list.

The docs name each figure they cite by its key; ``tests/test_doc_facts.py``
checks that every key they name is declared here and printed by its
suite's full (or ``--big``) run, and that every figure in their tables
names one.

This module is plain data (no nova, no harness): the docs' test and
``python -m benchmarks figures`` read it without loading a suite.
"""

import dataclasses
import typing

FULL, QUICK, SMOKE, BIG = 'full', 'quick', 'smoke', 'big'
RUNS = (FULL, QUICK, SMOKE, BIG)
PUBLISHED = frozenset((FULL, BIG))
"""The runs whose figures the docs quote: a suite's full run, and its
``--big`` run where it has one (P8's 50,000 hosts)."""
ALL = frozenset((FULL, QUICK, SMOKE))
NOT_SMOKE = frozenset((FULL, QUICK))
ONLY_FULL = frozenset((FULL,))
ONLY_SMOKE = frozenset((SMOKE,))
NOT_QUICK = frozenset((FULL, SMOKE))


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure a suite prints.

    :param suite: the suite (``python -m benchmarks SUITE``).
    :param key: what the line starts with; stable from run to run.
    :param what: what the figure is, in a sentence: the world, what is
        timed and how (the process, the garbage collector), what a ratio
        divides.
    :param unit: printed after the value.
    :param runs: the kinds of run that print it.
    """

    suite: str
    key: str
    what: str
    unit: str = ''
    runs: typing.FrozenSet[str] = ALL


FIGURES: typing.Dict[str, Figure] = {}
"""Every declared figure, by key (keys are unique across suites)."""


def size(count: int) -> str:
    """How a size reads in a key: 1000 -> ``1k``, 200 -> ``200``."""
    if count >= 1000 and count % 1000 == 0:
        return f'{count // 1000}k'
    return str(count)


def _add(suite: str, key: str, what: str, unit: str = '',
         runs: typing.FrozenSet[str] = ALL) -> None:
    assert key not in FIGURES, f'{key} declared twice'
    FIGURES[key] = Figure(suite, key, what, unit, runs)


def of(suite: str) -> typing.Dict[str, Figure]:
    """The figures of ``suite``, by key."""
    return {k: f for k, f in FIGURES.items() if f.suite == suite}


# -- P1: filters ------------------------------------------------------------

def _filters() -> None:
    gc_off = ('filter_all then weigh_objects on what nova hands them, '
              'made before the timer; each call with the cyclic garbage '
              'collector off, as timeit times; median of --repeat calls')
    for hosts, members, runs in ((1000, 10, ALL), (1000, 1000, ALL),
                                 (10000, 10, ONLY_FULL),
                                 (10000, 1000, ONLY_FULL)):
        at = f'{size(hosts)}_{size(members)}'
        where = (f'{hosts:,} fake host states of 10 servers each, a group '
                 f'of {members:,} members')
        _add('filters', f'filters_{at}_nova_us',
             f"nova's ServerGroupAntiAffinityFilter and "
             f'ServerGroupSoftAntiAffinityWeigher, microseconds a host per '
             f'request ({where}; {gc_off})', ' us', runs)
        for scope in ('host', 'rack'):
            policies = (f'anti-affinity:{scope} and '
                        f'soft-anti-affinity:{scope}')
            if scope == 'rack':
                policies += ', max_server_per_rack 64'
            _add('filters', f'filters_{at}_{scope}_us',
                 f'our ScopedAntiAffinityFilter and '
                 f'ScopedSoftAntiAffinityWeigher with {policies} as a '
                 f'scoped policy, microseconds a host per request, our '
                 f'per-request state included ({where}; {gc_off})', ' us',
                 runs)
            same = ('the same policies' if scope == 'host' else
                    "our rack-scope policies against nova's host-scope "
                    'ones (nova has no rack scope)')
            _add('filters', f'filters_{at}_{scope}_ratio',
                 f"nova's time / ours, {same}: the same host states, "
                 'timer and process', 'x', runs)
    _add('filters', 'filters_10k_1k_min_ratio',
         'the smaller of the host and rack ratios at 10,000 hosts and '
         '1,000 members', 'x', ONLY_FULL)
    _add('filters', 'filters_host_verdicts_as_nova',
         "at every size, our anti-affinity:host keeps exactly the hosts "
         "nova's anti-affinity filter keeps (it rejects the members' hosts) "
         "and our soft-anti-affinity weigher ranks the hosts as nova's")


# -- P2: request filters ----------------------------------------------------

def _request_filters() -> None:
    warm = ('10,000 hosts, 1,000 aggregates (500 rack domains, 500 with '
            'trait metadata), aggregate cache warm, gc off during each '
            'call; median of --repeat requests')
    _add('request_filters', 'rf_forbidden_aggregates_ms',
         f'forbidden_aggregates request filter, milliseconds a request '
         f'({warm})', ' ms')
    _add('request_filters', 'rf_scoped_policy_query_ms',
         f'scoped_policy_query request filter, a group of 1,000 members, '
         f'anti-affinity:rack, milliseconds a request ({warm})', ' ms')
    _add('request_filters', 'rf_forbid_nova_ms',
         "nova's Destination.append_forbidden_aggregates of 500 aggregates, "
         'milliseconds a spec', ' ms')
    _add('request_filters', 'rf_forbid_seam_ms',
         'nova_seam.objects.forbid_aggregates of the same 500, '
         'milliseconds a spec', ' ms')
    _add('request_filters', 'rf_direct_write_faster_than_nova',
         "the seam's direct write takes less time than nova's method")
    placement = ('real Placement (openstack-placement on SQLite, '
                 'in-process), rf_placement_providers providers in 50 '
                 'racks, an affinity:rack boot')
    _add('request_filters', 'rf_placement_providers',
         'the providers of the real-Placement figures (2,000; fewer in a '
         'smoke run)')
    _add('request_filters', 'rf_placement_setup_s',
         'seconds to create those providers through the Placement client',
         ' s')
    for label, with_ in (('without', 'without'), ('with', 'with')):
        _add('request_filters', f'rf_candidates_{label}',
             f'allocation candidates {with_} the query filter\'s '
             f'member_of ({placement})')
        _add('request_filters', f'rf_latency_{label}_ms',
             f'GET /allocation_candidates {with_} the query filter\'s '
             f'member_of, milliseconds ({placement}; median)', ' ms')
    _add('request_filters', 'rf_candidates_ratio',
         'candidates without / with the query filter', 'x')
    _add('request_filters', 'rf_latency_ratio',
         'latency without / with the query filter: the same Placement, '
         'process and timer', 'x')
    _add('request_filters', 'rf_query_filter_narrows_candidates',
         'the query filter leaves fewer candidates than without it')
    modes = ('a real nova API database (PostgreSQL), 1,000 aggregates of '
             '20 hosts, 500 reserved by a trait, the request requiring one '
             'of the traits; median of --repeat requests')
    _add('request_filters', 'rf_forbidden_per_request_ms',
         'forbidden_aggregates with no aggregate listener: the trait: '
         f'metadata read for every request, milliseconds a request ({modes})',
         ' ms')
    _add('request_filters', 'rf_forbidden_cached_ms',
         'forbidden_aggregates with a listener keeping the copy fresh: the '
         f'cached index, milliseconds a request ({modes})', ' ms')
    _add('request_filters', 'rf_nova_isolate_aggregates_ms',
         "nova's own isolate_aggregates request filter on the same "
         f'database, milliseconds a request ({modes})', ' ms')
    _add('request_filters', 'rf_forbidden_per_request_vs_nova',
         'rf_forbidden_per_request_ms / rf_nova_isolate_aggregates_ms: the '
         'same database, process and timer', 'x')
    _add('request_filters', 'rf_modes_forbid_as_nova',
         "the per-request and cached modes forbid the aggregates nova's "
         'filter forbids')
    lag = ('an aggregate\'s metadata changed through nova-api (a cloud of '
           'processes on PostgreSQL and RabbitMQ), timed from the request '
           'until a listener on nova\'s notification transport has marked '
           'the copy stale, the request included')
    _add('request_filters', 'rf_aggregate_notification_lag_ms',
         f'{lag}: the median, milliseconds', ' ms', NOT_SMOKE)
    _add('request_filters', 'rf_aggregate_notification_lag_max_ms',
         f'{lag}: the largest, milliseconds', ' ms', NOT_SMOKE)


# -- P3: simulator ----------------------------------------------------------

WHOLE = ('nova-scoped-policies simulate as a whole process, start to exit '
         '(imports, the scenario file, the world, every boot, the report)')
INPROC = ('the simulator in-process: every boot, world built and scheduler '
          'loaded, the world frozen out of the garbage collector\'s sight '
          '(gc.freeze) as simulate runs; in a fresh process')


def _simulator() -> None:
    cloud = ('the cloud world (benchmarks/worlds.py: six host sizes, '
             'traits, usage differing host by host, groups of every policy '
             'kind)')
    for hosts, runs in ((1000, ONLY_SMOKE), (5000, NOT_SMOKE),
                        (50000, ONLY_FULL)):
        at = f'sim_cloud_{size(hosts)}'
        repeat = '; median of --repeat' if hosts != 50000 else '; one run'
        _add('simulator', f'{at}_whole_s',
             f'{WHOLE}, {cloud}, {hosts:,} hosts{repeat}', ' s', runs)
        _add('simulator', f'{at}_peak_mib',
             f'peak memory of that simulate process alone (the launcher: a '
             f'small process of its own), {hosts:,} hosts', ' MiB', runs)
        _add('simulator', f'{at}_placed',
             f'servers placed by that simulate run, {hosts:,} hosts', '',
             runs)
        _add('simulator', f'{at}_failed',
             f'servers that found no host in that run, {hosts:,} hosts',
             '', runs)
        if hosts != 50000:
            _add('simulator', f'{at}_whole_min_s',
                 f'the fastest of those whole-process runs, {hosts:,} hosts',
                 ' s', runs)
            _add('simulator', f'{at}_inproc_rate',
                 f'{INPROC}, {cloud}, {hosts:,} hosts, placements a second'
                 f'{repeat}', ' placements/s', runs)
    for hosts, runs in ((100, ONLY_SMOKE), (1000, ONLY_FULL)):
        _add('simulator', f'sim_nova_engine_{size(hosts)}_rate',
             f'the nova engine (nova\'s filter and weigher handlers over '
             f'every host, our filters, weighers and request filters, the '
             f'fake Placement through wsgi-intercept) on {cloud} at '
             f'{hosts:,} hosts, placements a second, in the benchmark\'s '
             f'process with its heap not frozen and the garbage collector '
             f'as nova-scheduler leaves it: what nova-scheduler\'s path '
             f'costs per placement', ' placements/s', runs)
        _add('simulator', f'sim_engines_agree_cloud_{size(hosts)}',
             f'the fast and the nova engines decide alike on {cloud} at '
             f'{hosts:,} hosts, failures and their reasons included', '',
             runs)
    uniform = ('the uniform world (one host size, racks of 40 consecutive '
               'hosts, anti-affinity:rack groups, nothing running before)')
    for hosts, runs in ((1000, ONLY_SMOKE), (5000, NOT_SMOKE)):
        # a smoke run: requests of 5, as a user waits, only
        for batch in (5,) if SMOKE in runs else (5, 40):
            at = f'sim_uniform_{size(hosts)}_r{batch}'
            _add('simulator', f'{at}_whole_s',
                 f'{WHOLE}, {uniform}, {hosts:,} hosts, requests of '
                 f'{batch}; median of --repeat', ' s', runs)
            if SMOKE in runs:
                continue
            _add('simulator', f'{at}_inproc_rate',
                 f'{INPROC}, {uniform}, {hosts:,} hosts, requests of '
                 f'{batch}, the groups\' boots timed, placements a second; '
                 f'median of --repeat', ' placements/s', runs)
    for key, what, unit in (
            ('whole_s', f'{WHOLE}, {uniform}, 100,000 hosts, requests of 5',
             ' s'),
            ('peak_mib', 'peak memory of that simulate process alone',
             ' MiB'),
            ('placed', 'servers placed by that run', '')):
        _add('simulator', f'sim_uniform_100k_{key}', what, unit, ONLY_FULL)
    for hosts, runs in ((80, ONLY_SMOKE), (200, NOT_SMOKE)):
        small = f'the uniform world at {hosts} hosts, the groups\' boots'
        _add('simulator', f'sim_fake_placement_{hosts}_s',
             f'seconds of {small} on our fake Placement (in-process, the '
             f'nova engine, heap frozen)', ' s', runs)
        _add('simulator', f'sim_real_placement_{hosts}_s',
             f'seconds of {small} on the real Placement '
             f'(openstack-placement on SQLite, in-process, the nova engine, '
             f'heap frozen)', ' s', runs)
        _add('simulator', f'sim_fake_real_agree_uniform_{hosts}',
             f'{small}: the same decisions and failures on both Placements',
             '', runs)


# -- P4: concurrency --------------------------------------------------------

def _concurrency() -> None:
    harness = ("nova's functional harness (real nova-api, conductor and "
               'scheduler, fake computes, real Placement, casts stay casts)'
               ', 4 racks x 3 hosts, --groups groups of 4 boots a path '
               'fired back to back, until each is ACTIVE or ERROR')
    _add('concurrency', 'conc_boots_per_path',
         'boots fired on each path (4 a group)')
    for schedulers, runs in ((1, ALL), (2, NOT_SMOKE)):
        at = f'conc_{schedulers}_sched'
        many = f'{schedulers} scheduler(s)'
        _add('concurrency', f'{at}_ran',
             f'the benchmark ran both paths with {many}', '', runs)
        _add('concurrency', f'{at}_nova_boots_per_s',
             f"nova's anti-affinity groups (its filter, the compute's late "
             f'check), {many}, boots a second ({harness})', ' boots/s',
             runs)
        _add('concurrency', f'{at}_ours_boots_per_s',
             f'our anti-affinity:rack groups (tooz lock in Redis, members '
             f'in flight from Placement), {many}, boots a second '
             f'({harness})', ' boots/s', runs)
        _add('concurrency', f'{at}_ratio',
             f'our boots a second / nova\'s, {many}: the same harness, '
             'process and timer', 'x', runs)
        _add('concurrency', f'{at}_added_ms_per_boot',
             f'wall time a boot ours adds to nova\'s, {many}', ' ms', runs)
        for path in ('nova', 'ours'):
            _add('concurrency', f'{at}_{path}_active',
                 f'boots of the {path} path that ended ACTIVE, {many}', '',
                 runs)


# -- P5: stacks -------------------------------------------------------------

P5_DOCUMENTS = (
    ('10x10_full90_1k', '10 groups of 10 with soft policies at 1,000 '
     'varied hosts 90% full (benchmarks/p5/10x10-full90-1k.yaml)'),
    ('20x10_cloud_10k', '20 LLMN clusters of 10 apart by rack at 10,000 '
     'hosts of the varied world (benchmarks/p5/20x10-cloud-10k.yaml)'),
    ('20x10_uniform_10k', "issue #48's finding 3: 20 LLMN clusters of 10 "
     'apart by rack at 10,000 alike empty hosts in 40 racks of 250 '
     '(benchmarks/p5/20x10-uniform-10k.yaml)'),
    ('3x4_cloud_10k', '3 LLMN clusters of 4 apart by rack at 10,000 hosts '
     'of the varied world (benchmarks/p5/3x4-cloud-10k.yaml; target 2 s)'),
)
"""P5's stack documents (``benchmarks/p5/``): key, what it is."""
STACK_CASES = (('3x4', 3, 4, 10000, ALL), ('20x10', 20, 10, 10000, ONLY_FULL),
               ('50x4', 50, 4, 5000, ONLY_FULL),
               ('10x10', 10, 10, 50000, ONLY_FULL))
"""P5's clusters: (key, clusters, servers each, hosts, runs)."""


def _stacks() -> None:
    _add('stacks', 'stacks_fitting',
         'random stacks that fit, drawn in small random datacenters (200; '
         '50 with --quick, fewer in a smoke run)')
    _add('stacks', 'stacks_one_at_a_time_share',
         "the share of them nova's one-at-a-time way places", '%')
    _add('stacks', 'stacks_joint_share',
         'the share of them the joint decision places', '%')
    _add('stacks', 'stacks_joint_places_every_fitting',
         'the joint decision places every fitting stack')
    decide = ('solver.decide from the call to the answer, the service\'s '
              '10 s limit and every core, on the varied world (six host '
              'sizes, a third with CUSTOM_SSD, every host partly used, '
              'racks of 40 not in name order, 5 zones); clusters LLMN '
              'rack/host n=2, anti-affinity:rack across them')
    for key, clusters, each, hosts, runs in STACK_CASES:
        at = f'stacks_{key}_{size(hosts)}'
        case = f'{clusters} x {each} at {hosts:,} hosts'
        _add('stacks', f'{at}_placed',
             f'{case}: a decision meeting every hard policy', '', runs)
        _add('stacks', f'{at}_median_s',
             f'{case}: {decide}; median of --repeat runs', ' s', runs)
        _add('stacks', f'{at}_min_s', f'{case}: the fastest of those runs',
             ' s', runs)
    _add('stacks', 'stacks_10x10_50k_peak_mib',
         'peak memory of a process of its own that builds the 50,000-host '
         'varied world and decides 10 x 10 once (the launcher P3 uses for '
         'peak memory: the child\'s own peak)', ' MiB', ONLY_FULL)
    api = ('POST /stacks of 1,000 servers (100 groups of 10, soft policies '
           'only, 256 soft relationships) at 2,000 hosts of the varied '
           'world, our fake Placement, in-process')
    _add('stacks', 'stacks_api_1000_answered_201', f'{api}: answered 201',
         '', ONLY_FULL)
    _add('stacks', 'stacks_api_1000_decision_s',
         f'{api}: the decision\'s own seconds (the answer\'s)', ' s',
         ONLY_FULL)
    _add('stacks', 'stacks_api_1000_median_s',
         f'{api}: seconds from the call to the answer; median of --repeat',
         ' s', ONLY_FULL)
    _add('stacks', 'stacks_api_1000_min_s', f'{api}: the fastest run',
         ' s', ONLY_FULL)
    for key, what in P5_DOCUMENTS:
        doc = f'stacks_{key}'
        runs = ALL if key == '10x10_full90_1k' else NOT_SMOKE
        post = (f'{what}: POST /stacks through the policy API on our fake '
                'Placement, from the request to the answer (the world\'s '
                'read, the decision, the hold and the record), the '
                "service's defaults")
        _add('stacks', f'{doc}_answered', f'{post}: every post answered '
             '201 (or the 60 s reference proves it infeasible)', '', runs)
        _add('stacks', f'{doc}_api_s', f'{post}; median of --repeat posts',
             ' s', runs)
        _add('stacks', f'{doc}_ref_cost', f'{what}: the soft cost of a 60 s '
             'reference decision (the solver alone, gap 0, every core)', '',
             ONLY_FULL)
        _add('stacks', f'{doc}_cost', f'{what}: the soft cost of the API\'s '
             'decision, held to the reference\'s plus the relative gap', '',
             ONLY_FULL)


# -- P6: repair -------------------------------------------------------------

def _repair() -> None:
    for hosts, groups, runs in ((1000, 200, frozenset((QUICK, SMOKE))),
                                (5000, 1000, ONLY_FULL)):
        at = f'repair_{size(hosts)}'
        world = (f'{groups:,} groups of 5 at {hosts:,} hosts in racks of '
                 f'40, 5% violating')
        _add('repair', f'{at}_violations',
             f'violations before the repair ({world})', '', runs)
        _add('repair', f'{at}_planner_moves',
             f'moves of the planner\'s plan ({world})', '', runs)
        _add('repair', f'{at}_greedy_moves',
             f'moves of the greedy baseline, one violating server at a '
             f'time to the first passing host ({world})', '', runs)
        _add('repair', f'{at}_planner_s',
             f'seconds of planning, as a user waits for the plan ({world})',
             ' s', runs)
        _add('repair', f'{at}_greedy_s',
             f'seconds of the greedy baseline ({world})', ' s', runs)
        _add('repair', f'{at}_repaired',
             f'the plan ends every violation ({world})', '', runs)
        _add('repair', f'{at}_no_more_moves_than_greedy',
             f'the plan uses no more moves than greedy ({world})', '', runs)


# -- P7: resilience ---------------------------------------------------------

def _resilience() -> None:
    command = ('nova-scoped-policies resilience as a whole process, start '
               'to exit')
    for hosts, runs in ((360, ONLY_SMOKE), (5000, NOT_SMOKE)):
        at = f'res_{size(hosts)}'
        world = f'the cloud world of P3 at {hosts:,} hosts'
        n1 = f'N-1 over racks, {world}'
        for key, what in (('cases', 'cases'), ('survived', 'cases survived'),
                          ('groups_at_risk', 'groups at risk')):
            _add('resilience', f'{at}_n1_racks_{key}', f'{n1}: {what}', '',
                 runs)
        if SMOKE not in runs:
            _add('resilience', f'{at}_n1_racks_default_s',
                 f'{n1}, the default workers (one per core): {command}',
                 ' s', runs)
        for sweep, label, count in (('n1_racks', 'racks', 1),
                                    ('n2_zones', 'zones', 2)):
            what = f'N-{count} over {label}, {world}'
            # --quick: N-1 only
            which = runs if count == 1 else runs - {QUICK}
            # the 1-worker run and the ratios: in a full run only
            full = which & ONLY_FULL
            _add('resilience', f'{at}_{sweep}_inproc_s',
                 f'{what}, --workers 0 (the reference): {command}', ' s',
                 which)
            _add('resilience', f'{at}_{sweep}_inproc_sweep_s',
                 f'{what}, --workers 0: the sweep\'s own seconds (the '
                 'report\'s)', ' s', which)
            _add('resilience', f'{at}_{sweep}_reports_equal',
                 f'{what}: every report, whatever the workers, is the '
                 '--workers 0 one but for its seconds', '', which)
            for workers in (1, 2) if full else (2,):
                shown = full if workers == 1 else which
                _add('resilience', f'{at}_{sweep}_{workers}w_s',
                     f'{what}, --workers {workers}: {command}', ' s', shown)
                _add('resilience', f'{at}_{sweep}_{workers}w_sweep_s',
                     f'{what}, --workers {workers}: the sweep\'s own '
                     'seconds (the report\'s: the workers started, every '
                     'case)', ' s', shown)
            if not full:
                continue
            _add('resilience', f'{at}_{sweep}_wait_speedup',
                 f'{what}: --workers 1 over --workers 2, as a user waits '
                 '(the same world, command and machine)', 'x', full)
            _add('resilience', f'{at}_{sweep}_sweep_speedup',
                 f'{what}: --workers 1 over --workers 2, the sweep\'s own '
                 'seconds', 'x', full)


# -- P8: export -------------------------------------------------------------

def _export() -> None:
    real = ('a real Placement (SQLite, served over HTTP by processes of '
            'its own), racks of 40, 20 servers a host')
    for hosts, runs, before in ((20, ONLY_SMOKE, True),
                                (1000, NOT_SMOKE | {BIG}, True),
                                (5000, ONLY_FULL, False),
                                (50000, frozenset((BIG,)), False)):
        at = f'export_{size(hosts)}'
        where = f'{hosts:,} hosts of {real}'
        _add('export', f'{at}_calls',
             f'Placement calls of GET /export\'s reader ({where})', '', runs)
        _add('export', f'{at}_s',
             f'seconds of that reader, --workers calls at a time ({where})',
             ' s', runs)
        _add('export', f'{at}_calls_before',
             f'Placement calls of the reader before P8 ({where}; counted '
             f'when it runs, else 3 a host, 1 a server, 1 an aggregate and '
             f'1 for the providers)', '', runs)
        if before:
            _add('export', f'{at}_s_before',
                 f'seconds of the reader before P8, one call at a time '
                 f'({where})', ' s', runs)
            _add('export', f'{at}_same_export',
                 f'both readers write the same scenario bytes ({where})', '',
                 runs)
        else:
            _add('export', f'{at}_s_before_estimated',
                 f'seconds the reader before P8 would take, at the rate '
                 f'measured at the largest size it ran at ({where})', ' s',
                 runs)


SUITES = ('filters', 'request_filters', 'simulator', 'concurrency',
          'stacks', 'repair', 'resilience', 'export')
"""Every suite, in the order ``python -m benchmarks all`` runs them."""
PREFIXES = ('filters_', 'rf_', 'sim_', 'conc_', 'stacks_', 'repair_',
            'res_', 'export_')
"""What every key of each suite starts with."""
KEY = (r'(?:filters_(?:\d+k?|host)|rf|sim|conc|stacks|'
       r'(?:repair|res|export)_\d+k?)_[a-z0-9_]+')
"""A word of the docs (in backquotes) that matches this names a figure
(``export_workers`` and ``repair_time_limit``, options, do not)."""

for _declare in (_filters, _request_filters, _simulator, _concurrency,
                 _stacks, _repair, _resilience, _export):
    _declare()
