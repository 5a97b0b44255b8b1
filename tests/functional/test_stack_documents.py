"""P5's stack documents (benchmarks/p5): each is a valid stack on a world
the suite can build, and the suite's path through the policy API decides
it and reads its cost beside a reference run (no timing here: the figures
belong to ``tools/benchmark.sh stacks``)."""

import io

from benchmarks import common
from benchmarks import stack_documents as sd
from nova_scoped_policies.stacks import model


def test_every_document_is_a_stack_on_a_world_the_suite_builds():
    found = sd.documents()
    assert {d['file'] for d in found} == {
        'p5/20x10-uniform-10k.yaml', 'p5/20x10-cloud-10k.yaml',
        'p5/3x4-cloud-10k.yaml', 'p5/10x10-full90-1k.yaml'}
    assert len({d['key'] for d in found}) == len(found)
    for document in found:
        model.parse(document['stack'])
        assert document['world']['kind'] in ('uniform', 'cloud', 'full')
        assert 0 < document['target_s'] <= sd.LIMIT


def test_a_document_through_the_api_beside_its_reference(monkeypatch):
    """The 90%-full document on 60 hosts: answered 201, and its soft cost
    read from its hosts, held to the reference run's."""
    monkeypatch.setattr(sd, 'REFERENCE', 5.0)
    [document] = [d for d in sd.documents() if 'full90' in d['file']]
    document['world'] = dict(document['world'], hosts=60)
    out = io.StringIO()
    targets = common.Targets(out)
    sd.measure(document, targets, repeat=2)
    lines = out.getvalue().splitlines()
    assert 'stacks_10x10_full90_1k_answered: True' in lines
    key = 'stacks_10x10_full90_1k_cost: '
    [cost] = [line for line in lines if line.startswith(key)]
    assert 'MISSED' not in cost
    world = sd.full(60, 0.9)
    assert all(0 < sum(h.used.values()) for h in world.hosts)
