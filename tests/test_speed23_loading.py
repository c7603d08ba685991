"""What the sandbox's processes load, and from where (issue 23). Loading only; no timings here.

Measured on the MBPP pool (974 tasks, 37,611 cells, /work/s20/speed23/REPORT.md): the executor
byte-compiled the sandbox package's top directory only, so its ``remote/`` subpackage (seven
modules) was compiled from source by every plain zygote at its start and, since the runner's zygote
did not load it, again by every row's process that imported it (a row with a task's setup read
``remote.program_side``): 65-70 ms of CPU per such row instead of ~7 ms, 1.4 s of the run's ~7.5 s.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import matrix.workers as workers

SANDBOX = Path(workers.PACKAGE)


def test_the_sandbox_package_is_byte_compiled_with_its_subpackages(tmp_path, monkeypatch):
    copy = tmp_path / "sandbox"
    shutil.copytree(SANDBOX, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(workers, "PACKAGE", str(copy))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    workers._compile_sandbox()
    sources = sorted(copy.rglob("*.py"))
    assert any(p.parent.name == "remote" for p in sources)
    missing = [str(p.relative_to(copy)) for p in sources
               if not os.path.exists(importlib.util.cache_from_source(str(p)))]
    assert missing == []


def test_both_zygotes_load_the_sandboxs_own_modules_before_any_program():
    # the zygote's shared imports, run as the zygote runs them (the package under its sandbox
    # name, with -B): the generic tests' package is among them, so that neither zygote's children
    # (a runner's row with a task's setup among them) load it again
    code = (
        "import importlib.util, os, sys\n"
        f"here = {str(SANDBOX)!r}\n"
        "spec = importlib.util.spec_from_file_location('_coevo_sandbox', os.path.join(here, '__init__.py'),"
        " submodule_search_locations=[here])\n"
        "pkg = importlib.util.module_from_spec(spec); sys.modules['_coevo_sandbox'] = pkg;"
        " spec.loader.exec_module(pkg)\n"
        "from _coevo_sandbox import zygote\n"
        "before = set(sys.modules)\n"
        "zygote.shared_imports()\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('_coevo_sandbox.')))\n"
    )
    out = subprocess.run([sys.executable, "-s", "-B", "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = eval(out.stdout.strip())  # noqa: S307 - our own child's list of names
    assert "_coevo_sandbox.remote" in loaded and "_coevo_sandbox.remote.program_side" in loaded


@pytest.mark.parametrize("isolation", ["auto", "process"])
def test_a_row_with_a_setup_keeps_its_verdicts(isolation):
    # a runner's row whose task has a setup (MBPP 927's trees of the program's Node) runs in a
    # process forked for it, where the setup's check reads the generic tests' package
    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import Task, Test

    node = ("class Node:\n    def __init__(self, data):\n        self.data = data\n"
            "        self.left = None\n        self.right = None\n")
    right = node + ("def max_height(node):\n    if node is None:\n        return 0\n"
                    "    return 1 + max(max_height(node.left), max_height(node.right))\n")
    wrong = node + "def max_height(node):\n    return 1\n"
    setup = "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\n"
    task = Task("t", "height", setup=setup, entry_point="max_height")
    tests = [Test.assertion("assert max_height(root) == 3"), Test.assertion("assert max_height(root.right) == 1")]
    with Executor(ExecConfig(timeout=2.0, workers=1, isolation=isolation)) as ex:
        r = ex.run_matrix(task, [right, wrong], tests)
    assert r.status == [["pass", "pass"], ["fail", "pass"]], r.errors
