"""`coevo plot`: draw a run's training curves (RUN_DIR/metrics.jsonl) to a PNG."""

HELP = "plot a run's metrics.jsonl curves to a PNG"
DESCRIPTION = """Draw the training curves of a run.

  coevo plot RUN_DIR [--out PNG|-] [--keys reward loss ...] [--smooth N]

Reads RUN_DIR/metrics.jsonl (or a metrics file given directly) and the run's held-out evaluations,
and writes one PNG with a panel per metric family (reward/<role> share a panel; eval, loss,
clip_frac, kl, grad_norm, lr, tokens_per_s, ...). Default output: RUN_DIR/curves.png (the file a
run draws when it ends); --out - writes the PNG to stdout."""


def add_arguments(parser):
    from coevo.cli import add_output_options

    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory (or a metrics.jsonl file)")
    parser.add_argument("--out", default=None, metavar="PNG",
                        help="PNG to write, - for stdout (default RUN_DIR/curves.png)")
    parser.add_argument("--keys", nargs="+", default=None,
                        help="only these metrics or panels (e.g. reward loss clip_frac/high)")
    parser.add_argument("--smooth", type=int, default=1, metavar="N",
                        help="also draw a moving average over N steps (default 1: none)")
    parser.add_argument("--max-panels", type=int, default=16, metavar="N",
                        help="draw at most N panels, the most telling first (default 16)")
    add_output_options(parser, progress=False)


def run(args) -> int:
    import os
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    from matrix.errors import InputError
    from training.metrics_file import METRICS_FILE
    from training.plot import plot_metrics

    src = Path(args.run_dir)
    if not src.exists():
        raise InputError("no such run directory or metrics file", file=str(src))
    path = src / METRICS_FILE if src.is_dir() else src
    if not path.exists():
        raise InputError("no such file (is RUN_DIR a training run?)", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, not a metrics file", file=str(path))
    if args.smooth < 1 or args.max_panels < 1:
        raise InputError("--smooth and --max-panels must be >= 1")
    to_stdout = args.out == "-"
    if args.out and not to_stdout and Path(args.out).is_dir():
        raise InputError("is a directory; give the PNG file to write", file=args.out)
    if args.out and not to_stdout:
        kind = Path(args.out).suffix.lstrip(".").lower()
        if kind and kind != "png":  # matplotlib's other formats, by name; anything else is a usage error
            import matplotlib

            matplotlib.use("Agg", force=True)
            from matplotlib.backend_bases import FigureCanvasBase

            formats = FigureCanvasBase.get_supported_filetypes()
            if kind not in formats:
                raise InputError(f"{args.out}: cannot write an image of type {kind!r}; "
                                 f"name a .png file (or {', '.join(f for f in sorted(formats) if f != 'png')})",
                                 field="--out")
    if to_stdout and sys.stdout.isatty():
        raise InputError("will not write a PNG to a terminal; redirect stdout or give a file", field="--out")
    from coevo.run_driver import read_evals

    # held-out evaluations, incl. the one before step 1
    evals = read_evals(src) if src.is_dir() else []
    extra = {"eval": evals} if evals else {}
    with tempfile.TemporaryDirectory(prefix="coevo-plot-") as tmp:
        target = Path(tmp) / "curves.png" if to_stdout else args.out
        try:
            out = plot_metrics(src, target, keys=args.keys, max_panels=args.max_panels, smooth=args.smooth,
                               extra=extra)
        except UnicodeDecodeError:
            raise InputError("not a metrics file (binary, not JSON Lines text); give RUN_DIR or its "
                             "metrics.jsonl", file=str(path)) from None
        except ValueError as exc:
            raise InputError(str(exc).split(": ", 1)[-1], file=str(path)) from None
        if to_stdout:
            with open(out, "rb") as fh:
                shutil.copyfileobj(fh, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return 0
    if not args.quiet:
        print(f"wrote {os.fspath(out)}", file=sys.stderr)
    return 0
