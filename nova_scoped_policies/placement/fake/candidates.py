"""``GET /allocation_candidates`` (from microversion 1.10): its query and
its answer.

Every provider is its own root (no nested or sharing providers), so a
candidate is one provider with all the resources, and root traits are its
traits.
"""

import re

from nova_scoped_policies.placement import model
from nova_scoped_policies.placement.fake import errors
from nova_scoped_policies.placement.fake import microversion
from nova_scoped_policies.placement.fake import queries

_PARAMS = {'resources': (1, 10), 'limit': (1, 16), 'required': (1, 17),
           'member_of': (1, 21), 'in_tree': (1, 31),
           'root_required': (1, 35), 'group_policy': (1, 25),
           'same_subtree': (1, 36)}
_GRANULAR = re.compile(r'^(resources|required|member_of|in_tree)'
                       r'[0-9A-Za-z_-]+$')


def parse_query(placement: model.Placement, params, version
                ) -> model.CandidateQuery:
    """Validate ``GET /allocation_candidates`` parameters.

    :param placement: the model, which knows the traits.
    :param params: the query string as a multidict (``getall``).
    :param version: the request's microversion.
    :raises APIError: 400 naming the bad parameter, as Placement does;
        501 for granular groups and ``in_tree``, not served.
    """
    if version >= (1, 25) and any(_GRANULAR.match(k) for k in params):
        raise errors.not_served('granular request groups')
    queries.check_params(params, _PARAMS, version)
    for key in ('in_tree', 'group_policy', 'same_subtree'):
        if key in params:
            raise errors.not_served(f'{key} (nested providers, granular '
                                    'request groups)')
    if 'member_of' in params and 'resources' not in params:
        raise errors.query_error('All member_of parameters must be '
                                 'associated with resources. Found the '
                                 'following orphaned member_of keys: '
                                 'member_of')
    if len(params.getall('resources')) != 1:
        raise errors.query_error("'resources' is a required property")
    resources = queries.parse_resources(params.getall('resources')[0])
    required, forbidden, any_of = queries.parse_traits(
        placement, queries.required_values(params, version), version)
    root_in, root_out, _ = queries.parse_traits(
        placement, params.getall('root_required'), version, any_of=False)
    required |= root_in
    forbidden |= root_out
    member_in, member_out = queries.parse_member_of(
        params.getall('member_of'), version)
    return model.CandidateQuery(
        resources, frozenset(required), frozenset(forbidden),
        tuple(frozenset(m) for m in member_in), frozenset(member_out),
        queries.parse_limit(params.getall('limit')), any_of)


def allocation_candidates(app, req, version):
    microversion.require(version, (1, 10))
    query = parse_query(app.model, req.GET, version)
    requests = []
    summaries = {}
    for provider in app.model.candidates(query):
        requests.append(_allocation_request(provider, query, version))
        summaries[provider.uuid] = _summary(app.model, provider, query,
                                            version)
    return 200, {'allocation_requests': requests,
                 'provider_summaries': summaries}


def _allocation_request(provider: model.Provider,
                        query: model.CandidateQuery, version) -> dict:
    if version < (1, 12):
        return {'allocations': [{
            'resource_provider': {'uuid': provider.uuid},
            'resources': dict(query.resources)}]}
    alloc = {'allocations': {provider.uuid: {
        'resources': dict(query.resources)}}}
    if version >= (1, 34):
        alloc['mappings'] = {'': [provider.uuid]}
    return alloc


def _summary(placement: model.Placement, provider: model.Provider,
             query: model.CandidateQuery, version) -> dict:
    """A candidate's provider summary: capacity and use of its classes
    (before 1.27 only those asked for), its traits and root."""
    used = placement.used(provider.uuid)
    summary = {'resources': {
        rc: {'capacity': provider.capacity(rc), 'used': used.get(rc, 0)}
        for rc in provider.inventories
        if version >= (1, 27) or rc in query.resources}}
    if version >= (1, 17):
        summary['traits'] = sorted(provider.traits)
    if version >= (1, 29):
        summary['parent_provider_uuid'] = None
        summary['root_provider_uuid'] = provider.uuid
    return summary
