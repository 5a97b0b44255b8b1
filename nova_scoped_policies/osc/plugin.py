"""openstackclient plugin hooks (``openstack.cli.extension``)."""

from osc_lib import utils

API_NAME = 'scoped_policies'
API_VERSION_OPTION = 'os_scoped_policies_api_version'
API_VERSIONS = {'1': 'nova_scoped_policies.osc.client.Client'}
DEFAULT_API_VERSION = '1'


def make_client(instance):
    """The policy API client of an openstackclient ClientManager.

    :param instance: the ClientManager (session, region, interface).
    """
    cls = utils.get_client_class(API_NAME, instance._api_version[API_NAME],
                                 API_VERSIONS)
    return cls(instance.session, region_name=instance.region_name,
               interface=instance.interface)


def build_option_parser(parser):
    """Add ``--os-scoped-policies-api-version``."""
    parser.add_argument(
        '--os-scoped-policies-api-version',
        metavar='<version>',
        default=utils.env('OS_SCOPED_POLICIES_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='Policy API version (default: %s; env '
        'OS_SCOPED_POLICIES_API_VERSION)' % DEFAULT_API_VERSION)
    return parser
