"""Holds of a stack decision in Placement, under a lease.

A decision (server name -> resource provider and resources, for one
project and user) is held by one *hold consumer* per server: allocations
written in ONE atomic ``POST /allocations`` (microversion 1.38, so each
consumer carries our ``consumer_type``), all or nothing. Placement has no
notion of time: the lease is our bookkeeping (:class:`Hold` records, kept
by the policy service), and a reaper releases the holds whose lease ran
out. Renewing therefore changes no allocation in Placement.
"""

import dataclasses
import datetime
import typing
import uuid

from nova_scoped_policies.placement import client as pc

#: our consumer type; Placement requires ``^[A-Z0-9_]+$``.
CONSUMER_TYPE = 'SCOPED_POLICY_HOLD'
#: consumer types need 1.38.
HOLD_VERSION = '1.38'
#: the first 8 hex digits of every hold consumer uuid: a sweep over the
#: providers' allocations tells our consumers from instances without
#: asking Placement about each (:func:`orphans`).
CONSUMER_PREFIX = '5c0ab01d'


def _consumer() -> str:
    """A new hold consumer uuid: random (version 4) but for
    :data:`CONSUMER_PREFIX`."""
    return str(uuid.UUID(CONSUMER_PREFIX + uuid.uuid4().hex[8:]))


def is_hold_consumer(consumer: str) -> bool:
    """Whether ``consumer`` may be a hold (its uuid's prefix; Placement's
    ``consumer_type`` says for sure)."""
    return consumer.replace('-', '').lower().startswith(CONSUMER_PREFIX)


class HoldError(Exception):
    """A hold could not be written or released."""


class RedecideError(HoldError):
    """Placement refused the hold (409): capacity was taken meanwhile or a
    consumer changed. Decide again from fresh usages. The message names
    only the servers of this decision, never other tenants."""

    def __init__(self, servers: typing.Iterable[str]) -> None:
        self.servers = tuple(sorted(servers))
        super().__init__('the decision no longer fits in Placement '
                         f'(servers: {", ".join(self.servers)}): '
                         're-decide')


@dataclasses.dataclass(frozen=True)
class Placed:
    """Where one server of a decision goes."""
    provider: str
    resources: typing.Dict[str, int]


@dataclasses.dataclass
class Hold:
    """The lease record of one held decision (plain data).

    :param id: the hold's uuid.
    :param project_id: the tenant's project.
    :param user_id: the tenant's user.
    :param consumers: server name -> hold consumer uuid (still held).
    :param expires_at: end of the lease, UTC.
    """
    id: str
    project_id: str
    user_id: str
    consumers: typing.Dict[str, str]
    expires_at: datetime.datetime

    @classmethod
    def of_record(cls, record) -> 'Hold':
        """What a stored decision (``db.stacks.StackRecord``) still
        holds."""
        return cls(record.id, record.project_id, record.user_id,
                   record.held, record.expires_at)

    def to_dict(self) -> dict:
        return {'id': self.id, 'project_id': self.project_id,
                'user_id': self.user_id, 'consumers': dict(self.consumers),
                'expires_at': self.expires_at.isoformat()}

    @classmethod
    def from_dict(cls, data: dict) -> 'Hold':
        return cls(id=data['id'], project_id=data['project_id'],
                   user_id=data['user_id'],
                   consumers=dict(data['consumers']),
                   expires_at=datetime.datetime.fromisoformat(
                       data['expires_at']))


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _lease(seconds: float, now=None) -> datetime.datetime:
    if seconds <= 0:
        raise ValueError('lease_seconds: must be positive')
    return (now or _now()) + datetime.timedelta(seconds=seconds)


def _placed(value) -> Placed:
    if isinstance(value, Placed):
        return value
    provider, resources = value
    return Placed(provider, dict(resources))


def new(decision: typing.Mapping[str, typing.Any], project_id: str,
        user_id: str, expires_at: datetime.datetime,
        id: typing.Optional[str] = None) -> Hold:
    """The record of a hold not written yet: one new consumer uuid per
    server of ``decision`` (so that it can be stored before the holds
    exist, see :func:`write`)."""
    if not decision:
        raise ValueError('decision: no server to hold')
    return Hold(id or str(uuid.uuid4()), project_id, user_id,
                {name: _consumer() for name in decision}, expires_at)


def write(placement: pc.PlacementClient, record: Hold,
          decision: typing.Mapping[str, typing.Any]) -> Hold:
    """Write the holds of ``record`` in one atomic ``POST /allocations``.

    :param decision: server name -> :class:`Placed` or
        ``(provider uuid, {resource class: amount})``; the same servers as
        ``record.consumers``.
    :raises RedecideError: Placement answered 409; nothing is held.
    :raises PlacementError: any other failure; whether anything is held
        is unknown unless Placement answered (``status`` not 0).
    """
    body = {}
    for name, value in decision.items():
        placed = _placed(value)
        body[record.consumers[name]] = {
            'allocations': {placed.provider: {
                'resources': dict(placed.resources)}},
            'project_id': record.project_id, 'user_id': record.user_id,
            'consumer_generation': None,
            'consumer_type': CONSUMER_TYPE}
    try:
        placement.request('POST', '/allocations', body,
                          version=HOLD_VERSION)
    except pc.PlacementError as exc:
        if exc.status == 409:
            raise RedecideError(decision) from None
        raise
    return record


def hold(placement: pc.PlacementClient,
         decision: typing.Mapping[str, typing.Any],
         project_id: str, user_id: str, lease_seconds: float,
         now: typing.Optional[datetime.datetime] = None) -> Hold:
    """Hold a whole decision in one atomic ``POST /allocations``
    (:func:`new`, then :func:`write`).

    :param placement: our Placement client.
    :param decision: server name -> :class:`Placed` or
        ``(provider uuid, {resource class: amount})``.
    :param project_id: the tenant's project (holds count in its usages).
    :param user_id: the tenant's user.
    :param lease_seconds: how long the hold lives unless renewed.
    :raises RedecideError: Placement answered 409; nothing is held.
    """
    record = new(decision, project_id, user_id,
                 _lease(lease_seconds, now))
    return write(placement, record, decision)


def release(placement: pc.PlacementClient, record: Hold,
            servers: typing.Optional[typing.Iterable[str]] = None) -> Hold:
    """Delete the allocations of the hold consumers of ``servers`` (all
    when None). Idempotent: a consumer already gone is fine.

    :returns: the record with the released servers removed.
    """
    names = list(record.consumers) if servers is None else list(servers)
    for name in names:
        consumer = record.consumers.get(name)
        if consumer is None:
            continue
        placement.request('DELETE', f'/allocations/{consumer}',
                          version=HOLD_VERSION, ok=(204, 404))
        del record.consumers[name]
    return record


def confirm(placement: pc.PlacementClient, record: Hold,
            booted: typing.Iterable[str]) -> Hold:
    """The stack is built: release what was never booted.

    Booted members' holds were already given back as nova claimed them
    (the request filter of the boot path); anything left of a booted
    member is released too, so a confirmed hold holds nothing.
    """
    del booted  # every remaining consumer goes, booted or not
    return release(placement, record)


def renew(record: Hold, lease_seconds: float,
          now: typing.Optional[datetime.datetime] = None
          ) -> datetime.datetime:
    """Extend the lease; returns the new expiry.

    Placement needs no change: allocations have no time in Placement, the
    lease lives only in our record, which the reaper reads.
    """
    record.expires_at = _lease(lease_seconds, now)
    return record.expires_at


def expired(records: typing.Iterable[Hold],
            now: typing.Optional[datetime.datetime] = None
            ) -> typing.List[Hold]:
    """The records whose lease has run out at ``now``."""
    now = now or _now()
    return [r for r in records if r.expires_at <= now]


def reap(placement: pc.PlacementClient, records: typing.Iterable[Hold],
         now: typing.Optional[datetime.datetime] = None
         ) -> typing.List[Hold]:
    """Release every expired hold; returns the records released."""
    done = []
    for record in expired(records, now):
        release(placement, record)
        done.append(record)
    return done


def orphans(placement: pc.PlacementClient,
            known: typing.Callable[[typing.AbstractSet[str]],
                                   typing.AbstractSet[str]]
            ) -> typing.List[str]:
    """Give back every hold consumer in Placement that no stack record
    knows (its record was deleted, or its write landed after the record
    was given up): one ``GET`` per resource provider, one per candidate.

    :param known: of some consumer uuids, those a stored decision still
        holds. Called after Placement was read: a hold is always recorded
        before it is written, so a hold seen in Placement and unknown then
        is an orphan.
    :returns: the consumers released.
    :raises PlacementError: Placement failed; the next sweep retries.
    """
    found: typing.Set[str] = set()
    for provider in placement.list_providers():
        allocations = placement.request(
            'GET', f'/resource_providers/{provider["uuid"]}/allocations'
        ).json()['allocations']
        found.update(c for c in allocations if is_hold_consumer(c))
    released = []
    for consumer in sorted(found - set(known(found))):
        resp = placement.request('GET', f'/allocations/{consumer}',
                                 version=HOLD_VERSION)
        if resp.json().get('consumer_type') != CONSUMER_TYPE:
            continue
        placement.request('DELETE', f'/allocations/{consumer}',
                          version=HOLD_VERSION, ok=(204, 404))
        released.append(consumer)
    return released
