"""Who a response is rendered for, and what that caller may see.

scoped-policies.rst: an administrator sees real aggregate uuids and host
names; a tenant sees the identifiers of identifiable scopes in its own form
(obfuscated per tenant when the scope says so) and ephemeral surrogates
for everything else. An administrator passes ``as_tenant_id`` to see a
tenant's view. This module decides; :mod:`.views` only serialises.
"""

import dataclasses
import typing
import uuid as uuidlib

import webob

from nova_scoped_policies.api.policies import scopes as scope_rules
from nova_scoped_policies.api import util
from nova_scoped_policies.policy.model import HOST_SCOPE
from nova_scoped_policies import topology as topo


@dataclasses.dataclass(frozen=True)
class Viewer:
    """Who a response is rendered for.

    :param real: show real aggregate uuids and host names.
    :param project_id: the project whose identifiers to show otherwise.
    """

    real: bool
    project_id: typing.Optional[str]


def viewer(req: webob.Request) -> Viewer:
    """The viewer of a request (``as_tenant_id`` needs admin)."""
    context = req.environ[util.CONTEXT]
    as_tenant = req.GET.get('as_tenant_id')
    if as_tenant is not None:
        context.can(scope_rules.REAL_IDS)
        if not as_tenant or len(as_tenant) > 255:
            raise webob.exc.HTTPBadRequest(
                explanation='as_tenant_id: must be a project id')
        return Viewer(False, as_tenant)
    return Viewer(context.can(scope_rules.REAL_IDS, fatal=False),
                  context.project_id)


class Surrogates(dict):
    """real id -> random uuid, made on first use, for one response."""

    def __missing__(self, key):
        value = self[key] = str(uuidlib.uuid4())
        return value


def shown_by(who: Viewer, topology: topo.Topology
             ) -> typing.Callable[[str, str], str]:
    """(scope, real id) -> what ``who`` sees of it, consistent within one
    response: the real id for admins; the tenant's identifier in scopes
    that allow identifiers; a surrogate otherwise (hosts included)."""
    surrogates: typing.Dict[str, Surrogates] = {}

    def shown(scope: str, real: str) -> str:
        if who.real:
            return real
        sc = topology.scope(scope)
        if scope != HOST_SCOPE and sc is not None and sc.allow_identifiers:
            return topology.identifier_for(scope, real, who.project_id)
        return surrogates.setdefault(scope, Surrogates())[real]
    return shown


def in_own_words(who: Viewer, topology: topo.Topology, text: str,
                 shown: typing.Optional[
                     typing.Callable[[str, str], str]] = None) -> str:
    """``text`` (an error message, a reason) with every real domain id of
    ``topology`` in it replaced by what ``who`` sees of it: a tenant gets
    back its own identifier for a domain it named, never the real one.

    :param shown: the response's :func:`shown_by`, if it has one.
    """
    if who.real:
        return text
    shown = shown or shown_by(who, topology)
    for scope in topology.scope_names:
        if scope == HOST_SCOPE:
            continue
        for domain in topology.domains(scope):
            if domain.id in text:
                text = text.replace(domain.id, shown(scope, domain.id))
    return text


def seen_topology(who: Viewer, topology: topo.Topology,
                  shown: typing.Optional[
                      typing.Callable[[str, str], str]] = None
                  ) -> typing.Tuple[topo.Topology,
                                    typing.Callable[[str], str]]:
    """The topology as ``who`` sees it, and host name -> what ``who``
    sees of it: domains in the viewer's identifiers, hosts as surrogates
    for a tenant; unchanged for an admin. What is computed on it (an
    audit's violations) names nothing the viewer may not see.

    :param shown: the response's :func:`shown_by`, when the response
        shows other things too (one surrogate per host in a response).
    """
    if who.real:
        return topology, str
    shown = shown or shown_by(who, topology)

    def host(name: str) -> str:
        return shown(HOST_SCOPE, name)
    domains = [topo.Domain(d.id, shown(scope, d.id), scope,
                           frozenset(host(h) for h in d.hosts))
               for scope in topology.scope_names
               for d in topology.domains(scope)]
    return topo.build([topology.scope(n) for n in topology.scope_names],
                      domains), host
