"""The policy service's side of :mod:`nova_scoped_policies.stacks.service`:
the world from Placement and the store (:mod:`.world`), holds in Placement
(:mod:`nova_scoped_policies.placement.holds`), records in the stack store.
The decide, hold, decide-again loop is the core's, shared with the
simulator."""

import datetime
import logging
import typing

from nova_scoped_policies.api import world as world_mod
from nova_scoped_policies.conf import api as api_conf
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import errors
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service as stack_service
from nova_scoped_policies.stacks import solver

LOG = logging.getLogger(__name__)


class Source:
    """What a decision reads: Placement's free capacity, the stored
    scopes, the caller's existing servers and groups."""

    def __init__(self, service, project_id: str, admin: bool) -> None:
        self.service = service
        self.project_id = project_id
        self.admin = admin

    def world(self, stack: model.Stack,
              deadline: typing.Optional[Deadline] = None) -> solver.World:
        return world_mod.build(self.service, stack, self.project_id,
                               self.admin, deadline)


class Holder:
    """Holds a decision with one atomic ``POST /allocations``, its record
    stored first (``holding``): a hold in Placement never exists without
    its record.

    Placement refuses (409): the record goes, decide again. Placement
    answers another error or the connection is cut: the holds it may have
    written are deleted at once (a compensating ``DELETE`` per consumer);
    when that fails too or the call timed out (a silent Placement, where
    the write may still land), the record stays ``holding`` until its
    deadline (twice a call's bound) and the reaper releases it. Either
    way the request answers 503 and nothing half is shown.

    :param service: the policy service (Placement, configuration).
    :param store: the stack store.
    :param document: the stack document as given (stored).
    """

    def __init__(self, service, store: stack_db.StackStore, document: dict,
                 project_id: str, user_id: str) -> None:
        self.placement = service.placement
        self.store = store
        self.document = document
        self.project_id = project_id
        self.user_id = user_id
        connect, read = api_conf.timeouts(service.conf)
        self.deadline = 2 * (connect + read)

    def hold(self, stack: model.Stack, decision: solver.Decision,
             world: solver.World) -> holds.Hold:
        resources = stack_service.held_resources(stack, decision, world)
        now = _now()
        held = holds.new(resources, self.project_id, self.user_id,
                         now + datetime.timedelta(seconds=self.deadline))
        self.store.create(stack_db.held_record(
            held.id, stack.name, self.document, held, stack.lease_seconds,
            decision.seconds, decision.assignments, resources,
            status=stack_db.HOLDING))
        try:
            holds.write(self.placement, held, resources)
        except holds.RedecideError:
            self.store.delete(held.id, holding=True)
            LOG.info('Stack %s: Placement refused the hold; deciding again',
                     stack.name)
            raise stack_service.Taken()
        except pc.PlacementError as exc:
            raise errors.Unavailable(
                'cannot hold the decision: Placement answered '
                f'{exc}; {self._undo(held, exc)}') from exc
        held.expires_at = now + datetime.timedelta(
            seconds=stack.lease_seconds)
        return held

    def _undo(self, held: holds.Hold, exc: pc.PlacementError) -> str:
        """Release what an unclear answer may have held; say what
        became of it."""
        if 400 <= exc.status < 500:   # Placement refused: nothing written
            self.store.delete(held.id, holding=True)
            return 'nothing is held'
        if not exc.timed_out:
            try:
                holds.release(self.placement, held)
            except pc.PlacementError as again:
                LOG.warning('Stack decision %s: the holds Placement may '
                            'have written are not released yet (%s); the '
                            'reaper will', held.id, again)
            else:
                self.store.delete(held.id, holding=True)
                return 'nothing is held'
        LOG.warning('Stack decision %s: Placement did not answer its holds '
                    '(%s); the reaper releases whatever was written after '
                    '%.0f s', held.id, exc, self.deadline)
        return ('whatever Placement may have written is released within '
                f'{self.deadline:.0f} seconds')

    def release(self, held: holds.Hold) -> None:
        try:
            holds.release(self.placement, held)
        except pc.PlacementError as exc:
            LOG.warning('Stack decision %s: holds not released yet (%s); '
                        'the reaper will', held.id, exc)
            return
        try:
            self.store.delete(held.id, holding=True)
        except stack_db.Gone:
            pass


class Recorder:
    """Makes a held decision ``reserved`` in the stack store (the record
    was written before its holds, see :class:`Holder`)."""

    def __init__(self, store: stack_db.StackStore) -> None:
        self.store = store

    def record(self, stack: model.Stack, decision: solver.Decision,
               world: solver.World,
               held: holds.Hold) -> stack_db.StackRecord:
        try:
            return self.store.held(held.id, held.expires_at)
        except stack_db.Gone:
            # Placement answered after the record's deadline: the reaper
            # gave the decision up; the core releases the late holds
            raise errors.Unavailable(
                'cannot hold the decision: Placement answered '
                'too late; nothing is held') from None


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
