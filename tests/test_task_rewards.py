"""coevo.task_rewards: one task's Coder and Tester rewards from its matrix, as a pure function
(hand-worked examples and properties; the loop's wiring is in test_loop_rewards.py)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coevo.task_rewards import task_rewards

DEFAULTS = dict(label_free=False, coder_reward="binary", anchor_reference=True, tester_accuracy_weight=0.5,
                tester_credit="correct", tester_aggregate="sum")  # the loop's defaults


def worked_matrix():
    # 3 programs x (2 ground-truth | 2 generated tests) + the reference's row. Program 0 is right,
    # 1 and 2 are wrong; Tester sample A wrote the first generated test (rejects both wrong
    # programs), B the second (the right program fails it), C nothing usable.
    gt = np.array([[1, 1], [1, 0], [0, 0]], bool)
    gen = np.array([[1, 0], [0, 1], [0, 1]], bool)
    return np.vstack([np.hstack([gt, gen]), [[1, 1, 1, 0]]])


def test_hand_worked_labelled_task():
    r = task_rewards(worked_matrix(), [True, True, True], [1, 1, 0], [0, 2, 0], 2, True, **DEFAULTS)
    assert r.coder.tolist() == [1.0, 0.0, 0.0]
    assert r.correct.tolist() == [True, False, False]
    # precision: A's test lets 0 of 2 wrong programs through (+1), B's lets both through and the
    # right one fails it (-1); +-0.5 for a right/wrong test; B's 2 rejected candidates and C's
    # empty suite each score the minimum -1.5
    assert r.tester == [1.5, -1.0 - 0.5 - 2 * 1.5, -1.5]
    assert r.test_acc == [1.0, 0.0, None]  # the reference passes A's test, fails B's (and its 2 rejects)


def test_cure_settings_and_an_unparsed_program():
    cfg = {**DEFAULTS, "tester_accuracy_weight": 0.0, "tester_aggregate": "mean", "coder_reward": "fraction"}
    r = task_rewards(worked_matrix(), [True, False, True], [1, 1, 0], [0, 0, 0], 2, True, **cfg)
    assert r.coder.tolist() == [1.0, 0.0, 0.0]  # program 1 passed half the tests but did not parse: 0
    assert r.tester == [1.0, -1.0, -1.0]


def test_no_known_correct_program_means_tester_samples_are_not_judged():
    passed = np.array([[0, 1, 1], [0, 0, 1]], bool)  # 2 wrong programs, 1 ground-truth test, no reference row
    r = task_rewards(passed, [True, True], [1, 1], [0, 0], 1, False, **DEFAULTS)
    assert r.coder.tolist() == [0.0, 0.0]
    assert all(math.isnan(x) for x in r.tester)
    assert r.test_acc == [None, None]
    # the reference's row makes the tests judgeable again (anchor_reference)
    passed = np.vstack([passed, [[1, 1, 0]]])
    r = task_rewards(passed, [True, True], [1, 1], [0, 0], 1, True, **DEFAULTS)
    # the first test is right and rejects one of the two wrong programs: 0.5 + 0.5; the reference
    # fails the second: -1 - 0.5
    assert r.tester == [1.0, -1.5]


def test_label_free_uses_the_generated_tests_alone():
    passed = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0]], bool)
    r = task_rewards(passed, [True, True, False], [2, 1], [0, 0], 0, False, **DEFAULTS)
    assert r.coder[0] > r.coder[1] and math.isnan(r.coder[2])  # no label: an unparsed program is not judged
    assert r.correct[0] and not r.correct[2]
    assert r.test_acc == [None, None]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(0, 3), st.lists(st.integers(0, 3), min_size=1, max_size=4),
       st.data())
def test_rewards_follow_their_samples(n, g, sizes, data):
    """Reordering the Coder samples reorders their rewards; one reward per sample; an unparsed
    program earns 0 under labels; rewards stay within their documented ranges."""
    m = sum(sizes)
    passed = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=g + m, max_size=g + m),
                                         min_size=n + 1, max_size=n + 1)), bool).reshape(n + 1, g + m)
    parsed = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rejected = data.draw(st.lists(st.integers(0, 2), min_size=len(sizes), max_size=len(sizes)))
    perm = data.draw(st.permutations(range(n)))
    r = task_rewards(passed, parsed, sizes, rejected, g, True, **DEFAULTS)
    moved = np.vstack([passed[list(perm)], passed[n:]])
    r2 = task_rewards(moved, [parsed[i] for i in perm], sizes, rejected, g, True, **DEFAULTS)
    # label-free scores are iterated float sums: equal up to rounding, not bit for bit
    np.testing.assert_allclose(r2.coder, r.coder[list(perm)], rtol=1e-12, atol=0, equal_nan=True)
    assert r2.tester == pytest.approx(r.tester, nan_ok=True)
    assert len(r.coder) == n and len(r.tester) == len(sizes) == len(r.test_acc)
    if g:
        assert all(r.coder[i] == 0.0 for i in range(n) if not parsed[i])
        assert set(r.coder.tolist()) <= {0.0, 1.0}
    for t, k, rej in zip(r.tester, sizes, rejected):
        assert math.isnan(t) or -1.5 * max(1, k + rej) <= t <= 1.5 * max(1, k)


def test_a_reference_that_fails_the_ground_truth_is_no_anchor():
    """A program is correct when it passes every ground-truth test (CURE); a reference solution
    that fails one (a wrong dataset reference, or one that timed out) is not known-correct, so it
    cannot judge the generated tests. Matrix: 2 wrong programs, 1 ground-truth test, 2 generated
    tests; the reference fails the ground-truth test and passes the first generated test."""
    passed = np.array([[0, 1, 1], [0, 0, 1], [0, 1, 0]], bool)
    r = task_rewards(passed, [True, True], [1, 1], [0, 0], 1, True, **DEFAULTS)
    assert r.coder.tolist() == [0.0, 0.0]
    assert all(math.isnan(x) for x in r.tester)  # no known-correct program: not judged
    # a correct sampled program (row 0) judges the tests alone; the failing reference must not mark
    # the tests it fails as wrong. Test A is passed by program 0 and rejects wrong program 1: precision
    # 1/1, + 0.5 for a right test; test B is passed by both: precision 0/1, + 0.5. (Anchored, the
    # reference made both "wrong": A -0.5, B -1.5.)
    passed = np.array([[1, 1, 1], [0, 0, 1], [0, 0, 0]], bool)
    r = task_rewards(passed, [True, True], [1, 1], [0, 0], 1, True, **DEFAULTS)
    assert r.coder.tolist() == [1.0, 0.0]
    assert r.tester == [1.5, 0.5]
