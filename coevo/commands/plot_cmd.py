"""`coevo plot`: draw a run's training curves (RUN_DIR/metrics.jsonl) to a PNG."""

HELP = "plot a run's metrics.jsonl curves to a PNG"
DESCRIPTION = """Draw the training curves of a run.

  coevo plot RUN_DIR [--out PNG] [--keys reward loss ...] [--smooth N]

Reads RUN_DIR/metrics.jsonl (or a metrics file given directly) and writes one PNG with a panel per
metric family (reward/<role> share a panel; loss, clip_frac, kl, grad_norm, lr, tokens_per_s, ...).
Default output: RUN_DIR/metrics.png."""


def add_arguments(parser):
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory (or a metrics.jsonl file)")
    parser.add_argument("--out", default=None, help="PNG to write (default RUN_DIR/metrics.png)")
    parser.add_argument("--keys", nargs="+", default=None,
                        help="only these metrics or panels (e.g. reward loss clip_frac/high)")
    parser.add_argument("--smooth", type=int, default=1, help="also draw a moving average over N steps")
    parser.add_argument("--max-panels", type=int, default=16)


def run(args) -> int:
    import sys
    from pathlib import Path

    from matrix.errors import InputError
    from training.logging import METRICS_FILE
    from training.plot import plot_metrics

    src = Path(args.run_dir)
    if not src.exists():
        raise InputError("no such run directory or metrics file", file=str(src))
    path = src / METRICS_FILE if src.is_dir() else src
    if not path.exists():
        raise InputError("no such file (is RUN_DIR a training run?)", file=str(path))
    if args.smooth < 1 or args.max_panels < 1:
        raise InputError("--smooth and --max-panels must be >= 1")
    from coevo.pipeline import read_evals

    # held-out evaluations, incl. the one before step 1
    evals = read_evals(src) if src.is_dir() else []
    extra = {"eval": evals} if evals else {}
    try:
        out = plot_metrics(src, args.out, keys=args.keys, max_panels=args.max_panels, smooth=args.smooth,
                           extra=extra)
    except ValueError as exc:
        raise InputError(str(exc).split(": ", 1)[-1], file=str(path)) from None
    print(f"wrote {out}", file=sys.stderr)
    return 0
