"""`coevo data`: convert datasets to the tasks JSONL contract, and validate task files."""

HELP = "convert MBPP / HumanEval / CodeContests files to tasks JSONL; validate task files"
DESCRIPTION = """Dataset utilities.

  coevo data convert --input mbpp.jsonl.gz --out tasks.jsonl [--format auto] [--limit N]   (--out - : stdout)
  coevo data validate --tasks tasks.jsonl
  coevo data tinyworld --out DIR [--seed S]      (the tiny world's train/held-out tasks)

Formats: coevo, mbpp (text/code/test_list/test_setup_code), mbpp-sanitized (prompt/code/test_list/
test_imports), humaneval (prompt/entry_point/test with check(candidate)/canonical_solution),
codecontests (question/test_input/test_output, CURE-style stdio). JSON, JSON Lines (optionally .gz)
and directories saved with datasets' save_to_disk are read locally; nothing is downloaded."""


def add_arguments(parser):
    from coevo.cli import add_output_options
    from coevo.data import FORMATS

    sub = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    conv = sub.add_parser("convert", help="convert a dataset file to tasks JSONL")
    conv.add_argument("--input", required=True, help="dataset file or saved dataset directory")
    conv.add_argument("--out", required=True, help="tasks JSONL to write (- for stdout)")
    conv.add_argument("--format", default="auto", choices=FORMATS,
                      help="the dataset's layout (default: detected from the first record)")
    conv.add_argument("--limit", type=int, default=None, help="keep only the first N tasks")
    conv.add_argument("--ids", metavar="A-B", default=None,
                      help="keep tasks whose numeric id lies in A..B (MBPP splits: test 11-510, "
                           "validation 511-600, train 601-974)")
    val = sub.add_parser("validate", help="check a tasks file against the contract")
    val.add_argument("--tasks", required=True)
    tw = sub.add_parser("tinyworld", help="write the tiny world's tasks (train.jsonl, heldout.jsonl)")
    tw.add_argument("--out", required=True, help="directory")
    tw.add_argument("--seed", type=int, default=0)
    for action in (conv, val, tw):
        add_output_options(action, progress=False)


def run(args) -> int:
    import sys
    from pathlib import Path

    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic

    def say(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr)

    if args.data_command == "convert":
        from coevo.data import load_any

        if args.limit is not None and args.limit < 0:
            raise InputError("must be >= 0 (0: all tasks)", field="--limit")
        if args.out != "-" and Path(args.out).is_dir():
            raise InputError("is a directory; give the tasks JSONL file to write", file=args.out)

        tasks = load_any(args.input, args.format)
        if args.ids:
            from coevo.data import filter_ids

            tasks = filter_ids(tasks, args.ids)
        tasks = tasks[: args.limit] if args.limit else tasks
        write_jsonl_atomic(args.out, (t.to_json() for t in tasks))  # ("-": standard output)
        n_tests = sum(len(t.tests) for t in tasks)
        say(f"wrote {len(tasks)} tasks ({n_tests} tests) to {'stdout' if args.out == '-' else args.out}")
        return 0
    if args.data_command == "validate":
        from matrix.tasks import load_tasks

        try:
            tasks = load_tasks(args.tasks)
        except InputError:
            fmt = _dataset_format(args.tasks)
            if fmt is None:
                raise
            raise InputError(f"a dataset in the {fmt} format, not a tasks file; `coevo data convert --input "
                             f"{args.tasks} --out tasks.jsonl` converts it (coevo train and solve also read it "
                             "as it is)", file=args.tasks) from None
        say(f"{args.tasks}: {len(tasks)} valid tasks")
        return 0
    if args.data_command == "tinyworld":
        if args.out == "-":
            raise InputError("writes two files into a directory; '-' (stdout) cannot hold them", field="--out")
        if Path(args.out).exists() and not Path(args.out).is_dir():
            raise InputError("is a file; give a folder (train.jsonl and heldout.jsonl are written into it)",
                             file=args.out, field="--out")
        from coevo.tinyworld.library import build_world

        world = build_world(seed=args.seed)
        out = Path(args.out)
        write_jsonl_atomic(out / "train.jsonl", (t.to_json() for t in world.train_tasks))
        write_jsonl_atomic(out / "heldout.jsonl", (t.to_json() for t in world.heldout_tasks))
        say(f"wrote {len(world.train_tasks)} train and {len(world.heldout_tasks)} held-out tasks to {out}")
        return 0
    return 2


def _dataset_format(path: str) -> str | None:
    """The dataset format (mbpp, humaneval, ...) of the file's first record when it is one that
    `coevo data convert` reads and not a tasks file; else None."""
    from pathlib import Path

    from coevo.data import detect_format, exact_records
    from matrix.errors import InputError

    try:
        for _, record in exact_records(Path(path)):
            fmt = detect_format(record)
            return None if fmt == "coevo" else fmt
    except (InputError, ValueError, OSError):
        return None
    return None
