"""Red-team pass 28: one object that a call both returns and stores into an argument (or stores
into two arguments) crossed back to the test as two: ``def f(xs): r = [0]; xs.append(r); return
r`` PASSED ``a = []; b = f(a); b.append(1); assert a[0] == [0]`` (plain Python: fail) and FAILED
the right ``assert a[0] is b``, and the everyday grouping ``return d.setdefault(k, [])`` gave a
list apart from ``d[k]`` (a right program failed). A container held by more than one part of a
reply (its value, the new contents of each argument the call changed) now crosses once:
``{"S": [n, form]}`` where the message first holds it, ``{"A": n}`` after. Each WRONG test fails in
plain Python and must fail in the sandbox; each RIGHT one passes in plain Python and must pass,
as a split test and as a generic one, the program pure and impure (its own process)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, four_way_ids, four_ways, run_cell

pytestmark = FORK_ONLY

ex = executor_fixture()

STORE_AND_RETURN = "def f(xs):\n    r = [0]\n    xs.append(r)\n    return r\n"
TWO_ARGS = "def f(xs, ys):\n    r = [0]\n    xs.append(r)\n    ys.append(r)\n"
RAISES = TWO_ARGS + "    raise ValueError\n"
WITH_OBJECT = "class C:\n    pass\ndef f(xs):\n    r = [0]\n    xs.append(r)\n    return [C(), r]\n"
TRY_TWO = "a = []\nb = []\ntry:\n    f(a, b)\nexcept ValueError:\n    pass\n"

WRONG = [
    ("store_and_return", STORE_AND_RETURN, "a = []\nb = f(a)\nb.append(1)\nassert a[0] == [0]"),
    ("two_arguments", TWO_ARGS, "a = []\nb = []\nf(a, b)\na[0].append(1)\nassert b[0] == [0]"),
    ("two_arguments_then_raises", RAISES, TRY_TWO + "assert a[0] is not b[0]"),
    ("beside_a_program_object", WITH_OBJECT, "a = []\nx = f(a)\nx[1].append(1)\nassert a[0] == [0]"),
]
RIGHT = [
    ("store_and_return", STORE_AND_RETURN, "a = []\nb = f(a)\nb.append(1)\nassert a[0] == [0, 1]"),
    ("store_and_return_is", STORE_AND_RETURN, "a = []\nb = f(a)\nassert a[0] is b"),
    ("setdefault_grouping", "def f(d):\n    d.setdefault('k', [])\n    return d['k']\n",
     "d = {}\nv = f(d)\nv.append(3)\nassert d == {'k': [3]}"),
    ("setdefault_existing", "def f(d):\n    d.setdefault('k', []).append(1)\n    return d['k']\n",
     "d = {'k': [0]}\nv = f(d)\nassert v is d['k'] and v == [0, 1]"),
    ("two_arguments", TWO_ARGS, "a = []\nb = []\nf(a, b)\na[0].append(1)\nassert b[0] == [0, 1] and a[0] is b[0]"),
    ("two_arguments_then_raises", RAISES, TRY_TWO + "assert a[0] is b[0]"),
    ("beside_a_program_object", WITH_OBJECT,
     "a = []\nx = f(a)\nx[1].append(1)\nassert a[0] == [0, 1] and a[0] is x[1]"),
    ("held_twice_beside_a_program_object",
     "class C:\n    pass\ndef f(xs):\n    r = [0]\n    xs.append(r)\n    return [C(), r, r]\n",
     "a = []\nx = f(a)\nx[1].append(1)\nassert a[0] is x[2] and x[2] == [0, 1]"),
    ("holding_a_program_object", "class C:\n    pass\ndef f(xs):\n    r = [C()]\n    xs.append(r)\n    return r\n",
     "a = []\nx = f(a)\nassert a[0] is x"),
    ("nested_dict", "def f(g, k):\n    g[k] = {'n': []}\n    return {'node': g[k]}\n",
     "g = {}\nv = f(g, 'a')\nv['node']['n'].append(1)\nassert g == {'a': {'n': [1]}}"),
    ("counter", "import collections\ndef f(xs):\n    c = collections.Counter('aab')\n    xs.append(c)\n    return c\n",
     "a = []\nc = f(a)\nc['z'] += 1\nassert a[0]['z'] == 1"),
    ("deque", "import collections\ndef f(xs):\n    c = collections.deque([1])\n    xs.append(c)\n    return c\n",
     "a = []\nc = f(a)\nc.append(2)\nassert list(a[0]) == [1, 2]"),
    ("set", "def f(xs):\n    s = set()\n    xs.append(s)\n    return s\n",
     "a = []\ns = f(a)\ns.add(1)\nassert a[0] == {1}"),
    ("in_a_returned_tuple", "def f(xs):\n    r = [0]\n    xs.append(r)\n    return (r, 1)\n",
     "a = []\nt = f(a)\nt[0].append(1)\nassert a == [[0, 1]]"),
    ("twice_in_the_argument", "def f(xs):\n    r = [0]\n    xs.append((r, r))\n    return r\n",
     "a = []\nt = f(a)\nt.append(1)\nassert a[0][0] == [0, 1] and a[0][1] is t"),
    ("keyword_argument", "def f(xs=None, *, into):\n    r = [0]\n    into.append(r)\n    return r\n",
     "a = []\nt = f(into=a)\nt.append(1)\nassert a == [[0, 1]]"),
    ("an_inner_container_changed_too", "def f(m):\n    m[0][0] = 5\n    row = [1]\n    m.append(row)\n    return row\n",
     "m = [[0]]\nr = f(m)\nr.append(2)\nassert m == [[5], [1, 2]]"),
    ("past_the_walk_bound", "def f(xs):\n    r = list(range(200000))\n    xs.append(r)\n    return r\n",
     "a = []\nt = f(a)\nassert t == a[0] and len(t) == 200000"),
]



@pytest.mark.parametrize("name,code,test,shape", four_ways(WRONG), ids=four_way_ids(WRONG))
def test_an_object_returned_and_stored_is_one_object(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "fail", detail


@pytest.mark.parametrize("name,code,test,shape", four_ways(RIGHT), ids=four_way_ids(RIGHT))
def test_the_right_test_of_an_object_returned_and_stored_passes(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "pass", detail


# the other way: a function of the test's that the program calls stores one object into the
# program's container it was given and returns it (or stores it into two)
CB_STORE = "def cb(a):\n    r = [0]\n    a.append(r)\n    return r\n"
CB_TWO = "def cb(a, b):\n    r = [0]\n    a.append(r)\n    b.append(r)\n"
CALLS_STORE = "def f(cb):\n    acc = []\n    r = cb(acc)\n    r.append(1)\n    return acc\n"
CALLS_TWO = "def f(cb):\n    a, b = [], []\n    cb(a, b)\n    a[0].append(1)\n    return b\n"
CALLBACK_WRONG = [
    ("callback_store_and_return", CALLS_STORE, CB_STORE + "assert f(cb) == [[0]]"),
    ("callback_two_arguments", CALLS_TWO, CB_TWO + "assert f(cb) == [[0]]"),
]
CALLBACK_RIGHT = [
    ("callback_store_and_return", CALLS_STORE, CB_STORE + "assert f(cb) == [[0, 1]]"),
    ("callback_store_and_return_is", "def f(cb):\n    acc = []\n    r = cb(acc)\n    return acc[0] is r\n",
     CB_STORE + "assert f(cb) is True"),
    ("callback_two_arguments", CALLS_TWO, CB_TWO + "assert f(cb) == [[0, 1]]"),
]


@pytest.mark.parametrize("name,code,test,shape", four_ways(CALLBACK_WRONG), ids=four_way_ids(CALLBACK_WRONG))
def test_an_object_a_test_function_returns_and_stores_is_one_object(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "fail", detail


@pytest.mark.parametrize("name,code,test,shape", four_ways(CALLBACK_RIGHT), ids=four_way_ids(CALLBACK_RIGHT))
def test_the_right_test_of_an_object_a_test_function_returns_and_stores_passes(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "pass", detail
