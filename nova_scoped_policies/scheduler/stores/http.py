"""``store_driver = http``: ask the policy API through keystoneauth1.

The scheduler's credentials (``[policy_api]``) must carry the ``service``
role (or ``admin``): the driver needs real aggregate uuids, every
project's groups and stack decisions, and gives a stack member's hold back
as it boots (the policy API's ``service_or_admin`` rules).
"""

import typing

import jsonschema
from keystoneauth1 import exceptions as ks_exc

from nova_scoped_policies.api import microversion
from nova_scoped_policies.conf import ksa
from nova_scoped_policies.conf import store as store_conf
from nova_scoped_policies.db import records
from nova_scoped_policies import policy
from nova_scoped_policies.scheduler import stores
from nova_scoped_policies import validation

VERSION = '1.1'
"""The policy API's microversion the driver speaks: scopes with their
``parent`` (nested scopes), and ``/stacks``."""


class HttpStore(stores.PolicyStoreDriver):
    """Reads the policy API at microversion :data:`VERSION`.

    :param conf: the configuration with ``[policy_api]``.
    :param adapter: a keystoneauth1 Adapter (default: from ``conf``).
    """

    def __init__(self, conf, adapter=None) -> None:
        self.adapter = adapter or ksa.load_adapter(
            conf, store_conf.API_GROUP, store_conf.SERVICE_TYPE)

    def _call(self, method: str, url: str, body=None,
              missing_ok: bool = False):
        """The JSON answer of one request (None for a 404 when
        ``missing_ok``); anything else than a JSON 200 makes the store
        unavailable."""
        try:
            resp = self.adapter.request(
                url, method, raise_exc=False, json=body, headers={
                    microversion.HEADER:
                    f'{microversion.SERVICE_TYPE} {VERSION}'})
        except ks_exc.ClientException as exc:
            raise stores.StoreUnavailable(f'policy API: {exc}')
        if missing_ok and resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise stores.StoreUnavailable(
                f'policy API: {method} {url}: {resp.status_code} '
                f'{resp.text[:200]}')
        try:
            return resp.json()
        except ValueError:
            raise stores.StoreUnavailable(
                f'policy API: {method} {url}: the answer is not JSON')

    def _get(self, url: str, missing_ok: bool = False):
        return self._call('GET', url, missing_ok=missing_ok)

    def scopes(self) -> typing.List[records.ScopeRecord]:
        body = _checked(self._get('/os-policy-scopes'), _OBJECTS,
                        'policy_scopes')
        for scope in body['policy_scopes']:
            if 'obfuscate_namespace_uuid' not in scope:
                raise stores.StoreUnavailable(
                    'policy API: the [policy_api] credentials do not see '
                    'real identifiers; they need the service role (or admin)')
        scopes = _checked(body, _SCOPES, 'policy_scopes')['policy_scopes']
        try:
            return [records.ScopeRecord.of(scope) for scope in scopes]
        except ValueError as exc:    # a time that is not ISO 8601
            raise stores.StoreUnavailable(
                f'policy API: policy_scopes: {str(exc)[:200]}')

    def group(self, uuid: str) -> typing.Optional[records.GroupRecord]:
        body = self._get(f'/os-server-groups/{uuid}', missing_ok=True)
        if body is None:
            return None
        return _stored(_checked(body, _GROUP, 'server_group')['server_group'])

    def _stacks(self, method: str, url: str, body=None):
        found = self._call(method, url, body, missing_ok=True)
        if found is None:
            return None
        return _checked(found, _STACK, 'stack')['stack']

    def stack_plan(self, plan_id: str):
        stack = self._stacks('GET', f'/stacks/{plan_id}')
        if stack is None:
            return None
        return stores.StackPlan(
            stack['id'], stack['project_id'], stack['document'],
            {name: stores.PlanServer(s['host'], s['state'],
                                     s.get('instance_uuid'))
             for name, s in stack['servers'].items()})

    def boot_member(self, plan_id: str, name: str,
                    instance_uuid: typing.Optional[str] = None) -> None:
        member = {'name': name}
        if instance_uuid is not None:
            member['instance_uuid'] = instance_uuid
        self._stacks('POST', f'/stacks/{plan_id}/action',
                     {'boot_member': member})

    def groups(self) -> typing.List[records.GroupRecord]:
        return [_stored(g) for g in _checked(
            self._get('/os-server-groups?all_projects=true'), _GROUPS,
            'server_groups')['server_groups']]


_NULLABLE = {'type': ['string', 'null']}
_SCOPE = {
    'type': 'object',
    'required': ['name', 'aggregates'],
    'properties': {
        'name': {'type': 'string'},
        'allow_identifiers': {'type': 'boolean'},
        'obfuscate_identifiers': {'type': 'boolean'},
        'obfuscate_namespace_uuid': _NULLABLE,
        'aggregates': {'type': 'array', 'items': {'type': 'string'}},
        'parent': _NULLABLE, 'uuid': _NULLABLE,
        'created_at': _NULLABLE, 'updated_at': _NULLABLE,
    },
}
_GROUP_ITEM = {
    'type': 'object',
    'required': ['id', 'project_id', 'policies', 'rules', 'members'],
    'properties': {
        'id': {'type': 'string'}, 'project_id': {'type': 'string'},
        'policies': {'type': 'array'}, 'rules': {'type': 'object'},
        'members': {'type': 'array', 'items': {'type': 'string'}},
        # Nova's members taken out of the scoped policies; absent from a
        # service older than exclusions
        'excluded_members': {'type': 'array', 'items': {'type': 'string'}},
        'name': _NULLABLE, 'user_id': _NULLABLE,
        'created_at': _NULLABLE, 'updated_at': _NULLABLE,
    },
}


def _wrapped(key: str, item: dict, many: bool) -> dict:
    return {'type': 'object', 'required': [key], 'properties': {
        key: {'type': 'array', 'items': item} if many else item}}


_STACK = _wrapped('stack', {
    'type': 'object',
    'required': ['id', 'project_id', 'servers', 'document'],
    'properties': {
        'id': {'type': 'string'},
        'project_id': {'type': 'string'},
        'document': {'type': 'object'},
        'servers': {'type': 'object', 'additionalProperties': {
            'type': 'object', 'required': ['host', 'state'],
            'properties': {'host': {'type': 'string'},
                           'state': {'type': 'string'},
                           'instance_uuid': _NULLABLE}}},
    },
}, many=False)
_OBJECTS = _wrapped('policy_scopes', {'type': 'object'}, many=True)
_SCOPES = _wrapped('policy_scopes', _SCOPE, many=True)
_GROUP = _wrapped('server_group', _GROUP_ITEM, many=False)
_GROUPS = _wrapped('server_groups', _GROUP_ITEM, many=True)


def _checked(body, schema: dict, root: str):
    """``body`` when it has the shape the driver reads; else the store is
    unavailable, saying which key is wrong."""
    error = validation.first_error(jsonschema.Draft7Validator(schema), body)
    if error is not None:
        field, problem = validation.describe(error)
        raise stores.StoreUnavailable(
            f'policy API: unexpected answer: {field or root}: {problem}')
    return body


def _stored(group: dict) -> records.GroupRecord:
    try:
        return records.GroupRecord.of(group, policy.parse_document(
            {'policies': group['policies'], 'rules': group['rules']}))
    except policy.PolicyError as exc:
        raise stores.StoreUnavailable(
            f'policy API: group {group["id"]}: {exc}')
    except ValueError as exc:    # a time that is not ISO 8601
        raise stores.StoreUnavailable(
            f'policy API: group {group["id"]}: {str(exc)[:200]}')
