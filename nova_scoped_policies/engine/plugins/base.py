"""The contracts policy plugins implement: one method each."""

import abc
import typing

from nova_scoped_policies.engine.context import HostCheck
from nova_scoped_policies.engine.context import HostWeight
from nova_scoped_policies.engine.context import PlacementContext
from nova_scoped_policies.policy.model import Policy


class HardPolicy(abc.ABC):
    """Turns a hard policy (or rule) into a per-host check."""

    @abc.abstractmethod
    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> typing.Optional[HostCheck]:
        """Build the check for one policy of a request.

        :param policy: the policy to enforce.
        :param field: where the policy came from, for errors.
        :param ctx: the request's shared counts.
        :returns: a check, or None when it passes every host.
        :raises PolicyError: the policy cannot apply (bad identifier).
        """


class SoftPolicy(abc.ABC):
    """Turns a soft policy into a per-host raw weight."""

    @abc.abstractmethod
    def prepare(self, policy: Policy, field: str,
                ctx: PlacementContext) -> HostWeight:
        """Build the weight function for one policy of a request.

        :param policy: the soft policy.
        :param field: where the policy came from, for errors.
        :param ctx: the request's shared counts.
        :raises PolicyError: the policy cannot apply (bad identifier).
        """
