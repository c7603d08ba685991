"""`coevo select`: pick one program per task from untrusted candidate codes and untrusted tests.

Writes one line per task that has codes, in the tasks file's order:
``{"task_id", "index", "code", "test_scores": [P(test correct), ...], "code_scores": [...],
"method", "n_codes", "n_tests", "n_inputs", "n_examples", "examples_passed", "isolation"}``
(``n_examples``: worked examples read from the task's statement, ``examples_passed``: how many the
chosen code passes). ``code`` is the program that ran: the codes row's ``code``, or the code read
from it when it is a chat answer (see :mod:`coevo.commands.codes_input`; ``--raw-code``: as
written). ``index`` is the candidate's position among that task's lines in the codes file;
``test_scores`` follow the task's lines in the tests file.
The tasks' own ground-truth tests and solutions are not used (unless ``--use-task-tests``).
"""

from __future__ import annotations

import math
import sys

HELP = "pick the program most likely correct per task from untrusted codes and tests"
METHOD_CHOICES = ("coevo", "b4", "codet", "max_pass", "consensus")
DESCRIPTION = HELP + """

Every code runs against every test in the sandbox; for function tasks the codes also run on extra
inputs drawn from the argument types seen in the tests (a seeded generator: the same inputs in
every process, per --seed; stdio tasks: on the tests' inputs and copies of them with their integers
moved), and the outputs are compared. The selection method then picks one code per task and scores
each test with the probability that it is correct.

The worked examples of the task's statement (doctest lines, ``f(x) == y`` and the like, sample
input/output blocks) run too; coevo trusts them more than the candidate tests (--no-examples: off).
A task with codes but no tests is decided by its examples and output consensus (``decided_by``).
Tests, examples and extra inputs run in one pass; a program that times out is not run on the
remaining extra inputs.

Methods: coevo (default: posterior over behaviour clusters from tests, the statement's examples and
output consensus), b4, codet, max_pass, consensus (MBR-exec style clustering).

  coevo select --tasks tasks.jsonl --codes codes.jsonl --tests tests.jsonl --out chosen.jsonl
"""


def add_arguments(parser) -> None:
    parser.add_argument("--tasks", required=True, metavar="T", help="tasks JSONL file")
    parser.add_argument("--codes", required=True, metavar="C", help="candidate codes JSONL file")
    parser.add_argument("--tests", required=True, metavar="U", help="candidate tests JSONL file")
    parser.add_argument("--out", required=True, metavar="S", help="selections JSONL to write")
    parser.add_argument("--method", default="coevo", metavar="{" + ",".join(METHOD_CHOICES) + "}",
                        help="selection method: coevo (default), b4, codet, max_pass or consensus")
    parser.add_argument("--consensus-inputs", type=int, default=24, metavar="N",
                        help="extra inputs drawn per task for output consensus (0 = only the tests' "
                             "own inputs; default 24)")
    parser.add_argument("--no-consensus", action="store_true",
                        help="do not run codes on extra inputs (selection from the matrix alone)")
    parser.add_argument("--no-examples", action="store_true",
                        help="do not use the worked examples of the task statements (doctest "
                             "lines, f(x) == y, sample input/output) as trusted evidence")
    parser.add_argument("--use-task-tests", action="store_true",
                        help="also use the tasks' ground-truth tests as candidate tests (scored last)")
    from coevo.commands.codes_input import add_raw_code_argument

    add_raw_code_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of the extra-input draw (default 0)")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="per-cell wall-clock limit in seconds (default: the sandbox's)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="parallel sandbox workers (default: the sandbox's)")
    add_score_arguments(parser)
    parser.add_argument("--calibration", metavar="REPORT",
                        help="map the scores onto probabilities with the maps a `coevo eval` report "
                             "fitted on labelled tasks (its calibration.select.map / tests.map)")
    from coevo.cli import add_output_options

    add_output_options(parser)


def add_score_arguments(parser) -> None:
    """``--unseen-weight`` / ``--evidence-scale`` (coevo select and coevo eval)."""
    parser.add_argument("--unseen-weight", type=float, default=None, metavar="W",
                        help="coevo's scores: how many samples the hypothesis 'no candidate is right' "
                             "weighs against the best cluster (default 1, for candidates sampled from a "
                             "model; 0 when a right one is surely among them, as in a benchmark pool). "
                             "Never moves the choice")
    parser.add_argument("--evidence-scale", type=float, default=None, metavar="T",
                        help="coevo's scores: the evidence in units of T tests passed (default 11.5; 1 "
                             "reads every test as an independent witness, scores near 0 or 1). Never "
                             "moves the choice")


def score_options(args, method: str) -> dict:
    """The coevo method's score settings the options give (``{}`` for the defaults); InputError
    naming the option for a bad value or another method. Checked before any sandbox work, so the
    bounds repeat :func:`matrix.selection.coevo_default`'s."""
    from matrix.errors import InputError

    score_kw = {}
    for flag, key, low_ok in (("--unseen-weight", "unseen_weight", True),
                              ("--evidence-scale", "evidence_scale", False)):
        value = getattr(args, key)
        if value is None:
            continue
        if not (math.isfinite(value) and (value >= 0 if low_ok else value > 0)):
            raise InputError(f"must be a number {'>=' if low_ok else '>'} 0", field=flag)
        if method != "coevo":
            raise InputError(f"only shapes the coevo method's scores, not {method}'s", field=flag)
        score_kw[key] = value
    return score_kw


def check_common(args) -> None:
    """Validate the numeric options shared with `coevo eval` (InputError names the option)."""
    from matrix.errors import InputError
    from matrix.selection import canonical_method

    if args.timeout is not None and not args.timeout > 0:
        raise InputError("must be > 0", field="--timeout")
    if args.workers is not None and args.workers < 1:
        raise InputError("must be >= 1", field="--workers")
    if args.consensus_inputs < 0:
        raise InputError("must be >= 0", field="--consensus-inputs")
    try:
        canonical_method(args.method)
    except ValueError as exc:
        raise InputError(str(exc), field="--method") from None


def executor_config(args):
    from matrix.engine import ExecConfig

    kw = {}
    if args.timeout is not None:
        kw["timeout"] = args.timeout
    if args.workers is not None:
        kw["workers"] = args.workers
    return ExecConfig(**kw)


def consensus_for(args, executor, task, codes, tests):
    """Output keys on extra inputs, or None (consensus off, one code, or no usable input)."""
    from matrix.inputs import consensus_keys

    if args.no_consensus:
        return None
    try:
        got = consensus_keys(executor, task, codes, tests, n_inputs=args.consensus_inputs, seed=args.seed)
    except Exception as exc:  # a refinement: never let it sink the selection
        print(f"coevo {args.command}: warning: output consensus skipped for {task.task_id}: {exc}",
              file=sys.stderr)
        return None
    return None if got is None else got[0]


def examples_for(args, task) -> list:
    """The worked examples of ``task``'s statement, run beside the candidate tests (none with
    ``--no-examples``)."""
    from matrix.statement_examples import task_examples

    return [] if args.no_examples else task_examples(task)


def _drawer(task, tests, n_inputs: int, seed: int):
    """A function drawing the task's extra inputs (never raising: a refinement must not sink
    the selection)."""
    def draw():
        from matrix.inputs import consensus_inputs

        try:
            return consensus_inputs(task, tests, n_inputs=n_inputs, seed=seed)
        except Exception as exc:
            print(f"coevo select: warning: output consensus skipped for {task.task_id}: {exc}", file=sys.stderr)
            return []

    return draw


def run(args) -> int:
    from coevo.cli import status_say
    from coevo.commands.codes_input import extracted_note, load_candidate_codes, load_candidate_tests, tests_note
    from coevo.commands.tasks_input import load_task_file
    from matrix.errors import InputError
    from matrix.inputs import consensus_from_cells
    from matrix.jsonl import write_jsonl_atomic
    from matrix.selection import canonical_method, plausible, select_plausible, without_evidence
    from matrix.statement_examples import split_examples

    check_common(args)
    method = canonical_method(args.method)
    score_kw = score_options(args, method)
    maps = {}
    if args.calibration:
        from matrix.calibration import read_calibration

        maps = read_calibration(args.calibration, scores=score_kw)
    tasks = load_task_file(args.tasks)
    codes, n_extracted = load_candidate_codes(args.codes, tasks, raw=args.raw_code, say=status_say(args))
    # tasks without tests are decided otherwise
    tests, n_read = load_candidate_tests(args.tests, tasks, raw=args.raw_code, allow_empty=True)
    if not codes:
        raise InputError("no candidate codes for any task", file=args.codes, field="task_id")
    jobs = []
    for task in tasks:
        if task.task_id not in codes:
            continue
        pool_tests = list(tests.get(task.task_id, []))
        if args.use_task_tests:
            pool_tests += list(task.tests)
        ex = examples_for(args, task)
        extra = None
        if method in ("coevo", "consensus") and not args.no_consensus and len(codes[task.task_id]) > 1:
            # the inputs come from the tests' (or the examples') calls, drawn while earlier tasks
            # run; one pass runs tests, examples and extra inputs
            extra = _drawer(task, pool_tests + ex, args.consensus_inputs, args.seed)
        jobs.append((task, codes[task.task_id], pool_tests, ex, extra))
    skipped = len(tasks) - len(jobs)

    from matrix.engine import Executor

    rows = []
    with Executor(executor_config(args)) as executor:
        from coevo.cli import progress_enabled

        progress = progress_enabled(args)
        from coevo.commands.matrix_cmd import with_status

        results = with_status(executor, args).run_matrices(
            [(t, c, tests_ + ex, extra) for t, c, tests_, ex, extra in jobs], progress=progress)
        isolation = executor.isolation
        for (task, task_codes, pool_tests, ex, _), res in zip(jobs, results):
            passed, examples = split_examples(res.passed, len(task_codes), len(pool_tests))
            extra = res.extra_inputs
            consensus = consensus_from_cells(task, res.extra) if extra else None
            evidence = [name for name, n in (("tests", len(pool_tests)), ("examples", len(ex)),
                                             ("consensus", len(extra))) if n]
            # a candidate that cannot be a program (empty, prose, cut off) is never picked over one that can
            entry = task.entry_point if task.kind != "stdio" else None
            ok = [plausible(c, entry) for c in task_codes]
            sel = select_plausible(passed, ok, method, consensus=consensus, examples=examples, **score_kw)
            if not evidence:  # every candidate alike to the methods: the first that could be a program
                sel = without_evidence(sel, ok)
                defines = f" and define {entry}" if entry else ""
                evidence = [f"nothing but parsing: the first of {sel.details['plausible']} candidates that "
                            f"parse{defines}" if "plausible" in sel.details else "nothing: no candidate parses"]
            if "select" in maps:
                sel.code_scores = maps["select"](sel.code_logits)
            if "tests" in maps:
                sel.test_scores = maps["tests"](sel.test_logits)
            rows.append({
                "task_id": task.task_id,
                "index": int(sel.index),
                "code": task_codes[sel.index],  # (the harness's import line is the matrix's: not written)
                "test_scores": [round(float(x), 6) for x in sel.test_scores],
                "code_scores": [round(float(x), 6) for x in sel.code_scores],
                "method": sel.method,
                "n_codes": len(task_codes),
                "n_tests": len(pool_tests),
                "n_inputs": len(extra),
                "n_examples": len(ex),
                "examples_passed": int(examples[sel.index].sum()),
                "decided_by": evidence,
                **({"calibrated": sorted(maps)} if maps else {}),
                "isolation": str(isolation),
            })
    write_jsonl_atomic(args.out, rows)
    if not args.quiet:
        note = f" ({skipped} tasks without codes skipped)" if skipped else ""
        untested = sum(1 for r in rows if not r["n_tests"])
        if untested:
            note += f"; {untested} without tests, decided by examples and output consensus"
        note += extracted_note(n_extracted) + tests_note(n_read)
        print(f"coevo select: {len(rows)} tasks, method {method}, isolation {isolation}{note} -> "
              f"{'stdout' if args.out == '-' else args.out}",
              file=sys.stderr)
    return 0
