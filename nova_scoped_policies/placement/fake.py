"""An in-memory Placement's REST API: the subset nova-scoped-policies uses.

A WSGI app (webob) for simulations and tests that need no database:
resource providers with generations, inventories, usages, aggregates,
traits, ``GET /allocation_candidates`` (resources, required and forbidden
traits, ``member_of`` plain, ``in:``, ``!in:`` and repeated, ``limit``) and
allocations. Microversions are checked as Placement checks them (400 for a
malformed header, 406 for an unsupported version, 400 for a parameter the
version does not know). ``tests/functional/test_placement_conformance.py``
runs the same cases against this app and the real Placement.

This module parses requests, checks microversions and renders answers;
the state and its rules are :mod:`.model`'s (``FakePlacement.model``),
whose errors map to 404, 409 and 400 here, once.
"""

import copy
import re
import typing
import uuid as uuidlib

import webob
import webob.dec
import webob.exc

from oslo_serialization import jsonutils

from nova_scoped_policies.placement import model

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)
_HEADER = 'OpenStack-API-Version'
_VERSION_RE = re.compile(r'^placement\s+(latest|\d+\.\d+)$', re.IGNORECASE)
_CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_RC_RE = re.compile(r'^[A-Z0-9_]+$')
_INVENTORY_DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': None,
                       'step_size': 1, 'allocation_ratio': 1.0}


class APIError(Exception):
    """What the fake answers instead of a 2xx: status and detail."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(detail)


def parse_version(text: str) -> typing.Tuple[int, int]:
    """"1.36" -> (1, 36)."""
    major, minor = text.split('.')
    return int(major), int(minor)


def _provider_body(provider: model.Provider, prefix: str) -> dict:
    base = f'{prefix}/resource_providers/{provider.uuid}'
    links = [{'rel': 'self', 'href': base}] + [
        {'rel': rel, 'href': f'{base}/{rel}'}
        for rel in ('inventories', 'usages', 'aggregates', 'traits',
                    'allocations')]
    return {'uuid': provider.uuid, 'name': provider.name,
            'generation': provider.generation, 'links': links,
            'parent_provider_uuid': None,
            'root_provider_uuid': provider.uuid}


# the one place the model's errors become status codes
_STATUS = {model.NotFound: 404, model.Conflict: 409, model.Invalid: 400}


class FakePlacement:
    """The WSGI application; its state is ``self.model``.

    :param max_version: the highest microversion to claim, e.g. "1.29" to
        play an old Placement.
    """

    def __init__(self, max_version: str = '%d.%d' % MAX_VERSION) -> None:
        self.max_version = parse_version(max_version)
        self.model = model.Placement()
        self.routes = [
            ('GET', r'/$', self.root),
            ('GET', r'/resource_providers$', self.list_providers),
            ('POST', r'/resource_providers$', self.create_provider),
            ('GET', r'/resource_providers/(?P<uuid>[^/]+)$',
             self.get_provider),
            ('GET', r'/resource_providers/(?P<uuid>[^/]+)/inventories$',
             self.get_inventories),
            ('PUT', r'/resource_providers/(?P<uuid>[^/]+)/inventories$',
             self.put_inventories),
            ('GET', r'/resource_providers/(?P<uuid>[^/]+)/usages$',
             self.get_usages),
            ('GET', r'/resource_providers/(?P<uuid>[^/]+)/aggregates$',
             self.get_aggregates),
            ('PUT', r'/resource_providers/(?P<uuid>[^/]+)/aggregates$',
             self.put_aggregates),
            ('GET', r'/resource_providers/(?P<uuid>[^/]+)/traits$',
             self.get_traits),
            ('PUT', r'/resource_providers/(?P<uuid>[^/]+)/traits$',
             self.put_traits),
            ('PUT', r'/traits/(?P<name>[^/]+)$', self.put_trait),
            ('GET', r'/allocation_candidates$', self.allocation_candidates),
            ('POST', r'/allocations$', self.post_allocations),
            ('GET', r'/allocations/(?P<consumer>[^/]+)$',
             self.get_allocations),
            ('PUT', r'/allocations/(?P<consumer>[^/]+)$',
             self.put_allocations),
            ('DELETE', r'/allocations/(?P<consumer>[^/]+)$',
             self.delete_allocations),
        ]
        self._compiled = [(m, re.compile(p), h) for m, p, h in self.routes]

    # -- WSGI plumbing ---------------------------------------------------

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        version = self.max_version
        try:
            version = self._version(req)
            path = req.path_info or '/'
            allowed = []
            for method, pattern, handler in self._compiled:
                match = pattern.match(path)
                if not match:
                    continue
                allowed.append(method)
                if method == req.method:
                    try:
                        status, body = handler(req, version,
                                               **match.groupdict())
                    except model.Error as err:
                        raise APIError(_STATUS[type(err)], str(err))
                    return self._respond(status, body, version)
            if allowed:
                raise APIError(405, 'The method specified is not allowed for '
                               'this resource.')
            raise APIError(404, 'The resource could not be found.')
        except APIError as err:
            return self._respond(err.status, {'errors': [{
                'status': err.status, 'title': webob.exc.status_map[
                    err.status].title, 'detail': err.detail,
                'request_id': f'req-{uuidlib.uuid4()}'}]}, version)

    def _respond(self, status, body, version):
        resp = webob.Response(status=status)
        resp.headers[_HEADER] = 'placement %d.%d' % version
        resp.headers['Vary'] = _HEADER
        if body is not None:
            resp.content_type = 'application/json'
            resp.text = jsonutils.dumps(body)
        return resp

    def _version(self, req) -> typing.Tuple[int, int]:
        raw = req.headers.get(_HEADER)
        if raw is None:
            return MIN_VERSION
        match = _VERSION_RE.match(raw.strip())
        if not match:
            raise APIError(400, f'invalid version string: {raw}')
        if match.group(1).lower() == 'latest':
            return self.max_version
        version = parse_version(match.group(1))
        if not MIN_VERSION <= version <= self.max_version:
            raise APIError(406, 'Unacceptable version header: %s' %
                           match.group(1))
        return version

    @staticmethod
    def _body(req) -> dict:
        try:
            return jsonutils.loads(req.body or b'null')
        except ValueError:
            raise APIError(400, 'Malformed JSON')

    @staticmethod
    def _generation(body: dict):
        """The provider generation a write names (None when missing:
        a conflict with any generation, as in Placement)."""
        return body.get('resource_provider_generation')

    # -- handlers --------------------------------------------------------

    def root(self, req, version):
        return 200, {'versions': [{
            'id': 'v1.0', 'status': 'CURRENT',
            'min_version': '%d.%d' % MIN_VERSION,
            'max_version': '%d.%d' % self.max_version, 'links': []}]}

    def create_provider(self, req, version):
        body = self._body(req)
        if not isinstance(body, dict) or not isinstance(
                body.get('name'), str) or not body['name']:
            raise APIError(400, "'name' is a required property")
        provider = self.model.add_provider(
            body.get('uuid') or str(uuidlib.uuid4()), body['name'])
        if version >= (1, 20):
            return 200, _provider_body(provider, req.script_name)
        return 201, None

    def list_providers(self, req, version):
        unknown = set(req.GET) - {'member_of', 'name', 'uuid'}
        if unknown:
            raise APIError(400, 'Invalid query string parameters: '
                           f'{", ".join(sorted(unknown))}')
        member_in, member_out = _parse_member_of(
            req.GET.getall('member_of'), version)
        found = self.model.find(req.GET.get('name'), req.GET.get('uuid'),
                                member_in, member_out)
        return 200, {'resource_providers': [
            _provider_body(p, req.script_name) for p in found]}

    def get_provider(self, req, version, uuid):
        return 200, _provider_body(self.model.provider(uuid),
                                   req.script_name)

    def get_inventories(self, req, version, uuid):
        provider = self.model.provider(uuid)
        return 200, {'resource_provider_generation': provider.generation,
                     'inventories': copy.deepcopy(provider.inventories)}

    def put_inventories(self, req, version, uuid):
        self.model.provider(uuid)
        body = self._body(req)
        if not isinstance(body, dict) or not isinstance(
                body.get('inventories'), dict):
            raise APIError(400, "'inventories' is a required property")
        inventories = {}
        for rc, data in body['inventories'].items():
            if not _RC_RE.match(rc) or not isinstance(data, dict) \
                    or not isinstance(data.get('total'), int):
                raise APIError(400, f'Invalid inventory for {rc}')
            inv = dict(_INVENTORY_DEFAULTS, **data)
            if inv['max_unit'] is None:
                inv['max_unit'] = inv['total']
            inventories[rc] = inv
        provider = self.model.set_inventories(uuid, self._generation(body),
                                              inventories)
        return 200, {'resource_provider_generation': provider.generation,
                     'inventories': copy.deepcopy(inventories)}

    def get_usages(self, req, version, uuid):
        provider = self.model.provider(uuid)
        used = self.model.used(uuid)
        return 200, {'resource_provider_generation': provider.generation,
                     'usages': {rc: used.get(rc, 0)
                                for rc in provider.inventories}}

    def get_aggregates(self, req, version, uuid):
        if version < (1, 1):
            raise APIError(404, 'The resource could not be found.')
        provider = self.model.provider(uuid)
        body = {'aggregates': sorted(provider.aggregates)}
        if version >= (1, 19):
            body['resource_provider_generation'] = provider.generation
        return 200, body

    def put_aggregates(self, req, version, uuid):
        if version < (1, 1):
            raise APIError(404, 'The resource could not be found.')
        self.model.provider(uuid)
        body = self._body(req)
        generation = model.UNCHECKED
        if version >= (1, 19):
            if not isinstance(body, dict):
                raise APIError(400, "'aggregates' is a required property")
            generation = self._generation(body)
            aggregates = body.get('aggregates')
        else:
            aggregates = body
        if not isinstance(aggregates, list) or not all(
                _is_uuid(a) for a in aggregates):
            raise APIError(400, 'aggregates must be a list of uuids')
        self.model.set_aggregates(uuid, generation, aggregates)
        return self.get_aggregates(req, version, uuid)

    def put_trait(self, req, version, name):
        if version < (1, 6):
            raise APIError(404, 'The resource could not be found.')
        if not _CUSTOM_RE.match(name):
            raise APIError(400, "The trait is invalid. A valid trait must be "
                           "no longer than 255 characters, start with the "
                           "prefix \"CUSTOM_\" and use following characters: "
                           "\"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
        return (201 if self.model.add_trait(name) else 204), None

    def get_traits(self, req, version, uuid):
        provider = self.model.provider(uuid)
        return 200, {'traits': sorted(provider.traits),
                     'resource_provider_generation': provider.generation}

    def put_traits(self, req, version, uuid):
        if version < (1, 6):
            raise APIError(404, 'The resource could not be found.')
        self.model.provider(uuid)
        body = self._body(req)
        traits = body.get('traits') if isinstance(body, dict) else None
        if not isinstance(traits, list):
            raise APIError(400, "'traits' is a required property")
        self.model.set_traits(uuid, self._generation(body), traits)
        return self.get_traits(req, version, uuid)

    # -- allocation candidates -------------------------------------------

    def parse_candidate_query(self, params, version
                              ) -> model.CandidateQuery:
        """Validate ``GET /allocation_candidates`` parameters.

        :param params: the query string as a multidict (``getall``).
        :param version: the request's microversion.
        :raises APIError: 400 naming the bad parameter, as Placement does.
        """
        known = {'resources': (1, 10), 'limit': (1, 16),
                 'required': (1, 17), 'member_of': (1, 21),
                 'root_required': (1, 35)}
        for key in params:
            if key not in known or version < known[key]:
                raise APIError(400, 'Invalid query string parameters: '
                               f"Additional properties are not allowed "
                               f"('{key}' was unexpected)")
        if len(params.getall('resources')) != 1:
            raise APIError(400, "Invalid query string parameters: "
                           "'resources' is a required property")
        resources = _parse_resources(params.getall('resources')[0])
        required, forbidden = self._parse_traits(params.getall('required'),
                                                 version)
        # Every provider is its own root here: root traits are its traits.
        root_in, root_out = self._parse_traits(
            params.getall('root_required'), version)
        required |= root_in
        forbidden |= root_out
        member_in, member_out = _parse_member_of(
            params.getall('member_of'), version)
        limit = None
        if params.getall('limit'):
            raw = params.getall('limit')[-1]
            if not raw.isdigit() or int(raw) < 1:
                raise APIError(400, 'Invalid query string parameters: '
                               "Failed validating 'pattern' in "
                               "schema['properties']['limit']")
            limit = int(raw)
        return model.CandidateQuery(
            resources, frozenset(required), frozenset(forbidden),
            tuple(frozenset(m) for m in member_in), frozenset(member_out),
            limit)

    def allocation_candidates(self, req, version):
        if version < (1, 10):
            raise APIError(404, 'The resource could not be found.')
        query = self.parse_candidate_query(req.GET, version)
        requests = []
        summaries = {}
        for provider in self.model.candidates(query):
            alloc = {'allocations': {provider.uuid: {
                'resources': dict(query.resources)}}}
            if version >= (1, 34):
                alloc['mappings'] = {'': [provider.uuid]}
            requests.append(alloc)
            used = self.model.used(provider.uuid)
            summary = {'resources': {
                rc: {'capacity': provider.capacity(rc),
                     'used': used.get(rc, 0)}
                for rc in provider.inventories}}
            if version >= (1, 17):
                summary['traits'] = sorted(provider.traits)
            if version >= (1, 29):
                summary['parent_provider_uuid'] = None
                summary['root_provider_uuid'] = provider.uuid
            summaries[provider.uuid] = summary
        return 200, {'allocation_requests': requests,
                     'provider_summaries': summaries}

    def _parse_traits(self, values, version):
        required, forbidden = set(), set()
        for value in values:
            for name in value.split(','):
                target = required
                if name.startswith('!'):
                    if version < (1, 22):
                        raise APIError(400, 'Invalid query string parameters: '
                                       f"Expected 'required' parameter value "
                                       f"of the form: HW_CPU_X86_VMX,CUSTOM_"
                                       f"MAGIC. Got: {value}")
                    name, target = name[1:], forbidden
                if not self.model.known_trait(name):
                    raise APIError(400, f"No such trait(s): {name}")
                target.add(name)
        return required, forbidden

    # -- allocations -----------------------------------------------------

    def get_allocations(self, req, version, consumer):
        data = self.model.consumers.get(consumer)
        if data is None:
            return 200, {'allocations': {}}
        body = {'allocations': {
            rp: {'resources': dict(res),
                 'generation': self.model.providers[rp].generation}
            for rp, res in data.allocations.items()}}
        if version >= (1, 12):
            body['project_id'] = data.project_id
            body['user_id'] = data.user_id
        if version >= (1, 28):
            body['consumer_generation'] = data.generation
        if version >= (1, 38):
            body['consumer_type'] = data.type
        return 200, body

    @staticmethod
    def _write(data: dict, version) -> model.Write:
        """A consumer's allocations in a request body, checked."""
        needed = ['allocations', 'project_id', 'user_id']
        if version >= (1, 28):
            needed.append('consumer_generation')
        if version >= (1, 38):
            needed.append('consumer_type')
        for key in needed:
            if key not in data:
                raise APIError(400, f"'{key}' is a required property")
        allocations = {}
        for rp, alloc in (data['allocations'] or {}).items():
            res = (alloc or {}).get('resources')
            if not isinstance(res, dict) or not res:
                raise APIError(400, "'resources' is a required property")
            allocations[rp] = dict(res)
        return model.Write(
            allocations, data['project_id'], data['user_id'],
            data.get('consumer_type', 'INSTANCE'),
            data['consumer_generation'] if version >= (1, 28)
            else model.UNCHECKED)

    def put_allocations(self, req, version, consumer):
        if not _is_uuid(consumer):
            raise APIError(400, f'Malformed consumer_uuid: {consumer}')
        if version < (1, 12):
            raise APIError(400, 'fake Placement supports allocations from '
                           'microversion 1.12')
        body = self._body(req)
        if not isinstance(body, dict) or not isinstance(
                body.get('allocations'), dict):
            raise APIError(400, "'allocations' is a required property")
        self.model.write(consumer, self._write(body, version))
        return 204, None

    def post_allocations(self, req, version):
        """Several consumers at once, all or nothing (microversion 1.13);
        an empty ``allocations`` removes a consumer's allocations."""
        if version < (1, 13):   # as Placement: no such route before 1.13
            raise APIError(404, 'The resource could not be found.')
        body = self._body(req)
        if not isinstance(body, dict) or not body:
            raise APIError(400, 'the body must map consumer uuids to '
                           'allocations')
        writes = {}
        for consumer, data in body.items():
            if not _is_uuid(consumer) or not isinstance(data, dict):
                raise APIError(400, f'Malformed consumer_uuid: {consumer}')
            writes[consumer] = self._write(data, version)
        self.model.write_many(writes)
        return 204, None

    def delete_allocations(self, req, version, consumer):
        self.model.delete(consumer)
        return 204, None


def _is_uuid(value) -> bool:
    try:
        uuidlib.UUID(str(value))
    except ValueError:
        return False
    return True


def _parse_resources(text: str) -> typing.Dict[str, int]:
    resources = {}
    for part in text.split(','):
        rc, _, amount = part.partition(':')
        if not _RC_RE.match(rc) or not amount.isdigit():
            raise APIError(400, 'Badly formed resources parameter. Expected '
                           'resources query string parameter in form: '
                           f'?resources=VCPU:2,MEMORY_MB:1024. Got: {text}.')
        if rc in resources:
            raise APIError(400, 'Badly formed resources parameter: resource '
                           f'class {rc} appears more than once')
        if int(amount) < 1:
            raise APIError(400, 'Invalid query string parameters: Requested '
                           f'resource {rc} expected positive integer amount.')
        resources[rc] = int(amount)
    return resources


def _parse_member_of(values, version):
    """-> (list of any-of sets that must each match, forbidden set)."""
    if len(values) > 1 and version < (1, 24):
        raise APIError(400, 'Multiple member_of parameters are not supported '
                       'before microversion 1.24')
    member_in: typing.List[typing.Set[str]] = []
    member_out: typing.Set[str] = set()
    for value in values:
        negate = value.startswith('!')
        if negate:
            if version < (1, 32):
                raise APIError(400, 'Forbidden member_of parameters are not '
                               'supported in the specified microversion')
            value = value[1:]
        listed = value.startswith('in:')
        uuids = (value[3:] if listed else value).split(',')
        if (not listed and len(uuids) > 1) or not all(
                _is_uuid(u) for u in uuids):
            raise APIError(400, 'Expected \'member_of\' parameter to contain '
                           'valid UUID(s). Got: %s' % value)
        if negate:
            member_out.update(uuids)
        else:
            member_in.append(set(uuids))
    return member_in, member_out
