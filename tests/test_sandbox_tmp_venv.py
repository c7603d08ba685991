"""A virtual environment (or a clone) under the host's /tmp keeps namespace isolation: the
sandbox's fresh /tmp gets the environment's directories bound back, read-only."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import pytest

from matrix.workers import namespaces_unavailable

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(namespaces_unavailable() is not None, reason="no namespaces on this machine")
def test_a_venv_under_tmp_keeps_namespace_isolation():
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="coevo-venv-") as tmp:
        env_dir = Path(tmp) / "venv"
        venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
        py = env_dir / "bin" / "python"
        purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        # this interpreter's packages (numpy, the project) reach the new environment by a .pth file
        (Path(purelib) / "coevo_test.pth").write_text("\n".join([str(ROOT), *site.getsitepackages()]) + "\n")
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "tasks.jsonl").write_text('{"task_id": "t", "prompt": "", "kind": "function", "entry_point": "f"}\n')
        code = f"import os\ndef f():\n    return os.path.exists({str(env_dir)!r})"
        (work / "codes.jsonl").write_text(json.dumps({"task_id": "t", "code": code}) + "\n")
        (work / "tests.jsonl").write_text('{"task_id": "t", "test": "assert f() == True"}\n')
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run = subprocess.run([str(py), "-m", "coevo", "matrix", "--tasks", "tasks.jsonl", "--codes", "codes.jsonl",
                              "--tests", "tests.jsonl", "--out", "m.jsonl", "--isolation", "namespace"],
                             cwd=work, capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr
        assert "degraded" not in run.stderr
        line = json.loads((work / "m.jsonl").read_text())
        assert line["isolation"] == "namespace"
        assert line["status"] == [["pass"]]  # the interpreter's own environment is there, read-only
    assert sys.executable  # the test's own interpreter is untouched
