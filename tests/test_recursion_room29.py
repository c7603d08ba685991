"""A program's own recursion limit in the sandbox is the limit it has in plain Python
(``exec(program); exec(test)`` in a fresh interpreter), red-team pass 28 (R17):

* a limit the program set itself (``sys.setrecursionlimit(3000)`` as it loads) "stood" under the
  harness's own frames: ``f(2990)`` raised RecursionError in every shape where Python returns;
* the program read the harness's adjusted limit: ``sys.getrecursionlimit() == 1000`` failed, and
  ``sys.setrecursionlimit(sys.getrecursionlimit() * 2)`` gave it room Python does not.

The verdicts expected are plain Python's, computed here in fresh interpreters; the test's own
view of a limit the program set (``sys.getrecursionlimit()`` in the test) is not covered here."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, plain_verdict

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = FORK_ONLY

REC = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"


def _statuses(ex, code, tests):
    m = ex.run_matrix(Task("t", "p", entry_point="f"), [code], [Test.assertion(t) for t in tests])
    return [m.cell(0, j).status for j in range(len(tests))]


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=5.0, workers=1)) as e:
        yield e


ROWS = {
    # (the program's own limit as it loads; a common pattern of contest solutions)
    "set_at_load": ("import sys\nsys.setrecursionlimit(3000)\n" + REC,
                    [f"assert f({k}) == {k}" for k in (2990, 2995, 2996, 2997, 2998)]),
    "set_in_a_call": ("import sys\ndef g(n):\n    sys.setrecursionlimit(4000)\n    return f(n)\n" + REC,
                      [f"assert g({k}) == {k}" for k in (3980, 3993, 3994, 3995, 3996)]),
    "double": ("import sys\nsys.setrecursionlimit(sys.getrecursionlimit() * 2)\n" + REC,
               [f"assert f({k}) == {k}" for k in (1990, 1995, 1996, 1997, 1998)]),
    "read": ("import sys\ndef f(n=0):\n    return sys.getrecursionlimit()\n",
             ["assert f() == 1000", "assert f() != 1000"]),
    "read_after_set": ("import sys\nsys.setrecursionlimit(2500)\ndef f(n=0):\n    return sys.getrecursionlimit()\n",
                       ["assert f() == 2500"]),
    # Python's own errors, as Python raises them
    "errors": ("import sys\n"
               "def f(v):\n"
               "    try:\n"
               "        sys.setrecursionlimit(v)\n"
               "    except (TypeError, ValueError, RecursionError) as e:\n"
               "        return type(e).__name__\n"
               "    return sys.getrecursionlimit()\n",
               ["assert f(0) == 'ValueError'", "assert f(2.5) == 'TypeError'", "assert f('9') == 'TypeError'",
                "assert f(3) == 'RecursionError'", "assert f(True) == 'RecursionError'", "assert f(1500) == 1500"]),
}


@pytest.mark.parametrize("prefix", ["", "import os\n"], ids=["pure", "impure"])
@pytest.mark.parametrize("row", sorted(ROWS))
def test_a_limit_the_program_sets_or_reads_is_pythons(ex, row, prefix):
    code, tests = ROWS[row]
    code = prefix + code
    want = [plain_verdict(code, t) for t in tests]
    if row == "set_at_load":
        assert want == ["pass", "pass", "pass", "error", "error"]  # (CPython 3.11: the edge)
    assert _statuses(ex, code, tests) == want


GENERIC = {
    "test_function": "def test_a():\n    assert f({k}) == {k}\n",
    "test_helper": "def via(n):\n    return f(n)\ndef test_a():\n    assert via({k}) == {k}\n",
    "top_level": "x = f({k})\nassert x == {k}\n",
    "listcomp": "def test_a():\n    assert [f(n) for n in [{k}]] == [{k}]\n",
}


@pytest.mark.parametrize("prefix", ["", "import os\n"], ids=["pure", "impure"])
@pytest.mark.parametrize("where", sorted(GENERIC))
def test_a_generic_tests_frames_count_as_in_python(ex, where, prefix):
    """A test's own functions (``def test_a``, a helper of the test, a comprehension) sit on the
    stack under the program's call in Python: a generic test's call of ``f`` got one frame more
    than Python for each (``f(996)`` passed where Python raises RecursionError)."""
    code = prefix + REC
    tests = [GENERIC[where].format(k=k) + ("\n" if where == "top_level" else "test_a()\n")
             for k in (993, 994, 995, 996, 997)]
    want = [plain_verdict(code, t) for t in tests]
    assert "pass" in want and "error" in want  # (the edge is among them)
    # the sandbox's generic shape: the test as written (its calls of test functions appended by coevo)
    assert _statuses(ex, code, [GENERIC[where].format(k=k) for k in (993, 994, 995, 996, 997)]) == want
