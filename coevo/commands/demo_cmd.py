"""`coevo demo`: the embedded tiny world, end to end on a CPU."""

HELP = "the tiny world demo: tokenizer + model from scratch, SFT warm-up, co-evolution, before/after"
DESCRIPTION = """The main job on a laptop CPU, with nothing downloaded:

  1. build the tiny world (tasks composed from small Python functions; held-out by composition),
  2. train a tokenizer and a small Llama-style model from scratch, SFT warm-up on all roles,
  3. evaluate on held-out tasks, co-evolve Coder/Tester/Fixer/Proposer with GRPO+, evaluate again.

Writes DIR/summary.json {"before": {code_acc, test_acc, bon_acc, ...}, "after": {...}, "seconds",
"roles"}, DIR/metrics.jsonl, DIR/curves.png, DIR/model (usable as --model by `coevo solve` /
`coevo gen-tests`) and DIR/heldout.jsonl, and prints the before/after table (stdout). The Fixer's
two figures: fix_acc repairs the evaluated model's own failing programs (after RL the Coder leaves
harder ones), fix_fixed_starts repairs the first evaluation's failing programs again (kept in
DIR/fixer_starts.jsonl): the Fixer alone, on the same starts before and after.

  coevo demo --out runs/demo
  coevo demo --out runs/demo-coder --roles coder        (ablation: train the Coder alone)

An --out that already holds a demo is resumed as it was started (an interrupted demo continues; a
finished one prints its results again); giving it other --roles, --config or overrides is refused,
never mixed. A DIR that holds only init/ (the SFT start of another demo, copied) starts RL from
it, so an ablation can share the joint run's starting point."""

ALL_ROLES = "coder,tester,fixer,proposer"


def add_arguments(parser):
    from coevo.cli import add_output_options

    parser.add_argument("--out", default="runs/demo", metavar="DIR", help="output directory (default runs/demo)")
    parser.add_argument("--roles", default=None,
                        help=f"comma-separated roles to train (default: all four, {ALL_ROLES})")
    parser.add_argument("--config", metavar="FILE|NAME",
                        help="YAML config or shipped config name to start from (default: the built-in tiny world)")
    add_output_options(parser)
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value", help="config overrides")


def _differences(a: dict, b: dict, prefix: str = "") -> list[str]:
    """Dotted fields whose values differ between two config dicts."""
    out = []
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if isinstance(va, dict) and isinstance(vb, dict):
            out += _differences(va, vb, f"{prefix}{k}.")
        elif va != vb:
            out.append(f"{prefix}{k}")
    return out


def run(args) -> int:
    import json
    import sys
    import time
    from pathlib import Path

    from coevo.cli import progress_enabled
    from coevo.run_driver import CONFIG_FILE, load_run_config, report_lines, resume_run, start_run, summarize
    from coevo.yaml_config import to_dict
    from matrix.errors import InputError
    from matrix.jsonl import write_text_atomic

    if args.out == "-":
        raise InputError("the demo writes a directory; '-' (stdout) cannot hold it", field="--out")
    out = Path(args.out)
    roles = [r.strip() for r in (args.roles or ALL_ROLES).split(",") if r.strip()]
    own_roles = any(o.partition("=")[0].strip() == "loop.roles" for o in args.overrides)
    if own_roles and args.roles is not None:
        raise InputError("give the roles once: --roles or loop.roles=", field="--roles")
    overrides = [*([] if own_roles else [f"loop.roles=[{','.join(roles)}]"]), *args.overrides]
    t0 = time.perf_counter()
    progress = progress_enabled(args)
    # after an interruption or a full disk: a demo continues by the same command
    args._resume_hint = lambda: f"coevo demo --out {out}" if (out / CONFIG_FILE).is_file() else None
    from coevo.commands.train_cmd import run_lock

    with run_lock(out, create=True):  # one process at a time on a demo's folder
        if (out / CONFIG_FILE).exists():
            saved = load_run_config(out / CONFIG_FILE, check=False)
            if args.roles is not None or args.config or args.overrides:
                wanted = load_run_config(args.config, overrides, check=False)
                diff = _differences(to_dict(saved), to_dict(wanted))
                if diff:
                    raise InputError(f"already holds a demo started with other settings ({', '.join(diff[:4])}"
                                     f"{', ...' if len(diff) > 4 else ''}); resume it with `coevo demo --out "
                                     f"{out}` alone, or choose another --out", file=str(out))
            if not args.quiet:
                print(f"[coevo] resuming the demo in {out} (roles: {','.join(saved.loop.roles)})", file=sys.stderr)
            result = resume_run(out, progress=progress)
        else:
            result = start_run(out, args.config, overrides, progress=progress)
    seconds = time.perf_counter() - t0  # of this invocation (a resumed demo counts its own part)
    lines = report_lines(out, result["evals"])
    if not result["evals"]:
        print("\n".join(lines), flush=True)
        return 1
    summary = summarize(result["evals"])
    summary.update({"seconds": round(seconds, 1), "roles": list(result["config"].loop.roles)})
    if not result.get("finished") or not (out / "summary.json").exists():
        write_text_atomic(out / "summary.json", json.dumps(summary, indent=1))
    print("\n".join([*lines, f"summary: {out / 'summary.json'}"]), flush=True)
    if not args.quiet and not result.get("finished"):
        print(f"[coevo] demo done in {seconds / 60:.1f} min", file=sys.stderr)
    return 0
