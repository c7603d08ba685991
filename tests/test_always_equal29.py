"""A program object whose ``__eq__`` always says True (the reward hack every code RL paper meets)
equals no plain value of the test's, in a set, a frozenset or a deque as alone or in a list: the
sandbox's one chosen difference from plain Python (``exec(program); exec(test)`` lets such an
object pass ``assert f() == {1}``). Red-team pass 29's R9 fix (067f896) sent the test's set or
deque to the program's ``==`` whatever it held, and these 10 generic cells passed: a copy goes
there now only where the test's container holds an object of the program's or of the setup's
class (what the program's ``==`` must decide), never for plain values alone."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, four_way_ids, four_ways, run_cell

pytestmark = FORK_ONLY
ex = executor_fixture()

AE = "class C:\n    def __eq__(self, o):\n        return True\n    def __hash__(self):\n        return hash(1)\n"
ROWS = [
    ("set", AE + "def f():\n    return {C()}\n", "assert f() == {1}"),
    ("set_two", AE + "def f():\n    return {C(), 2}\n", "assert f() == {1, 2}"),
    ("frozenset", AE + "def f():\n    return frozenset({C()})\n", "assert f() == frozenset({1})"),
    ("deque", AE + "from collections import deque\ndef f():\n    return deque([C()])\n",
     "from collections import deque\nassert f() == deque([1])"),
    ("set_ne", AE + "def f():\n    return {C()}\n", "assert not (f() != {1})"),
    ("list", AE + "def f():\n    return [C()]\n", "assert f() == [1]"),
    ("alone", AE + "def f():\n    return C()\n", "assert f() == 1"),
]


@pytest.mark.parametrize("name,code,test,shape", four_ways(ROWS), ids=four_way_ids(ROWS))
def test_an_always_equal_object_equals_no_plain_value(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "fail", detail
