"""What our host filters share: one pass over the hosts per instance."""

import typing

from oslo_log import log as logging

from nova.scheduler import filters
from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.scheduler import state

LOG = logging.getLogger(__name__)
_LOGGED_REASONS = 5


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

    @property
    def families(self) -> typing.FrozenSet[str]:
        return registry.families(self.kind)

    # Like nova's group filters: a rebuild keeps the host.
    RUN_ON_REBUILD = False

    def filter_all(self, filter_obj_list, spec_obj):
        evaluation = state.states().evaluation(spec_obj)
        if evaluation is None:
            return filter_obj_list
        checks = evaluation.checks_for(
            self.families, [h.host for h in filter_obj_list])
        if not checks:
            return filter_obj_list
        passed = []
        rejected = []
        for host_state in filter_obj_list:
            host = host_state.host
            for check in checks:
                reason = check(host)
                if reason is not None:
                    rejected.append((host, reason))
                    break
            else:
                passed.append(host_state)
        if rejected:
            self._log(spec_obj, passed, rejected)
        return passed

    def host_passes(self, host_state, spec_obj):
        return bool(self.filter_all([host_state], spec_obj))

    def _log(self, spec_obj, passed, rejected):
        name = self.__class__.__name__
        uuid = spec_obj.instance_uuid if 'instance_uuid' in spec_obj else None
        if LOG.isEnabledFor(logging.DEBUG):
            for host, reason in rejected:
                LOG.debug('%s rejected %s: %s', name, host, reason,
                          instance_uuid=uuid)
        if not passed:
            shown = '; '.join(str(r) for _, r in rejected[:_LOGGED_REASONS])
            more = len(rejected) - _LOGGED_REASONS
            LOG.info('%(name)s rejected all %(n)d host(s): %(shown)s%(more)s',
                     {'name': name, 'n': len(rejected), 'shown': shown,
                      'more': f' (and {more} more)' if more > 0 else ''},
                     instance_uuid=uuid)
