"""matrix.calibration: reliability curve, ECE, fitted maps, on hand-worked data and properties."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matrix import calibration as C


def test_reliability_curve_and_ece_hand_worked():
    # bins of width 0.5: [0, 0.5) holds 0.1 (wrong), 0.3 (right) -> mean score 0.2, right 0.5;
    # [0.5, 1] holds 0.9 (right), 1.0 (right) -> mean score 0.95, right 1.0
    s = [0.1, 0.3, 0.9, 1.0]
    y = [False, True, True, True]
    curve = C.reliability_curve(s, y, n_bins=2)
    assert [(c["lo"], c["hi"], c["n"]) for c in curve] == [(0.0, 0.5, 2), (0.5, 1.0, 2)]
    assert curve[0]["score"] == pytest.approx(0.2) and curve[0]["right"] == 0.5
    assert curve[1]["score"] == pytest.approx(0.95) and curve[1]["right"] == 1.0
    # ECE = 2/4 * |0.5 - 0.2| + 2/4 * |1 - 0.95| = 0.15 + 0.025
    assert C.expected_calibration_error(s, y, n_bins=2) == pytest.approx(0.175)
    assert C.max_calibration_error(s, y, n_bins=2) == pytest.approx(0.3)
    # Brier: (0.01 + 0.49 + 0.01 + 0) / 4
    assert C.brier_score(s, y) == pytest.approx(0.1275)
    assert C.expected_calibration_error([], []) == 0.0 and C.reliability_curve([], []) == []


def test_overconfident_scores_measured_as_such():
    # the case: 52 picks scored 0.995, 25 right -> ECE over them ~ 0.995 - 25/52
    s = np.full(52, 0.995)
    y = np.arange(52) < 25
    assert C.expected_calibration_error(s, y) == pytest.approx(0.995 - 25 / 52)
    assert C.precision_at(s, y, 0.99) == (pytest.approx(25 / 52), 52)
    share, n = C.precision_at(s, y, 0.999)
    assert n == 0 and math.isnan(share)


def test_threshold_for_precision_hand_worked():
    s = [0.9, 0.8, 0.8, 0.6, 0.3]
    y = [True, True, False, True, False]
    # >= 0.9: 1/1; >= 0.8: 2/3; >= 0.6: 3/4; >= 0.3: 3/5
    assert C.threshold_for_precision(s, y, 0.75) == 0.6
    assert C.threshold_for_precision(s, y, 0.7) == 0.6
    assert C.threshold_for_precision(s, y, 0.9) == 0.9
    assert C.threshold_for_precision(s, y, 0.9, min_count=2) is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="length"):
        C.expected_calibration_error([0.5], [True, False])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        C.reliability_curve([1.5], [True])
    with pytest.raises(ValueError, match="finite"):
        C.brier_score([float("nan")], [True])
    with pytest.raises(ValueError, match="kind"):
        C.fit_calibration([0.0], [True], "magic")
    with pytest.raises(ValueError, match="n_bins"):
        C.reliability_curve([0.5], [True], n_bins=0)


def test_platt_fitted_on_overconfident_logits_shrinks_them():
    # scores at log-odds +-10 that are right 70% / 30% of the time: Platt maps them to ~0.7 / ~0.3
    x = np.r_[np.full(100, 10.0), np.full(100, -10.0)]
    y = np.r_[np.arange(100) < 70, np.arange(100) < 30]
    m = C.fit_calibration(x, y, "platt")
    p = m(np.array([10.0, -10.0]))
    assert p[0] == pytest.approx(71 / 102, abs=0.01) and p[1] == pytest.approx(31 / 102, abs=0.01)
    assert C.expected_calibration_error(m(x), y) < 0.02 < C.expected_calibration_error(C.sigmoid(x), y)
    assert m.info == {"n": 200, "right": 0.5}


def test_platt_never_reverses_the_order():
    # scores ranking against their outcomes: the map is flat at the mean smoothed target (3/4 + 1/4) / 2
    m = C.fit_calibration([0.0, 1.0, 2.0, 3.0], [True, True, False, False], "platt")
    assert m.params["a"] == 0.0
    np.testing.assert_allclose(m(np.array([-5.0, 5.0])), [0.5, 0.5])


def test_isotonic_fit_hand_worked():
    # outcomes by x: 0:F, 1:T, 2:F, 3:T -> PAV pools x=1,2 into 0.5: steps 0, 0.5, 0.5, 1
    m = C.fit_calibration([0.0, 1.0, 2.0, 3.0], [False, True, False, True], "isotonic")
    np.testing.assert_allclose(m(np.array([-5.0, 0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 9.0])),
                               [0, 0, 0.5, 0.5, 0.5, 0.75, 1.0, 1.0])


def test_binning_fit_uses_beta_prior():
    x = np.r_[np.zeros(4), np.ones(4)]
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=bool)
    m = C.fit_calibration(x, y, "binning", n_bins=2)
    np.testing.assert_allclose(m(np.array([0.0, 1.0])), [2 / 6, 5 / 6])


@pytest.mark.parametrize("kind", C.KINDS)
def test_map_round_trips_through_json(kind):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, 50)
    y = rng.random(50) < C.sigmoid(x / 2)
    m = C.fit_calibration(x, y, kind)
    back = C.CalibrationMap.from_json(json.loads(json.dumps(m.to_json())))
    np.testing.assert_allclose(back(x), m(x))


@pytest.mark.parametrize("data, field", [
    ([], "JSON object"),
    ({"kind": "oracle"}, "kind"),
    ({"kind": "platt", "params": {"a": "1", "b": 0}}, "params.a"),
    ({"kind": "platt", "params": {"a": float("inf"), "b": 0}}, "params.a"),
    ({"kind": "isotonic", "params": {"x": [0, 1], "y": [0.9, 0.1]}}, "params.x"),
    ({"kind": "isotonic", "params": {"x": [0, 1], "y": [0.5]}}, "params.y"),
    ({"kind": "binning", "params": {"edges": [0.0], "values": [0.1, 2.0]}}, "params.values"),
    ({"kind": "binning", "params": {"edges": [0.0], "values": [True, 0.5]}}, "params.values"),
])
def test_hostile_map_files_are_refused_naming_the_field(data, field):
    with pytest.raises(ValueError, match=field):
        C.CalibrationMap.from_json(data)


def test_cross_fit_scores_each_group_by_a_map_fitted_elsewhere():
    # two tasks with opposite behaviour: out-of-fold, each is scored by the other's map
    x = np.zeros(8)
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    out = C.cross_fit(x, y, "binning", groups=["a"] * 4 + ["b"] * 4)
    np.testing.assert_allclose(out, [1 / 6] * 4 + [5 / 6] * 4)
    np.testing.assert_allclose(C.cross_fit(x, y, groups=["a"] * 8), 0.5)  # one group: identity


def test_logit_sigmoid_round_trip_and_clip():
    p = np.array([0.0, 1e-9, 0.3, 0.5, 1 - 1e-9, 1.0])
    x = C.logit(p)
    assert x[0] == -C.LOGIT_CLIP and x[-1] == C.LOGIT_CLIP
    np.testing.assert_allclose(C.sigmoid(x[1:-1]), p[1:-1], rtol=1e-6)


scores_outcomes = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0, 1), min_size=n, max_size=n), st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=60, deadline=None)
@given(scores_outcomes, st.integers(1, 20))
def test_ece_properties(so, n_bins):
    s, y = so
    ece = C.expected_calibration_error(s, y, n_bins)
    assert 0.0 <= ece <= C.max_calibration_error(s, y, n_bins) + 1e-12 <= 1.0 + 1e-12
    curve = C.reliability_curve(s, y, n_bins)
    assert sum(c["n"] for c in curve) == len(s)
    # scores equal to the outcomes are perfectly calibrated
    assert C.expected_calibration_error(np.asarray(y, dtype=float), y, n_bins) == 0.0
    # order of items does not matter
    perm = np.random.default_rng(len(s)).permutation(len(s))
    assert C.expected_calibration_error(np.asarray(s)[perm], np.asarray(y)[perm], n_bins) == pytest.approx(ece)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-60, 60), min_size=n, max_size=n), st.lists(st.booleans(), min_size=n, max_size=n))),
    st.sampled_from(C.KINDS))
def test_fitted_maps_are_monotone_probabilities(xy, kind):
    x, y = np.asarray(xy[0]), np.asarray(xy[1])
    m = C.fit_calibration(x, y, kind)
    grid = np.linspace(-70, 70, 201)
    p = m(grid)
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    assert (np.diff(p) >= -1e-12).all()
    if kind == "isotonic":  # isotonic fits its own data at least as well as the raw scores in Brier
        assert C.brier_score(m(x), y) <= C.brier_score(C.sigmoid(x), y) + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.integers(1, 5).flatmap(lambda m: st.lists(
    st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n))), st.sampled_from(["coevo", "b4"]))
def test_selection_logits_are_the_scores_log_odds(rows, method):
    from matrix.selection import select

    sel = select(np.array(rows, dtype=bool), method=method)
    np.testing.assert_allclose(C.sigmoid(sel.code_logits), sel.code_scores, atol=1e-9)
    np.testing.assert_allclose(C.sigmoid(sel.test_logits), sel.test_scores, atol=1e-9)
    assert sel.logit == sel.code_logits[sel.index]


def test_selection_logits_keep_order_where_scores_round_to_one():
    from matrix.selection import select

    # 10 programs agree on 3 tests, a lone one fails them: the ranking's raw posterior is 1.0 in
    # float64, but its log-odds stay finite and above those of a smaller majority
    big = np.vstack([np.ones((10, 3), dtype=bool), np.zeros((1, 3), dtype=bool)])
    small = np.vstack([np.ones((6, 3), dtype=bool), np.zeros((1, 3), dtype=bool)])
    raw = {"unseen_weight": 0.0, "evidence_scale": 1.0}
    a, b = select(big, method="coevo", **raw), select(small, method="coevo", **raw)
    assert a.code_scores[a.index] == b.code_scores[b.index] == 1.0
    assert C.LOGIT_CLIP >= a.logit > b.logit > 30
    # the default scores leave room for "no sample is correct": below 1, in the same order
    a, b = select(big, method="coevo"), select(small, method="coevo")
    assert 10 / 11 > a.code_scores[a.index] > b.code_scores[b.index] > 0.8
    assert a.logit > b.logit


def test_calibration_report_hand_worked():
    # four picks at log-odds 0 (score 0.5): two right; two at log-odds 10 (~1.0): one right
    x = [0.0, 0.0, 0.0, 0.0, 10.0, 10.0]
    y = [True, True, False, False, True, False]
    rep = C.calibration_report(x, y, ["a", "a", "b", "b", "c", "c"], thresholds=(0.9,))
    top = float(C.sigmoid(10.0))
    assert rep["n"] == 6 and rep["right"] == pytest.approx(0.5) and rep["ge99"] == 2 and rep["ge99_right"] == 1
    assert rep["ece"] == pytest.approx(2 / 6 * (top - 0.5))  # the 0.5 bin is right at 0.5
    assert rep["precision_at"]["0.9"]["raw"] == [0.5, 2]
    assert {"ece_cv", "curve_cv", "brier_cv"} <= set(rep) and "cv" in rep["precision_at"]["0.9"]
    alone = C.calibration_report(x, y)  # no groups: nothing cross-fitted
    assert "ece_cv" not in alone and "precision_at" not in alone
    assert json.loads(json.dumps(rep)) == rep


def test_isotonic_map_between_knots_closer_than_a_normal_float_stays_a_probability():
    # hypothesis found it: two scores 2.2e-311 apart (subnormal) with different block values made
    # np.interp's slope overflow, and the map answered inf at 0 (between the two knots)
    x = np.array([1.0] * 16 + [-2.225073858507e-311, 2.2250738585e-313] + [1.0] * 18)
    y = np.array([False] * 17 + [True] + [False] * 18)
    m = C.fit_calibration(x, y, "isotonic")
    p = m(np.array([-70.0, -1e-311, 0.0, 0.5, 1.0, 70.0]))
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    assert p[0] == 0.0 and p[-1] == pytest.approx(1 / 35)  # constant beyond the knots
    assert 0.0 < p[2] <= 1 / 35 and (np.diff(p) >= 0).all()  # part of the way up, monotone


def test_isotonic_map_interpolates_linearly_between_blocks():
    m = C.CalibrationMap("isotonic", {"x": np.array([0.0, 1.0, 3.0, 3.0]), "y": np.array([0.2, 0.2, 0.6, 0.6])})
    assert m(np.array([-5.0, 0.0, 0.5, 1.0, 2.0, 3.0, 9.0])).tolist() == pytest.approx(
        [0.2, 0.2, 0.2, 0.2, 0.4, 0.6, 0.6])
    one = C.CalibrationMap("isotonic", {"x": np.array([2.0]), "y": np.array([0.3])})
    assert one(np.array([-1.0, 2.0, 5.0])).tolist() == pytest.approx([0.3, 0.3, 0.3])
