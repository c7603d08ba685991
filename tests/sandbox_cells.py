"""What the sandbox's attack and right-program test files share (tests/test_redteam21-24.py,
tests/test_right_programs23-25.py): the fork-only marks, one executor of one worker per file, a
test written as a generic (``def test_a``) test, one cell run in either shape, and a program's
handle on the sandbox's harness."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

FORK_ONLY = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(180)]

# (an attack program's first lines: the harness module of its own process, found through sys.modules)
HARNESS = ("import os, sys\n"
           "H = [m for n, m in list(sys.modules.items()) if n.endswith('sandbox.harness')][0]\n")


def executor_fixture():
    """A module-scoped fixture ``ex``: one Executor (one worker, 5 s a test) for the file."""

    def ex():
        with Executor(ExecConfig(timeout=5.0, workers=1)) as e:
            yield e

    return pytest.fixture(scope="module", name="ex")(ex)


def as_generic(test: str) -> str:
    """The assertion lines ``test`` as the body of a generic test function."""
    return "def test_a():\n" + "".join("    " + line + "\n" for line in test.splitlines())


def run_cell(ex, code: str, setup: str, test: str, shape: str):
    """Program ``code`` against the assertion lines ``test`` of a task (entry point ``f``) with
    setup ``setup``, as a split test (``shape`` "split") or a generic one: ``(status, detail)``,
    detail the matrix's statuses and errors for an assertion message."""
    task = Task("t", "p", entry_point="f", setup=setup)
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(task, [code], [Test.assertion(t)])
    return res.status[0][0], (res.status, res.errors)


def four_ways(rows):
    """``(name, code, test, shape)`` for each ``(name, code, test)`` row: the program pure and
    impure (a first line ``import os``: its own process), the test split and generic."""
    return [(name, prefix + code, test, shape) for name, code, test in rows
            for prefix in ("", "import os\n") for shape in ("split", "generic")]


def four_way_ids(rows):
    """Test ids for :func:`four_ways` cells: ``name-pure-split`` ..."""
    return [f"{c[0]}-{'impure' if c[1].startswith('import os') else 'pure'}-{c[3]}" for c in four_ways(rows)]


def plain_verdict(code: str, test: str) -> str:
    """Plain Python's verdict for ``exec(program); exec(test)`` in a fresh interpreter: "pass",
    "fail" (an AssertionError) or "error"."""
    src = f"exec({code!r})\nexec({test!r})\n"
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=60)
    if p.returncode == 0:
        return "pass"
    return "fail" if b"AssertionError" in p.stderr else "error"


def setup_cells(rows):
    """``(name, code, setup, test, shape, want)`` for each ``(name, code, setup, test, want split,
    want generic)`` row: the program pure and impure (a first line ``import os``), the test split
    and generic, each with the verdict plain Python gives that shape (tests/test_redteam29-30.py)."""
    return [(r[0], prefix + r[1], r[2], r[3], shape, r[4] if shape == "split" else r[5]) for r in rows
            for prefix in ("", "import os\n") for shape in ("split", "generic")]


def setup_cell_ids(rows):
    """Test ids for :func:`setup_cells` cells: ``name-pure-split`` ..."""
    return [f"{c[0]}-{'impure' if c[1].startswith('import os') else 'pure'}-{c[4]}" for c in setup_cells(rows)]


_PLAIN_IN_ONE_MODULE = r"""
import json, sys, types
code, setup, test, shape = json.loads(sys.stdin.read())
mod = types.ModuleType("solution")
sys.modules["solution"] = mod
d = mod.__dict__
exec(code, d)
exec(setup, d)
try:
    exec(test, d)
    if shape == "generic":
        d["test_a"]()
    print("pass")
except AssertionError:
    print("fail")
except BaseException:
    print("error")
"""


def plain_verdict_with_setup(code: str, setup: str, test: str, shape: str) -> str:
    """Plain Python's verdict for program, setup and test (split, or generic: ``test_a()`` called
    after) run in one module named ``solution`` in a fresh interpreter."""
    t = test if shape == "split" else as_generic(test)
    out = subprocess.run([sys.executable, "-c", _PLAIN_IN_ONE_MODULE], input=json.dumps([code, setup, t, shape]),
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip()
