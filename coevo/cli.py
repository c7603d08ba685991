"""The ``coevo`` command line. Each subcommand lives in ``coevo/commands/<name>.py`` and exposes
``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``. Command modules import
nothing heavy at module level, so ``coevo matrix --help`` answers without importing torch.

Output policy, the same for every subcommand: results go to stdout or ``--out``; status lines
(``[coevo] ...``) and progress bars go to stderr; progress bars only when stderr is a terminal
(``--progress`` forces them); ``--quiet`` leaves nothing but results and errors. Libraries' own
chatter (transformers' weight-loading bars, DeepSpeed's log lines, which it prints on stdout) never
reaches stdout; see :func:`configure_output`.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import re
import signal
import sys
from pathlib import Path

# OpenMP threads that busy-wait between torch's many small ops make a shared 2-core machine crawl
# (measured: a 30-step SFT took 73 s instead of 2.8 s); read once when torch is first imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# subcommand -> module under coevo.commands
COMMANDS = {
    "matrix": "matrix_cmd",
    "select": "select_cmd",
    "gen-tests": "gen_tests_cmd",
    "solve": "solve_cmd",
    "train": "train_cmd",
    "eval": "eval_cmd",
    "demo": "demo_cmd",
    "plot": "plot_cmd",
    "data": "data_cmd",
    "config": "config_cmd",
}

# the import packages of the coevo distribution besides coevo itself
OWN_PACKAGES = ("matrix", "roles", "training")


# ----------------------------------------------------------------------------- foreign packages

def foreign_package_problem() -> str | None:
    """A one-line description of why ``matrix`` / ``roles`` / ``training`` would not import as
    coevo's own packages, or ``None`` when they would.

    Two ways it goes wrong: a module of the same name earlier on ``sys.path`` (a ``matrix.py`` in
    the current directory under ``python -m coevo``, another distribution's package in
    site-packages ahead of an editable install), or another installed distribution that ships the
    same top-level name (PyPI has unrelated ``matrix`` and ``roles`` packages), whose files then
    mix with ours. Cheap: ``find_spec`` and a directory listing, no imports."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent  # where coevo/ lives, so do its siblings
    for name in OWN_PACKAGES:
        if name in sys.modules:
            origin = getattr(sys.modules[name], "__file__", None)
        else:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            origin = spec.origin if spec is not None else None
            if spec is not None and origin is None and spec.submodule_search_locations:
                origin = f"a directory without __init__.py ({', '.join(spec.submodule_search_locations)})"
        expected = root / name / "__init__.py"
        if origin is None or not Path(origin).is_file() or Path(origin).resolve() != expected:
            found = origin or "nothing importable"
            return (f"the import name '{name}' resolves to {found}, not to coevo's own {expected.parent}; "
                    f"{_culprit(name, origin)}")
    for name in OWN_PACKAGES:
        dist = _foreign_distribution(name)
        if dist:
            return (f"the installed distribution '{dist}' also provides the top-level package '{name}' "
                    f"that coevo uses; uninstall it (pip uninstall {dist.split()[0]}) or install coevo "
                    "in a virtual environment of its own")
    return None


def _culprit(name: str, origin: str | None) -> str:
    dist = _foreign_distribution(name)
    if dist:
        return (f"the distribution '{dist}' installs the same name: uninstall it (pip uninstall "
                f"{dist.split()[0]}) or install coevo in a virtual environment of its own")
    if origin is None:
        return "reinstall coevo (pip install -e . in its checkout)"
    return f"rename or move {origin} (it comes before coevo's on sys.path)"


def _foreign_distribution(name: str) -> str | None:
    """``"NAME VERSION"`` of an installed distribution called ``name`` (not coevo) that ships a
    top-level ``name``; found by listing the site directories, without importlib.metadata's scan."""
    import re

    pattern = re.compile(rf"^{re.escape(name)}-([^-]+?)\.(dist|egg)-info$", re.IGNORECASE)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            m = pattern.match(item)
            if not m:
                continue
            info = Path(entry or ".") / item
            top = _top_level_names(info)
            if top is None or name in top:
                return f"{name} {m.group(1)}"
    return None


def _top_level_names(info: Path) -> set[str] | None:
    """Top-level import names a dist-info/egg-info directory declares; ``None`` if it says nothing."""
    try:
        return {x.strip() for x in (info / "top_level.txt").read_text(encoding="utf-8").splitlines() if x.strip()}
    except OSError:
        pass
    try:
        rows = (info / "RECORD").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return {r.split(",")[0].split("/")[0].removesuffix(".py") for r in rows if r}


# ----------------------------------------------------------------------------- output options

def add_output_options(parser: argparse.ArgumentParser, *, progress: bool = True) -> None:
    """``--quiet`` (nothing but results and errors) and, for commands with long work,
    ``--progress`` (progress bars even when stderr is not a terminal)."""
    group = parser.add_mutually_exclusive_group()
    if progress:
        group.add_argument("--progress", action="store_true", default=None,
                           help="show progress bars on stderr even when it is not a terminal "
                                "(default: only when it is)")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="print nothing but results and errors (no status lines, no progress bars)")


def progress_enabled(args) -> bool:
    """Whether this invocation draws progress bars (see :func:`add_output_options`)."""
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", None):
        return True
    return sys.stderr.isatty()


class _StderrHandler(logging.StreamHandler):
    """A stream handler that writes to whatever ``sys.stderr`` is at the time of each record (so a
    replaced or captured stderr never leaves it writing to a closed stream)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


class _ToStderr(logging.Filter):
    """Attached to DeepSpeed's logger (which writes to stdout): hands each record to a stderr
    handler instead, so stdout carries only results."""

    def __init__(self, handler: logging.Handler):
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.handler.level:
            self.handler.handle(record)
        return False


def configure_output(quiet: bool = False) -> None:
    """Status lines of the ``coevo`` logger to stderr (``[coevo] ...``; none with ``quiet``);
    transformers' and huggingface_hub's progress bars off (the weight-loading and shard-writing
    bars are not ours to show); DeepSpeed's log lines to stderr (warnings and up; errors only with
    ``quiet``). Call before the libraries are imported; safe to call again."""
    log = logging.getLogger("coevo")
    for h in list(log.handlers):
        if getattr(h, "_coevo", False):
            log.removeHandler(h)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("[coevo] %(message)s"))
    handler._coevo = True
    log.addHandler(handler)
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    log.propagate = False

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # read when huggingface_hub loads
    if quiet:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if "transformers" in sys.modules:  # already loaded (in-process callers): tell it directly
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        if quiet:
            hf_logging.set_verbosity_error()

    ds = logging.getLogger("DeepSpeed")
    for f in list(ds.filters):
        if isinstance(f, _ToStderr):
            ds.removeFilter(f)
    ds_handler = _StderrHandler()
    ds_handler.setLevel(logging.ERROR if quiet else logging.WARNING)
    ds_handler.setFormatter(logging.Formatter("[deepspeed] %(levelname)s %(message)s"))
    ds.addFilter(_ToStderr(ds_handler))


# ----------------------------------------------------------------------------- storage errors

# what the machine, not the program, did wrong: the user's to fix (free space, another folder)
_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG,
                   errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.EBUSY, errno.ENAMETOOLONG}
# matrix.jsonl's and training's atomic writes go through a temporary file beside the target
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{6,12}\.tmp$")


def _shown_path(name) -> str:
    """A path for the user: a temporary file of an atomic write shows as the file it was for."""
    p = Path(os.fsdecode(name))
    m = _TEMP_NAME.match(p.name)
    return str(p.with_name(m.group("name"))) if m else str(p)


def storage_error_line(exc: BaseException, fallback: str | None = None) -> str | None:
    """One line for an error of the disk or the file system (full, read-only, no permission, a file
    in the way of a folder or a folder in the way of a file), naming the path (``fallback``, the
    command's ``--out``, when the error names none); ``None`` for any other error. Libraries that
    raise their own types for a full disk (safetensors) are recognised by the OS's message."""
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        what = exc.strerror or str(exc)
        if exc.errno == errno.EEXIST and exc.filename and Path(os.fsdecode(exc.filename)).is_file():
            what = "is a file, not a folder"  # mkdir where a file is
        elif exc.errno == errno.EBUSY and exc.filename2:  # os.replace onto a folder or a mount point
            what = "is a directory"
        name = exc.filename2 or exc.filename
        where = _shown_path(name) if name else fallback
        return f"{where}: {what}" if where else what
    text = str(exc)
    m = re.search(r"(No space left on device|Disk quota exceeded|Read-only file system)", text)
    if m and not isinstance(exc, OSError):
        return f"{fallback}: {m.group(1)}" if fallback else m.group(1)
    return None


def check_output_file(path: str, option: str) -> None:
    """Before long work: ``path`` (an ``--out``-like option's file) can be written where it is, or
    an :class:`~matrix.errors.InputError` says why not (a folder there, a file in the way of its
    folder, a folder that cannot be written)."""
    from matrix.errors import InputError

    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory (expected a file to write)", file=path, field=option)
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"cannot write {path}: {parent} is a file, not a folder", field=option)
    if not os.access(parent, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(parent).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = "a read-only file system" if read_only else "no permission to write there"
        raise InputError(f"cannot write in {parent} ({why})", file=path, field=option)


def status_say(args, command: str = "coevo"):
    """A function printing one status line ``coevo <command>: <line>`` on stderr, or None with
    ``--quiet`` (for work that draws no progress bar, such as reading a codes file's chat answers;
    ``command`` where ``args`` names none)."""
    if getattr(args, "quiet", False):
        return None
    command = getattr(args, "command", None) or command

    def say(line: str) -> None:
        print(f"coevo {command}: {line}", file=sys.stderr, flush=True)

    return say


# options naming a file a command reads, and options naming a file it writes
_INPUT_OPTIONS = ("tasks", "codes", "tests", "input", "calibration", "config")
_OUTPUT_OPTIONS = ("out", "details")
# commands whose --out is one file written at the end: checked before the work
_FILE_OUT_COMMANDS = frozenset({"matrix", "select", "eval", "data convert"})


def _same_file(a, b) -> bool:
    """Whether two paths name one file that writing one of them would lose: by any spelling, a
    symlink or a hard link (one that does not exist yet: the same resolved path). A device or a
    FIFO loses nothing (``--input /dev/stdin --out /dev/stdout`` on a terminal are one pty;
    ``--out /dev/null --details /dev/null`` throws both away, as asked)."""
    import stat

    try:
        st = os.stat(a)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return False
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_outputs(args) -> None:
    """Before any work: no output option names a file the command reads (``--out codes.jsonl``
    would replace the user's codes with the matrix: the input lost, by any spelling of its path,
    a symlink or a hard link), and a command's one output file is no folder (found only at the
    end, after all the work, before). An :class:`~matrix.errors.InputError` says which."""
    from matrix.errors import InputError

    for out_opt in _OUTPUT_OPTIONS:
        out = getattr(args, out_opt, None)
        if not isinstance(out, (str, os.PathLike)) or str(out) in ("", "-"):
            continue
        for in_opt in _INPUT_OPTIONS:
            src = getattr(args, in_opt, None)
            if not isinstance(src, (str, os.PathLike)) or str(src) in ("", "-"):
                continue
            if _same_file(out, src):
                raise InputError(f"is the --{in_opt.replace('_', '-')} file {src}: writing it would lose "
                                 "that input; write the output to another file", file=str(out),
                                 field=f"--{out_opt.replace('_', '-')}")
    outs = [(o, getattr(args, o, None)) for o in _OUTPUT_OPTIONS]
    outs = [(o, str(v)) for o, v in outs if isinstance(v, (str, os.PathLike)) and str(v) not in ("", "-")]
    for i, (opt_a, a) in enumerate(outs):
        for opt_b, b in outs[i + 1:]:
            if _same_file(a, b):
                raise InputError(f"is also the --{opt_a.replace('_', '-')} file: one would be written over the "
                                 "other; give two files", file=b, field=f"--{opt_b.replace('_', '-')}")
    command = " ".join(filter(None, (getattr(args, "command", None), getattr(args, "data_command", None))))
    out = getattr(args, "out", None)
    if command in _FILE_OUT_COMMANDS and isinstance(out, str) and out not in ("", "-"):
        check_output_file(out, "--out")


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's preemption, ``kill``, ``timeout``) as Ctrl-C: the command's cleanup
    runs (temporary files, sandbox workers, a failed start's leftovers) and it says how to go on."""


def _stop_on_sigterm():
    """Make SIGTERM raise :class:`_Terminated` in this process's main thread (where the handler is
    still the default); returns what :func:`_restore_stop_handlers` puts back, or None. A process
    forked from this one gets the default back on its first SIGTERM and dies by it, as a terminated
    worker must.

    A stop raised where Python drops exceptions (a garbage-collector callback such as hypothesis',
    a ``__del__``, a weakref callback: "Exception ignored in ...") would be lost and the command
    would run on to its end and exit 0; :func:`_stop_again` sends that signal again, so that it is
    raised in the command's own code (SIGTERM as ``_Terminated``, Ctrl-C as ``KeyboardInterrupt``)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    pid = os.getpid()
    previous_hook = sys.unraisablehook

    def on_sigterm(signum, frame):
        if os.getpid() != pid:  # a forked child: die as the default would
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise _Terminated()

    def on_unraisable(unraisable):
        kind = unraisable.exc_type
        if os.getpid() == pid and isinstance(kind, type) and issubclass(kind, KeyboardInterrupt):
            sig = signal.SIGTERM if issubclass(kind, _Terminated) else signal.SIGINT
            if sig == signal.SIGTERM or signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                _stop_again(pid, sig)
                return
        previous_hook(unraisable)

    sys.unraisablehook = on_unraisable
    return signal.signal(signal.SIGTERM, on_sigterm), previous_hook, on_unraisable


def _stop_again(pid: int, sig: int) -> None:
    """Send ``sig`` to this process again, a moment later, from a timer thread: sent at once, the
    handler would run inside the hook (or the callback still running) and be dropped there again;
    50 ms later it runs at the main thread's next check, in the code the collector or ``__del__``
    interrupted (if that is one of them again, it comes back here once more)."""
    import threading

    timer = threading.Timer(0.05, os.kill, args=(pid, sig))
    timer.daemon = True
    timer.name = "coevo-stop-again"
    timer.start()


def _restore_stop_handlers(previous) -> None:
    """Undo :func:`_stop_on_sigterm` (given what it returned)."""
    if previous is None:
        return
    handler, hook, ours = previous
    signal.signal(signal.SIGTERM, handler)
    if sys.unraisablehook is ours:
        sys.unraisablehook = hook


def _resume_hint(args) -> str:
    """``; continue with ...`` where the command left something to continue (``args._resume_hint``,
    a callable a command sets, answers with the command line or None)."""
    hint = getattr(args, "_resume_hint", None)
    try:
        text = hint() if callable(hint) else None
    except Exception:
        text = None
    return f"; continue with `{text}`" if text else ""


# ----------------------------------------------------------------------------- the command

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coevo",
        description="Co-evolve one language model as Coder, Tester, Fixer and Proposer over a "
                    "sandboxed code x test execution matrix.")
    from coevo import __version__
    parser.add_argument("--version", action="version", version=f"coevo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        mod = importlib.import_module(f"coevo.commands.{module}")
        p = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before the command started (its imports, the arguments)
        print("coevo: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    problem = foreign_package_problem()
    if problem:
        print(f"coevo: error: {problem}", file=sys.stderr)
        return 2
    from matrix.errors import InputError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    configure_output(quiet=bool(getattr(args, "quiet", False)))
    previous = _stop_on_sigterm()
    try:
        check_outputs(args)
        return int(args._run(args) or 0)
    except InputError as exc:
        print(f"coevo {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except _Terminated:
        print(f"coevo {args.command}: stopped by SIGTERM{_resume_hint(args)}", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"coevo {args.command}: interrupted{_resume_hint(args)}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `coevo ... --out - | head`: the reader left; no traceback, no more writes
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:
        line = storage_error_line(exc, getattr(args, "out", None) or getattr(args, "resume", None))
        if line is None:
            raise
        print(f"coevo {args.command}: error: {line}{_resume_hint(args)}", file=sys.stderr)
        return 1
    finally:
        _restore_stop_handlers(previous)


if __name__ == "__main__":
    sys.exit(main())
