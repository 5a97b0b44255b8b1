"""openstackclient plugin hooks (``openstack.cli.extension``).

The commands live under ``openstack scoped policy ...`` so that they never
mix with keystone's ``openstack policy ...``. Global options:

``--os-scoped-policies-endpoint``
    the policy API's URL, instead of the ``scoped-policies`` endpoint of the
    service catalog (needed with ``--os-auth-type none``).
``--os-scoped-policies-project-id`` / ``--os-scoped-policies-roles``
    the identity to send as ``X-Project-Id`` / ``X-Roles`` to a policy API
    run with ``[scoped_policies_api] auth_strategy = noauth2``.
"""

from osc_lib import utils

API_NAME = 'scoped_policies'
API_VERSION_OPTION = 'os_scoped_policies_api_version'
API_VERSIONS = {'1': 'nova_scoped_policies.osc.client.Client'}
DEFAULT_API_VERSION = '1'
ENDPOINT = 'scoped_policies_endpoint'
PROJECT_ID = 'scoped_policies_project_id'
ROLES = 'scoped_policies_roles'


def global_options(instance) -> dict:
    """Our global options, as openstacksdk stores them (no ``os_``)."""
    cloud = getattr(instance, '_cli_options', None)
    return dict(getattr(cloud, 'config', None) or {})


def make_client(instance):
    """The policy API client of an openstackclient ClientManager.

    :param instance: the ClientManager (session, region, interface, and
        the parsed global options).
    """
    cls = utils.get_client_class(API_NAME, instance._api_version[API_NAME],
                                 API_VERSIONS)
    options = global_options(instance)
    kwargs = {'region_name': instance.region_name,
              'interface': instance.interface}
    if options.get(ENDPOINT):
        kwargs['endpoint_override'] = options[ENDPOINT]
    headers = {}
    if options.get(PROJECT_ID):
        headers['X-Project-Id'] = options[PROJECT_ID]
        headers['X-User-Id'] = options[PROJECT_ID]
    if options.get(ROLES):
        headers['X-Roles'] = options[ROLES]
    if headers:
        kwargs['additional_headers'] = headers
    return cls(instance.session, **kwargs)


def build_option_parser(parser):
    """Add the policy API's global options."""
    parser.add_argument(
        '--os-scoped-policies-api-version',
        metavar='<version>',
        default=utils.env('OS_SCOPED_POLICIES_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='Policy API version (default: %s; env '
        'OS_SCOPED_POLICIES_API_VERSION)' % DEFAULT_API_VERSION)
    parser.add_argument(
        '--os-scoped-policies-endpoint',
        metavar='<url>',
        default=utils.env('OS_SCOPED_POLICIES_ENDPOINT'),
        help='Policy API URL, instead of the service catalog\'s '
        'scoped-policies endpoint (env OS_SCOPED_POLICIES_ENDPOINT)')
    parser.add_argument(
        '--os-scoped-policies-project-id',
        metavar='<project-id>',
        default=utils.env('OS_SCOPED_POLICIES_PROJECT_ID'),
        help='With a policy API run with auth_strategy = noauth2: the '
        'project to act as, sent as X-Project-Id (env '
        'OS_SCOPED_POLICIES_PROJECT_ID)')
    parser.add_argument(
        '--os-scoped-policies-roles',
        metavar='<role>[,<role>...]',
        default=utils.env('OS_SCOPED_POLICIES_ROLES'),
        help='With auth_strategy = noauth2: the roles to act with, sent as '
        'X-Roles, e.g. admin (env OS_SCOPED_POLICIES_ROLES)')
    return parser
