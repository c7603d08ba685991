"""Red-team pass 27: a value that also holds one of the program's objects is sent to a generic
test element by element (the object as a reference, the rest as data), and a mutable part held
twice in it crossed as two copies: ``class C: pass`` / ``def f(): r = [0]; return [C(), r, r]``
PASSED ``x = f(); x[1].append(1); assert x[2] == [0]`` (plain Python: fail) and FAILED the right
``assert x[2] == [0, 1]``. A list, dict, set or bytearray met twice in such a value now crosses as
``{"S": [n, form]}`` then ``{"A": n}`` (one object on the test's side, a plain list still: not a
reference, whose proxy is no list to ``type``, ``+`` or ``json``). Each WRONG test fails in plain
Python and must fail in the sandbox; each RIGHT one passes in plain Python and must pass."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"

ex = executor_fixture()

OBJ = "class C:\n    pass\ndef f():\n    r = [0]\n    return [C(), r, r]\n"
NESTED = "class C:\n    pass\ndef f():\n    r = [0]\n    return [C(), r, [r]]\n"
DICT = "class C:\n    pass\ndef f():\n    r = {'k': 1}\n    return {'obj': C(), 'a': r, 'b': (r,)}\n"
DEEP = "class C:\n    pass\ndef f():\n    r = [0]\n    return [[C(), r], {'x': r}]\n"

WRONG = [
    ("obj_and_shared_list", OBJ, "x = f()\nx[1].append(1)\nassert x[2] == [0]"),
    ("obj_and_shared_identity", OBJ, "x = f()\nassert x[1] is not x[2]"),
    ("shared_list_inside_a_plain_element", NESTED, "x = f()\nx[1].append(1)\nassert x[2][0] == [0]"),
    ("dict_with_obj", DICT, "d = f()\nd['a']['k'] = 2\nassert d['b'][0] == {'k': 1}"),
    ("deep", DEEP, "x = f()\nx[0][1].append(5)\nassert x[1]['x'] == [0]"),
]
RIGHT = [
    ("obj_and_shared_list", OBJ, "x = f()\nx[1].append(1)\nassert x[2] == [0, 1]"),
    ("obj_and_shared_identity", OBJ, "x = f()\nassert x[1] is x[2]"),
    ("shared_list_inside_a_plain_element", NESTED, "x = f()\nx[1].append(1)\nassert x[2][0] == [0, 1]"),
    ("dict_with_obj", DICT, "d = f()\nd['a']['k'] = 2\nassert d['b'][0] == {'k': 2}"),
    ("deep", DEEP, "x = f()\nx[0][1].append(5)\nassert x[1]['x'] == [0, 5]"),
    ("plain_parts_still_read", OBJ, "x = f()\nassert x[1] == [0] and len(x) == 3 and sorted(x[2]) == [0]"),
    ("shared_part_is_a_list", OBJ, "x = f()\nimport json\nassert type(x[1]) is list and x[1] + [1] == [0, 1]\n"
                                   "assert json.dumps(x[2]) == '[0]'"),
    ("two_shared_parts_apart",
     "class C:\n    pass\ndef f():\n    r = [0]\n    q = [5]\n    return [C(), [r, r], [q, q], r]\n",
     "x = f()\nx[1][0].append(1)\nassert x[2][0] == [5] and x[3] == [0, 1] and x[1][1] is x[3]"),
]


def _cells(rows):
    return [(name, prefix + code, test) for name, code, test in rows for prefix in ("", IMPURE)]


@pytest.mark.parametrize("name,code,test", _cells(WRONG), ids=[f"{c[0]}-{i}" for i, c in enumerate(_cells(WRONG))])
def test_a_shared_part_beside_a_program_object_is_one_object(ex, name, code, test):
    status, detail = run_cell(ex, code, "", test, "generic")
    assert status == "fail", detail


@pytest.mark.parametrize("name,code,test", _cells(RIGHT), ids=[f"{c[0]}-{i}" for i, c in enumerate(_cells(RIGHT))])
def test_the_right_test_of_a_shared_part_beside_a_program_object_passes(ex, name, code, test):
    status, detail = run_cell(ex, code, "", test, "generic")
    assert status == "pass", detail


def test_a_large_value_holding_a_program_object_still_reads_as_a_list(ex):
    """Past the walk's bound (100,000 items) the value is sent element by element as before, a
    list on the test's side (not a reference to the program's)."""
    code = "class C:\n    pass\ndef f():\n    return [C()] + list(range(150000))\n"
    status, detail = run_cell(ex, code, "", "x = f()\nassert type(x) is list and len(x) == 150001 and x[-1] == 149999",
                              "generic")
    assert status == "pass", detail
