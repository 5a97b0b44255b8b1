"""``/os-server-groups/{uuid}``: scoped policies of Nova server groups,
their members (added without enforcement) and the audit.

The group uuid is the Nova server group's; the scheduler plugins read the
policies saved here for boots into that group. Policies are stored with
real domain identifiers and shown to tenants in their own form.

A group's members are those added here and, when ``[nova]`` is
configured, those Nova booted into it; ``remove_instance`` of one of
Nova's records it as excluded (Nova keeps it in its group; the scheduler
and the audit no longer count it), ``add_instance`` of it drops the
exclusion. Another project's group, whether Nova's or stored here, is
answered as one that does not exist.
"""

import dataclasses
import typing

import webob

from nova_scoped_policies.api import audit as group_audit
from nova_scoped_policies.api import hosts
from nova_scoped_policies.api import microversion
from nova_scoped_policies.api import policy as api_policy
from nova_scoped_policies.api.policies import groups as rules
from nova_scoped_policies.api.schemas import groups as schemas
from nova_scoped_policies.api import topologies
from nova_scoped_policies.api import util
from nova_scoped_policies.api import views
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import records
from nova_scoped_policies.engine import admission
from nova_scoped_policies.notifications import payloads
from nova_scoped_policies import policy

_PREFIX = 'server_group'


def _group(req, action: str) -> records.GroupRecord:
    """The group of the URL, if the caller may act on it: 404 for a
    caller of another project who may not see it (not disclosed), 403
    when it may not act (a reader's write)."""
    context, service = util.env(req)
    uuid = util.check_uuid(req.urlvars['uuid'], 'uuid')
    record = service.store.get_group(uuid)
    api_policy.authorize_on(context, action, rules.SHOW, record.project_id,
                            webob.exc.HTTPNotFound(
                                explanation=f'server group {uuid} has no '
                                'scoped policies'))
    return record


OBJECTS_VERSION = '1.3'
"""From here on groups speak complex-anti-affinity.rst's form."""


def _objects(req) -> bool:
    return microversion.require(req.environ, OBJECTS_VERSION)


def _document(req, service, data: dict, project_id: str
              ) -> policy.PolicyDocument:
    """Parse the policy document of a body (from microversion 1.3 in the
    ``policy`` object form, or the policy document of the contract:
    ``policies``, ``rules``); identifiers become real. A group needs a
    policy.

    :raises webob.exc.HTTPBadRequest: naming the bad field.
    """
    who = visibility.viewer(req)
    try:
        if _objects(req) and not {'policies', 'rules'} & set(data):
            document = policy.parse_objects(data, prefix=_PREFIX)
        else:
            document = policy.parse_document(data, prefix=_PREFIX)
            if not document.policies:
                raise policy.PolicyError(
                    f'{_PREFIX}.policies', data.get('policies'),
                    'a group needs at least one policy')
        return admission.admit(document, topologies.stored(service.store),
                               project_id, _PREFIX, real_ids=who.real)
    except policy.PolicyError as exc:
        raise util.bad_policy(exc)


def _check_nova_group(service, context, uuid: str, project: str) -> None:
    """With ``[nova]`` configured: Nova has the group, in that project.

    :raises webob.exc.HTTPNotFound: Nova has no such group, or it is in a
        project whose groups the caller may not see (answered alike).
    :raises webob.exc.HTTPBadRequest: the caller may see the group, and
        it is in another project than ``project``.
    """
    if service.nova is None:
        return
    group = service.nova.group(uuid)
    owner = group.get('project_id') if group is not None else None
    if group is None or (owner not in (None, project) and not context.can(
            rules.SHOW, {'project_id': owner}, fatal=False)):
        raise webob.exc.HTTPNotFound(
            explanation=f'server group {uuid} not found')
    if owner not in (None, project):
        raise webob.exc.HTTPBadRequest(
            explanation=f'{_PREFIX}.id: {uuid!r}: the Nova server group '
            f'belongs to another project than {project}')


def _render(req, record: records.GroupRecord) -> webob.Response:
    service = req.environ[util.SERVICE]
    topology = topologies.stored(service.store)
    return util.json_response(req, {'server_group': views.group(
        record, visibility.viewer(req), topology, _objects(req))})


def list_groups(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    context.can(rules.LIST)
    project = req.GET.get('project_id')
    everyone = util.query_flag(req, 'all_projects')
    if everyone or (project and project != context.project_id):
        context.can(rules.LIST_ALL)
    elif not project:
        project = context.project_id
    who = visibility.viewer(req)
    topology = topologies.stored(service.store)
    records = service.store.list_groups(None if everyone and not project
                                        else project)
    return util.json_response(req, {'server_groups': [
        views.group(r, who, topology, _objects(req)) for r in records]})


def show_group(req: webob.Request) -> webob.Response:
    return _render(req, _group(req, rules.SHOW))


def create_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    data = dict(util.extract_json(req, schemas.CREATE)[_PREFIX])
    uuid = util.check_uuid(data.pop('id'), f'{_PREFIX}.id')
    project = data.pop('project_id', None) or context.project_id
    context.can(rules.CREATE, {'project_id': project})
    _check_nova_group(service, context, uuid, project)
    document = _document(req, service, data, project)
    record = service.store.create_group(
        uuid, project, dataclasses.replace(document, name=None),
        name=document.name, user_id=context.user_id)
    service.notify(req, 'scoped_server_group.create',
                   payloads.of_group(record))
    return _render(req, record)


def update_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    record = _group(req, rules.UPDATE)
    data = dict(util.extract_json(req, schemas.UPDATE)[_PREFIX])
    name = data.pop('name', None)
    document = None
    if data:
        document = _document(req, service, data, record.project_id)
    record = service.store.update_group(record.uuid, document, name)
    service.notify(req, 'scoped_server_group.update',
                   payloads.of_group(record))
    return _render(req, record)


def delete_group(req: webob.Request) -> webob.Response:
    record = _group(req, rules.DELETE)
    service = req.environ[util.SERVICE]
    service.store.delete_group(record.uuid)
    service.notify(req, 'scoped_server_group.delete',
                   payloads.of_group(record))
    return util.json_response(req, None, status=204)


def group_action(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    data = util.extract_json(req, schemas.ACTION)
    if 'add_instance' in data:
        record = _group(req, rules.ADD_INSTANCE)
        instance = util.check_uuid(data['add_instance']['instance_id'],
                                   'add_instance.instance_id')
        booted_in = None
        # an excluded instance is one of Nova's members of this group:
        # adding it back only drops the exclusion
        if instance not in record.excluded:
            hosts.check_owner(service.placement, instance, record.project_id,
                              service.nova)
            if service.nova is not None:
                booted_in = service.nova.server_group(instance)
        record = service.store.add_member(
            record.uuid, instance,
            max_members=service.conf.scoped_policies_api.max_group_members,
            booted_in=booted_in)
        event = 'scoped_server_group.add_member'
    else:
        record = _group(req, rules.REMOVE_INSTANCE)
        instance = util.check_uuid(data['remove_instance']['instance_id'],
                                   'remove_instance.instance_id')
        booted = _booted(service, record)
        if instance not in record.counted(booted):
            raise webob.exc.HTTPNotFound(
                explanation=f'remove_instance.instance_id: instance '
                f'{instance} is not a member of server group {record.uuid}')
        record = service.store.remove_member(record.uuid, instance,
                                             booted=booted)
        event = 'scoped_server_group.remove_member'
    service.notify(req, event, payloads.of_member(record, instance))
    return _render(req, record)


def _booted(service, record: records.GroupRecord) -> typing.List[str]:
    """The group's members as Nova lists them (none without ``[nova]``:
    the service cannot see them)."""
    return (service.nova.members(record.uuid) if service.nova is not None
            else [])


def audit_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    record = _group(req, rules.AUDIT)
    members = record.counted(_booted(service, record))
    record = dataclasses.replace(record, members=members)
    where = hosts.member_placements(service.placement, members)
    topology = topologies.stored(
        service.store, topologies.hosts_by_aggregate(where.aggregates))
    who = visibility.viewer(req)
    found = group_audit.audit(record, who, topology, where.hosts)
    violations = found.result.violations
    if violations:
        # operators read the violations in real identifiers
        if not who.real:
            violations = group_audit.audit(
                record, visibility.Viewer(True, None), topology,
                where.hosts).result.violations
        service.notify(req, 'scoped_policy.violation',
                       payloads.of_violations('server_group', record.uuid,
                                              record.project_id,
                                              violations))
    return util.json_response(req, views.audit(found))
