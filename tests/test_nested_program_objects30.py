"""A program object nested in a returned value, where only the program's class can answer
(trust30's request, after 8695ef0): a split test's claim that asks a program object inside a list
for its truth or an operator of its own (``not any(x)`` over ``[I(1), I(2)]`` whose ``__bool__``
says False; ``x[0] + 1`` with an ``__add__`` of its own) was an ERROR ("the program returned a I,
not plain data"), where Python passes: the claim now runs as a generic test, where the program's
own code answers. Nested plain values keep their verdicts, and an always-equal object still equals
nothing of the test's (the sandbox's rule, stricter than Python: tests/test_always_equal29.py).
Every other cell's verdict is plain Python's, checked in the file."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, four_way_ids, four_ways, plain_verdict, run_cell

pytestmark = FORK_ONLY

ex = executor_fixture()

FALSY = "class I(int):\n    def __bool__(self):\n        return False\ndef f():\n    return [I(1), I(2)]\n"
ADDS = "class I(int):\n    def __add__(self, o):\n        return I(int(self) * 10 + o)\ndef f():\n    return [I(1)]\n"
EQ = "class A:\n    def __eq__(self, o):\n        return True\n    __hash__ = None\ndef f():\n    return [A()]\n"
PLAIN = "def f():\n    return [1, 2]\n"

# (name, code, test, plain Python's verdict in both shapes)
ROWS = [
    ("falsy_any_right", FALSY, "x = f()\nassert not any(x)", "pass"),
    ("falsy_any_wrong", FALSY, "x = f()\nassert any(x)", "fail"),
    ("falsy_all_wrong", FALSY, "assert all(f())", "fail"),
    ("falsy_filter_right", FALSY, "assert [v for v in f() if v] == []", "pass"),
    ("adds_right", ADDS, "x = f()\nassert x[0] + 1 == 11", "pass"),
    ("adds_wrong", ADDS, "x = f()\nassert x[0] + 1 == 2", "fail"),
    ("eq_wrong", EQ, "assert f() == [5]", "fail"),  # (always-equal: Python passes it)
    ("eq_nested_wrong", EQ, "x = f()\nassert x[0] == 5", "fail"),  # (the same)
    ("eq_pair_wrong", EQ, "x = f()\nassert x[0] == x[0] and not x", "fail"),
    ("plain_right", PLAIN, "x = f()\nassert any(x) and x[0] + 1 == 2", "pass"),
]
CELLS = four_ways([(n, c, t) for n, c, t, _ in ROWS])
EXPECTED = {n: v for n, _, _, v in ROWS}


@pytest.mark.parametrize("name,code,test,shape", CELLS, ids=four_way_ids([(n, c, t) for n, c, t, _ in ROWS]))
def test_a_nested_program_object_is_judged_as_python_judges_it(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == EXPECTED[name], detail


def test_the_stated_verdicts_are_plain_pythons():
    from sandbox_cells import as_generic

    for name, code, test, want in ROWS:
        if name.startswith("eq_"):
            continue
        assert plain_verdict(code, test) == want, name
        assert plain_verdict(code, as_generic(test) + "test_a()\n") == want, name
