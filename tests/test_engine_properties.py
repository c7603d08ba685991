"""Verdicts depend only on the (code, test) pair: hypothesis permutation properties.

Permuting the codes and the tests permutes the matrix the same way; sub-matrices agree with the
full one; batched runs agree with one fresh process per cell. The pool mixes pure and impure
codes (batched and isolated paths), crashes, exits, memory errors, a hang, hidden global state and
protected, call-style and generic tests."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

TASK = Task("perm", "double it", entry_point="f")
CODES = [
    "def f(x):\n    return x * 2\n",
    "def f(x):\n    return x + 2\n",
    "def f(x):\n    if x > 2:\n        raise ValueError(x)\n    return 2 * x\n",
    "def f(x):\n    return None\n",
    "def f(x):\n    print('PASS', x)\n    return str(2 * x)\n",
    "def f(x)\n    return x\n",
    "import os\ndef f(x):\n    if x == 1:\n        os._exit(0)\n    return 2 * x\n",
    "import os\ndef f(x):\n    return 2 * x + (os.getpid() < 0)\n",
    "def f(x):\n    if x == 3:\n        return bytearray(1 << 31)\n    return 2 * x\n",
    "G = [0]\ndef f(x):\n    G[0] += 1\n    return 2 * x * G[0]\n",
    "import sys\ndef f(x):\n    if x == 2:\n        sys.exit(0)\n    return x * 2\n",
    "def f(x):\n    while x == 4:\n        pass\n    return 2 * x\n",
]
TESTS = [Test.assertion(f"assert f({i}) == {2 * i}") for i in range(5)] + [
    Test.call_expected("f(3)", "6"),
    Test.assertion("y = f(2)\nassert y == 4"),
    Test.assertion("assert str(f(1)) == '2'"),
]
FAST = settings(max_examples=10, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def ex():
    # 1 s: a program outside the purity check starts a process per test, which a loaded machine
    # (CI beside other jobs) has been seen to keep past 0.5 s
    with Executor(ExecConfig(timeout=1.0, memory_mb=256, workers=2)) as e:
        yield e


@pytest.fixture(scope="module")
def baseline(ex):
    return ex.run_matrix(TASK, CODES, TESTS)


def test_baseline_is_what_each_code_deserves(baseline):
    st_ = baseline.status
    assert st_[0] == ["pass"] * 8
    assert st_[5] == ["syntax_error"] * 8
    assert st_[11][4] == "timeout" and st_[11][:4] == ["pass"] * 4
    assert st_[9][:5] == ["pass"] * 5  # hidden global state: each cell starts fresh
    assert st_[8][3] == "memory" and st_[8][5] == "memory"
    assert st_[6][1] == "error" and st_[10][2] == "error" and st_[10][6] == "error"
    assert st_[4][0] == "fail" and st_[4][7] == "pass"


@FAST
@given(data=st.data())
def test_permuting_codes_and_tests_permutes_the_matrix(ex, baseline, data):
    rows = data.draw(st.permutations(range(len(CODES))), label="codes")
    cols = data.draw(st.permutations(range(len(TESTS))), label="tests")
    res = ex.run_matrix(TASK, [CODES[i] for i in rows], [TESTS[j] for j in cols])
    for a, i in enumerate(rows):
        for b, j in enumerate(cols):
            assert res.status[a][b] == baseline.status[i][j], (i, j)
            assert res.values[a][b] == baseline.values[i][j], (i, j)
            assert bool(res.passed[a, b]) == bool(baseline.passed[i, j])


@FAST
@given(rows=st.lists(st.integers(0, len(CODES) - 1), min_size=1, max_size=6),
       cols=st.lists(st.integers(0, len(TESTS) - 1), min_size=1, max_size=5))
def test_any_sub_matrix_with_repeats_agrees(ex, baseline, rows, cols):
    res = ex.run_matrix(TASK, [CODES[i] for i in rows], [TESTS[j] for j in cols])
    assert res.status == [[baseline.status[i][j] for j in cols] for i in rows]


@pytest.mark.parametrize("mode", [dict(batch=False), dict(isolation="process")])
@settings(max_examples=2, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.permutations(range(len(CODES))))
def test_other_execution_paths_give_the_same_verdicts(baseline, mode, rows):
    """One fresh process per cell (``batch=False``), or the degraded process isolation: the
    same matrix."""
    with Executor(ExecConfig(timeout=1.0, memory_mb=256, workers=2, **mode)) as e:
        res = e.run_matrix(TASK, [CODES[i] for i in rows], TESTS)
    assert res.status == [baseline.status[i] for i in rows]
    assert res.values == [baseline.values[i] for i in rows]
