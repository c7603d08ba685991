import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from training.advantages import compute_advantages, group_advantages, informative_groups

EPS = 1e-4


def test_hand_computed_group_scale():
    # group a: rewards 1, 0, 0, 1 -> mean 0.5, std (ddof=1) = sqrt(1/3)
    # group b: rewards 2, 4 -> mean 3, std = sqrt(2)
    adv, keep = group_advantages([1, 0, 2, 0, 4, 1], ["a", "a", "b", "a", "b", "a"])
    s_a = math.sqrt(1 / 3)
    s_b = math.sqrt(2)
    expect = [0.5 / (s_a + EPS), -0.5 / (s_a + EPS), -1 / (s_b + EPS), -0.5 / (s_a + EPS), 1 / (s_b + EPS),
              0.5 / (s_a + EPS)]
    np.testing.assert_allclose(adv, expect, rtol=1e-12)
    assert keep.all()


def test_hand_computed_batch_and_none_scale():
    r = [1.0, 0.0, 3.0, 5.0]
    g = ["a", "a", "b", "b"]
    s = np.std(r, ddof=1)  # batch std over all four rewards
    adv, _ = group_advantages(r, g, scale="batch")
    np.testing.assert_allclose(adv, [0.5 / (s + EPS), -0.5 / (s + EPS), -1 / (s + EPS), 1 / (s + EPS)])
    adv, _ = group_advantages(r, g, scale="none")
    np.testing.assert_allclose(adv, [0.5, -0.5, -1.0, 1.0])


def test_nan_rewards_left_out_of_statistics():
    adv, keep = group_advantages([1.0, float("nan"), 0.0, 1.0], ["a"] * 4)
    # the NaN sample is ignored: stats of [1, 0, 1]: mean 2/3, std sqrt(1/3)
    s = math.sqrt(1 / 3)
    np.testing.assert_allclose(adv, [(1 / 3) / (s + EPS), 0.0, (-2 / 3) / (s + EPS), (1 / 3) / (s + EPS)])
    assert keep.tolist() == [True, False, True, True]


def test_zero_variance_groups_zero_advantage_or_dropped():
    r = [1.0, 1.0, 1.0, 0.0, 1.0, 5.0, float("nan")]
    g = ["a", "a", "a", "b", "b", "c", "d"]
    a = compute_advantages(r, g)
    assert a.groups == ["a", "b", "c", "d"]
    assert a.zero_variance.tolist() == [True, False, True, True]  # c: one reward, d: none
    assert a.adv[[0, 1, 2, 5, 6]].tolist() == [0.0] * 5
    assert a.keep.tolist() == [True, True, True, True, True, True, False]
    assert a.n_dropped == 1  # d has no kept sample
    d = compute_advantages(r, g, drop_zero_variance=True)
    assert d.keep.tolist() == [False, False, False, True, True, False, False]
    assert d.n_dropped == 3 and d.n_zero_variance == 3
    np.testing.assert_array_equal(d.adv, a.adv)
    assert informative_groups(r, g) == {"b"}


def test_rejects_bad_input():
    with pytest.raises(ValueError, match="scale"):
        group_advantages([1.0], ["a"], scale="std")
    with pytest.raises(ValueError, match="groups"):
        group_advantages([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="infinite"):
        group_advantages([float("inf"), 1.0], ["a", "a"])


def test_empty_batch():
    adv, keep = group_advantages([], [])
    assert adv.shape == (0,) and keep.shape == (0,)


# ------------------------------------------------------------------------------- properties
# rewards on a grid (as real rewards are): differences are never so tiny that eps dominates the std
reward_st = st.integers(-40, 40).map(lambda x: x / 4)
rewards_st = st.lists(st.one_of(reward_st, st.just(float("nan"))), min_size=1, max_size=24)


@st.composite
def batches(draw):
    r = draw(rewards_st)
    n_groups = draw(st.integers(1, 4))
    g = [f"g{draw(st.integers(0, n_groups - 1))}" for _ in r]
    return np.array(r, dtype=np.float64), g


@settings(max_examples=150, deadline=None)
@given(batches(), st.randoms(use_true_random=False), st.sampled_from(["group", "batch", "none"]))
def test_permutation_invariance(batch, rnd, scale):
    r, g = batch
    perm = list(range(len(r)))
    rnd.shuffle(perm)
    a1, k1 = group_advantages(r, g, scale=scale)
    a2, k2 = group_advantages(r[perm], [g[i] for i in perm], scale=scale)
    np.testing.assert_allclose(a2, a1[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(k2, k1[perm])


@settings(max_examples=150, deadline=None)
@given(batches(), st.sampled_from(["group", "batch", "none"]))
def test_zero_mean_per_group(batch, scale):
    r, g = batch
    a = compute_advantages(r, g, scale=scale)
    for j in range(a.n_groups):
        sel = (a.group_index == j) & a.keep
        if sel.any():
            assert abs(a.adv[sel].sum()) <= 1e-7 * max(1.0, np.abs(a.adv[sel]).sum())


@settings(max_examples=150, deadline=None)
@given(batches(), st.floats(0.01, 100))
def test_scale_invariance(batch, c):
    r, g = batch
    a1, k1 = group_advantages(r, g, eps=1e-12)
    a2, k2 = group_advantages(r * c, g, eps=1e-12)
    np.testing.assert_array_equal(k1, k2)
    np.testing.assert_allclose(a1, a2, rtol=1e-6, atol=1e-6)
    # and shifting rewards changes nothing either
    a3, _ = group_advantages(r + 3.0, g, eps=1e-12)
    np.testing.assert_allclose(a1, a3, rtol=1e-6, atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(st.floats(-5, 5, allow_nan=False), st.integers(1, 8), st.booleans())
def test_constant_group_is_zero_or_dropped(value, n, drop):
    r = [value] * n + [0.0, 1.0]
    g = ["same"] * n + ["other", "other"]
    adv, keep = group_advantages(r, g, drop_zero_variance=drop)
    assert (adv[:n] == 0.0).all()
    assert keep[:n].tolist() == [not drop] * n
    assert keep[n:].all() and adv[n] < 0 < adv[n + 1]


@settings(max_examples=100, deadline=None)
@given(batches())
def test_group_scaled_advantages_have_unit_std(batch):
    r, g = batch
    a = compute_advantages(r, g, eps=1e-12)
    for j in range(a.n_groups):
        sel = (a.group_index == j) & a.keep
        if sel.sum() >= 2 and not a.zero_variance[j] and a.group_std[j] > 1e-6:
            assert abs(np.std(a.adv[sel], ddof=1) - 1.0) < 1e-6


# ------------------------------------------------------------------------------- against TRL's formula
def test_batch_scale_with_a_nan_and_degenerate_groups_hand_computed():
    # a: 1, 0 ; b: 2, 2 (all equal) ; c: NaN, 3 (one finite reward). The batch std is over the five
    # finite rewards [1, 0, 2, 2, 3]: mean 1.6, sum of squares 0.36 + 2.56 + 0.16 + 0.16 + 1.96 = 5.2,
    # ddof=1 -> sqrt(1.3). Only a has an advantage: +-0.5 / (sqrt(1.3) + eps); b and c are zero-variance.
    r = [1.0, 0.0, 2.0, 2.0, float("nan"), 3.0]
    a = compute_advantages(r, ["a", "a", "b", "b", "c", "c"], scale="batch")
    s = math.sqrt(1.3)
    np.testing.assert_allclose(a.adv, [0.5 / (s + EPS), -0.5 / (s + EPS), 0, 0, 0, 0], rtol=1e-12)
    assert a.keep.tolist() == [True, True, True, True, False, True]
    assert a.zero_variance.tolist() == [False, True, True]


def _trl_advantages(r: np.ndarray, G: int, scale: str) -> np.ndarray:
    """TRL GRPOTrainer's advantages (sum_then_normalize), written out: groups of G consecutive
    samples, NaN = unscorable; nanmean per group, Bessel-corrected nanstd per group (or over the
    batch for scale='batch'), (r - mean) / (std + 1e-4) unless scale='none', NaN -> 0."""
    g = r.reshape(-1, G)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-NaN group: NaN, as in torch
        mean = np.repeat(np.nanmean(g, axis=1), G)

        def nanstd(x, axis=None):
            n = np.sum(~np.isnan(x), axis=axis)
            m = np.nanmean(x, axis=axis, keepdims=axis is not None)
            v = np.nanmean((x - m) ** 2, axis=axis) * n / (n - 1)
            return np.sqrt(np.where(n > 1, v, np.nan))

        std = np.repeat(nanstd(g, axis=1), G) if scale in ("group", "none") else np.full(len(r), nanstd(r))
        adv = r - mean
        if scale != "none":
            adv = adv / (std + 1e-4)
    return np.nan_to_num(adv, nan=0.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4), st.integers(2, 6), st.sampled_from(["group", "batch", "none"]), st.data())
def test_advantages_equal_trls_for_equal_sized_groups(n_groups, G, scale, data):
    """TRL's groups are G consecutive samples of one prompt; with NaN (no reward) samples, all-equal
    groups and one-finite-reward groups, every advantage is TRL's."""
    r = np.array(data.draw(st.lists(st.one_of(reward_st, st.just(float("nan"))), min_size=n_groups * G,
                                    max_size=n_groups * G)), dtype=np.float64)
    groups = [f"p{i // G}" for i in range(len(r))]
    a = compute_advantages(r, groups, scale=scale, eps=1e-4)
    np.testing.assert_allclose(a.adv, _trl_advantages(r, G, scale), rtol=1e-9, atol=1e-9)


def test_batch_scale_takes_the_std_within_each_stratum():
    """A joint update's batch mixes roles whose rewards live on different scales (Coder 0/1, a
    Tester's suite sums). scale='batch' divides by the std of the batch *of that role* (strata),
    as Absolute Zero normalises per (task type, role): another role's reward scale must not
    shrink this role's advantages.

    coder group a: 1, 0 -> batch std of coder rewards sqrt(0.5); tester group b: 4, -4 -> sqrt(32).
    Pooled, the std would be sqrt(32.75 / 3) = 3.30 and the Coder's advantages +-0.15."""
    r = [1.0, 0.0, 4.0, -4.0]
    g = ["coder/a", "coder/a", "tester/b", "tester/b"]
    a = compute_advantages(r, g, scale="batch", strata=["coder", "coder", "tester", "tester"])
    sc, st_ = math.sqrt(0.5), math.sqrt(32.0)
    np.testing.assert_allclose(a.adv, [0.5 / (sc + EPS), -0.5 / (sc + EPS), 4 / (st_ + EPS), -4 / (st_ + EPS)],
                               rtol=1e-12)
    pooled = compute_advantages(r, g, scale="batch")  # no strata: one stratum, as before
    s = math.sqrt(32.75 / 3)
    np.testing.assert_allclose(pooled.adv, [0.5 / (s + EPS), -0.5 / (s + EPS), 4 / (s + EPS), -4 / (s + EPS)],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="spans two strata"):
        compute_advantages(r, ["a"] * 4, scale="batch", strata=["coder", "coder", "tester", "tester"])
    # strata change nothing for the group and none scales
    for scale in ("group", "none"):
        np.testing.assert_array_equal(compute_advantages(r, g, scale=scale, strata=["x", "x", "y", "y"]).adv,
                                      compute_advantages(r, g, scale=scale).adv)


@settings(max_examples=100, deadline=None)
@given(batches(), st.floats(0.01, 100))
def test_a_strata_batch_std_ignores_the_other_strata(batch, c):
    r, g = batch
    strata = [x if int(x[1:]) % 2 else "even" for x in g]  # g1, g3 their own strata; g0, g2 share one
    a = compute_advantages(r, g, scale="batch", strata=strata)
    other = np.array([s != "even" for s in strata])
    b = compute_advantages(np.where(other, r * c, r), g, scale="batch", strata=strata)
    even = ~other
    np.testing.assert_allclose(b.adv[even], a.adv[even], rtol=1e-12, atol=1e-12)
