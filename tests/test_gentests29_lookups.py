"""Arguments that index or look up another argument of the same call (graphs.py's
`shortest_path(graph, start, goal)`: `start not in graph`, `graph[node]`). `start` was drawn as
an int and `goal` from a generic pool, independently of the dict drawn for `graph`, so no call
ever had a start that is a node of its graph: the search never ran (survivors on every line of
it). Such a parameter is now drawn, often, from the keys (or items) of the value drawn for the
other one in the same call."""

import ast
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"
FIX28 = Path(__file__).parent / "fixtures" / "gentests28"  # (the modules gentests28 probed)


def has(container, x):
    try:
        return x in container
    except TypeError:  # an unhashable item
        return False


def calls(path, name):
    module = analyze(path)
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == name)
    out = []
    for probe in gen.initial(unit):
        step = probe.steps[-1]
        try:
            out.append([ast.literal_eval(a) for a in step.args] + [ast.literal_eval(v) for _, v in step.kwargs])
        except ValueError:
            continue
    return out


def test_shortest_path_gets_a_start_and_a_goal_that_are_nodes_of_its_graph():
    got = calls(FIX28 / "graphs.py", "shortest_path")
    keyed = [(g, s, t) for g, s, t in (c for c in got if len(c) == 3)
             if isinstance(g, dict) and has(g, s) and has(g, t)]
    assert keyed, got
    assert any(s != t for _, s, t in keyed), keyed  # a path of more than one node
    assert any(g.get(s) for g, s, _ in keyed), keyed  # from a node with neighbours


def test_bfs_order_starts_from_a_node_of_its_graph_more_than_once():
    got = calls(FIX28 / "graphs.py", "bfs_order")
    keyed = [c for c in got if len(c) == 2 and isinstance(c[0], dict) and has(c[0], c[1])]
    assert len({repr(c) for c in keyed}) >= 3, got


def test_a_name_looked_up_in_a_dict_is_drawn_from_its_keys():
    got = calls(FIX / "lookups.py", "price_of")
    assert any(isinstance(p, dict) and has(p, n) for p, n in got), got
    got = calls(FIX / "lookups.py", "distance")
    assert any(isinstance(d, dict) and len(c) > 1 and has(d, c[1]) for c in got for d in c[:1]), got


def test_an_item_looked_for_in_a_list_is_drawn_from_its_items():
    got = calls(FIX / "lookups.py", "rank")
    lists = {repr(s) for s, p in got if isinstance(s, list) and len(s) > 1 and has(s, p) and p != max(s)}
    assert len(lists) >= 3, got  # (not only the one list whose items the pool of ints happens to hold)
