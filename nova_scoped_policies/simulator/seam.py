"""What the simulator needs of nova's scheduler that nova's public API does
not give: every private nova name the simulator touches, and the
process-wide state it swaps to run nova-scheduler's code in-process.

THESE BELONG TO ``nova_scoped_policies/nova_seam/`` (issue #35: one
package owns every touch of nova's internals) and move there with it;
nothing else in the simulator reads or writes a private nova name.

- :func:`consume`: ``HostState._locked_consume_from_request``.
- :func:`unlimited`: ``ResourceRequest._limit``.
- :func:`options`: ``CONF.set_override`` of nova's ``[filter_scheduler]``
  and ours, restored after.
- :func:`request_states`: the scheduler plugins' process-wide
  ``state.STATES``, swapped for the simulation's.
"""

import contextlib
import typing

from oslo_config import cfg

from nova_scoped_policies.scheduler import state

CONF = cfg.CONF


def consume(host_state, spec) -> None:
    """nova's ``_consume_selected_host``, without the lock and the
    timestamp of ``consume_from_request``: one thread runs the simulated
    scheduler, and its HostStates are made again by version."""
    host_state._locked_consume_from_request(spec)


def unlimited(request) -> None:
    """No ``limit`` in the query of a nova ``ResourceRequest``, as nova
    does for a request of several nodes."""
    request._limit = None


@contextlib.contextmanager
def options(groups: typing.Mapping[str, typing.Mapping[str, object]]):
    """oslo.config overrides (group -> option -> value) while the block
    runs; cleared after."""
    try:
        for group, values in groups.items():
            for key, value in values.items():
                CONF.set_override(key, value, group)
        yield
    finally:
        for group, values in groups.items():
            for key in values:
                CONF.clear_override(key, group)


@contextlib.contextmanager
def request_states(states: 'state.RequestStates'):
    """The scheduler plugins read ``states`` while the block runs (the
    simulation's members, aggregates and policy store); the process's
    own after."""
    saved = state.STATES
    state.STATES = states
    try:
        yield
    finally:
        state.STATES = saved
