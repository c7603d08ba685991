"""gen-tests benchmark: `coevo gen-tests` (no model) against Pynguin on the same modules, with the
same time budget per module, both suites scored the same way.

Modules: the fixtures in ``tests/fixtures/gentests`` (functions over numbers, strings and lists, a
small class with state, input validation with exceptions, a package with relative imports, a
planted bug, and two modules that are not ours: ``inflection`` (MIT) and ``roman`` (ZPL 2.1),
vendored with their licences). Each module gets a fresh project directory (``src/`` holds a copy).

Generation, one tool at a time (never concurrently), wall-clock timed:

* coevo: ``python -m coevo gen-tests src/MODULE.py --out coevo_tests --time-budget B``;
* Pynguin: ``PYNGUIN_DANGER_AWARE=1 PYNGUIN --project-path src --module-name MODULE --output-path
  pynguin_tests --maximum-search-time B --seed S`` (its default DynaMOSA search and mutation-based
  assertion generation). Pynguin is never a dependency: pass ``--pynguin PATH`` (its executable,
  e.g. in its own Python 3.11 virtual environment); without it only coevo's side runs.

Scoring, identical for both suites (this project's Python, pytest with plugin autoloading off):

* tests: how many, how many pass on the original code (pytest's own verdict: a strict ``xfail``
  that fails counts as passing, as pytest counts it), how many fail or error;
* flaky: tests whose outcome differs between three runs with different ``PYTHONHASHSEED`` values
  (the third in reverse order);
* line and branch coverage of the module, by coverage.py over the whole suite;
* mutation score with one tool for both: ``mutation_score`` uses this project's AST mutants
  (:mod:`matrix.mutation`'s operators, which coevo's own search also uses, with extra operators),
  ``mutation_score_mutpy`` uses Pynguin's MutPy-derived operators (only with ``--pynguin``, produced
  by its Python), a tool independent of coevo. A mutant is killed when the suite, minus the
  tests that fail on the original code, fails (or errors, or hangs past a timeout) with the mutant
  in place of the module; each mutant runs in a forked process, the mutants sampled (seeded, up to
  ``--mutants``) when there are more;
* seconds: the generation's wall-clock time.

Prints one JSON line (per-module figures for both tools, and for each module whether coevo's
mutation score and branch coverage are at least Pynguin's with zero failing or flaky tests in no
more time). The machine is shared: timings carry the load of the moment, the same for both tools.

    python benchmarks/gen_tests_vs_pynguin.py --pynguin .pynguin-venv/bin/pynguin --budget 30
    python benchmarks/gen_tests_vs_pynguin.py --modules planted_bug.py --budget 10   # coevo only
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "gentests"
MODULES = ["numbers_utils.py", "text_utils.py", "bank_account.py", "validation.py", "planted_bug.py",
           "shapes/geometry.py", "inflection_vendored.py", "roman_vendored.py"]


def _env(src: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_", "COVERAGE"))}
    env.update(PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.update(extra)
    return env


def _module_name(rel: str) -> str:
    return rel[:-3].replace("/", ".")


def _project(work: Path, rel: str) -> tuple[Path, Path]:
    """A fresh project: ``work/src`` with the module (or its whole package); returns (src, file)."""
    src = work / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    top = rel.split("/")[0]
    if "/" in rel:
        shutil.copytree(FIXTURES / top, src / top, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy2(FIXTURES / rel, src / rel)
    return src, src / rel


# ----------------------------------------------------------------------------- generation

def run_coevo(src: Path, rel: str, out: Path, budget: float, seed: int) -> dict:
    cmd = [sys.executable, "-m", "coevo", "gen-tests", str(src / rel), "--out", str(out), "--time-budget",
           str(budget), "--seed", str(seed), "--quiet", "--report", str(out.parent / "coevo_report.json")]
    t0 = time.monotonic()
    # the same environment rule as Pynguin's run below: no PYTHON* variable of the caller's (a
    # PYTHONDONTWRITEBYTECODE=1 there would make one side recompile its modules on every run)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent,
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=budget * 10 + 300)
    secs = time.monotonic() - t0
    return {"seconds": round(secs, 2), "rc": proc.returncode, "stderr": proc.stderr.strip()[-500:]}


def run_pynguin(pynguin: str, src: Path, rel: str, out: Path, budget: float, seed: int) -> dict:
    cmd = [pynguin, "--project-path", str(src), "--module-name", _module_name(rel), "--output-path", str(out),
           "--maximum-search-time", str(int(budget)), "--seed", str(seed)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYNGUIN_DANGER_AWARE"] = "1"
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent, env=env,
                              timeout=budget * 10 + 600)
        rc, err = proc.returncode, (proc.stdout + proc.stderr).strip()[-500:]
    except subprocess.TimeoutExpired:
        rc, err = -9, "timeout"
    return {"seconds": round(time.monotonic() - t0, 2), "rc": rc, "stderr": err if rc else ""}


# ----------------------------------------------------------------------------- mutants

def coevo_mutants(file: Path, limit: int, seed: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from coevo.testgen.mutants import module_mutants

    ms = module_mutants(file.read_text(), limit=None, extra=False)
    codes = [m.code for m in ms]
    random.Random(seed).shuffle(codes)
    return codes[:limit]


_MUTPY_SCRIPT = r'''
import ast, importlib, json, sys
sys.path.insert(0, sys.argv[1])
from pynguin.assertion.mutation_analysis.mutators import FirstOrderMutator
from pynguin.assertion.mutation_analysis.operators import standard_operators
from pynguin.assertion.mutation_analysis.transformer import ParentNodeTransformer
name, file = sys.argv[2], sys.argv[3]
module = importlib.import_module(name)
tree = ParentNodeTransformer.create_ast(open(file).read())
out = []
for _, mutant in FirstOrderMutator(standard_operators).mutate(tree, module):
    try:
        out.append(ast.unparse(mutant))
    except Exception:
        pass
print(json.dumps(out))
'''


def mutpy_mutants(pynguin: str, src: Path, rel: str, file: Path, limit: int, seed: int) -> list[str] | None:
    """Mutants from Pynguin's MutPy-derived operators (run by Pynguin's own Python)."""
    python = Path(pynguin).resolve().parent / "python"
    if not python.exists():
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([str(python), "-c", _MUTPY_SCRIPT, str(src), _module_name(rel), str(file)],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        return None
    codes = list(dict.fromkeys(json.loads(proc.stdout.strip().splitlines()[-1])))
    original = ast.unparse(ast.parse(file.read_text()))
    codes = [c for c in codes if c != original]
    random.Random(seed).shuffle(codes)
    return codes[:limit]


_RUNNER = r'''
import importlib, importlib.util, json, os, select, signal, sys, time
cfg = json.load(sys.stdin)
sys.path.insert(0, cfg["src"])
import pytest
name, file = cfg["module"], cfg["file"]
parent, _, leaf = name.rpartition(".")
if parent:
    importlib.import_module(parent)

def child(source):
    try:
        spec = importlib.util.spec_from_file_location(name, file)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        if parent:
            setattr(sys.modules[parent], leaf, mod)
        exec(compile(source, file, "exec"), mod.__dict__)
    except BaseException:
        os._exit(3)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    args = ["-q", "-x", "-p", "no:cacheprovider", "--rootdir", cfg["tests"], cfg["tests"]]
    for d in cfg["deselect"]:
        args += ["--deselect", d]
    os._exit(int(pytest.main(args)))

results = [None] * len(cfg["mutants"])
running = {}
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    child(cfg["mutants"][0])
results[0] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
# a mutant gets a few times what the original needed (a hang is a kill, found without waiting long)
cfg["timeout"] = min(cfg["timeout"], max(2.0, 4 * (time.monotonic() - t0) + 1.0))
todo = list(range(1, len(cfg["mutants"])))
while todo or running:
    while todo and len(running) < cfg["jobs"]:
        k = todo.pop(0)
        pid = os.fork()
        if pid == 0:
            child(cfg["mutants"][k])
        running[pid] = (k, time.monotonic())
    time.sleep(0.005)
    for pid, (k, t0) in list(running.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            results[k] = os.waitstatus_to_exitcode(status)
            del running[pid]
        elif time.monotonic() - t0 > cfg["timeout"]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            results[k] = "timeout"
            del running[pid]
print(json.dumps(results))
'''


def mutation_score(src: Path, rel: str, file: Path, tests: Path, mutants: list[str], deselect: list[str],
                   timeout: float) -> dict:
    if not mutants:
        return {"score": None, "killed": 0, "total": 0}
    cfg = {"src": str(src), "module": _module_name(rel), "file": str(file), "tests": str(tests),
           "mutants": [file.read_text()] + mutants, "deselect": deselect, "timeout": timeout,
           "jobs": max(1, min(2, os.cpu_count() or 1))}
    env = _env(src)
    env.pop("PYTHONDONTWRITEBYTECODE")  # the test files' rewritten bytecode is cached once, not per mutant
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(cfg), capture_output=True, text=True,
                          cwd=tests, env=env, timeout=timeout * len(mutants) + 300)
    codes = json.loads(proc.stdout.strip().splitlines()[-1])
    baseline, rest = codes[0], codes[1:]
    if baseline != 0:  # the suite does not pass on the original: nothing it "kills" means anything
        return {"score": 0.0, "killed": 0, "total": len(rest), "note": f"suite fails on the original ({baseline})"}
    killed = sum(1 for c in rest if c != 0)
    return {"score": round(killed / len(rest), 4), "killed": killed, "total": len(rest)}


# ----------------------------------------------------------------------------- scoring

def _junit(path: Path) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    out = {}
    if not path.exists():
        return out
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
            elif child.tag == "skipped":
                status = "xfailed" if "xfail" in (child.get("type", "") + child.get("message", "")).lower() \
                    else "skipped"
        out[name] = status
    return out


_REVERSE = "def pytest_collection_modifyitems(items):\n    items.reverse()\n"


def score_suite(src: Path, rel: str, file: Path, tests: Path, mutant_sets: dict[str, list[str]],
                timeout: float) -> dict:
    files = sorted(p for p in tests.rglob("test_*.py"))
    res: dict = {"tests": 0, "passed": 0, "failed": 0, "xfailed": 0, "flaky": 0}
    if not files:
        res.update(line_coverage=0.0, branch_coverage=0.0, note="no test file")
        for key in mutant_sets:
            res[key] = 0.0
        return res
    runs = []
    plugin_dir = Path(tempfile.mkdtemp(prefix="gtb-plugin-"))
    (plugin_dir / "cv_reverse.py").write_text(_REVERSE)
    for k, seed in enumerate((11, 22, 33)):
        xml = tests / f".junit{k}.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", str(xml),
               "-o", "junit_family=xunit1", "--rootdir", str(tests), str(tests)]
        env = _env(src, PYTHONHASHSEED=str(seed))
        if k == 2:
            cmd[3:3] = ["-p", "cv_reverse"]
            env["PYTHONPATH"] = f"{src}{os.pathsep}{plugin_dir}"
        subprocess.run(cmd, capture_output=True, text=True, cwd=tests, env=env, timeout=600)
        runs.append(_junit(xml))
        xml.unlink(missing_ok=True)
    shutil.rmtree(plugin_dir, ignore_errors=True)
    first = runs[0]
    names = set().union(*runs)
    res["tests"] = len(first)
    res["passed"] = sum(1 for v in first.values() if v == "passed")
    res["xfailed"] = sum(1 for v in first.values() if v == "xfailed")
    res["failed"] = sum(1 for v in first.values() if v == "failed")
    res["flaky"] = sum(1 for n in names if len({r.get(n) for r in runs}) > 1)
    deselect = []
    for n, v in first.items():
        if v == "failed":
            cls, _, test = n.partition("::")
            deselect.append(f"{cls.replace('.', '/')}.py::{test}")
    # coverage of the module by the whole suite
    data = tests / ".coverage.bench"
    cov_json = tests / ".coverage.json"
    subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--branch",
                    f"--include={file}", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                   capture_output=True, text=True, cwd=tests, env=_env(src), timeout=600)
    subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(cov_json)],
                   capture_output=True, text=True, cwd=tests, env=_env(src), timeout=120)
    try:
        summary = next(iter(json.loads(cov_json.read_text())["files"].values()))["summary"]
        res["line_coverage"] = round(summary["covered_lines"] / max(1, summary["num_statements"]), 4)
        res["branch_coverage"] = round(summary.get("covered_branches", 0) / summary["num_branches"], 4) \
            if summary.get("num_branches") else 1.0
    except (OSError, ValueError, StopIteration, KeyError):
        res["line_coverage"] = res["branch_coverage"] = 0.0
    data.unlink(missing_ok=True)
    cov_json.unlink(missing_ok=True)
    for key, mutants in mutant_sets.items():
        m = mutation_score(src, rel, file, tests, mutants, deselect, timeout)
        res[key] = m["score"]
        res[key + "_detail"] = {k: v for k, v in m.items() if k != "score"}
    return res


# ----------------------------------------------------------------------------- driver

def run_benchmark(modules: list[str], budget: float, pynguin: str | None, work: Path, *, seed: int = 0,
                  mutants: int = 150, timeout: float = 10.0, progress: bool = True) -> dict:
    out: dict = {"benchmark": "gen_tests_vs_pynguin", "budget_s": budget, "seed": seed, "modules": {}}
    for rel in modules:
        wdir = work / rel.replace("/", "_")[:-3]
        src, file = _project(wdir, rel)
        sets = {"mutation_score": coevo_mutants(file, mutants, seed)}
        if pynguin:
            mp = mutpy_mutants(pynguin, src, rel, file, mutants, seed)
            if mp is not None:
                sets["mutation_score_mutpy"] = mp
        row: dict = {}
        tools = [("coevo", None)] + ([("pynguin", pynguin)] if pynguin else [])
        for tool, exe in tools:
            tdir = wdir / f"{tool}_tests"
            if tdir.exists():
                shutil.rmtree(tdir)
            tdir.mkdir(parents=True)
            if progress:
                print(f"[{rel}] {tool}: generating ({budget:g}s budget)", file=sys.stderr, flush=True)
            gen = run_coevo(src, rel, tdir, budget, seed) if tool == "coevo" else \
                run_pynguin(exe, src, rel, tdir, budget, seed)
            if progress:
                print(f"[{rel}] {tool}: {gen['seconds']}s (rc {gen['rc']}); scoring", file=sys.stderr, flush=True)
            score = score_suite(src, rel, file, tdir, sets, timeout)
            row[tool] = {**score, "seconds": gen["seconds"], "rc": gen["rc"]}
            if gen["rc"] not in (0,) and gen.get("stderr"):
                row[tool]["error"] = gen["stderr"]
            if tool == "coevo":
                rep = wdir / "coevo_tests" / ".." / "coevo_report.json"
                try:
                    mods = json.loads(rep.read_text())["modules"]
                    row[tool]["suspects"] = sum(len(m.get("suspects", [])) for m in mods)
                except (OSError, ValueError, KeyError):
                    pass
        if pynguin:
            c, p = row["coevo"], row["pynguin"]
            keys = [k for k in ("mutation_score", "mutation_score_mutpy") if k in c]
            row["coevo_at_least_pynguin"] = {
                **{k: (c[k] or 0) >= (p[k] or 0) for k in keys},
                "branch_coverage": c["branch_coverage"] >= p["branch_coverage"],
                "no_failing_or_flaky": c["failed"] == 0 and c["flaky"] == 0,
                "time": c["seconds"] <= p["seconds"],
            }
        out["modules"][rel] = row
    rows = out["modules"].values()
    summary: dict = {}
    for tool in ("coevo", "pynguin"):
        vals = [r[tool] for r in rows if tool in r]
        if not vals:
            continue
        summary[tool] = {k: round(sum((v.get(k) or 0) for v in vals) / len(vals), 4)
                         for k in ("mutation_score", "mutation_score_mutpy", "line_coverage", "branch_coverage")
                         if any(k in v for v in vals)}
        summary[tool].update(tests=sum(v["tests"] for v in vals), failed=sum(v["failed"] for v in vals),
                             flaky=sum(v["flaky"] for v in vals),
                             seconds=round(sum(v["seconds"] for v in vals), 1))
    if pynguin:
        summary["goal_met_on_every_module"] = all(all(r["coevo_at_least_pynguin"].values()) for r in rows)
    out["summary"] = summary
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pynguin", default=None, metavar="PATH",
                    help="the Pynguin executable (its own venv); without it only coevo runs")
    ap.add_argument("--budget", type=float, default=30.0, metavar="S", help="seconds per module for each tool")
    ap.add_argument("--modules", nargs="*", default=MODULES, metavar="REL",
                    help=f"fixture modules under tests/fixtures/gentests (default: {' '.join(MODULES)})")
    ap.add_argument("--mutants", type=int, default=150, metavar="N", help="mutants per set and module (sample)")
    ap.add_argument("--timeout", type=float, default=10.0, metavar="S", help="seconds per mutant run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default=None, metavar="DIR", help="working directory (default: a temporary one)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    for rel in args.modules:
        if not (FIXTURES / rel).is_file():
            ap.error(f"no fixture module {rel} under {FIXTURES}")
    if args.pynguin and not shutil.which(args.pynguin) and not Path(args.pynguin).is_file():
        ap.error(f"--pynguin: {args.pynguin} not found")
    if args.pynguin:
        args.pynguin = str(Path(shutil.which(args.pynguin) or args.pynguin).resolve())
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="gen-tests-bench-"))
    line = run_benchmark(args.modules, args.budget, args.pynguin, work, seed=args.seed, mutants=args.mutants,
                         timeout=args.timeout, progress=not args.quiet)
    line["machine"] = f"{os.cpu_count()} CPU, {sys.platform}, Python {sys.version.split()[0]}"
    line["date"] = time.strftime("%Y-%m-%d")
    print(json.dumps(line))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
