"""Rewards over hand-worked execution matrices, plus hypothesis properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from matrix.rewards import (
    PROPOSAL_GRADES,
    bidirectional_scores,
    code_correct,
    coder_rewards,
    coder_rewards_labelfree,
    fixer_rewards,
    proposer_batch_rewards,
    proposer_rewards,
    test_correct,
    tester_rewards,
    tester_rewards_labelfree,
)

FAST = settings(max_examples=60, deadline=None, database=None)


def matrices(min_codes=1, max_codes=7, min_tests=0, max_tests=7):
    shapes = st.tuples(st.integers(min_codes, max_codes), st.integers(min_tests, max_tests))
    return shapes.flatmap(lambda s: arrays(bool, s))


# ----------------------------------------------------------------------------- CURE's figure

# Codes 0-2 correct (they pass both ground-truth tests), codes 3-5 wrong.
GT = np.array([[1, 1], [1, 1], [1, 1], [0, 1], [1, 0], [0, 0]], dtype=bool)
# Six generated tests, columns:
#   u0 correct, rejects all 3 wrong codes       -> +3
#   u1 correct, rejects 2 wrong codes           -> +2
#   u2 correct, rejects 1 wrong code            -> +1
#   u3 correct, rejects no wrong code           ->  0
#   u4 incorrect (fails code 1), passes no wrong ->  0
#   u5 incorrect (fails code 0), passes 1 wrong -> -1
GEN = np.array([
    [1, 1, 1, 1, 1, 0],
    [1, 1, 1, 1, 0, 1],
    [1, 1, 1, 1, 1, 1],
    [0, 1, 1, 1, 0, 1],
    [0, 0, 1, 1, 0, 0],
    [0, 0, 0, 1, 0, 0],
], dtype=bool)


def test_cure_figure_example_raw_counts():
    ok = code_correct(GT)
    assert ok.tolist() == [True, True, True, False, False, False]
    assert test_correct(GEN, ok).tolist() == [True, True, True, True, False, False]
    raw = tester_rewards(GEN, ok, normalize=False)
    assert raw.tolist() == [3, 2, 1, 0, 0, -1]


def test_cure_figure_example_normalised_by_wrong_codes():
    r = tester_rewards(GEN, code_correct(GT))
    np.testing.assert_allclose(r, [1, 2 / 3, 1 / 3, 0, 0, -1 / 3])


def test_tester_no_correct_code_gives_no_samples():
    p = np.array([[1, 0], [0, 1]], dtype=bool)
    r = tester_rewards(p, [False, False])
    assert r.shape == (2,) and np.isnan(r).all()
    assert test_correct(p, [False, False]).tolist() == [False, False]


def test_tester_all_codes_correct():
    p = np.array([[1, 0, 1], [1, 1, 1]], dtype=bool)
    assert tester_rewards(p, [True, True]).tolist() == [0.0, -1.0, 0.0]
    assert tester_rewards(p, [True, True], normalize=False).tolist() == [0.0, -1.0, 0.0]
    assert tester_rewards(p, [True, True], all_correct="zero").tolist() == [0.0, 0.0, 0.0]


def _cure_released_case_reward(gt, gen):
    """CURE's released reward for unit tests (Gen-Verse/CURE optimization/reward.py, post_stage
    off), written out independently: sign +1 for a test every correct code passes, -1 otherwise;
    with wrong codes present, scaled by the share of wrong codes a correct test rejects, or the
    share of wrong codes a wrong test lets through. None when no code is correct."""
    ok = gt.all(axis=1)
    if not ok.any():
        return None
    right = gen[ok].all(axis=0)
    sign = np.where(right, 1.0, -1.0)
    wrong = gen[~ok]
    if len(wrong) == 0:
        return sign  # no wrong code: the sign alone
    return sign * np.where(right, (~wrong).mean(axis=0), wrong.mean(axis=0))


def _zscore(x):  # CURE's normalize_reward: population std, a zero-variance group is dropped
    return None if np.std(x) == 0 else (x - np.mean(x)) / np.std(x)


def test_tester_rewards_match_cures_released_code_on_its_figure():
    np.testing.assert_allclose(tester_rewards(GEN, code_correct(GT)), _cure_released_case_reward(GT, GEN))
    # every code correct: CURE's code gives the sign (+1, -1, +1); "penalize" gives (0, -1, 0) =
    # (sign - 1) / 2, an affine image, so the z-scores (the advantages) are the same
    gt = np.ones((2, 1), bool)
    p = np.array([[1, 0, 1], [1, 1, 1]], dtype=bool)
    assert _cure_released_case_reward(gt, p).tolist() == [1.0, -1.0, 1.0]
    np.testing.assert_allclose(_zscore(tester_rewards(p, [True, True])), _zscore(np.array([1.0, -1.0, 1.0])))


@FAST
@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 6), st.data())
def test_tester_rewards_z_score_like_cures_released_code(n_codes, n_gt, n_tests, data):
    """For any matrix with a correct code: equal to CURE's released reward when some code is wrong,
    and the same z-scores (or both zero-variance) when every code is correct."""
    gt = data.draw(arrays(bool, (n_codes, n_gt)))
    gen = data.draw(arrays(bool, (n_codes, n_tests)))
    cure = _cure_released_case_reward(gt, gen)
    ours = tester_rewards(gen, code_correct(gt))
    if cure is None:
        assert np.isnan(ours).all()
        return
    if not gt.all(axis=1).all():
        np.testing.assert_allclose(ours, cure, atol=1e-12)
    zc, zo = _zscore(cure), _zscore(ours)
    assert (zc is None) == (zo is None)
    if zc is not None:
        np.testing.assert_allclose(zo, zc, atol=1e-9)


def test_tester_shape_mismatch_and_bad_policy():
    with pytest.raises(ValueError):
        tester_rewards(np.ones((2, 2), bool), [True])
    with pytest.raises(ValueError):
        tester_rewards(np.ones((2, 2), bool), [True, False], all_correct="maybe")


# ----------------------------------------------------------------------------- coder


def test_coder_rewards_modes():
    assert coder_rewards(GT).tolist() == [1, 1, 1, 0, 0, 0]
    np.testing.assert_allclose(coder_rewards(GT, "fraction"), [1, 1, 1, 0.5, 0.5, 0])
    with pytest.raises(ValueError):
        coder_rewards(GT, "partial")


def test_coder_without_ground_truth_is_nan():
    r = coder_rewards(np.zeros((3, 0), dtype=bool), "fraction")
    assert r.shape == (3,) and np.isnan(r).all()
    assert code_correct(np.zeros((3, 0), dtype=bool)).tolist() == [False] * 3


def test_coder_labelfree_weights():
    p = np.array([[1, 1, 0], [0, 0, 1]], dtype=bool)
    np.testing.assert_allclose(coder_rewards_labelfree(p, [1.0, 1.0, 0.0]), [1.0, 0.0])
    np.testing.assert_allclose(coder_rewards_labelfree(p, [0.5, 0.5, 1.0]), [0.5, 0.5])
    assert coder_rewards_labelfree(p, [0.9, 0.8, 0.1], mode="binary").tolist() == [1.0, 0.0]
    assert np.isnan(coder_rewards_labelfree(p, [0, 0, 0])).all()
    assert np.isnan(coder_rewards_labelfree(p, [0.1, 0.1, 0.1], mode="binary")).all()
    with pytest.raises(ValueError):
        coder_rewards_labelfree(p, [1.0, -1.0, 0.0])
    with pytest.raises(ValueError):
        coder_rewards_labelfree(p, [1.0])


def test_coder_labelfree_default_weights_prefer_the_majority():
    # three agreeing codes pass tests 0-2; one outlier passes only test 3
    p = np.array([[1, 1, 1, 0]] * 3 + [[0, 0, 0, 1]], dtype=bool)
    r = coder_rewards_labelfree(p)
    assert r[:3].min() > 0.9 and r[3] < 0.1


# ----------------------------------------------------------------------------- bidirectional


def test_bidirectional_hand_worked():
    p = np.array([[1, 1, 1, 0]] * 3 + [[0, 0, 0, 1]], dtype=bool)
    c, t = bidirectional_scores(p)
    assert c[:3].min() > c[3]
    assert t[:3].min() > 0.7 > 0.3 > t[3]
    tl = tester_rewards_labelfree(p)
    assert tl[:3].min() > 0 > tl[3]


def test_bidirectional_empty():
    c, t = bidirectional_scores(np.zeros((2, 0), dtype=bool))
    assert c.shape == (2,) and t.shape == (0,)
    c, t = bidirectional_scores(np.zeros((3, 2), dtype=bool))
    assert (c < 0.5).all() and (t < 0.5).all()


@FAST
@given(matrices())
def test_bidirectional_scores_in_unit_interval_and_finite(p):
    c, t = bidirectional_scores(p)
    assert c.shape == (p.shape[0],) and t.shape == (p.shape[1],)
    for x in (c, t):
        assert np.isfinite(x).all() and (x >= 0).all() and (x <= 1).all()


@FAST
@given(matrices(min_codes=2, min_tests=1))
def test_bidirectional_monotone_in_passes(p):
    """A code passing a superset of another's tests scores at least as high; same for tests."""
    c, t = bidirectional_scores(p)
    for a in range(p.shape[0]):
        for b in range(p.shape[0]):
            if (p[a] >= p[b]).all():
                assert c[a] >= c[b] - 1e-9
    for a in range(p.shape[1]):
        for b in range(p.shape[1]):
            if (p[:, a] >= p[:, b]).all():
                assert t[a] >= t[b] - 1e-9


@FAST
@given(matrices(min_codes=1, min_tests=1), st.randoms(use_true_random=False))
def test_bidirectional_permutation_equivariant(p, rnd):
    rows = list(range(p.shape[0]))
    cols = list(range(p.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    c, t = bidirectional_scores(p)
    c2, t2 = bidirectional_scores(p[rows][:, cols])
    np.testing.assert_allclose(c2, c[rows], atol=1e-7)
    np.testing.assert_allclose(t2, t[cols], atol=1e-7)


# ----------------------------------------------------------------------------- tester properties


@FAST
@given(matrices(min_tests=1), st.data())
def test_tester_reward_properties(p, data):
    n, m = p.shape
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    r = tester_rewards(p, ok)
    raw = tester_rewards(p, ok, normalize=False)
    if not ok.any():
        assert np.isnan(r).all()
        return
    assert np.isfinite(r).all() and (r >= -1).all() and (r <= 1).all()
    good = test_correct(p, ok)
    n_wrong = int((~ok).sum())
    if n_wrong:
        # correct tests never score below incorrect ones; raw = normalised x n_wrong
        if good.any() and (~good).any():
            assert r[good].min() >= r[~good].max()
        np.testing.assert_allclose(raw, r * n_wrong)
        # a correct test's reward is the share of wrong codes it rejects
        np.testing.assert_allclose(r[good], 1 - p[~ok][:, good].mean(axis=0))
        np.testing.assert_allclose(r[~good], -p[~ok][:, ~good].mean(axis=0))
    else:
        assert set(np.unique(r)) <= {0.0, -1.0}


# ----------------------------------------------------------------------------- fixer and proposer


def test_fixer_rewards():
    r = fixer_rewards([0.5, 0.0, 0.5, 1.0], [1.0, 0.5, 0.25, 1.0])
    np.testing.assert_allclose(r, [1.5, 0.5, -0.25, 1.0])
    r = fixer_rewards([0.5], [0.9], [True])  # caller says it passes every (other) test
    np.testing.assert_allclose(r, [1.4])
    assert np.isnan(fixer_rewards([math.nan], [1.0])).all()
    np.testing.assert_allclose(fixer_rewards(0.0, 1.0, full_pass_bonus=0.0), [1.0])
    with pytest.raises(ValueError):
        fixer_rewards([1.5], [0.0])


@FAST
@given(st.floats(0, 1), st.floats(0, 1))
def test_fixer_reward_range_and_order(before, after):
    r = fixer_rewards(before, after)[0]
    assert -1 <= r <= 2
    assert r >= fixer_rewards(before, min(after, 0.99))[0] - 1e-12  # more repaired, more reward


def test_proposer_rewards_absolute_zero():
    assert proposer_rewards(0.0) == 0.0
    assert proposer_rewards(1.0) == 0.0
    assert proposer_rewards(0.25) == 0.75
    assert proposer_rewards(0.5, valid=False) == -0.5
    assert proposer_rewards(0.5, valid=False, wellformed=False) == -1.0
    assert proposer_rewards(0.5, valid=True, wellformed=False) == -1.0
    assert math.isnan(proposer_rewards(math.nan))
    out = proposer_rewards([0.0, 0.125, 1.0, 0.5], valid=[True, True, True, False])
    np.testing.assert_allclose(out, [0.0, 0.875, 0.0, -0.5])
    with pytest.raises(ValueError):
        proposer_rewards(1.5)


def test_proposer_graded_penalties():
    # malformed < broken < degenerate (runs, teaches nothing new) < valid but unlearnable (0)
    assert proposer_rewards(0.5, valid=False, runs=True) == -0.25
    assert proposer_rewards(0.5, valid=False, wellformed=False, runs=True) == -1.0
    assert proposer_rewards(0.5, valid=True, runs=True) == 0.5  # runs only matters for invalid ones


def test_proposer_batch_rewards_hand_worked():
    # 6 proposals: a learnable task proposed twice, a unique learnable one, an always-solved one,
    # a held-out composition (degenerate), a broken one, garbage
    grades = ["valid", "valid", "valid", "valid", "degenerate", "broken"]
    rates = [0.25, 0.25, 0.5, 1.0, np.nan, np.nan]
    keys = ["a", "a", "b", "c", "d", None]
    r = proposer_batch_rewards(rates, grades, keys, repetition_weight=0.5)
    # 0.75 - 0.5 * 1/5 = 0.65 for each copy of "a"; "b": 0.5; "c": 0.0; then -0.25, -0.5
    np.testing.assert_allclose(r, [0.65, 0.65, 0.5, 0.0, -0.25, -0.5])
    np.testing.assert_allclose(proposer_batch_rewards(rates, grades, keys), [0.75, 0.75, 0.5, 0.0, -0.25, -0.5])
    # a batch that repeats one task four times: the penalty floors at 0
    np.testing.assert_allclose(proposer_batch_rewards([0.75] * 4, ["valid"] * 4, ["k"] * 4, repetition_weight=1.0),
                               [0.0] * 4)
    # the cluster counts every proposal with the key (a rejected repeat of a valid task too), but
    # only the valid ones pay: 0.75 - 0.5 * 2/3 for the valid one, the rejected ones keep their grade
    np.testing.assert_allclose(proposer_batch_rewards([0.25, 0, 0, 0.5], ["valid", "degenerate", "malformed", "valid"],
                                                      ["k", "k", "k", None], 0.5), [0.75 - 1 / 3, -0.25, -1.0, 0.5])
    with pytest.raises(ValueError):
        proposer_batch_rewards([0.5], ["great"])
    with pytest.raises(ValueError):
        proposer_batch_rewards([0.5], ["valid"], repetition_weight=-1)


def test_proposer_copy_grade_and_valid_bonus_hand_worked():
    # a batch of 6: learnable (r = 0.25), always solved (r = 1), never solved (r = 0), a copy of a
    # known task, a held-out composition (degenerate), garbage; bonus 0.25 for every valid task
    grades = ["valid", "valid", "valid", "copy", "degenerate", "malformed"]
    rates = [0.25, 1.0, 0.0, np.nan, np.nan, np.nan]
    r = proposer_batch_rewards(rates, grades, valid_bonus=0.25)
    np.testing.assert_allclose(r, [1.0, 0.25, 0.25, -0.5, -0.25, -1.0])
    # a copy costs as much as a broken task: copying is never the easy step up from garbage
    assert proposer_batch_rewards([np.nan], ["copy"])[0] == proposer_batch_rewards([np.nan], ["broken"])[0] == -0.5
    # the repetition penalty (2 copies of one valid task among 3) comes off the bonus too, floored at 0
    np.testing.assert_allclose(proposer_batch_rewards([0.5, 0.5, 0.5], ["valid"] * 3, ["k", "k", "j"], 1.0,
                                                      valid_bonus=0.25), [0.25, 0.25, 0.75])
    assert proposer_rewards(0.5, valid_bonus=0.25) == 0.75
    assert proposer_rewards(0.5, valid=False, valid_bonus=0.25) == -0.5  # the bonus is for valid tasks only
    assert math.isnan(proposer_rewards(math.nan, valid_bonus=0.25))
    with pytest.raises(ValueError):
        proposer_rewards(0.5, valid_bonus=-0.1)


@FAST
@given(st.lists(st.tuples(st.sampled_from(PROPOSAL_GRADES), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
                          st.sampled_from("abc")), min_size=1, max_size=8),
       st.floats(0, 2), st.sampled_from([0.0, 0.1, 0.25, 0.5]))
def test_proposer_batch_rewards_properties(items, weight, bonus):
    grades, rates, keys = map(list, zip(*items))
    r = proposer_batch_rewards(rates, grades, keys, repetition_weight=weight, valid_bonus=bonus)
    free = proposer_batch_rewards(rates, grades, keys, valid_bonus=bonus)
    for g, x, y, rate in zip(grades, r, free, rates):
        if g == "valid":
            assert 0.0 <= x <= y <= 1.0 + bonus  # the penalty only lowers a valid reward, never below 0
            assert (y > bonus) == (0 < rate < 1)  # above the bonus only for a solve rate strictly inside (0, 1)
            assert y >= bonus  # any valid task earns at least the bonus before the repetition penalty
        else:
            assert x == y < 0  # every rejection earns less than any valid proposal
            # the order of the grades: malformed < broken = copy < degenerate
            assert x == {"malformed": -1.0, "broken": -0.5, "copy": -0.5, "degenerate": -0.25}[g]


@FAST
@given(st.floats(0, 1))
def test_proposer_learnability_range(r):
    v = proposer_rewards(r)
    assert 0.0 <= v <= 1.0
    assert (v > 0) == (0 < r < 1)


def test_tester_suite_reward_hand_worked():
    from matrix.rewards import tester_suite_reward

    # two tests: a correct one rejecting 2/3 wrong codes, a wrong one letting none through
    r, ok = [2 / 3, 0.0], [True, False]
    assert tester_suite_reward(r, ok, aggregate="mean") == pytest.approx(1 / 3)  # plain CURE mean
    assert tester_suite_reward(r, ok, accuracy_weight=0.5) == pytest.approx(2 / 3 + 0.5 - 0.5)
    # one unparseable candidate costs the worst score a test can get
    assert tester_suite_reward(r, ok, 1, accuracy_weight=0.5) == pytest.approx(2 / 3 - 1.5)
    assert tester_suite_reward([], [], 0, accuracy_weight=0.5) == -1.5
    assert np.isnan(tester_suite_reward([np.nan, 1.0], [False, True], accuracy_weight=0.5))
    # a trivially right test (every program passes it) earns the bonus only with credit="correct"
    assert tester_suite_reward([0.0], [True], accuracy_weight=0.5) == 0.5
    assert tester_suite_reward([0.0], [True], accuracy_weight=0.5, credit="discriminating") == 0.0
    with pytest.raises(ValueError):
        tester_suite_reward(r, ok, aggregate="max")
    with pytest.raises(ValueError):
        tester_suite_reward(r, ok, credit="some")


@given(st.lists(st.tuples(st.floats(-1, 1), st.booleans()), min_size=1, max_size=8),
       st.integers(0, 4), st.floats(0, 2), st.sampled_from(["discriminating", "correct"]))
def test_tester_suite_reward_properties(tests, n_rejected, w, credit):
    from matrix.rewards import tester_suite_reward

    r = [x for x, _ in tests]
    ok = [c for _, c in tests]
    base = tester_suite_reward(r, ok, n_rejected, accuracy_weight=w, credit=credit)
    # permutation invariant; more rejected candidates never help; a wrong test turned right helps
    assert tester_suite_reward(r[::-1], ok[::-1], n_rejected, accuracy_weight=w, credit=credit) == pytest.approx(base)
    assert tester_suite_reward(r, ok, n_rejected + 1, accuracy_weight=w, credit=credit) < base
    if not all(ok):
        i = ok.index(False)
        ok2 = list(ok)
        ok2[i] = True
        assert tester_suite_reward(r, ok2, n_rejected, accuracy_weight=w, credit=credit) >= base
    mean = tester_suite_reward(r, ok, n_rejected, accuracy_weight=w, credit=credit, aggregate="mean")
    assert -(1 + w) - 1e-9 <= mean <= 1 + w + 1e-9
