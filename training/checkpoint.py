"""Atomic, resumable checkpoints of a run.

Layout under ``RUN_DIR/checkpoints/``::

    step-00000010/
        meta.json          {"step": 10, "time": ..., "world_size": 1, "files": [...]}
        model/             save_pretrained export (safetensors + config), loadable on its own
        trainer.pt         optimizer state + counters (or deepspeed/ with the engine's own files)
        state.pt           the caller's extra state: {name: obj.state_dict() or plain value}
        rng-rank0.pt       python, numpy, torch (and CUDA) RNG states, one file per rank
    latest                 "step-00000010" -- the pointer, written last

Atomicity: everything is written into ``.tmp-step-00000010/``, every file is fsynced, the folder
is renamed to ``step-00000010`` and the parent fsynced, and only then the ``latest`` pointer is
replaced (temp file + ``os.replace`` + fsync). A crash at any point leaves the previous
checkpoint as ``latest``; leftovers (``.tmp-*`` folders, folders newer than ``latest``) are removed
by the next save or :func:`clean`. After the pointer moves, all but the newest ``keep`` step
folders are deleted.

With several ranks every function here is collective: rank 0 creates, renames and prunes folders
and writes the pointer; every rank writes its RNG file and its share of the trainer state.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training import distributed as D

POINTER = "latest"
_STEP_RE = re.compile(r"^step-(\d{8,})$")


@dataclass
class CheckpointInfo:
    step: int
    path: Path
    meta: dict


def checkpoints_dir(run_dir: str | Path) -> Path:
    return Path(run_dir) / "checkpoints"


def step_name(step: int) -> str:
    return f"step-{step:08d}"


# ------------------------------------------------------------------------------------ RNG
def capture_rng() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# ------------------------------------------------------------------------------------ fs helpers
def _fsync_file(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process's umask (read from /proc where it is shown, so no other thread sees it change)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply_umask(root: str | Path) -> None:
    """Give every file under ``root`` the mode a plain ``open(path, "w")`` gives (0666 less the
    umask): safetensors writes its files 0600 whatever the umask, so a shared run directory's
    weights would be unreadable to the group that reads the rest."""
    mode = 0o666 & ~current_umask()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, mode)


def fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            _fsync_file(Path(dirpath) / name)
        _fsync_dir(Path(dirpath))


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


# ------------------------------------------------------------------------------------ save / load
def save_checkpoint(run_dir: str | Path, step: int, *, trainer=None, model=None, state: dict[str, Any] | None = None,
                    keep: int = 2, extra_meta: dict | None = None) -> Path:
    """Write checkpoint ``step`` atomically and point ``latest`` at it; returns its folder.

    ``trainer``: anything with ``save_checkpoint(folder)`` (a :class:`~training.trainer.PolicyTrainer`
    saves model, optimizer and counters); ``model``: a bare HF model to export instead;
    ``state``: ``{name: obj}`` where ``obj`` has ``state_dict()`` or is picklable as is.
    """
    if keep < 1:
        raise ValueError("keep: must be >= 1")
    root = checkpoints_dir(run_dir)
    name = step_name(step)
    tmp = root / f".tmp-{name}"
    final = root / name
    if D.is_main():
        root.mkdir(parents=True, exist_ok=True)
        clean(run_dir)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
    D.barrier()
    if trainer is not None:
        trainer.save_checkpoint(tmp)
    elif model is not None and D.is_main():
        model.save_pretrained(tmp / "model", safe_serialization=True)
    torch.save(capture_rng(), tmp / f"rng-rank{D.rank()}.pt")
    if D.is_main():
        if state:
            torch.save({k: (v.state_dict() if hasattr(v, "state_dict") else v) for k, v in state.items()},
                       tmp / "state.pt")
        D.barrier()  # all ranks' files are in place
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        meta = {"step": int(step), "time": time.time(), "world_size": D.world_size(), "files": files,
                **(extra_meta or {})}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        apply_umask(tmp)
        fsync_tree(tmp)
        if final.exists():  # a folder from a run that crashed before moving the pointer
            shutil.rmtree(final)
        os.replace(tmp, final)
        _fsync_dir(root)
        write_text_atomic(root / POINTER, name + "\n")
        _prune(root, keep)
    else:
        D.barrier()
    D.barrier()
    return final


class CheckpointError(FileNotFoundError):
    """A run's checkpoint that cannot be read (a damaged or missing file): the message names it
    and what to do."""


def damaged(what: Path, exc: BaseException, root: Path, done: str = "read") -> CheckpointError:
    """The one-line error for a checkpoint file (or directory) ``what`` under ``root`` that cannot be
    ``done`` (read, restored) because of ``exc``."""
    return CheckpointError(f"{what}: cannot be {done} ({type(exc).__name__}: {str(exc)[:160]}); the run's files "
                           f"are unchanged: point {root / POINTER} at an earlier complete step-* directory to "
                           "resume from there")


def load_latest(run_dir: str | Path) -> CheckpointInfo | None:
    """The checkpoint ``latest`` points at, or ``None`` for a run without one. Raises
    :class:`CheckpointError` when the pointer or the checkpoint's ``meta.json`` is damaged."""
    root = checkpoints_dir(run_dir)
    ptr = root / POINTER
    if not ptr.exists():
        return None
    try:
        name = ptr.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise damaged(ptr, exc, root) from None
    path = root / name
    meta_path = path / "meta.json"
    if not _STEP_RE.match(name) or not meta_path.exists():
        raise CheckpointError(f"{ptr}: points at {name[:80]!r}, which is not a complete checkpoint; point it at "
                              "an earlier complete step-* directory to resume from there")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        return CheckpointInfo(int(meta["step"]), path, meta)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise damaged(meta_path, exc, root) from None


def restore_checkpoint(info: CheckpointInfo | str | Path, *, trainer=None, model=None,
                       state: dict[str, Any] | None = None, rng: bool = True) -> CheckpointInfo:
    """Load a checkpoint into ``trainer`` (or ``model``), the ``state`` objects (``load_state_dict``
    where they have it; plain values are returned in ``info.meta["state"]``) and the RNGs."""
    if not isinstance(info, CheckpointInfo):
        path = Path(info)
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        info = CheckpointInfo(int(meta["step"]), path, meta)
    path = info.path
    ws = int(info.meta.get("world_size", 1))
    if trainer is not None:
        if getattr(trainer, "engine", None) is not None and ws != D.world_size():
            raise ValueError(f"{path}: saved by {ws} ranks, resuming with {D.world_size()} (DeepSpeed "
                             "optimizer partitions need the same world size)")
        trainer.load_checkpoint(path)
    elif model is not None:
        from training.trainer import load_weights

        load_weights(model, path / "model")
    saved: dict = {}
    if (path / "state.pt").exists():
        saved = torch.load(path / "state.pt", map_location="cpu", weights_only=False)
    for k, v in (state or {}).items():
        if k in saved and hasattr(v, "load_state_dict"):
            v.load_state_dict(saved[k])
    info.meta["state"] = saved
    if rng:
        f = path / f"rng-rank{D.rank()}.pt"
        if not f.exists():
            f = path / "rng-rank0.pt"
        if f.exists():
            restore_rng(torch.load(f, map_location="cpu", weights_only=False))
    return info


def list_checkpoints(run_dir: str | Path) -> list[int]:
    root = checkpoints_dir(run_dir)
    if not root.exists():
        return []
    return sorted(int(m.group(1)) for p in root.iterdir() if (m := _STEP_RE.match(p.name)) and p.is_dir())


def clean(run_dir: str | Path) -> None:
    """Remove leftovers of interrupted saves: ``.tmp-*`` folders and step folders newer than
    ``latest`` (rank 0 only; call it where no save is in flight)."""
    if not D.is_main():
        return
    root = checkpoints_dir(run_dir)
    if not root.exists():
        return
    for p in root.iterdir():
        if p.name.startswith(".tmp-") or (p.name.startswith(f".{POINTER}.tmp")):
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    info = None
    try:
        info = load_latest(run_dir)
    except FileNotFoundError:
        pass
    newest = info.step if info else -1
    for s in list_checkpoints(run_dir):
        if s > newest:
            shutil.rmtree(root / step_name(s), ignore_errors=True)


def _prune(root: Path, keep: int) -> None:
    steps = sorted(int(m.group(1)) for p in root.iterdir() if (m := _STEP_RE.match(p.name)))
    for s in steps[:-keep]:
        shutil.rmtree(root / step_name(s), ignore_errors=True)
