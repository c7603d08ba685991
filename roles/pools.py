"""Sample -> matrix -> select, for ``coevo solve`` and ``coevo gen-tests``.

For every task the model samples ``n_codes`` programs (Coder) and ``n_tests`` test suites (Tester)
in one generation call to any :class:`roles.generation.Generator` (in-process or served). Parsed
programs and the de-duplicated union of the parsed tests form the task's code x test matrix,
executed in the sandbox; where extra inputs can be built (calls shaped like the tests' calls for
function tasks, the tests' stdin for stdio tasks) the programs' outputs on them feed output
consensus, and the worked examples of the task's statement (:mod:`matrix.statement_examples`) run as trusted
evidence. Test-time selection (:func:`matrix.selection.select`) then gives the chosen program and,
for each test, the probability that it is correct.
Unparseable samples never reach the sandbox: a task whose Coder samples all fail to parse gets
``code = ""`` and all-zero test scores.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from matrix.tasks import Task, Test
from roles.generation import GenerationConfig, Generator
from roles.parsing import parse_tests, sample_program
from roles.requests import role_request


@dataclass
class PoolConfig:
    n_codes: int = 8
    n_tests: int = 8  # Tester samples per task (each may hold several tests)
    tests_per_sample: int | None = None  # asked of each Tester sample (None: not stated)
    method: str = "coevo"  # test-time selection method (matrix.selection.METHODS)
    consensus_inputs: int = 24  # extra inputs drawn for output consensus (0: off)
    examples: bool = True  # run the statement's worked examples as trusted evidence for selection
    seed: int = 0


@dataclass
class TaskPool:
    task: Task
    codes: list[str] = field(default_factory=list)  # parsed programs (unparseable ones dropped)
    code_samples: list[int] = field(default_factory=list)  # Coder sample index of each code
    n_code_samples: int = 0
    tests: list[Test] = field(default_factory=list)  # parsed tests, de-duplicated, in order
    n_test_samples: int = 0
    n_test_samples_ok: int = 0
    passed: np.ndarray | None = None  # codes x tests
    index: int = -1  # chosen code (into ``codes``), -1 when there is none
    code_scores: list[float] = field(default_factory=list)
    test_scores: list[float] = field(default_factory=list)
    test_logits: list[float] = field(default_factory=list)  # test_scores as log-odds (keeps order near 1)
    method: str = ""

    @property
    def code(self) -> str:
        return self.codes[self.index] if self.index >= 0 else ""

    def summary(self) -> dict:
        return {"task_id": self.task.task_id, "index": self.index, "method": self.method,
                "code": self.code, "codes": self.codes, "code_samples": self.code_samples,
                "n_code_samples": self.n_code_samples, "n_test_samples": self.n_test_samples,
                "n_test_samples_ok": self.n_test_samples_ok,
                "tests": [t.to_json() for t in self.tests],
                "code_scores": [round(float(x), 6) for x in self.code_scores],
                "test_scores": [round(float(x), 6) for x in self.test_scores]}


def _test_key(t: Test) -> tuple:
    return (t.kind, " ".join((t.test or "").split()), t.input, t.output, t.call, t.expected)


def sample_pools(engine: Generator, tokenizer, tasks: list[Task], cfg: PoolConfig,
                 gen: GenerationConfig | None = None, progress: bool = False) -> list[TaskPool]:
    """Sample and parse every task's codes and tests (one generation call).

    ``engine`` is any :class:`roles.generation.Generator`: the in-process engine with its model's
    ``tokenizer``, or a served model with ``tokenizer=None`` (plain prompts and chat messages)."""
    reqs = []
    for t in tasks:
        if cfg.n_codes:
            reqs.append(role_request("coder", t, cfg.n_codes, tokenizer=tokenizer))
        if cfg.n_tests:
            reqs.append(role_request("tester", t, cfg.n_tests, tokenizer=tokenizer,
                                     n_tests=cfg.tests_per_sample))
    samples = engine.generate(reqs, progress=progress, config=gen)
    pools = {t.task_id: TaskPool(t) for t in tasks}
    for s in samples:
        pool = pools[s.task_id]
        if s.role == "coder":
            code = sample_program(s.text, pool.task)
            if code:
                pool.codes.append(code)
                pool.code_samples.append(pool.n_code_samples)
            pool.n_code_samples += 1
        else:
            pool.n_test_samples += 1
            pt = parse_tests(s.text, pool.task, max_tests=cfg.tests_per_sample)
            if pt.ok:
                pool.n_test_samples_ok += 1
            seen = {_test_key(t) for t in pool.tests}
            for t in pt.tests:
                if _test_key(t) not in seen:
                    seen.add(_test_key(t))
                    pool.tests.append(t)
    return [pools[t.task_id] for t in tasks]


def _consensus(executor, pool: TaskPool, seed: int, n_inputs: int):
    """``codes x inputs`` output keys for output consensus, or None when no input can be built."""
    from matrix.inputs import consensus_keys

    try:
        got = consensus_keys(executor, pool.task, pool.codes, pool.tests, n_inputs=n_inputs, seed=seed)
    except Exception as exc:  # consensus is a refinement: never let it sink the selection
        print(f"warning: output consensus skipped for {pool.task.task_id}: {exc}", file=sys.stderr)
        return None
    return None if got is None else got[0]


def judge_pools(pools: list[TaskPool], executor, cfg: PoolConfig, progress: bool = False) -> None:
    """Run every pool's matrix and select (fills ``passed``, ``index`` and the scores)."""
    from matrix.selection import select
    from matrix.statement_examples import split_examples, task_examples

    live = [p for p in pools if p.codes]
    examples = [task_examples(p.task) if cfg.examples else [] for p in live]
    results = executor.run_matrices([(p.task, p.codes, p.tests + ex) for p, ex in zip(live, examples)],
                                    progress=progress) if live else []
    for p, res in zip(live, results):
        p.passed, passed_examples = split_examples(res.passed, len(p.codes), len(p.tests))
        consensus = None
        if cfg.consensus_inputs > 0:
            consensus = _consensus(executor, p, cfg.seed, cfg.consensus_inputs)
        sel = select(p.passed, method=cfg.method, consensus=consensus, examples=passed_examples)
        p.index = int(sel.index)
        p.code_scores = [float(x) for x in sel.code_scores]
        p.test_scores = [float(x) for x in sel.test_scores]
        p.test_logits = [float(x) for x in sel.test_logits]
        p.method = sel.method
    for p in pools:
        if not p.codes:
            p.test_scores = [0.0] * len(p.tests)
            p.test_logits = [-50.0] * len(p.tests)
            p.method = "none (no parseable code)"
