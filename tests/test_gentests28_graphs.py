"""gen-tests on an adjacency-list module (tests/fixtures/gentests28/graphs.py): `graph[node]`
iterated and `start not in graph` made `graph` a list of ints, so bfs_order and shortest_path were
only called on lists ([], [3, 1, 2]: KeyError, IndexError asserted) and their search never ran
(lines 0.75, branches 0.6)."""

from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests28"


def test_a_parameter_named_graph_that_is_subscripted_gets_adjacency_dicts():
    module = analyze(FIX / "graphs.py")
    gen = InputGenerator(module)
    for name in ("bfs_order", "shortest_path"):
        unit = next(u for u in module.units if u.qualname == name)
        (graph, spec), *_ = gen.specs(unit)
        pool = gen.pool(spec, [])
        assert "{'a': ['b'], 'b': ['c'], 'c': []}" in pool, (name, spec, pool[:8])
        assert any(v.startswith("[") for v in pool), pool  # a list (an adjacency matrix) still too
