"""Evaluation metrics over execution matrices and selections. Pure functions; NaN means "undefined
for this input" (e.g. a true-positive rate without any positive), never 0.

* :func:`pass_at_k`: the unbiased estimator ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021),
  computed as a stable product; vectorised over arrays of ``n``/``c``.
* :func:`best_of_n_accuracy`: share of tasks whose selected candidate is correct.
* :func:`unit_test_accuracy`: share of generated tests that are correct (passed by every correct
  reference), the CURE metric; :func:`test_score_accuracy`: how well test *scores* (probability a
  test is correct) classify tests at a threshold.
* :func:`test_tpr_tnr`: the generated suite as a classifier of codes: TPR = share of correct codes
  that pass every generated test, TNR = share of wrong codes that fail at least one.
* :func:`mutation_score`: share of (behaviour-changing) mutants killed by the suite, counting only
  tests the reference passes (a test that fails the reference "kills" everything).
* :func:`hacking_gap`: mean over codes of (pass fraction on visible tests - pass fraction on held-out
  tests); a large positive gap means codes fit what they were shown (reward hacking).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from matrix.rewards import as_matrix

__all__ = [
    "best_of_n_accuracy",
    "hacking_gap",
    "mutation_score",
    "pass_at_k",
    "test_score_accuracy",
    "test_tpr_tnr",
    "unit_test_accuracy",
]


def pass_at_k(n, c, k):
    """Unbiased pass@k for ``n`` samples of which ``c`` are correct. Requires ``0 <= c <= n`` and
    ``1 <= k``; ``k > n`` is undefined (NaN). Scalars in, float out; arrays broadcast."""
    n_arr, c_arr, k_arr = np.broadcast_arrays(np.asarray(n), np.asarray(c), np.asarray(k))
    out = np.empty(n_arr.shape, dtype=float)
    for idx in np.ndindex(n_arr.shape):
        nn, cc, kk = int(n_arr[idx]), int(c_arr[idx]), int(k_arr[idx])
        if cc < 0 or cc > nn or kk < 1:
            raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1 (n={nn}, c={cc}, k={kk})")
        if kk > nn:
            out[idx] = np.nan
        elif nn - cc < kk:
            out[idx] = 1.0
        else:
            out[idx] = 1.0 - float(np.prod(1.0 - kk / np.arange(nn - cc + 1, nn + 1)))
    return float(out) if out.ndim == 0 else out


def best_of_n_accuracy(indices: Sequence[int], correct: Sequence[Sequence[bool]]) -> float:
    """Share of tasks whose chosen candidate (``indices[t]``) is correct (``correct[t]`` is the
    per-candidate correctness of task ``t``). NaN for no task."""
    if len(indices) != len(correct):
        raise ValueError("indices and correct must have one entry per task")
    if not len(indices):
        return float("nan")
    hits = [bool(np.asarray(c, dtype=bool)[int(i)]) for i, c in zip(indices, correct)]
    return float(np.mean(hits))


def unit_test_accuracy(test_correct, n_rejected: int = 0) -> float:
    """Share of generated tests that are correct (NaN without tests). ``test_correct`` is usually
    :func:`matrix.rewards.test_correct` of the generated tests against the reference solutions;
    ``n_rejected`` candidate tests the parser rejected (unparseable, duplicates) count as wrong."""
    t = np.asarray(test_correct, dtype=bool).reshape(-1)
    n = t.size + int(n_rejected)
    return float(t.sum() / n) if n else float("nan")


def test_score_accuracy(test_scores, test_correct, threshold: float = 0.5) -> float:
    """Accuracy of ``test_scores >= threshold`` as a prediction of ``test_correct``."""
    s = np.asarray(test_scores, dtype=float).reshape(-1)
    t = np.asarray(test_correct, dtype=bool).reshape(-1)
    if s.shape != t.shape:
        raise ValueError(f"{s.size} scores for {t.size} tests")
    return float(((s >= threshold) == t).mean()) if t.size else float("nan")


def test_tpr_tnr(passed_gen, code_correct) -> tuple[float, float]:
    """``(TPR, TNR)`` of the generated suite judging codes (module docstring). An empty suite
    accepts every code. NaN where there is no correct (TPR) or no wrong (TNR) code."""
    p = as_matrix(passed_gen, n_codes=len(np.asarray(code_correct).reshape(-1)))
    ok = np.asarray(code_correct, dtype=bool).reshape(-1)
    if ok.shape[0] != p.shape[0]:
        raise ValueError(f"code_correct has {ok.shape[0]} entries for {p.shape[0]} codes")
    accepted: np.ndarray = p.all(axis=1)  # type: ignore[assignment]  # of a 2-D p: an array, one per code
    tpr = float(accepted[ok].mean()) if ok.any() else float("nan")
    tnr = float((~accepted[~ok]).mean()) if (~ok).any() else float("nan")
    return tpr, tnr


def mutation_score(passed_mutants, reference_passed=None) -> float:
    """Share of mutants killed (failing at least one valid test). ``passed_mutants`` is
    ``(n_mutants, n_tests)``; ``reference_passed`` ``(n_tests,)`` marks the valid tests (those the
    reference passes; all tests when omitted). NaN without mutants; 0 without valid tests."""
    p = as_matrix(passed_mutants)
    if p.shape[0] == 0:
        return float("nan")
    if reference_passed is not None:
        valid = np.asarray(reference_passed, dtype=bool).reshape(-1)
        if valid.shape[0] != p.shape[1]:
            raise ValueError(f"reference_passed has {valid.shape[0]} entries for {p.shape[1]} tests")
        p = p[:, valid]
    if p.shape[1] == 0:
        return 0.0
    return float((~p.all(axis=1)).mean())


def hacking_gap(passed_visible, passed_heldout, *, per_code: bool = False):
    """Mean over codes of visible minus held-out pass fraction (``per_code=True``: the array).
    Both matrices have one row per code. NaN when either side has no test or there is no code."""
    v = np.asarray(passed_visible, dtype=bool)
    h = np.asarray(passed_heldout, dtype=bool)
    n = v.shape[0] if v.ndim == 2 else (h.shape[0] if h.ndim == 2 else 0)
    v = as_matrix(v, n_codes=n)
    h = as_matrix(h, n_codes=n)
    if v.shape[0] != h.shape[0]:
        raise ValueError(f"{v.shape[0]} codes on visible tests but {h.shape[0]} on held-out tests")
    if v.shape[1] == 0 or h.shape[1] == 0 or v.shape[0] == 0:
        gap = np.full(v.shape[0], np.nan)
    else:
        gap = v.mean(axis=1) - h.mean(axis=1)
    if per_code:
        return gap
    return float(gap.mean()) if gap.size else float("nan")


# names that start with "test" are not pytest tests
test_score_accuracy.__test__ = False  # type: ignore[attr-defined]
test_tpr_tnr.__test__ = False  # type: ignore[attr-defined]
