"""What our host filters share: one pass over the hosts per instance."""

import itertools
import operator
import typing

from oslo_config import cfg
from oslo_log import log as logging

from nova.scheduler import filters
from nova.scheduler import utils as nova_utils
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.engine import context
from nova_scoped_policies.engine import forbidden_aggregates
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies import nova_seam
from nova_scoped_policies.scheduler import state

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
_LOGGED_REASONS = 5


def _aggregates(hosts) -> typing.Set[typing.Any]:
    """nova's aggregate objects of these host states, each once (C-level
    passes: nova shares one object per aggregate among its hosts)."""
    return set(itertools.chain.from_iterable(
        map(operator.attrgetter('aggregates'), hosts)))


class ScopedPolicyFilter(filters.BaseHostFilter):
    """Rejects the hosts that fail the engine checks of the policy
    plugins whose ``filter`` is this filter's :attr:`kind`.

    Subclasses only name their kind; which plugins it carries is the
    plugins' to say (``registry.families``). The engine work for the
    request is shared with the other filters and weighers through
    :mod:`nova_scoped_policies.scheduler.state`. The hosts nova hands
    the filter are the request's candidates (they passed the filters
    before it): a plugin that reads them (spread's eligible domains)
    reads these.
    """

    kind: str = ''

    def __init__(self) -> None:
        super().__init__()
        # nova-scheduler's HostManager builds its enabled filters once, at
        # start: the seam's place (nova_seam's docstring says why)
        nova_seam.install()

    @property
    def families(self) -> typing.FrozenSet[str]:
        return registry.families(self.kind)

    # Like nova's group filters: a rebuild keeps the host.
    RUN_ON_REBUILD = False

    def filter_all(self, filter_obj_list, spec_obj):
        refused = nova_seam.refusal()
        if refused is not None:
            if CONF[sched_conf.GROUP_NAME][
                    sched_conf.ENABLE_FORBIDDEN_AGGREGATES]:
                filter_obj_list = self._isolated(filter_obj_list, spec_obj)
            if state.states().serialised(spec_obj):
                return self._fail_closed(filter_obj_list, spec_obj, refused)
        evaluation = state.states().evaluation(spec_obj)
        if evaluation is None:
            return filter_obj_list
        hosts = list(filter_obj_list)
        names = [h.host for h in hosts]
        checks = evaluation.checks_for(self.families, names)
        if not checks:
            return hosts
        if state.states().as_nova_sees(spec_obj, lambda: (
                _aggregates(hosts), set(names))):
            evaluation = state.states().evaluation(spec_obj)
            checks = evaluation.checks_for(self.families, names) \
                if evaluation is not None else ()
            if not checks:
                return hosts
        # one pass over the hosts per check (Check.rejected), then one
        # to keep the others, if any is rejected; reasons are worded only
        # for the log
        out: typing.Set[str] = set()
        for check in checks:
            out.update(context.rejected(check, names))
        if not out:
            return hosts
        passed = [h for h, name in zip(hosts, names) if name not in out]
        if len(passed) < len(hosts):
            self._log(spec_obj, passed, checks,
                      [name for name in names if name in out])
        return passed

    def _isolated(self, filter_obj_list, spec_obj):
        """The hosts in no aggregate reserved by a trait the request
        lacks, by nova-scheduler's own view of each host's aggregates:
        without the seam the forbidden-aggregates request filter is not
        in nova's list, and isolation must not lapse with it."""
        hosts = list(filter_obj_list)
        index = forbidden_aggregates.index(_aggregates(hosts))
        if not index.required:
            return hosts
        requested = nova_utils.ResourceRequest.from_request_spec(
            spec_obj).all_required_traits
        forbidden = set(index.forbidden(requested))
        if not forbidden:
            return hosts
        passed = [h for h in hosts if not any(
            str(agg.uuid) in forbidden for agg in h.aggregates)]
        if len(passed) < len(hosts):
            LOG.debug('%s: %d host(s) in aggregates reserved by traits the '
                      'request does not require (the nova seam is not '
                      'installed: isolation is checked here)',
                      self.__class__.__name__, len(hosts) - len(passed))
        return passed

    def _fail_closed(self, hosts, spec_obj, refused):
        """No host for a group with hard scoped policies while the seam
        is not in place: nothing serialises its boots."""
        uuid = spec_obj.instance_uuid if 'instance_uuid' in spec_obj else None
        LOG.info('%(name)s rejected all %(n)d host(s): hard scoped policies '
                 'need the nova seam, which is not installed: %(why)s '
                 '(fail closed)', {'name': self.__class__.__name__,
                                   'n': len(list(hosts)), 'why': refused},
                 instance_uuid=uuid)
        return []

    def host_passes(self, host_state, spec_obj):
        return bool(self.filter_all([host_state], spec_obj))

    def _log(self, spec_obj, passed, checks, names):
        name = self.__class__.__name__
        uuid = spec_obj.instance_uuid if 'instance_uuid' in spec_obj else None
        debug = LOG.isEnabledFor(logging.DEBUG)
        if not debug and passed:
            return
        rejected = []
        for host in names if debug else names[:_LOGGED_REASONS]:
            reason = next(r for r in map(lambda c: c(host), checks)
                          if r is not None)
            rejected.append((host, reason))
            if debug:
                LOG.debug('%s rejected %s: %s', name, host, reason,
                          instance_uuid=uuid)
        if not passed:
            shown = '; '.join(str(r) for _, r in rejected[:_LOGGED_REASONS])
            more = len(names) - _LOGGED_REASONS
            LOG.info('%(name)s rejected all %(n)d host(s): %(shown)s%(more)s',
                     {'name': name, 'n': len(names), 'shown': shown,
                      'more': f' (and {more} more)' if more > 0 else ''},
                     instance_uuid=uuid)
