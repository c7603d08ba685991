"""Mutants cost less (gentests36): a cell's setup (the harness and the probe table, 80-200 KB of
code) was parsed and purity-checked by the sandbox in every cell, 0.6-1 s a cell at load 8, most of
what a mutant cost. The setup now hands the sandbox one string constant that the cell compiles
itself; the cell is as isolated as before (the sandbox still sees an impure setup: every cell runs
in a process of its own). The mutants' verdicts are the same: a killed one, an equivalent one, one
that hangs and one that writes a file where it runs, several in a cell."""

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.target import analyze
from matrix.engine import ExecConfig, Executor

FIX = Path(__file__).parent / "fixtures" / "gentests36"
ROOT = Path(__file__).resolve().parents[1]
SOURCE = (FIX / "tally.py").read_text()

MUTANTS = {  # key: (the change, what it does)
    "m_killed": ("if x < lo:", "if not x < lo:"),
    "m_equivalent": ("if x > hi:", "if x >= hi:"),
    "m_hangs": ("n -= 1", "n += 1"),
    "m_writes": ("if dry_run:", "if not dry_run:"),
}


def call(fn, *args):
    return Step("call", fn, tuple(args), unit=fn)


TABLE = {
    0: Probe("clamp", (call("clamp", "-5"),)),
    1: Probe("clamp", (call("clamp", "10"),)),
    2: Probe("clamp", (call("clamp", "11"),)),
    3: Probe("countdown", (call("countdown", "3"),)),
    4: Probe("save", (call("save", "'out.txt'", "'hi'"),)),
    5: Probe("listing", (call("listing"),)),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    d = tmp_path_factory.mktemp("tally")
    d.chmod(0o755)
    (d / "tally.py").write_text(SOURCE)
    module = analyze(d / "tally.py")
    with Executor(ExecConfig(timeout=30, workers=2, import_paths=(str(d),))) as ex:
        yield SandboxRunner(module, ex), module, d


def test_the_cells_setup_is_constants_the_sandbox_sees_as_impure(runner):
    r, module, _ = runner
    setup = r._task("_CV_PROBES = {0: ('call', 'f', ())}\n").setup
    # before: the harness's 2,000 lines (tens of thousands of nodes) parsed and checked per cell
    assert sum(1 for _ in ast.walk(ast.parse(setup))) < 100
    from matrix.sandbox.harness import compile_source

    assert compile_source(setup, "<setup>", guard=True)[1] is False  # impure: each cell runs alone
    r.standins = ("ctypes",)
    texts = [c.value for c in ast.walk(ast.parse(r._task("").setup)) if isinstance(c, ast.Constant)
             and isinstance(c.value, str)]
    assert any("_CV_STANDINS = ('ctypes',)" in t for t in texts)


def test_mutant_verdicts_several_in_a_cell(runner):
    r, module, d = runner
    before = sorted(os.listdir(d))
    ids = sorted(TABLE)
    work = [(Variant("original", SOURCE), ids)]
    for key, (old, new) in MUTANTS.items():
        assert SOURCE.count(old) == 1
        # the hanging mutant's probe last: a stopping variant stops at its hang
        work.append((Variant(key, SOURCE.replace(old, new)), [p for p in ids if p != 3] + [3]))
    limits = {v.key: 1.0 for v, _ in work}
    stops = {v.key: v.key != "original" for v, _ in work}
    by_key = r.probes_many(work, TABLE, limit=limits, stop_on_timeout=stops)
    orig = by_key["original"][0]
    assert [orig[p]["steps"][0][:2] for p in ids] == [
        ["ok", ["v", 0]], ["ok", ["v", 10]], ["ok", ["v", 10]], ["ok", ["v", 3]], ["ok", ["v", 2]], ["ok", ["v", []]]]

    def differs(key):
        res = by_key[key][0]
        return sorted(p for p in res
                      if (res[p]["steps"], res[p].get("files")) != (orig[p]["steps"], orig[p].get("files")))

    assert differs("m_killed") == [0, 1, 2]  # (clamp(10) and clamp(11) give lo too)
    assert differs("m_equivalent") == []
    hang = by_key["m_hangs"][0]
    assert hang[3]["steps"] == [["timeout"]] and differs("m_hangs") == [3]
    assert differs("m_writes") == [4]
    wrote = by_key["m_writes"][0]
    assert wrote[4]["steps"][0][1] == ["v", -1] and "out.txt" in repr(wrote[4].get("files"))
    # what the mutant wrote was gone for the next probe, and never reached the user's directory
    assert wrote[5]["steps"][0][1] == ["v", []]
    assert sorted(os.listdir(d)) == before


def test_gen_tests_on_the_module_runs_its_mutants_and_leaves_no_files(tmp_path):
    shutil.copy2(FIX / "tally.py", tmp_path / "tally.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "coevo.cli", "gen-tests", "tally.py", "--out", "tests", "-q",
                           "--time-budget", "20", "--seed", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["tally.py", "tests"]
    assert sorted(os.listdir(tmp_path / "tests")) == [".coevo-gen-tests.json", "test_tally.json", "test_tally.py"]
    report = json.loads((tmp_path / "tests" / "test_tally.json").read_text())
    assert report["mutants"]["killed"] >= 1
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["tally.py", "tests"]


# ---------------------------------------------------------------- the first slice of mutants
# shlex, load 11: the first slice held 8 mutants and the original's second run on the candidates
# (the stability check, 366 calls) in one cell: 11.2 s; that time was taken for what 8 mutants
# cost, and the one slice after it held 8 mutants (14 of 200 run in the phase)


class _FakeExecutor:
    config = ExecConfig(timeout=20, workers=2)


def test_a_long_unit_that_does_not_stop_is_split_over_the_cells(tmp_path):
    (tmp_path / "tally.py").write_text(SOURCE)
    r = SandboxRunner(analyze(tmp_path / "tally.py"), _FakeExecutor())
    original = Variant("original", SOURCE)
    mutants = [(Variant(f"m{k}", SOURCE), list(range(20 * k, 20 * k + 20))) for k in range(8)]
    units = [(original, list(range(400)))] + mutants
    cells = r._pack(units, lambda v: 1.0, lambda v: v.key != "original")
    parts = [ids for cell in cells for v, ids in cell if v.key == "original"]
    assert sorted(p for ids in parts for p in ids) == list(range(400))  # each call once
    assert len(parts) >= 2 and max(len(ids) for ids in parts) <= 1.2 * 560 / len(cells)
    # a mutant (it stops at its first hang) is never split
    assert sorted((v.key, ids) for cell in cells for v, ids in cell if v.key != "original") == \
        sorted((v.key, ids) for v, ids in mutants)


class _Runner:
    """probes_many: half a second a round trip, 5 ms a call of the original, 10 ms a mutant's."""

    import_seconds = 0.0

    def __init__(self, now):
        self.now = now
        self.trips = 0

    def probes_many(self, work, table, cov=False, limit=0.5, stop_on_timeout=False):
        self.trips += 1
        self.now[0] += 0.5
        out = {}
        for v, ids in work:
            self.now[0] += (0.005 if v.key == "original" else 0.01) * len(ids)
            out.setdefault(v.key, ({}, {}))[0].update({pid: {"steps": [["value", ["v", 1]]]} for pid in ids})
        return out


def test_the_original_s_rerun_is_not_taken_for_what_the_mutants_cost(monkeypatch):
    from coevo.testgen import module_suite
    from coevo.testgen.mutants import ModuleMutant

    now = [1000.0]
    monkeypatch.setattr(module_suite.time, "monotonic", lambda: now[0])
    b = module_suite._SuiteBuilder.__new__(module_suite._SuiteBuilder)
    b.clock = module_suite._Clock(60.0, None)
    n_probes, n_mutants = 800, 120
    b.table = {i: Probe("f", (Step("call", "f", (str(i),), unit="f"),)) for i in range(n_probes)}
    b.cand_checks = {i: [] for i in range(n_probes)}
    b.t_orig = {i: 0.001 for i in range(n_probes)}
    b.limit = 0.5
    b.second, b.killed_by, b.file_kills = {}, {}, {}
    b.module = type("M", (), {"source": "x = 1\n"})()
    b.mutants = [ModuleMutant(k, "x = 2\n", "constant", 1, "1 -> 2") for k in range(n_mutants)]
    b.tried = {m.index: set() for m in b.mutants}
    b.runner = _Runner(now)
    now[0] += 0.45 * 60  # the phase starts (EXPLORE), about 11 s of it left
    assign = {m.index: [m.index % n_probes, (m.index + 7) % n_probes] for m in b.mutants}
    b.run_mutants(assign, list(range(n_probes)), module_suite.MUTANTS - 0.08)
    ran = sum(1 for m in b.mutants if b.tried[m.index])
    assert len(b.second) == n_probes  # the original's re-run happened
    assert ran == n_mutants, (ran, b.runner.trips)


def _run_setup(setup, compiled):
    import builtins

    def counting_compile(*args, **kwargs):
        compiled.append(args[1] if len(args) > 1 else "")
        return builtins.compile(*args, **kwargs)

    g = {"__builtins__": dict(vars(builtins), compile=counting_compile)}
    exec(builtins.compile(setup, "<setup>", "exec"), g)
    return g


def test_the_cells_get_the_harness_compiled_once_by_the_parent(runner, monkeypatch):
    """Each cell compiled the harness's text again (about 50 ms of CPU a cell, four cells or more a
    slice of mutants); the parent compiles it once and hands the cells the code object. A cell
    whose Python is another version compiles the text itself."""
    r, module, _ = runner
    setup = r._task("_CV_PROBES = {0: ('call', 'f', ())}\n").setup
    compiled: list = []
    g = _run_setup(setup, compiled)
    assert "<setup>" not in compiled and callable(g["_cv_main"]) and g["_CV_PROBES"] == {0: ("call", "f", ())}
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    g = _run_setup(setup, compiled)
    assert "<setup>" in compiled and callable(g["_cv_main"]) and g["_CV_PROBES"] == {0: ("call", "f", ())}
