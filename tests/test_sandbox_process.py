"""The degraded level: ``isolation="process"`` (what ``auto`` falls back to without namespaces).

Host files, the network and (under the executor's uid) signals are not protected at this level,
so only the guarantees that still hold are tested: limits, cleanup, trusted verdicts, independence
of cells, the warning and the reported level. Every hostile program here is bounded."""

from __future__ import annotations

import os
import time

import pytest

from matrix import workers as sandbox
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

TASK = Task("t", "process level", entry_point="f")


@pytest.fixture(scope="module")
def ex():
    sandbox._WARNED.clear()
    cfg = ExecConfig(timeout=1.0, memory_mb=256, max_procs=8, max_output_bytes=64 << 10, workers=2,
                     isolation="process")
    with Executor(cfg) as e:
        yield e


def status(ex, code, test="assert f() == 3"):
    return ex.run_matrix(TASK, [code], [Test.assertion(test)]).status[0][0]


def test_level_is_reported(ex, capsys):
    assert ex.isolation == "process"
    assert "process" in ex.isolation_detail
    assert ex.run_matrix(TASK, ["def f():\n    return 3\n"], [Test.assertion("assert f() == 3")]
                         ).isolation == "process"


@pytest.mark.parametrize("code,expected", [
    ("def f():\n    return 3\n", "pass"),
    ("import sys\ndef f():\n    sys.exit(0)\n", "error"),
    ("import os\ndef f():\n    os._exit(0)\n", "error"),
    ("def f():\n    print('PASS')\n", "fail"),
    ("class A:\n    def __eq__(s, o):\n        return True\ndef f():\n    return A()\n", "fail"),
    ("class L(int):\n    def __eq__(s, o):\n        return True\ndef f():\n    return L(1)\n", "fail"),
    ("def f():\n    return bytearray(3 << 30)\n", "memory"),
    ("def f():\n    for _ in range(100):\n        print('x' * (1 << 20))\n", "output_limit"),
    ("def f():\n    while True:\n        pass\n", "timeout"),
])
def test_limits_and_verdicts_hold(ex, code, expected):
    assert status(ex, code) == expected


def test_fork_bomb_is_bounded_and_killed(ex):
    code = """
import os
def f():
    n = 0
    for _ in range(100):          # bounded
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.execv("/bin/sleep", ["sleep", "47.3"])
        n += 1
    return n
"""
    r = ex.run_calls(TASK, [code], ["f()"])[0][0]
    assert r.status == "pass"
    if ex._workers[0].cfg.get("uid") or os.geteuid() != 0:  # the kernel never caps uid 0
        assert r.value < ex.config.max_procs
    time.sleep(0.2)
    left = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    if b"47.3" in fh.read():
                        left.append(d)
            except OSError:
                pass
    assert left == []


def test_cells_stay_independent(ex):
    good = "def f(x):\n    return x + 1\n"
    bad = "import os\ndef f(x):\n    os.kill(os.getpid(), 9)\n"
    tests = [Test.assertion(f"assert f({i}) == {i + 1}") for i in range(3)]
    r = ex.run_matrix(TASK, [bad, good, bad + "# again\n", good + "# again\n"], tests)
    assert r.status[1] == r.status[3] == ["pass"] * 3
    assert all(s == "error" for s in r.status[0] + r.status[2])


def test_a_killed_worker_is_replaced(ex):
    ex.run_matrix(TASK, ["def f():\n    return 3\n"], [Test.assertion("assert f() == 3")])
    for w in ex._workers:
        w.proc.kill()
    r = ex.run_matrix(TASK, [f"def f():\n    return 3\n# program {i}\n" for i in range(4)],
                      [Test.assertion("assert f() == 3")] * 3)
    assert r.passed.all()
