"""`coevo matrix`: run every candidate code on every test in the sandbox, one line per task."""

from __future__ import annotations

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
                             "relative/absolute tolerance (default: exact)")
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

    from coevo.commands.codes_input import extracted_note, load_candidate_codes
    from coevo.commands.tasks_input import load_task_file
    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic
    from matrix.tasks import load_tests

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
        ids = [t.task_id for t in tasks]
        codes, n_extracted = load_candidate_codes(args.codes, tasks, raw=args.raw_code)
        tests = load_tests(args.tests, ids) if args.tests else None
        jobs = [(t, codes.get(t.task_id, []), tests.get(t.task_id, []) if tests is not None else list(t.tests))
                for t in tasks]
        try:
            results = executor.run_matrices(jobs, progress=progress)
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
              f"{extracted_note(n_extracted)}; wrote {'stdout' if args.out == '-' else args.out}", file=sys.stderr)
    return 0
