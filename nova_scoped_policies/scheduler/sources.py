"""What the scheduler plugins read from the outside world, built once.

:class:`Sources` holds the policy store (the driver ``[scoped_policies]
store_driver`` names, behind its cache and circuit breaker), the aggregate
cache (scope topology and trait index, stored scopes joined in) and the
member locator (nova's cells and Placement). It also owns the fail-closed
rule for an unreachable store. :class:`.state.RequestStates` receives one
and never reads CONF or loads drivers itself.
"""

import threading
import time
import typing

from oslo_config import cfg
from oslo_log import log as logging

from nova import exception
from nova_scoped_policies import conf as nsp_conf
from nova_scoped_policies.db import records
from nova_scoped_policies import nova_seam
from nova_scoped_policies.nova_seam import aggregates as seam_aggregates
from nova_scoped_policies.scheduler import aggregate_cache
from nova_scoped_policies.scheduler import members as members_mod
from nova_scoped_policies.scheduler import request_builder
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies.topology import Topology

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
nsp_conf.register_opts(CONF)

FROM_CONF = object()
"""``store`` default: the driver ``[scoped_policies] store_driver`` names,
loaded on first use."""


class Sources:
    """The store, the aggregates and the members' locations.

    :param locator: finds the members' hosts (default: nova's cells and
        Placement, with ``placement_retry_interval``).
    :param aggregates: the cached aggregates (default: read from nova's API
        database every ``aggregate_refresh_interval``, stored scopes joined,
        the trait index read for every request while this process has no
        aggregate listener: the nova seam's).
    :param store: a :class:`stores.CachedStore`, None for no store, or
        :data:`FROM_CONF`.
    :param conf: the configuration the defaults read.
    """

    def __init__(self, locator=None, aggregates=None, store=FROM_CONF,
                 conf: cfg.ConfigOpts = CONF) -> None:
        self._conf = conf
        self._store = store
        self.locator = locator or members_mod.InFlightMemberLocator(
            retry_interval=lambda:
                conf.scoped_policies.placement_retry_interval)
        self.aggregates = aggregates or aggregate_cache.AggregateCache(
            lambda: conf.scoped_policies.aggregate_refresh_interval,
            stored=self.stored_scopes,
            listened=lambda: nova_seam.aggregates_listened(),
            read_traits=lambda context: seam_aggregates.trait_aggregates(
                context))
        # trait -> (when read, its hosts)
        self._traits: typing.Dict[str, typing.Tuple[float, typing.Set[
            str]]] = {}
        self._lock = threading.Lock()

    @property
    def store(self) -> typing.Optional[stores.CachedStore]:
        """The policy store, loaded on first use.

        :raises NoValidHost: ``store_driver`` names no loadable driver (a
            configuration error: every group boot fails closed).
        """
        if self._store is FROM_CONF:
            options = self._conf.scoped_policies
            name = options.store_driver
            try:
                self._store = None if not name else stores.CachedStore(
                    stores.load_driver(name, self._conf),
                    lambda: options.store_cache_ttl,
                    retry_interval=lambda: options.store_retry_interval)
            except ValueError as exc:
                raise exception.NoValidHost(reason=f'scoped policies: {exc}')
        return self._store

    def stored_scopes(self) -> typing.List[records.ScopeRecord]:
        """Stored scopes for the aggregate cache. A broken store_driver
        fails group boots (see :meth:`stored_group`), not every boot."""
        try:
            store = self.store
        except exception.NoValidHost as exc:
            LOG.error('%s', exc)
            return []
        return store.scopes() if store is not None else []

    def stored_group(self, group_uuid: typing.Optional[str]
                     ) -> typing.Optional[records.GroupRecord]:
        """The group's stored policies; fail closed on hard ones when the
        store is unreachable, skip soft ones with a warning.

        :raises NoValidHost: the store is unreachable and the group's
            policies are hard or were never read.
        """
        if group_uuid is None:
            return None
        store = self.store
        if store is None:
            return None
        try:
            return store.group(group_uuid)
        except stores.StoreUnavailable as exc:
            if not stores.known(exc):
                raise exception.NoValidHost(reason=(
                    f'scoped policies: the policy store is unreachable and '
                    f'server group {group_uuid} was never read from it, so '
                    f'its policies are unknown (fail closed): {exc}'))
            last = exc.last_known
            if last is None:
                return None
            if request_builder.hard(last.document):
                raise exception.NoValidHost(reason=(
                    f'scoped policies: the policy store is unreachable and '
                    f'server group {group_uuid} has hard stored policies '
                    f'(fail closed): {exc}'))
            LOG.warning('Policy store unreachable: skipping the soft stored '
                        'policies of server group %s: %s', group_uuid, exc)
            return None

    def stack_plan(self, plan_id: str
                   ) -> typing.Optional[stores.StackPlan]:
        """A stack decision the request's server belongs to (None: no
        store, or the stack was deleted: its policies end with it).

        :raises NoValidHost: the store is unreachable: the stack's
            policies are unknown (fail closed).
        """
        store = self.store
        if store is None:
            return None
        try:
            return store.stack_plan(plan_id)
        except stores.StoreUnavailable as exc:
            raise exception.NoValidHost(reason=(
                f'scoped policies: the policy store is unreachable, so the '
                f'policies of stack decision {plan_id} are unknown (fail '
                f'closed): {exc}'))

    def relationship_ends(self, context, servers: typing.Collection[str],
                          groups: typing.Collection[str]):
        """Where the existing servers and server groups a stack relates to
        are: (server uuid -> host or None, group uuid -> its members'
        hosts). A group's members are Nova's and those added through the
        policy store.

        :raises MemberLookupError: a cell or Placement did not answer.
        """
        members: typing.Dict[str, typing.List[str]] = {}
        for group in groups:
            current = self.current_members(context, group)
            stored = self.stored_group(group)
            members[group] = (list(stored.counted(current)) if stored
                              else list(current))
        everyone = set(servers).union(*members.values())
        hosts = self.locate(context, everyone) if everyone else {}
        return ({uuid: hosts.get(uuid) for uuid in servers},
                {group: tuple(hosts[m] for m in found if hosts.get(m))
                 for group, found in members.items()})

    def current_members(self, context, group_uuid: str) -> typing.List[str]:
        """The group's members in the API database now (none when the
        locator cannot tell)."""
        current = getattr(self.locator, 'current_members', None)
        return list(current(context, group_uuid)) if current else []

    def instance_host(self, context, instance_uuid: str
                      ) -> typing.Optional[str]:
        """The host an instance runs on (None: not built yet): a request
        for an instance with a host is a move."""
        return self.locator.instance_host(context, instance_uuid)

    def instance_alive(self, context, instance_uuid: str) -> bool:
        """The instance exists and may still run: scheduled, building,
        or neither deleted nor in ERROR."""
        return self.locator.instance_alive(context, instance_uuid)

    def claims(self, context, instance_uuids: typing.Collection[str]
               ) -> typing.Dict[str, typing.Set[str]]:
        """instance uuid -> the hosts of its own allocations in Placement
        (see :meth:`members.InFlightMemberLocator.claims`); nothing when
        the locator cannot tell."""
        claims = getattr(self.locator, 'claims', None)
        return claims(context, instance_uuids) if claims else {}

    def with_traits(self, context, topology: Topology,
                    traits: typing.Collection[str]) -> Topology:
        """``topology`` told which hosts carry ``traits`` in Placement
        (the traits a request's policies read:
        ``registry.placement_traits``, a licence's
        ``CUSTOM_LICENSE_<PRODUCT>``), each trait's hosts read at most
        every ``aggregate_refresh_interval``.

        When Placement does not answer, the hosts last read stand (none
        before the first answer): ``license:`` then fails closed on hosts
        licensed by the trait alone, and the failure is logged.
        """
        find = getattr(self.locator, 'hosts_with_trait', None)
        if not traits or find is None:
            return topology
        of_host: typing.Dict[str, typing.List[str]] = {}
        for trait in sorted(traits):
            for host in self._trait_hosts(context, trait, find):
                of_host.setdefault(host, []).append(trait)
        return topology.with_traits(of_host)

    def _trait_hosts(self, context, trait: str, find) -> typing.Set[str]:
        now = time.monotonic()
        with self._lock:
            read_at, hosts = self._traits.get(trait, (None, set()))
        ttl = self._conf.scoped_policies.aggregate_refresh_interval
        if read_at is not None and now - read_at < ttl:
            return hosts
        try:
            hosts = find(context, trait)
        except members_mod.MemberLookupError as exc:
            # asked again after the same interval, not at every request
            # while Placement is down
            LOG.warning('Scoped policies: the hosts with the trait %s could '
                        'not be read (%s); policies count the hosts read '
                        'before, if any', trait, exc)
        with self._lock:
            self._traits[trait] = (now, hosts)
        return hosts

    def locate(self, context, members: typing.Collection[str]):
        """See :meth:`members.InFlightMemberLocator.locate`."""
        return self.locator.locate(context, members)
