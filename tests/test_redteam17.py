"""Red-team pass 17: verdicts that disagreed with plain Python (``exec(program); exec(test)`` in a
fresh interpreter) on values and objects crossing from the program's process; one bounded test
each, each failing on the tree before its fix. Each case lists programs, tests and the verdicts
plain Python gives."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


def _generic(test: str) -> str:
    """The test as a generic one (a ``try`` is never split into values)."""
    body = "\n".join("    " + line for line in test.splitlines())
    return f"try:\n{body}\nexcept ZeroDivisionError:\n    pass\n"


def _statuses(ex, entry, codes, tests):
    m = ex.run_matrix(Task("t", "p", entry_point=entry), codes, [Test.assertion(t) for t in tests])
    return [[m.cell(i, j).status for j in range(len(tests))] for i in range(len(codes))]


# numpy's integer scalars crossed as Python ints: in a generic test, a program returning
# ``np.sum(...)`` (an np.int64) passed ``isinstance(r, int)``, ``type(r) is int`` and
# ``json.dumps(r)``, which plain Python fails (the parent's own judging of split tests still reads
# such a value as its int: see README "The sandbox")
_NP_COUNT = "import numpy as np\ndef count(a):\n    return {}(np.sum(np.array(a) > 0))\n"
_NP_TESTS = ["assert isinstance(count([1, -1, 2]), int)", "assert type(count([1, 2])) is int",
             "import json\nassert json.dumps(count([1])) == '1'", "assert count([1, -1, 2]) == 2",
             "assert count([1, 2]) + 1 == 3 and [count([1])] == [1] and {count([1]): 'a'}[1] == 'a'",
             "assert list(range(count([1, 2]))) == [0, 1] and 'ab'[count([1])] == 'b'",
             "x = count([1, 2])\nassert sorted([x, 1]) == [1, 2] and max(x, 1) == 2 and -x == -2 and x ** 2 == 4",
             "import numpy as np\nx = count([1, 2])\nassert np.array([1, 2])[x - 1] == 2 and float(x) == 2.0"]


def test_a_numpy_integer_is_no_python_int_in_a_generic_test(ex):
    pytest.importorskip("numpy")
    got = _statuses(ex, "count", [_NP_COUNT.format("int"), _NP_COUNT.format("")], [_generic(t) for t in _NP_TESTS])
    assert got == [["pass"] * 8, ["fail", "fail", "error", "pass", "pass", "pass", "pass", "pass"]]
