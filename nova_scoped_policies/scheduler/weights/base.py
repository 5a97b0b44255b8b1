"""What our weighers share: raw weights from the engine, nova normalises.

The multiplier of a host, first found wins (documented in
doc/source/admin/enable.rst, "Weigher multipliers"):

1. aggregate metadata ``scoped_<option>`` of the host's aggregates;
2. ``[scoped_policies] <option>``, when set;
3. nova's aggregate metadata ``<option>`` (as nova's own weigher reads it);
4. nova's ``[filter_scheduler] <option>``.

So a cloud that tuned nova's ServerGroupSoft(Anti)AffinityWeigher keeps its
tuning when our weighers replace nova's, and ours override it where set.
"""

import threading

from oslo_config import cfg

from nova.scheduler.filters import utils as filters_utils
from nova.scheduler import utils as nova_utils
from nova.scheduler import weights
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies import nova_seam
from nova_scoped_policies.scheduler import state

CONF = cfg.CONF


class ScopedSoftPolicyWeigher(weights.BaseHostWeigher):
    """Weighs hosts by the soft policies whose plugin's ``weigher`` is
    :attr:`kind`.

    Each policy's raw weights are scaled to [0, 1] over the hosts and
    multiplied by its ``weight_<policy>`` (``Evaluation.weights``); nova
    then multiplies the sum by :meth:`weight_multiplier`, without scaling
    it again (``minval`` 0, ``maxval`` 1): a policy of weight 50 counts
    50 times a nova weigher of the same multiplier.
    """

    kind: str = ''
    option: str = ''
    minval = 0.0
    maxval = 1.0

    def __init__(self) -> None:
        super().__init__()
        # nova-scheduler's HostManager builds its weighers once, at start:
        # the seam's place (nova_seam's docstring says why)
        nova_seam.install()
        # nova shares weigher instances between concurrent requests
        self._request = threading.local()

    @property
    def metadata_key(self) -> str:
        """Aggregate metadata that overrides the multiplier per host."""
        return f'scoped_{self.option}'

    def configured_multiplier(self) -> float:
        """``[scoped_policies] <option>``, or nova's
        ``[filter_scheduler] <option>`` when ours is not set."""
        ours = getattr(CONF[sched_conf.GROUP_NAME], self.option)
        if ours is not None:
            return ours
        return getattr(CONF.filter_scheduler, self.option)

    def weight_multiplier(self, host_state):
        flat = getattr(self._request, 'flat', None)
        if flat is not None:
            # Every weight of this request is 0: no multiplier changes the
            # score, so skip nova's per-host aggregate scan.
            return flat
        configured = self.configured_multiplier()
        if filters_utils.aggregate_values_from_key(host_state,
                                                   self.metadata_key):
            return nova_utils.get_weight_multiplier(
                host_state, self.metadata_key, configured)
        if getattr(CONF[sched_conf.GROUP_NAME], self.option) is not None:
            return configured
        return nova_utils.get_weight_multiplier(host_state, self.option,
                                                configured)

    def weigh_objects(self, weighed_obj_list, weight_properties):
        evaluation = state.states().evaluation(weight_properties)
        if evaluation is None or not evaluation.has_weights(self.kind):
            self._request.flat = self.configured_multiplier()
            return [0.0] * len(weighed_obj_list)
        self._request.flat = None
        return evaluation.weights(
            self.kind, [obj.obj.host for obj in weighed_obj_list])

    def _weigh_object(self, host_state, weight_properties):
        evaluation = state.states().evaluation(weight_properties)
        if evaluation is None:
            return 0.0
        return evaluation.weights(self.kind, [host_state.host])[0]
