"""Held-out evaluation of the shared model in every role.

For each task the model samples ``n_codes`` programs (Coder) and ``n_tests`` test suites (Tester)
in one batched generation call; one matrix per task runs every program and the task's reference
solution against the ground-truth tests and the generated tests. From it:

* ``code_acc``: mean over tasks of the fraction of sampled programs passing every ground-truth
  test (a pass@1 estimate at the sampling temperature);
* ``test_acc``: unit-test accuracy (CURE): mean over Tester samples of the fraction of its tests
  that the reference solution passes; candidate tests the parser rejects (unparseable asserts,
  duplicates, asserts that never call the function) count as wrong, so garbage cannot raise the
  figure; a sample with no test at all scores 0;
* ``test_kill``: how much a Tester sample checks: the share of the reference's behaviour-changing
  AST mutants (:func:`matrix.mutation.mutants`, at most ``mutants`` per task, those that fail a
  ground-truth test) that its *right* tests reject (:func:`matrix.metrics.mutation_score`), averaged
  over Tester samples. ``test_acc`` alone rewards caution: one always-true edge case
  (``f([]) == 0``) scores 1.0 and checks almost nothing; ``test_kill`` is what such a suite misses;
* ``bon_acc``: best-of-N with generated tests: the program chosen by test-time selection
  (``select_method``, among the samples holding code: :func:`matrix.selection.select_plausible`)
  over the generated tests passes every ground-truth test;
* ``fix_acc``: Fixer success: of the sampled programs that fail (at most ``fix_per_task`` per
  task), the fraction repaired within ``fix_turns`` turns of feedback (a repair episode of
  :mod:`coevo.repair`, the same as in training: feedback from the first failing public test,
  ``fix_public_tests``; repaired = the final program passes every ground-truth test);
* ``fix_fixed_starts``: Fixer success on FIXED starts: the first evaluation of a run (step 0, the
  SFT start) keeps its ``fix_acc`` starts (its failing programs, their feedback) in the run
  directory (``fixer_starts.jsonl``, written atomically before step 0 is logged; a resumed run
  reads it, never draws again); every later evaluation repairs those same programs (one episode
  each, batched with ``fix_acc``'s: no extra generation pass). ``fix_acc`` mixes the Fixer with
  its starts: after RL the Coder's remaining failures are harder, so ``fix_acc`` can fall while
  the Fixer improves; ``fix_fixed_starts`` measures the Fixer alone (at step 0 the two are equal);
* ``solve_1at1`` and ``solve_1atK`` (K = 1 + ``fix_turns``, e.g. ``solve_1at3``): RLEF's 1@K, for
  the first ``solve_starts`` Coder samples of every task: the share whose first attempt is
  correct, and the share solved within K attempts (the Coder's attempt, then Fixer turns while
  it fails a public test; one program is submitted, judged on every ground-truth test);
* calibration of the selection's scores (``select_method``), :mod:`matrix.calibration`:
  ``select_score`` (mean score of the chosen programs), ``select_ece`` (expected calibration error
  of that score as P(chosen program correct)), ``select_ece_cv`` (the same after a Platt map fitted
  on the other half of the tasks: 2-fold cross-fitting by task); for every generated test, its
  score as P(the reference solution passes it): ``test_score_ece``, ``test_score_ece_cv``. Under
  ``calibration`` (``select`` and ``tests``, :func:`matrix.calibration.calibration_report`): the
  reliability curves (``curve``, ``curve_cv``), the items scored >= 0.99 and how many of them are
  right (``ge99``, ``ge99_right``) and, for the tests, the precision of those kept at score >= P
  (``precision_at``, P = 0.5, 0.8, 0.9, 0.95; raw and cross-fitted).

With ``eval.api`` (a served model, :class:`roles.api_config.ApiConfig`) every sample comes from
that model over HTTP instead of the run's own model: e.g. a served reference on the same
held-out tasks, sandbox and metrics. Its answers are cached on disk, so evaluating the same
served model again at a later step costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from coevo.repair import cells  # noqa: F401  (re-exported: callers read matrix cells through here)
from matrix.calibration import PRECISION_AT
from matrix.tasks import Task
from roles.api_config import ApiConfig

FIXER_STARTS_FILE = "fixer_starts.jsonl"  # RUN_DIR/<this>: the first evaluation's repair starts


@dataclass
class EvalConfig:
    n_codes: int = 8  # Coder samples per held-out task (code_acc, best-of-N)
    n_tests: int = 4  # Tester samples per held-out task (test_acc)
    temperature: float = 0.8  # sampling temperature of the evaluation
    max_new_tokens: int = 160  # completion length cap of the evaluation
    fix_turns: int = 2  # Fixer attempts per repair episode
    fix_per_task: int = 2  # failing programs per task that start a repair episode (fix_acc)
    fix_public_tests: int = 0  # the first N ground-truth tests give feedback (public); 0 = all
    solve_starts: int = 2  # Coder samples per task that start a 1@K episode (0 = no 1@K figures)
    max_tasks: int = 0  # 0 = all held-out tasks
    select_method: str = "coevo"  # best-of-N selection: coevo | b4 | codet | max_pass | consensus
    tests_per_sample: int = 0  # > 0: ask for this many tests; missing or extra ones count as wrong
    mutants: int = 8  # reference mutants per task for test_kill (0 = off: no test_kill figure)
    seed: int = 1234  # sampling seed (the same held-out samples for every evaluation of a run)
    # sample from a model served over an OpenAI-compatible API instead of the run's own model
    # (api.base_url set; see roles.api_config.ApiConfig); answers are cached on disk
    api: ApiConfig = field(default_factory=ApiConfig)

    def validate(self):
        if self.n_codes < 1 or self.n_tests < 0:
            raise ValueError("n_codes: need at least one code sample")
        if self.temperature < 0:
            raise ValueError("temperature: must be >= 0")
        if self.fix_turns < 0 or self.fix_per_task < 0 or self.fix_public_tests < 0 or self.solve_starts < 0:
            raise ValueError("fix_turns: must be >= 0 (fix_per_task, fix_public_tests, solve_starts too)")
        if self.mutants < 0:
            raise ValueError("mutants: must be >= 0")


@dataclass
class FixedStart:
    """A failing program kept by the first evaluation: a start of the ``fix_fixed_starts`` episodes."""
    task_id: str
    row: int  # its Coder sample's index in that evaluation
    code: str
    feedback: str  # on the public tests, as the Fixer was shown it
    before: float  # its share of ground-truth tests passed

    def to_json(self) -> dict:
        return {"task_id": self.task_id, "row": self.row, "code": self.code, "feedback": self.feedback,
                "before": self.before}


def read_fixed_starts(path: str | Path, tasks: list[Task]) -> list[tuple[Task, FixedStart]]:
    """The kept starts in ``path`` with their tasks (from ``tasks``); a damaged line is a one-line
    :class:`InputError` naming the file, the line and the field."""
    from matrix.errors import InputError
    from matrix.jsonl import read_jsonl

    by_id = {t.task_id: t for t in tasks}
    out = []
    for line, rec in read_jsonl(path):
        if not isinstance(rec, dict):
            raise InputError("a kept repair start must be a JSON object", file=str(path), line=line)
        for name, kind in (("task_id", str), ("row", int), ("code", str), ("feedback", str), ("before", (int, float))):
            v = rec.get(name)
            if not isinstance(v, kind) or isinstance(v, bool):
                raise InputError("missing" if name not in rec else f"must be {getattr(kind, '__name__', 'a number')}",
                                 file=str(path), line=line, field=name)
        if rec["task_id"] not in by_id:
            raise InputError(f"{rec['task_id']!r} is not a held-out task of this run", file=str(path), line=line,
                             field="task_id")
        out.append((by_id[rec["task_id"]], FixedStart(rec["task_id"], rec["row"], rec["code"], rec["feedback"],
                                                      float(rec["before"]))))
    return out


def evaluate(model, tokenizer, executor, tasks: list[Task], cfg: EvalConfig, *, progress: bool = False,
             fixer_starts: str | Path | None = None, keep_starts: bool = False) -> dict:
    """The held-out figures (module doc) of ``model`` (with ``tokenizer``), or of the served model
    that ``cfg.api`` names (then ``model`` and ``tokenizer`` are not used: prompts are coevo's plain
    format or chat messages, as ``cfg.api.prompt`` says).

    ``fixer_starts``: the run's kept repair starts (``fix_fixed_starts``): repaired again when the
    file exists; when it does not and ``keep_starts`` (the run's first evaluation), this
    evaluation's ``fix_acc`` starts are written there (atomically) and are the figure's starts."""
    from roles.generation import GenerationConfig, GenerationEngine

    gen_cfg = GenerationConfig(temperature=cfg.temperature, max_new_tokens=cfg.max_new_tokens, seed=cfg.seed)
    if not cfg.api.enabled:
        return _evaluate(GenerationEngine(model, tokenizer, gen_cfg), tokenizer, executor, tasks, cfg, progress,
                         fixer_starts=fixer_starts, keep_starts=keep_starts)
    from roles.api_client import ApiGenerator

    with ApiGenerator(cfg.api, gen_cfg) as generator:
        return _evaluate(generator, None, executor, tasks, cfg, progress, fixer_starts=fixer_starts,
                         keep_starts=keep_starts)


def _evaluate(engine, tokenizer, executor, tasks: list[Task], cfg: EvalConfig, progress: bool, *,
              fixer_starts: str | Path | None = None, keep_starts: bool = False) -> dict:
    from coevo.repair import public_columns
    from matrix.metrics import mutation_score, unit_test_accuracy
    from matrix.selection import plausible, select_plausible
    from roles.parsing import parse_tests, sample_program
    from roles.requests import role_request

    if cfg.max_tasks:
        tasks = tasks[: cfg.max_tasks]
    reqs = []
    for t in tasks:
        reqs.append(role_request("coder", t, cfg.n_codes, tokenizer=tokenizer))
        if cfg.n_tests:
            reqs.append(role_request("tester", t, cfg.n_tests, tokenizer=tokenizer,
                                     n_tests=cfg.tests_per_sample or None))
    samples = engine.generate(reqs, progress=progress)
    by_task: dict[str, dict[str, list]] = {t.task_id: {"coder": [], "tester": []} for t in tasks}
    for s in samples:
        by_task[s.task_id][s.role].append(s)

    jobs, layout = [], []
    for t in tasks:
        codes = [sample_program(s.text, t) for s in by_task[t.task_id]["coder"]]
        want = cfg.tests_per_sample
        parsed = [parse_tests(s.text, t, max_tests=want or None) for s in by_task[t.task_id]["tester"]]
        suites = [(p.tests, p.rejected(want)) for p in parsed]
        gen_tests = [x for p in parsed for x in p.tests]
        ref = t.solutions[:1]
        muts = _mutants(ref[0], cfg.mutants) if ref and parsed and t.tests else []
        jobs.append((t, codes + ref + muts, list(t.tests) + gen_tests))
        layout.append((codes, suites))
    results = executor.run_matrices(jobs, progress=progress)

    code_acc, test_acc, test_kill, bon_acc = [], [], [], []
    picks: list[tuple[float, bool, str]] = []  # (log-odds of the pick's score, correct, task)
    graded: list[tuple[float, bool, str]] = []  # (log-odds of a generated test's score, reference passes, task)
    broken, starts = [], []  # (task, row, code, passed-row, result): fix_acc / 1@K episode starts
    for t, (codes, suites), res in zip(tasks, layout, results):
        n, g = len(codes), len(t.tests)
        passed = np.asarray(res.passed, dtype=bool)
        ok = passed[:n, :g].all(axis=1) if g else np.zeros(n, dtype=bool)
        code_acc.append(float(ok.mean()) if n else 0.0)
        gen = passed[:n, g:]
        ref_row = passed[n, g:] if t.solutions else None
        if ref_row is not None and suites:
            mut = passed[n + 1:]
            mut = mut[~mut[:, :g].all(axis=1), g:]  # the mutants that really change behaviour
            start = 0
            for suite, rejected in suites:
                k = len(suite)
                test_acc.append(unit_test_accuracy(ref_row[start:start + k], rejected) if k + rejected else 0.0)
                if len(mut):
                    test_kill.append(mutation_score(mut[:, start:start + k], ref_row[start:start + k]))
                start += k
        if n:
            # a sample without code ("") is never the pick while one with code is there
            plaus = [plausible(c, t.entry_point if t.kind != "stdio" else None) for c in codes]
            sel = select_plausible(gen, plaus, method=cfg.select_method) if gen.shape[1] else None
            index = sel.index if sel is not None else next((i for i, ok_ in enumerate(plaus) if ok_), 0)
            bon_acc.append(float(ok[index]))
            if sel is not None:
                picks.append((sel.logit, bool(ok[index]), t.task_id))
                if ref_row is not None:
                    graded += [(float(x), bool(r), t.task_id) for x, r in zip(sel.test_logits, ref_row)]
        if g:
            cols = public_columns(t, cfg.fix_public_tests)
            failing = [i for i in range(n) if codes[i] and not passed[i, cols].all()]
            broken += [(t, i, codes[i], passed[i, :g], res) for i in failing[: cfg.fix_per_task]]
            starts += [(t, i, codes[i], passed[i, :g], res) for i in range(min(n, cfg.solve_starts))]

    out = {
        "code_acc": float(np.mean(code_acc)) if code_acc else 0.0,
        "test_acc": float(np.mean(test_acc)) if test_acc else 0.0,
        "bon_acc": float(np.mean(bon_acc)) if bon_acc else 0.0,
        "tasks": len(tasks),
    }
    if cfg.mutants:
        out["test_kill"] = float(np.mean(test_kill)) if test_kill else 0.0
    fixed: list[tuple[Task, FixedStart]] | None = None
    if cfg.fix_turns and fixer_starts is not None:
        if Path(fixer_starts).exists():
            fixed = read_fixed_starts(fixer_starts, tasks)
        elif keep_starts:  # the run's first evaluation: its failing programs become the fixed starts
            from coevo.repair import public_feedback
            from matrix.jsonl import write_jsonl_atomic

            fixed = [(t, FixedStart(t.task_id, i, code, public_feedback(t, res, i, cfg.fix_public_tests),
                                    float(row.mean()))) for t, i, code, row, res in broken]
            write_jsonl_atomic(fixer_starts, (f.to_json() for _, f in fixed))
    if cfg.fix_turns and (broken or starts or fixed):
        out.update(_repair_figures(engine, executor, tokenizer, broken, starts, cfg, fixed))
    out.update(calibration_figures(picks, graded))
    return out


def _mutants(code: str, limit: int) -> list[str]:
    """Up to ``limit`` AST mutants of ``code`` (a fixed seeded draw: the same for every evaluation)."""
    from matrix.mutation import mutants

    if limit <= 0:
        return []
    try:
        return [m.code for m in mutants(code, limit=limit, seed=0)]
    except (SyntaxError, ValueError, RecursionError):
        return []


def _repair_figures(engine, executor, tokenizer, broken, starts, cfg: EvalConfig,
                    fixed: list[tuple[Task, FixedStart]] | None = None) -> dict:
    """``fix_acc`` over the ``broken`` starts, RLEF's 1@K over ``starts`` and ``fix_fixed_starts``
    over the kept ``fixed`` starts, from one set of repair episodes played together (a program in
    both ``broken`` and ``starts`` is repaired once; a kept start that is this evaluation's own
    program, same task, sample and code, as at step 0, shares its episode). ``broken`` holds
    parsed programs only; a 1@K start without a program gets its feedback (the error) and Fixer
    turns like any other."""
    from coevo.repair import Episode, public_columns, public_feedback, run_episodes

    episodes: dict[tuple[str, int], Episode] = {}
    for t, i, code, row, res in broken + starts:
        key = (t.task_id, i)
        if key not in episodes and not row[public_columns(t, cfg.fix_public_tests)].all():
            episodes[key] = Episode(t, code, public_feedback(t, res, i, cfg.fix_public_tests),
                                    float(row.mean()), cfg.fix_turns, cfg.fix_public_tests, key=f"{t.task_id}#{i}")
    kept: list[Episode] = []  # one per fixed start
    extra: list[Episode] = []  # the fixed starts' own episodes, played after this evaluation's own
    for t, f in fixed or []:
        e = episodes.get((t.task_id, f.row))
        if e is None or e.code != f.code:
            e = Episode(t, f.code, f.feedback, f.before, cfg.fix_turns, cfg.fix_public_tests,
                        key=f"fixed/{t.task_id}#{f.row}")
            extra.append(e)
        kept.append(e)
    # this evaluation's episodes first: their samples (seeded by prompt and occurrence) stay as before
    run_episodes([*episodes.values(), *extra], engine, executor, tokenizer)
    out: dict = {}
    if broken:
        out["fix_acc"] = float(np.mean([episodes[(t.task_id, i)].solved for t, i, *_ in broken]))
    if kept:
        out["fix_fixed_starts"] = float(np.mean([e.solved for e in kept]))
    if starts:
        first, final = [], []
        for t, i, _code, row, _ in starts:
            correct = bool(row.all()) and len(row) > 0
            e = episodes.get((t.task_id, i))
            first.append(correct)
            final.append(e.solved if e is not None else correct)
        out["solve_1at1"] = float(np.mean(first))
        out[f"solve_1at{1 + cfg.fix_turns}"] = float(np.mean(final))
    return out


def calibration_figures(picks, graded, n_bins: int = 10) -> dict:
    """The selection scores' calibration (module doc) from ``(log-odds, right, task id)`` triples
    of the chosen programs (``picks``) and of the generated tests (``graded``)."""
    from matrix.calibration import calibration_report

    out: dict = {}
    curves: dict = {}
    for name, rows, key, thresholds in (("select", picks, "select", ()), ("tests", graded, "test_score", PRECISION_AT)):
        if not rows:
            continue
        rep = calibration_report([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                                 n_bins=n_bins, thresholds=thresholds)
        out[f"{key}_ece"] = rep["ece"]
        if "ece_cv" in rep:
            out[f"{key}_ece_cv"] = rep["ece_cv"]
        if name == "select":
            out["select_score"] = rep["score"]
        curves[name] = rep
    if curves:
        out["calibration"] = curves
    return out
