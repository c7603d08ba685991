"""`coevo solve`: sample programs and tests with a model, run the matrix, pick one program per task.

Writes ``--out FILE`` in the codes contract, one line ``{"task_id", "code"}`` per task in the tasks
file's order (``code`` is ``""`` when no sample held parseable code). ``--details FILE`` adds one
line per task with every parsed candidate, the generated tests and the selection scores.
"""

from __future__ import annotations

import sys

HELP = "sample codes and tests with a model, build the code x test matrix, select one code per task"
DESCRIPTION = HELP + """

For each task the model (a local save_pretrained directory) samples --n-codes programs (Coder)
and --n-tests test suites (Tester) in batched generation; the parsed programs run against the
de-duplicated generated tests in the sandbox, and test-time selection (--method) picks a program.

  coevo solve --model runs/tiny/final --tasks tasks.jsonl --out codes.jsonl
"""


def add_model_arguments(parser, *, n_tests_default: int = 8) -> None:
    """Arguments shared by `solve` and `gen-tests`."""
    parser.add_argument("--model", required=True, metavar="PATH",
                        help="local model directory (save_pretrained); never downloaded")
    parser.add_argument("--tasks", required=True, metavar="T", help="tasks JSONL file")
    parser.add_argument("--n-codes", type=int, default=8, metavar="N",
                        help="Coder samples per task (default 8)")
    parser.add_argument("--n-tests", type=int, default=n_tests_default, metavar="N",
                        help=f"Tester samples per task, each may hold several tests (default {n_tests_default})")
    parser.add_argument("--tests-per-sample", type=int, default=None, metavar="K",
                        help="ask each Tester sample for K tests and keep at most K")
    parser.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (default 0.8)")
    parser.add_argument("--top-p", type=float, default=0.95, help="nucleus sampling mass (default 0.95)")
    parser.add_argument("--max-new-tokens", type=int, default=512, metavar="N",
                        help="completion length limit (default 512)")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N",
                        help="sequences decoded together (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--method", default="coevo",
                        help="test-time selection method: coevo (default), b4, codet, max_pass, consensus")
    parser.add_argument("--consensus-inputs", type=int, default=24, metavar="N",
                        help="extra inputs drawn for output consensus (0 = off; default 24)")
    parser.add_argument("--no-examples", action="store_true",
                        help="selection without the worked examples of the task statements")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="per-cell wall-clock limit in seconds (default: the sandbox's)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="parallel sandbox workers (default: the sandbox's)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--dtype", default=None, help="float32, bfloat16 or float16 (default: bf16 on GPU)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def add_arguments(parser) -> None:
    parser.add_argument("--out", required=True, metavar="FILE", help="codes JSONL to write")
    add_model_arguments(parser, n_tests_default=8)
    parser.add_argument("--details", default=None, metavar="FILE",
                        help="also write every candidate, test and score per task (JSONL)")


def _check_args(args, *, min_tests: int) -> None:
    from coevo.commands.select_cmd import check_common
    from matrix.errors import InputError

    def need(ok: bool, name: str, msg: str):
        if not ok:
            raise InputError(msg, field=name)

    need(args.n_codes >= 1, "--n-codes", "must be >= 1")
    need(args.n_tests >= min_tests, "--n-tests", f"must be >= {min_tests}")
    need(args.tests_per_sample is None or args.tests_per_sample >= 1, "--tests-per-sample",
         "must be >= 1")
    need(args.temperature >= 0, "--temperature", "must be >= 0")
    need(0 < args.top_p <= 1, "--top-p", "must be in (0, 1]")
    need(args.max_new_tokens >= 1, "--max-new-tokens", "must be >= 1")
    need(args.batch_size >= 1, "--batch-size", "must be >= 1")
    check_common(args)  # --timeout, --workers, --consensus-inputs, --method


def _say(args, msg: str) -> None:
    if not args.quiet:
        print(f"coevo {args.command}: {msg}", file=sys.stderr, flush=True)


def build_pools(args, *, min_tests: int):
    """Load tasks and model, sample, run the matrices and select; returns ``(tasks, pools, executor
    isolation)``. Input errors surface before the model is loaded."""
    from matrix.tasks import load_tasks

    _check_args(args, min_tests=min_tests)
    tasks = load_tasks(args.tasks)
    from coevo.commands.select_cmd import executor_config
    from matrix.engine import Executor
    from roles.generation import GenerationConfig, GenerationEngine
    from roles.model_io import load_model
    from roles.pipeline import PoolConfig, judge_pools, sample_pools

    progress = not args.quiet
    _say(args, f"loading model {args.model}")
    model, tok = load_model(args.model, device=args.device, dtype=args.dtype)
    gen = GenerationConfig(temperature=args.temperature, top_p=args.top_p,
                           max_new_tokens=args.max_new_tokens, seed=args.seed,
                           batch_size=args.batch_size)
    cfg = PoolConfig(n_codes=args.n_codes, n_tests=args.n_tests,
                     tests_per_sample=args.tests_per_sample, method=args.method,
                     consensus_inputs=args.consensus_inputs, examples=not args.no_examples,
                     seed=args.seed)
    _say(args, f"{len(tasks)} tasks: sampling {cfg.n_codes} codes and {cfg.n_tests} test suites "
               f"per task on {next(model.parameters()).device}")
    engine = GenerationEngine(model, tok, gen)
    pools = sample_pools(engine, tok, tasks, cfg, progress=progress)
    st = engine.stats
    _say(args, f"sampled {int(st.get('samples', 0))} completions, "
               f"{st.get('tokens_per_s', 0.0):.0f} tokens/s; "
               f"{sum(len(p.codes) for p in pools)} parseable codes, "
               f"{sum(len(p.tests) for p in pools)} distinct tests")
    del model, engine
    _say(args, "running the code x test matrices")
    with Executor(executor_config(args)) as executor:
        judge_pools(pools, executor, cfg, progress=progress)
        isolation = getattr(executor, "isolation", None)
    return tasks, pools, isolation


def run(args) -> int:
    from pathlib import Path

    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic

    for path in (args.out, args.details):
        if path and Path(path).is_dir():
            raise InputError("is a directory (expected a file to write)", file=path)
    _, pools, isolation = build_pools(args, min_tests=0)
    write_jsonl_atomic(args.out, ({"task_id": p.task.task_id, "code": p.code} for p in pools))
    if args.details:
        write_jsonl_atomic(args.details, (p.summary() for p in pools))
    solved = sum(1 for p in pools if p.code)
    _say(args, f"wrote {args.out}: {len(pools)} tasks, {solved} with a selected code"
               + (f" (sandbox isolation: {isolation})" if isolation else ""))
    return 0
