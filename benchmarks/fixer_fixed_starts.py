"""The Fixer on starts that do not move: repair success from a fixed set of broken programs.

The evaluation's ``fix_acc`` repairs the model's *own* failing Coder samples, so it moves with the
Coder: after RL the Coder solves the easy tasks itself and the programs left to repair are harder
ones (the demo's SFT start and its final model repair different programs). Here every model repairs
the same programs: up to ``--per-task`` AST mutants of each held-out task's reference (a fixed
seeded draw, :func:`matrix.mutation.mutants`) that fail one of its ground-truth tests, with the
same repair episodes as the evaluation (:mod:`coevo.repair`: feedback on the ground-truth tests,
``--turns`` attempts, solved = the last attempt passes every test) and the same sampling settings
(temperature 0.8, seed 1234). The named peer is the run's SFT start (``RUN/init``).

  python benchmarks/fixer_fixed_starts.py runs/demo                       # SFT start vs runs/demo/model
  python benchmarks/fixer_fixed_starts.py runs/demo runs/coder/model      # ... and other models

Prints one JSON line: each model's ``fix_fixed_acc`` and its gain over the SFT start, in points.
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a demo or train run directory (init/, model/, heldout.jsonl)")
    ap.add_argument("models", nargs="*", help="more model directories to compare (default: RUN/model)")
    ap.add_argument("--tasks", default=None, help="tasks JSONL (default: RUN/heldout.jsonl)")
    ap.add_argument("--per-task", type=int, default=2, help="failing mutants per task (default 2)")
    ap.add_argument("--turns", type=int, default=2, help="Fixer attempts per episode (default 2)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    import torch

    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import load_tasks

    torch.set_num_threads(1)
    run = Path(args.run)
    start = run / "init"
    models = [Path(m) for m in args.models] or [run / "model"]
    tasks = load_tasks(args.tasks or str(run / "heldout.jsonl"))
    t0 = time.monotonic()
    with Executor(ExecConfig(timeout=2.0, workers=args.workers)) as executor:
        starts, n_tasks = broken_starts(tasks, executor, args.per_task)
        base = repair_success(start, starts, executor, args.turns, args.seed)
        rows = {str(m): repair_success(m, starts, executor, args.turns, args.seed) for m in models}
    print(json.dumps({
        "benchmark": "fixer_fixed_starts", "tasks": n_tasks, "episodes": len(starts), "turns": args.turns,
        "sft_start": {"model": str(start), "fix_fixed_acc": round(base, 4)},
        "models": {m: {"fix_fixed_acc": round(v, 4), "gain_points": round(100 * (v - base), 1)}
                   for m, v in rows.items()},
        "seconds": round(time.monotonic() - t0, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
