"""``/stacks`` (microversion 1.1): one joint decision for a whole stack,
held in Placement under a lease (the stack document:
doc/source/user/stacks.rst).

POST decides, holds and records through the one stacks service
(:func:`nova_scoped_policies.stacks.service.decide_and_hold`, with the
adapters of :mod:`nova_scoped_policies.api.decisions`): one joint decision
over what Placement says is free, held in one atomic ``POST /allocations``
and only then recorded; a 409 from Placement means the capacity moved
meanwhile: the service decides once more, then answers 409. The whole
request, from its start to its answer, keeps ``stack_time_limit`` (a
:class:`~nova_scoped_policies.stacks.deadline.Deadline` passed down to
the world's read, the solver, the hold and the record); a decision the
limit cut short with none found answers 409
``scoped_policies.stack_not_found_in_time`` ("may still fit"), never
``stack_infeasible``. Expired
leases are released by the reaper (:func:`reap`), which also runs before
each ``/stacks`` request that changes something; a read (GET, HEAD)
writes nothing: it tells a lease that ran out as ``expired`` at once,
before the reaper has released its holds
(:meth:`~nova_scoped_policies.db.stacks.StackRecord.phase_at`).
Microversion 1.2 tells a decision's phase
(``reserved``, ``expired``, ``live``, ``confirmed``) and audits a stack
(``GET /stacks/{id}/audit``).
"""

import datetime
import logging
import time

import webob

from nova_scoped_policies.api import audit
from nova_scoped_policies.api import decisions
from nova_scoped_policies.api import microversion
from nova_scoped_policies.api import policy as api_policy
from nova_scoped_policies.api.policies import scopes as scope_rules
from nova_scoped_policies.api.policies import stacks as rules
from nova_scoped_policies.api import quota
from nova_scoped_policies.api.schemas import stacks as schemas
from nova_scoped_policies.api import topologies
from nova_scoped_policies.api import util
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import stacks as stack_db
from nova_scoped_policies import errors
from nova_scoped_policies.notifications import payloads
from nova_scoped_policies.placement import client as pc
from nova_scoped_policies.placement import holds
from nova_scoped_policies import policy
from nova_scoped_policies.stacks.deadline import Deadline
from nova_scoped_policies.stacks import model
from nova_scoped_policies.stacks import service as stack_service
from nova_scoped_policies.stacks import solver

LOG = logging.getLogger(__name__)
VERSION = '1.1'
PHASES_VERSION = '1.2'
"""Statuses ``expired`` and ``live``, and ``GET /stacks/{id}/audit``."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _begin(req: webob.Request):
    """(context, service, stack store) of a ``/stacks`` request; 404
    before microversion 1.1, as Placement answers for newer routes.

    A request that changes something first releases the expired holds;
    when Placement does not answer them, it answers 503 at once (it
    would need Placement too). A read writes nothing: the reaper thread
    releases them (``stack_reap_interval``)."""
    if not microversion.require(req.environ, VERSION):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found.')
    context, service = util.env(req)
    store = stack_db.StackStore(service.store)
    if req.method not in ('GET', 'HEAD'):
        reap(service, store)
    return context, service, store


def _release(service, record: stack_db.StackRecord, names=None) -> list:
    """Give back the holds of ``names`` (all held when None)."""
    held = holds.Hold.of_record(record)
    names = list(held.consumers) if names is None else [
        n for n in names if n in held.consumers]
    try:
        holds.release(service.placement, held, names)
    except pc.PlacementError as exc:
        raise errors.Unavailable.placement('release the holds',
                                           exc) from exc
    return names


def reap(service, store: stack_db.StackStore) -> int:
    """Release the holds of every decision whose lease ran out, and of
    every decision whose holds Placement never confirmed (``holding``
    past its deadline: released, then its record deleted).

    :returns: how many decisions were released.
    :raises nova_scoped_policies.errors.Unavailable: Placement did not
        answer;
        the others wait for the next run (one call that times out per
        run, never one per decision).
    """
    done = 0
    for record in store.expired(_now()):
        held = holds.Hold.of_record(record)
        names = list(held.consumers)
        try:
            holds.release(service.placement, held)
        except pc.PlacementError as exc:
            LOG.warning('Stack %s: lease expired, holds not released yet: '
                        '%s', record.id, exc)
            if exc.status == 0:   # no answer: the others would wait too
                raise errors.Unavailable.placement(
                    'release expired holds', exc) from exc
            continue
        try:
            if record.status == stack_db.HOLDING:
                store.delete(record.id, holding=True)
                LOG.warning('Stack %s: Placement never confirmed its %d '
                            'holds; released them', record.id, len(names))
                done += 1
                continue
            record = store.update(record.id, status=stack_db.EXPIRED,
                                  servers=names, state=stack_db.RELEASED,
                                  only_from=stack_db.HELD, if_held=True)
        except stack_db.Gone:
            continue   # deleted meanwhile: its holds went with it
        if record.status != stack_db.EXPIRED:
            continue   # confirmed or booted meanwhile: nothing expired
        service.notifications.emit('stack.expire', payloads.of_stack(
            record, record.phase))
        LOG.info('Stack %s: lease expired, released %d holds', record.id,
                 len(names))
        done += 1
    return done


def sweep(service, store: stack_db.StackStore) -> int:
    """Give back every hold in Placement whose stack record is gone
    (``stack_sweep_interval``; see :func:`holds.orphans`).

    :returns: how many holds were given back.
    :raises pc.PlacementError: Placement failed.
    """
    released = holds.orphans(service.placement, store.known_consumers)
    if released:
        LOG.warning('Gave back %d holds of stack decisions no record '
                    'knows: %s', len(released), ', '.join(released))
    return len(released)


def _record(req, action: str) -> stack_db.StackRecord:
    """The decision of the URL if the caller may act on it: 404 for a
    caller of another project who may not see it (not disclosed), 403
    when it may not act."""
    context, _, store = req.environ['nsp.stacks']
    uuid = util.check_uuid(req.urlvars['id'], 'id')
    record = store.get(uuid)
    api_policy.authorize_on(context, action, rules.SHOW, record.project_id,
                            webob.exc.HTTPNotFound(
                                explanation=f'stack decision {uuid} not '
                                'found'))
    return record


def _status(record: stack_db.StackRecord, req) -> str:
    """The decision's phase now (:meth:`~.StackRecord.phase_at`); before
    microversion 1.2, only ``reserved`` and ``confirmed`` as then."""
    phase = record.phase_at(_now())
    if microversion.require(req.environ, PHASES_VERSION):
        return phase
    return stack_db.CONFIRMED if record.status == stack_db.CONFIRMED \
        else stack_db.RESERVED


def _view(record: stack_db.StackRecord, who: visibility.Viewer,
          req) -> dict:
    shown = visibility.Surrogates()
    return {
        'id': record.id, 'name': record.name,
        'project_id': record.project_id, 'status': _status(record, req),
        'lease_seconds': record.lease_seconds,
        'expires_at': record.expires_at.isoformat(),
        'seconds': round(record.seconds, 3),
        'servers': {name: {'host': s.host if who.real else shown[s.host],
                           'state': s.state,
                           'instance_uuid': s.instance_uuid}
                    for name, s in record.servers.items()},
        'hints': {name: {'scoped_plan': record.id,
                         'scoped_plan_member': name}
                  for name in record.servers},
        'document': record.document,
    }


def _render(req, record, status=200) -> webob.Response:
    return util.json_response(req, {'stack': _view(
        record, visibility.viewer(req), req)}, status=status)


def _infeasible(reason: str) -> webob.exc.HTTPConflict:
    exc = webob.exc.HTTPConflict(
        explanation=f'the stack does not fit: {reason}')
    exc.error_code = 'scoped_policies.stack_infeasible'
    return exc


def _not_found_in_time(reason: str) -> webob.exc.HTTPConflict:
    """409 as before (clients that read a 409 as "not decided" keep
    working), with a code of its own: the limit cut the search short, and
    the stack may still fit (a longer ``stack_time_limit`` may find it)."""
    exc = webob.exc.HTTPConflict(
        explanation=f'the stack was not decided: {reason}')
    exc.error_code = 'scoped_policies.stack_not_found_in_time'
    return exc


def create_stack(req: webob.Request) -> webob.Response:
    context, service, store = req.environ['nsp.stacks']
    context.can(rules.CREATE)
    data = util.extract_json(req, schemas.CREATE)
    try:
        stack = model.parse(data)
    except model.StackError as exc:
        raise webob.exc.HTTPBadRequest(explanation=str(exc))
    project, user = context.project_id, context.user_id or context.project_id
    admin = context.can(scope_rules.REAL_IDS, fatal=False)
    topology = topologies.stored(service.store)
    try:
        stack = model.with_real_ids(stack, topology, project)
    except policy.PolicyError as exc:
        raise util.bad_policy(exc)
    quota.check_decision(service, store, project,
                         (s.flavor.resources for s in stack.servers))
    options = service.conf.scoped_policies_api
    try:
        outcome = stack_service.decide_and_hold(
            stack, decisions.Source(service, project, admin),
            decisions.Holder(service, store, data, project, user),
            decisions.Recorder(store), workers=options.stack_workers,
            deadline=Deadline.wall(options.stack_time_limit,
                                   req.environ.get('nsp.started')),
            gap=options.stack_relative_gap)
    except model.StackError as exc:
        raise webob.exc.HTTPBadRequest(explanation=visibility.in_own_words(
            visibility.viewer(req), topology, str(exc)))
    except solver.SolverUnavailable as exc:
        raise webob.exc.HTTPNotImplemented(explanation=str(exc))
    except stack_service.Infeasible as exc:
        # the solver reads real ids; the tenant reads back its own
        raise _infeasible(visibility.in_own_words(
            visibility.viewer(req), topology, exc.reason))
    except stack_service.NotFoundInTime as exc:
        raise _not_found_in_time(exc.reason)
    record = outcome.record
    try:
        quota.check_held(service, store, record)
    except webob.exc.HTTPForbidden:   # another decision passed meanwhile
        _release(service, record)
        store.delete(record.id)
        raise
    service.notify(req, 'stack.decide', payloads.of_stack(record,
                                                          record.phase))
    body = {'stack': _view(record, visibility.viewer(req), req)}
    # the decision just made: proven best for the soft policies (or
    # nothing to improve), or cut short by the limit or the gap
    body['stack']['optimal'] = outcome.decision.optimal
    return util.json_response(req, body, status=201)


def list_stacks(req: webob.Request) -> webob.Response:
    context, service, store = req.environ['nsp.stacks']
    context.can(rules.LIST)
    everyone = util.query_flag(req, 'all_projects')
    if everyone:
        context.can(rules.LIST_ALL)
    who = visibility.viewer(req)
    records = store.list(None if everyone else context.project_id)
    return util.json_response(req, {'stacks': [_view(r, who, req)
                                               for r in records]})


def show_stack(req: webob.Request) -> webob.Response:
    return _render(req, _record(req, rules.SHOW))


def delete_stack(req: webob.Request) -> webob.Response:
    context, service, store = req.environ['nsp.stacks']
    record = _record(req, rules.DELETE)
    _release(service, record)
    store.delete(record.id)
    service.notify(req, 'stack.delete', payloads.of_stack(record,
                                                          'deleted'))
    return util.json_response(req, None, status=204)


def stack_action(req: webob.Request) -> webob.Response:
    context, service, store = req.environ['nsp.stacks']
    data = util.extract_json(req, schemas.ACTION)
    if 'renew' in data:
        record = _record(req, rules.RENEW)
        quota.check_held(service, store, record, renewing=True)
        seconds = (data['renew'] or {}).get('lease_seconds',
                                            record.lease_seconds)
        record = store.update(record.id, expires_at=_now() +
                              datetime.timedelta(seconds=seconds))
    elif 'confirm' in data:
        record = _record(req, rules.CONFIRM)
        names = _release(service, record)
        record = store.update(record.id, status=stack_db.CONFIRMED,
                              servers=names, state=stack_db.RELEASED,
                              only_from=stack_db.HELD)
        service.notify(req, 'stack.confirm', payloads.of_stack(
            record, record.phase))
    else:
        record = _record(req, rules.BOOT_MEMBER)
        name = data['boot_member']['name']
        if name not in record.servers:
            raise webob.exc.HTTPNotFound(
                explanation=f'boot_member.name: {name[:64]}: no such server '
                'in the stack')
        _release(service, record, [name])
        record = store.boot(record.id, name,
                            data['boot_member'].get('instance_uuid'))
    return _render(req, record)


def audit_stack(req: webob.Request) -> webob.Response:
    """``GET /stacks/{id}/audit`` (microversion 1.2): each policy and
    relationship of the stack with its status and violations."""
    if not microversion.require(req.environ, PHASES_VERSION):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found.')
    context, service, store = req.environ['nsp.stacks']
    record = _record(req, rules.AUDIT)
    who = visibility.viewer(req)
    read = audit.read_stack(service, record)
    found = audit.stack(read, who)
    # operators read the violations in real identifiers
    real = found if who.real else audit.stack(
        read, visibility.Viewer(True, None))
    if real.violations:
        service.notify(req, 'scoped_policy.violation',
                       payloads.of_violations('stack', record.id,
                                              record.project_id,
                                              real.violations))
    return util.json_response(req, {'stack_audit': dict(
        found.to_dict(), stack_id=record.id)})


def stacks_route(handler):
    """Wrap a handler: microversion check, reaper, then the handler."""
    def wrapped(req):
        # a stack decision's time limit runs from here (the reaper too)
        req.environ.setdefault('nsp.started', time.monotonic())
        req.environ['nsp.stacks'] = _begin(req)
        return handler(req)
    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped
