"""``RUN_DIR/metrics.jsonl``: one JSON line per step, exactly once across crashes and resumes.

Each line is ``{"step": k, "time": unix_seconds, <metric>: float, ...}``; non-finite values are
written as ``null``. A line is appended, flushed and fsynced before the step's checkpoint is
written, so every step up to the latest checkpoint is on disk. On resume from checkpoint ``s``,
:class:`MetricsLogger` first rewrites the file (atomically) keeping only well-formed lines with
``step <= s`` (one per step, the first), dropping the lines of steps that ran after the
checkpoint (they run again) and any half-written last line. Hence after any sequence of
``kill -9`` and resume, the file holds steps 1..N each exactly once.

Optional: TensorBoard scalars (``tensorboard=True``; needs the ``tensorboard`` package, warns and
continues without it) and a tqdm progress bar with ETA over ``total_steps``; where no bar is drawn
(stderr is a log file, ``nohup``, CI) and ``say`` is given, status lines instead
(:class:`StepStatus`). Only rank 0 writes.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

METRICS_FILE = "metrics.jsonl"


def read_metrics(path: str | Path) -> list[dict]:
    """The well-formed lines of a metrics file (a run dir or the file itself)."""
    p = Path(path)
    if p.is_dir():
        p = p / METRICS_FILE
    out = []
    with open(p, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("step"), int):
                out.append(rec)
    return out


def _clean_value(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, str)) or v is None:
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f if math.isfinite(f) else None


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class RateMeter:
    """Work done against a total for status lines where no progress bar is drawn: the rate leaves
    out the first update, which carries the start-up (workers starting, the first prefill, the first
    HTTP connection); :meth:`update` says whether a line is due, at most every ``every_s`` seconds
    and never for the update that completes the work (the command's own summary follows)."""

    def __init__(self, total: int, *, every_s: float = 30.0, clock=time.monotonic):
        self.total, self.every_s, self.clock = total, every_s, clock
        self.t0 = self.last = clock()
        self.t1: float | None = None  # when the first update came
        self.done = self.after_first = 0
        self.rate = 0.0

    def update(self, n: int) -> bool:
        now = self.clock()
        self.done += n
        if self.t1 is None:
            self.t1 = now
        else:
            self.after_first += n
        self.rate = self.after_first / (now - self.t1) if self.after_first and now > self.t1 else \
            self.done / max(now - self.t0, 1e-9)
        if self.done >= self.total or now - self.last < self.every_s:
            return False
        self.last = now
        return True

    def eta(self, unknown: str = "?") -> str:
        return duration((self.total - self.done) / self.rate) if self.rate > 0 else unknown


class StepStatus:
    """Status lines for a run whose progress bar is not drawn (stderr is a log file, ``nohup``, CI):
    the first and the last step of this process, and in between a step at most every ``every_s``
    seconds, each with the mean time per step after the first (which carries the start-up: an SFT
    warm-up's first step said "ETA 24m50s" of a 4-minute warm-up) and the ETA, the ``keys`` a
    step logged and, labelled ``held-out``, its ``eval_keys`` (``eval/code_acc`` shows as
    ``held-out code_acc``)."""

    def __init__(self, total: int, *, first: int = 1, keys: tuple[str, ...] = ("loss",),
                 eval_keys: tuple[str, ...] = (), every_s: float = 30.0, clock=time.monotonic):
        self.total, self.first, self.every_s, self.clock = total, first, every_s, clock
        self.keys, self.eval_keys = keys, eval_keys
        self.t0 = clock()
        self.t1: float | None = None  # when this process's first step ended (it carries the start-up)
        self.done = 0
        self.last_said: float | None = None

    def after(self, step: int, metrics: dict) -> str | None:
        """The line to print after ``step`` (``None``: not this step)."""
        now = self.clock()
        self.done += 1
        if self.t1 is None:
            self.t1 = now
        if not (step == self.first or step >= self.total or self.last_said is None
                or now - self.last_said >= self.every_s):
            return None
        self.last_said = now
        parts = [f"{k} {metrics[k]:.4g}" for k in self.keys
                 if isinstance(metrics.get(k), (int, float)) and not isinstance(metrics.get(k), bool)]
        parts += [f"held-out {k.split('/', 1)[-1]} {metrics[k]:.3f}" for k in self.eval_keys
                  if isinstance(metrics.get(k), (int, float)) and not isinstance(metrics.get(k), bool)]
        if self.done == 1:  # the first step carries the start-up (compiling, warming caches): no ETA from it
            head = f"step {step}/{self.total} (first step {now - self.t0:.1f} s)"
        else:
            per = (now - self.t1) / (self.done - 1)
            head = f"step {step}/{self.total} ({per:.1f} s/step, ETA {duration(per * max(0, self.total - step))})"
        return head + (": " + ", ".join(parts) if parts else "")


class MetricsLogger:
    """Append-only, resumable per-step metrics (see the module doc). ``say``: where the status
    lines of :class:`StepStatus` go when no progress bar is drawn (None: nowhere)."""

    def __init__(self, run_dir: str | Path, resume_step: int = 0, *, total_steps: int | None = None,
                 tensorboard: bool = False, progress: bool = True, progress_keys: tuple[str, ...] = ("loss",),
                 enabled: bool | None = None, say: Callable[[str], None] | None = None,
                 eval_keys: tuple[str, ...] = (), status_every_s: float = 30.0):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / METRICS_FILE
        self.resume_step = int(resume_step)
        from training import distributed as D  # torch: only where a logger is made

        self.enabled = D.is_main() if enabled is None else enabled
        self.progress_keys = progress_keys
        self._file = None
        self._tb = None
        self._bar = None
        self._status: StepStatus | None = None
        self._say = say
        self.last_step = self.resume_step
        if not self.enabled:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._truncate()
        self._file = open(self.path, "a", encoding="utf-8")
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(log_dir=str(self.run_dir / "tensorboard"), purge_step=self.resume_step + 1)
            except Exception as exc:  # tensorboard not installed
                warnings.warn(f"TensorBoard logging disabled: {exc}", stacklevel=2)
        if progress and total_steps:
            from tqdm import tqdm

            self._bar = tqdm(total=total_steps, initial=self.resume_step, unit="step", dynamic_ncols=True,
                             file=sys.stderr, desc="train")
        elif say is not None and total_steps:
            self._status = StepStatus(total_steps, first=self.resume_step + 1, keys=progress_keys,
                                      eval_keys=eval_keys, every_s=status_every_s)

    def _truncate(self) -> None:
        if not self.path.exists():
            return
        kept: list[str] = []
        seen: set[int] = set()
        changed = False
        with open(self.path, encoding="utf-8", errors="replace") as f:  # (a garbled byte: that line only)
            raw = f.read()
        for line in raw.splitlines():
            try:
                rec = json.loads(line)
                step = rec["step"] if isinstance(rec, dict) else None
            except (json.JSONDecodeError, KeyError):
                step = None
            if not isinstance(step, int) or step > self.resume_step or step in seen:
                changed = True
                continue
            seen.add(step)
            kept.append(line)
        if raw and not raw.endswith("\n"):
            changed = True
        if changed:
            tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("".join(x + "\n" for x in kept))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)

    def log(self, step: int, metrics: dict) -> dict:
        """Append step ``step``'s line (fsynced); returns the record written."""
        rec = {"step": int(step), "time": round(time.time(), 3)}
        for k, v in metrics.items():
            if k in ("step", "time"):
                continue
            rec[str(k)] = _clean_value(v)
        self.last_step = int(step)
        if not self.enabled:
            return rec
        self._file.write(json.dumps(rec, separators=(",", ":")) + "\n")  # type: ignore[union-attr]  # open while enabled
        self._file.flush()  # type: ignore[union-attr]
        os.fsync(self._file.fileno())  # type: ignore[union-attr]
        if self._tb is not None:
            for k, v in rec.items():
                if k not in ("step", "time") and isinstance(v, (int, float)) and not isinstance(v, bool):
                    self._tb.add_scalar(k, v, step)
        if self._bar is not None:
            post = {k: f"{rec[k]:.4g}" for k in self.progress_keys if isinstance(rec.get(k), (int, float))}
            self._bar.set_postfix(post, refresh=False)
            self._bar.update(max(0, step - self._bar.n))
        if self._status is not None and self._say is not None:
            line = self._status.after(int(step), rec)
            if line:
                self._say(line)
        return rec

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tb is not None:
            self._tb.close()
            self._tb = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
