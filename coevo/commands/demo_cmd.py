"""`coevo demo`: the embedded tiny world, end to end on a CPU."""

HELP = "the tiny world demo: tokenizer + model from scratch, SFT warm-up, co-evolution, before/after"
DESCRIPTION = """The main job on a laptop CPU, with nothing downloaded:

  1. build the tiny world (tasks composed from small Python functions; held-out by composition),
  2. train a tokenizer and a small Llama-style model from scratch, SFT warm-up on all roles,
  3. evaluate on held-out tasks, co-evolve Coder/Tester/Fixer/Proposer with GRPO+, evaluate again.

Writes DIR/summary.json {"before": {code_acc, test_acc, bon_acc, ...}, "after": {...}, "seconds"},
DIR/metrics.jsonl, DIR/curves.png, DIR/model (usable as --model by `coevo solve` / `coevo gen-tests`)
and DIR/heldout.jsonl. Re-running with the same --out resumes an interrupted demo.

  coevo demo --out runs/demo
  coevo demo --out runs/demo-coder --roles coder        (ablation: train the Coder alone)

A DIR that already holds init/ (the SFT start of another demo, copied) starts RL from it, so an
ablation can share the joint run's starting point."""


def add_arguments(parser):
    parser.add_argument("--out", default="runs/demo", help="output directory (default runs/demo)")
    parser.add_argument("--roles", default="coder,tester,fixer,proposer",
                        help="comma-separated roles to train (default: all four)")
    parser.add_argument("--config", help="YAML config to start from (default: the built-in tiny world)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value", help="config overrides")


def run(args) -> int:
    import json
    import sys
    import time
    from pathlib import Path

    from coevo.pipeline import resume_run, start_run, summarize
    from matrix.jsonl import write_text_atomic

    out = Path(args.out)
    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    t0 = time.perf_counter()
    progress = not args.no_progress
    if (out / "config.yaml").exists():
        print(f"[coevo] resuming the demo in {out}", file=sys.stderr)
        result = resume_run(out, progress=progress)
    else:
        overrides = [f"loop.roles=[{','.join(roles)}]", *args.overrides]
        result = start_run(out, args.config, overrides, progress=progress)
    seconds = time.perf_counter() - t0  # of this invocation (a resumed demo counts its own part)
    if not result["evals"]:
        print("[coevo] no held-out evaluation was recorded (loop.eval_every=0?)", file=sys.stderr)
        return 1
    summary = summarize(result["evals"])
    summary.update({"seconds": round(seconds, 1), "roles": roles})
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=1))
    b, a = summary["before"], summary["after"]
    print("held-out      before   after", file=sys.stderr)
    for k in b:
        print(f"  {k:10s}  {b[k]:6.3f}  {a.get(k, float('nan')):6.3f}", file=sys.stderr)
    print(f"[coevo] demo done in {seconds / 60:.1f} min: {out}/summary.json, {out}/curves.png, {out}/model",
          file=sys.stderr)
    return 0
