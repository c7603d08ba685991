"""`coevo gen-tests PATH`: resolve the modules, start the sandbox, run the pipeline on each module
with progress, write the suites, reports and manifest, print a summary and the suspects."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
import time
from pathlib import Path

from matrix.errors import InputError

__all__ = ["run_path_mode"]


def _say(args, msg: str) -> None:
    if not args.quiet:
        print(f"coevo gen-tests: {msg}", file=sys.stderr, flush=True)


class _Progress:
    """A progress bar with ETA on stderr (only on a terminal and without --quiet)."""

    def __init__(self, args, n_modules: int):
        self.bar = None
        self.n = n_modules
        from coevo.cli import progress_enabled

        if not progress_enabled(args):
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=100 * n_modules, file=sys.stderr, dynamic_ncols=True, mininterval=0.5,
                        bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")

    def module(self, k: int, name: str):
        def update(fraction: float, text: str) -> None:
            if self.bar is None:
                return
            target = int(100 * k + 100 * fraction)
            if target > self.bar.n:
                self.bar.update(target - self.bar.n)
            self.bar.set_description_str(f"{name} ({k + 1}/{self.n}): {text}"[:70], refresh=False)
        return update

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _check(args) -> None:
    def need(ok: bool, name: str, msg: str):
        if not ok:
            raise InputError(msg, field=name)

    need(args.time_budget > 0, "--time-budget", "must be > 0 seconds")
    need(args.max_mutants >= 0, "--max-mutants", "must be >= 0")
    need(args.timeout is None or args.timeout > 0, "--timeout", "must be > 0")
    need(args.workers is None or args.workers >= 1, "--workers", "must be >= 1")
    if args.model or args.api_base:
        from coevo.commands.solve_cmd import check_model_args

        check_model_args(args, min_tests=0)
        if args.model and not Path(args.model).is_dir():
            raise InputError("no such model directory (a save_pretrained directory)", file=args.model)
    if args.tasks:
        raise InputError("give either PATH (your code) or --tasks (a tasks file), not both", field="--tasks")
    if getattr(args, "calibration", None):
        raise InputError("only applies with --tasks (PATH mode keeps tests the code passes)", field="--calibration")


def _missing(name: str) -> bool:
    return importlib.util.find_spec(name) is None


def run_path_mode(args) -> int:
    from coevo.testgen.outdir import default_out, plan_names, write_outputs
    from coevo.testgen.target import resolve

    _check(args)
    if args.out == "-":
        raise InputError("is a directory of test files; '-' (standard output) does not apply", field="--out")
    unreadable: list = []  # modules of a directory that do not parse: left out, each a warning
    modules = resolve(args.path, skipped=unreadable)
    out = Path(args.out) if args.out else default_out(modules[0].root)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", file=str(out))
    if not out.exists() and out.suffix == ".py":
        raise InputError(f"names a file; --out is the directory the suites go into (test_<module>.py in it), "
                         f"e.g. --out {out.parent / 'tests'}", file=str(out))
    if args.report and args.report != "-" and Path(args.report).is_dir():
        raise InputError("is a directory (expected a file to write)", file=args.report)
    for dep in ("pytest", "coverage"):
        if _missing(dep):
            raise InputError(f"{dep} is not installed in this Python environment (gen-tests needs it: "
                             f"pip install {dep})")
    names = plan_names(out, modules)
    for stem in names.values():
        if stem.endswith("_generated"):
            print(f"coevo gen-tests: warning: {out / (stem[:-len('_generated')] + '.py')} was not written by "
                  f"coevo or was edited since: left as it is; this suite goes to {stem}.py", file=sys.stderr)
    raw = args.path.split("::", 1)[0]
    scope = [] if "::" in args.path else [str(Path(raw).resolve())]

    from coevo.testgen.sources import dependency_paths, sandbox_roots
    from matrix.engine import ExecConfig, Executor

    mapping, temps = sandbox_roots(modules)
    roots = sorted({str(r) for r in mapping.values()})
    roots += [p for p in dependency_paths() if p not in roots]
    workers = args.workers or None
    kw = {"workers": workers} if workers else {}
    cell_timeout = max(10.0, min(30.0, args.time_budget / 2))
    t0 = time.monotonic()
    # the sandbox's workers boot in the background from here on, while this process imports the
    # generator (hypothesis, coverage's reader) and, with a model, samples its evidence
    ex = Executor(ExecConfig(timeout=cell_timeout, import_paths=tuple(roots), **kw))
    from types import SimpleNamespace

    results: list = []
    errors: list = [(SimpleNamespace(path=p, name=p.stem), msg) for p, msg in unreadable]
    progress = None
    extra = None
    long_pool: list = []

    def long_executor():  # started only if a suite's pytest runs outlast the usual cell
        if not long_pool:
            long_pool.append(Executor(ExecConfig(timeout=180.0, workers=1, import_paths=tuple(roots))))
        return long_pool[0]

    try:
        import hypothesis  # noqa: F401 - every module's inputs need it; imported while the workers boot

        from coevo.testgen.module_suite import ModuleError, Options, generate_suite

        if args.model or args.api_base:
            from coevo.testgen.model import model_evidence

            extra = model_evidence(args)
        opts = Options(time_budget=args.time_budget, seed=args.seed, max_mutants=args.max_mutants,
                       probe_limit=args.timeout or min(1.0, max(0.1, args.time_budget / 40)), extra=extra)
        progress = _Progress(args, len(modules))
        from dataclasses import replace

        from coevo.testgen.project import find_project_config

        project = find_project_config(out)
        copies = {str(k): str(v) for k, v in mapping.items() if k != v}
        # the command's deadline: its start (Python, coevo and the sandbox start first: a few
        # seconds on a loaded machine) plus --time-budget per module. (Counted up to a quarter of
        # the budget: a process older than that is not a command just started, but one calling
        # gen-tests, such as a test run, whose age says nothing of this command's start.)
        started = time.monotonic() - min(_process_age(), 0.25 * args.time_budget)
        deadline = started + len(modules) * args.time_budget
        for k, m in enumerate(modules):
            key = m.name + (f"::{m.selected}" if m.selected else "")
            m_opts = replace(opts, project=project.job(names[key] + ".py", copies)) if project is not None else opts
            m_opts = replace(m_opts, time_budget=module_budget(k, args.time_budget, started, time.monotonic()))
            try:
                res = generate_suite(m, ex, long_executor=long_executor, options=m_opts,
                                     progress=progress.module(k, m.name))
            except ModuleError as exc:
                errors.append((m, str(exc)))
                continue
            results.append(res)
        if len([r for r in results if r.text]) > 1 and opts.verify:
            from coevo.testgen.module_suite import verify_together

            progress.module(len(modules) - 1, "all modules")(1.0, "verifying the suites together")
            verify_together(results, names, deadline=deadline)
    finally:
        ex.close()
        if progress is not None:
            progress.close()
        for pool in long_pool:
            pool.close()
        if extra is not None:
            extra.close()
        import shutil

        for t in temps:
            shutil.rmtree(t, ignore_errors=True)
    if errors and not results:
        m, msg = errors[0]
        if len(errors) > 1:
            msg += f" (and {len(errors) - 1} more module(s) failed)"
        raise InputError(msg, file=str(m.path))
    triples = [(r.module, r.text, r.report) for r in results]
    with _signals_held():
        written = write_outputs(out, triples, names, scope)
    for m, msg in errors:
        print(f"coevo gen-tests: warning: {m.path}: {msg}", file=sys.stderr)
    for r in results:
        for msg in r.report.get("warnings", []):
            print(f"coevo gen-tests: warning: {r.module.path}: {msg}", file=sys.stderr)
    from coevo.testgen.target import async_warning

    for m in modules:
        note = async_warning(m)
        if note:
            print(f"coevo gen-tests: warning: {m.path}: {note}", file=sys.stderr)
    for r in results:
        _summary(args, r, out, names)
    if args.report:
        combined = {"modules": [r.report for r in results],
                    "errors": [{"file": str(m.path), "module": m.name, "error": msg} for m, msg in errors],
                    "seconds": round(time.monotonic() - t0, 2)}
        text = json.dumps(combined, indent=2, default=str) + "\n"
        if args.report == "-":
            sys.stdout.write(text)
        else:
            from matrix.jsonl import write_text_atomic

            with _signals_held():
                write_text_atomic(args.report, text)
    _say(args, f"wrote {len([p for p in written if p.suffix == '.py' and p.name != 'conftest.py'])} suite(s) "
               f"to {out} in {time.monotonic() - t0:.1f}s")
    return 1 if errors else 0


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM held back while the suites, their reports and the manifest are written
    (milliseconds): Ctrl-C leaves all of them or none (each file is written atomically; suites
    without the manifest entry that records them would be taken for the user's own files by the
    next run). A signal that came meanwhile is raised again as soon as they are written. (Handlers
    that note the signal, not a blocked mask: a mask holds only for the thread that sets it.)"""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def note(signum, frame):
        pending.append(signum)

    before = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if pending:
            signal.raise_signal(pending[0])


def module_budget(k: int, budget: float, started: float, now: float) -> float:
    """Module ``k``'s budget (0-based): what is left until the command's start plus ``k + 1``
    budgets, less a margin (3%) for writing the suites out, at most ``budget`` (a module that ends
    early gives its time to no other) and at least half of it (a module after one that ran far
    over still gets a run worth having)."""
    left = started + (k + 1) * budget - 0.03 * budget - now
    return min(budget, max(0.5 * budget, left))


def _process_age() -> float:
    """Seconds since this process started (Linux: /proc; elsewhere since coevo's import)."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        import os

        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return max(0.0, time.monotonic() - _IMPORTED)


_IMPORTED = time.monotonic()


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _mutants_said(m: dict) -> str:
    """``killed/run``, and where the budget left reached mutants unrun, that the score is an estimate."""
    if not m.get("reached_not_run"):
        return f"{m['killed']}/{m['run']}"
    ran = m["run"] - m.get("unreached", 0)
    return (f"estimated: {m['killed']} killed of {ran} reached mutants run, {m['reached_not_run']} reached "
            f"not run, {m.get('unreached', 0)} on lines no test reaches")


def _summary(args, r, out: Path, names: dict) -> None:
    if args.quiet:
        return
    rep = r.report
    key = r.module.name + (f"::{r.module.selected}" if r.module.selected else "")
    where = out / f"{names[key]}.py" if r.text else "(no test kept)"
    ms = rep.get("mutation_score")
    _say(args, f"{key}: {rep['tests_kept']} tests kept of {rep['tests_tried']} tried; mutation score "
               f"{'n/a' if ms is None else f'{ms:.2f}'} ({_mutants_said(rep['mutants'])}), "
               f"lines {_pct(rep['line_coverage'])}, branches {_pct(rep['branch_coverage'])}, "
               f"{rep['seconds']:.1f}s -> {where}")
    for what in rep.get("budget_cuts", []):
        _say(args, f"  cut to end within --time-budget: {what}")
    for s in rep.get("suspects", []):
        _say(args, f"  suspect {s['where']}: {s['input']} -> the code gives {s['code_returns']}; "
                   f"{s['evidence']}")
