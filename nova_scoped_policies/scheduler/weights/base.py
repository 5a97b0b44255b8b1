"""What our weighers share: raw weights from the engine, nova normalises."""

import threading

from oslo_config import cfg

from nova.scheduler import utils as nova_utils
from nova.scheduler import weights
from nova_scoped_policies.conf import scheduler as sched_conf
from nova_scoped_policies.scheduler import state

CONF = cfg.CONF


class ScopedSoftPolicyWeigher(weights.BaseHostWeigher):
    """Weighs hosts by the soft policies of one type.

    The raw weight of a host is the engine's sum over the group's policies
    of that type; nova normalises it and multiplies it by
    :meth:`weight_multiplier`.
    """

    kind: str = ''
    option: str = ''

    def __init__(self) -> None:
        super().__init__()
        # nova shares weigher instances between concurrent requests
        self._request = threading.local()

    @property
    def metadata_key(self) -> str:
        """Aggregate metadata that overrides the multiplier per host."""
        return f'scoped_{self.option}'

    def weight_multiplier(self, host_state):
        configured = getattr(self._request, 'flat', None)
        if configured is not None:
            # Every weight of this request is 0: no multiplier changes the
            # score, so skip nova's per-host aggregate scan.
            return configured
        return nova_utils.get_weight_multiplier(
            host_state, self.metadata_key,
            getattr(CONF[sched_conf.GROUP_NAME], self.option))

    def weigh_objects(self, weighed_obj_list, weight_properties):
        evaluation = state.states().evaluation(weight_properties)
        if evaluation is None or not evaluation.has_weights(self.kind):
            self._request.flat = getattr(CONF[sched_conf.GROUP_NAME],
                                         self.option)
            return [0.0] * len(weighed_obj_list)
        self._request.flat = None
        weigh = evaluation.weigher(self.kind)
        return [weigh(obj.obj.host) for obj in weighed_obj_list]

    def _weigh_object(self, host_state, weight_properties):
        evaluation = state.states().evaluation(weight_properties)
        if evaluation is None:
            return 0.0
        return evaluation.weight(host_state.host, self.kind)
