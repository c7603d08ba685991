"""Test-time selection: pick the program most likely to be correct when neither the candidate codes
nor the tests can be trusted. Pure functions over numpy arrays.

Inputs
    ``passed``: ``(n_codes, n_tests)`` booleans, code ``i`` passes test ``j``.
    ``consensus`` (optional): ``(n_codes, n_inputs)`` array of hashable output keys of every code on
    extra inputs (see :func:`matrix.inputs.output_keys`); ``None`` marks an error, timeout or other
    abstention. Keys are only compared for equality within a column.

Every method returns a :class:`Selection`: the chosen ``index``, ``code_scores`` and ``test_scores``
in ``[0, 1]``, the same scores as log-odds (``code_logits``, ``test_logits``: for the posterior
methods ``coevo`` and ``b4`` computed in log space, so that scores a float rounds to 1.0 keep their
order; calibration maps take them, :mod:`matrix.calibration`) and a ``details`` dict. Ties are
broken deterministically: higher score, then larger group, then the lowest index (so callers should
not order candidates by a prior belief they do not want to leak in).

Methods
    ``max_pass``
        the code passing the most tests.
    ``codet`` (CodeT dual agreement)
        codes grouped by the exact set of tests they pass; a group scores
        ``#tests passed x #codes in the group``.
    ``b4`` (Chen et al. 2024)
        MAP over "passing states": each group with pass pattern ``y`` is the hypothesis "these
        codes are the correct ones and exactly the tests in ``y`` are correct"; its log posterior is

            betaln(|x| + a, n - |x| + 1) + betaln(|y| + a, m - |y| + 1)
            + betaln(k1 + 1, N1 - k1 + 1) + betaln(k0 + 1, N0 - k0 + beta0)

        where ``k1`` of the ``N1`` (wrong code, correct test) cells pass and ``k0`` of the ``N0``
        (wrong code, wrong test) cells pass; ``beta0`` encodes the prior that wrong code rarely
        passes wrong tests. Defaults ``a = 1e3``, ``beta0 = 1e4`` as in the B4 paper's grid.
    ``consensus`` (MBR-exec style output-consensus clustering)
        codes clustered by identical outputs on the extra inputs; the largest cluster wins, ties
        broken by tests passed; within the cluster, the code passing most tests.
    ``coevo`` (the default)
        a posterior over behaviour clusters (codes with identical pass rows *and* identical outputs
        on the extra inputs). The log score of "cluster k is the correct behaviour" adds

        * ``pass_weight`` per test k passes, times the test's weight: tests are far more often right
          than wrong, so the number of tests passed leads (CURE's analysis: best-of-N by pass count
          is reliable when mu > 0), and ``size_weight * log |k|``. A test weighs, for k, the
          information of the value it asserts given k's habits: ``-log2`` of the share of k's own
          outputs on the extra inputs that equal it, capped at one bit and at least
          ``min_test_weight``. A program answering ``False`` (or ``0``, ``[]``) almost everywhere
          passes the tests asserting that value whatever their inputs, so they prove little about
          it (see :func:`weigh_tests`). Only contested tests are weighed so: one passed by more
          than ``contested_share`` (2/3) of the codes tells no hypothesis from another, whatever
          the habits, and weighs 1 (HumanEval/146: the reference, leading by one test, lost to a
          decoy because three tests every code passed asserted its usual 0). The weights discount
          at most ``max_test_discount`` (2) tests in all: a correct program can lean to one answer
          too (a predicate on inputs that mostly satisfy it), so habits settle ties and near ties;
        * ``example_weight`` per worked example of the task's statement passed (``examples``,
          :func:`matrix.statement_examples.prompt_examples`), on top of counting each as a test: the
          statement's author wrote them, so they are trusted more than generated tests (not
          blindly: HumanEval/47's docstring is wrong);
        * B4's corroboration terms over the *other* behaviours, one row each: how often they pass
          the tests k passes (Beta(1, 1)) and the tests k fails (Beta(1, beta0): wrong programs
          rarely pass wrong tests; ``beta0`` 20, where B4 uses 1e4: a tester's misconception is
          often shared by wrong programs);
        * ``consensus_weight`` times the outputs' likelihood: each other distinct behaviour has its
          own rates (Dirichlet(1, 1, 1)) of agreeing with k, abstaining (error / timeout) and
          answering otherwise, and each other answer is one specific value (``log(novel)``). A
          program that agrees with k on most inputs supports k, a constant or crashing program
          supports nothing much; k itself abstaining where most programs return a value costs
          ``log(abstain)``. A behaviour shared by ``c`` codes weighs ``1 + log(c)``: duplicates are
          evidence (correct samples recur) but not independent witnesses (mutants coincide).
          Beyond ``consensus_inputs`` (28) extra inputs this evidence is scaled down to that many
          inputs' worth, so drawing more inputs does not let the outputs outweigh the tests
          (two sets of full-MBPP pools, 64 inputs instead of 24: accuracy fell 2.5 and 1.2
          points unscaled, 0.4 and 0 scaled).

        Tuned on MBPP pools (``benchmarks/selection.py``) and checked on pools of other seeds, on
        HumanEval pools and on stdio pools: the pass count settles most tasks, corroboration and
        output agreement settle ties and near ties, and the test weights settle most ties with a
        degenerate decoy (a predicate leaning to one answer, a function that often returns 0).

        The scores. Those log scores are weighed to rank the clusters; read as probabilities they
        are far too sure (the demo model's held-out pools: 54 of 64 picks scored >= 0.99 and only 30
        of those were right; up to one kept test in eleven was wrong). So the scores, not the
        choice, read the same evidence in units of one test passed (``evidence_scale`` = 11.5,
        the pass weight: a cluster passing one test more is e times as likely) and add a
        hypothesis the clusters lack, that *no* sample is correct: as well supported by the tests
        as the best cluster, and passing the statement's worked examples that cluster fails (a right
        program passes them), but no sample behaves so, it weighs as ``unseen_weight`` (1) sample
        against the best cluster's ``c`` samples; under it a test is right with the smoothed share
        of codes passing it, ``(passes + 1) / (n + 2)``. Test scores are the probability that the
        correct behaviour passes each test, ``sum_k P(k | data) * passes_k(test) + P(none) *
        share(test)``; code scores are the posterior of the code's cluster (at most ``c / (c +
        1)``: eight samples that agree are not 99% sure). Fitted on the demo model's pools of its
        800 training tasks, checked on its held-out tasks (README, "Select the right program among
        candidates").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from matrix.rewards import as_matrix

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "Selection",
    "b4",
    "codet",
    "coevo_default",
    "max_pass",
    "output_consensus",
    "plausible",
    "select",
    "select_plausible",
    "weigh_tests",
]

METHODS = ("coevo", "b4", "codet", "max_pass", "consensus")
EXAMPLE_WEIGHT = 11.5  # coevo's extra log-odds per worked example passed (on top of a test's)
DEFAULT_METHOD = "coevo"
_ALIASES = {"max-pass": "max_pass", "maxpass": "max_pass", "output_consensus": "consensus",
            "output-consensus": "consensus", "mbr_exec": "consensus", "mbr-exec": "consensus",
            "default": "coevo", "coevo_default": "coevo", "dual_agreement": "codet"}


@dataclass
class Selection:
    index: int
    code_scores: np.ndarray
    test_scores: np.ndarray
    method: str
    details: dict[str, Any] = field(default_factory=dict)
    code_logits: np.ndarray | None = None  # log-odds of code_scores (None: computed from them)
    test_logits: np.ndarray | None = None

    def __post_init__(self):
        from matrix.calibration import logit

        if self.code_logits is None:
            self.code_logits = logit(np.asarray(self.code_scores, dtype=float))
        if self.test_logits is None:
            self.test_logits = logit(np.asarray(self.test_scores, dtype=float))

    @property
    def logit(self) -> float:
        """Log-odds of the chosen program's score."""
        return float(self.code_logits[self.index])  # type: ignore[index]  # set in __post_init__

    def to_json(self) -> dict[str, Any]:
        return {"index": int(self.index), "method": self.method,
                "code_scores": [round(float(x), 6) for x in self.code_scores],
                "test_scores": [round(float(x), 6) for x in self.test_scores]}


def canonical_method(method: str) -> str:
    name = _ALIASES.get(method, method)
    if name not in METHODS:
        raise ValueError(f"unknown selection method {method!r}; choose from {', '.join(METHODS)}")
    return name


def select(passed, method: str = DEFAULT_METHOD, consensus=None, examples=None, **kwargs) -> Selection:
    """Dispatch to one method by name (see :data:`METHODS`). ``consensus`` is used by ``coevo`` and
    ``consensus``, ``examples`` by ``coevo``; the others ignore them, as their definitions do.

    ``examples`` (optional): ``(n_codes, n_examples)`` booleans, code ``i`` passes worked example
    ``j`` of the task's statement (:func:`matrix.statement_examples.prompt_examples`). A caller who wants
    every method to see them appends them to ``passed`` instead (then they are tests like any other,
    with test scores of their own)."""
    name = canonical_method(method)
    p = _check(passed)
    if name == "max_pass":
        return max_pass(p, **kwargs)
    if name == "codet":
        return codet(p, **kwargs)
    if name == "b4":
        return b4(p, **kwargs)
    if name == "consensus":
        return output_consensus(p, consensus, **kwargs)
    return coevo_default(p, consensus, examples=examples, **kwargs)


def _examples(examples, n: int) -> np.ndarray:
    if examples is None:
        return np.zeros((n, 0), dtype=bool)
    ex = as_matrix(examples)
    if ex.size == 0:
        return np.zeros((n, 0), dtype=bool)
    if ex.shape[0] != n:
        raise ValueError(f"examples must have one row per code ({n}), got {ex.shape[0]}")
    return ex


# ----------------------------------------------------------------------------- helpers


def _check(passed) -> np.ndarray:
    p = as_matrix(passed)
    if p.shape[0] == 0:
        raise ValueError("cannot select from an empty pool (no candidate code)")
    return p


def _groups(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group identical rows: ``(labels (n,), first index of each group)``; groups are numbered in
    the order of their first member."""
    n = rows.shape[0]
    if rows.shape[1] == 0:
        return np.zeros(n, dtype=int), np.array([0])
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first)  # renumber groups by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse], first[order]


def _best(scores: np.ndarray, sizes: np.ndarray, firsts: np.ndarray) -> int:
    """Index (into the group arrays) of the best group: score, then size, then lowest first index.
    Scores equal to 9 decimals tie (sums in another order must not break a tie)."""
    order = np.lexsort((firsts, -sizes, -np.round(scores, 9)))
    return int(order[0])


def _betaln(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    lg = np.vectorize(math.lgamma, otypes=[float])
    return lg(a) + lg(b) - lg(a + b)


def _encode_outputs(consensus, n: int) -> np.ndarray:
    """Integer codes: equal keys -> equal codes (across columns too), ``None`` (abstention) -> -1."""
    arr = np.asarray(consensus, dtype=object)
    if arr.size == 0:
        return np.zeros((n, 0), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"consensus must have shape ({n}, n_inputs), got {arr.shape}")
    out = np.empty(arr.shape, dtype=np.int64)
    seen: dict[Any, int] = {}
    for j in range(arr.shape[1]):
        for i in range(n):
            v = arr[i, j]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out[i, j] = -1
            else:
                out[i, j] = seen.setdefault(v, len(seen))
    return out


def weigh_tests(passed, codes: np.ndarray, floor: float = 0.3) -> np.ndarray:
    """How much passing each test proves for each code, ``(n_codes, n_tests)`` in ``[floor, 1]``:
    the information (bits) of the value the test asserts *for that program*, ``-log2`` of the
    share of the program's own defined outputs in ``codes`` (integer-encoded outputs on the extra
    inputs, see :func:`_encode_outputs`) that equal it, capped at 1. A program that returns
    ``False`` (or ``0``, ``[]``) almost everywhere would pass a test asserting that value whatever
    the test's input, so passing it proves little about the program.

    A test's asserted value is read off the input column whose outputs split the codes exactly as
    the test does (the passing codes all return one value there, and no other code returns it);
    the extra inputs include the tests' own calls. A test no code passes, or whose split matches no
    column (an approximate comparison, a call that is not a literal), weighs 1, and so does every
    test for a program without a defined output; where several columns split the codes alike, the
    first counts (the tests' own calls come first among the extra inputs)."""
    p = as_matrix(passed)
    n, m = p.shape
    weights = np.ones((n, m))
    if m == 0 or codes.size == 0 or codes.max() < 0:
        return weights
    asserted = np.full(m, -1)  # per test: the value it asserts (-1: unknown)
    for j in range(m):
        passers = p[:, j]
        if passers.any():
            first = codes[passers][0]  # each column's value at the first passing code
            uniform = (codes[passers] == first).all(axis=0) & (first >= 0)
            exact = uniform & ((codes == first[None, :]) == passers[:, None]).all(axis=0)
            if exact.any():
                asserted[j] = first[np.argmax(exact)]
    known = np.flatnonzero(asserted >= 0)
    top = int(codes.max()) + 1
    for i in range(n):
        own = codes[i][codes[i] >= 0]
        if own.size == 0:
            continue
        share = np.bincount(own, minlength=top)[asserted[known]] / own.size
        with np.errstate(divide="ignore"):
            bits = -np.log2(share)  # a value the program never returns: inf, capped to 1
        weights[i, known] = np.clip(bits, floor, 1.0)
    return weights


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max()
    e = np.exp(z)
    return e / e.sum()


def _lse(x: np.ndarray) -> float:
    if not x.size:
        return -math.inf
    top = float(x.max())
    return top + math.log(float(np.exp(x - top).sum()))


def _posterior_logits(logs: np.ndarray, labels: np.ndarray, reps: np.ndarray, unseen: float | None = None,
                      share: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Log-odds, in log space, of each code's cluster posterior (``softmax(logs)``) and of each
    test's score (the posterior mass of the clusters passing it; ``reps`` one pass row per
    cluster), clipped to +-``matrix.calibration.LOGIT_CLIP``. ``unseen`` is the log score of a
    hypothesis no code belongs to, which passes test ``j`` with probability ``share[j]`` (in
    (0, 1))."""
    from matrix.calibration import LOGIT_CLIP

    k = len(logs)
    extra = np.array([] if unseen is None else [unseen], dtype=float)
    if k > 1 or extra.size:
        cl = np.array([logs[g] - _lse(np.concatenate([np.delete(logs, g), extra])) for g in range(k)])
    else:
        cl = np.full(1, math.inf)
    tl = np.empty(reps.shape[1])
    for j in range(reps.shape[1]):
        yes, no = logs[reps[:, j]], logs[~reps[:, j]]
        if unseen is not None and share is not None:
            yes = np.append(yes, unseen + math.log(share[j]))
            no = np.append(no, unseen + math.log1p(-share[j]))
        tl[j] = _lse(yes) - _lse(no)
    return (np.clip(np.nan_to_num(cl[labels], posinf=LOGIT_CLIP, neginf=-LOGIT_CLIP), -LOGIT_CLIP, LOGIT_CLIP),
            np.clip(np.nan_to_num(tl, posinf=LOGIT_CLIP, neginf=-LOGIT_CLIP), -LOGIT_CLIP, LOGIT_CLIP))


# ----------------------------------------------------------------------------- heuristics


def max_pass(passed) -> Selection:
    """The code passing the most tests (ties: lowest index). Code scores are pass fractions; test
    scores the share of top-scoring codes passing each test."""
    p = _check(passed)
    counts = p.sum(axis=1)
    idx = int(np.argmax(counts))  # first maximum
    top = counts == counts[idx]
    m = p.shape[1]
    code_scores = counts / m if m else np.zeros(p.shape[0])
    test_scores = p[top].mean(axis=0) if m else np.zeros(0)
    return Selection(idx, code_scores.astype(float), test_scores.astype(float), "max_pass",
                     {"passed": int(counts[idx]), "tied": int(top.sum())})


def codet(passed) -> Selection:
    """CodeT dual agreement: groups of codes passing exactly the same tests score
    ``#tests passed x #codes``. Code scores are group scores over the best; test scores the chosen
    group's pass pattern."""
    p = _check(passed)
    labels, firsts = _groups(p)
    sizes = np.bincount(labels)
    npass = p[firsts].sum(axis=1)
    scores = (npass * sizes).astype(float)
    g = _best(scores, sizes, firsts)
    top = scores[g]
    code_scores = scores[labels] / top if top > 0 else (labels == g).astype(float)
    return Selection(int(firsts[g]), code_scores, p[firsts[g]].astype(float), "codet",
                     {"group_size": int(sizes[g]), "tests_passed": int(npass[g]),
                      "n_groups": int(len(firsts))})


def _corroboration(wrong: np.ndarray, y: np.ndarray, beta0: float) -> float:
    """B4's corroboration terms: the rows of ``wrong`` (codes outside the hypothesis) pass the
    tests ``y`` deems correct at a Beta(1, 1) rate and the others at a Beta(1, beta0) rate."""
    ny = int(y.sum())
    k1 = int(wrong[:, y].sum())
    n1 = wrong.shape[0] * ny
    k0 = int(wrong[:, ~y].sum())
    n0 = wrong.shape[0] * (len(y) - ny)
    return float(_betaln(k1 + 1, n1 - k1 + 1) + _betaln(k0 + 1, n0 - k0 + beta0))


def _test_loglik(p: np.ndarray, members: np.ndarray, y: np.ndarray, a: float, beta0: float) -> float:
    """B4's log posterior of the passing state (x = members, y = tests deemed correct)."""
    n, m = p.shape
    s = int(members.sum())
    ny = int(y.sum())
    return float(_betaln(s + a, n - s + 1) + _betaln(ny + a, m - ny + 1)) + _corroboration(p[~members], y, beta0)


def b4(passed, *, beta0: float = 1e4, alpha: float = 1e3) -> Selection:
    """B4: the passing state with the highest posterior (module docstring). Code scores and test
    scores are posterior probabilities over the candidate passing states."""
    p = _check(passed)
    labels, firsts = _groups(p)
    sizes = np.bincount(labels)
    logs = np.array([_test_loglik(p, labels == g, p[firsts[g]], alpha, beta0)
                     for g in range(len(firsts))])
    g = _best(logs, sizes, firsts)
    post = _softmax(logs)
    test_scores = post @ p[firsts].astype(float) if p.shape[1] else np.zeros(0)
    code_logits, test_logits = _posterior_logits(logs, labels, p[firsts].astype(bool))
    return Selection(int(firsts[g]), post[labels], test_scores, "b4",
                     {"log_posterior": float(logs[g]), "n_groups": int(len(firsts)),
                      "group_size": int(sizes[g])}, code_logits, test_logits)


def output_consensus(passed, consensus) -> Selection:
    """MBR-exec style: cluster codes by identical outputs on the extra inputs, choose the largest
    cluster; ties go to the cluster whose code passes most tests. An error, a timeout or another
    abstention is no output: codes that answered no input at all (they do not load, raise or hang
    everywhere) form no cluster and score 0, however many they are, unless no code answered
    anything (as MBR-exec and CodeT drop programs that fail to run). Without consensus data this is
    :func:`max_pass`."""
    p = _check(passed)
    n = p.shape[0]
    codes = _encode_outputs(consensus, n) if consensus is not None else np.zeros((n, 0), np.int64)
    answered = np.asarray((codes >= 0).any(axis=1), dtype=bool)
    if codes.shape[1] == 0 or not answered.any():
        sel = max_pass(p)
        sel.method = "consensus"
        sel.details["fallback"] = "no extra inputs" if codes.shape[1] == 0 else "no code answered an extra input"
        return sel
    labels, firsts = _groups(codes)
    sizes = np.bincount(labels) * answered[firsts]  # a cluster of codes that never answered: none
    counts = p.sum(axis=1)
    best_pass = np.array([counts[labels == g].max() for g in range(len(firsts))], dtype=float)
    order = np.lexsort((firsts, -best_pass, -sizes))
    g = int(order[0])
    members = labels == g
    index = int(np.flatnonzero(members & (counts == best_pass[g]))[0])
    return Selection(index, sizes[labels] / sizes.max(),
                     p[members].mean(axis=0).astype(float) if p.shape[1] else np.zeros(0),
                     "consensus", {"cluster_size": int(sizes[g]), "n_clusters": int(answered[firsts].sum())})


# ----------------------------------------------------------------------------- coevo


def _consensus_loglik(uniq: np.ndarray, copies: np.ndarray, truth: np.ndarray, novel: float,
                      abstain: float) -> tuple[float, dict[str, int]]:
    """Log likelihood of the other behaviours' outputs if ``truth`` (a row of output codes) is the
    correct behaviour. ``uniq`` holds one row per distinct output behaviour and ``copies`` how many
    codes share it (rows equal to ``truth`` are the hypothesis itself and skipped); a behaviour
    shared by ``c`` codes weighs ``1 + log(c)``."""
    q = uniq.shape[1]
    if q == 0:
        return 0.0, {}
    keep = ~(uniq == truth[None, :]).all(axis=1)
    others = uniq[keep]
    weights = 1.0 + np.log(copies[keep])
    defined = truth >= 0
    valued = (others >= 0).mean(axis=0) > 0.5 if others.shape[0] else np.ones(q, dtype=bool)
    hyp_abstains = int((~defined & valued).sum())
    ll = hyp_abstains * math.log(abstain)
    agree = ((others == truth[None, :]) & defined[None, :]).sum(axis=1)
    errs = (others < 0).sum(axis=1)
    wrong = q - agree - errs
    for a, e, w, c in zip(agree.tolist(), errs.tolist(), wrong.tolist(), weights.tolist()):
        # each program has its own rates of agreeing / abstaining / answering otherwise
        # (Dirichlet(1, 1, 1)); an answer other than the truth is one specific value: novel
        ll += c * (math.lgamma(3) - math.lgamma(q + 3) + math.lgamma(a + 1) + math.lgamma(e + 1)
                   + math.lgamma(w + 1) + w * math.log(novel))
    return ll, {"agree": int(agree.sum()), "abstain": int(errs.sum()), "wrong": int(wrong.sum()),
                "abstain_truth": hyp_abstains, "others": int(others.shape[0])}


def _coevo_test_loglik(reps: np.ndarray, g: int, size: int, pass_weight: float, beta0: float,
                       size_weight: float, weights: np.ndarray, max_discount: float) -> float:
    """Evidence from the tests for "behaviour cluster g is correct" (module docstring). ``reps``
    holds one pass row per cluster, ``weights`` one weight per test."""
    y = reps[g]
    discount = min(max_discount, float((1.0 - weights[y]).sum()))
    ll = pass_weight * (int(y.sum()) - discount) + size_weight * math.log(size)
    if reps.shape[0] > 1 and reps.shape[1]:
        ll += _corroboration(np.delete(reps, g, axis=0), y, beta0)
    return ll


def coevo_default(passed, consensus=None, *, examples=None, example_weight: float = EXAMPLE_WEIGHT,
                  pass_weight: float = 11.5, beta0: float = 20.0,
                  size_weight: float = 1.0, consensus_weight: float = 0.2, novel: float = 0.2,
                  abstain: float = 0.02, min_test_weight: float = 0.3, max_test_discount: float = 2.0,
                  consensus_inputs: float = 28.0, contested_share: float = 2 / 3,
                  evidence_scale: float = 11.5, unseen_weight: float = 1.0) -> Selection:
    """coevo's selection (module docstring): a posterior over behaviour clusters from the tests
    (pass count, corroboration), the statement's worked examples (tests, and ``example_weight``
    more per example passed) and the outputs on extra inputs (per-program agreement)."""
    if not (evidence_scale > 0 and unseen_weight >= 0):
        raise ValueError("evidence_scale must be > 0 and unseen_weight >= 0")
    p = _check(passed)
    n, m = p.shape
    ex = _examples(examples, n)
    if ex.shape[1]:  # the examples are tests too; columns m: onwards
        p = np.concatenate([p, ex], axis=1)
    codes = _encode_outputs(consensus, n) if consensus is not None else np.zeros((n, 0), np.int64)
    signature = np.concatenate([p.astype(np.int64), codes], axis=1)
    labels, firsts = _groups(signature)
    sizes = np.bincount(labels)
    k = len(firsts)
    reps = p[firsts]
    # duplicated behaviours are not fully independent witnesses: c copies weigh 1 + log(c)
    out_labels, out_firsts = _groups(codes)
    uniq, copies = codes[out_firsts], np.bincount(out_labels).astype(float)
    weights = weigh_tests(p, codes, min_test_weight)
    # a test nearly every code passes tells the hypotheses apart little, whatever the habits
    weights[:, p.mean(axis=0) > contested_share] = 1.0
    log_tests = np.empty(k)
    log_cons = np.empty(k)
    counts = []
    for g in range(k):
        log_tests[g] = _coevo_test_loglik(reps, g, int(sizes[g]), pass_weight, beta0, size_weight,
                                          weights[firsts[g]], max_test_discount)
        log_tests[g] += example_weight * float(reps[g, m:].sum())
        log_cons[g], c = _consensus_loglik(uniq, copies, codes[firsts[g]], novel, abstain)
        counts.append(c)
    # more inputs must not let the outputs outweigh the tests: beyond ``consensus_inputs`` inputs
    # the outputs' evidence is scaled down to that many inputs' worth
    q = codes.shape[1]
    scale = consensus_weight * (min(1.0, consensus_inputs / q) if q else 1.0)
    logs = log_tests + scale * log_cons
    g = _best(logs, sizes, firsts)
    # the scores: the same evidence in units of one test passed, and the hypothesis that no
    # sample is correct (module docstring)
    scaled = logs / evidence_scale
    share = (p[:, :m].sum(axis=0) + 1.0) / (n + 2.0)
    # two logs: the quotient of a tiny weight (5e-324) by a cluster size is 0.0, whose log fails
    # ... and a right program passes the statement's worked examples: each one the best cluster
    # fails, the no-sample hypothesis passes (a test and ``example_weight`` more)
    missed = float(ex.shape[1] - reps[g, m:].sum()) * (pass_weight + example_weight) / evidence_scale
    unseen = float(scaled[g]) + missed + math.log(unseen_weight) - math.log(sizes[g]) if unseen_weight > 0 else None
    post = _softmax(scaled if unseen is None else np.append(scaled, unseen))
    test_scores = post[:k] @ reps[:, :m].astype(float) if m else np.zeros(0)
    if unseen is not None and m:
        test_scores = test_scores + post[k] * share
    code_logits, test_logits = _posterior_logits(scaled, labels, reps[:, :m].astype(bool), unseen, share)
    return Selection(int(firsts[g]), post[:k][labels], np.clip(test_scores, 0.0, 1.0), "coevo",
                     {"n_clusters": int(k), "cluster_size": int(sizes[g]),
                      "log_tests": float(log_tests[g]), "log_consensus": float(log_cons[g]),
                      "n_inputs": int(codes.shape[1]), "counts": counts[g],
                      "posterior": float(post[g]), "unseen": float(post[k]) if unseen is not None else 0.0,
                      "test_weights": [round(float(w), 4) for w in weights[firsts[g]][:m]],
                      "examples": int(ex.shape[1]), "examples_passed": int(reps[g, m:].sum())},
                     code_logits, test_logits)


# ----------------------------------------------------------------------------- no evidence

MAX_PARSED = 1 << 20  # characters of one candidate parsed to tell whether it could be a program


def plausible(code: str, entry_point: str | None = None) -> bool:
    """Whether ``code`` could be a right program before anything runs: it parses as Python and,
    with an entry point, binds that name somewhere (``def``, ``class``, an assignment, an
    import). An empty answer, a refusal in prose or a truncated program cannot be right."""
    import ast

    if not isinstance(code, str) or not code.strip() or len(code) > MAX_PARSED:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not entry_point:
        return True
    try:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == entry_point:
                return True
            if isinstance(node, ast.Name) and node.id == entry_point and isinstance(node.ctx, ast.Store):
                return True
            if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == entry_point:
                return True
    except RecursionError:
        return False
    return False


def without_evidence(sel: Selection, plausible_codes) -> Selection:
    """A task with no test, no worked example and no extra input (every candidate looks alike to
    the methods): the pick goes to the first plausible candidate (:func:`plausible`), every
    implausible one scores 0, and the plausible ones share what is left evenly."""
    ok = np.asarray(plausible_codes, dtype=bool)
    if not ok.any():
        return sel
    scores = ok / ok.sum()
    return Selection(int(np.flatnonzero(ok)[0]), scores, sel.test_scores, sel.method,
                     {**sel.details, "plausible": int(ok.sum())}, None, sel.test_logits)


def select_plausible(passed, ok, method: str = DEFAULT_METHOD, consensus=None, examples=None,
                     **kwargs) -> Selection:
    """:func:`select` among the candidates that could be programs: ``ok[i]`` (:func:`plausible`)
    or code ``i`` passes a test or example (a script passing a stdio test of a function task). The
    others (an empty answer, a refusal, a program cut off mid-line) score 0 and are never picked
    while one that could be a program is there: failing every test alike, they formed a cluster of
    their own that a method could pick (the first index wins ties) and score as right. With none
    that could be a program, the pick is :func:`select`'s and every code scores 0."""
    from matrix.calibration import LOGIT_CLIP

    p = _check(passed)
    n = p.shape[0]
    ex = _examples(examples, n)
    ok = np.asarray(ok, dtype=bool).reshape(-1) | p.any(axis=1) | ex.any(axis=1)
    if ok.all():
        return select(p, method, consensus=consensus, examples=examples, **kwargs)
    if not ok.any():
        sel = select(p, method, consensus=consensus, examples=examples, **kwargs)
        return Selection(sel.index, np.zeros(n), sel.test_scores, sel.method, sel.details,
                         np.full(n, -LOGIT_CLIP), sel.test_logits)
    idx = np.flatnonzero(ok)
    sub = select(p[idx], method, consensus=None if consensus is None else [consensus[i] for i in idx],
                 examples=ex[idx] if ex.shape[1] else None, **kwargs)
    scores = np.zeros(n)
    scores[idx] = sub.code_scores
    logits = np.full(n, -LOGIT_CLIP)
    logits[idx] = sub.code_logits
    return Selection(int(idx[sub.index]), scores, sub.test_scores, sub.method,
                     {**sub.details, "plausible": int(ok.sum())}, logits, sub.test_logits)
