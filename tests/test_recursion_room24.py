"""The recursion room a program has in the sandbox is the room it has in plain Python
(``exec(program); exec(test)`` in a fresh interpreter at the same limit; ``python prog.py`` for a
stdio program), on a runner's first row and on every later one (session 23, trust24).

* speed25 (session 22) found that from a program's second row in a runner on, it got one frame
  more than Python: CPython 3.11 counts a recursion unit for an unspecialised call of a builtin
  (``exec``/``eval`` through ``cfunction_vectorcall``) and none once the call site is specialised,
  and the runner's call sites are specialised after a few rows (``f(997)`` passed where Python
  raises RecursionError).
* A program that recurses at its top level (``X = f(990)``, a table built as the module loads)
  was loaded with the interpreter's limit under the harness's own frames: RecursionError in the
  sandbox (every test an error: runner, a program run alone, a generic test's program process)
  where Python loads it.

The verdicts expected are plain Python's, computed here in fresh interpreters."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sandbox_cells import plain_verdict

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

REC = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"


def _generic(test: str) -> str:
    body = "\n".join("    " + line for line in test.splitlines())
    return f"try:\n{body}\nexcept ZeroDivisionError:\n    pass\n"


def _plain_stdio(code: str, stdin: str, expected: str) -> str:
    p = subprocess.run([sys.executable, "-c", code], input=stdin.encode(), capture_output=True, timeout=60)
    if p.returncode != 0:
        return "error"
    return "pass" if p.stdout.decode() == expected else "fail"


def _statuses(ex, codes, tests):
    m = ex.run_matrix(Task("t", "p", entry_point="f"), codes, [Test.assertion(t) for t in tests])
    return [[m.cell(i, j).status for j in range(len(tests))] for i in range(len(codes))]


def test_every_row_of_a_runner_has_pythons_recursion_room():
    split = [f"assert f({k}) == {k}" for k in (995, 996, 997, 998)]
    tests = split + [_generic(t) for t in split]
    # distinct sources (each its own row), run one after another by one runner; an impure one
    # (each of its cells a process of its own)
    codes = [REC + f"# row {i}\n" for i in range(4)] + ["import os\n" + REC]
    want = [[plain_verdict(c, t) for t in tests] for c in codes]
    assert want[0][:4] == ["pass", "pass", "error", "error"]  # (CPython 3.11, limit 1000: the edge)
    stdio = [REC + f"# row {i}\nprint(f(int(input())))\n" for i in range(3)]
    st_tests = [Test.stdio(f"{k}\n", f"{k}\n") for k in (997, 998, 999, 1000)]
    st_want = [[_plain_stdio(c, t.input, t.output) for t in st_tests] for c in stdio]
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        got = [_statuses(ex, codes, tests) for _ in range(2)]  # (the second time: a warm runner)
        st_got = []
        for _ in range(2):
            m = ex.run_matrix(Task("t", "p", kind="stdio"), stdio, st_tests)
            st_got.append([[m.cell(i, j).status for j in range(len(st_tests))] for i in range(len(stdio))])
    assert got == [want, want]
    assert st_got == [st_want, st_want]


def test_a_program_recursing_as_it_loads_has_pythons_room():
    ks = (990, 995, 996, 997)
    codes = [REC + f"X = f({k})\n" for k in ks]
    codes += ["import os\n" + c for c in codes]  # (run alone)
    tests = ["assert f(3) == 3", _generic("assert X > 3")]
    want = [[plain_verdict(c, t) for t in tests] for c in codes]
    assert [w[0] for w in want[:4]] == ["pass", "pass", "pass", "error"]
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        got = [_statuses(ex, codes, tests) for _ in range(2)]
    assert got == [want, want]
