"""The paths `coevo matrix` takes for speed keep their verdicts: one interpreter started for the two
zygotes of a worker (the plain one forked off after the shared imports), and the parent's and
worker's cheaper bookkeeping. Verdicts only; no timings here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

F = Task("f", "function task", entry_point="f")


@pytest.fixture(scope="module", params=["auto", "process"])
def ex(request):
    with Executor(ExecConfig(timeout=1.0, memory_mb=256, max_output_bytes=1 << 20, workers=1,
                             isolation=request.param)) as e:
        yield e


PURE = "def f(x):\n    return 2 * x\n"
# impure (imports os): its tests run alone, in processes of the plain zygote, where the standard
# library's classes are as Python has them (not frozen: the store into one works)
IMPURE = ("import os\nimport fractions\n"
          "def f(x):\n"
          "    fractions.Fraction.marker = x\n"
          "    return fractions.Fraction.marker * 2\n")


def test_both_zygotes_of_a_pair_run_their_cells(ex):
    tests = [Test.assertion("assert f(2) == 4"), Test.assertion("assert f(3) == 7"),
             Test.call_expected("f(5)", "10")]
    r = ex.run_matrix(F, [PURE, IMPURE, "def f(x)\n    return x\n", "def f(x):\n    return 1 / 0\n"], tests)
    assert r.status[0] == ["pass", "fail", "pass"]
    assert r.status[1] == ["pass", "fail", "pass"], r.errors[1]  # (a frozen class would raise TypeError)
    assert r.values[1] == [4, 6, 10]
    assert r.status[2] == ["syntax_error"] * 3
    assert r.status[3] == ["error"] * 3 and "ZeroDivisionError" in r.errors[3][0]
    assert ex.guards["frozen_classes"] is True


def test_a_generic_test_runs_in_the_plain_zygote(ex):
    # a test that is not a plain assert on calls: test and program in processes of their own
    test = Test.assertion("import math\nassert math.floor(f(2.5)) == 5")
    r = ex.run_matrix(F, [PURE, "def f(x):\n    return x\n"], [test])
    assert [row[0] for row in r.status] == ["pass", "fail"]


def test_the_pair_survives_many_rows_and_a_runner_restart(ex):
    codes = [f"def f(x):\n    return x + {k}\n" for k in range(12)]
    tests = [Test.assertion(f"assert f({k}) == {2 * k}") for k in range(6)]
    r = ex.run_matrix(F, codes, tests)
    for k, row in enumerate(r.status):
        assert row == ["pass" if j == k else "fail" for j in range(6)]
    hang = ex.run_matrix(F, ["def f(x):\n    while True:\n        pass\n", IMPURE],
                         [Test.assertion("assert f(1) == 2")])
    assert hang.status == [["timeout"], ["pass"]]


def test_the_benchmark_counts_the_cpu_of_a_whole_process_tree_or_says_it_cannot():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from matrix_speed import CpuMeter
    finally:
        sys.path.pop(0)
    meter = CpuMeter()
    where = meter.dir
    # a child and a grandchild that burn some CPU each: both count
    prog = "import os, subprocess, sys\nsubprocess.run([sys.executable, '-c', 'sum(range(10**6))'])\nsum(range(10**6))"
    proc = subprocess.run([sys.executable, "-c", prog], preexec_fn=meter.join if meter.ok else None)
    assert proc.returncode == 0
    secs = meter.seconds()
    if not meter.ok and where is None:
        assert secs is None  # no cgroup to count in here: the report says null
    else:
        assert isinstance(secs, float) and secs > 0
        assert not os.path.exists(where)  # its cgroup is removed after
    assert meter.seconds() is None  # read once
