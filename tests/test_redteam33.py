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
4. ``encoding.set_in_order`` (the decoder's and the test side's rebuilding of a set's order) hashes
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

ALL = LIMITS + GLOBALS + BUILTINS


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
