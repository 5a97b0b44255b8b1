"""The policy service's side of :mod:`nova_scoped_policies.stacks.service`:
the world from Placement and the store (:mod:`.world`), holds in Placement
(:mod:`nova_scoped_policies.placement.holds`), records in the stack store.
The decide, hold, decide-again loop is the core's, shared with the
simulator."""

import logging
import uuid as uuidlib

import webob.exc

from nova_scoped_policies.api import world as world_mod
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
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

    def world(self, stack: model.Stack) -> solver.World:
        return world_mod.build(self.service, stack, self.project_id,
                               self.admin)


class Holder:
    """Holds a decision with one atomic ``POST /allocations``."""

    def __init__(self, placement: pc.PlacementClient, project_id: str,
                 user_id: str) -> None:
        self.placement = placement
        self.project_id = project_id
        self.user_id = user_id

    def hold(self, stack: model.Stack, decision: solver.Decision,
             world: solver.World) -> holds.Hold:
        try:
            return holds.hold(
                self.placement,
                stack_service.held_resources(stack, decision, world),
                self.project_id, self.user_id, stack.lease_seconds)
        except holds.RedecideError:
            LOG.info('Stack %s: Placement refused the hold; deciding again',
                     stack.name)
            raise stack_service.Taken()
        except pc.PlacementError as exc:
            raise webob.exc.HTTPServiceUnavailable(
                explanation=f'cannot hold the decision: Placement answered '
                f'{exc}')

    def release(self, held: holds.Hold) -> None:
        holds.release(self.placement, held)


class Recorder:
    """Records a held decision in the stack store."""

    def __init__(self, store: stack_db.StackStore, document: dict,
                 project_id: str, user_id: str) -> None:
        self.store = store
        self.document = document
        self.project_id = project_id
        self.user_id = user_id

    def record(self, stack: model.Stack, decision: solver.Decision,
               world: solver.World,
               held: holds.Hold) -> stack_db.StackRecord:
        return self.store.create(stack_db.held_record(
            str(uuidlib.uuid4()), stack.name, self.document, held,
            stack.lease_seconds, decision.seconds, decision.assignments,
            stack_service.held_resources(stack, decision, world)))
