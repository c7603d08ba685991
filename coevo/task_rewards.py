"""The rewards of one task's Coder and Tester samples, read off its execution matrix: a pure
function over (layout of the parsed samples, matrix) returning values, no state, no I/O.

The matrix of a task (what :class:`coevo.loop.CoEvolution` builds) has one row per Coder sample
(an unparseable sample is an empty program: it fails everything), then, when the task has a
reference solution, one more row for it (used for metrics and, with ``anchor_reference``, as one
more known-correct program when it passes every ground-truth test, as a sampled program must);
its columns are the task's ground-truth tests, then every generated test of the Tester samples in
order. The formulas are :mod:`matrix.rewards`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from matrix import rewards as R


@dataclass(frozen=True)
class TaskRewards:
    """What one task's matrix says about its samples."""

    coder: np.ndarray  # per Coder sample (0 for an unparseable one; NaN: not judged, label-free)
    tester: list[float]  # per Tester sample (NaN where the task's tests cannot be judged)
    correct: np.ndarray  # per Coder sample: judged correct (all ground truth, or label-free score >= 0.5)
    test_acc: list[float | None]  # per Tester sample: unit-test accuracy against the reference (metrics)


def task_rewards(passed: np.ndarray, parsed: list[bool], suite_sizes: list[int], rejected: list[int],
                 n_ground_truth: int, has_reference_row: bool, *, label_free: bool, coder_reward: str,
                 anchor_reference: bool, tester_accuracy_weight: float, tester_credit: str,
                 tester_aggregate: str) -> TaskRewards:
    """Coder and Tester rewards of one task.

    ``passed``: the task's matrix (see the module docstring), ``parsed``: per Coder sample whether
    it held a program, ``suite_sizes``/``rejected``: per Tester sample its kept tests and its
    rejected candidates, ``n_ground_truth``: the task's ground-truth columns, ``has_reference_row``:
    the matrix has the reference solution's row after the samples'. Keyword arguments are the
    loop's settings of the same names (:class:`coevo.loop.LoopConfig`).
    """
    from matrix.metrics import unit_test_accuracy

    passed = np.asarray(passed, dtype=bool)
    n, g = len(parsed), n_ground_truth
    gt, gen = passed[:n, :g], passed[:n, g:]
    label_free = label_free or g == 0
    ok_rows = np.array(parsed, dtype=bool)
    ref_row = passed[n, g:] if (has_reference_row and passed.shape[0] > n) else None
    test_ok = None  # per generated test: passed by every known-correct program
    if label_free:
        code_s, test_s = R.bidirectional_scores(gen)
        coder_r = R.coder_rewards_labelfree(gen, test_s) if gen.shape[1] else np.full(n, np.nan)
        correct = code_s >= 0.5
        test_r = 2.0 * test_s - 1.0
    else:
        coder_r = R.coder_rewards(gt, coder_reward)
        correct = R.code_correct(gt)
        gen_a, correct_a = gen, correct
        # the reference anchors only when it is known-correct: it passes every ground-truth test
        # (a wrong dataset reference, or one that timed out, would mark right tests wrong)
        if anchor_reference and ref_row is not None and passed[n, :g].all():
            gen_a, correct_a = np.vstack([gen, ref_row]), np.append(correct, True)
        test_r = R.tester_rewards(gen_a, correct_a)
        if correct_a.any():
            test_ok = R.test_correct(gen_a, correct_a)
    coder_r = np.where(ok_rows, coder_r, 0.0 if not label_free else np.nan)
    judged = label_free or test_ok is not None  # Tester rewards only where the tests can be judged
    weight = 0.0 if label_free else tester_accuracy_weight
    tester: list[float] = []
    accs: list[float | None] = []
    start = 0
    for k, rej in zip(suite_sizes, rejected):
        chunk = test_r[start:start + k]
        ok = test_ok[start:start + k] if test_ok is not None else None
        tester.append(R.tester_suite_reward(chunk, ok, rej, accuracy_weight=weight, credit=tester_credit,
                                            aggregate=tester_aggregate) if judged else float("nan"))
        accs.append(unit_test_accuracy(ref_row[start:start + k], rej)
                    if ref_row is not None and k + rej else None)
        start += k
    return TaskRewards(coder=coder_r, tester=tester, correct=correct, test_acc=accs)
