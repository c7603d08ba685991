"""The Fixer on starts that do not move: repair success from a fixed set of broken programs.

The evaluation's ``fix_acc`` repairs the model's *own* failing Coder samples, so it moves with the
Coder: after RL the Coder solves the easy tasks itself and the programs left to repair are harder
ones (the demo's SFT start and its final model repair different programs). Here every model repairs
the same programs: up to ``--per-task`` AST mutants of each held-out task's reference (a fixed
seeded draw, :func:`matrix.mutation.mutants`) that fail one of its ground-truth tests, with the
same repair episodes as the evaluation (:mod:`coevo.repair`: feedback on the ground-truth tests,
``--turns`` attempts, solved = the last attempt passes every test) and the same sampling settings
(temperature 0.8). The named peer is the run's SFT start (``RUN/init``). Each model repairs every
start ``--samples`` times, with sampling seeds ``--seed``, ``--seed + 1``, ...: one seed's figure
on ~125 episodes moves by several points from seed to seed (0.195-0.356 over four seeds for one
model), so the mean over the seeds is the figure, and its spread is printed beside it.

  python benchmarks/fixer_fixed_starts.py runs/demo                       # SFT start vs runs/demo/model
  python benchmarks/fixer_fixed_starts.py runs/demo runs/coder/model      # ... and other models

Prints one JSON line: each model's ``fix_fixed_acc`` (mean over the seeds), the per-seed figures,
and its gain over the SFT start in points with the standard error of that difference (paired by
seed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def broken_starts(tasks, executor, per_task: int, mutants: int = 8):
    """``(task, program, matrix result, row)`` for up to ``per_task`` failing mutants per task."""
    from coevo.evaluate import _mutants

    jobs = [(t, _mutants(t.solutions[0], mutants), list(t.tests)) for t in tasks if t.solutions and t.tests]
    jobs = [j for j in jobs if j[1]]
    out = []
    for (t, muts, _), res in zip(jobs, executor.run_matrices(jobs)):
        failing = [i for i in range(len(muts)) if not res.passed[i].all()]
        out += [(t, muts[i], res, i) for i in failing[:per_task]]
    return out, len(jobs)


def repair_success(model_dir, starts, executor, turns: int, seed: int) -> float:
    from coevo.repair import public_feedback, run_episodes, start_episodes
    from roles.generation import GenerationConfig, GenerationEngine
    from roles.model_io import load_model

    model, tok = load_model(str(model_dir), device="cpu")
    engine = GenerationEngine(model, tok, GenerationConfig(temperature=0.8, max_new_tokens=160, seed=seed))
    episodes = [e for t, code, res, i in starts
                for e in start_episodes(t, code, public_feedback(t, res, i, 0), res.passed[i].mean(), 1,
                                        max_turns=turns, group=f"{t.task_id}#{i}")]
    run_episodes(episodes, engine, executor, tok)
    return sum(e.solved for e in episodes) / len(episodes) if episodes else 0.0


def _figures(per_seed: list[float]) -> dict:
    return {"fix_fixed_acc": round(sum(per_seed) / len(per_seed), 4), "per_seed": [round(v, 4) for v in per_seed]}


def _gain(per_seed: list[float], base: list[float]) -> dict:
    """The gain over the start in points, and the standard error of the mean paired difference."""
    diffs = [100 * (a - b) for a, b in zip(per_seed, base)]
    mean = sum(diffs) / len(diffs)
    se = (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs)) ** 0.5 if len(diffs) > 1 else None
    return {"gain_points": round(mean, 1), "gain_se": None if se is None else round(se, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a demo or train run directory (init/, model/, heldout.jsonl)")
    ap.add_argument("models", nargs="*", help="more model directories to compare (default: RUN/model)")
    ap.add_argument("--tasks", default=None, help="tasks JSONL (default: RUN/heldout.jsonl)")
    ap.add_argument("--per-task", type=int, default=2, help="failing mutants per task (default 2)")
    ap.add_argument("--turns", type=int, default=2, help="Fixer attempts per episode (default 2)")
    ap.add_argument("--seed", type=int, default=1234, help="first sampling seed (default 1234)")
    ap.add_argument("--samples", type=int, default=4, help="sampling seeds per model (default 4)")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    import torch

    from coevo.run_driver import start_model_dir
    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import load_tasks

    torch.set_num_threads(1)
    run = Path(args.run)
    start = start_model_dir(run / "init")  # (a run of a user's model names its directory there)
    models = [Path(m) for m in args.models] or [run / "model"]
    tasks = load_tasks(args.tasks or str(run / "heldout.jsonl"))
    t0 = time.monotonic()
    with Executor(ExecConfig(timeout=2.0, workers=args.workers)) as executor:
        starts, n_tasks = broken_starts(tasks, executor, args.per_task)
        seeds = [args.seed + k for k in range(max(1, args.samples))]
        base = [repair_success(start, starts, executor, args.turns, s) for s in seeds]
        rows = {str(m): [repair_success(m, starts, executor, args.turns, s) for s in seeds] for m in models}
    print(json.dumps({
        "benchmark": "fixer_fixed_starts", "tasks": n_tasks, "episodes": len(starts), "turns": args.turns,
        "seeds": seeds,
        "sft_start": {"model": str(start), **_figures(base)},
        "models": {m: {**_figures(v), **_gain(v, base)} for m, v in rows.items()},
        "seconds": round(time.monotonic() - t0, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
