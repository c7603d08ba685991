"""Speed of `coevo matrix` against the harnesses people use, on two pools.

``--pool mbpp`` (well-behaved): per MBPP task the reference solution plus AST mutants
(:mod:`matrix.mutation`) as codes, the ground-truth asserts plus "noisy" copies with a perturbed
expected value as tests (what a Tester emits); codes that hang are screened out first (counted in
the report; ``--keep-hangs`` keeps them).

``--pool real`` (behaves like sampled model output): per task the reference, AST mutants, and the
kinds of program a code model really emits: truncated mid-line, raising while loading (a missing
module, an undefined name), raising on some inputs, looping forever on some inputs, recursing
without end on some inputs, printing as it goes, ending with an ``if __name__ == "__main__":``
block (``doctest.testmod()``); tests are the asserts, noisy copies, and asserts
on nearby inputs with the reference's own answer (as a generated suite holds), ~20 per task.
``--repeat-share S`` makes S of its programs copies of the task's other programs (sampled pools
repeat their frequent answers; the matrix runs a repeated text once), drawn uniformly.

One run measures, on the same cells:

* ``coevo_matrix``: the CLI as a subprocess on JSONL files (interpreter and CLI start-up, worker
  start-up and writing the output included), sandboxed;
* ``per_program_harness``: the harness CodeT and evalplus use: one forked ``multiprocessing``
  process per program that loads it once and runs every test against it under its own timer
  (``setitimer``), results in shared memory, the process joined with the whole budget (a timeout
  per test, plus one) and killed after; ``--workers`` at a time;
* ``floor`` (mbpp pool): everything in one plain Python process, no isolation at all: each code
  compiled once, each test compiled once, every cell ``exec`` in a fresh namespace with a SIGALRM
  timeout (the time of the loop itself; it runs in a child process only so that a candidate
  cannot take the benchmark down);
* ``per_cell_harness`` (mbpp pool): a fresh ``python -c code+setup+test`` per cell, on a random
  sample of cells (its rate is per cell, so the sample only bounds the run time).

Each run of coevo and of the floor also reports the CPU seconds of its whole process tree (a
cgroup of its own; ``cpu_slowdown_vs_floor`` is their medians' ratio): on a busy machine that is
the figure to compare, the wall-clock times count everyone else's load.

coevo and the floor run ``--repeat`` times, interleaved (timeit's rule: the best run of each is
the least disturbed by whatever else the machine does; their ratio is ``slowdown_vs_floor``);
against the per-program and per-cell harnesses, which run once, coevo's median run counts. The
CLI runs with the bytecode cache in use, as for any user. Verdict agreement (pass / not pass) is
reported on the cells none of the runners timed out. Prints one JSON line.

  python benchmarks/matrix_speed.py [--pool mbpp|real] [--tasks N] [--mutants K] [--timeout S] [--repeat R]
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


# ----------------------------------------------------------------------------- CPU seconds

class CpuMeter:
    """CPU seconds of one subprocess's whole tree, the sandbox's processes in other namespaces
    included (they stay in its cgroup; a wait4 of the CLI misses those its pid namespace's init
    reaped after the run, and it cannot see the run's worker processes before they are reaped):
    a fresh v1 ``cpuacct`` cgroup of its own that the child joins before ``exec``. ``ok`` is False
    where none can be made here (then :meth:`seconds` is None), cgroup v2 alone included: there a
    process belongs to one cgroup, and the sandbox moves every cell into one of its own
    (``matrix/sandbox/cgroups.py``), so a v2 count would leave the programs out and flatter coevo
    against the floor (review of a653888).
    CPU seconds are what to compare on a shared machine: wall-clock time counts every other
    process's load."""

    def __init__(self):
        self.dir = None
        base = "/sys/fs/cgroup/cpuacct"
        if os.path.isdir(base):
            try:
                self.dir = tempfile.mkdtemp(prefix="coevo-bench-", dir=base)
            except OSError:
                pass

    @property
    def ok(self) -> bool:
        return self.dir is not None

    def join(self) -> None:
        """In the child, before ``exec`` (``preexec_fn``)."""
        with open(os.path.join(self.dir, "cgroup.procs"), "w") as fh:
            fh.write("0")

    def seconds(self):
        """The tree's CPU seconds, once its last process has ended (None without a cgroup)."""
        if self.dir is None:
            return None
        try:
            for _ in range(200):  # what the run left (a worker's zygote) ends within moments
                with open(os.path.join(self.dir, "cgroup.procs")) as fh:
                    if not fh.read().strip():
                        break
                time.sleep(0.05)
            with open(os.path.join(self.dir, "cpuacct.usage")) as fh:
                return int(fh.read()) / 1e9
        except (OSError, StopIteration, ValueError):
            return None
        finally:
            try:
                os.rmdir(self.dir)
            except OSError:
                pass
            self.dir = None


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


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
    # as a user runs it: the bytecode cache in use (a PYTHONDONTWRITEBYTECODE=1 of the caller's
    # would recompile the CLI's modules on every run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    meter = CpuMeter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT), env=env,
                              preexec_fn=meter.join if meter.ok else None)
        secs = time.perf_counter() - t0
    finally:
        cpu = meter.seconds()  # (and the cgroup removed, also after Ctrl-C)
    if proc.returncode != 0:
        raise SystemExit(f"coevo matrix failed ({proc.returncode}): {proc.stderr[-2000:]}")
    status = {}
    isolation = None
    for line in out.read_text().splitlines():
        d = json.loads(line)
        isolation = d["isolation"]
        status[d["task_id"]] = d["status"]
    return {"seconds": secs, "status": status, "isolation": isolation, "cpu_seconds": cpu}


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
    meter = CpuMeter()
    try:
        proc = subprocess.run([sys.executable, str(prog), str(src), str(timeout), str(out)], capture_output=True,
                              text=True, timeout=3600, preexec_fn=meter.join if meter.ok else None)
        wall = time.perf_counter() - t0
    finally:
        cpu = meter.seconds()  # (and the cgroup removed, also after a timeout or Ctrl-C)
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"floor run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    res = json.loads(out.read_text())
    res["process_seconds"] = wall
    res["cpu_seconds"] = cpu  # the whole child process: interpreter start and reading the pool too
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

# ----------------------------------------------------------------------------- the realistic pool

_WRAP = """
{ref}
_orig_impl = {entry}
def {entry}(*args, **kwargs):
    if len(repr(args)) % {mod} == {rem}:
{body}
    return _orig_impl(*args, **kwargs)
"""
_BEHAVIOURS = {
    "raises_on_some": "        raise ValueError('unexpected input')",
    "loops_on_some": "        while True:\n            pass",
    "recurses_on_some": "        def _deeper(n):\n            return _deeper(n + 1)\n        return _deeper(0)",
    "wrong_on_some": "        return None",
    "prints": "        print('debug:', args)",
}


def realistic_programs(ref: str, entry: str, n_mutants: int, rng: random.Random, seed: int) -> list[tuple[str, str]]:
    """(kind, code) pairs for one task, like what a code model samples: the reference, mutants,
    and programs truncated, failing to load, raising / looping / recursing / wrong / printing on
    some inputs, and one that ends with the ``if __name__ == "__main__":`` block code models
    often write after the function (importing doctest)."""
    from matrix.mutation import mutants

    out = [("reference", ref)]
    try:
        out += [("mutant", m.code) for m in mutants(ref, limit=n_mutants, seed=seed)]
    except Exception:
        pass
    cut = rng.randint(max(1, len(ref) // 3), max(2, len(ref) - 2))
    out.append(("truncated", ref[:cut]))
    out.append(("load_error", rng.choice(["import numpy_scipy_extras\n", "from .helpers import solve\n",
                                          "CONFIG = load_config()\n"]) + ref))
    if rng.random() < 0.5:  # a demo call left at the bottom that never returns: it hangs while loading
        out.append(("hangs_loading", ref + rng.choice([
            "\nwhile True:\n    pass\n", "\nprint(sum(i * i for i in range(10 ** 12)))\n"])))
    out.append(("main_block", ref + "\n\n\nif __name__ == \"__main__\":\n    import doctest\n    doctest.testmod()\n"))
    for kind, body in _BEHAVIOURS.items():
        if kind == "loops_on_some" and rng.random() > 0.25:
            continue  # a few programs hang on some inputs, as in real pools
        mod = rng.choice([2, 3, 4])
        out.append((kind, _WRAP.format(ref=ref, entry=entry, mod=mod, rem=rng.randrange(mod), body=body)))
    return out


def _nearby_calls(test: str, rng: random.Random, n: int) -> list[str]:
    """Calls like the one in ``assert CALL == X`` with literal arguments nudged."""
    try:
        node = ast.parse(test).body[0]
        call = node.test.left if isinstance(node.test, ast.Compare) else None
        if not isinstance(call, ast.Call) or call.keywords:
            return []
        args = [ast.literal_eval(a) for a in call.args]
    except Exception:
        return []

    def nudge(v):
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return v + rng.choice([-2, -1, 1, 2, 3])
        if isinstance(v, float):
            return round(v * rng.choice([0.5, 1.5, 2.0]), 3)
        if isinstance(v, str) and v:
            i = rng.randrange(len(v))
            return v[:i] + v[i + 1:] if rng.random() < 0.5 else v + v[i]
        if isinstance(v, list) and v:
            w = list(v)
            i = rng.randrange(len(w))
            if rng.random() < 0.5:
                del w[i]
            else:
                w.insert(i, nudge(w[i]))
            return w
        if isinstance(v, tuple):
            return tuple(nudge(list(v)))
        return v

    out = []
    for _ in range(n * 3):
        if len(out) >= n:
            break
        src = f"{call.func.id if isinstance(call.func, ast.Name) else ast.unparse(call.func)}(" \
              + ", ".join(repr(nudge(a)) for a in args) + ")"
        if src not in out and len(src) < 500:
            out.append(src)
    return out


EXPECT_CHILD = r"""
import json, signal, sys, ast
class Timeout(BaseException):
    pass
def alarm(*_):
    raise Timeout()
signal.signal(signal.SIGALRM, alarm)
jobs = json.load(open(sys.argv[1]))
out = []
for code, setup, calls in jobs:
    got = []
    try:
        ns = {"__name__": "reference"}
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        exec(code + chr(10) + setup, ns)
        for c in calls:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.5)
                v = eval(c, ns)
                text = repr(v)
                if len(text) < 2000 and ast.literal_eval(text) == v:
                    got.append([c, text])
            except BaseException:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    out.append(got)
json.dump(out, open(sys.argv[2], "w"))
"""


def build_real_pool(rows, n_tasks, n_mutants, n_noisy, n_nearby, seed, tmp: Path,
                    repeat_share: float = 0.0) -> list[dict]:
    rng = random.Random(seed)
    rows = rows[:n_tasks] if n_tasks else rows
    pool = []
    jobs = []
    for r in rows:
        entry = None
        try:
            call = ast.parse(r["tests"][0]).body[0].test.left
            entry = call.func.id
        except Exception:
            continue
        progs = realistic_programs(r["code"], entry, n_mutants, rng, seed)
        if repeat_share > 0:  # sampled pools repeat answers: copies of the task's programs, drawn uniformly
            n_rep = round(repeat_share / (1 - repeat_share) * len(progs))
            progs += [("repeat", c) for _, c in (rng.choice(progs) for _ in range(n_rep))]
        noisy = [t for t in (noisy_test(x, rng) for x in r["tests"]) if t][:n_noisy]
        calls = []
        for t in r["tests"]:
            calls += _nearby_calls(t, rng, max(1, n_nearby // max(1, len(r["tests"]))))
        jobs.append([r["code"], r["setup"], calls[:n_nearby]])
        pool.append({**r, "kinds": [k for k, _ in progs], "codes": [c for _, c in progs],
                     "all_tests": r["tests"] + noisy})
    src, dst, prog = tmp / "expect_in.json", tmp / "expect_out.json", tmp / "expect.py"
    src.write_text(json.dumps(jobs))
    prog.write_text(EXPECT_CHILD)
    subprocess.run([sys.executable, str(prog), str(src), str(dst)], capture_output=True, timeout=3600)
    for p, got in zip(pool, json.loads(dst.read_text())):
        p["all_tests"] += [f"assert {c} == {v}" for c, v in got]
    return pool


# ----------------------------------------------------------------------------- the per-program harness

def _peer_child(code, setup, tests, timeout, results):
    """In the forked process: load the program once, run every test against it under its own
    timer (CodeT / evalplus): 0 pass, 1 fail, 2 error, 3 timeout."""
    import io
    import signal

    class Timeout(BaseException):
        pass

    def alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    sys.stdout = sys.stderr = io.StringIO()  # evalplus swallows the program's output
    ns = {"__name__": "__main__"}
    try:  # loaded once, as the program is (a load that hangs: the process is killed at the end)
        exec(compile(code + "\n" + setup, "<program>", "exec"), ns)
    except BaseException:
        for j in range(len(tests)):
            results[j] = 2
        return
    for j, test in enumerate(tests):
        status = 0
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            exec(test, ns)
        except Timeout:
            status = 3
        except AssertionError:
            status = 1
        except BaseException:
            status = 2
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        results[j] = status


def run_per_program(pool, timeout: float, workers: int) -> dict:
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    names = {0: "pass", 1: "fail", 2: "error", 3: "timeout", 4: "timeout"}
    jobs = [(ti, ci) for ti, p in enumerate(pool) for ci in range(len(p["codes"]))]

    def one(job):
        ti, ci = job
        p = pool[ti]
        tests = p["all_tests"]
        results = ctx.Array("b", [4] * len(tests), lock=False)
        proc = ctx.Process(target=_peer_child, args=(p["codes"][ci], p["setup"], tests, timeout, results))
        proc.start()
        proc.join(timeout * (len(tests) + 1) + 1.0)
        if proc.is_alive():
            proc.kill()
            proc.join()
        return job, [names[int(x)] for x in results]

    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(workers) as ex:
        rows = dict(ex.map(one, jobs))
    secs = time.perf_counter() - t0
    status = {p["task_id"]: [rows[(ti, ci)] for ci in range(len(p["codes"]))] for ti, p in enumerate(pool)}
    return {"seconds": secs, "status": status}


def _agreement(pool, cells, table_a, table_b):
    agree = disagree = 0
    examples = []
    for ti, ci, tj in cells:
        tid = pool[ti]["task_id"]
        a, b = table_a[tid][ci][tj], table_b[tid][ci][tj]
        if "timeout" in (a, b):
            continue
        if (a == "pass") == (b == "pass"):
            agree += 1
        else:
            disagree += 1
            if len(examples) < 5:
                examples.append({"task_id": tid, "code": ci, "test": tj, "a": a, "b": b})
    return {"agree": agree, "disagree": disagree, "examples": examples}


def _round(x, n: int = 3):
    return None if x is None else round(x, n)


def _cpu_ratio(ours_runs, floor_runs):
    a = _median(r.get("cpu_seconds") for r in ours_runs)
    b = _median(r.get("cpu_seconds") for r in floor_runs)
    return round(a / b, 2) if a is not None and b else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", choices=("mbpp", "real"), default="mbpp",
                    help="mbpp: references + mutants (default); real: like sampled model output")
    ap.add_argument("--data", default=None, help="MBPP file (mbpp.jsonl.gz or sanitized-mbpp.json)")
    ap.add_argument("--tasks", type=int, default=None, help="use the first N tasks (default: all; real: 300)")
    ap.add_argument("--mutants", type=int, default=7, help="AST mutants per task (default 7)")
    ap.add_argument("--noisy", type=int, default=3, help="noisy tests per task (default 3)")
    ap.add_argument("--nearby", type=int, default=14, help="real pool: tests on nudged inputs per task")
    ap.add_argument("--repeat-share", type=float, default=0.0,
                    help="real pool: share of programs that repeat another of the task's programs (sampled "
                         "pools repeat their frequent answers; the demo model's 32 samples per task: 0.81)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="per-cell timeout, all runners (default 1; real: 0.1, as in the field)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sample", type=int, default=1000, help="cells run by the per-cell harness (mbpp)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs of coevo and of the floor, interleaved (default 3 on the mbpp pool, 1 on the "
                         "real one): best of each for the floor ratio, coevo's median against the harnesses' one run")
    ap.add_argument("--keep-hangs", action="store_true", help="mbpp: do not screen out codes that hang")
    ap.add_argument("--pool-file", default=None,
                    help="the built (and screened) pool as JSON: read from it when it exists (no data file needed, "
                         "the same cells in every run), else built and written there")
    ap.add_argument("--no-peers", action="store_true",
                    help="coevo and the floor only (no per-program or per-cell harness): for before/after runs")
    args = ap.parse_args(argv)
    real = args.pool == "real"
    timeout = args.timeout if args.timeout is not None else (0.1 if real else 1.0)
    n_tasks = args.tasks if args.tasks is not None else (300 if real else 0)
    args.repeat = args.repeat if args.repeat is not None else (1 if real else 3)

    pool_file = Path(args.pool_file) if args.pool_file else None
    data = Path(args.data) if args.data else next((p for p in DATA if p.exists()), None)
    if (data is None or not data.exists()) and not (pool_file is not None and pool_file.exists()):
        raise SystemExit("MBPP data not found; pass --data")
    with tempfile.TemporaryDirectory(prefix="coevo-bench-") as tmp:
        tmp = Path(tmp)
        dropped = 0
        if pool_file is not None and pool_file.exists():
            saved = json.loads(pool_file.read_text())
            pool, dropped = saved["pool"], saved["hanging_codes_dropped"]
        elif real:
            pool = build_real_pool(load_mbpp(data), n_tasks, args.mutants, args.noisy, args.nearby, args.seed, tmp,
                                   repeat_share=args.repeat_share)
        else:
            pool = build_pool(load_mbpp(data), n_tasks, args.mutants, args.noisy, args.seed)
            dropped = 0 if args.keep_hangs else drop_hanging(pool, min(0.5, timeout), args.workers)
        pool = [p for p in pool if p["codes"]]
        if pool_file is not None and not pool_file.exists():
            pool_file.write_text(json.dumps({"pool": pool, "hanging_codes_dropped": dropped}))
        cells = [(ti, ci, tj) for ti, p in enumerate(pool) for ci in range(len(p["codes"]))
                 for tj in range(len(p["all_tests"]))]
        ours_runs, floor_runs = [], []
        peer = None
        for _ in range(max(1, args.repeat)):  # interleaved, so that a busy spell hits both sides
            ours_runs.append(run_cli(pool, tmp, timeout, args.workers))
            if peer is None and not args.no_peers:
                peer = run_per_program(pool, timeout, args.workers)
            floor_runs.append(run_floor(pool, tmp, timeout))
        ours = min(ours_runs, key=lambda r: r["seconds"])
        floor = min(floor_runs, key=lambda r: r["seconds"])
        ours_typical = sorted(r["seconds"] for r in ours_runs)[len(ours_runs) // 2]
        harness = None
        if not real and not args.no_peers:
            rng = random.Random(args.seed)
            sample = rng.sample(cells, min(args.sample, len(cells)))
            harness = run_per_cell(pool, sample, timeout, args.workers)

    n = len(cells)
    counts: dict[str, int] = {}
    for table in ours["status"].values():
        for row in table:
            for s_ in row:
                counts[s_] = counts.get(s_, 0) + 1
    ours_rate, floor_rate = n / ours["seconds"], n / floor["seconds"]
    peer_rate = n / peer["seconds"] if peer is not None else None
    typical_rate = n / ours_typical  # against the peer's one run: coevo's median run, not its best
    report = {
        "benchmark": "matrix_speed", "pool": args.pool,
        "data": data.name if data is not None else None, "tasks": len(pool),
        "codes": sum(len(p["codes"]) for p in pool),
        "distinct_codes": sum(len(set(p["codes"])) for p in pool), "repeat_share": args.repeat_share,
        "tests": sum(len(p["all_tests"]) for p in pool), "cells": n, "timeout_s": timeout,
        "workers": args.workers, "cpu_count": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
        "repeat": args.repeat,
        "coevo_matrix": {"seconds": round(ours["seconds"], 3), "cells_per_s": round(ours_rate, 1),
                         "runs": [round(r["seconds"], 3) for r in ours_runs],
                         "isolation": ours["isolation"], "statuses": counts,
                         "cpu_seconds": _round(_median(r["cpu_seconds"] for r in ours_runs)),
                         "cpu_runs": [_round(r["cpu_seconds"]) for r in ours_runs],
                         "includes": "interpreter + CLI start-up, workers, writing the output"},
        "floor": {"seconds": round(floor["seconds"], 3), "cells_per_s": round(floor_rate, 1),
                  "runs": [round(r["seconds"], 3) for r in floor_runs],
                  "timeouts": floor["timeouts"], "seconds_in_timeouts": round(floor["timeout_seconds"], 3),
                  "cpu_seconds": _round(_median(r["cpu_seconds"] for r in floor_runs)),
                  "cpu_runs": [_round(r["cpu_seconds"]) for r in floor_runs]},
        "slowdown_vs_floor": round(floor_rate / ours_rate, 2),
        # CPU seconds of the whole process trees (medians; None without a cgroup to count in): what
        # to compare on a busy machine, where the wall-clock ratio counts everyone else's load
        "cpu_slowdown_vs_floor": _cpu_ratio(ours_runs, floor_runs),
        "agreement": {"floor": _agreement(pool, cells, ours["status"], floor["status"])},
    }
    if peer is not None:
        report["per_program_harness"] = {
            "seconds": round(peer["seconds"], 3), "cells_per_s": round(peer_rate, 1),
            "style": "CodeT/evalplus: a forked multiprocessing process per program, per-test setitimer, results "
                     "in shared memory"}
        report["speedup_vs_per_program_harness"] = round(typical_rate / peer_rate, 2)
        report["agreement"]["per_program_harness"] = _agreement(pool, cells, ours["status"], peer["status"])
    if real:
        kinds: dict[str, int] = {}
        for p in pool:
            for k in p["kinds"]:
                kinds[k] = kinds.get(k, 0) + 1
        report["program_kinds"] = kinds
        if peer_rate is not None:
            report["goals"] = {"speedup_vs_per_program_harness_ge_3": typical_rate / peer_rate >= 3}
    else:
        report["hanging_codes_dropped"] = dropped
        report["goals"] = {"within_1.5x_of_floor": floor_rate / ours_rate <= 1.5,
                           "within_3x_of_floor": floor_rate / ours_rate <= 3}
    if harness is not None:
        harness_rate = len(harness["status"]) / harness["seconds"]
        agree_h = disagree_h = 0
        for cell, b in harness["status"].items():
            a = ours["status"][pool[cell[0]]["task_id"]][cell[1]][cell[2]]
            if "timeout" in (a, b):
                continue
            agree_h += (a == "pass") == (b == "pass")
            disagree_h += (a == "pass") != (b == "pass")
        report["per_cell_harness"] = {"cells": len(harness["status"]), "seconds": round(harness["seconds"], 3),
                                      "cells_per_s": round(harness_rate, 1)}
        report["speedup_vs_per_cell_harness"] = round(typical_rate / harness_rate, 1)
        report["agreement"]["per_cell_harness"] = {"agree": agree_h, "disagree": disagree_h}
        report["goals"]["speedup_vs_per_cell_harness_ge_30"] = typical_rate / harness_rate >= 30
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
