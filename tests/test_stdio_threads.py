"""Stdio programs are judged as ``python prog.py < input`` would be: their stdout after the main
module ran, the non-daemon threads were joined and the ``atexit`` handlers ran (red-team pass 12,
"Stdio programs that print from a thread")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

P = Task("p", "stdio task", kind="stdio")
F = Task("f", "function task", entry_point="f")
TESTS = [Test.stdio("2 3\n", "5\n"), Test.stdio("10 20\n", "30\n")]

CP_IDIOM = """\
import sys, threading
sys.setrecursionlimit(1 << 20)
threading.stack_size(1 << 27)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
def main():
    a, b = map(int, input().split())
    assert depth(50000) == 50000
    print(a + b)
threading.Thread(target=main).start()
"""
THREAD_SLEEP = """\
import threading, time
def main():
    time.sleep(0.2)
    print(sum(map(int, input().split())))
threading.Thread(target=main).start()
"""
THREAD_EXIT = """\
import sys, threading, time
def main():
    time.sleep(0.1)
    print(sum(map(int, input().split())))
threading.Thread(target=main).start()
sys.exit(0)
"""
ATEXIT_EXTRA = "import atexit\natexit.register(print, 'extra line')\nprint(sum(map(int, input().split())))\n"
ATEXIT_ANSWER = "import atexit, sys\nn = sum(map(int, input().split()))\natexit.register(print, n)\nsys.exit()\n"
DAEMON = """\
import threading, time
def late():
    time.sleep(0.6)
    print('late', flush=True)
def spin():
    while True:
        pass
threading.Thread(target=late, daemon=True).start()
threading.Thread(target=spin, daemon=True).start()
print(sum(map(int, input().split())))
"""
NEVER_ENDS = """\
import threading
threading.Thread(target=threading.Event().wait).start()
print(sum(map(int, input().split())))
"""
GOOD = "print(sum(map(int, input().split())))\n"


@pytest.fixture(scope="module", params=["auto", "process"])
def ex(request):
    with Executor(ExecConfig(timeout=0.8, memory_mb=1024, workers=1, isolation=request.param)) as e:
        yield e


def test_output_of_non_daemon_threads_is_stdout(ex):
    r = ex.run_matrix(P, [CP_IDIOM, THREAD_SLEEP, THREAD_EXIT], TESTS)
    assert r.status == [["pass", "pass"]] * 3, (r.status, r.values, r.errors)
    assert r.values[0] == ["5\n", "30\n"]


def test_atexit_handlers_run_and_their_output_counts(ex):
    r = ex.run_matrix(P, [ATEXIT_EXTRA, ATEXIT_ANSWER], TESTS)
    assert r.status[0] == ["fail", "fail"] and r.values[0] == ["5\nextra line\n", "30\nextra line\n"]
    assert r.status[1] == ["pass", "pass"], (r.values, r.errors)


def test_daemon_threads_are_not_waited_for(ex):
    r = ex.run_matrix(P, [DAEMON], TESTS)
    assert r.status == [["pass", "pass"]], (r.status, r.values, r.errors)
    assert r.values[0] == ["5\n", "30\n"]


def test_a_thread_that_never_ends_is_a_timeout_of_its_cell_alone(ex):
    r = ex.run_matrix(P, [NEVER_ENDS, GOOD, THREAD_SLEEP], TESTS[:1])
    assert [row[0] for row in r.status] == ["timeout", "pass", "pass"], (r.status, r.values, r.errors)
    assert r.values[1][0] == "5\n" and r.values[2][0] == "5\n"


def test_function_cells_with_threads_keep_their_verdicts(ex):
    codes = ["import threading\ndef f(x):\n    threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
             "    return 2 * x\n",
             "import threading\nout = []\ndef f(x):\n    t = threading.Thread(target=out.append, args=(2 * x,))\n"
             "    t.start()\n    t.join()\n    return out[-1]\n",
             "def f(x):\n    return 2 * x\n"]
    tests = [Test.assertion("assert f(2) == 4"), Test.assertion("assert f(3) == 6")]
    r = ex.run_matrix(F, codes, tests)
    assert r.status == [["pass", "pass"]] * 3, (r.status, r.errors)


RUNNER_SCRIPT = """
import json, os, signal, sys
from matrix.sandbox import harness, purity
from matrix.sandbox.records import Frame
purity.SAFE_MODULES = purity.SAFE_MODULES | {"threading", "atexit"}
import threading, atexit
harness.prepare()
harness._G["frozen"] = True
if sys.argv[1] == "trap":
    harness._refuse_threads()
signal.signal(signal.SIGALRM, harness._alarm)
pr, pw = os.pipe()
r, w = os.dup2(pr, 20), os.dup2(pw, 21)
os.close(pr)
os.close(pw)
chan = harness._Channel(b"t" * 8, 1 << 20)
out = []
for code in sys.argv[2:]:
    os.dup2(w, harness.RESULT_FD)
    harness._STARTED.clear()
    cmd = {"code": code, "setup": "", "kind": "stdio", "max_out": 1 << 20, "timeout": 2.0,
           "probes": [["stdio", "2 3\\n", True, []]] * 2}
    harness._ticking(0.1)
    harness.run_program(cmd, chan)
    harness._ticking(None)
    data = os.read(r, 1 << 20)
    kinds, off = [], 0
    while off < len(data):
        n = int.from_bytes(data[off:off + 4], "little")
        kinds.append(Frame(data[off + 12]).name + ":" + data[off + 21:off + 4 + n].decode("ascii", "replace"))
        off += 4 + n
    out.append(kinds)
os.write(1, ("\\n" + json.dumps(out) + "\\n").encode())
"""


@pytest.mark.parametrize("trap", ["trap", "notrap"])
def test_runner_refuses_a_program_that_leaves_a_thread_or_an_exit_handler(trap):
    """The shared runner runs only pure programs, which cannot reach ``threading`` or ``atexit``;
    if one did (here: with those modules counted as safe), starting a thread fails in a runner
    and the test is ABNORMAL (it runs again alone, in a cell of its own), as it is when a thread
    is left running (the backstop) or an exit handler is registered."""
    codes = ["import threading, time\nthreading.Thread(target=time.sleep, args=(0.3,)).start()\nprint(5)\n",
             "from atexit import register\nregister(print, 5)\nprint(5)\n",
             "print(sum(map(int, input().split())))\n"]
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.run([sys.executable, "-c", RUNNER_SCRIPT, trap, *codes], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for kinds in out[:2]:  # the plan, then ABNORMAL for the first test: no claim
        assert kinds[0].startswith("PLAN") and len(kinds) == 2, out
        assert kinds[1].startswith("ABNORMAL") and "shared" in kinds[1], out
    assert [k.split(":")[0] for k in out[2]] == ["PLAN", "STDOUT", "STDOUT"], out
