"""add_instance's ownership check: Nova when configured, else Placement."""

import pytest
import webob.exc

from nova_scoped_policies.api import hosts


class Nova:
    def __init__(self, owners):
        self.owners = owners

    def server_project(self, uuid):
        return self.owners.get(uuid)


class Placement:
    def __init__(self, found):
        self.found = found

    def request(self, method, url, version=None):
        found = self.found

        class Resp:
            def json(self):
                return found
        return Resp()


def test_nova_decides_when_configured():
    nova = Nova({'i1': 'p'})
    hosts.check_owner(None, 'i1', 'p', nova)
    for instance in ('i1', 'missing'):   # another's, or unknown: alike
        with pytest.raises(webob.exc.HTTPNotFound) as caught:
            hosts.check_owner(None, instance, 'q', nova)
        assert caught.value.explanation == f'instance {instance} not found'


def test_placement_decides_otherwise():
    mine = Placement({'allocations': {'rp': {}}, 'project_id': 'p'})
    hosts.check_owner(mine, 'i1', 'p')
    with pytest.raises(webob.exc.HTTPNotFound):
        hosts.check_owner(mine, 'i1', 'q')
    # no allocations: nothing to reveal, it may join
    hosts.check_owner(Placement({'allocations': {}}), 'i1', 'q')


def test_host_overlap_from_nova_takes_one_call():
    class Aggregates:
        calls = 0

        def aggregate_hosts(self):
            self.calls += 1
            return {f'a{i}': frozenset({f'h{i}'}) for i in range(5000)} | {
                'b': frozenset({'h7', 'x'})}
    nova = Aggregates()
    found = hosts.hosts_in_two_domains(None, ['a1'], [f'a{i}' for i in
                                                      range(2, 5000)] + ['b'],
                                       nova)
    assert found == ['h7'] and nova.calls == 1
