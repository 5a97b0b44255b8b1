"""The one way a stack is decided, by the request's deadline: the world's
read, the solver (what is left, less the hold's share), the hold and the
record all spend it; a decision cut short is not found in time, never
infeasible."""

import time

import pytest

from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import deadline as deadline_mod
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service
from nova_scoped_policies.stacks import solver
from nova_scoped_policies.topology import Topology
from nova_scoped_policies.topology.model import Domain
from nova_scoped_policies.topology.model import Scope

STACK = model.parse({'stack': {'name': 's', 'group': {
    'name': 'g', 'policies': ['anti-affinity:host'],
    'servers': {'count': 2, 'flavor': {'resources': {'VCPU': 1}}}}}})


def _world():
    hosts = tuple(solver.HostState(f'h{i}', f'rp-{i}', {'VCPU': 4})
                  for i in range(3))
    return solver.World(hosts, Topology([Scope('rack')], [Domain(
        'rack-0', 'rack-0', 'rack', frozenset(h.name for h in hosts))]))


class Clock:
    """The deadlines' clock (``time`` in the deadline module), moved by
    hand: a phase "takes" seconds without sleeping."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


class Source:
    """A world read that takes ``spends`` seconds of ``clock``."""

    def __init__(self, clock=None, spends=0.0):
        self.clock = clock
        self.spends = spends
        self.deadlines = []

    def world(self, stack, deadline):
        self.deadlines.append(deadline)
        if self.clock is not None:
            self.clock.now += self.spends
        return _world()


class Holder:
    def __init__(self):
        self.held = []

    def hold(self, stack, decision, world):
        self.held.append(decision)
        return decision

    def release(self, held):
        self.held.remove(held)


class Recorder:
    def record(self, stack, decision, world, held):
        return 'record'


def test_a_decision_within_the_deadline_is_held_and_recorded(monkeypatch):
    seen = []
    real = solver.decide

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)
    monkeypatch.setattr(solver, 'decide', spy)
    source, holder = Source(), Holder()
    deadline = Deadline.wall(10.0)
    outcome = service.decide_and_hold(STACK, source, holder, Recorder(),
                                      deadline=deadline, gap=0.2)
    assert outcome.record == 'record' and holder.held
    assert source.deadlines == [deadline]
    [asked] = seen
    # the solver ends the hold's share of the limit before the deadline
    assert asked['deadline'].at == pytest.approx(
        deadline.at - 10.0 * service.HOLD_SHARE)
    assert asked['gap'] == 0.2


def test_reading_the_cloud_past_the_limit_is_not_found_in_time(
        monkeypatch):
    """The world's read took the whole limit: no decision, nothing held,
    and the answer says the stack may still fit."""
    def no(*args, **kwargs):
        raise AssertionError('decided past the deadline')
    monkeypatch.setattr(solver, 'decide', no)
    clock = Clock()
    monkeypatch.setattr(deadline_mod, 'time', clock)
    holder = Holder()
    with pytest.raises(service.NotFoundInTime) as caught:
        service.decide_and_hold(STACK, Source(clock, spends=9.5), holder,
                                Recorder(), deadline=Deadline.wall(10.0))
    assert caught.value.reason.startswith(deadline_mod.NOT_FOUND)
    # 9.5 s of 10: less than the hold's share of the limit was left
    assert caught.value.reason == ('not found within the limit: may still '
                                   'fit (10 s; 9.5 s spent reading the '
                                   'cloud)')
    assert not holder.held


def test_a_search_cut_short_is_not_called_infeasible(monkeypatch):
    monkeypatch.setattr(solver, 'decide', lambda *a, **k: solver.Decision(
        False, {}, deadline_mod.not_found(k['deadline']), stop=solver.LIMIT,
        timed_out=True))
    with pytest.raises(service.NotFoundInTime) as caught:
        service.decide_and_hold(STACK, Source(), Holder(), Recorder(),
                                deadline=Deadline.work(3.0))
    assert not isinstance(caught.value, service.Infeasible)
    assert caught.value.reason == ('not found within the limit: may still '
                                   'fit (3 s of solver work)')


def test_a_refusal_is_infeasible():
    big = model.parse({'stack': {'name': 's', 'group': {
        'name': 'g', 'policies': ['anti-affinity:host'],
        'servers': {'count': 4, 'flavor': {'resources': {'VCPU': 1}}}}}})
    with pytest.raises(service.Infeasible):
        service.decide_and_hold(big, Source(), Holder(), Recorder(),
                                deadline=Deadline.wall(10.0))


def test_deterministic_work_is_never_past():
    deadline = Deadline.work(0.5)
    assert deadline.deterministic and not deadline.past()
    assert deadline.left() == 0.5 and deadline.spent() == 0.0
    assert deadline.before(100.0) is deadline


def test_wall_time_runs_from_its_start():
    started = time.monotonic() - 4.0
    deadline = Deadline.wall(5.0, started)
    assert not deadline.deterministic and not deadline.past()
    assert 0 < deadline.left() <= 1.0
    assert deadline.before(2.0).past()
    assert Deadline.wall(5.0, started - 2.0).left() == 0.0


def test_the_hold_keeps_its_share_or_more_for_a_big_stack():
    big = model.parse({'stack': {'name': 's', 'group': {
        'name': 'g', 'servers': {'count': 1000, 'flavor': {
            'resources': {'VCPU': 1}}}}}})
    deadline = Deadline.wall(10.0)
    assert service.reserve(STACK, deadline) == 10.0 * service.HOLD_SHARE
    assert service.reserve(big, deadline) == pytest.approx(
        1000 * service.HOLD_PER_SERVER)
