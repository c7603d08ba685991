"""The builtins a hole reads (matrix/plans.py ``_builtins_read``), pinned against a plain walk of
every child node on holes full of literals (issue 23: the planner skips constants and load contexts,
under which no name can be read)."""

from __future__ import annotations

import ast

import pytest

from matrix import plans

HOLES = [
    "f([1, 2, 3], [(4, 5), (6, 7)], {'a': [1, 2]}, {8, 9}, 'abc', b'x', 1.5, -2, None, True, ...)",
    "f([1, 2, 3], key=lambda x: len(x) + max(x, default=0))",
    "f([len(x) for x in [[1], [2, 3]]], sorted([3, 1]), Ellipsis)",
    "f(f'{len(s)!r:>{width}} and {1}', 'x' * 3)",
    "f({'k': (lambda: abs(-1))()}, *[1, 2], **{'z': min(1, 2)})",
    "f(x)[0:len(y):2]",
    "math.floor(f([1.0, 2.0]))",
    "f(x := [1, 2], x[0], collections.Counter('ab'))",
    "f([[[[1, 2], [3]], [[4]]], [[[5]]]], str(1))",
]


def _reference(node):
    top, nested = set(), set()
    stack = [(node, False)]
    while stack:
        n, inner = stack.pop()
        if type(n) is ast.Name:
            if n.id in plans._BUILTINS:
                (nested if inner else top).add(n.id)
            continue
        if type(n) is ast.Attribute and type(n.value) is ast.Name and n.value.id in plans._STDLIB \
                and n.value.id not in plans._BUILTINS:
            nested.add(n.value.id)
        inner = inner or isinstance(n, plans._SCOPES)
        stack.extend((c, inner) for c in ast.iter_child_nodes(n))
    return top, nested


@pytest.mark.parametrize("hole", HOLES)
def test_the_builtins_read_are_those_of_a_walk_of_every_node(hole):
    node = ast.parse(hole, mode="eval").body
    assert plans._builtins_read(node) == _reference(node)


def test_the_corpus_reads_builtins_at_both_levels():
    got = [plans._builtins_read(ast.parse(h, mode="eval").body) for h in HOLES]
    assert any("Ellipsis" in top for top, _ in got) and any("len" in nested for _, nested in got)
    assert any("collections" in nested for _, nested in got)
