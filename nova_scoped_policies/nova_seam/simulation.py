"""What the simulator needs of nova's scheduler beyond its public API.

The simulator (``nova_scoped_policies/simulator/``) runs nova's filter and
weight handlers, its ``resources_from_request_spec`` and our plugins in
one process, without nova-scheduler's ``SchedulerManager``. Where it has to
do what nova-scheduler does internally, it calls these functions; each
says which nova internal it stands in for. :func:`check` compares them with
the nova release they were written for.
"""

import contextlib
import typing

from nova_scoped_policies.nova_seam import checks

CONSUME = 'nova.scheduler.host_manager.HostState._locked_consume_from_request'


def check() -> None:
    """Raise :class:`checks.UnknownNova` unless nova's HostState and
    ResourceRequest are the ones these functions were written for."""
    from nova.scheduler import host_manager
    from nova.scheduler import utils as nova_utils
    checks.expect(CONSUME, getattr(host_manager.HostState,
                                   '_locked_consume_from_request', None),
                  ('self', 'spec_obj'))
    request = nova_utils.ResourceRequest()
    if not hasattr(request, '_limit'):
        raise checks.UnknownNova(
            'nova.scheduler.utils.ResourceRequest has no _limit: '
            f'nova-scoped-policies was written for {checks.WRITTEN_FOR}')


def consume(host_state, spec_obj) -> None:
    """Update ``host_state`` for an instance of ``spec_obj`` placed on it.

    nova's ``SchedulerManager._consume_selected_host`` calls
    ``HostState.consume_from_request``, which takes the HostState's lock
    and stamps ``updated``; the simulator runs one request at a time and
    remakes HostStates by version, so it calls what is under the lock,
    ``_locked_consume_from_request`` (RAM, disk, vCPUs, I/O ops, instance
    counts, NUMA and PCI of the host).
    """
    host_state._locked_consume_from_request(spec_obj)


def unlimited(resource_request):
    """``resource_request`` without the ``limit`` of its Placement query.

    nova's ``resources_from_request_spec`` drops the limit itself
    (``res_req._limit = None``) when the request names a host or node,
    since Placement must then list every provider of the tree; the
    simulator asks for a single host's tree the same way, so it drops it
    too. ResourceRequest has no public setter for it.

    :returns: ``resource_request``.
    """
    resource_request._limit = None
    return resource_request


@contextlib.contextmanager
def scheduler_states(states) -> typing.Iterator[None]:
    """Our filters' and weighers' process-wide request state
    (``nova_scoped_policies.scheduler.state.STATES``) is ``states`` inside
    the block, and what it was after it."""
    from nova_scoped_policies.scheduler import state
    saved = state.STATES
    state.STATES = states
    try:
        yield
    finally:
        state.STATES = saved


@contextlib.contextmanager
def overrides(conf, values: typing.Mapping[str, typing.Mapping[
        str, typing.Any]]) -> typing.Iterator[None]:
    """nova.conf as a scenario sets it: ``values`` maps a group
    (``scoped_policies``, ``filter_scheduler``...) to its options, set with
    oslo.config overrides inside the block and cleared after it."""
    done = []
    try:
        for group, options in values.items():
            for key, value in options.items():
                conf.set_override(key, value, group)
                done.append((key, group))
        yield
    finally:
        for key, group in reversed(done):
            conf.clear_override(key, group)
