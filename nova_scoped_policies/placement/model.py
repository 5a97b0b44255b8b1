"""What an in-memory Placement holds and decides, without HTTP.

Resource providers with generations, inventories, aggregates and traits;
consumers and their allocations; the providers an allocation candidates
query lists; claims that fit or conflict. :mod:`.fake` serves this model
over Placement's REST API (microversions, request parsing, status codes);
the simulator's fast engine reads and claims on it directly.

Errors name what went wrong, not an HTTP status: :class:`NotFound`,
:class:`Conflict` (a generation or capacity conflict), :class:`Invalid`
(a reference to something that does not exist). The REST layer maps them.

Single-provider candidates only: no nested or sharing providers.
"""

import collections
import dataclasses
import typing

import os_traits

Allocations = typing.Mapping[str, typing.Mapping[str, int]]
"""Provider uuid -> resource class -> amount."""

UNCHECKED = object()
"""A consumer generation not to check (microversions before 1.28)."""


class Error(Exception):
    """Something the model refuses; the message is Placement's."""


class NotFound(Error):
    pass


class Conflict(Error):
    pass


class Invalid(Error):
    pass


class GenerationConflict(Conflict):
    """A provider or consumer generation that is not the current one."""


class InUse(Conflict):
    """Inventory, a provider or a trait that allocations or providers
    still use."""


class DuplicateName(Conflict):
    """Another provider has the name."""


@dataclasses.dataclass(frozen=True)
class CandidateQuery:
    """A validated ``GET /allocation_candidates`` query.

    :param resources: resource class -> amount.
    :param required: traits the provider must have.
    :param forbidden: traits it must not have.
    :param member_in: aggregate sets; the provider must be in one of each.
    :param member_out: aggregates it must be in none of.
    :param limit: at most this many candidates (None: all).
    :param required_any: trait sets; the provider must have one of each
        (``required=in:``, microversion 1.39).
    """

    resources: typing.Mapping[str, int]
    required: typing.FrozenSet[str]
    forbidden: typing.FrozenSet[str]
    member_in: typing.Tuple[typing.FrozenSet[str], ...]
    member_out: typing.FrozenSet[str]
    limit: typing.Optional[int]
    required_any: typing.Tuple[typing.FrozenSet[str], ...] = ()


@dataclasses.dataclass
class Provider:
    uuid: str
    name: str
    generation: int = 0
    # Values, replaced whole and never changed in place (so providers
    # alike may share them): resource class -> total, reserved, min_unit,
    # max_unit, step_size, allocation_ratio; aggregates; traits
    inventories: typing.Mapping[str, dict] = dataclasses.field(
        default_factory=dict)
    aggregates: typing.FrozenSet[str] = frozenset()
    traits: typing.FrozenSet[str] = frozenset()

    def capacity(self, rc: str) -> int:
        inv = self.inventories[rc]
        return int((inv['total'] - inv['reserved'])
                   * inv['allocation_ratio'])

    def fits_one(self, rc: str, amount: int, used: int) -> bool:
        """Can ``amount`` of ``rc`` go here with ``used`` taken?"""
        inv = self.inventories.get(rc)
        if inv is None:
            return False
        if amount < inv['min_unit'] or amount > inv['max_unit'] or \
                amount % inv['step_size']:
            return False
        return used + amount <= self.capacity(rc)


@dataclasses.dataclass
class Consumer:
    """The allocations of one consumer (an instance, a held server)."""

    allocations: typing.Dict[str, typing.Dict[str, int]]
    project_id: str
    user_id: str
    generation: int
    type: str = 'INSTANCE'


@dataclasses.dataclass
class Write:
    """One consumer's new allocations (empty: remove them all)."""

    allocations: typing.Dict[str, typing.Dict[str, int]]
    project_id: str
    user_id: str
    type: str = 'INSTANCE'
    expected_generation: typing.Any = UNCHECKED
    """The consumer's current generation (None: a new consumer), or
    :data:`UNCHECKED`."""


MAX_INT = 0x7FFFFFFF
"""Placement's largest integer (its database's)."""
INVENTORY_DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': MAX_INT,
                      'step_size': 1, 'allocation_ratio': 1.0}
"""Placement's defaults of the fields an inventory leaves out (its
``handlers/inventory.py``)."""


def inventory(data: typing.Mapping[str, typing.Any]) -> dict:
    """A complete inventory record: Placement's defaults for the fields
    ``data`` leaves out."""
    return dict(INVENTORY_DEFAULTS, **data)


class Placement:
    """The state. Building a world of n providers is O(n)."""

    def __init__(self) -> None:
        self.providers: typing.Dict[str, Provider] = {}
        self._by_name: typing.Dict[str, str] = {}
        self.custom_traits: typing.Set[str] = set()
        self.consumers: typing.Dict[str, Consumer] = {}
        # provider -> resource class -> amount allocated (kept in step)
        self._usage: typing.Dict[str, typing.Counter[str]] = \
            collections.defaultdict(collections.Counter)
        # providers whose usage or inventories changed, for a reader that
        # keeps something derived from them (the fast engine's classes);
        # the reader clears it
        self.changed: typing.Set[str] = set()
        self._standard = frozenset(os_traits.get_traits())
        # aggregate -> the providers in it, so that a ``member_of``
        # listing reads its members, as Placement's index does, not every
        # provider: made at the first such listing, then kept in step
        self._members: typing.Optional[typing.Dict[
            str, typing.Set[str]]] = None

    # -- providers -------------------------------------------------------

    def add_provider(self, uuid: str, name: str) -> Provider:
        if name in self._by_name:
            raise DuplicateName('Conflicting resource provider name: '
                                f'{name} already exists.')
        if uuid in self.providers:
            raise DuplicateName('Conflicting resource provider uuid: '
                                f'{uuid} already exists.')
        provider = self.providers[uuid] = Provider(uuid, name)
        self._by_name[name] = uuid
        return provider

    def rename_provider(self, uuid: str, name: str) -> Provider:
        """Give a provider another name (its generation stays)."""
        provider = self.provider(uuid)
        if self._by_name.get(name, uuid) != uuid:
            raise DuplicateName(f'Conflicting resource provider {name} '
                                'already exists.')
        del self._by_name[provider.name]
        provider.name = name
        self._by_name[name] = uuid
        return provider

    def remove_provider(self, uuid: str) -> None:
        """Delete a provider that no consumer allocates from."""
        provider = self.provider(uuid)
        if any(self.used(uuid).values()):
            raise InUse(f'Unable to delete resource provider {uuid}: '
                        'Resource provider has allocations.')
        del self.providers[uuid]
        del self._by_name[provider.name]
        self._index(uuid, provider.aggregates, frozenset())
        self._usage.pop(uuid, None)
        self.changed.discard(uuid)

    def provider(self, uuid: str) -> Provider:
        provider = self.providers.get(uuid)
        if provider is None:
            raise NotFound(f'No resource provider with uuid {uuid} found')
        return provider

    def find(self, name: typing.Optional[str] = None,
             uuid: typing.Optional[str] = None,
             member_in: typing.Sequence[typing.Set[str]] = (),
             member_out: typing.AbstractSet[str] = frozenset()
             ) -> typing.List[Provider]:
        """The providers with this name, uuid and aggregates, by uuid."""
        if uuid is not None or name is not None:
            # one provider at most: look it up, don't scan them all
            wanted = self.providers.get(uuid if uuid is not None
                                        else self._by_name.get(name, ''))
            pool = [wanted] if wanted is not None else []
        elif member_in:
            # the members of the smallest required set of aggregates
            members = self._members_index()
            pool = [self.providers[u] for u in min(
                (set().union(*(members.get(a, ()) for a in wanted))
                 for wanted in member_in), key=len)]
        else:
            pool = self.providers.values()
        found = [
            p for p in pool
            if (name is None or p.name == name)
            and (uuid is None or p.uuid == uuid)
            and all(p.aggregates & wanted for wanted in member_in)
            and not p.aggregates & member_out]
        return sorted(found, key=lambda p: p.uuid)

    @staticmethod
    def _generation(provider: Provider, expected) -> None:
        if expected is UNCHECKED:
            return
        if expected != provider.generation:
            raise GenerationConflict('resource provider generation conflict')
        provider.generation += 1

    def set_inventories(self, uuid: str, generation,
                        inventories: typing.Dict[str, dict]) -> Provider:
        """Replace the inventories (complete records) of a provider."""
        provider = self.provider(uuid)
        for rc, amount in self.used(uuid).items():
            if amount and rc not in inventories:
                raise InUse(f'Inventory for {rc} on resource provider '
                            f'{uuid} in use.')
        self._generation(provider, generation)
        provider.inventories = inventories
        self.changed.add(uuid)
        return provider

    def used(self, uuid: str) -> typing.Counter[str]:
        """Resource class -> amount allocated on the provider."""
        return self._usage[uuid]

    def set_aggregates(self, uuid: str, generation,
                       aggregates: typing.Iterable[str]) -> Provider:
        provider = self.provider(uuid)
        self._generation(provider, generation)
        before = provider.aggregates
        provider.aggregates = frozenset(aggregates)
        self._index(uuid, before, provider.aggregates)
        return provider

    def _members_index(self) -> typing.Dict[str, typing.Set[str]]:
        """aggregate -> the providers in it (made on first use)."""
        if self._members is None:
            self._members = collections.defaultdict(set)
            for uuid, provider in self.providers.items():
                for aggregate in provider.aggregates:
                    self._members[aggregate].add(uuid)
        return self._members

    def _index(self, uuid: str, before: typing.AbstractSet[str],
               after: typing.AbstractSet[str]) -> None:
        """Keep the members' index (once made) in step with a provider
        whose aggregates change from ``before`` to ``after``."""
        if self._members is None:
            return
        for aggregate in before - after:
            self._members[aggregate].discard(uuid)
        for aggregate in after - before:
            self._members[aggregate].add(uuid)

    # -- traits ----------------------------------------------------------

    def known_trait(self, name: str) -> bool:
        return name in self._standard or name in self.custom_traits

    def add_trait(self, name: str) -> bool:
        """Create a custom trait; False when it existed."""
        if name in self.custom_traits:
            return False
        self.custom_traits.add(name)
        return True

    def delete_trait(self, name: str) -> None:
        """Delete a custom trait no provider has."""
        if name not in self.custom_traits:
            raise NotFound(f'No such trait(s): {name}')
        if any(name in p.traits for p in self.providers.values()):
            raise InUse(f'The trait {name} is in use by a resource '
                        'provider.')
        self.custom_traits.discard(name)

    def set_traits(self, uuid: str, generation,
                   traits: typing.Iterable[str]) -> Provider:
        provider = self.provider(uuid)
        traits = frozenset(traits)
        unknown = sorted(t for t in traits if not self.known_trait(t))
        if unknown:
            raise Invalid('No such trait(s): %s' % ', '.join(unknown))
        self._generation(provider, generation)
        provider.traits = traits
        return provider

    # -- allocation candidates -------------------------------------------

    @staticmethod
    def matches(provider: Provider, query: CandidateQuery) -> bool:
        """Traits and ``member_of``: what does not change with usage."""
        return (query.required <= provider.traits
                and not query.forbidden & provider.traits
                and all(any_of & provider.traits
                        for any_of in query.required_any)
                and all(any_of & provider.aggregates
                        for any_of in query.member_in)
                and not query.member_out & provider.aggregates)

    def fits(self, provider: Provider,
             resources: typing.Mapping[str, int]) -> bool:
        """Does ``resources`` fit on ``provider`` with today's usage?"""
        used = self.used(provider.uuid)
        return all(provider.fits_one(rc, amount, used.get(rc, 0))
                   for rc, amount in resources.items())

    def candidates(self, query: CandidateQuery) -> typing.List[Provider]:
        """The providers ``GET /allocation_candidates`` lists, in order."""
        found = [p for p in self.providers.values()
                 if self.matches(p, query) and self.fits(p, query.resources)]
        found.sort(key=lambda p: p.uuid)
        if query.limit is not None:
            found = found[:query.limit]
        return found

    # -- allocations -----------------------------------------------------

    def _account(self, allocations: Allocations, sign: int) -> None:
        for rp, resources in allocations.items():
            for rc, n in resources.items():
                self._usage[rp][rc] += sign * n
            self.changed.add(rp)

    def _checked(self, consumer: str, write: Write) -> None:
        """Refuse a write with a stale consumer generation or to a
        missing provider."""
        if write.expected_generation is not UNCHECKED:
            current = self.consumers.get(consumer)
            if write.expected_generation != (
                    current.generation if current else None):
                raise GenerationConflict(
                    'consumer generation conflict - expected '
                    f'{current.generation if current else "null"} but got '
                    f'{write.expected_generation}')
        for rp in write.allocations:
            if rp not in self.providers:
                raise Invalid(f'Allocation for resource provider {rp} '
                              'that does not exist.')

    def write(self, consumer: str, write: Write) -> None:
        """Replace one consumer's allocations if they fit."""
        self._checked(consumer, write)
        self._replace(consumer, write)

    def write_many(self, writes: typing.Mapping[str, Write]) -> None:
        """Replace several consumers' allocations, all or nothing; each
        provider touched gets one new generation."""
        for consumer, write in writes.items():
            self._checked(consumer, write)
        # take the consumers' current allocations out, check the new ones
        # together, and put everything back if they do not all fit
        previous = [self.consumers[c].allocations for c in writes
                    if c in self.consumers]
        for allocations in previous:
            self._account(allocations, -1)
        total: typing.Dict[str, typing.Counter[str]] = \
            collections.defaultdict(collections.Counter)
        for write in writes.values():
            for rp, res in write.allocations.items():
                total[rp].update(res)
        units_ok = all(self.providers[rp].fits_one(rc, amount, 0)
                       for write in writes.values()
                       for rp, res in write.allocations.items()
                       for rc, amount in res.items())
        fits = units_ok and all(
            self._usage[rp][rc] + amount <= self.providers[rp].capacity(rc)
            for rp, res in total.items() for rc, amount in res.items())
        for allocations in previous:
            self._account(allocations, +1)
        if not fits:
            raise Conflict('Unable to allocate inventory: The requested '
                           'amount would exceed the capacity.')
        # checked together: one write may take what another gives back
        touched = set()
        for consumer, write in writes.items():
            touched |= self._apply(consumer, write)
        for rp in touched:
            self.providers[rp].generation += 1

    def claim(self, consumer: str, allocations: Allocations,
              project_id: str, user_id: str) -> bool:
        """Allocate for a new consumer; False where Placement answers 409
        (the consumer exists, or the amounts do not fit).

        :param consumer: the instance uuid.
        :param allocations: provider uuid -> resource class -> amount.
        """
        if consumer in self.consumers:
            return False
        try:
            self._replace(consumer, Write(
                {rp: dict(res) for rp, res in allocations.items()},
                project_id, user_id))
        except Conflict:
            return False
        return True

    def _replace(self, consumer: str, write: Write) -> None:
        """Replace the consumer's allocations if they fit (else
        :class:`Conflict`); each provider touched gets a new generation.
        """
        current = self.consumers.get(consumer)
        # check capacity without the consumer's current allocations
        mine = current.allocations if current else {}
        for rp, res in write.allocations.items():
            provider = self.providers[rp]
            used = self._usage[rp]
            for rc, amount in res.items():
                used_by_others = used[rc] - mine.get(rp, {}).get(rc, 0)
                if not provider.fits_one(rc, amount, used_by_others):
                    raise Conflict(
                        'Unable to allocate inventory: Unable to create '
                        f"allocation for '{rc}' on resource provider "
                        f"'{rp}'. The requested amount would exceed the "
                        'capacity.')
        for rp in self._apply(consumer, write):
            self.providers[rp].generation += 1

    def _apply(self, consumer: str, write: Write) -> typing.Set[str]:
        """Replace the consumer's allocations, capacity checked already;
        returns the providers touched."""
        current = self.consumers.get(consumer)
        mine = current.allocations if current else {}
        touched = set(write.allocations) | set(mine)
        self._account(mine, -1)
        self._account(write.allocations, +1)
        if not write.allocations:
            self.consumers.pop(consumer, None)
        else:
            self.consumers[consumer] = Consumer(
                write.allocations, write.project_id, write.user_id,
                current.generation + 1 if current else 1, write.type)
        return touched

    def delete(self, consumer: str) -> None:
        """Remove a consumer's allocations (provider generations stay, as
        in Placement)."""
        current = self.consumers.pop(consumer, None)
        if current is None:
            raise NotFound(f"No allocations for consumer '{consumer}'")
        self._account(current.allocations, -1)
