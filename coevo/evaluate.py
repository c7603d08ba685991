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
  (``select_method``) over the generated tests passes every ground-truth test;
* ``fix_acc``: Fixer success: of the sampled programs that fail (at most ``fix_per_task`` per
  task), the fraction repaired within ``fix_turns`` turns of feedback (RLEF-style, feedback from
  the failing ground-truth test).

With ``eval.api`` (a served model, :class:`roles.api_config.ApiConfig`) every sample comes from
that model over HTTP instead of the run's own model: e.g. a served reference on the same
held-out tasks, sandbox and metrics. Its answers are cached on disk, so evaluating the same
served model again at a later step costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from matrix.tasks import Task
from roles.api_config import ApiConfig


@dataclass
class EvalConfig:
    n_codes: int = 8
    n_tests: int = 4
    temperature: float = 0.8
    max_new_tokens: int = 160
    fix_turns: int = 2
    fix_per_task: int = 2
    max_tasks: int = 0  # 0 = all held-out tasks
    select_method: str = "coevo"
    tests_per_sample: int = 0  # > 0: ask for this many tests; missing or extra ones count as wrong
    mutants: int = 8  # reference mutants per task for test_kill (0 = off: no test_kill figure)
    seed: int = 1234
    # sample from a model served over an OpenAI-compatible API instead of the run's own model
    # (api.base_url set; see roles.api_config.ApiConfig); answers are cached on disk
    api: ApiConfig = field(default_factory=ApiConfig)

    def validate(self):
        if self.n_codes < 1 or self.n_tests < 0:
            raise ValueError("n_codes: need at least one code sample")
        if self.temperature < 0:
            raise ValueError("temperature: must be >= 0")
        if self.mutants < 0:
            raise ValueError("mutants: must be >= 0")


def cells(result, row: int, cols) -> list[SimpleNamespace]:
    """The executed cells of one program (row) over some tests (columns) of a matrix result."""
    return [SimpleNamespace(status=result.status[row][c], value=result.values[row][c],
                            error=result.errors[row][c]) for c in cols]


def evaluate(model, tokenizer, executor, tasks: list[Task], cfg: EvalConfig, *, progress: bool = False) -> dict:
    """The held-out figures (module doc) of ``model`` (with ``tokenizer``), or of the served model
    that ``cfg.api`` names (then ``model`` and ``tokenizer`` are not used: prompts are coevo's plain
    format or chat messages, as ``cfg.api.prompt`` says)."""
    from roles.generation import GenerationConfig, GenerationEngine

    gen_cfg = GenerationConfig(temperature=cfg.temperature, max_new_tokens=cfg.max_new_tokens, seed=cfg.seed)
    if not cfg.api.enabled:
        return _evaluate(GenerationEngine(model, tokenizer, gen_cfg), tokenizer, executor, tasks, cfg, progress)
    from roles.api_client import ApiGenerator

    with ApiGenerator(cfg.api, gen_cfg) as generator:
        return _evaluate(generator, None, executor, tasks, cfg, progress)


def _evaluate(engine, tokenizer, executor, tasks: list[Task], cfg: EvalConfig, progress: bool) -> dict:
    from matrix.metrics import mutation_score, unit_test_accuracy
    from matrix.selection import select
    from roles.feedback import summarize_feedback
    from roles.parsing import parse_code, parse_tests
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
        codes = [parse_code(s.text, t.entry_point).code or "" for s in by_task[t.task_id]["coder"]]
        want = cfg.tests_per_sample
        parsed = [parse_tests(s.text, t, max_tests=want or None) for s in by_task[t.task_id]["tester"]]
        suites = [(p.tests, p.rejected(want)) for p in parsed]
        gen_tests = [x for p in parsed for x in p.tests]
        ref = t.solutions[:1]
        muts = _mutants(ref[0], cfg.mutants) if ref and suites and t.tests else []
        jobs.append((t, codes + ref + muts, list(t.tests) + gen_tests))
        layout.append((codes, suites))
    results = executor.run_matrices(jobs, progress=progress)

    code_acc, test_acc, test_kill, bon_acc = [], [], [], []
    broken: list[tuple[Task, str, str]] = []  # (task, code, feedback)
    for t, (codes, suites), res in zip(tasks, layout, results):
        n, g = len(codes), len(t.tests)
        passed = np.asarray(res.passed, dtype=bool)
        ok = passed[:n, :g].all(axis=1) if g else np.zeros(n, dtype=bool)
        code_acc.append(float(ok.mean()) if n else 0.0)
        gen = passed[:n, g:]
        if t.solutions and suites:
            ref_row = passed[n, g:]
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
            index = select(gen, method=cfg.select_method).index if gen.shape[1] else 0
            bon_acc.append(float(ok[index]))
        for i in [i for i in range(n) if not ok[i] and codes[i]][: cfg.fix_per_task]:
            broken.append((t, codes[i], summarize_feedback(t.tests, cells(res, i, range(g)))))

    fix_acc = _fixer_success(engine, executor, tokenizer, broken, cfg) if broken and cfg.fix_turns else None
    out = {
        "code_acc": float(np.mean(code_acc)) if code_acc else 0.0,
        "test_acc": float(np.mean(test_acc)) if test_acc else 0.0,
        "bon_acc": float(np.mean(bon_acc)) if bon_acc else 0.0,
        "tasks": len(tasks),
    }
    if cfg.mutants:
        out["test_kill"] = float(np.mean(test_kill)) if test_kill else 0.0
    if fix_acc is not None:
        out["fix_acc"] = fix_acc
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


def _fixer_success(engine, executor, tokenizer, broken, cfg: EvalConfig) -> float:
    from roles.feedback import summarize_feedback
    from roles.parsing import parse_code
    from roles.requests import role_request

    histories: list[list[tuple[str, str]]] = [[] for _ in broken]
    current = [(code, fb) for _, code, fb in broken]
    fixed = [False] * len(broken)
    for _turn in range(cfg.fix_turns):
        todo = [i for i in range(len(broken)) if not fixed[i]]
        if not todo:
            break
        reqs = [role_request("fixer", broken[i][0], 1, tokenizer=tokenizer, code=current[i][0],
                             feedback=current[i][1], history=histories[i]) for i in todo]
        samples = engine.generate(reqs)
        jobs = []
        for i, s in zip(todo, samples):
            task = broken[i][0]
            jobs.append((task, [parse_code(s.text, task.entry_point).code or ""], list(task.tests)))
        for i, (_task, codes, tests), res in zip(todo, jobs, executor.run_matrices(jobs)):
            row = np.asarray(res.passed, dtype=bool)[0]
            if row.all():
                fixed[i] = True
            else:
                histories[i].append(current[i])
                current[i] = (codes[0], summarize_feedback(tests, cells(res, 0, range(len(tests)))))
    return float(np.mean(fixed))
