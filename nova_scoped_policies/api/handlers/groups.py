"""``/os-server-groups/{uuid}``: scoped policies of Nova server groups,
their members (added without enforcement) and the audit.

The group uuid is the Nova server group's; the scheduler plugins read the
policies saved here for boots into that group. Policies are stored with
real domain identifiers and shown to tenants in their own form.
"""

import dataclasses

import webob

from nova_scoped_policies.api import audit as group_audit
from nova_scoped_policies.api import hosts
from nova_scoped_policies.api.policies import groups as rules
from nova_scoped_policies.api.schemas import groups as schemas
from nova_scoped_policies.api import topologies
from nova_scoped_policies.api import util
from nova_scoped_policies.api import views
from nova_scoped_policies.api import visibility
from nova_scoped_policies.db import records
from nova_scoped_policies import policy

_PREFIX = 'server_group'


def _group(req, action: str) -> records.GroupRecord:
    """The group of the URL, if the caller may act on it; 404 otherwise
    (other projects' groups are not disclosed)."""
    context, service = util.env(req)
    uuid = util.check_uuid(req.urlvars['uuid'], 'uuid')
    record = service.store.get_group(uuid)
    if not context.can(action, {'project_id': record.project_id},
                       fatal=False):
        raise webob.exc.HTTPNotFound(
            explanation=f'server group {uuid} has no scoped policies')
    return record


def _document(service, data: dict, project_id: str,
              who: visibility.Viewer) -> policy.PolicyDocument:
    """Parse the policy document of a body; identifiers become real.

    :raises webob.exc.HTTPBadRequest: naming the bad field.
    """
    try:
        document = policy.parse_document(data, prefix=_PREFIX)
        topology = topologies.stored(service.store)
        for i, pol in enumerate(document.policies):
            if topology.scope(pol.scope) is None:
                raise policy.PolicyError(document.field_of(i), str(pol),
                                         f'unknown scope {pol.scope!r}')
        unknown = sorted(document.scopes - set(topology.scope_names))
        if unknown:
            # only rules are left naming it
            rules_ = document.rules.to_dict()
            key = next(k for k in sorted(rules_) if k in (
                f'max_server_per_{unknown[0]}', f'min_domains_{unknown[0]}'))
            raise policy.PolicyError(f'{_PREFIX}.rules.{key}', rules_[key],
                                     f'unknown scope {unknown[0]!r}')
        return topology.to_real(document, project_id, real_ids=who.real)
    except policy.PolicyError as exc:
        raise util.bad_policy(exc)


def _check_nova_group(service, uuid: str, project: str) -> None:
    """With ``[nova]`` configured: Nova has the group, in that project."""
    if service.nova is None:
        return
    group = service.nova.group(uuid)
    if group is None:
        raise webob.exc.HTTPBadRequest(
            explanation=f'{_PREFIX}.id: {uuid!r}: Nova has no server group '
            'with this id; create it with Nova first')
    if group.get('project_id') not in (None, project):
        raise webob.exc.HTTPBadRequest(
            explanation=f'{_PREFIX}.id: {uuid!r}: the Nova server group '
            f'belongs to another project than {project}')


def _render(req, record: records.GroupRecord) -> webob.Response:
    service = req.environ[util.SERVICE]
    topology = topologies.stored(service.store)
    return util.json_response(req, {'server_group': views.group(
        record, visibility.viewer(req), topology)})


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
        views.group(r, who, topology) for r in records]})


def show_group(req: webob.Request) -> webob.Response:
    return _render(req, _group(req, rules.SHOW))


def create_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    data = dict(util.extract_json(req, schemas.CREATE)[_PREFIX])
    uuid = util.check_uuid(data.pop('id'), f'{_PREFIX}.id')
    project = data.pop('project_id', None) or context.project_id
    context.can(rules.CREATE, {'project_id': project})
    _check_nova_group(service, uuid, project)
    document = _document(service, data, project, visibility.viewer(req))
    record = service.store.create_group(
        uuid, project, dataclasses.replace(document, name=None),
        name=document.name, user_id=context.user_id)
    return _render(req, record)


def update_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    record = _group(req, rules.UPDATE)
    data = dict(util.extract_json(req, schemas.UPDATE)[_PREFIX])
    name = data.pop('name', None)
    document = None
    if data:
        document = _document(service, data, record.project_id,
                             visibility.viewer(req))
    record = service.store.update_group(record.uuid, document, name)
    return _render(req, record)


def delete_group(req: webob.Request) -> webob.Response:
    record = _group(req, rules.DELETE)
    service = req.environ[util.SERVICE]
    service.store.delete_group(record.uuid)
    return util.json_response(req, None, status=204)


def group_action(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    data = util.extract_json(req, schemas.ACTION)
    if 'add_instance' in data:
        record = _group(req, rules.ADD_INSTANCE)
        instance = util.check_uuid(data['add_instance']['instance_id'],
                                   'add_instance.instance_id')
        hosts.check_owner(service.placement, instance, record.project_id,
                          service.nova)
        record = service.store.add_member(
            record.uuid, instance,
            max_members=service.conf.scoped_policies_api.max_group_members)
    else:
        record = _group(req, rules.REMOVE_INSTANCE)
        record = service.store.remove_member(
            record.uuid,
            util.check_uuid(data['remove_instance']['instance_id'],
                            'remove_instance.instance_id'))
    return _render(req, record)


def audit_group(req: webob.Request) -> webob.Response:
    context, service = util.env(req)
    record = _group(req, rules.AUDIT)
    members = list(record.members)
    if service.nova is not None:
        members += [m for m in service.nova.members(record.uuid)
                    if m not in members]
    record = dataclasses.replace(record, members=tuple(members))
    where = hosts.member_placements(service.placement, members)
    topology = topologies.stored(
        service.store, topologies.hosts_by_aggregate(where.aggregates))
    return util.json_response(req, views.audit(group_audit.audit(
        record, visibility.viewer(req), topology, where.hosts)))
