"""`coevo matrix`: run every candidate code on every test in the sandbox, one line per task."""

from __future__ import annotations

import sys
import time

HELP = "run every code on every test in the sandbox; write the code x test matrix per task"
DESCRIPTION = HELP + """

Reads the tasks, codes and tests files (JSON Lines, see docs/contracts.md) and writes one line per task,
in the tasks file's order:

  {"task_id", "passed": [[bool]] (codes x tests), "status": [["pass"|"fail"|"error"|"timeout"|
   "memory"|"output_limit"|"syntax_error"|"bad_test"|"sandbox_error"]], "values": [[...]],
   "errors": [[str]], "times": [[seconds]], "isolation": "namespace"|"process",
   "sandbox": {the guards in force}}

Rows follow the order of the task's lines in the codes file, columns the order of its lines in the
tests file. Without --tests the tasks' own ground-truth tests ("tests" in the tasks file) are used.
A task without codes gets an empty matrix. "values" holds what each cell's candidate call returned
(stdout for stdin/stdout tests) as JSON, with one-key objects for what JSON lacks ({"t": [...]}
tuple, {"s": [...]} set, {"d": [[k, v], ...]} dict, {"b": hex} bytes, {"N": type} not plain data).

Every cell runs sandboxed (namespaces where available, else process isolation with a warning):
wall-clock timeout, memory cap, process cap, output cap, private /tmp, no network, scrubbed
environment. A "code" that is not valid Python but a chat answer (prose around a ```python
block) runs the code in it, as `coevo eval --api-base` reads a model's answers (--raw-code: off).
Assert tests of the form `assert f(x) == VALUE` (and call-style tests) are judged
outside the sandbox on plain data, so no program can fake a pass.

  coevo matrix --tasks tasks.jsonl --codes codes.jsonl --tests tests.jsonl --out matrix.jsonl
"""


def add_arguments(parser) -> None:
    parser.add_argument("--tasks", required=True, metavar="T", help="tasks JSONL file")
    parser.add_argument("--codes", required=True, metavar="C", help="candidate codes JSONL file")
    parser.add_argument("--tests", default=None, metavar="U",
                        help="tests JSONL file (default: the tasks' own ground-truth tests)")
    parser.add_argument("--out", required=True, metavar="M", help="matrix JSONL file to write")
    parser.add_argument("--timeout", type=float, default=2.0, metavar="S",
                        help="wall-clock limit per cell in seconds (default 2)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="parallel sandbox workers (default: one per CPU core)")
    parser.add_argument("--memory-mb", type=int, default=1024, metavar="MB",
                        help="address-space cap per cell in MiB (16..2048, default 1024)")
    parser.add_argument("--max-output-bytes", type=int, default=4 << 20, metavar="B",
                        help="cap on each cell's stdout/stderr/files/returned value (default 4 MiB)")
    parser.add_argument("--isolation", default="auto", choices=["auto", "namespace", "process"],
                        help="sandbox level (default auto: namespaces when available)")
    parser.add_argument("--float-tolerance", type=float, default=None, metavar="TOL",
                        help="compare numbers in expected values and stdout tokens with this "
                             "relative/absolute tolerance; integers stay exact (default: exact)")
    parser.add_argument("--no-batch", action="store_true",
                        help="one fresh process per cell even for pure code (same verdicts, slower)")
    from coevo.commands.codes_input import add_raw_code_argument

    add_raw_code_argument(parser)
    from coevo.cli import add_output_options

    add_output_options(parser)


def _exec_config(args):
    """The executor's settings from the options; a bad value is an error naming its option."""
    from matrix.engine import ExecConfig
    from matrix.errors import InputError

    kw = dict(timeout=args.timeout, memory_mb=args.memory_mb, max_output_bytes=args.max_output_bytes,
              isolation=args.isolation, float_tolerance=args.float_tolerance, batch=not args.no_batch)
    if args.workers is not None:
        kw["workers"] = args.workers
    cfg = ExecConfig(**kw)
    try:
        cfg.validate()
    except ValueError as exc:  # "field: message"
        name, _, message = str(exc).partition(": ")
        raise InputError(message, field="--" + name.replace("_", "-")) from None
    return cfg


def run(args) -> int:
    import sys
    import time

    from coevo.cli import status_say
    from coevo.commands.codes_input import extracted_note, load_candidate_codes, load_candidate_tests, tests_note
    from coevo.commands.tasks_input import load_task_file
    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic

    config = _exec_config(args)
    t0 = time.monotonic()
    from coevo.cli import progress_enabled
    from matrix.engine import Executor

    progress = progress_enabled(args)
    try:
        executor = Executor(config)  # workers boot while the input is read
    except RuntimeError as exc:
        raise InputError(str(exc), field="--isolation") from None
    with executor:
        tasks = load_task_file(args.tasks)
        codes, n_extracted = load_candidate_codes(args.codes, tasks, raw=args.raw_code, say=status_say(args))
        tests, n_read = load_candidate_tests(args.tests, tasks, raw=args.raw_code) if args.tests else (None, 0)
        jobs = [(t, codes.get(t.task_id, []), tests.get(t.task_id, []) if tests is not None else list(t.tests))
                for t in tasks]
        try:
            results = with_status(executor, args).run_matrices(jobs, progress=progress)
            isolation = executor.isolation
            guards = executor.guards
        except RecursionError as exc:  # a RuntimeError, but not the sandbox's
            raise InputError(f"an input nests too deeply ({exc})", file=args.tests or args.tasks) from None
        except RuntimeError as exc:
            raise InputError(str(exc), field="--isolation") from None
    write_jsonl_atomic(args.out, (r.to_json() for r in results))
    if not args.quiet:
        cells = sum(r.shape[0] * r.shape[1] for r in results)
        passed = sum(r.passed_count() for r in results)
        inforce = ", ".join(x for x in (f"cgroup {guards['cgroup']}" if guards.get("cgroup") != "none" else "",
                                         "seccomp" if guards.get("seccomp") else "",
                                         "separate uids" if guards.get("separate_uids") else "") if x)
        print(f"coevo matrix: {len(results)} tasks, {cells} cells ({passed} passed) in "
              f"{time.monotonic() - t0:.1f}s, isolation {isolation} ({inforce or 'no further guards'})"
              f"{extracted_note(n_extracted)}{tests_note(n_read)}; wrote {'stdout' if args.out == '-' else args.out}",
              file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- status lines

STATUS_EVERY_S = 30.0  # seconds between two status lines where no progress bar is drawn


def _cells(job) -> int:
    return max(1, len(job[1]) * len(job[2]))


class StatusExecutor:
    """An executor whose ``run_matrices`` says where it is when no progress bar is drawn (stderr is a
    log file, ``nohup``, CI): the jobs run in chunks of about ``every_s / 2`` seconds of work each
    (sized from the rate measured so far), and after a chunk, at most every ``every_s`` seconds, one
    line ``matrix: 120/400 tasks, 9600/32000 cells (80 cells/s, ETA 4m40s)`` goes to ``say``; none
    for work shorter than ``every_s``. The rate leaves out the first chunk, which carries the
    workers' start-up. Results are the same as one ``run_matrices`` call's (each cell is judged on
    its own). Made only where no bar is drawn (:func:`with_status`). Anything else is the wrapped
    executor's."""

    def __init__(self, executor, say, every_s: float | None = None, clock=time.monotonic):
        self._ex, self._say, self._clock = executor, say, clock
        self._every_s = every_s

    def __getattr__(self, name):
        return getattr(self._ex, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._ex.__exit__(*exc)

    def run_matrices(self, jobs, progress: bool = False):  # noqa: ARG002 (no bar is drawn here)
        from training.metrics_file import RateMeter

        jobs = list(jobs)
        every = STATUS_EVERY_S if self._every_s is None else self._every_s
        if len(jobs) < 2:
            return self._ex.run_matrices(jobs)
        sizes = [_cells(j) for j in jobs]
        meter = RateMeter(sum(sizes), every_s=every, clock=self._clock)
        out: list = []
        target = max(1, meter.total // 20)
        i = 0
        while i < len(jobs):
            j, cells = i, 0
            while j < len(jobs) and (j == i or cells + sizes[j] <= target):
                cells += sizes[j]
                j += 1
            out.extend(self._ex.run_matrices(jobs[i:j]))
            i = j
            due = meter.update(cells)
            target = max(1, int(meter.rate * every / 2))
            if due:
                self._say(f"matrix: {i}/{len(jobs)} tasks, {meter.done}/{meter.total} cells ({meter.rate:.3g} "
                          f"cells/s, ETA {meter.eta(unknown='0s')})")
        return out


def with_status(executor, args):
    """``executor`` saying ``coevo <command>: matrix: ...`` status lines on stderr while its matrices
    run, where no progress bar is drawn (see :class:`StatusExecutor`); as it is with ``--quiet``."""
    from coevo.cli import progress_enabled, status_say

    say = status_say(args)
    if say is None or progress_enabled(args) and sys.stderr.isatty():
        return executor
    return StatusExecutor(executor, say)
