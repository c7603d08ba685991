"""`coevo solve`: sample programs and tests with a model, run the matrix, pick one program per task.

Writes ``--out FILE`` in the codes contract, one line ``{"task_id", "code"}`` per task in the tasks
file's order (``code`` is ``""`` when no sample held parseable code). ``--details FILE`` adds one
line per task with every parsed candidate, the generated tests and the selection scores.
"""

from __future__ import annotations

import sys

HELP = "sample codes and tests with a model, build the code x test matrix, select one code per task"
DESCRIPTION = HELP + """

For each task the model samples --n-codes programs (Coder) and --n-tests test suites (Tester):
a local save_pretrained directory run in this process (--model), or a model served over an
OpenAI-compatible API (--api-base, --api-model; answers are cached on disk, so a re-run costs
nothing). The parsed programs run against the de-duplicated generated tests in the sandbox, and
test-time selection (--method) picks a program.

  coevo solve --model runs/demo/model --tasks tasks.jsonl --out codes.jsonl
  vllm serve Qwen/Qwen2.5-Coder-7B-Instruct &
  coevo solve --api-base http://127.0.0.1:8000/v1 --api-model Qwen/Qwen2.5-Coder-7B-Instruct \\
      --tasks tasks.jsonl --out codes.jsonl
"""


def add_backend_arguments(parser, group=None) -> None:
    """Which model samples: ``--model PATH`` (in-process) or ``--api-base URL`` (served), exactly one
    (added to ``group``, a required mutually exclusive group, when given), with their options."""
    g = group if group is not None else parser.add_mutually_exclusive_group(required=True)
    g.add_argument("--model", metavar="PATH",
                   help="local model directory (save_pretrained), run in this process; never downloaded")
    g.add_argument("--api-base", metavar="URL",
                   help="OpenAI-compatible server to sample from instead, e.g. http://127.0.0.1:8000/v1")
    api = parser.add_argument_group("served model (with --api-base)")
    api.add_argument("--api-model", metavar="NAME", help="the model name the server knows (required)")
    api.add_argument("--api-key-env", metavar="VAR",
                     help="name of the environment variable holding the API key (default: send none)")
    api.add_argument("--api-endpoint", choices=("chat", "completions"), default=None,
                     help="chat completions (default) or plain completions (models without a chat template)")
    api.add_argument("--api-prompt", choices=("chat", "plain"), default=None,
                     help="what to send: the roles' chat messages (default on the chat endpoint) or "
                          "coevo's plain prompt format (default on completions; models trained on it)")
    api.add_argument("--api-concurrency", type=int, default=None, metavar="N",
                     help="requests in flight (default 8)")
    api.add_argument("--api-timeout", type=float, default=None, metavar="S",
                     help="seconds to wait for one answer (default 300)")
    api.add_argument("--api-retries", type=int, default=None, metavar="N",
                     help="retries on connection errors, timeouts, 429 and 5xx, with backoff (default 3)")
    api.add_argument("--api-stop", action="append", default=None, metavar="TEXT",
                     help="stop sequence passed to the server (repeatable)")
    api.add_argument("--api-extra", default=None, metavar="JSON",
                     help='more request fields as a JSON object, e.g. \'{"top_k": 20}\'')
    api.add_argument("--api-cache", default=None, metavar="DIR",
                     help="response cache directory (default $COEVO_API_CACHE, else ~/.cache/coevo/api)")
    api.add_argument("--no-api-cache", action="store_true",
                     help="neither read nor write the response cache")
    local = parser.add_argument_group("local model (with --model)")
    local.add_argument("--batch-size", type=int, default=None, metavar="N",
                       help="sequences decoded together (default 128)")
    local.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    local.add_argument("--dtype", default=None, help="float32, bfloat16 or float16 (default: bf16 on GPU)")
    local.add_argument("--prompt", choices=("auto", "chat", "plain"), default="auto",
                       help="prompt format: the tokenizer's chat template when it has one (auto), coevo's "
                            "plain format even where the tokenizer ships a template (plain: a base model), "
                            "or the template (chat)")


def add_sampling_arguments(parser, *, n_tests_default: int = 8) -> None:
    """How many samples per task and how they are drawn (both backends)."""
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


def add_model_arguments(parser, *, n_tests_default: int = 8) -> None:
    """Arguments shared by `solve` and `gen-tests`."""
    add_backend_arguments(parser)
    parser.add_argument("--tasks", required=True, metavar="T", help="tasks JSONL file")
    add_sampling_arguments(parser, n_tests_default=n_tests_default)
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
    from coevo.cli import add_output_options

    add_output_options(parser)


def add_arguments(parser) -> None:
    parser.add_argument("--out", required=True, metavar="FILE", help="codes JSONL to write")
    add_model_arguments(parser, n_tests_default=8)
    parser.add_argument("--details", default=None, metavar="FILE",
                        help="also write every candidate, test and score per task (JSONL)")


def check_model_args(args, *, min_tests: int) -> None:
    """Usage errors of the sampling and backend options (before anything is loaded)."""
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
    check_common(args)  # --timeout, --workers, --consensus-inputs, --method
    check_backend_args(args)


def _say(args, msg: str) -> None:
    if not args.quiet:
        print(f"coevo {args.command}: {msg}", file=sys.stderr, flush=True)


_API_OPTIONS = ("api_model", "api_key_env", "api_endpoint", "api_prompt", "api_concurrency", "api_timeout",
                "api_retries", "api_stop", "api_extra", "api_cache")
_LOCAL_OPTIONS = ("batch_size", "device", "dtype")


def _api_config(args):
    """The :class:`roles.api_client.ApiConfig` the ``--api-*`` options describe (validated)."""
    import json

    from matrix.errors import InputError
    from roles.api_client import ApiConfig

    extra = {}
    if args.api_extra:
        try:
            extra = json.loads(args.api_extra)
        except ValueError as exc:
            raise InputError(f"not JSON ({exc.msg})", field="--api-extra") from None
        if not isinstance(extra, dict):
            raise InputError("must be a JSON object", field="--api-extra")
    api = ApiConfig(base_url=args.api_base, model=args.api_model or "", key_env=args.api_key_env or "",
                    endpoint=args.api_endpoint or "chat", prompt=args.api_prompt or "auto",
                    stop=list(args.api_stop or []), extra_body=extra,
                    concurrency=8 if args.api_concurrency is None else args.api_concurrency,
                    timeout=300.0 if args.api_timeout is None else args.api_timeout,
                    max_retries=3 if args.api_retries is None else args.api_retries,
                    cache=not args.no_api_cache, cache_dir=args.api_cache or "")
    api.key_option = "--api-key-env"  # type: ignore[misc]  # messages name the option the user gave
    try:
        api.validate()
    except ValueError as exc:
        name, _, msg = str(exc).partition(": ")
        flag = {"base_url": "--api-base", "model": "--api-model", "key_env": "--api-key-env",
                "endpoint": "--api-endpoint", "prompt": "--api-prompt", "concurrency": "--api-concurrency",
                "timeout": "--api-timeout", "max_retries": "--api-retries", "stop": "--api-stop",
                "extra_body": "--api-extra"}.get(name, name)
        raise InputError(msg or str(exc), field=flag) from None
    return api


def check_backend_args(args) -> None:
    """Usage errors of the backend options (before anything is loaded): options of the other
    backend, a missing ``--api-model``, bad values."""
    from matrix.errors import InputError

    if getattr(args, "api_base", None):
        for name in _LOCAL_OPTIONS:
            if getattr(args, name, None) is not None:
                raise InputError("only applies to a local --model", field="--" + name.replace("_", "-"))
        if args.no_api_cache and args.api_cache:
            raise InputError("--api-cache and --no-api-cache contradict each other", field="--api-cache")
        _api_config(args).api_key()  # an unset key variable is a usage error, found before any work
    else:
        for name in _API_OPTIONS + ("no_api_cache",):
            if getattr(args, name, None) not in (None, False):
                raise InputError("only applies with --api-base", field="--" + name.replace("_", "-"))
        if args.batch_size is not None and args.batch_size < 1:
            raise InputError("must be >= 1", field="--batch-size")


def open_generator(args):
    """The sampling backend that parsed model options name (:func:`add_backend_arguments` plus
    :func:`add_sampling_arguments` and ``--seed``), as ``(generator, tokenizer)``.

    * ``--model PATH``: loads the local model (``--device``, ``--dtype``) and returns a
      :class:`roles.generation.GenerationEngine` (token-level) with its tokenizer; build prompts
      with that tokenizer.
    * ``--api-base URL``: returns a :class:`roles.api_client.ApiGenerator` (text-only, ``--api-*``
      options) and ``None``: prompts are then built without a tokenizer (the plain format, plus the
      chat messages; :func:`roles.requests.role_request` makes both).

    ``--temperature``, ``--top-p``, ``--max-new-tokens``, ``--seed`` (and ``--batch-size``) become the
    generator's default :class:`roles.generation.GenerationConfig`. Either way pass both to
    :func:`roles.pools.sample_pools`, report with :func:`roles.generation.stats_line` on
    ``generator.stats``, and call ``generator.close()`` when it has one (closes the HTTP client).
    Raises :class:`matrix.errors.InputError` (one line) for bad options, a missing model directory
    or an unset key variable; a served model that fails later raises
    :class:`roles.api_client.ApiError` (an ``InputError``) from ``generate``.
    """
    from roles.generation import GenerationConfig

    check_backend_args(args)
    gen = GenerationConfig(temperature=args.temperature, top_p=args.top_p,
                           max_new_tokens=args.max_new_tokens, seed=args.seed,
                           batch_size=getattr(args, "batch_size", None) or 128)
    if getattr(args, "api_base", None):
        from roles.api_client import ApiGenerator

        return _with_status_lines(ApiGenerator(_api_config(args), gen), args), None
    from roles.generation import GenerationEngine
    from roles.model_io import load_model

    model, tok = load_model(args.model, device=args.device, dtype=args.dtype,
                            prompt=getattr(args, "prompt", None) or "auto")
    return _with_status_lines(GenerationEngine(model, tok, gen), args), tok


def _with_status_lines(generator, args):
    """Where no progress bar is drawn, the generator says ``coevo <command>: sampling: 480/2000
    samples (12.3 samples/s, ETA 2m04s)`` at most every 30 s (nothing with ``--quiet``)."""
    from coevo.cli import status_say

    say = status_say(args, command="solve")
    if say is not None:
        generator.say = say
    return generator


def _where(args, generator) -> str:
    if getattr(args, "api_base", None):
        return f"from {args.api_model} at {args.api_base}"
    return f"on {generator.device}"


def build_pools(args, *, min_tests: int):
    """Load tasks and model, sample, run the matrices and select; returns ``(tasks, pools, executor
    isolation)``. Input errors surface before the model is loaded."""
    from coevo.commands.tasks_input import load_task_file

    check_model_args(args, min_tests=min_tests)
    tasks = load_task_file(args.tasks)
    from coevo.cli import progress_enabled
    from coevo.commands.select_cmd import executor_config
    from matrix.engine import Executor
    from roles.api_client import answers_note
    from roles.generation import stats_line
    from roles.pools import PoolConfig, judge_pools, sample_pools

    progress = progress_enabled(args)  # bars only on a terminal unless --progress
    _say(args, f"loading model {args.model}" if args.model else f"using the served model {args.api_model}")
    generator, tok = open_generator(args)
    cfg = PoolConfig(n_codes=args.n_codes, n_tests=args.n_tests,
                     tests_per_sample=args.tests_per_sample, method=args.method,
                     consensus_inputs=args.consensus_inputs, examples=not args.no_examples,
                     seed=args.seed)
    _say(args, f"{len(tasks)} tasks: sampling {cfg.n_codes} codes and {cfg.n_tests} test suites "
               f"per task {_where(args, generator)}")
    try:
        pools = sample_pools(generator, tok, tasks, cfg, progress=progress)
    finally:
        if hasattr(generator, "close"):
            generator.close()
    note = answers_note(generator.stats)  # (a served model's: answers from the reasoning, empty ones)
    _say(args, f"{stats_line(generator.stats)}; " + (f"{note}; " if note else "") +
               f"{sum(len(p.codes) for p in pools)} parseable codes, "
               f"{sum(len(p.tests) for p in pools)} distinct tests")
    del generator, tok
    _say(args, "running the code x test matrices")
    with Executor(executor_config(args)) as executor:
        from coevo.commands.matrix_cmd import with_status

        judge_pools(pools, with_status(executor, args), cfg, progress=progress)
        isolation = getattr(executor, "isolation", None)
    return tasks, pools, isolation


def run(args) -> int:
    from coevo.cli import check_output_file
    from matrix.jsonl import write_jsonl_atomic

    for path, option in ((args.out, "--out"), (args.details, "--details")):
        if path:  # before the model is loaded and sampled: a run's results are never lost to its --out
            check_output_file(path, option)
    _, pools, isolation = build_pools(args, min_tests=0)
    write_jsonl_atomic(args.out, ({"task_id": p.task.task_id, "code": p.code} for p in pools))
    if args.details:
        write_jsonl_atomic(args.details, (p.summary() for p in pools))
    solved = sum(1 for p in pools if p.code)
    _say(args, f"wrote {args.out}: {len(pools)} tasks, {solved} with a selected code"
               + (f" (sandbox isolation: {isolation})" if isolation else ""))
    return 0
