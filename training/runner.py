"""A generic resumable training driver.

:class:`ResumableRun` opens a run directory for a loop the caller writes (restore, log, save);
:func:`run_loop` runs ``step_fn(step)`` over one for ``step = start .. total_steps`` (1-based), logging each
step's metrics to ``RUN_DIR/metrics.jsonl`` and checkpointing every ``save_every`` steps and at the
last step. Per step the order is::

    metrics = step_fn(step)        # the caller's work (generation, rewards, trainer.step ...)
    logger.log(step, metrics)      # fsynced
    save_checkpoint(step)          # when step % save_every == 0 or step == total_steps

If ``RUN_DIR`` holds a checkpoint (``checkpoints/latest``), the run resumes from it: the trainer
(model + optimizer + counters), the ``state`` objects (``load_state_dict``) and the RNGs are
restored, metrics lines after that step are dropped, and the loop continues at checkpoint step
+ 1. So a run killed at any instant (``kill -9`` included) and resumed logs every step exactly
once; if everything the steps depend on is in the checkpoint (model, optimizer, RNG, the
caller's state) and the kernels are deterministic, it also ends with the same weights as an
uninterrupted run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training import checkpoint as ckpt
from training import distributed as D
from training.metrics_file import MetricsLogger


class ResumableRun:
    """A run directory opened for stepping: the latest checkpoint restored, the metrics log open.
    The caller's loop reads top-down::

        with ResumableRun(run_dir, total_steps, trainer=trainer, state={"curriculum": cur}) as run:
            for step in run.steps():
                metrics = ...              # the caller's work
                run.log(step, metrics)     # fsynced
                run.save_if_due(step)      # step % save_every == 0 or the last step

    ``trainer``: saved/restored through its ``save_checkpoint``/``load_checkpoint``; ``model``: a
    bare model to export/restore instead; ``state``: ``{name: obj}`` with ``state_dict`` /
    ``load_state_dict`` (curriculum, data iterators, ...). ``resume=False`` refuses a ``RUN_DIR``
    that already holds a checkpoint. ``run_info`` is written once to ``RUN_DIR/run.json``.
    ``progress``: a progress bar; where none is drawn, ``say`` gets a status line for the first
    and last step and one at most every 30 s (:class:`training.metrics_file.StepStatus`: the
    ``progress_keys``, and ``eval_keys`` labelled held-out).
    """

    def __init__(self, run_dir: str | Path, total_steps: int, *, trainer=None, model=None,
                 state: dict[str, Any] | None = None, save_every: int = 10, keep: int = 2, resume: bool = True,
                 progress: bool = True, tensorboard: bool = False, progress_keys: tuple[str, ...] = ("loss",),
                 run_info: dict | None = None, say: Callable[[str], None] | None = None,
                 eval_keys: tuple[str, ...] = ()):
        if total_steps < 0:
            raise ValueError("total_steps: must be >= 0")
        if save_every < 1:
            raise ValueError("save_every: must be >= 1")
        self.run_dir, self.total_steps = Path(run_dir), total_steps
        self.trainer, self.model, self.state = trainer, model, state
        self.save_every, self.keep = save_every, keep
        if D.is_main():
            self.run_dir.mkdir(parents=True, exist_ok=True)
        D.barrier()
        latest = ckpt.load_latest(self.run_dir)
        if latest is not None and not resume:
            raise FileExistsError(f"{self.run_dir}: already holds a run (checkpoint at step {latest.step}); "
                                  "resume it or choose another directory")
        self.start = 1
        if latest is not None:
            try:
                ckpt.restore_checkpoint(latest, trainer=trainer, model=model, state=state)
            except Exception as exc:  # noqa: BLE001 - a truncated or garbled file of the checkpoint
                # (torch's RuntimeError, safetensors' own error, pickle's, EOFError, ...): named below
                raise ckpt.damaged(latest.path, exc, latest.path.parent, "restored") from None
            self.start = latest.step + 1
        self.resumed_from = latest.step if latest is not None else None
        ckpt.clean(self.run_dir)
        if run_info is not None and D.is_main() and not (self.run_dir / "run.json").exists():
            (self.run_dir / "run.json").write_text(json.dumps(run_info, indent=1, default=str), encoding="utf-8")
        self.logger = MetricsLogger(self.run_dir, resume_step=self.start - 1, total_steps=total_steps,
                                    tensorboard=tensorboard, progress=progress, progress_keys=progress_keys,
                                    say=say, eval_keys=eval_keys)
        self.last_saved = self.start - 1

    def steps(self) -> range:
        """The steps still to run: checkpoint step + 1 .. total_steps (1-based)."""
        return range(self.start, self.total_steps + 1)

    def log(self, step: int, metrics: dict) -> dict:
        """Append the step's metrics (fsynced; see :class:`training.metrics_file.MetricsLogger`)."""
        return self.logger.log(step, metrics)

    def save_if_due(self, step: int) -> None:
        """Checkpoint (atomically) every ``save_every`` steps and at the last step."""
        if step % self.save_every == 0 or step == self.total_steps:
            ckpt.save_checkpoint(self.run_dir, step, trainer=self.trainer, model=self.model, state=self.state,
                                 keep=self.keep)
            self.last_saved = step

    @property
    def info(self) -> dict:
        return {"start_step": self.start, "end_step": max(self.total_steps, self.start - 1),
                "resumed_from": self.resumed_from, "last_saved": self.last_saved}

    def close(self) -> None:
        self.logger.close()

    def __enter__(self) -> ResumableRun:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_loop(run_dir: str | Path, total_steps: int, step_fn: Callable[[int], dict], *, trainer=None,
             model=None, state: dict[str, Any] | None = None, save_every: int = 10, keep: int = 2,
             resume: bool = True, progress: bool = True, tensorboard: bool = False,
             progress_keys: tuple[str, ...] = ("loss",), on_step: Callable[[int, dict], None] | None = None,
             run_info: dict | None = None, say: Callable[[str], None] | None = None) -> dict:
    """Run or resume ``step_fn`` over a :class:`ResumableRun` (see the module doc). Returns
    ``{"start_step", "end_step", "resumed_from", "last_saved"}``. ``on_step(step, record)`` is
    called after each step is logged (e.g. evaluation hooks)."""
    with ResumableRun(run_dir, total_steps, trainer=trainer, model=model, state=state, save_every=save_every,
                      keep=keep, resume=resume, progress=progress, tensorboard=tensorboard,
                      progress_keys=progress_keys, run_info=run_info, say=say) as run:
        for step in run.steps():
            rec = run.log(step, step_fn(step) or {})
            if on_step is not None:
                on_step(step, rec)
            run.save_if_due(step)
    return run.info
