"""Selection methods on hand-worked pools, plus hypothesis properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from matrix.selection import (
    METHODS,
    Selection,
    _encode_outputs,
    b4,
    codet,
    coevo_default,
    max_pass,
    output_consensus,
    select,
    weigh_tests,
)

FAST = settings(max_examples=40, deadline=None, database=None)


def test_max_pass_and_ties():
    p = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=bool)
    s = max_pass(p)
    assert s.index == 1 and s.method == "max_pass"
    np.testing.assert_allclose(s.code_scores, [1 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(s.test_scores, [0.5, 1.0, 0.5])  # shared by the two tied codes


def test_codet_prefers_agreeing_group_over_lone_max_pass():
    # codes 0-2 pass tests 0,1; code 3 passes tests 0,1,2 alone
    p = np.array([[1, 1, 0]] * 3 + [[1, 1, 1]], dtype=bool)
    assert max_pass(p).index == 3
    s = codet(p)
    assert s.index == 0 and s.details["group_size"] == 3
    assert s.test_scores.tolist() == [1.0, 1.0, 0.0]
    np.testing.assert_allclose(s.code_scores, [1, 1, 1, 0.5])


def test_b4_rejects_test_passed_only_by_one_wrong_code():
    # codes 0,1 identical and pass tests 0-2; code 2 passes 0,1 and a spurious test 3
    p = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 0, 1]], dtype=bool)
    s = b4(p)
    assert s.index == 0
    assert s.test_scores[3] < 0.5 < s.test_scores[2]
    assert abs(s.code_scores[0] - s.code_scores[1]) < 1e-12


def _tie_pool():
    """Three ground-truth tests and one spurious test written for a decoy that fails one of them:
    the reference (row 2) and the decoy (row 0) pass three tests each. Three other mutants fail
    different tests, all pass the test the decoy fails; on the extra inputs each deviates from the
    reference in its own places, while the decoy answers differently from everyone on inputs 2, 5
    and 8."""
    q = 12
    ref = [f"ok{j}" for j in range(q)]  # a different answer on every input
    decoy = list(ref)
    for j in (2, 5, 8):
        decoy[j] = f"decoy{j}"
    mutants = []
    for i in range(3):
        row = list(ref)
        row[3 * i], row[3 * i + 1] = f"bad{3 * i}", f"bad{3 * i + 1}"
        mutants.append(row)
    outputs = [decoy, mutants[0], ref, mutants[1], mutants[2]]
    passed = [
        [1, 1, 0, 1],  # decoy: gt0, gt1, spurious
        [0, 1, 1, 0],
        [1, 1, 1, 0],  # the reference
        [1, 0, 1, 0],
        [0, 0, 1, 0],
    ]
    return np.array(passed, dtype=bool), np.array(outputs, dtype=object)


def test_coevo_breaks_a_tie_that_fools_max_pass_and_codet():
    p, out = _tie_pool()
    assert max_pass(p).index == 0  # tie, first index
    assert codet(p).index == 0
    s = coevo_default(p, out)
    assert s.index == 2
    assert (s.test_scores >= 0.5).tolist() == [True, True, True, False]
    # five behaviours of one sample each: the reference leads, but no score claims certainty
    assert s.code_scores[2] > 2 * s.code_scores[0] and s.code_scores[2] < 0.5
    assert select(p, consensus=out).index == 2  # the default method
    # the tests alone already lean to the reference (the decoy's missing test is corroborated)
    assert coevo_default(p).index == 2


def _predicate_pool():
    """A predicate on inputs 0-7 that is True on 1, 4 and 6 (the reference, row 2). Tests: f(1) is
    True, f(2) is False, f(4) is False (spurious: the decoy's answer) and f(0) is False. The decoy
    (row 0) answers False on 1 and 4, a constant-False program (row 1) passes what the decoy
    passes, a fourth program answers True on 4 and 6 only."""
    def outputs(trues):
        return ["True" if j in trues else "False" for j in range(8)]
    rows = [outputs({6}), outputs(set()), outputs({1, 4, 6}), outputs({4, 6})]
    tests = [(1, "True"), (2, "False"), (4, "False"), (0, "False")]
    passed = np.array([[row[x] == v for x, v in tests] for row in rows], dtype=bool)
    return passed, np.array(rows, dtype=object)


def test_test_weights_are_the_bits_of_the_asserted_value_for_each_program():
    p, out = _predicate_pool()
    codes = _encode_outputs(out, len(out))
    # tests: f(1) is True, then three asserting False. Each program answers False on 7, 8, 5 and
    # 6 of its 8 inputs: a test asserting False carries -log2 of that share for it, True more
    # than the one-bit cap
    bits = [-np.log2(7 / 8), 0.0, -np.log2(5 / 8), -np.log2(6 / 8)]
    expected = [[1.0] + [max(0.1, b)] * 3 for b in bits]
    np.testing.assert_allclose(weigh_tests(p, codes, floor=0.1), expected)
    np.testing.assert_allclose(weigh_tests(p, codes)[:, 1], [0.3, 0.3, -np.log2(5 / 8), -np.log2(6 / 8)])
    # a test no code passes, and one whose split matches no input column, weigh 1
    extra = np.array([[0, 1], [0, 0], [0, 1], [0, 0]], dtype=bool)
    assert (weigh_tests(np.hstack([p, extra]), codes, floor=0.1)[:, 4:] == 1.0).all()
    # no outputs at all, or a program that never returns: every test weighs 1
    assert (weigh_tests(p, np.zeros((4, 0), dtype=np.int64)) == 1.0).all()
    silent = codes.copy()
    silent[1] = -1
    assert (weigh_tests(p, silent)[1] == 1.0).all()


def test_coevo_discounts_tests_asserting_what_a_program_answers_anyway():
    p, out = _predicate_pool()
    # the decoy and the reference pass three tests each; the decoy's group has two codes
    assert max_pass(p).index == 0 and codet(p).index == 0 and b4(p).index == 0
    assert coevo_default(p, out, min_test_weight=1.0).index == 0  # every test weighs one bit
    # the decoy's one contested pass (f(4) == False: two codes of four pass it) asserts what it
    # answers on 7 of 8 inputs; the reference's f(1) == True is news. f(2) and f(0), which every
    # code passes, weigh 1 for everyone: they tell no hypothesis apart
    s = coevo_default(p, out)
    assert s.index == 2 and s.code_scores[2] == s.code_scores.max()
    raw = coevo_default(p, out, unseen_weight=0.0, evidence_scale=1.0)  # the ranking's own posterior
    assert raw.index == 2 and (raw.test_scores >= 0.5).tolist() == [True, True, False, True]
    # four programs, four behaviours: the scores stay modest; f(1) is True holds for the pick
    # and, with no sample right, for the share of codes passing it, (1 + 1) / (4 + 2)
    assert s.test_scores[0] == pytest.approx(s.code_scores[2] + s.details["unseen"] * 2 / 6)
    assert s.test_scores[1] == s.test_scores[3] > 0.9
    assert s.details["test_weights"] == [1.0, 1.0, round(-np.log2(5 / 8), 4), 1.0]
    assert coevo_default(p, out, contested_share=1.0).details["test_weights"] == (
        [1.0] + [round(-np.log2(5 / 8), 4)] * 3)  # every test's habits counted


def test_coevo_keeps_the_clear_lead_of_a_program_leaning_to_one_answer():
    """The reference is a predicate true on 7 of the 8 inputs, so its True tests weigh 0.3 each for
    it; the decoy (true on half) passes four tests at full weight. The discount is capped at two
    tests: the reference's lead of two tests stands. (With every test's habits counted,
    ``contested_share=1``, the uncapped discount of five tests would hand the decoy the pool.)"""
    def outputs(trues):
        return ["True" if j in trues else "False" for j in range(8)]
    rows = [outputs({0, 1, 2, 3}), outputs(set(range(7))), outputs(set(range(8))), outputs({0, 1})]
    tests = [(0, "True"), (1, "True"), (4, "True"), (5, "True"), (6, "True"), (7, "False"), (4, "False")]
    p = np.array([[row[x] == v for x, v in tests] for row in rows], dtype=bool)
    out = np.array(rows, dtype=object)
    assert p.sum(axis=1).tolist() == [4, 6, 5, 4] and max_pass(p).index == 1
    s = coevo_default(p, out)
    assert s.index == 1 and s.details["test_weights"] == [1.0, 1.0] + [0.3] * 3 + [1.0, 1.0]
    every = coevo_default(p, out, contested_share=1.0)
    assert every.index == 1 and every.details["test_weights"] == [0.3] * 5 + [1.0, 1.0]
    assert coevo_default(p, out, contested_share=1.0, max_test_discount=float("inf")).index == 0


def test_coevo_habits_only_weigh_contested_tests():
    """HumanEval/146's shape: the reference returns 0 on 6 of 8 inputs and leads by one test, but
    four of its five tests assert 0. Three of those every code passes: they cannot tell the
    reference from the decoy (which rarely returns 0), so they weigh 1 and the lead stands. Counted
    as habits for the reference alone they would hand the decoy the pool."""
    rows = [[0, 0, 0, 0, 0, 0, 1, 2], [0, 0, 0, 3, 4, 5, 6, 7], [0, 0, 0, 9, 9, 9, 9, 9],
            [0, 0, 0, 8, 8, 8, 8, 8], [0] * 8]
    tests = [(0, 0), (1, 0), (2, 0), (5, 0), (6, 1), (7, 7)]  # f(7) == 7: the decoy's spurious test
    p = np.array([[row[x] == v for x, v in tests] for row in rows], dtype=bool)
    out = np.array([[str(v) for v in row] for row in rows], dtype=object)
    assert p.sum(axis=1).tolist() == [5, 4, 3, 3, 4]
    s = coevo_default(p, out)
    assert s.index == 0 and s.details["test_weights"] == [1.0, 1.0, 1.0, round(-np.log2(6 / 8), 4), 1.0, 1.0]
    assert coevo_default(p, out, contested_share=1.0).index == 1


def test_coevo_scales_the_outputs_evidence_beyond_consensus_inputs():
    p, out = _tie_pool()  # 12 extra inputs
    full = coevo_default(p, out)
    assert coevo_default(p, out, consensus_inputs=12).code_scores == pytest.approx(full.code_scores)
    # 6 inputs' worth of 12: the same as half the consensus weight
    half = coevo_default(p, out, consensus_inputs=6)
    np.testing.assert_allclose(half.code_scores,
                               coevo_default(p, out, consensus_weight=0.1).code_scores, rtol=1e-9)
    assert not np.allclose(half.code_scores, full.code_scores)


def test_coevo_pass_count_leads():
    # a code passing more tests wins even against a large agreeing cluster
    p = np.array([[1, 1, 1, 1]] + [[1, 1, 0, 0]] * 4, dtype=bool)
    out = np.array([["x", "y"]] + [["a", "b"]] * 4, dtype=object)
    assert coevo_default(p, out).index == 0


def test_coevo_consensus_ignores_identical_crashers():
    # no tests: only the outputs speak. Six identical crashing programs are one behaviour that
    # abstains where the others answer; the reference agrees with every mutant most of the time.
    q = 10
    ref = [str(j) for j in range(q)]
    rows = [list(ref) for _ in range(4)]
    for i in range(1, 4):
        rows[i][i] = "bad"
    rows += [[None] * q for _ in range(6)]
    out = np.array(rows, dtype=object)
    p = np.zeros((len(rows), 0), dtype=bool)
    assert coevo_default(p, out).index == 0
    # plain clustering, too, gives codes that never answered no cluster (it used to count the
    # crashers' shared abstention as agreement and pick them)
    assert output_consensus(p, out).index == 0


def test_coevo_without_consensus_is_test_based():
    p = np.array([[1, 1, 1, 0]] * 3 + [[1, 1, 0, 1]], dtype=bool)
    s = coevo_default(p)
    assert s.index == 0
    assert min(s.test_scores[:2]) > 0.95  # every code passes them
    assert s.test_scores[2] > 0.5 > s.test_scores[3]  # the three agreeing codes are likelier


def test_coevo_scores_leave_room_for_no_correct_sample():
    """Eight samples that agree and pass every test (worked by hand): the hypothesis that no sample
    is correct weighs as one sample against eight, so the pick scores 8/9 and each test
    8/9 + 1/9 * (8 + 1) / (8 + 2); the ranking's own posterior (no such hypothesis, the raw log
    scores) said 1.0 for both."""
    from matrix.calibration import sigmoid

    p = np.ones((8, 3), dtype=bool)
    s = coevo_default(p)
    assert s.code_scores.tolist() == pytest.approx([8 / 9] * 8)
    assert s.test_scores.tolist() == pytest.approx([8 / 9 + 0.9 / 9] * 3)
    assert s.details["unseen"] == pytest.approx(1 / 9)
    np.testing.assert_allclose(sigmoid(s.code_logits), s.code_scores, rtol=1e-9)
    np.testing.assert_allclose(sigmoid(s.test_logits), s.test_scores, rtol=1e-9)
    raw = coevo_default(p, unseen_weight=0.0, evidence_scale=1.0)
    assert raw.code_scores.tolist() == pytest.approx([1.0] * 8) and raw.test_scores.tolist() == pytest.approx([1.0] * 3)
    for bad in ({"evidence_scale": 0.0}, {"unseen_weight": -1.0}):
        with pytest.raises(ValueError):
            coevo_default(p, **bad)


def test_coevo_does_not_vouch_for_tests_only_a_lone_sample_passes():
    """The demo model's held-out task "negate, then mod ten" (pass rows as sampled, seed 1; no
    sample was right): one program passes two tests nobody else passes and wins the choice; the
    raw posterior vouched for both wrong tests at 1.0, the scores keep them under 0.5 while the
    test every behaviour but two passes stays kept."""
    cols = [[0, 0, 0, 0, 0, 0, 0, 0],  # assert f(3) == -3
            [0, 1, 0, 0, 1, 0, 1, 0],  # assert f(1) == 1
            [0, 0, 1, 0, 0, 0, 0, 0],  # assert f(3) == -2 (wrong)
            [0, 0, 1, 0, 0, 0, 0, 0],  # assert f(1) == -1 (wrong)
            [0, 1, 1, 0, 1, 1, 1, 1]]  # assert f(0) == 0
    p = np.array(cols, dtype=bool).T
    raw = coevo_default(p, unseen_weight=0.0, evidence_scale=1.0)
    s = coevo_default(p)
    assert raw.index == s.index == 2
    assert min(raw.test_scores[2:4]) > 0.99
    assert max(s.test_scores[2:4]) < 0.5 < s.test_scores[4]
    assert s.code_scores[2] < 0.5


def test_output_consensus_largest_cluster_then_tests():
    p = np.array([[0, 0], [1, 0], [1, 1], [0, 0]], dtype=bool)
    out = np.array([["a", "b"], ["a", "c"], ["a", "c"], ["x", None]], dtype=object)
    s = output_consensus(p, out)
    assert s.index == 2 and s.details["cluster_size"] == 2  # the cluster member passing most
    # no consensus data: falls back to max-pass
    s = output_consensus(p, None)
    assert s.index == 2 and s.details["fallback"]


def test_output_consensus_gives_codes_that_never_answered_no_cluster():
    """Red-team pass 12: three programs that do not compile (no output on any input: one row of
    abstentions) outnumbered two right ones and were picked with score 1."""
    p = np.array([[1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0]], dtype=bool)
    out = np.array([["4", "9"], ["4", "9"], [None, None], [None, None], [None, None]], dtype=object)
    s = output_consensus(p, out)
    assert s.index == 0 and list(s.code_scores) == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert s.details["n_clusters"] == 1
    # nobody answered anything: the tests decide (max-pass), as without extra inputs
    s = output_consensus(p[::-1], np.full((5, 2), None, dtype=object))
    assert s.index == 3 and s.details["fallback"] == "no code answered an extra input"


def test_select_dispatch_and_errors():
    p = np.array([[1, 0], [0, 1]], dtype=bool)
    for m in METHODS:
        s = select(p, m)
        assert isinstance(s, Selection) and 0 <= s.index < 2
    assert select(p, "max-pass").method == "max_pass"
    with pytest.raises(ValueError):
        select(p, "oracle")
    with pytest.raises(ValueError):
        select(np.zeros((0, 3), dtype=bool))
    with pytest.raises(ValueError):
        coevo_default(p, np.array([["a"]], dtype=object))


def test_coevo_trusts_the_statements_examples_the_others_ignore_them():
    """A symmetric tie (each code passes one of two contradicting tests, same outputs elsewhere):
    the worked example the second code passes settles it for coevo; the other methods ignore
    examples (a caller who wants them to count appends them to the tests)."""
    p = np.array([[1, 1, 0], [1, 0, 1]], dtype=bool)
    out = np.array([["1", "2", "0"], ["1", "2", "8"]], dtype=object)
    ex = np.array([[0], [1]], dtype=bool)
    assert coevo_default(p, out).index == 0  # the tie: lowest index
    s = select(p, "coevo", consensus=out, examples=ex)
    assert s.index == 1 and s.code_scores[1] > 5 * s.code_scores[0] and s.test_scores.shape == (3,)
    assert (s.test_scores >= 0.5).tolist() == [True, False, True]
    assert (s.details["examples"], s.details["examples_passed"]) == (1, 1)
    # the example weighs a test plus example_weight: with example_weight 0, still one test more
    assert coevo_default(p, out, examples=ex, example_weight=0.0).index == 1
    for m in ("max_pass", "codet", "b4", "consensus"):
        assert select(p, m, consensus=out, examples=ex).index == select(p, m, consensus=out).index
    assert select(np.hstack([p, ex]), "max_pass").index == 1
    with pytest.raises(ValueError, match="one row per code"):
        coevo_default(p, out, examples=np.ones((3, 1), dtype=bool))
    assert coevo_default(p, out, examples=np.zeros((2, 0), dtype=bool)).index == 0


def test_pool_without_tests():
    p = np.zeros((3, 0), dtype=bool)
    for m in METHODS:
        s = select(p, m)
        assert s.index == 0 and s.test_scores.shape == (0,)
    out = np.array([["1"], ["2"], ["2"]], dtype=object)
    assert select(p, "coevo", consensus=out).index == 1
    assert select(p, "consensus", consensus=out).index == 1


def pools():
    shapes = st.tuples(st.integers(1, 6), st.integers(0, 6), st.integers(0, 5))

    def build(shape):
        n, m, q = shape
        return st.tuples(arrays(bool, (n, m)),
                         arrays(object, (n, q), elements=st.sampled_from(["a", "b", "c", None])))
    return shapes.flatmap(build)


@FAST
@given(pools(), st.sampled_from(METHODS))
def test_every_method_returns_valid_scores(pool, method):
    p, out = pool
    s = select(p, method, consensus=out)
    n, m = p.shape
    assert 0 <= s.index < n
    assert s.code_scores.shape == (n,) and s.test_scores.shape == (m,)
    for x in (s.code_scores, s.test_scores):
        assert np.isfinite(x).all() and (x >= -1e-12).all() and (x <= 1 + 1e-12).all()
    assert s.to_json()["index"] == s.index


@FAST
@given(pools(), st.sampled_from(METHODS), st.randoms(use_true_random=False))
def test_choice_is_invariant_to_test_order(pool, method, rnd):
    p, out = pool
    cols = list(range(p.shape[1]))
    rnd.shuffle(cols)
    a = select(p, method, consensus=out)
    b = select(p[:, cols], method, consensus=out)
    assert a.index == b.index
    np.testing.assert_allclose(b.test_scores, a.test_scores[cols], atol=1e-9)


@FAST
@given(pools(), st.sampled_from(METHODS), st.randoms(use_true_random=False))
def test_choice_is_equivariant_in_code_order(pool, method, rnd):
    """Reordering the codes may change which of two tied codes is chosen, never how good the
    choice looks: the chosen code's score (and tests passed) stay the same, and the scores follow
    the codes."""
    p, out = pool
    rows = list(range(p.shape[0]))
    rnd.shuffle(rows)
    a = select(p, method, consensus=out)
    b = select(p[rows], method, consensus=out[rows])
    assert b.code_scores[b.index] == pytest.approx(a.code_scores[a.index], rel=1e-6, abs=1e-9)
    assert p[rows][b.index].sum() == p[a.index].sum()
    np.testing.assert_allclose(b.code_scores, a.code_scores[rows], rtol=1e-6, atol=1e-9)


@FAST
@given(pools(), st.data(), st.randoms(use_true_random=False))
def test_coevo_with_examples_is_valid_and_equivariant_in_code_order(pool, data, rnd):
    p, out = pool
    n, m = p.shape
    ex = data.draw(arrays(bool, (n, data.draw(st.integers(0, 3)))))
    a = coevo_default(p, out, examples=ex)
    assert a.code_scores.shape == (n,) and a.test_scores.shape == (m,)
    assert np.isfinite(a.code_scores).all() and ((a.test_scores >= 0) & (a.test_scores <= 1)).all()
    rows = list(range(n))
    rnd.shuffle(rows)
    b = coevo_default(p[rows], out[rows], examples=ex[rows])
    np.testing.assert_allclose(b.code_scores, a.code_scores[rows], rtol=1e-6, atol=1e-9)
    assert ex[rows][b.index].sum() == ex[a.index].sum() and p[rows][b.index].sum() == p[a.index].sum()


@FAST
@given(pools(), st.floats(0.0, 1.0), st.randoms(use_true_random=False))
def test_test_weights_bounds_and_order(pool, floor, rnd):
    p, out = pool
    codes = _encode_outputs(out, p.shape[0])
    w = weigh_tests(p, codes, floor)
    assert w.shape == p.shape
    assert ((w >= floor - 1e-12) & (w <= 1.0)).all()
    rows, cols = list(range(p.shape[0])), list(range(p.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    # codes in another order (with their outputs) and tests in another order: the same weights
    np.testing.assert_allclose(weigh_tests(p[rows][:, cols], codes[rows], floor), w[rows][:, cols])


@FAST
@given(arrays(bool, st.tuples(st.integers(1, 6), st.integers(1, 6))))
def test_a_code_passing_everything_wins_max_pass(p):
    p = np.vstack([p, np.ones((1, p.shape[1]), dtype=bool)])
    assert p[max_pass(p).index].all()


@FAST
@given(pools(), st.floats(0.0, 4.0), st.floats(0.5, 20.0))
def test_coevo_scores_never_move_the_choice_and_match_their_logits(pool, unseen_weight, scale):
    from matrix.calibration import LOGIT_CLIP, sigmoid

    p, out = pool
    raw = coevo_default(p, out, unseen_weight=0.0, evidence_scale=1.0)
    s = coevo_default(p, out, unseen_weight=unseen_weight, evidence_scale=scale)
    assert s.index == raw.index
    size = s.details["cluster_size"]
    assert s.code_scores[s.index] <= size / (size + unseen_weight) + 1e-9
    for score, logit in ((s.code_scores, s.code_logits), (s.test_scores, s.test_logits)):
        inside = np.abs(logit) < LOGIT_CLIP
        np.testing.assert_allclose(sigmoid(logit[inside]), score[inside], rtol=1e-6, atol=1e-9)


def test_a_tiny_unseen_weight_is_a_tiny_weight_not_an_error():
    # hypothesis found it: 5e-324 / cluster size underflowed to 0.0 and math.log raised
    p = np.array([[True, False], [True, False], [False, True]])
    tiny = coevo_default(p, None, unseen_weight=5e-324)
    none = coevo_default(p, None, unseen_weight=0.0)
    assert tiny.index == none.index
    np.testing.assert_allclose(tiny.code_scores, none.code_scores, atol=1e-12)


def test_without_evidence_the_first_plausible_candidate_is_picked():
    """Red-team pass 12: with no tests, examples or extra inputs, an empty answer (index 0) was
    picked and every candidate scored 0.75."""
    from matrix.selection import plausible, without_evidence

    codes = ["", "I cannot help with that.", "def f(x):\n    return x +", "def g(x):\n    return x\n",
             "def f(x):\n    return x + 1\n", "f = lambda x: x + 1\n", "from math import sqrt as f\n"]
    ok = [plausible(c, "f") for c in codes]
    assert ok == [False, False, False, False, True, True, True]
    assert plausible("print(input())\n") and not plausible("print(input()\n")
    sel = without_evidence(select(np.zeros((len(codes), 0), dtype=bool)), ok)
    assert sel.index == 4 and list(sel.code_scores[:4]) == [0, 0, 0, 0] and sel.code_scores[4] == pytest.approx(1 / 3)
    nothing = select(np.zeros((2, 0), dtype=bool))
    assert without_evidence(nothing, [False, False]) is nothing


def test_a_pool_that_fails_the_statements_examples_is_not_scored_as_right():
    """Three identical candidates pass the one generated test and fail the statement's one
    worked example (``add`` multiplying: ``add(2, 2) == 4`` passes, ``add(1, 2) == 3`` fails).
    The right program passes the example, so the hypothesis that no sample is right is the
    better supported one: under it the example passes (a test and ``example_weight`` more, 2.0 in
    the scores' units). They scored 0.75 each (3 / (3 + 1), as if the example did not count)."""
    p = np.ones((3, 1), dtype=bool)
    ex = np.zeros((3, 1), dtype=bool)
    s = coevo_default(p, examples=ex)
    assert s.details["examples_passed"] == 0
    want = 1 / (1 + math.exp(2.0) / 3)  # 3 / (3 + e^2): the unseen hypothesis weighs e^2 samples
    assert s.code_scores.tolist() == pytest.approx([want] * 3)
    assert s.details["unseen"] == pytest.approx(1 - want)
    # two examples failed: e^4 / 3 against one
    s2 = coevo_default(p, examples=np.zeros((3, 2), dtype=bool))
    assert s2.code_scores[0] == pytest.approx(1 / (1 + math.exp(4.0) / 3))
    # the same pool passing its example keeps c / (c + 1), and the choice never moves
    ok = coevo_default(p, examples=np.ones((3, 1), dtype=bool))
    assert ok.code_scores.tolist() == pytest.approx([0.75] * 3)
    assert s.index == ok.index == 0
    # a pool where another cluster passes the example: that cluster is chosen, the rest is as before
    q = np.array([[1], [1], [0]], dtype=bool)
    e = np.array([[0], [0], [1]], dtype=bool)
    t = coevo_default(q, examples=e)
    assert t.index == 2 and t.details["examples_passed"] == 1
