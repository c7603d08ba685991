"""Red-team pass 33: verdicts that differed from plain Python (``exec(program); exec(setup);
exec(test)`` in one module, the generic shape's ``test_a()`` called after). Each cell states
plain Python's verdict for the split shape and for the generic one, and
:func:`test_the_stated_verdicts_are_plain_pythons` checks those statements against plain Python.

1. The recursion limit is one interpreter's: a limit the program sets (as it loads or in a call)
   is the one the test reads after (``sys.setrecursionlimit(50)`` in ``f``, then the test's
   ``assert sys.getrecursionlimit() != 50`` PASSED every shape).
2. The program's globals the test reads are live, deletions and new ones too: ``global K; del K``
   (or ``del globals()['K']``) in ``f``, then ``assert K == 1`` PASSED a generic test where Python
   raises NameError; a global ``f`` creates was a NameError in a generic test where Python reads
   it. Names the test binds, and the task setup's data, stay the test's (red-team passes 18, 20).
3. A builtin function the program returns that computes from its arguments alone is the test's own
   (``return len``: ``f() is not len`` PASSED every shape); ``eval``, ``getattr``, ``open`` and the
   like stay references (the test calling one would run the program's text in its own process).
4. A program's namedtuple class (``collections.namedtuple``, ``typing.NamedTuple``, nothing added, no
   defaults) is, in a generic test, the class of the values of it the program returns, and the
   test's instances of it are the program's class's there: ``type(f()) is not P`` PASSED every
   shape, and ``g(P(1, 2))`` with ``g`` checking ``type(p) is P`` failed.
5. A float, str or int (past the small ones Python caches) that a returned value holds twice is one
   object in a generic test, as the program's value holds it: ``x = 1.5; return [x, x]`` then ``r[0]
   is not r[1]`` PASSED every shape (one ``{"S": ...}`` then ``{"A": ...}`` on the wire, as a
   tuple's since pass 31; the program's side of a generic test only).
6. A ``types.SimpleNamespace`` the program returns equals, in a generic test, what a namespace of
   its attributes equals (``f() != SimpleNamespace(a=1, b=[2])`` PASSED every shape); it stays the
   program's object (attributes set on it, identity).
7. A standard module the program returns, as the zygote loaded it, is in a generic test the module the
   test imported itself (``f() is not math`` PASSED every shape); one the test reads through the
   program's name stays that reference (one object), and one the program changed stays the program's
   (whose attributes the test reads are checked: an error, red-team pass 22).
8. ``encoding.set_in_order`` (the decoder's and the test side's rebuilding of a set's order) hashes
   no item of its own: non-scalar items are refused before any set is made of them."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

CALL = "import sys\ndef f():\n    sys.setrecursionlimit(50)\n    return 1\n"
LOAD = "import sys\nsys.setrecursionlimit(3000)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
LIMITS = [
    ("limit_call", CALL, "", "import sys\nf()\nassert sys.getrecursionlimit() == 50", "pass", "pass"),
    ("limit_call_not", CALL, "", "import sys\nf()\nassert sys.getrecursionlimit() != 50", "fail", "fail"),
    ("limit_call_later", CALL, "", "import sys\nassert sys.getrecursionlimit() == 1000\nf()\n"
     "assert sys.getrecursionlimit() == 50", "pass", "pass"),
    ("limit_load", LOAD, "", "import sys\nassert sys.getrecursionlimit() == 3000", "pass", "pass"),
    ("limit_load_not", LOAD, "", "import sys\nassert sys.getrecursionlimit() != 3000", "fail", "fail"),
    ("limit_load_deep", LOAD, "", "import sys\nassert f(2900) == 2900 and sys.getrecursionlimit() == 3000",
     "pass", "pass"),
    ("limit_test_then_program", CALL, "", "import sys\nsys.setrecursionlimit(2000)\nf()\n"
     "assert sys.getrecursionlimit() == 50", "pass", "pass"),
    ("limit_program_then_test", CALL, "", "import sys\nf()\nsys.setrecursionlimit(1500)\n"
     "assert sys.getrecursionlimit() == 1500", "pass", "pass"),
]

DEL = "K = 1\ndef f():\n    global K\n    del K\n    return 1\n"
DEL2 = "K = 1\ndef f():\n    del globals()['K']\n    return 1\n"
NEW = "def f():\n    global K\n    K = 5\n    return 1\n"
AGAIN = "K = 1\ndef f():\n    global K\n    del K\n    return 1\ndef g():\n    global K\n    K = 7\n"
CATCH = "f()\ntry:\n    K\n    ok = False\nexcept NameError:\n    ok = True\nassert ok"
GLOBALS = [
    ("deleted", DEL, "", "f()\nassert K == 1", "error", "error"),
    ("deleted_dict", DEL2, "", "f()\nassert K == 1", "error", "error"),
    ("deleted_caught", DEL, "", CATCH, "pass", "pass"),
    ("deleted_read_before", DEL, "", "assert K == 1\nf()\nassert K == 1", "error", "error"),
    ("deleted_made_again", AGAIN, "", "f()\ng()\nassert K == 7", "pass", "pass"),
    ("created", NEW, "", "f()\nassert K == 5", "pass", "pass"),
    ("created_wrong", NEW, "", "f()\nassert K == 6", "fail", "fail"),
    ("created_not_yet", NEW, "", "try:\n    K\n    ok = False\nexcept NameError:\n    ok = True\nf()\n"
     "assert ok and K == 5", "pass", "pass"),
]

BUILTINS = [
    ("builtin_is", "def f():\n    return len\n", "", "assert f() is len", "pass", "pass"),
    ("builtin_is_not", "def f():\n    return len\n", "", "assert f() is not len", "fail", "fail"),
    ("builtin_call", "def f():\n    return sorted\n", "", "g = f()\nassert g is sorted and g([3, 1]) == [1, 3]",
     "pass", "pass"),
    ("builtin_in_list", "def f():\n    return [min, max, abs]\n", "", "assert f() == [min, max, abs]", "pass", "pass"),
    ("builtin_in_list_not", "def f():\n    return [min, max]\n", "", "assert f() != [min, max]", "fail", "fail"),
    ("builtin_key", "def f():\n    return len\n", "", "assert sorted(['ab', 'c'], key=f()) == ['c', 'ab']",
     "pass", "pass"),
]

NT = ("from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)\n"
      "def g(p):\n    return isinstance(p, P) and type(p) is P and p.x == 1\n")
TN = ("from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int\ndef f():\n    return [P(1, 2)]\n"
      "def g(p):\n    return type(p) is P\n")
DEF = ("from collections import namedtuple\nP = namedtuple('P', 'x y', defaults=[0])\ndef f():\n    return P(1)\n"
       "def g(p):\n    return type(p) is P\n")
NAMEDTUPLES = [
    ("nt_type", NT, "", "assert type(f()) is P", "pass", "pass"),
    ("nt_type_not", NT, "", "assert type(f()) is not P", "fail", "fail"),
    ("nt_arg", NT, "", "assert g(P(1, 2)) and g(P(x=1, y=5))", "pass", "pass"),
    ("nt_arg_not", NT, "", "assert not g(P(1, 2))", "fail", "fail"),
    ("nt_round_trip", NT, "", "assert g(f())", "pass", "pass"),
    ("nt_class_api", NT, "", "assert P._fields == ('x', 'y') and P._make([1, 2]) == f()\n"
     "assert f()._replace(x=5) == P(5, 2)\n"
     "assert repr(f()) == 'P(x=1, y=2)' and isinstance(f(), tuple) and f() == (1, 2)", "pass", "pass"),
    ("tn_type", TN, "", "assert type(f()[0]) is P and g(f()[0]) and g(P(3, 4))", "pass", "pass"),
    ("tn_type_not", TN, "", "assert type(f()[0]) is not P", "fail", "fail"),
    ("nt_defaults", DEF, "", "assert P(1) == (1, 0) and f() == P(1) and isinstance(f(), P)", "pass", "pass"),
]

IM = ("def f():\n    x = 1.5\n    s = 'hello world' * 3\n    b = 10 ** 30\n    n = 1000 + len(s)\n"
      "    return [x, x, s, s, b, b, n, n, 2.5 + x, str(b), str(b)]\n")
IDENTITIES = [
    ("same_float", IM, "", "r = f()\nassert r[0] is r[1] and r == [1.5, 1.5] + r[2:]", "pass", "pass"),
    ("same_float_not", IM, "", "r = f()\nassert r[0] is not r[1]", "fail", "fail"),
    ("same_str", IM, "", "r = f()\nassert r[2] is r[3] and r[9] == r[10] and r[9] is not r[10]", "pass", "pass"),
    ("same_str_not", IM, "", "r = f()\nassert r[2] is not r[3]", "fail", "fail"),
    ("same_int", IM, "", "r = f()\nassert r[4] is r[5] and r[6] is r[7] and r[6] == 1033", "pass", "pass"),
    ("same_int_not", IM, "", "r = f()\nassert r[4] is not r[5] or r[6] is not r[7]", "fail", "fail"),
    ("other_float", IM, "", "r = f()\nassert r[8] is not r[0] and r[8] == 4.0", "pass", "pass"),
]

NS = "import types\ndef f():\n    return types.SimpleNamespace(a=1, b=[2])\n"
NSK = "import types\nS = types.SimpleNamespace(count=0)\ndef f():\n    return S\ndef g():\n    return S.count\n"
NAMESPACES = [
    ("ns_eq", NS, "", "import types\nassert f() == types.SimpleNamespace(a=1, b=[2])", "pass", "pass"),
    ("ns_eq_not", NS, "", "import types\nassert f() != types.SimpleNamespace(a=1, b=[2])", "fail", "fail"),
    ("ns_wrong", NS, "", "import types\nassert f() == types.SimpleNamespace(a=2, b=[2])", "fail", "fail"),
    ("ns_other", NS, "", "assert f() != {'a': 1, 'b': [2]} and f() != (1, [2])", "pass", "pass"),
    ("ns_attr", NS, "", "x = f()\nassert x.a == 1 and x.b == [2]\nx.a = 5\nassert x.a == 5", "pass", "pass"),
    ("ns_kept", NSK, "", "s = f()\ns.count = 5\nassert g() == 5 and f() is s", "pass", "pass"),
]

MO = "import math\ndef f():\n    return math\n"
MODULES = [
    ("module_is", MO, "", "import math\nassert f() is math", "pass", "pass"),
    ("module_is_not", MO, "", "import math\nassert f() is not math", "fail", "fail"),
    ("module_as", MO, "", "import math as m\nassert f() is m and f().sqrt(4) == 2.0", "pass", "pass"),
    ("module_programs_name", MO, "", "assert f() is math and f().pi == math.pi", "pass", "pass"),
]

ALL = LIMITS + GLOBALS + BUILTINS + NAMEDTUPLES + IDENTITIES + NAMESPACES + MODULES


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(LIMITS), ids=setup_cell_ids(LIMITS))
def test_the_recursion_limit_a_program_sets_is_the_tests(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(GLOBALS), ids=setup_cell_ids(GLOBALS))
def test_a_global_a_call_deletes_or_creates_is_so_for_the_test(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(BUILTINS), ids=setup_cell_ids(BUILTINS))
def test_a_pure_builtin_the_program_returns_is_the_tests_own(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(NAMEDTUPLES), ids=setup_cell_ids(NAMEDTUPLES))
def test_a_programs_namedtuple_class_is_the_class_of_its_values(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(IDENTITIES), ids=setup_cell_ids(IDENTITIES))
def test_a_float_str_or_int_met_twice_is_one_object(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(NAMESPACES), ids=setup_cell_ids(NAMESPACES))
def test_a_simple_namespace_equals_the_tests_namespace_of_its_attributes(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(MODULES), ids=setup_cell_ids(MODULES))
def test_a_standard_module_returned_is_the_one_the_test_imported(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("code", ["def f():\n    return eval\n", "def f():\n    return getattr\n"])
def test_a_builtin_that_reads_names_or_runs_text_stays_the_programs(ex, code):
    """Left (README): ``f() is eval`` is False in a generic test, as a reference to the program's."""
    status, detail = run_cell(ex, code, "", "assert f() is not eval and f() is not getattr", "generic")
    assert status == "pass", detail


def test_set_in_order_hashes_no_item_of_its_own():
    from matrix.sandbox.encoding import set_in_order

    hashed = []

    class H:
        def __hash__(self):
            hashed.append(self)
            return 1

    assert set_in_order([H(), 1]) is None and set_in_order([1, H()], frozen=True) is None
    assert hashed == []
    assert set_in_order([2, 1]) == {1, 2} and set_in_order([1, 2], frozen=True) == frozenset({1, 2})
