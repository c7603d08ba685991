"""Group-relative advantages (pure numpy).

For sample i of group g with finite reward r_i::

    A_i = (r_i - mean_g) / (std + eps)      scale="group": std = std_g (ddof=1) of the group
                                             scale="batch": std = std (ddof=1) of all finite rewards
                                             of the sample's stratum (``strata``; default: one)
    A_i = r_i - mean_g                       scale="none"  (Dr. GRPO)

* A reward of NaN means "no reward": the sample is left out of its group's mean/std, gets
  advantage 0 and ``keep=False``.
* A group whose finite rewards are all equal, or that has fewer than two of them, is
  *zero-variance*: all its advantages are exactly 0. It stays in the batch (``keep=True``) unless
  ``drop_zero_variance`` (DAPO dynamic sampling), in which case ``keep=False`` for its samples.
* Truncated samples are ordinary samples here: their rewards count in the mean and std, and in the
  zero-variance test. Overlong filtering only masks their tokens from the loss (the trainer).
* ``std`` uses ddof=1 (as TRL and verl do) and ``eps`` is added to it, not to the variance.
* ``strata`` (one key per sample, e.g. its role) only matter to ``scale="batch"``: the batch std is
  taken over the finite rewards of each stratum apart, so that in a joint batch of roles whose
  rewards live on different scales (Coder 0/1, a Tester's suite sums) one role's spread does not
  shrink another's advantages (Absolute Zero normalises per (task type, role)). A group must lie in
  one stratum. Without ``strata`` the whole batch is one stratum (TRL's ``scale_rewards="batch"``).

Episodes (multi-turn samples, RLEF). With ``episodes``, samples of one group that share an episode
key are the turns of *one* episode: they must carry the same (trajectory-level) reward, the
group's mean, std and zero-variance test count the episode once (however many turns it took), and
every turn gets the episode's advantage. A key of ``None`` makes the sample an episode of its own,
so ``episodes=None`` (or all ``None``) is exactly the per-sample computation above.

Results do not depend on the order of samples, within or across groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SCALES = ("group", "batch", "none")


@dataclass
class Advantages:
    adv: np.ndarray  # float64 [N]; 0 where keep is False or the group has zero variance
    keep: np.ndarray  # bool [N]; finite reward and (not dropped as zero-variance)
    group_index: np.ndarray  # int [N]: index into ``groups``
    groups: list[str]  # distinct group keys, in order of first appearance
    group_mean: np.ndarray  # [n_groups] mean of finite rewards (NaN if none)
    group_std: np.ndarray  # [n_groups] std (ddof=1) of finite rewards (NaN with < 2)
    zero_variance: np.ndarray  # bool [n_groups]
    dropped: np.ndarray  # bool [n_groups]: every sample has keep=False

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def n_zero_variance(self) -> int:
        return int(self.zero_variance.sum())

    @property
    def n_dropped(self) -> int:
        return int(self.dropped.sum())


def compute_advantages(rewards: Sequence[float] | np.ndarray, groups: Sequence[str], *, scale: str = "group",
                       eps: float = 1e-4, drop_zero_variance: bool = False,
                       episodes: Sequence[str | None] | None = None,
                       strata: Sequence[str] | None = None) -> Advantages:
    """Advantages and per-group statistics (see the module doc); ``episodes`` groups the turns of
    multi-turn episodes (one key per sample, ``None`` = a sample of its own); ``strata`` (one key
    per sample) separate the batch std of ``scale="batch"``."""
    if episodes is not None and any(e is not None for e in episodes):
        return _episode_advantages(rewards, groups, episodes, scale=scale, eps=eps,
                                   drop_zero_variance=drop_zero_variance, strata=strata)
    if scale not in SCALES:
        raise ValueError(f"scale: must be one of {list(SCALES)}, got {scale!r}")
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if len(r) != len(groups):
        raise ValueError(f"groups: {len(groups)} keys for {len(r)} rewards")
    if np.isinf(r).any():
        raise ValueError("rewards: infinite reward")
    keys: dict[str, int] = {}
    gi = np.fromiter((keys.setdefault(g, len(keys)) for g in groups), dtype=np.int64, count=len(r))
    n_groups = len(keys)
    finite = np.isfinite(r)
    rf = np.where(finite, r, 0.0)
    count = np.bincount(gi, weights=finite.astype(np.float64), minlength=n_groups)
    total = np.bincount(gi, weights=rf, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    dev = np.where(finite, r - mean[gi], 0.0)
    ss = np.bincount(gi, weights=dev * dev, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.sqrt(ss / (count - 1))
    std = np.where(count >= 2, std, np.nan)
    # zero variance: all finite rewards equal (exact test, independent of scale), or < 2 of them
    hi = np.full(n_groups, -np.inf)
    lo = np.full(n_groups, np.inf)
    np.maximum.at(hi, gi[finite], r[finite])
    np.minimum.at(lo, gi[finite], r[finite])
    zero_var = (count < 2) | (hi == lo)

    if scale == "group":
        denom = std[gi] + eps
    elif scale == "batch":
        denom = np.empty(len(r))
        for members in _strata(strata, groups, gi, len(r)):
            rs = r[members & finite]
            denom[members] = (float(np.std(rs, ddof=1)) if len(rs) >= 2 else 0.0) + eps
    else:
        denom = np.ones(len(r))
    zv = zero_var[gi]
    adv = np.where(finite & ~zv, dev / np.where(zv, 1.0, denom), 0.0)
    keep = finite.copy()
    if drop_zero_variance:
        keep &= ~zv
    kept_per_group = np.bincount(gi, weights=keep.astype(np.float64), minlength=n_groups)
    return Advantages(adv=adv, keep=keep, group_index=gi, groups=list(keys), group_mean=mean,
                      group_std=std, zero_variance=zero_var, dropped=kept_per_group == 0)


def _strata(strata: Sequence[str] | None, groups: Sequence[str], gi: np.ndarray, n: int) -> list[np.ndarray]:
    """Boolean masks of the strata (one, all True, without ``strata``); a group split across
    strata is an error."""
    if strata is None:
        return [np.ones(n, dtype=bool)]
    if len(strata) != n:
        raise ValueError(f"strata: {len(strata)} keys for {n} rewards")
    keys: dict[str, int] = {}
    si = np.fromiter((keys.setdefault(s, len(keys)) for s in strata), dtype=np.int64, count=n)
    first = np.full(int(gi.max()) + 1 if n else 0, -1, dtype=np.int64)
    for i in range(n):
        if first[gi[i]] < 0:
            first[gi[i]] = si[i]
        elif first[gi[i]] != si[i]:
            raise ValueError(f"strata: group {groups[i]!r} spans two strata ({list(keys)[first[gi[i]]]!r} and "
                             f"{strata[i]!r}); a group lies in one")
    return [si == k for k in range(len(keys))]


def _episode_advantages(rewards, groups, episodes, **kw) -> Advantages:
    """Per-episode advantages broadcast to every turn (module doc, "Episodes")."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if len(episodes) != len(r) or len(groups) != len(r):
        raise ValueError(f"episodes: {len(episodes)} keys and {len(groups)} groups for {len(r)} rewards")
    units: dict[tuple, int] = {}
    uid = np.fromiter((units.setdefault((g, e) if e is not None else (g, None, i), len(units))
                       for i, (g, e) in enumerate(zip(groups, episodes))), dtype=np.int64, count=len(r))
    first = np.full(len(units), -1, dtype=np.int64)
    for i in range(len(r) - 1, -1, -1):
        first[uid[i]] = i
    ur = r[first][uid]
    same = (r == ur) | (np.isnan(r) & np.isnan(ur))
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        raise ValueError(f"rewards: the turns of episode {episodes[i]!r} (group {groups[i]!r}) carry different "
                         f"rewards ({r[first[uid[i]]]!r} and {r[i]!r}); an episode has one reward")
    if kw.get("strata") is not None:
        kw["strata"] = [kw["strata"][i] for i in first]
    a = compute_advantages(r[first], [groups[i] for i in first], **kw)
    return Advantages(adv=a.adv[uid], keep=a.keep[uid], group_index=a.group_index[uid], groups=a.groups,
                      group_mean=a.group_mean, group_std=a.group_std, zero_variance=a.zero_variance,
                      dropped=a.dropped)


def group_advantages(rewards, groups, *, scale: str = "group", eps: float = 1e-4,
                     drop_zero_variance: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(adv, keep_mask)``; see :func:`compute_advantages`."""
    a = compute_advantages(rewards, groups, scale=scale, eps=eps, drop_zero_variance=drop_zero_variance)
    return a.adv, a.keep


def informative_groups(rewards, groups) -> set[str]:
    """Groups that survive DAPO dynamic sampling (at least two finite rewards, not all equal)."""
    a = compute_advantages(rewards, groups, scale="none")
    return {g for g, z in zip(a.groups, a.zero_variance) if not z}
