"""A step's samples turned into rewarded rollouts: pure functions over (task, parsed samples,
matrix) that return values (rollouts, metric values, curriculum observations), no state, no I/O.

:class:`coevo.loop.CoEvolution` samples, runs the matrices and calls these in order:
:func:`parse_samples` then :func:`score_task` per task (Coder and Tester, through
:func:`coevo.task_rewards.task_rewards`), :func:`fixer_rollouts` for the step's repair episodes,
:func:`solver_jobs` then :func:`proposer_rollouts` for the step's proposals. The settings are the
loop's (:class:`coevo.loop.LoopConfig`, passed as ``cfg``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from coevo.repair import public_columns
from coevo.task_rewards import task_rewards
from matrix import rewards as R
from matrix.tasks import Task, Test

if TYPE_CHECKING:
    from coevo.loop import LoopConfig


@dataclass
class Scored:
    """One role sample (a :class:`roles.generation.Sample`) with its GRPO group and reward."""

    sample: object
    group: str
    reward: float = float("nan")
    episode: str | None = None  # the turns of one repair episode share a key


# ---------------------------------------------------------------------- Coder and Tester
@dataclass(frozen=True)
class ParsedSamples:
    """One task's Coder and Tester samples, parsed: the rows and generated columns of its matrix."""

    coder: list  # the Coder samples
    tester: list  # the Tester samples
    codes: list[str]  # per Coder sample its program ("" when it held none: an empty row fails everything)
    suites: list[list[Test]]  # per Tester sample its kept tests
    rejected: list[int]  # per Tester sample its rejected candidates (unparseable, duplicate, missing, extra)

    @property
    def gen_tests(self) -> list[Test]:
        """Every kept generated test, in the matrix's column order."""
        return [t for suite in self.suites for t in suite]


def parse_samples(task: Task, coder: list, tester: list, tests_per_sample: int = 0) -> ParsedSamples:
    """Parse one task's Coder and Tester samples. ``tests_per_sample`` > 0: a Tester sample was
    asked for exactly that many tests; extra ones are rejected and missing ones count as rejected."""
    from roles.parsing import parse_tests, sample_program

    codes = [sample_program(s.text, task) for s in coder]
    parsed = [parse_tests(s.text, task, max_tests=tests_per_sample or None) for s in tester]
    return ParsedSamples(list(coder), list(tester), codes, [p.tests for p in parsed],
                         [p.rejected(tests_per_sample) for p in parsed])


@dataclass
class TaskScore:
    """What one task's matrix gives the step."""

    rollouts: list[Scored]  # the Coder samples', then the Tester samples'
    code_acc: float | None  # share of Coder samples judged correct (None: the task has no ground truth)
    test_accs: list[float]  # per Tester sample that wrote or tried a test: its accuracy against the reference
    observation: tuple[str, int, int] | None  # (task id, samples, solved) for the curriculum
    broken: list[int] = field(default_factory=list)  # Coder samples handed to the Fixer (fail a public test)


def score_task(task: Task, samples: ParsedSamples, passed: np.ndarray, cfg: LoopConfig) -> TaskScore:
    """The task's rollouts with their rewards (:func:`coevo.task_rewards.task_rewards`), its
    metric values, its curriculum observation and the failing programs that start Fixer episodes.

    ``passed``: the task's matrix, rows = the Coder samples' programs (+ the reference solution's
    row when the task has one), columns = [ground-truth tests | ``samples.gen_tests``]."""
    n, g = len(samples.codes), len(task.tests)
    parsed = [bool(c) for c in samples.codes]
    scores = task_rewards(passed, parsed, [len(s) for s in samples.suites], samples.rejected, g,
                          bool(task.solutions), label_free=cfg.label_free, coder_reward=cfg.coder_reward,
                          anchor_reference=cfg.anchor_reference, tester_accuracy_weight=cfg.tester_accuracy_weight,
                          tester_credit=cfg.tester_credit, tester_aggregate=cfg.tester_aggregate)
    out = [Scored(s, f"coder/{task.task_id}", float(r)) for s, r in zip(samples.coder, scores.coder)]
    out += [Scored(s, f"tester/{task.task_id}", r) for s, r in zip(samples.tester, scores.tester)]
    broken: list[int] = []
    # programs failing a public test start the Fixer's episodes; n_fixes episodes from one start
    # make one GRPO group
    if "fixer" in cfg.roles and cfg.n_fixes and g:
        gt = np.asarray(passed, dtype=bool)[:n, :g]
        cols = public_columns(task, cfg.fix_public_tests)
        broken = [i for i in range(n) if parsed[i] and not gt[i, cols].all()][: cfg.fix_codes]
    return TaskScore(out, float(scores.correct.mean()) if g else None,
                     [a for a in scores.test_acc if a is not None],
                     (task.task_id, n, int(scores.correct.sum())) if g else None, broken)


# ---------------------------------------------------------------------- Fixer
def fixer_rollouts(episodes: list, cfg: LoopConfig) -> tuple[list[Scored], dict[str, float]]:
    """The Fixer's rollouts and metrics: every turn of every episode (:class:`coevo.repair.Episode`)
    with the episode's reward (RLEF, ``fixer_reward="episode"``), or the single first attempt with
    its gain reward (``"gain"``)."""
    if not episodes:
        return [], {}
    out: list[Scored] = []
    if cfg.fixer_reward == "episode":
        rewards = R.repair_episode_rewards([e.solved for e in episodes], [e.invalid_turns for e in episodes],
                                           invalid_penalty=cfg.fix_invalid_penalty)
        for e, r in zip(episodes, rewards):
            out += [Scored(a.sample, e.group, float(r), episode=e.key) for a in e.attempts]
    else:
        for e in episodes:
            a = e.attempts[0]
            r = R.fixer_rewards([e.before], [a.pass_frac], [a.solved])[0]
            out.append(Scored(a.sample, e.group, float(r)))
    metrics = {"train/fix_acc": float(np.mean([e.solved for e in episodes])),
               "fixer/solved_first_turn": float(np.mean([e.attempts[0].solved for e in episodes])),
               "fixer/turns": float(np.mean([len(e.attempts) for e in episodes])),
               "fixer/invalid_turn_frac": float(np.mean([not a.valid for e in episodes for a in e.attempts])),
               "fixer/episodes": float(len(episodes))}
    return out, metrics


# ---------------------------------------------------------------------- Proposer
@dataclass
class ProposalScore:
    """What the step's proposals and their solver samples give the step."""

    rollouts: list[Scored]  # the solver samples (Coder, when trained), then the proposals
    metrics: dict[str, float]
    observations: list[tuple[str, int, int]]  # (proposed task id, solver samples, solved)
    new_tasks: list[Task]  # the valid proposals, for the curriculum's buffer


def solver_jobs(proposals: dict, solve_samples: list) -> list:
    """Matrix jobs: each valid proposal's solver samples against its tests. ``proposals`` is
    :meth:`coevo.loop.CoEvolution.validate_proposals`'s result; ``solve_samples`` the samples of its
    ``solve_requests``, in order."""
    from roles.parsing import sample_program

    jobs, pos = [], 0
    for i, req in proposals["solve_requests"]:
        task = proposals["tasks"][i]
        chunk = solve_samples[pos:pos + req.n]
        pos += req.n
        jobs.append((task, [sample_program(s.text, task) for s in chunk], list(task.tests)))
    return jobs


def solved(codes: list[str], result) -> np.ndarray:
    """Per program of a solver job: parsed and passing every one of the task's tests."""
    return np.asarray(result.passed, dtype=bool).all(axis=1) & np.array([bool(c) for c in codes], dtype=bool)


def proposer_rollouts(proposals: dict, jobs: list, solve_samples: list, results: list,
                      cfg: LoopConfig) -> ProposalScore:
    """Solver samples train the Coder; their solve rates give the Proposer's rewards (learnability,
    graded penalties, R-Zero's repetition penalty: :func:`matrix.rewards.proposer_batch_rewards`).
    ``jobs`` is :func:`solver_jobs`'s, ``results`` their matrices."""
    out: list[Scored] = []
    observations: list[tuple[str, int, int]] = []
    solve_rate: dict[int, float] = {}
    pos = 0
    for (i, req), (task, codes, _), res in zip(proposals["solve_requests"], jobs, results):
        chunk = solve_samples[pos:pos + req.n]
        pos += req.n
        ok = solved(codes, res)
        solve_rate[i] = float(ok.mean())
        if "coder" in cfg.roles:
            out += [Scored(s, f"coder/{task.task_id}", float(x)) for s, x in zip(chunk, ok.astype(float))]
        observations.append((task.task_id, len(codes), int(ok.sum())))
    samples = proposals["samples"]
    metrics: dict[str, float] = {}
    new_tasks: list[Task] = []
    if samples:
        rates = [solve_rate.get(i, float("nan")) for i in range(len(samples))]
        rewards = R.proposer_batch_rewards(rates, proposals["grades"], proposals["keys"],
                                           repetition_weight=cfg.repetition_penalty,
                                           valid_bonus=cfg.proposer_valid_bonus)
        # a proposal that writes a held-out task gets no reward (NaN: out of the group's statistics
        # and the loss), so that RL moves the shared weights neither towards nor away from the
        # held-out evaluation's programs (as a copy's -0.5 it still ranked above garbage)
        rewards = np.where(np.array(proposals["reasons"]) == "heldout", np.nan, rewards)
        out += [Scored(s, "proposer/batch", float(r)) for s, r in zip(samples, rewards)]
        new_tasks = [proposals["tasks"][i] for i in sorted(proposals["tasks"])]
        metrics = proposal_metrics(proposals["reasons"], [rates[i] for i in sorted(proposals["tasks"])])
    return ProposalScore(out, metrics, observations, new_tasks)


def proposal_metrics(reasons: list[str], solve_rates: list[float]) -> dict[str, float]:
    """One step's proposal figures: ``reject/<reason>`` (share of the step's proposals, every
    reason of :data:`coevo.selfplay.REJECT_REASONS` present, zeros included, so that the shares
    stack to ``1 - proposer/valid_frac``), the valid share and count, and the accepted tasks' mean
    solve rate and share with a solve rate strictly between 0 and 1."""
    from coevo.selfplay import REJECT_REASONS

    n = max(len(reasons), 1)
    out = {f"reject/{r}": reasons.count(r) / n for r in REJECT_REASONS}
    out["proposer/valid_frac"] = reasons.count("ok") / n
    out["proposer/proposals"] = float(len(reasons))
    out["proposer/accepted"] = float(reasons.count("ok"))
    rates = [r for r in solve_rates if np.isfinite(r)]
    if rates:
        out["proposer/solve_rate"] = float(np.mean(rates))
        out["proposer/learnable_frac"] = float(np.mean([0 < r < 1 for r in rates]))
    return out
