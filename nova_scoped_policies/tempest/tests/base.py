"""What every test of the plugin shares: skips, clients, the cloud's
domains, and resources that clean themselves up.

Each test class asks for its credentials (``primary`` and ``alt``: two
projects; ``admin``) and gets a :class:`Persona` for each: the policy
API's clients at the class's microversion and Nova's clients. Everything
a test makes through the helpers is deleted by ``addCleanup``, in the
reverse order, whether the test passed or not.
"""

import time

from tempest import config
from tempest.lib.common import api_version_utils
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils
from tempest.lib import exceptions as lib_exc
from tempest.lib.services.compute import base_compute_client
from tempest import test

CONF = config.CONF
NOVA_MICROVERSION = '2.74'
"""Nova's microversion: ``networks: none`` (2.37), a live migration
checked by the scheduler (2.30), server groups with ``policy`` and
``rules`` (2.64), migrations filtered by instance (2.59)."""
CLIENTS = ('scopes', 'groups', 'stacks', 'repairs', 'export')
"""The policy API's clients of a persona (``ScopesClient``...)."""
FEATURES = {
    'stacks': 'the cloud does not offer stacks',
    'repairs': 'the cloud does not offer repairs',
    'secure_rbac': 'the policy API does not enforce the reader and member '
                   'personas',
}
"""What a feature switched off means, in a skip's reason."""


class Persona:
    """One set of credentials: the policy API's clients (``scopes``,
    ``groups``, ``stacks``, ``repairs``, ``export``) at ``microversion``
    and Nova's (``servers``, ``server_groups``...).

    :param manager: Tempest's client manager of the credentials.
    :param microversion: the policy API's microversion to ask for.
    """

    def __init__(self, manager, microversion: str) -> None:
        self.manager = manager
        for name in CLIENTS:
            client = getattr(manager.scoped_policies,
                             f'{name.capitalize()}Client')()
            client.api_microversion = microversion
            setattr(self, name, client)
        self.servers = manager.servers_client
        self.server_groups = manager.server_groups_client
        self.aggregates = manager.aggregates_client
        self.flavors = manager.flavors_client
        self.services = manager.services_client
        self.migrations = manager.migrations_client
        self.project_id = manager.credentials.project_id


class ScopedPoliciesTest(test.BaseTestCase):
    """Base of every test class of the plugin.

    Skipped, saying why, when ``[service_available] scoped_policies`` is
    False, when the class's microversions (``min_microversion`` to
    ``max_microversion``) are outside ``[scoped_policies]``'s, when one of
    its ``features`` is off, or when it needs live migration and
    ``[compute-feature-enabled] live_migration`` is False. A class with
    ``domains_needed`` is skipped when the scope under test has fewer
    domains with a compute host up (``cls.found`` holds them), one with
    ``scope_needed`` when the scope is not defined; ``cls.scope`` is its
    name, ``cls.policy`` its anti-affinity policy.
    """

    credentials = ['primary', 'alt', 'admin']
    min_microversion = '1.0'
    max_microversion = 'latest'
    features = ()
    """``[scoped_policies]`` options that must be True (``stacks``,
    ``repairs``, ``secure_rbac``)."""
    needs_live_migration = False
    scope_needed = False
    domains_needed = 0

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.service_available.scoped_policies:
            raise cls.skipException(
                '[service_available] scoped_policies is False: the cloud '
                'does not run nova-scoped-policies')
        api_version_utils.check_skip_with_microversion(
            cls.min_microversion, cls.max_microversion,
            CONF.scoped_policies.min_microversion,
            CONF.scoped_policies.max_microversion)
        for feature in cls.features:
            if not getattr(CONF.scoped_policies, feature):
                raise cls.skipException(
                    f'[scoped_policies] {feature} is False: '
                    f'{FEATURES[feature]}')
        if cls.needs_live_migration:
            cls.require_live_migration()

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.scope = cls.scope_name()
        cls.policy = f'anti-affinity:{cls.scope}'
        if cls.domains_needed:
            cls.found = cls.require_domains(cls.domains_needed)
        elif cls.scope_needed:
            cls.require_scope()

    @classmethod
    def setup_credentials(cls):
        # servers boot with networks: none; no network is made
        cls.set_network_resources()
        super().setup_credentials()

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.microversion = api_version_utils.select_request_microversion(
            cls.min_microversion, CONF.scoped_policies.min_microversion)
        # Tempest's compute clients read one module-wide microversion
        cls._nova_microversion = base_compute_client.COMPUTE_MICROVERSION
        base_compute_client.COMPUTE_MICROVERSION = NOVA_MICROVERSION
        for label in cls.credentials:
            name = label if isinstance(label, str) else label[0]
            setattr(cls, name, Persona(getattr(cls, f'os_{name}'),
                                       cls.microversion))

    @classmethod
    def resource_cleanup(cls):
        base_compute_client.COMPUTE_MICROVERSION = getattr(
            cls, '_nova_microversion', None)
        super().resource_cleanup()

    # microversions

    def at_microversion(self, client, version: str):
        """``client`` asks for ``version`` until the end of the test."""
        before = client.api_microversion
        client.api_microversion = version
        self.addCleanup(setattr, client, 'api_microversion', before)
        return client

    # the errors the API answers

    @staticmethod
    def _errors(exc: lib_exc.RestClientException) -> list:
        """The errors of the answer (Tempest's client hands over the
        value of a body's only key: the list of ``errors``)."""
        body = exc.resp_body
        if isinstance(body, dict):
            body = body.get('errors', [body])
        return body if isinstance(body, list) else [{'detail': str(body)}]

    def assertDetail(self, exc: lib_exc.RestClientException,
                     text: str) -> None:
        """The first error of the answer says ``text``."""
        self.assertIn(text, self._errors(exc)[0].get('detail', ''))

    def assertCode(self, exc: lib_exc.RestClientException,
                   code: str) -> None:
        """The first error of the answer has the ``code``."""
        self.assertEqual(code, self._errors(exc)[0].get('code'))

    # the cloud's domains of the scope under test

    @classmethod
    def scope_name(cls) -> str:
        return CONF.scoped_policies.scope

    @classmethod
    def domains(cls) -> dict:
        """Aggregate uuid -> the names of its compute hosts whose
        nova-compute is up and enabled, for each domain of the scope under
        test (an administrator's view); empty when the scope is not
        defined."""
        try:
            scope = cls.admin.scopes.show_scope(
                cls.scope_name())['policy_scope']
        except lib_exc.NotFound:
            return {}
        up = {s['host'] for s in cls.admin.services.list_services(
            binary='nova-compute')['services']
            if s['state'] == 'up' and s['status'] == 'enabled'}
        hosts = {a['uuid']: set(a['hosts']) & up for a in
                 cls.admin.aggregates.list_aggregates()['aggregates']}
        return {uuid: hosts[uuid] for uuid in scope['aggregates']
                if hosts.get(uuid)}

    @classmethod
    def require_scope(cls) -> None:
        """Skip unless the scope under test is defined."""
        try:
            cls.admin.scopes.show_scope(cls.scope_name())
        except lib_exc.NotFound:
            raise cls.skipException(
                f'scope {cls.scope_name()} ([scoped_policies] scope) is not '
                'defined in the policy API')

    @classmethod
    def require_domains(cls, count: int) -> dict:
        """The domains (see :meth:`domains`); skip when there are fewer
        than ``count`` with compute hosts up."""
        found = cls.domains()
        if len(found) < count:
            raise cls.skipException(
                f'needs {count} domain{"s" if count > 1 else ""} of scope '
                f'{cls.scope_name()} with a compute host up; the cloud has '
                f'{len(found)}')
        return found

    @classmethod
    def require_live_migration(cls) -> None:
        if not CONF.compute_feature_enabled.live_migration:
            raise cls.skipException(
                '[compute-feature-enabled] live_migration is False')

    def domain_of(self, domains: dict, host: str) -> str:
        found = [uuid for uuid, hosts in domains.items() if host in hosts]
        self.assertEqual(1, len(found), f'{host} is in domains {found}')
        return found[0]

    @staticmethod
    def wait_for_policy_change() -> None:
        """Let a policy change reach nova-scheduler
        (``[scoped_policies] store_cache_ttl``)."""
        time.sleep(CONF.scoped_policies.store_cache_ttl)

    # resources, each deleted at the end of the test

    def create_nova_group(self, persona: Persona,
                          policy: str = 'soft-anti-affinity') -> str:
        """A Nova server group of ``persona``'s project; its id."""
        group = persona.server_groups.create_server_group(
            name=data_utils.rand_name(
                prefix=CONF.resource_name_prefix, name='nsp-group'),
            policy=policy)['server_group']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        persona.server_groups.delete_server_group,
                        group['id'])
        return group['id']

    def create_group(self, persona: Persona, policies, rules=None,
                     nova_policy: str = 'soft-anti-affinity',
                     group_id: str = None) -> dict:
        """A Nova server group with scoped ``policies`` and ``rules``
        (the policy API's body of it)."""
        if group_id is None:
            group_id = self.create_nova_group(persona, nova_policy)
        body = persona.groups.create_group(
            group_id, name=data_utils.rand_name(
                prefix=CONF.resource_name_prefix, name='nsp-scoped'),
            policies=list(policies), rules=dict(rules or {}))
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        persona.groups.delete_group, group_id)
        return body['server_group']

    def create_stack(self, persona: Persona, **document) -> dict:
        stack = persona.stacks.create_stack(**document)['stack']
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        persona.stacks.delete_stack, stack['id'])
        return stack

    def flavor_resources(self) -> dict:
        """``[compute] flavor_ref``'s resources, as a stack asks them."""
        flavor = self.admin.flavors.show_flavor(
            CONF.compute.flavor_ref)['flavor']
        return {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['ram'],
                'DISK_GB': flavor['disk']}

    def boot(self, persona: Persona, group_id: str = None,
             hints: dict = None, wait: str = 'ACTIVE') -> dict:
        """A server of ``[compute] image_ref`` and ``flavor_ref`` booted by
        ``persona`` into the group (no network); once it is ``wait``
        (``ACTIVE``, ``ERROR``, or None: not waited for), the server as
        an administrator sees it (with its host)."""
        hints = dict(hints or {})
        if group_id:
            hints['group'] = group_id
        kwargs = {'scheduler_hints': hints} if hints else {}
        server = persona.servers.create_server(
            name=data_utils.rand_name(prefix=CONF.resource_name_prefix,
                                      name='nsp-server'),
            imageRef=CONF.compute.image_ref,
            flavorRef=CONF.compute.flavor_ref, networks='none',
            **kwargs)['server']
        self.addCleanup(self._delete_server, persona, server['id'])
        if wait is None:
            return server
        return self.wait_for_server(server['id'], wait)

    def _delete_server(self, persona: Persona, server_id: str) -> None:
        """Delete the server and wait until Nova no longer knows it (its
        resources are back in Placement)."""
        test_utils.call_and_ignore_notfound_exc(
            persona.servers.delete_server, server_id)

        def gone():
            try:
                self.admin.servers.show_server(server_id)
            except lib_exc.NotFound:
                return True
            return False
        self.wait_until(f'server {server_id} deleted', gone, bool)

    def boot_many(self, persona: Persona, count: int, group_id: str,
                  hints: dict = None) -> list:
        """``count`` servers into the group, one after the other, each
        ACTIVE before the next boots (the scheduler sees where the ones
        before went)."""
        return [self.boot(persona, group_id, hints) for _ in range(count)]

    # waiting

    @staticmethod
    def _timeout():
        return (CONF.scoped_policies.build_timeout or
                CONF.compute.build_timeout)

    @staticmethod
    def _interval():
        return (CONF.scoped_policies.build_interval or
                CONF.compute.build_interval)

    def wait_until(self, what: str, get, done):
        """Call ``get()`` until ``done(value)``; return that value, or fail
        after the build timeout naming ``what`` and the last value."""
        deadline = time.monotonic() + self._timeout()
        while True:
            value = get()
            if done(value):
                return value
            if time.monotonic() > deadline:
                self.fail(f'{what}: not done in {self._timeout()} s; '
                          f'last seen: {value}')
            time.sleep(self._interval())

    def wait_for_server(self, server_id: str, status: str) -> dict:
        """The server once its status is ``status`` (or fail: ``ERROR``
        when ``ACTIVE`` was wanted fails at once, with its fault)."""
        def get():
            return self.admin.servers.show_server(server_id)['server']

        def done(server):
            if server['status'] == 'ERROR' and status != 'ERROR':
                self.fail(f'server {server_id} went ERROR: '
                          f'{server.get("fault")}')
            return server['status'] == status and \
                server.get('OS-EXT-STS:task_state') is None
        return self.wait_until(f'server {server_id} {status}', get, done)

    @staticmethod
    def host(server: dict) -> str:
        return server['OS-EXT-SRV-ATTR:host']
