"""`coevo train`: co-evolution training run (resumable)."""

import contextlib

HELP = "train the shared model on all roles with GRPO+ (resumable)"
DESCRIPTION = """Co-evolution training: curriculum -> Coder/Tester/Fixer/Proposer samples -> sandboxed
matrix -> rewards -> GRPO+ update, with atomic checkpoints.

  coevo train --config smoke --out runs/smoke [key.sub=value ...]
  coevo train --resume runs/smoke            (continue a stopped or killed run)

--config takes a YAML file or the name of a shipped config: smoke (CI-sized), tiny (the demo's
settings), single_gpu, multi_gpu_zero3. Relative paths inside a config file resolve against the
file's directory; those in key=value overrides against the current directory.

Everything the run needs (device, model directory, task files, DeepSpeed JSON) is checked before
any work; a start that fails leaves nothing behind. RUN_DIR receives config.yaml, metrics.jsonl
(one line per step, each step exactly once across restarts), checkpoints/, eval.jsonl and, at the
end, model/ (save_pretrained: `coevo solve --model RUN_DIR/model`) and curves.png. The last lines
printed (stdout) are the held-out figures before RL and at the end, and these paths."""


def add_arguments(parser):
    from coevo.cli import add_output_options

    parser.add_argument("--config", metavar="FILE|NAME",
                        help="YAML config file, or a shipped config's name (smoke, tiny, single_gpu, "
                             "multi_gpu_zero3); default: the CPU tiny world")
    parser.add_argument("--out", metavar="RUN_DIR", help="run directory to create")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR")
    add_output_options(parser)
    parser.add_argument("overrides", nargs="*", metavar="key.sub=value",
                        help="override config fields, e.g. train.lr=1e-6 loop.steps=50")


def run(args) -> int:
    from matrix.errors import InputError

    if bool(args.out) == bool(args.resume):
        raise InputError("give exactly one of --out RUN_DIR (new run) or --resume RUN_DIR")
    if args.resume and (args.config or args.overrides):
        raise InputError("--resume takes its config from RUN_DIR/config.yaml; drop --config/overrides")
    if "-" in (args.out, args.resume):
        raise InputError("a run is a directory; '-' (stdout) cannot hold one", field="--out/--resume")
    from pathlib import Path

    from coevo.cli import progress_enabled
    from coevo.run_driver import report_lines, resume_run, start_run

    progress = progress_enabled(args)
    run_dir = Path(args.resume or args.out)
    # after an interruption or a full disk: the command that continues, where a run is left to continue
    args._resume_hint = lambda: (f"coevo train --resume {run_dir}" if (run_dir / "config.yaml").is_file()
                                 else None)
    with run_lock(run_dir, create=not args.resume):
        if args.resume:
            line = None if args.quiet else _resuming(run_dir)
            if line:
                import logging

                logging.getLogger("coevo").info(line)
            result = resume_run(args.resume, progress=progress)
        else:
            result = start_run(args.out, args.config, args.overrides, progress=progress)
    from training import distributed as D

    if D.is_main():
        print("\n".join(report_lines(Path(args.resume or args.out), result["evals"])), flush=True)
    return 0


def _resuming(run_dir) -> str | None:
    """``resuming the run in DIR after step 12/300`` for a run left to continue; None for a finished
    run or one that cannot be read (``resume_run`` says what is wrong with it)."""
    from coevo.run_driver import CONFIG_FILE, finished_steps, load_run_config
    from training.checkpoint import load_latest

    try:
        cfg = load_run_config(run_dir / CONFIG_FILE, check=False)
        if finished_steps(run_dir, cfg) is not None:
            return None
        info = load_latest(run_dir)
    except Exception:
        return None
    if info is None:
        return f"resuming the run in {run_dir} from its start (no step was checkpointed)"
    return f"resuming the run in {run_dir} after step {info.step}/{cfg.loop.steps}"


LOCK_FILE = ".coevo.lock"


@contextlib.contextmanager
def run_lock(run_dir, *, create: bool):
    """Hold ``RUN_DIR/.coevo.lock`` (``flock``, let go by the kernel however the process ends) while
    this command works on the run: a second ``coevo train --resume`` or ``coevo demo`` on a run that
    is still going (its owner thought it dead) stops with one line, where both wrote the same
    checkpoints and logged steps twice. Only the launcher's rank 0 takes it. ``create``: make the
    folder (a new run); a start that fails and leaves no run takes the lock file, and a folder it
    made, away again."""
    import fcntl
    import os
    from pathlib import Path

    from matrix.errors import InputError

    run = Path(run_dir)
    if os.environ.get("RANK", "0") != "0" or (run.exists() and not run.is_dir()) or not (create or run.is_dir()):
        yield  # the run's own checks report what is wrong
        return
    made = not run.exists()
    run.mkdir(parents=True, exist_ok=True)
    lock = run / LOCK_FILE
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            pid = os.read(fd, 32).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        who = f"another coevo process (pid {pid})" if pid.isdigit() else "another coevo process"
        raise InputError(f"{who} is working on this run; let it finish or stop it, then resume", file=str(run)) \
            from None
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        yield
    finally:
        try:
            if not (run / "config.yaml").exists():  # no run was left: nothing of this command stays
                lock.unlink(missing_ok=True)
                if made:
                    try:
                        run.rmdir()
                    except OSError:
                        pass
        finally:
            os.close(fd)
