"""Speed of `coevo matrix` against a process-per-cell harness and the unsafe in-process floor.

The pool is built from MBPP: per task the reference solution plus AST mutants
(:mod:`matrix.mutation`) as codes, the ground-truth asserts plus "noisy" copies with a perturbed
expected value as tests (what a Tester emits). One run measures, on the same cells:

* ``coevo_matrix``: the CLI as a subprocess on JSONL files (interpreter and CLI start-up, worker
  start-up and writing the output included), sandboxed;
* ``floor``: everything in one plain Python process, no isolation at all: each code compiled
  once, each test compiled once, every cell ``exec`` in a fresh namespace with a SIGALRM
  timeout (the time of the loop itself; it runs in a child process only so that a candidate
  cannot take the benchmark down);
* ``per_cell_harness``: a fresh ``python -c code+setup+test`` per cell, ``--workers`` at a time,
  in the style of common evaluation harnesses (exit status 0 = pass), on a random sample of
  cells (its rate is per cell, so the sample only bounds the run time).

Mutants that loop forever make every runner wait out its timeout, which measures waiting rather
than execution; by default codes that hang are screened out before the measurement (a quick
sandboxed pass with a short timeout, not timed) and counted in the report (``--keep-hangs`` keeps
them). Verdict agreement (pass / not pass) between the three is reported on the cells none of
them timed out. Prints one JSON line.

  python benchmarks/matrix_speed.py [--tasks N] [--mutants K] [--noisy M] [--timeout S]
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = [Path("/work/shared/data/mbpp.jsonl.gz"), ROOT / "data" / "mbpp.jsonl.gz"]


# ----------------------------------------------------------------------------- the pool

def load_mbpp(path: Path) -> list[dict]:
    """The tasks with a reference solution and assert tests, as plain rows for the pool."""
    from coevo.data import load_any

    return [{"task_id": t.task_id, "prompt": t.prompt, "code": t.solutions[0], "setup": t.setup,
             "tests": [x.test for x in t.tests]}
            for t in load_any(path) if t.solutions and t.tests and all(x.kind == "assert" for x in t.tests)]


def _perturb(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 + 1.0
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, (list, tuple)):
        return type(value)(list(value)[:-1]) if value else type(value)([0])
    if isinstance(value, dict):
        d = dict(value)
        d["__noise__"] = 0
        return d
    if isinstance(value, set):
        return value | {"__noise__"}
    if value is None:
        return 0
    raise ValueError


def noisy_test(test: str, rng: random.Random) -> str | None:
    """The assert with its expected literal perturbed (a plausible wrong test), or None."""
    try:
        node = ast.parse(test).body[0]
        cmp = node.test
        if not (isinstance(node, ast.Assert) and isinstance(cmp, ast.Compare) and len(cmp.ops) == 1
                and isinstance(cmp.ops[0], ast.Eq)):
            return None
        side = 1 if not any(isinstance(n, ast.Call) for n in ast.walk(cmp.comparators[0])) else 0
        lit = cmp.comparators[0] if side == 1 else cmp.left
        new = ast.parse(repr(_perturb(ast.literal_eval(lit))), mode="eval").body
        if side == 1:
            cmp.comparators[0] = new
        else:
            cmp.left = new
        return ast.unparse(node)
    except Exception:
        return None


def build_pool(rows, n_tasks, n_mutants, n_noisy, seed):
    from matrix.mutation import mutants

    rng = random.Random(seed)
    rows = rows[:n_tasks] if n_tasks else rows
    pool = []
    for r in rows:
        try:
            muts = [m.code for m in mutants(r["code"], limit=n_mutants, seed=seed)]
        except Exception:
            muts = []
        noisy = [t for t in (noisy_test(x, rng) for x in r["tests"]) if t][:n_noisy]
        pool.append({**r, "codes": [r["code"]] + muts, "all_tests": r["tests"] + noisy})
    return pool


def drop_hanging(pool, timeout: float, workers: int) -> int:
    """Remove the codes that time out on any test (screened in the sandbox); returns how many."""
    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import Task, Test

    jobs = [(Task(p["task_id"], p["prompt"], setup=p["setup"]), p["codes"],
             [Test.assertion(t) for t in p["all_tests"]]) for p in pool]
    with Executor(ExecConfig(timeout=timeout, workers=workers)) as ex:
        results = ex.run_matrices(jobs)
    dropped = 0
    for p, res in zip(pool, results):
        keep = [c for c, row in zip(p["codes"], res.status) if "timeout" not in row]
        dropped += len(p["codes"]) - len(keep)
        p["codes"] = keep
    return dropped


# ----------------------------------------------------------------------------- the three runners

def run_cli(pool, tmp: Path, timeout: float, workers: int) -> dict:
    tasks = tmp / "tasks.jsonl"
    codes = tmp / "codes.jsonl"
    tests = tmp / "tests.jsonl"
    out = tmp / "matrix.jsonl"
    with open(tasks, "w") as ft, open(codes, "w") as fc, open(tests, "w") as fu:
        for p in pool:
            ft.write(json.dumps({"task_id": p["task_id"], "prompt": p["prompt"], "setup": p["setup"]}) + "\n")
            for c in p["codes"]:
                fc.write(json.dumps({"task_id": p["task_id"], "code": c}) + "\n")
            for t in p["all_tests"]:
                fu.write(json.dumps({"task_id": p["task_id"], "test": t}) + "\n")
    cmd = [sys.executable, "-m", "coevo", "matrix", "--tasks", str(tasks), "--codes", str(codes),
           "--tests", str(tests), "--out", str(out), "--timeout", str(timeout), "--workers", str(workers),
           "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT))
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"coevo matrix failed ({proc.returncode}): {proc.stderr[-2000:]}")
    status = {}
    isolation = None
    for line in out.read_text().splitlines():
        d = json.loads(line)
        isolation = d["isolation"]
        status[d["task_id"]] = d["status"]
    return {"seconds": secs, "status": status, "isolation": isolation}


FLOOR_CHILD = r"""
import json, signal, sys, time, os, io, resource
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
pool = json.load(open(sys.argv[1]))
timeout = float(sys.argv[2])
class Timeout(BaseException):
    pass
def alarm(*_):
    raise Timeout()
signal.signal(signal.SIGALRM, alarm)
sink = open(os.devnull, "w")
real_out, real_err = sys.stdout, sys.stderr
status = {}
n_timeout = 0
t_timeouts = 0.0
t0 = time.perf_counter()
for p in pool:
    try:
        tcs = [compile(t, "<test>", "exec") for t in p["all_tests"]]
    except SyntaxError:
        tcs = [None] * len(p["all_tests"])
    rows = []
    for code in p["codes"]:
        try:
            co = compile(code + "\n" + p["setup"], "<solution>", "exec")
        except SyntaxError:
            rows.append(["syntax_error"] * len(tcs))
            continue
        row = []
        for tc in tcs:
            ns = {"__name__": "solution"}
            s = time.perf_counter()
            sys.stdout = sys.stderr = sink
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                exec(co, ns)
                exec(tc, ns)
                verdict = "pass"
            except Timeout:
                verdict = "timeout"
            except AssertionError:
                verdict = "fail"
            except BaseException:
                verdict = "error"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                sys.stdout, sys.stderr = real_out, real_err
            if verdict == "timeout":
                n_timeout += 1
                t_timeouts += time.perf_counter() - s
            row.append(verdict)
        rows.append(row)
    status[p["task_id"]] = rows
secs = time.perf_counter() - t0
json.dump({"seconds": secs, "status": status, "timeouts": n_timeout, "timeout_seconds": t_timeouts},
          open(sys.argv[3], "w"))
"""


def run_floor(pool, tmp: Path, timeout: float) -> dict:
    src, out = tmp / "pool.json", tmp / "floor.json"
    src.write_text(json.dumps(pool))
    prog = tmp / "floor.py"
    prog.write_text(FLOOR_CHILD)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(prog), str(src), str(timeout), str(out)],
                          capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"floor run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    res = json.loads(out.read_text())
    res["process_seconds"] = wall
    return res


def run_per_cell(pool, sample, timeout: float, workers: int) -> dict:
    """``sample``: list of (task index, code index, test index)."""
    def one(cell):
        ti, ci, tj = cell
        p = pool[ti]
        program = p["codes"][ci] + "\n" + p["setup"] + "\n" + p["all_tests"][tj] + "\n"
        try:
            proc = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=timeout,
                                  cwd=tempfile.gettempdir())
            return cell, "pass" if proc.returncode == 0 else "fail"
        except subprocess.TimeoutExpired:
            return cell, "timeout"

    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(workers) as pool_ex:
        results = dict(pool_ex.map(one, sample))
    return {"seconds": time.perf_counter() - t0, "status": results}


# ----------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="MBPP file (mbpp.jsonl.gz or sanitized-mbpp.json)")
    ap.add_argument("--tasks", type=int, default=0, help="use the first N tasks (default: all)")
    ap.add_argument("--mutants", type=int, default=7, help="AST mutants per task (default 7)")
    ap.add_argument("--noisy", type=int, default=3, help="noisy tests per task (default 3)")
    ap.add_argument("--timeout", type=float, default=1.0, help="per-cell timeout, all runners (default 1)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", type=int, default=1000, help="cells run by the per-cell harness")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-hangs", action="store_true", help="do not screen out codes that hang")
    args = ap.parse_args(argv)

    data = Path(args.data) if args.data else next((p for p in DATA if p.exists()), None)
    if data is None or not data.exists():
        raise SystemExit("MBPP data not found; pass --data")
    pool = build_pool(load_mbpp(data), args.tasks, args.mutants, args.noisy, args.seed)
    dropped = 0 if args.keep_hangs else drop_hanging(pool, min(0.5, args.timeout), args.workers)
    pool = [p for p in pool if p["codes"]]
    cells = [(ti, ci, tj) for ti, p in enumerate(pool) for ci in range(len(p["codes"]))
             for tj in range(len(p["all_tests"]))]
    rng = random.Random(args.seed)
    sample = rng.sample(cells, min(args.sample, len(cells)))

    with tempfile.TemporaryDirectory(prefix="coevo-bench-") as tmp:
        tmp = Path(tmp)
        ours = run_cli(pool, tmp, args.timeout, args.workers)
        floor = run_floor(pool, tmp, args.timeout)
        harness = run_per_cell(pool, sample, args.timeout, args.workers)

    n = len(cells)

    def verdict(table, ti, ci, tj):
        return table[pool[ti]["task_id"]][ci][tj]

    agree_floor = disagree_floor = 0
    examples = []
    for ti, ci, tj in cells:
        a, b = verdict(ours["status"], ti, ci, tj), verdict(floor["status"], ti, ci, tj)
        if "timeout" in (a, b):
            continue
        if (a == "pass") == (b == "pass"):
            agree_floor += 1
        else:
            disagree_floor += 1
            if len(examples) < 5:
                examples.append({"task_id": pool[ti]["task_id"], "code": ci, "test": tj, "coevo": a, "floor": b})
    agree_h = disagree_h = 0
    for cell, b in harness["status"].items():
        a = verdict(ours["status"], *cell)
        if "timeout" in (a, b):
            continue
        agree_h += (a == "pass") == (b == "pass")
        disagree_h += (a == "pass") != (b == "pass")

    ours_rate = n / ours["seconds"]
    floor_rate = n / floor["seconds"]
    harness_rate = len(sample) / harness["seconds"]
    counts = {}
    for table in ours["status"].values():
        for row in table:
            for s in row:
                counts[s] = counts.get(s, 0) + 1
    report = {
        "benchmark": "matrix_speed",
        "data": data.name, "tasks": len(pool), "codes": sum(len(p["codes"]) for p in pool),
        "tests": sum(len(p["all_tests"]) for p in pool), "cells": n, "timeout_s": args.timeout,
        "hanging_codes_dropped": dropped,
        "workers": args.workers, "cpu_count": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
        "coevo_matrix": {"seconds": round(ours["seconds"], 3), "cells_per_s": round(ours_rate, 1),
                         "isolation": ours["isolation"], "statuses": counts,
                         "includes": "interpreter + CLI start-up, workers, writing the output"},
        "floor": {"seconds": round(floor["seconds"], 3), "cells_per_s": round(floor_rate, 1),
                  "timeouts": floor["timeouts"], "seconds_in_timeouts": round(floor["timeout_seconds"], 3),
                  "process_seconds": round(floor["process_seconds"], 3)},
        "per_cell_harness": {"cells": len(sample), "seconds": round(harness["seconds"], 3),
                             "cells_per_s": round(harness_rate, 1)},
        "speedup_vs_per_cell_harness": round(ours_rate / harness_rate, 1),
        "slowdown_vs_floor": round(floor_rate / ours_rate, 2),
        "goals": {"speedup_vs_harness_ge_30": ours_rate / harness_rate >= 30,
                  "within_3x_of_floor": floor_rate / ours_rate <= 3},
        "agreement": {"floor": {"agree": agree_floor, "disagree": disagree_floor, "examples": examples},
                      "per_cell_harness": {"agree": agree_h, "disagree": disagree_h}},
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
