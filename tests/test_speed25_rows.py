"""The runner settles the rows that run none of their code without forking for them (speed25,
issue 23: R3 of /work/s20/REQUESTS.md, and more).

Every row that is not *plain* ran in a process forked from the runner. For a program that is
impure (or whose setup is), or that does not compile, that process runs none of the program's
code: ``run_program`` only says that every cell runs alone (``PLAN`` isolate all), or that loading
fails at the first statement, a relative import (``from .helpers import solve``: a program has no
package, ``LOAD_FAILED`` once for every test), or ``SYNTAX``. The runner now does that itself: the
same frames, no fork. A row whose first import names a module that cannot be found is still
forked (the failing statement is run there for its exact error, and an import searches the file
system); a row that runs code (pure, not plain) is forked as before."""

from __future__ import annotations

import json
import subprocess
import sys

RUNNER = r"""
import importlib, json, marshal, os, signal, sys, tempfile
OUT = sys.argv[1]
from matrix.sandbox import harness, purity
from matrix.sandbox.records import Frame, FRAME_HEADER
from matrix.sandbox.wire import message_bytes
from matrix.plans import plan_test
from matrix.tasks import Test
for m in purity.PRELOAD:
    importlib.import_module(m)
harness.prepare()
harness._G["frozen"] = True
forks = []
real_fork = harness._G["fork"]
def counting_fork():
    forks.append(1)
    return real_fork()
harness._G["fork"] = counting_fork
tests = [Test.assertion(f"assert f({i}) == {i}") for i in range(3)]
probes = [plan_test(t).probe() for t in tests]
programs = {
    "missing": "import numpy_scipy_extras_not_here\ndef f(x):\n    return x\n",
    "relative": "from .helpers import solve\ndef f(x):\n    return solve(x)\n",
    "exists": "import os\ndef f(x):\n    return x\n",
    "later": "import os\nimport numpy_scipy_extras_not_here\ndef f(x):\n    return x\n",
    "syntax": "def f(x)\n    return x\n",
    "pure_not_plain": "class A:\n    def __init__(self, x):\n        self.x = x\ndef f(x):\n    return A(x).x\n",
    "plain": "def f(x):\n    return x\n",
}
out = {}
for name, code in programs.items():
    cmd = {"code": code, "setup": "", "kind": "function", "max_out": 1 << 20, "timeout": 2.0,
           "probes": probes, "optional": [False] * 3}
    r, w = os.pipe()
    os.write(w, bytes(message_bytes(marshal.dumps([cmd]))))
    os.close(w)
    os.dup2(r, 4)
    os.close(r)
    res = tempfile.TemporaryFile()
    os.dup2(res.fileno(), 3)
    forks.clear()
    cr, cw = os.pipe()
    pid = os.fork()
    if pid == 0:  # (run_rows freezes the collector and changes signals: a process of its own)
        code = 1
        try:
            harness.run_rows(harness._Channel(b"t" * 8, 1 << 20))
            code = 0
        finally:
            os.write(cw, json.dumps(len(forks)).encode())
            os._exit(code)
    os.close(cw)
    os.waitpid(pid, 0)
    count = os.read(cr, 100)
    os.close(cr)
    res.seek(0)
    data = res.read()
    frames = []
    while data:
        size, token, kind, secs = FRAME_HEADER.unpack(data[:FRAME_HEADER.size])
        body = data[FRAME_HEADER.size:size + 4]
        frames.append([Frame(kind).name, body.decode("utf-8", "replace")])
        data = data[size + 4:]
    out[name] = frames
    out[name + "_forks"] = json.loads(count or b"null")
with open(OUT, "w") as fh:
    fh.write(json.dumps(out))
"""


def test_rows_that_run_none_of_their_code_are_settled_without_a_fork(tmp_path):
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(out)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    got = json.loads(out.read_text())
    kinds = {name: [k for k, _ in frames] for name, frames in got.items() if not name.endswith("_forks")}
    # a relative import first: loading fails there, said once
    assert kinds["relative"] == ["PLAN", "LOAD_FAILED", "DONE"], got["relative"]
    assert json.loads(got["relative"][0][1]) == {"isolate": [], "deterministic": True}
    info = json.loads(got["relative"][1][1])
    assert info[:2] == ["code", "ImportError"] and "no known parent package" in info[2], info
    # a module that cannot be found: the same answer, from the row's own process as before
    assert kinds["missing"] == ["PLAN", "LOAD_FAILED", "DONE"], got["missing"]
    assert "numpy_scipy_extras_not_here" in got["missing"][1][1]
    # impure: every cell alone
    assert got["exists"] == got["later"] == [["PLAN", '{"isolate":"all","deterministic":false}'], ["DONE", ""]]
    assert kinds["syntax"] == ["SYNTAX", "DONE"]
    assert kinds["plain"] == kinds["pure_not_plain"] == ["PLAN", "LOADED", "VALUES", "VALUES", "VALUES", "DONE"]
    forks = {name[:-6]: n for name, n in got.items() if name.endswith("_forks")}
    assert forks == {"missing": 1, "relative": 0, "exists": 0, "later": 0, "syntax": 0, "pure_not_plain": 1,
                     "plain": 0}, forks
