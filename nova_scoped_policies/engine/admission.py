"""What the policy service accepts of a group's policies, as a pure
function: the policy API (``api/handlers/groups.py``) and the simulator's
scenario checks (``simulator/scenario.py``) both call it, so a scenario
is refused exactly where the service would refuse the same group."""

from nova_scoped_policies.engine.plugins import registry
from nova_scoped_policies.policy.errors import PolicyError
from nova_scoped_policies.policy.model import PolicyDocument
from nova_scoped_policies.topology import Topology


def admit(document: PolicyDocument, topology: Topology, project: str,
          rules_at: str, real_ids: bool = False) -> PolicyDocument:
    """``document`` with real identifiers, when the service accepts it.

    :param topology: the scopes and domains the service knows.
    :param project: the group's project, whose identifiers the document
        uses (unless ``real_ids``).
    :param rules_at: where the document's ``rules`` are (a rule on an
        unknown scope is named ``<rules_at>.rules.<rule>``).
    :param real_ids: the document already uses real identifiers (an
        administrator's).
    :raises PolicyError: naming the field: a policy or rule on a scope
        the topology does not define, a domain the project cannot target.
    """
    unknown = registry.undefined_scope(
        document, lambda scope: topology.scope(scope) is not None)
    if unknown is not None:
        raise PolicyError(
            f'{rules_at}.rules.{unknown.field}' if unknown.rule
            else unknown.field, unknown.value,
            f'unknown scope {unknown.scope!r}')
    return topology.to_real(document, project, real_ids=real_ids)
