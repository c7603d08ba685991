"""Rewards for the four roles, as pure functions over an execution matrix.

Conventions shared by every function here:

* ``passed`` matrices are boolean arrays of shape ``(n_codes, n_tests)``: ``passed[i, j]`` is True
  when code ``i`` passes test ``j``. ``passed_gt`` holds the ground-truth tests, ``passed_gen`` the
  generated (untrusted) ones. Any array-like of bools/0-1 values is accepted.
* **"No reward" is NaN.** A sample that cannot be rewarded (no ground-truth test to judge a code by,
  no correct code to judge a test by, an undefined solve rate) gets ``nan``; the loop drops NaN
  samples from their GRPO group before computing advantages. No function here returns a separate
  mask: ``np.isnan(r)`` is the mask.
* Rewards are returned as float64 arrays (the proposer reward as a float for scalar input).
  Normalisation across a GRPO group (z-scoring) belongs to ``training.advantages``, not here.

Coder
    ``coder_rewards(passed_gt, mode)``: ``"fraction"`` of ground-truth tests passed (CURE), or
    ``"binary"`` all-pass (GRPO+ / DeepCoder, the default). ``coder_rewards_labelfree`` replaces the
    ground truth by generated tests weighted by their estimated reliability.

Tester (CURE's *reward precision*)
    A code is correct when it passes every ground-truth test (:func:`code_correct`); a generated test
    is correct when every correct code passes it (:func:`test_correct`). With ``n_wrong`` wrong codes,
    of which ``wrong_pass[k]`` pass test ``k``, the raw reward is

        R_k = [test k correct] * n_wrong - wrong_pass[k]

    i.e. a correct test earns the number of wrong codes it rejects, an incorrect test loses the number
    of wrong codes it lets through. ``normalize=True`` (default) divides by ``n_wrong``, giving the
    fractions ``R_k / n_wrong`` in ``[-1, 1]``. CURE's figure (3 correct and 3 wrong codes) yields
    +3, +2, +1, 0, 0, -1 before normalisation (``tests/test_rewards.py`` reproduces it).

    Edge cases (decided here):

    * no correct code: the correctness of a test is undefined, so every tester sample gets NaN
      ("no tester samples", as in CURE);
    * every code correct (``n_wrong == 0``): no test can show that it discriminates, so a correct
      test gets 0; a test that rejects a correct code is demonstrably wrong and gets -1
      (``all_correct="penalize"``, the default). The counting formula above gives 0 to every test
      in this case (a zero-variance group, dropped); ``all_correct="zero"`` reproduces that.
      CURE's released code (``optimization/reward.py``) gives the sign alone here, +1 for a right
      test and -1 for a wrong one: ``penalize`` is ``(sign - 1) / 2``, an affine image, so the two
      z-score to the same advantages (``tests/test_rewards.py`` checks both cases against it).

    A Tester *sample* writes a suite of tests; :func:`tester_suite_reward` turns the per-test
    rewards into the sample's reward. Per test: the precision above plus ``accuracy_weight`` for a
    right test and minus it for a wrong one, so that a wrong test rejected by every code (0 under
    CURE) still costs something (``credit="discriminating"`` pays only right tests that reject
    some wrong program); each rejected candidate (an unparseable assert, a duplicate, one that never
    calls the function) costs ``-(1 + accuracy_weight)``, the worst a test can score, so garbage
    cannot hide wrong tests. ``aggregate="sum"`` (default) makes each extra test worth writing only
    when it is likely right; ``"mean"`` is the plain CURE average over the suite.

    ``bidirectional_scores`` is the label-free mode: code and test scores refined jointly to a fixed
    point from pass counts (the CoSPlay idea), usable as test weights for
    ``coder_rewards_labelfree`` and as soft tester rewards.

Fixer
    ``repair_episode_rewards`` (RLEF, the default): one reward per multi-turn repair episode, +1
    when its final program passes every ground-truth test (public and hidden), else -1, less
    ``invalid_penalty`` (0.2) for each turn whose completion held no valid program.
    ``fixer_rewards`` (single-turn gain): change in pass fraction from the broken code to the
    repaired one, plus ``full_pass_bonus`` (default 1) when the repair passes every test; range
    ``[-1, 2]``.

Proposer (Absolute Zero, with graded penalties and R-Zero's repetition penalty)
    ``proposer_rewards``: learnability ``1 - r`` for a solve rate ``0 < r < 1``, else 0, plus
    ``valid_bonus`` for any valid task; -0.25 for a task whose reference runs but that teaches
    nothing new (``runs``: a constant or identity function, a held-out task), -0.5 for a
    well-formed but broken task, -1 for a malformed one. ``proposer_batch_rewards`` takes one
    grade per proposal (:data:`PROPOSAL_REWARDS`: a ``copy`` of a known task or of another
    proposal of the batch costs as much as a broken task, so that copying is never the easy step
    up from garbage) and takes R-Zero's repetition penalty off the valid proposals:
    ``weight * (|C| - 1) / (n - 1)`` for a proposal whose cluster ``C`` (equal keys) holds other
    proposals of the ``n`` in the batch, floored at 0.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_matrix",
    "bidirectional_scores",
    "code_correct",
    "coder_rewards",
    "coder_rewards_labelfree",
    "fixer_rewards",
    "repair_episode_rewards",
    "proposer_batch_rewards",
    "proposer_rewards",
    "test_correct",
    "tester_rewards",
    "tester_rewards_labelfree",
    "tester_suite_reward",
]

CODER_MODES = ("binary", "fraction")
TESTER_CREDITS = ("correct", "discriminating")  # tester_suite_reward(credit=)
TESTER_AGGREGATES = ("sum", "mean")  # tester_suite_reward(aggregate=)


def as_matrix(passed, n_codes: int | None = None) -> np.ndarray:
    """``passed`` as a 2-D boolean array. A 1-D input is read as one code's row unless ``n_codes``
    says otherwise; an empty list becomes shape ``(n_codes or 0, 0)``."""
    arr = np.asarray(passed)
    if arr.size == 0:
        rows = n_codes if n_codes is not None else (arr.shape[0] if arr.ndim == 2 else 0)
        return np.zeros((rows, 0), dtype=bool)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1) if n_codes in (None, 1) else arr.reshape(n_codes, -1)
    if arr.ndim != 2:
        raise ValueError(f"a pass matrix must be 2-D (codes x tests), got shape {arr.shape}")
    if arr.dtype != bool:
        if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
            raise ValueError("a pass matrix cannot contain NaN")
        arr = arr.astype(bool)
    return arr


# ----------------------------------------------------------------------------- labels


def code_correct(passed_gt) -> np.ndarray:
    """Codes that pass every ground-truth test. Without any ground-truth test no code is *known* to
    be correct, so the answer is all False (not the vacuous all True of ``np.all``)."""
    p = as_matrix(passed_gt)
    if p.shape[1] == 0:
        return np.zeros(p.shape[0], dtype=bool)
    return np.asarray(p.all(axis=1), dtype=bool)


def test_correct(passed_gen, code_correct) -> np.ndarray:
    """Tests passed by every correct code. Without a correct code a test's correctness is undefined;
    the answer is then all False (and :func:`tester_rewards` returns NaN)."""
    p = as_matrix(passed_gen)
    ok = np.asarray(code_correct, dtype=bool).reshape(-1)
    if ok.shape[0] != p.shape[0]:
        raise ValueError(f"code_correct has {ok.shape[0]} entries for {p.shape[0]} codes")
    if not ok.any():
        return np.zeros(p.shape[1], dtype=bool)
    return p[ok].all(axis=0)


# ----------------------------------------------------------------------------- coder


def coder_rewards(passed_gt, mode: str = "binary") -> np.ndarray:
    """Per-code reward from the ground-truth tests: ``"binary"`` (1 when every test passes, else 0;
    GRPO+) or ``"fraction"`` (share of tests passed; CURE). NaN for every code when there is no
    ground-truth test."""
    if mode not in CODER_MODES:
        raise ValueError(f"mode must be one of {CODER_MODES}, got {mode!r}")
    p = as_matrix(passed_gt)
    if p.shape[1] == 0:
        return np.full(p.shape[0], np.nan)
    if mode == "binary":
        return p.all(axis=1).astype(float)
    return p.mean(axis=1)


def coder_rewards_labelfree(passed_gen, test_weights=None, *, mode: str = "fraction",
                            reliable: float = 0.5) -> np.ndarray:
    """Label-free coder reward from generated tests weighted by their estimated reliability.

    ``"fraction"`` (default): the reliability-weighted share of tests passed,
    ``sum_j w_j p_ij / sum_j w_j``. ``"binary"``: 1 when the code passes every *reliable* test
    (weight >= ``reliable``), else 0. ``test_weights`` in ``[0, 1]`` default to the test scores of
    :func:`bidirectional_scores`. NaN for every code when no test carries weight (or, in binary
    mode, none is reliable)."""
    if mode not in CODER_MODES:
        raise ValueError(f"mode must be one of {CODER_MODES}, got {mode!r}")
    p = as_matrix(passed_gen)
    if test_weights is None:
        test_weights = bidirectional_scores(p)[1]
    w = np.asarray(test_weights, dtype=float).reshape(-1)
    if w.shape[0] != p.shape[1]:
        raise ValueError(f"test_weights has {w.shape[0]} entries for {p.shape[1]} tests")
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("test_weights must be finite and non-negative")
    if mode == "binary":
        keep = w >= reliable
        if not keep.any():
            return np.full(p.shape[0], np.nan)
        return p[:, keep].all(axis=1).astype(float)
    total = w.sum()
    if total <= 0:
        return np.full(p.shape[0], np.nan)
    return p.astype(float) @ w / total


# ----------------------------------------------------------------------------- tester

ALL_CORRECT_POLICIES = ("penalize", "zero")


def tester_rewards(passed_gen, code_correct, *, normalize: bool = True,
                   all_correct: str = "penalize") -> np.ndarray:
    """CURE's reward precision for each generated test (see the module docstring for the formula and
    the edge cases). ``passed_gen`` is ``(n_codes, n_tests)``; ``code_correct`` is ``(n_codes,)``,
    usually :func:`code_correct` of the ground-truth block."""
    if all_correct not in ALL_CORRECT_POLICIES:
        raise ValueError(f"all_correct must be one of {ALL_CORRECT_POLICIES}, got {all_correct!r}")
    p = as_matrix(passed_gen)
    ok = np.asarray(code_correct, dtype=bool).reshape(-1)
    if ok.shape[0] != p.shape[0]:
        raise ValueError(f"code_correct has {ok.shape[0]} entries for {p.shape[0]} codes")
    m = p.shape[1]
    if not ok.any():
        return np.full(m, np.nan)
    good = p[ok].all(axis=0)
    n_wrong = int((~ok).sum())
    if n_wrong == 0:
        if all_correct == "zero":
            return np.zeros(m)
        return np.where(good, 0.0, -1.0)
    wrong_pass = p[~ok].sum(axis=0).astype(float)
    raw = good * float(n_wrong) - wrong_pass
    return raw / n_wrong if normalize else raw


def tester_suite_reward(test_rewards, tests_correct=None, n_rejected: int = 0, *,
                        accuracy_weight: float = 0.0, credit: str = "correct",
                        aggregate: str = "sum") -> float:
    """One Tester sample's reward from the rewards of its tests (see the module docstring).

    ``test_rewards``: the sample's per-test rewards (a slice of :func:`tester_rewards`);
    ``tests_correct``: whether each test is correct (needed when ``accuracy_weight`` > 0);
    ``n_rejected``: candidate tests the parser rejected. Per test, ``accuracy_weight`` is added
    for a right test and subtracted for a wrong one (``credit="correct"``, default); with
    ``credit="discriminating"`` a right test earns it only when it rejects some wrong program (its
    precision is > 0), so a trivially right test (``f([]) == 0``, passed by every program) earns
    nothing extra. NaN when any test reward is NaN (the task cannot
    judge tests); ``-(1 + accuracy_weight)`` for a sample with no test at all."""
    if aggregate not in TESTER_AGGREGATES:
        raise ValueError(f"aggregate must be one of {TESTER_AGGREGATES}, got {aggregate!r}")
    if credit not in TESTER_CREDITS:
        raise ValueError(f"credit must be one of {TESTER_CREDITS}, got {credit!r}")
    r = np.asarray(test_rewards, dtype=float).reshape(-1)
    if np.isnan(r).any():
        return float("nan")
    worst = -(1.0 + accuracy_weight)
    if accuracy_weight:
        ok = np.asarray(tests_correct, dtype=bool).reshape(-1)
        if ok.shape != r.shape:
            raise ValueError(f"tests_correct has {ok.shape[0]} entries for {r.shape[0]} tests")
        earns = ok & (r > 0) if credit == "discriminating" else ok
        r = r + accuracy_weight * np.where(earns, 1.0, np.where(ok, 0.0, -1.0))
    if n_rejected < 0:
        raise ValueError("n_rejected must be >= 0")
    parts = np.concatenate([r, np.full(int(n_rejected), worst)])
    if parts.size == 0:
        return worst
    return float(parts.sum() if aggregate == "sum" else parts.mean())


def tester_rewards_labelfree(passed_gen, **kwargs) -> np.ndarray:
    """Label-free tester reward: the test score of :func:`bidirectional_scores` mapped to
    ``[-1, 1]`` (``2 * score - 1``). Keyword arguments go to :func:`bidirectional_scores`."""
    _, t = bidirectional_scores(passed_gen, **kwargs)
    return 2.0 * t - 1.0


# ----------------------------------------------------------------------------- bidirectional


def bidirectional_scores(passed, *, iters: int = 200, tol: float = 1e-10,
                         prior: float = 0.5, strength: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Code and test scores in ``[0, 1]`` refined jointly from pass counts (CoSPlay's idea).

    Starting from uniform code scores ``c``, alternate

        t_j = (sum_i c_i p_ij + strength * prior) / (sum_i c_i + strength)
        c_i = (sum_j t_j p_ij + strength * prior) / (sum_j t_j + strength)

    until neither moves by more than ``tol``: a test is as credible as the codes that pass it, a code
    as credible as the tests it passes. ``strength`` pseudo-observations at ``prior`` keep the map
    smooth (and the scores defined when nothing passes). Without smoothing the fixed point is the
    principal singular pair of the pass matrix (the power iteration on ``P P^T`` converges because
    that matrix is positive semi-definite); the smoothing is a contraction toward ``prior``.
    Empty dimensions give empty score arrays."""
    p = as_matrix(passed).astype(float)
    n, m = p.shape
    if n == 0 or m == 0:
        return np.full(n, prior, dtype=float), np.full(m, prior, dtype=float)
    c = np.ones(n)
    t = np.full(m, prior)
    for _ in range(max(1, iters)):
        t_new = (c @ p + strength * prior) / (c.sum() + strength)
        c_new = (p @ t_new + strength * prior) / (t_new.sum() + strength)
        delta = max(np.abs(c_new - c).max(), np.abs(t_new - t).max())
        c, t = c_new, t_new
        if delta <= tol:
            break
    return np.clip(c, 0.0, 1.0), np.clip(t, 0.0, 1.0)


# names that start with "test" are not pytest tests
test_correct.__test__ = False  # type: ignore[attr-defined]
tester_rewards.__test__ = False  # type: ignore[attr-defined]
tester_rewards_labelfree.__test__ = False  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- fixer


def fixer_rewards(before_frac, after_frac, after_all_pass=None, *,
                  full_pass_bonus: float = 1.0) -> np.ndarray:
    """Repair reward ``(after - before) + full_pass_bonus * [after passes every test]``.

    ``before_frac`` / ``after_frac`` are pass fractions in ``[0, 1]`` of the broken and the repaired
    code on the same tests; ``after_all_pass`` defaults to ``after_frac == 1``. NaN inputs (nothing
    to judge by) give NaN."""
    before = np.asarray(before_frac, dtype=float)
    after = np.asarray(after_frac, dtype=float)
    before, after = np.broadcast_arrays(before, after)
    for name, arr in (("before_frac", before), ("after_frac", after)):
        finite = arr[np.isfinite(arr)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ValueError(f"{name} must lie in [0, 1]")
    if after_all_pass is None:
        full = after >= 1.0
    else:
        full = np.broadcast_to(np.asarray(after_all_pass, dtype=bool), after.shape)
    reward = (after - before) + full_pass_bonus * full.astype(float)
    reward = np.where(np.isnan(before) | np.isnan(after), np.nan, reward)
    return np.atleast_1d(reward.astype(float))


def repair_episode_rewards(solved, invalid_turns, *, success: float = 1.0, failure: float = -1.0,
                           invalid_penalty: float = 0.2) -> np.ndarray:
    """RLEF's trajectory-level reward of repair episodes: ``success`` when the episode's final
    program passes every ground-truth test (public and hidden), else ``failure``, minus
    ``invalid_penalty`` times the number of turns whose completion held no valid program.

    ``solved``: bools, one per episode; ``invalid_turns``: non-negative counts. NaN in
    ``invalid_turns`` (an episode that could not be judged) gives NaN."""
    ok = np.atleast_1d(np.asarray(solved, dtype=bool))
    bad = np.atleast_1d(np.asarray(invalid_turns, dtype=float))
    ok, bad = np.broadcast_arrays(ok, bad)
    if (bad[np.isfinite(bad)] < 0).any():
        raise ValueError("invalid_turns must be >= 0")
    if invalid_penalty < 0:
        raise ValueError("invalid_penalty must be >= 0")
    return np.where(ok, float(success), float(failure)) - invalid_penalty * bad


# ----------------------------------------------------------------------------- proposer

DEGENERATE_REWARD = -0.25
INVALID_REWARD = -0.5
COPY_REWARD = -0.5
MALFORMED_REWARD = -1.0
# the reward of each rejected grade; "valid" is rewarded by learnability (proposer_rewards)
PROPOSAL_REWARDS = {"degenerate": DEGENERATE_REWARD, "copy": COPY_REWARD, "broken": INVALID_REWARD,
                    "malformed": MALFORMED_REWARD}
PROPOSAL_GRADES = ("valid", *PROPOSAL_REWARDS)


def proposer_rewards(solve_rate, valid=True, wellformed=True, runs=False, *, valid_bonus: float = 0.0):
    """Absolute Zero's proposer reward with graded penalties. ``solve_rate`` in ``[0, 1]`` (share
    of solver samples that solved the proposed task): learnability ``1 - r`` when ``0 < r < 1``,
    else 0, plus ``valid_bonus`` for any valid task. A malformed proposal (``wellformed`` False)
    gets -1; a well-formed but invalid one (``valid`` False) -0.5 (fails to run, non-deterministic,
    forbidden modules), or -0.25 when ``runs`` (its reference ran deterministically, but the task
    is constant, an identity, held out), whatever the solve rate. A NaN solve rate of a valid
    proposal gives NaN. Scalars in, float out; arrays in, array out."""
    if valid_bonus < 0:
        raise ValueError("valid_bonus must be >= 0")
    r = np.asarray(solve_rate, dtype=float)
    v = np.asarray(valid, dtype=bool)
    w = np.asarray(wellformed, dtype=bool)
    x = np.asarray(runs, dtype=bool)
    r, v, w, x = np.broadcast_arrays(r, v, w, x)
    finite = r[np.isfinite(r)]
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise ValueError("solve_rate must lie in [0, 1]")
    learn = np.where((r > 0) & (r < 1), 1.0 - r, 0.0) + valid_bonus
    learn = np.where(np.isnan(r), np.nan, learn)
    invalid = np.where(x, DEGENERATE_REWARD, INVALID_REWARD)
    out = np.where(~w, MALFORMED_REWARD, np.where(~v, invalid, learn))
    if out.ndim == 0:
        return float(out)
    return out.astype(float)


def proposer_batch_rewards(solve_rates, grades, keys=None, repetition_weight=0.0, *, valid_bonus: float = 0.0):
    """Rewards of one batch of proposals (one GRPO group).

    ``grades[i]`` in :data:`PROPOSAL_GRADES`; ``solve_rates[i]`` is used for ``"valid"`` ones only
    (NaN elsewhere is fine): learnability plus ``valid_bonus`` (:func:`proposer_rewards`); a
    rejected grade gets its :data:`PROPOSAL_REWARDS`. ``keys[i]`` (any hashable, ``None`` =
    unique) clusters the batch: a valid proposal sharing its key with ``k`` others of the ``n``
    loses ``repetition_weight * k / (n - 1)`` (R-Zero), floored at 0, so a batch that repeats one
    task earns less than one that spreads. Returns a float array of length ``n``."""
    grades = list(grades)
    n = len(grades)
    rates = np.broadcast_to(np.asarray(solve_rates, dtype=float), (n,))
    bad = [g for g in grades if g not in PROPOSAL_GRADES]
    if bad:
        raise ValueError(f"unknown grade {bad[0]!r}; expected one of {PROPOSAL_GRADES}")
    if repetition_weight < 0:
        raise ValueError("repetition_weight must be >= 0")
    valid = np.array([g == "valid" for g in grades], dtype=bool)
    learn = np.atleast_1d(proposer_rewards(np.where(valid, rates, 0.0), valid_bonus=valid_bonus))
    out = np.array([learn[i] if valid[i] else PROPOSAL_REWARDS[g] for i, g in enumerate(grades)], dtype=float)
    if keys is not None and n > 1 and repetition_weight > 0:
        keys = list(keys)
        if len(keys) != n:
            raise ValueError("keys must have one entry per proposal")
        for i in np.flatnonzero(valid):
            if keys[i] is None:
                continue
            others = sum(1 for j, k in enumerate(keys) if j != i and k == keys[i])
            if others and np.isfinite(out[i]):
                out[i] = max(0.0, out[i] - repetition_weight * others / (n - 1))
    return out
