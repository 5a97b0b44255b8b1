"""The one Placement client of the project (keystoneauth1).

Everything in nova-scoped-policies that talks to Placement goes through
:class:`PlacementClient`: an ``keystoneauth1.adapter.Adapter`` for service
type ``placement`` that sends a microversion header with every request and
refuses to work with a Placement older than 1.32 (``member_of=!in:``).
"""

import typing

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from oslo_config import cfg
import requests

from nova_scoped_policies.conf import ksa
from nova_scoped_policies.conf import placement as conf_placement

SERVICE_TYPE = 'placement'
MIN_VERSION = (1, 32)
"""``member_of=!in:`` (forbidden aggregates) appeared in 1.32."""
DEFAULT_VERSION = '1.36'
GROUP = conf_placement.GROUP
TIMEOUT = (5.0, 20.0)
"""(connect, read) seconds of every call unless told otherwise (the
defaults of ``[scoped_policies_api]connect_timeout`` and ``read_timeout``):
a silent Placement fails a call, never hangs it."""


def _version(text: str) -> typing.Tuple[int, int]:
    major, minor = text.split('.')
    return int(major), int(minor)


class PlacementError(Exception):
    """Placement answered with an error, or did not answer.

    :param status: the HTTP status; 0 when there was no answer (refused,
        cut, or timed out: see :attr:`timed_out`).
    :param method: the request method.
    :param url: the request path.
    :param detail: Placement's error text.
    """

    def __init__(self, status: int, method: str, url: str,
                 detail: str, timed_out: bool = False) -> None:
        self.status = status
        self.timed_out = timed_out
        super().__init__(f'{method} {url}: {status} {detail}')


class PlacementVersionError(PlacementError):
    """Placement is too old for nova-scoped-policies."""


class PlacementClient:
    """A thin typed wrapper of a keystoneauth1 Adapter.

    :param adapter: an Adapter whose service type is ``placement``.
    :param version: the microversion sent with each request.
    """

    def __init__(self, adapter: ks_adapter.Adapter,
                 version: str = DEFAULT_VERSION) -> None:
        self.adapter = adapter
        self.version = version

    @classmethod
    def for_endpoint(cls, url: str, token: str = 'admin',
                     version: str = DEFAULT_VERSION,
                     timeout: typing.Tuple[float, float] = TIMEOUT
                     ) -> 'PlacementClient':
        """A client for a known endpoint with a fixed token (tests, tools,
        Placement behind ``noauth2``).

        :param url: the Placement endpoint.
        :param token: the token sent in ``X-Auth-Token``.
        :param version: the microversion to send.
        :param timeout: (connect, read) seconds of every call.
        """
        http = requests.Session()
        # a known endpoint: no proxy lookup in the environment per request
        http.trust_env = False
        session = ks_session.Session(
            auth=token_endpoint.Token(url, token), session=http)
        # requests takes (connect, read); keystoneauth1 passes it on
        session.timeout = tuple(timeout)
        return cls(ks_adapter.Adapter(session, service_type=SERVICE_TYPE),
                   version)

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts,
                  version: str = DEFAULT_VERSION,
                  timeout: typing.Tuple[float, float] = TIMEOUT
                  ) -> 'PlacementClient':
        """A client from the ``[placement]`` keystoneauth1 options.

        :param conf: a parsed configuration with ``[placement]``.
        :param version: the microversion to send.
        :param timeout: (connect, read) seconds of every call, unless
            ``[placement]timeout`` is set.
        """
        adapter = ksa.load_adapter(conf, GROUP, SERVICE_TYPE, timeout)
        return cls(adapter, version)

    # -- transport -------------------------------------------------------

    def request(self, method: str, url: str, body=None,
                version: typing.Optional[str] = None,
                ok: typing.Iterable[int] = (200, 201, 204)):
        """Send one request; return the response.

        :param method: HTTP method.
        :param url: path below the Placement endpoint.
        :param body: JSON body, if any.
        :param version: microversion for this request (default: client's).
        :param ok: statuses that are not errors.
        :raises PlacementError: any other status.
        """
        kwargs = {'microversion': version or self.version,
                  'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        try:
            resp = self.adapter.request(url, method, **kwargs)
        except ks_exc.ClientException as exc:
            raise PlacementError(
                0, method, url, _no_answer(exc),
                timed_out=isinstance(exc, ks_exc.ConnectTimeout)) from exc
        if resp.status_code not in ok:
            raise PlacementError(resp.status_code, method, url,
                                 _detail(resp))
        return resp

    def keep_connections(self, connections: int) -> None:
        """Keep up to ``connections`` connections to Placement open, for
        as many calls at once from as many threads (requests keeps 10 per
        host and closes any more after each call, with a warning).

        :param connections: the most calls made at once.
        """
        http = getattr(self.adapter.session, 'session', None)
        for adapter in getattr(http, 'adapters', {}).values():
            if getattr(adapter, '_pool_maxsize', connections) < connections:
                adapter.poolmanager.clear()
                # the adapter's own pool set-up (keystoneauth1's keeps its
                # TCP keep-alive), with room for ``connections``
                adapter.init_poolmanager(adapter._pool_connections,
                                         connections,
                                         block=adapter._pool_block)

    def _json(self, method, url, body=None, **kwargs):
        resp = self.request(method, url, body, **kwargs)
        return resp.json() if resp.content else None

    # -- versions --------------------------------------------------------

    def max_version(self) -> str:
        """The highest microversion Placement supports."""
        # Read at 1.0: an older Placement answers 406 to newer headers.
        root = self._json('GET', '/', version='1.0')
        return root['versions'][0]['max_version']

    def check_version(self) -> str:
        """Return Placement's max microversion if it is recent enough.

        :raises PlacementVersionError: naming the version found and needed.
        """
        found = self.max_version()
        if _version(found) < MIN_VERSION:
            needed = '%d.%d' % MIN_VERSION
            raise PlacementVersionError(
                406, 'GET', '/', f'Placement supports microversions up to '
                f'{found}; nova-scoped-policies needs {needed} or later '
                '(member_of=!in: for forbidden aggregates)')
        return found

    # -- resource providers ----------------------------------------------

    def create_provider(self, name: str, uuid: str) -> dict:
        return self._json('POST', '/resource_providers',
                          {'name': name, 'uuid': uuid})

    def get_provider(self, uuid: str) -> dict:
        return self._json('GET', f'/resource_providers/{uuid}')

    def list_providers(self, member_of: typing.Iterable[str] = (),
                       name: typing.Optional[str] = None,
                       required: typing.Iterable[str] = ()
                       ) -> typing.List[dict]:
        """``GET /resource_providers``, filtered.

        :param member_of: each value one ``member_of`` parameter.
        :param name: only the provider of this name.
        :param required: only the providers with these traits (``!T``:
            without T).
        """
        params = [('member_of', value) for value in member_of]
        if name is not None:
            params.append(('name', name))
        required = list(required)
        if required:
            params.append(('required', ','.join(required)))
        query = '&'.join(f'{k}={v}' for k, v in params)
        url = '/resource_providers' + (f'?{query}' if query else '')
        return self._json('GET', url)['resource_providers']

    def provider_aggregates(self, uuid: str) -> typing.List[str]:
        return self._json('GET',
                          f'/resource_providers/{uuid}/aggregates')[
            'aggregates']

    def set_inventory(self, uuid: str, generation: int,
                      inventories: typing.Mapping[str, dict]) -> dict:
        return self._json('PUT', f'/resource_providers/{uuid}/inventories',
                          {'resource_provider_generation': generation,
                           'inventories': dict(inventories)})

    def set_aggregates(self, uuid: str, generation: int,
                       aggregates: typing.Iterable[str]) -> dict:
        return self._json('PUT', f'/resource_providers/{uuid}/aggregates',
                          {'resource_provider_generation': generation,
                           'aggregates': sorted(aggregates)})

    def create_trait(self, name: str) -> None:
        self.request('PUT', f'/traits/{name}')

    def set_traits(self, uuid: str, generation: int,
                   traits: typing.Iterable[str]) -> dict:
        return self._json('PUT', f'/resource_providers/{uuid}/traits',
                          {'resource_provider_generation': generation,
                           'traits': sorted(traits)})

    def usages(self, uuid: str) -> dict:
        return self._json('GET',
                          f'/resource_providers/{uuid}/usages')['usages']

    # -- allocation candidates and allocations ---------------------------

    def allocation_candidates(self, resources: typing.Mapping[str, int],
                              required: typing.Iterable[str] = (),
                              member_of: typing.Iterable[str] = (),
                              limit: typing.Optional[int] = None) -> dict:
        """``GET /allocation_candidates`` for a single request group.

        :param resources: resource class -> amount.
        :param required: trait names; ``!NAME`` forbids one.
        :param member_of: each value one ``member_of`` parameter, e.g.
            ``in:a,b`` or ``!in:c``.
        :param limit: most candidates to return.
        """
        params: typing.List[typing.Tuple[str, str]] = [
            ('resources', ','.join(f'{rc}:{n}'
                                   for rc, n in sorted(resources.items())))]
        required = list(required)
        if required:
            params.append(('required', ','.join(required)))
        params += [('member_of', value) for value in member_of]
        if limit is not None:
            params.append(('limit', str(limit)))
        query = '&'.join(f'{k}={v}' for k, v in params)
        return self._json('GET', f'/allocation_candidates?{query}')

    def put_allocations(self, consumer: str, allocations: dict) -> None:
        """Claim: ``PUT /allocations/{consumer}`` with a full body."""
        self.request('PUT', f'/allocations/{consumer}', allocations)

    def get_allocations(self, consumer: str) -> dict:
        return self._json('GET', f'/allocations/{consumer}')

    def delete_allocations(self, consumer: str) -> None:
        self.request('DELETE', f'/allocations/{consumer}')


def _no_answer(exc: Exception) -> str:
    """Why there is no answer, in words (keystoneauth1's messages repeat
    the whole URL and the retry state)."""
    if isinstance(exc, ks_exc.ConnectTimeout):
        return 'no answer in time (timed out)'
    if isinstance(exc, ks_exc.ConnectFailure):
        return 'cannot connect (refused or cut)'
    return str(exc)


def _detail(resp) -> str:
    try:
        errors = resp.json().get('errors') or []
        return '; '.join(e.get('detail', '') for e in errors) or resp.text
    except ValueError:
        return resp.text
