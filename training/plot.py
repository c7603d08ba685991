"""Training curves from ``metrics.jsonl`` to a PNG (matplotlib, Agg backend).

Metrics are grouped into panels by the part of their name before the first ``/``:
``reward/coder`` and ``reward/tester`` share the panel ``reward``; ``loss`` has its own. Panels
come in a fixed order of importance (reward, loss, clip_frac, kl, grad_norm, lr, tokens_per_s,
...), then the rest alphabetically, up to ``max_panels``. ``time``, text values, nulls and panels
outside that list whose values never change (bookkeeping counters) are skipped. ``keys``
restricts the plot to metrics whose name or panel matches. Panels in ``STACKED`` are drawn as
stacked areas (``reject``: the shares of the step's proposals refused for each reason, stacked up
to ``1 - proposer/valid_frac``). With evaluation records (``extra={"eval": ...}``) that hold
``calibration``, a reliability diagram of the last one follows the eval panel: the chosen
programs' and the generated tests' scores against the share of them that is right, per bin (the
count beside each point), with the diagonal a calibrated score would follow.
"""

from __future__ import annotations

import math
from pathlib import Path

from training.metrics_file import METRICS_FILE, read_metrics

PRIORITY = ("eval", "reward", "loss", "clip_frac", "kl", "grad_norm", "lr", "tokens_per_s", "adv_abs", "train",
            "proposer", "reject", "curriculum", "ratio_mean", "ratio_max", "logprob_diff", "frac_zero_std",
            "groups_zero_std", "samples_in_loss")
SKIP = {"step", "time"}
CURVES_FILE = "curves.png"  # RUN_DIR/curves.png: drawn at the end of a run and by `coevo plot RUN_DIR`
STACKED = {"reject"}
RELIABILITY = "@reliability"  # the pseudo-panel of the last evaluation's reliability diagram
EXTRA_SKIP = {"tasks", "seconds"}


def collect_series(records: list[dict]) -> dict[str, tuple[list[int], list[float]]]:
    series: dict[str, tuple[list[int], list[float]]] = {}
    for rec in sorted(records, key=lambda r: r["step"]):
        for k, v in rec.items():
            if k in SKIP or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if not math.isfinite(float(v)):
                continue
            xs, ys = series.setdefault(k, ([], []))
            xs.append(rec["step"])
            ys.append(float(v))
    return series


def plot_metrics(source: str | Path, out_png: str | Path | None = None, *, keys: list[str] | None = None,
                 max_panels: int = 16, smooth: int = 1, title: str | None = None,
                 extra: dict[str, list[dict]] | None = None) -> Path:
    """Draw the curves of a run dir (or a metrics.jsonl) into ``out_png`` (default
    ``RUN_DIR/curves.png``); returns the PNG path. ``smooth`` > 1 adds a moving average."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    src = Path(source)
    path = src / METRICS_FILE if src.is_dir() else src
    if not path.exists():
        raise FileNotFoundError(f"{path}: no metrics file")
    records = read_metrics(path)
    if not records:
        raise ValueError(f"{path}: no metric lines")
    series = collect_series(records)
    for panel, recs in (extra or {}).items():
        renamed = [{"step": r["step"], **{f"{panel}/{k}": v for k, v in r.items()
                                          if k not in EXTRA_SKIP and k != "step"}} for r in recs if "step" in r]
        more = collect_series(renamed)
        series = {k: v for k, v in series.items() if k.split("/")[0] != panel} | more
    if keys:
        series = {k: v for k, v in series.items() if k in keys or k.split("/")[0] in keys}
    if not keys:  # drop panels of bookkeeping constants (a listed panel stays, constant or not)
        varies: dict[str, bool] = {}
        for k, (_, ys) in series.items():
            p = k.split("/")[0]
            varies[p] = varies.get(p, False) or len(set(ys)) > 1 or p in PRIORITY
        series = {k: v for k, v in series.items() if varies[k.split("/")[0]]}
    if not series:
        raise ValueError(f"{path}: nothing to plot" + (f" for keys {keys}" if keys else ""))
    panels: dict[str, list[str]] = {}
    for k in sorted(series):
        panels.setdefault(k.split("/")[0], []).append(k)
    order = [p for p in PRIORITY if p in panels] + sorted(p for p in panels if p not in PRIORITY)
    curves = reliability_points(extra.get("eval", []) if extra else [])
    if curves and not keys:  # the last evaluation's reliability diagram, after the eval panel
        order.insert(1 if order and order[0] == "eval" else 0, RELIABILITY)
    order = order[:max_panels]
    n = len(order)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.4 * rows), squeeze=False)
    for ax, panel in zip(axes.flat, order):
        if panel == RELIABILITY:
            _reliability(ax, curves)
            continue
        if panel in STACKED:
            _stack(ax, panel, panels[panel], series)
            continue
        for k in panels[panel]:
            xs, ys = series[k]
            label = k.split("/", 1)[1] if "/" in k else k
            line, = ax.plot(xs, ys, marker="." if len(xs) < 30 else None, linewidth=1.2, label=label, alpha=0.9)
            if smooth > 1 and len(ys) > smooth:
                avg = [sum(ys[max(0, i - smooth + 1):i + 1]) / (i + 1 - max(0, i - smooth + 1)) for i in range(len(ys))]
                ax.plot(xs, avg, color=line.get_color(), linewidth=2.0, alpha=0.6)
        ax.set_title(panel)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if len(panels[panel]) > 1 or "/" in panels[panel][0]:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    last = max(r["step"] for r in records)
    fig.suptitle(title or f"{path.parent.name}  (steps 1..{last})")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    out = Path(out_png) if out_png else path.parent / CURVES_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    # drawn beside the target and renamed over it: a full disk or a kill leaves the old PNG whole
    # and no half-written one (the same temporary-name pattern as matrix.jsonl's atomic writes)
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100, format=out.suffix.lstrip(".").lower() or "png")
        os.chmod(tmp, _new_file_mode(out))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        plt.close(fig)
    return out


def reliability_points(evals: list[dict]) -> dict:
    """From the last evaluation holding ``calibration`` (``coevo.evaluate.calibration_figures``):
    ``{"step": s, "curves": {name: (mean scores, shares right, counts, ece)}}`` for the chosen
    programs (``select``) and the generated tests (``tests``); ``{}`` when there is none."""
    last = next((r for r in reversed(evals) if isinstance(r.get("calibration"), dict)), None)
    if last is None:
        return {}
    out = {}
    for name, rep in last["calibration"].items():
        bins = [b for b in rep.get("curve") or [] if b.get("n")]
        if bins:
            out[name] = ([float(b["score"]) for b in bins], [float(b["right"]) for b in bins],
                         [int(b["n"]) for b in bins], float(rep.get("ece", float("nan"))))
    return {"step": last.get("step"), "curves": out} if out else {}


def _reliability(ax, points: dict) -> None:
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="calibrated")
    for name, (xs, ys, ns, ece) in points["curves"].items():
        line, = ax.plot(xs, ys, marker="o", linewidth=1.2, label=f"{name} (ECE {ece:.2f})")
        for x, y, n in zip(xs, ys, ns):
            ax.annotate(str(n), (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points", color=line.get_color())
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_title(f"reliability at step {points['step']} (score vs share right)")
    ax.set_xlabel("score")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def stacked_rows(keys: list[str],
                 series: dict[str, tuple[list[int], list[float]]]) -> tuple[list[int], list[list[float]]]:
    """The steps where any of ``keys`` was logged and one row per key on those steps (0 where
    that key is missing), for a stacked plot."""
    steps = sorted({x for k in keys for x in series[k][0]})
    rows = []
    for k in keys:
        at = dict(zip(*series[k]))
        rows.append([at.get(x, 0.0) for x in steps])
    return steps, rows


def _stack(ax, panel: str, keys: list[str], series) -> None:
    keys = [k for k in keys if any(series[k][1])]  # reasons that never occurred stay out of the legend
    if keys:
        steps, rows = stacked_rows(keys, series)
        ax.stackplot(steps, rows, labels=[k.split("/", 1)[1] for k in keys], alpha=0.85)
        ax.legend(fontsize=6, loc="upper right", ncol=2)
    ax.set_ylim(0, 1.0)
    ax.set_title(f"{panel} (share of proposals)")
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)


def _new_file_mode(path: Path) -> int:
    """The mode ``open(path, "w")`` would leave (``mkstemp`` alone makes 0600): an existing file's
    own, else 0666 less the umask (training/ imports nothing of ours, so not matrix.jsonl's)."""
    import os

    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    mask = 0o022
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            mask = next(int(line.split()[1], 8) for line in fh if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        pass
    return 0o666 & ~mask
