"""What the sandbox's attack and right-program test files share (tests/test_redteam21-24.py,
tests/test_right_programs23/24.py): the fork-only marks, one executor of one worker per file, a
test written as a generic (``def test_a``) test, and a program's handle on the sandbox's harness."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor

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
