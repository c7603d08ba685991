"""Calibration of scores that read as probabilities (pure numpy).

A score is *calibrated* when, among the items it scores ``s``, a share ``s`` is right. The
selection's scores (``matrix.selection``: the chosen program's posterior, each test's probability
of being correct) come from a model that assumes one behaviour in the pool is right and that
tests are independent witnesses, so they crowd at 0 and 1; this module measures how far they are
from probabilities and maps them onto probabilities with a map fitted on held-out labelled data.

Measures (``scores`` in [0, 1], ``outcomes`` bools)
    :func:`reliability_curve`: per score bin, the mean score and the share right;
    :func:`expected_calibration_error` (ECE): ``sum_b (n_b / N) |right_b - score_b|`` over the
    bins (10 equal-width bins by default, the usual definition), :func:`max_calibration_error`;
    :func:`brier_score`; :func:`precision_at`: the share right among items scored ``>= P`` (what a
    user keeping items at ``--min-score P`` gets).

Maps (:class:`CalibrationMap`, fitted with :func:`fit_calibration` on *log-odds*, so that scores
a float rounds to 1.0 still keep their order: ``matrix.selection`` gives them as ``code_logits``
and ``test_logits``)
    ``platt``: ``sigmoid(a x + b)``, a logistic fit with Platt's smoothed targets (a temperature
    and a base rate: two parameters, hard to overfit); ``isotonic``: the monotone step function
    closest to the outcomes (pool adjacent violators), linear between blocks; ``binning``:
    equal-mass bins, each mapped to its share right with a Beta(1, 1) prior; ``identity``:
    ``sigmoid(x)``, the raw score. A map is plain data (:meth:`CalibrationMap.to_json`),
    validated when read back (:meth:`CalibrationMap.from_json`).

:func:`cross_fit` gives out-of-fold calibrated scores (each item scored by a map fitted on the
other folds), the honest estimate of what a map fitted on held-out data achieves on new tasks.
:func:`threshold_for_precision` finds the smallest score threshold whose kept items reach a
target precision. :func:`calibration_report` gathers the measures of one set of scored items (raw
and cross-fitted) as plain JSON, as ``coevo eval`` and the run's held-out evaluation report them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "KINDS",
    "PRECISION_AT",
    "CalibrationMap",
    "CALIBRATED",
    "brier_score",
    "calibration_report",
    "cross_fit",
    "expected_calibration_error",
    "fit_calibration",
    "logit",
    "max_calibration_error",
    "precision_at",
    "read_calibration",
    "reliability_curve",
    "sigmoid",
    "threshold_for_precision",
]

KINDS = ("identity", "platt", "isotonic", "binning")
PRECISION_AT = (0.5, 0.8, 0.9, 0.95)  # thresholds whose precision the reports give (``--min-score P``)
LOGIT_CLIP = 50.0  # log-odds are clipped to +-50 (probabilities within 2e-22 of 0 or 1)


def sigmoid(x) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), -LOGIT_CLIP, LOGIT_CLIP)
    return 1.0 / (1.0 + np.exp(-x))


def logit(p) -> np.ndarray:
    """Log-odds of probabilities, clipped to +-``LOGIT_CLIP``."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        out = np.log(p) - np.log1p(-p)
    return np.clip(np.nan_to_num(out, nan=0.0, posinf=LOGIT_CLIP, neginf=-LOGIT_CLIP), -LOGIT_CLIP, LOGIT_CLIP)


def _pair(scores, outcomes) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).reshape(-1)
    y = np.asarray(outcomes, dtype=bool).reshape(-1)
    if s.shape != y.shape:
        raise ValueError(f"scores and outcomes differ in length ({s.size} vs {y.size})")
    if s.size and not np.isfinite(s).all():
        raise ValueError("scores: must be finite")
    return s, y


def _probabilities(scores, outcomes) -> tuple[np.ndarray, np.ndarray]:
    s, y = _pair(scores, outcomes)
    if s.size and (s.min() < 0 or s.max() > 1):
        raise ValueError("scores: must lie in [0, 1]")
    return s, y


# ----------------------------------------------------------------------------- measures


def _bin_index(s: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins over [0, 1]; bin b holds [b/n, (b+1)/n), the last one includes 1."""
    if n_bins < 1:
        raise ValueError("n_bins: must be >= 1")
    return np.minimum((s * n_bins).astype(int), n_bins - 1)


def reliability_curve(scores, outcomes, n_bins: int = 10) -> list[dict[str, float]]:
    """The non-empty bins of ``n_bins`` equal-width score bins: ``lo``, ``hi``, ``n`` (items),
    ``score`` (their mean score) and ``right`` (the share right), lowest bin first."""
    s, y = _probabilities(scores, outcomes)
    b = _bin_index(s, n_bins)
    out = []
    for k in range(n_bins):
        sel = b == k
        n = int(sel.sum())
        if n:
            out.append({"lo": k / n_bins, "hi": (k + 1) / n_bins, "n": n,
                        "score": float(s[sel].mean()), "right": float(y[sel].mean())})
    return out


def expected_calibration_error(scores, outcomes, n_bins: int = 10) -> float:
    """ECE: the item-weighted mean over bins of ``|share right - mean score|`` (0 for no items)."""
    s, y = _probabilities(scores, outcomes)
    if not s.size:
        return 0.0
    return float(sum(c["n"] * abs(c["right"] - c["score"]) for c in reliability_curve(s, y, n_bins)) / s.size)


def max_calibration_error(scores, outcomes, n_bins: int = 10) -> float:
    """The largest ``|share right - mean score|`` over the non-empty bins (0 for no items)."""
    curve = reliability_curve(scores, outcomes, n_bins)
    return float(max((abs(c["right"] - c["score"]) for c in curve), default=0.0))


def brier_score(scores, outcomes) -> float:
    """Mean squared difference between score and outcome (0 for no items)."""
    s, y = _probabilities(scores, outcomes)
    return float(np.mean((s - y) ** 2)) if s.size else 0.0


def precision_at(scores, outcomes, threshold: float) -> tuple[float, int]:
    """``(share right, count)`` among items scored ``>= threshold`` (share NaN when none)."""
    s, y = _pair(scores, outcomes)
    keep = s >= threshold
    n = int(keep.sum())
    return (float(y[keep].mean()) if n else float("nan")), n


def threshold_for_precision(scores, outcomes, target: float, min_count: int = 1) -> float | None:
    """The smallest threshold ``t`` among the scores such that the items scored ``>= t`` are right
    at a share ``>= target`` and number at least ``min_count``; None when no threshold does."""
    s, y = _pair(scores, outcomes)
    if not 0 <= target <= 1:
        raise ValueError("target: must lie in [0, 1]")
    order = np.argsort(-s, kind="stable")
    ss, yy = s[order], y[order].astype(float)
    right = np.cumsum(yy)
    count = np.arange(1, len(ss) + 1)
    best = None
    for i in range(len(ss)):
        if i + 1 < len(ss) and ss[i + 1] == ss[i]:
            continue  # a threshold keeps every item of equal score
        if count[i] >= min_count and right[i] / count[i] >= target - 1e-12:
            best = float(ss[i])
    return best


# ----------------------------------------------------------------------------- maps


@dataclass
class CalibrationMap:
    """A monotone map from log-odds to probabilities (module doc); plain data."""

    kind: str = "identity"
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # provenance: what it was fitted on

    def __call__(self, x) -> np.ndarray:
        x = np.clip(np.asarray(x, dtype=float), -LOGIT_CLIP, LOGIT_CLIP)
        p = self.params
        if self.kind == "identity":
            return sigmoid(x)
        if self.kind == "platt":
            return sigmoid(p["a"] * x + p["b"])
        if self.kind == "isotonic":
            return _interp(x, np.asarray(p["x"], dtype=float), np.asarray(p["y"], dtype=float))
        if self.kind == "binning":
            return np.asarray(p["values"], dtype=float)[np.searchsorted(p["edges"], x, side="right")]
        raise ValueError(f"kind: unknown calibration map {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        def plain(v):
            return [float(x) for x in v] if isinstance(v, (list, tuple, np.ndarray)) else float(v)
        return {"kind": self.kind, "params": {k: plain(v) for k, v in self.params.items()}, "info": dict(self.info)}

    @classmethod
    def from_json(cls, data: Any) -> CalibrationMap:
        """A map read back from :meth:`to_json`; ``ValueError`` naming the field when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("calibration map: must be a JSON object")
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"kind: must be one of {list(KINDS)}, got {kind!r}")
        params = data.get("params", {})
        info = data.get("info", {})
        if not isinstance(params, dict) or not isinstance(info, dict):
            raise ValueError("params: must be a JSON object (info likewise)")
        need = {"identity": {}, "platt": {"a": False, "b": False}, "isotonic": {"x": True, "y": True},
                "binning": {"edges": True, "values": True}}[kind]
        clean: dict[str, Any] = {}
        for name, is_list in need.items():
            v = params.get(name)
            if is_list:
                if not isinstance(v, list) or len(v) > 100_000 or not all(
                        isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                    raise ValueError(f"params.{name}: must be a list of numbers")
                arr = np.asarray(v, dtype=float)
                if not np.isfinite(arr).all():
                    raise ValueError(f"params.{name}: must be finite")
                clean[name] = arr
            else:
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                    raise ValueError(f"params.{name}: must be a finite number")
                clean[name] = float(v)
        if kind == "isotonic":
            if not len(clean["x"]) or len(clean["x"]) != len(clean["y"]):
                raise ValueError("params.y: needs one value per knot in params.x (at least one)")
            if (np.diff(clean["x"]) < 0).any() or (np.diff(clean["y"]) < 0).any():
                raise ValueError("params.x: knots and values must be non-decreasing")
        if kind == "binning":
            if len(clean["values"]) != len(clean["edges"]) + 1 or (np.diff(clean["edges"]) < 0).any():
                raise ValueError("params.values: needs len(edges) + 1 values and sorted edges")
        for name in ("y", "values"):
            if name in clean and ((clean[name] < 0).any() or (clean[name] > 1).any()):
                raise ValueError(f"params.{name}: probabilities must lie in [0, 1]")
        return cls(kind, clean, dict(info))


def _inputs(x, outcomes) -> tuple[np.ndarray, np.ndarray]:
    xs, y = _pair(x, outcomes)
    return np.clip(xs, -LOGIT_CLIP, LOGIT_CLIP), y


def fit_platt(x, outcomes, *, iters: int = 100) -> CalibrationMap:
    """Platt scaling on log-odds ``x``: maximise the likelihood of ``sigmoid(a x + b)`` against
    Platt's smoothed targets (``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``) by Newton's method with
    step halving. With one class only the targets still keep ``a`` and ``b`` finite. The map stays
    monotone: a fit with ``a < 0`` (scores ranking against the outcomes) gives ``a = 0`` and the
    smoothed base rate."""
    xs, y = _inputs(x, outcomes)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if not xs.size:
        return CalibrationMap("platt", {"a": 1.0, "b": 0.0})
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = max(float(np.std(xs)), 1e-6)
    z = (xs - xs.mean()) / scale  # standardised: Newton behaves whatever the logits' scale

    def loss(w):
        u = w[0] * z + w[1]
        return float(np.sum(np.logaddexp(0.0, u) - t * u)) + 1e-6 * float(w @ w)

    w = np.zeros(2)
    cur = loss(w)
    for _ in range(iters):
        p = sigmoid(w[0] * z + w[1])
        g = np.array([np.sum((p - t) * z), np.sum(p - t)]) + 2e-6 * w
        h = p * (1 - p)
        H = np.array([[np.sum(h * z * z), np.sum(h * z)], [np.sum(h * z), np.sum(h)]]) + 2e-6 * np.eye(2)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            break
        lam = 1.0
        while lam > 1e-8:
            nw = w - lam * step
            new = loss(nw)
            if new <= cur:
                break
            lam /= 2
        else:
            break
        done = cur - new < 1e-12
        w, cur = nw, new
        if done:
            break
    if w[0] < 0:  # scores that rank against their outcomes: a map must stay monotone, so a = 0
        return CalibrationMap("platt", {"a": 0.0, "b": float(logit(np.mean(t)))})
    a = w[0] / scale
    b = w[1] - a * xs.mean()
    return CalibrationMap("platt", {"a": float(a), "b": float(b)})


def _pav(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Pool adjacent violators: block values, weights and [start, end) spans, non-decreasing."""
    vals: list[float] = []
    wts: list[float] = []
    spans: list[tuple[int, int]] = []
    for i in range(len(y)):
        vals.append(float(y[i]))
        wts.append(float(w[i]))
        spans.append((i, i + 1))
        while len(vals) > 1 and vals[-2] > vals[-1]:
            v2, w2, s2 = vals.pop(), wts.pop(), spans.pop()
            v1, w1, s1 = vals.pop(), wts.pop(), spans.pop()
            vals.append((v1 * w1 + v2 * w2) / (w1 + w2))
            wts.append(w1 + w2)
            spans.append((s1[0], s2[1]))
    return np.asarray(vals), np.asarray(wts), spans


def _interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """``np.interp`` (linear between sorted knots ``xp``, constant beyond) without its slope: where
    two knots are closer than a normal float (scores ~1e-311 apart), ``(fp1 - fp0) / (xp1 - xp0)``
    overflowed and the isotonic map answered ``inf``. The share of the way from one knot to the next
    is a ratio of two such differences, clipped to [0, 1], so the value stays between the knots'."""
    if xp.size == 1:
        return np.full(np.shape(x), fp[0])
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, xp.size - 1)
    x0, x1, y0, y1 = xp[i - 1], xp[i], fp[i - 1], fp[i]
    span = x1 - x0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t = np.where(span > 0, (x - x0) / np.where(span > 0, span, 1.0), 1.0)
    return y0 + np.clip(t, 0.0, 1.0) * (y1 - y0)


def fit_isotonic(x, outcomes) -> CalibrationMap:
    """Isotonic regression of the outcomes on ``x`` (items of equal ``x`` pooled first): each
    block's value holds from its smallest to its largest ``x``; linear in between, constant beyond."""
    xs, y = _inputs(x, outcomes)
    if not xs.size:
        return CalibrationMap("isotonic", {"x": np.array([0.0]), "y": np.array([0.5])})
    ux, inv = np.unique(xs, return_inverse=True)
    cnt = np.bincount(inv).astype(float)
    mean = np.bincount(inv, weights=y.astype(float)) / cnt
    vals, _, spans = _pav(mean, cnt)
    kx, ky = [], []
    for v, (a, b) in zip(vals, spans):
        kx += [ux[a], ux[b - 1]]
        ky += [v, v]
    return CalibrationMap("isotonic", {"x": np.asarray(kx), "y": np.clip(np.asarray(ky), 0.0, 1.0)})


def fit_binning(x, outcomes, n_bins: int = 10) -> CalibrationMap:
    """Histogram binning: up to ``n_bins`` equal-mass bins of ``x`` (items of equal ``x`` never
    split), each mapped to ``(right + 1) / (n + 2)``; made non-decreasing by pooling."""
    xs, y = _inputs(x, outcomes)
    if n_bins < 1:
        raise ValueError("n_bins: must be >= 1")
    if not xs.size:
        return CalibrationMap("binning", {"edges": np.zeros(0), "values": np.array([0.5])})
    qs = np.quantile(xs, np.linspace(0, 1, n_bins + 1)[1:-1])
    edges = np.unique(qs)
    edges = edges[(edges > xs.min()) & (edges <= xs.max())]
    b = np.searchsorted(edges, xs, side="right")
    k = len(edges) + 1
    n = np.bincount(b, minlength=k).astype(float)
    r = np.bincount(b, weights=y.astype(float), minlength=k)
    vals = (r + 1.0) / (n + 2.0)
    pooled, _, spans = _pav(vals, np.maximum(n, 1e-9))
    out = np.empty(k)
    for v, (a, c) in zip(pooled, spans):
        out[a:c] = v
    return CalibrationMap("binning", {"edges": edges, "values": out})


def fit_calibration(x, outcomes, kind: str = "platt", **kw) -> CalibrationMap:
    """Fit a map of ``kind`` (:data:`KINDS`) on log-odds ``x`` and outcomes; ``info`` records the
    number of items and the share right."""
    if kind not in KINDS:
        raise ValueError(f"kind: must be one of {list(KINDS)}, got {kind!r}")
    xs, y = _inputs(x, outcomes)
    if kind == "identity":
        m = CalibrationMap("identity")
    elif kind == "platt":
        m = fit_platt(xs, y, **kw)
    elif kind == "isotonic":
        m = fit_isotonic(xs, y)
    else:
        m = fit_binning(xs, y, **kw)
    m.info.update({"n": int(xs.size), "right": float(y.mean()) if xs.size else None})
    return m


def cross_fit(x, outcomes, kind: str = "platt", *, folds: int = 2, seed: int = 0,
              groups: Sequence | None = None, **kw) -> np.ndarray:
    """Out-of-fold calibrated probabilities: items are split into ``folds`` folds (by ``groups``
    when given, e.g. task ids, so that items of one task stay together) and each fold is scored by
    a map fitted on the others. With fewer than two groups, every item gets the identity map."""
    xs, y = _inputs(x, outcomes)
    if folds < 2:
        raise ValueError("folds: must be >= 2")
    keys = list(range(len(xs))) if groups is None else list(groups)
    if len(keys) != len(xs):
        raise ValueError("groups: one key per item")
    where: dict = {}
    idx = np.array([where.setdefault(k, len(where)) for k in keys], dtype=np.int64)
    out = sigmoid(xs)
    if len(where) < 2:
        return out
    fold_of = np.empty(len(where), dtype=np.int64)
    fold_of[np.random.default_rng(seed).permutation(len(where))] = np.arange(len(where)) % folds
    fold = fold_of[idx]
    for f in range(folds):
        test = fold == f
        if test.any() and (~test).any():
            out[test] = fit_calibration(xs[~test], y[~test], kind, **kw)(xs[test])
    return out


def calibration_report(x, outcomes, groups: Sequence | None = None, *, n_bins: int = 10,
                       thresholds: Sequence[float] = (), kind: str = "platt") -> dict[str, Any]:
    """How well the scores ``sigmoid(x)`` (``x``: log-odds) of items with ``outcomes`` read as
    probabilities, as plain JSON: ``n``, ``right`` (share right), ``score`` (mean score), ``ece``,
    ``brier``, ``ge99`` / ``ge99_right`` (items scored >= 0.99 and how many are right), ``curve``
    (:func:`reliability_curve`), and with at least two ``groups`` (e.g. task ids) the same measured
    on the out-of-fold scores of a ``kind`` map fitted on the other half of the groups (2-fold
    :func:`cross_fit`): ``ece_cv``, ``brier_cv``, ``curve_cv``. For each threshold P in
    ``thresholds``: ``precision_at[P] = {"raw": [share, count], "cv": [...]}`` (share None when no
    item is kept)."""
    xs, y = _inputs(x, outcomes)
    raw = sigmoid(xs)
    out: dict[str, Any] = {"n": int(xs.size), "right": float(y.mean()) if xs.size else None,
                           "score": float(raw.mean()) if xs.size else None,
                           "ece": expected_calibration_error(raw, y, n_bins), "brier": brier_score(raw, y),
                           "ge99": int((raw >= 0.99).sum()), "ge99_right": int(y[raw >= 0.99].sum()),
                           "curve": reliability_curve(raw, y, n_bins)}
    cv = None
    if groups is not None and len(set(groups)) >= 2:
        cv = cross_fit(xs, y, kind, folds=2, groups=groups)
        out.update({"ece_cv": expected_calibration_error(cv, y, n_bins), "brier_cv": brier_score(cv, y),
                    "curve_cv": reliability_curve(cv, y, n_bins)})

    def prec(s, t):
        share, n = precision_at(s, y, t)
        return [None if math.isnan(share) else share, n]

    if thresholds:
        out["precision_at"] = {f"{t:g}": {"raw": prec(raw, t), **({"cv": prec(cv, t)} if cv is not None else {})}
                               for t in thresholds}
    return out


# ----------------------------------------------------------------------------- maps on file

CALIBRATED = ("select", "tests")  # what a calibration file can hold a map for


def read_calibration(path: str, scores: dict | None = None) -> dict[str, CalibrationMap]:
    """The maps a calibration file holds: ``{"select": map, "tests": map}`` (either may be
    missing), read from a ``coevo eval`` report (its ``calibration.select.map`` and
    ``calibration.tests.map``: Platt maps fitted on that evaluation's labelled picks and tests) or
    from a JSON object ``{"select": MAP, "tests": MAP}``. A map reads the scores it was fitted on:
    where the report records the coevo score settings of its evaluation (``calibration.scores``,
    ``{}`` for the defaults: ``coevo eval --unseen-weight / --evidence-scale``), ``scores`` (the
    settings the caller scores with) must equal them. Raises :class:`~matrix.errors.InputError`
    naming the file and field."""
    import json

    from matrix.errors import InputError

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(10_000_000)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=path) from None
    lines = [x for x in text.splitlines() if x.strip()]
    try:
        data = json.loads(lines[0] if len(lines) == 1 else text)
    except (json.JSONDecodeError, IndexError):
        raise InputError("not a JSON object (a `coevo eval` report or {\"select\": MAP, \"tests\": MAP})",
                         file=path, line=1) from None
    if isinstance(data, dict) and isinstance(data.get("calibration"), dict):
        fitted_on = data["calibration"].get("scores", {})
        if scores is not None and fitted_on != scores:
            def said(kw) -> str:
                if not isinstance(kw, dict):
                    return repr(kw)[:80]
                return ", ".join(f"{k} {v!r:.20}" for k, v in sorted(kw.items(), key=str)) or "the defaults"

            raise InputError(f"its maps were fitted on coevo's scores read with {said(fitted_on)}, these "
                             f"scores with {said(scores)} (give the evaluation's --unseen-weight / "
                             "--evidence-scale)", file=path, field="calibration.scores")
        data = {k: v.get("map") for k, v in data["calibration"].items() if isinstance(v, dict) and "map" in v}
        where = "calibration.{}.map"
    else:
        where = "{}"
    if not isinstance(data, dict) or not any(k in data for k in CALIBRATED):
        raise InputError("holds no calibration map (a `coevo eval` report made with tests has them)",
                         file=path, field="calibration")
    out = {}
    for name in CALIBRATED:
        if name in data:
            try:
                out[name] = CalibrationMap.from_json(data[name])
            except ValueError as exc:
                raise InputError(str(exc), file=path, field=where.format(name)) from None
    return out
