"""Red-team pass 19: new ways a hostile program (or test) could forge a verdict, leave state for
another cell or run, or escape; one bounded test each, each failing on the tree before its fix."""

from __future__ import annotations

import os
import shutil

import pytest

from matrix import workers as sandbox
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

TASK = Task("t", "p", entry_point="f")


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/run/lock"), reason="root executor, host /run/lock")
@pytest.mark.timeout(60)
def test_what_a_process_mode_cell_leaves_in_any_world_writable_directory_goes_with_it(tmp_path):
    """Process isolation (a root executor: the cells run under uids of their own) removed what a
    cell left only at the top of /dev/shm, /tmp and /var/tmp: a file in /run/lock (world-writable,
    sticky, a tmpfs on most hosts) or in a world-writable directory inside /tmp outlived the cell
    and the run, for any later cell or run to read (cross-cell and cross-run state on the host)."""
    inner = f"/tmp/coevo_rt19_ww_{os.getpid()}"
    os.mkdir(inner)
    os.chmod(inner, 0o1777)  # (as /tmp/.X11-unix is)
    litter = ("def f():\n"
              f"    for d in ('/run/lock', '/var/lock', {inner!r}):\n"
              "        try:\n"
              "            open(d + '/coevo_rt19_litter', 'w').write('x')\n"
              "        except OSError:\n"
              "            pass\n"
              f"    os.mkdir({inner!r} + '/coevo_rt19_dir')\n"
              f"    open({inner!r} + '/coevo_rt19_dir/x', 'w').write('x')\n"
              "    return 3\n")
    try:
        sandbox._WARNED.clear()
        cfg = ExecConfig(timeout=2.0, memory_mb=256, workers=1, isolation="process")
        with Executor(cfg) as ex:
            res = ex.run_matrix(TASK, ["import os\n" + litter], [Test.assertion("assert f() == 3")])
            assert res.status == [["pass"]], res.errors
            left = [d for d in ("/run/lock/coevo_rt19_litter", inner + "/coevo_rt19_litter", inner + "/coevo_rt19_dir")
                    if os.path.lexists(d)]
            assert not left, left
    finally:
        for p in ("/run/lock/coevo_rt19_litter",):
            if os.path.lexists(p):
                os.unlink(p)
        shutil.rmtree(inner, ignore_errors=True)
