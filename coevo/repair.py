"""Multi-turn repair episodes (RLEF): attempt -> execution feedback on the public tests -> next
attempt, shared by the training loop (:mod:`coevo.loop`) and the held-out evaluation
(:mod:`coevo.evaluate`), so that both run exactly the same episodes.

An :class:`Episode` starts from a failing program (a Coder sample) and its feedback on the task's
*public* tests (the first ``public`` ground-truth tests; 0 = all of them). Each turn the Fixer sees
the task, every earlier program with its feedback (oldest first, the fixer format of
:mod:`roles.prompts`) and writes a new program, which runs against *every* ground-truth test. The
episode ends when an attempt passes the public tests (the program would be submitted) or after
``max_turns`` attempts. Its outcome (``solved``) is whether the last attempt passes every
ground-truth test, public and hidden. A turn is *invalid* when its completion holds no program
that parses (RLEF penalises such turns).

One turn of many episodes is three calls, so that a caller can batch other work with it::

    reqs = turn_requests(active, tokenizer)                 # one request (n=1) per active episode
    samples = engine.generate(reqs)                         # ... possibly with other requests
    results = executor.run_matrices(attempt_jobs(active, samples))
    observe_attempts(active, samples, results)

:func:`run_episodes` does the whole loop for callers with nothing to batch.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from matrix.tasks import Task


def cells(result, row: int, cols) -> list[SimpleNamespace]:
    """The executed cells of one program (row) over some tests (columns) of a matrix result."""
    return [SimpleNamespace(status=result.status[row][c], value=result.values[row][c],
                            error=result.errors[row][c]) for c in cols]


def public_columns(task: Task, public: int) -> list[int]:
    """Indices of the task's public ground-truth tests: the first ``public`` (0 = all)."""
    g = len(task.tests)
    return list(range(min(public, g) if public > 0 else g))


def public_feedback(task: Task, result, row: int, public: int) -> str:
    """Execution feedback (:func:`roles.feedback.summarize_feedback`) of matrix row ``row`` on the
    task's public tests (the matrix's first columns are the ground-truth tests)."""
    from roles.feedback import summarize_feedback

    cols = public_columns(task, public)
    return summarize_feedback([task.tests[c] for c in cols], cells(result, row, cols))


def valid_program(code: str) -> bool:
    """A non-empty program that parses as Python."""
    if not code or not code.strip():
        return False
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


@dataclass
class Attempt:
    """One Fixer turn: the sample, the program parsed from it and how it ran."""
    sample: object  # roles.generation.Sample
    code: str  # "" when no program was found
    valid: bool  # the completion held a program that parses
    public_pass: bool  # passes every public test (the episode stops here)
    solved: bool  # passes every ground-truth test
    pass_frac: float  # share of all ground-truth tests passed (0 without a valid program)
    feedback: str  # on the public tests


@dataclass
class Episode:
    task: Task
    code: str  # the failing program the episode starts from
    feedback: str  # its feedback on the public tests
    before: float  # its share of ground-truth tests passed
    max_turns: int
    public: int = 0  # public ground-truth tests: the first `public` (0 = all)
    group: str = ""  # GRPO group: the episodes from the same start
    key: str = ""  # this episode's key within the group
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return len(self.attempts) >= self.max_turns or bool(self.attempts and self.attempts[-1].public_pass)

    @property
    def solved(self) -> bool:
        return bool(self.attempts and self.attempts[-1].solved)

    @property
    def invalid_turns(self) -> int:
        return sum(not a.valid for a in self.attempts)

    def turns(self) -> list[tuple[str, str]]:
        """Every program shown so far with its feedback, oldest first: the start, then attempts."""
        return [(self.code, self.feedback)] + [(a.code, a.feedback) for a in self.attempts]


def start_episodes(task: Task, code: str, feedback: str, before: float, n: int, *, max_turns: int,
                   public: int = 0, group: str = "") -> list[Episode]:
    """``n`` episodes from the same start (one GRPO group)."""
    return [Episode(task, code, feedback, float(before), max_turns, public, group, f"{group}#{j}")
            for j in range(n)]


def turn_requests(episodes: Sequence[Episode], tokenizer=None) -> list:
    """One generation request (``n=1``) per episode for its next turn: the task, the latest
    program and its feedback, the earlier ones as history."""
    from roles.requests import role_request

    reqs = []
    for e in episodes:
        shown = e.turns()
        (code, feedback), history = shown[-1], shown[:-1]
        reqs.append(role_request("fixer", e.task, 1, tokenizer=tokenizer, code=code, feedback=feedback,
                                 history=history, meta={"group": e.group, "episode": e.key}))
    return reqs


def attempt_jobs(episodes: Sequence[Episode], samples: Sequence) -> list[tuple[Task, list[str], list]]:
    """Matrix jobs: each episode's new program against all of its task's ground-truth tests."""
    from roles.parsing import sample_program

    return [(e.task, [sample_program(s.text, e.task)], list(e.task.tests)) for e, s in zip(episodes, samples)]


def observe_attempts(episodes: Sequence[Episode], samples: Sequence, results: Sequence) -> None:
    """Record each episode's attempt (its sample and its row of the matrix)."""
    from roles.parsing import parse_code

    for e, s, res in zip(episodes, samples, results):
        code = parse_code(s.text, e.task.entry_point).code or ""
        valid = valid_program(code)
        row = np.asarray(res.passed, dtype=bool).reshape(1, -1)[0] & valid
        cols = public_columns(e.task, e.public)
        e.attempts.append(Attempt(sample=s, code=code, valid=valid, public_pass=bool(row[cols].all()),
                                  solved=bool(row.all()) and len(row) > 0,
                                  pass_frac=float(row.mean()) if len(row) else 0.0,
                                  feedback=public_feedback(e.task, res, 0, e.public)))


def run_episodes(episodes: Sequence[Episode], engine, executor, tokenizer=None, config=None) -> None:
    """Play every episode to its end, one batched generation and one matrix call per turn."""
    while True:
        active = [e for e in episodes if not e.done]
        if not active:
            return
        samples = engine.generate(turn_requests(active, tokenizer), config=config)
        observe_attempts(active, samples, executor.run_matrices(attempt_jobs(active, samples)))
