"""Red-team pass 15: attacks on the newest sandbox code, one bounded test each (each fails on the
tree before its fix)."""

from __future__ import annotations

import os
import time

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

TASK = Task("t", "hostile", entry_point="sq")


@pytest.fixture(scope="module")
def ex():
    cfg = ExecConfig(timeout=1.0, memory_mb=256, max_procs=8, max_output_bytes=64 << 10, workers=1)
    with Executor(cfg) as e:
        yield e


# the harness's channel, found through the frames (a process that runs a program or a generic test
# alone may do anything), sent LOADED again and again for 5 s: each one restarted the worker's timer
# for the cell, so a sleeping process (no CPU: the rlimit never fires) held the run for ever
_RESET_LOADED = r'''
import sys, time
_f = sys._getframe()
while _f is not None and "chan" not in _f.f_locals:
    _f = _f.f_back
_c = _f.f_locals["chan"]
_end = time.monotonic() + 5
while time.monotonic() < _end:
    _c.send(4)  # Frame.LOADED
    time.sleep(0.2)
'''


def test_a_program_resending_loaded_does_not_restart_its_cells_timer(ex):
    code = "import sys\n" + _RESET_LOADED + "def sq(x):\n    return x * x\n"
    t0 = time.monotonic()
    r = ex.run_matrix(TASK, [code], [Test.assertion("assert sq(3) == 9")]).cell(0, 0)
    assert time.monotonic() - t0 < 4.0
    assert r.status == "timeout", r


def test_a_generic_test_resending_loaded_does_not_restart_its_cells_timer(ex):
    test = _RESET_LOADED + "try:\n    assert sq(3) == 9\nexcept ZeroDivisionError:\n    pass\n"
    t0 = time.monotonic()
    r = ex.run_matrix(TASK, ["def sq(x):\n    return x * x\n"], [Test.assertion(test)]).cell(0, 0)
    assert time.monotonic() - t0 < 4.0
    assert r.status == "timeout", r
