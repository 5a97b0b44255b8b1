"""``GET /export`` (microversion 1.5, administrators): the live cloud as
a simulator scenario (simulation.md, "A running cloud as a scenario").

The body is the scenario document itself, which ``nova-scoped-policies
simulate`` reads as it is (JSON is YAML's flow style). ``project=P``
names only P's servers, groups and stacks (the other projects' servers
stay as load without names); ``obfuscate=true`` writes surrogates for
names (keyed by ``[scoped_policies_api] export_obfuscation_key``).
"""

from oslo_log import log as logging
import webob

from nova_scoped_policies.api import export as reader
from nova_scoped_policies.api import microversion
from nova_scoped_policies.api.policies import export as rules
from nova_scoped_policies.api import util
from nova_scoped_policies import export
from nova_scoped_policies import policy

LOG = logging.getLogger(__name__)

VERSION = '1.5'
PARAMETERS = ('project', 'obfuscate')
_PROJECT_MAX = 255


def _project(req: webob.Request):
    """The ``project`` parameter, or None.

    :raises webob.exc.HTTPBadRequest: given twice, empty, too long or
        with white space.
    """
    values = req.GET.getall('project')
    if not values:
        return None
    value = values[0]
    if len(values) > 1 or not value or len(value) > _PROJECT_MAX or \
            value != ''.join(value.split()):
        raise webob.exc.HTTPBadRequest(
            explanation=f'project: {policy.shown(",".join(values))}: must '
            f'be one project id of 1-{_PROJECT_MAX} characters without '
            'white space')
    return value


def export_cloud(req: webob.Request) -> webob.Response:
    if not microversion.require(req.environ, VERSION):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found.')
    context, service = util.env(req)
    context.can(rules.EXPORT)
    for name in req.GET:
        if name not in PARAMETERS:
            shown = name if name.isidentifier() else policy.shown(name)
            raise webob.exc.HTTPBadRequest(
                explanation=f'{shown}: unknown parameter; expected '
                f'{", ".join(PARAMETERS)}')
    project = _project(req)
    surrogates = None
    if util.query_flag(req, 'obfuscate'):
        key = service.conf.scoped_policies_api.export_obfuscation_key
        if not key:
            LOG.warning('An obfuscated export with the key everyone knows: '
                        'a guessable name can be found from its surrogate. '
                        'Set [scoped_policies_api] export_obfuscation_key '
                        'to a long random secret before an export leaves '
                        'the company.')
        surrogates = export.Surrogates(key or export.DEFAULT_KEY)
    return util.json_response(req, export.scenario(
        reader.read(service), project, surrogates))
