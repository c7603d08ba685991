"""Metrics on hand-worked inputs, plus hypothesis properties."""

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matrix.metrics import (
    best_of_n_accuracy,
    hacking_gap,
    mutation_score,
    pass_at_k,
    unit_test_accuracy,
)
from matrix.metrics import test_score_accuracy as score_accuracy
from matrix.metrics import test_tpr_tnr as tpr_tnr

FAST = settings(max_examples=60, deadline=None, database=None)


def test_pass_at_k_hand_values():
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)  # 1 - C(2,2)/C(4,2)
    assert pass_at_k(5, 4, 2) == 1.0  # fewer than k wrong samples
    assert math.isnan(pass_at_k(3, 1, 5))
    np.testing.assert_allclose(pass_at_k([10, 10], [3, 0], 1), [0.3, 0.0])
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


@FAST
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_enumeration(nck):
    n, c, k = nck
    samples = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    exact = sum(any(samples[i] for i in s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)
    if k < n:
        assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k) - 1e-12


def test_best_of_n_and_test_accuracy():
    assert best_of_n_accuracy([0, 1], [[True, False], [True, False]]) == 0.5
    assert math.isnan(best_of_n_accuracy([], []))
    with pytest.raises(ValueError):
        best_of_n_accuracy([0], [])
    assert unit_test_accuracy([True, True, False, False]) == 0.5
    assert math.isnan(unit_test_accuracy([]))
    assert unit_test_accuracy([True, True, False, False], n_rejected=4) == 0.25  # rejected count as wrong
    assert unit_test_accuracy([], n_rejected=2) == 0.0
    assert score_accuracy([0.9, 0.2, 0.6], [True, False, False]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        score_accuracy([0.9], [True, False])


def test_tpr_tnr():
    p = np.array([[1, 1], [1, 0], [1, 1], [0, 0]], dtype=bool)
    tpr, tnr = tpr_tnr(p, [True, True, False, False])
    assert tpr == 0.5 and tnr == 0.5
    tpr, tnr = tpr_tnr(p, [True] * 4)
    assert tpr == 0.5 and math.isnan(tnr)
    tpr, tnr = tpr_tnr(np.zeros((2, 0), dtype=bool), [True, False])  # empty suite accepts all
    assert tpr == 1.0 and tnr == 0.0


def test_mutation_score_counts_only_valid_tests():
    mutants = np.array([[1, 0, 1], [1, 1, 0], [1, 1, 1]], dtype=bool)
    assert mutation_score(mutants) == pytest.approx(2 / 3)
    # test 2 fails the reference: it does not count, so only mutant 0 is killed
    assert mutation_score(mutants, [True, True, False]) == pytest.approx(1 / 3)
    assert mutation_score(mutants, [False, False, False]) == 0.0
    assert math.isnan(mutation_score(np.zeros((0, 3), dtype=bool)))


def test_hacking_gap():
    visible = np.array([[1, 1], [1, 0]], dtype=bool)
    held = np.array([[0, 0, 1], [1, 1, 1]], dtype=bool)
    assert hacking_gap(visible, held) == pytest.approx(((1 - 1 / 3) + (0.5 - 1)) / 2)
    np.testing.assert_allclose(hacking_gap(visible, held, per_code=True), [2 / 3, -0.5])
    assert math.isnan(hacking_gap(visible, np.zeros((2, 0), dtype=bool)))
    with pytest.raises(ValueError):
        hacking_gap(visible, held[:1])
