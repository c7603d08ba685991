"""A generic resumable training driver.

:func:`run_loop` runs ``step_fn(step)`` for ``step = start .. total_steps`` (1-based), logging each
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


def run_loop(run_dir: str | Path, total_steps: int, step_fn: Callable[[int], dict], *, trainer=None,
             model=None, state: dict[str, Any] | None = None, save_every: int = 10, keep: int = 2,
             resume: bool = True, progress: bool = True, tensorboard: bool = False,
             progress_keys: tuple[str, ...] = ("loss",), on_step: Callable[[int, dict], None] | None = None,
             run_info: dict | None = None) -> dict:
    """Run or resume a loop (see the module doc). Returns ``{"start_step", "end_step",
    "resumed_from"}``.

    ``trainer``: saved/restored through its ``save_checkpoint``/``load_checkpoint``; ``model``: a
    bare model to export/restore instead; ``state``: ``{name: obj}`` with ``state_dict`` /
    ``load_state_dict`` (curriculum, data iterators, ...). ``resume=False`` refuses a ``RUN_DIR``
    that already holds a checkpoint. ``run_info`` is written once to ``RUN_DIR/run.json``.
    ``on_step(step, record)`` is called after each step is logged (e.g. evaluation hooks).
    """
    if total_steps < 0:
        raise ValueError("total_steps: must be >= 0")
    if save_every < 1:
        raise ValueError("save_every: must be >= 1")
    run_dir = Path(run_dir)
    if D.is_main():
        run_dir.mkdir(parents=True, exist_ok=True)
    D.barrier()
    info = ckpt.load_latest(run_dir)
    if info is not None and not resume:
        raise FileExistsError(f"{run_dir}: already holds a run (checkpoint at step {info.step}); "
                              "resume it or choose another directory")
    start = 1
    if info is not None:
        ckpt.restore_checkpoint(info, trainer=trainer, model=model, state=state)
        start = info.step + 1
    ckpt.clean(run_dir)
    if run_info is not None and D.is_main() and not (run_dir / "run.json").exists():
        (run_dir / "run.json").write_text(json.dumps(run_info, indent=1, default=str), encoding="utf-8")
    logger = MetricsLogger(run_dir, resume_step=start - 1, total_steps=total_steps, tensorboard=tensorboard,
                           progress=progress, progress_keys=progress_keys)
    last_saved = start - 1
    try:
        for step in range(start, total_steps + 1):
            metrics = step_fn(step) or {}
            rec = logger.log(step, metrics)
            if on_step is not None:
                on_step(step, rec)
            if step % save_every == 0 or step == total_steps:
                ckpt.save_checkpoint(run_dir, step, trainer=trainer, model=model, state=state, keep=keep)
                last_saved = step
    finally:
        logger.close()
    return {"start_step": start, "end_step": max(total_steps, start - 1),
            "resumed_from": info.step if info is not None else None, "last_saved": last_saved}
