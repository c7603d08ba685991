"""Memory and process limits for a cell's whole process tree, with cgroups (v2 or v1).

The executor (parent side, :class:`CgroupTree`) creates one cgroup per worker under a cgroup of
its own (``coevo-<pid>``) and sets its limits; the worker moves each process it starts into that
cgroup (the zygote's child writes ``0`` to ``cgroup.procs`` before dropping its privileges), and
after each cell kills whatever is left in it and reads whether the kernel's out-of-memory killer
fired (:class:`CellCgroup`). A tree of children, memory held in memfds or pipes, and a tmpfs
written by the cell are all charged to it.

Detection: cgroup v2 when ``/sys/fs/cgroup/cgroup.controllers`` lists ``memory`` and ``pids``; else
v1 with the ``memory`` and ``pids`` hierarchies mounted under ``/sys/fs/cgroup``; else none (the
per-process rlimits still hold; the executor warns once).
"""

from __future__ import annotations

import os
import signal
import time

__all__ = ["CgroupTree", "CellCgroup", "detect"]

ROOT = "/sys/fs/cgroup"


def detect(root: str = ROOT) -> tuple[str, dict[str, str]] | tuple[None, str]:
    """("v2", {"unified": path}) / ("v1", {"memory": path, "pids": path}) where this process
    may create cgroups, or (None, why not)."""
    ctl = os.path.join(root, "cgroup.controllers")
    if os.path.exists(ctl):
        try:
            have = open(ctl).read().split()
        except OSError as exc:
            return None, f"cgroup v2 unreadable ({exc})"
        missing = {"memory", "pids"} - set(have)
        if missing:
            return None, f"cgroup v2 lacks the {', '.join(sorted(missing))} controller"
        return ("v2", {"unified": root}) if os.access(root, os.W_OK) else (None, "cgroup v2 is not writable")
    dirs = {c: os.path.join(root, c) for c in ("memory", "pids")}
    if all(os.path.exists(os.path.join(d, "cgroup.procs")) for d in dirs.values()):
        if all(os.access(d, os.W_OK) for d in dirs.values()):
            return "v1", dirs
        return None, "the cgroup v1 memory and pids hierarchies are not writable"
    return None, "no cgroup memory and pids controllers are mounted"


def _write(path: str, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


class CgroupTree:
    """Parent side: ``coevo-<pid>`` with one child cgroup per worker, limits set."""

    def __init__(self, version: str, roots: dict[str, str], tag: str):
        self.version = version
        self.roots = roots
        self.tag = tag
        self.created: list[str] = []

    @classmethod
    def create(cls, n_workers: int, memory_bytes: int, max_procs: int) -> tuple[CgroupTree | None, str]:
        detected = detect()
        if detected[0] is None:
            return None, detected[1]  # why not
        version, roots = detected
        _remove_stale(roots)
        tree = cls(version, roots, f"coevo-{os.getpid()}-{time.monotonic_ns() % 10**9}")
        try:
            for d in roots.values():
                top = os.path.join(d, tree.tag)
                os.mkdir(top)
                tree.created.append(top)
                if version == "v2":
                    _write(os.path.join(top, "cgroup.subtree_control"), "+memory +pids")
            for k in range(n_workers):
                tree.add_worker(k, memory_bytes, max_procs)
        except OSError as exc:
            tree.remove()
            return None, f"cannot create cgroups ({exc.strerror or exc})"
        return tree, version

    def worker_dirs(self, k: int, part: str = "cell") -> dict[str, str]:
        """The cgroup of worker ``k``'s cells (``part="cell"``) or of its runner of pure
        programs (``part="runner"``): separate, so that cleaning up after a cell never touches
        the runner."""
        return {c: os.path.join(d, self.tag, f"w{k}-{part}") for c, d in self.roots.items()}

    def add_worker(self, k: int, memory_bytes: int, max_procs: int) -> None:
        for part in ("cell", "runner"):
            self._add(self.worker_dirs(k, part), memory_bytes, max_procs)

    def _add(self, dirs: dict[str, str], memory_bytes: int, max_procs: int) -> None:
        for c, d in dirs.items():
            if not os.path.isdir(d):
                os.mkdir(d)
                self.created.append(d)
            if self.version == "v2":
                _write(os.path.join(d, "memory.max"), str(memory_bytes))
                try:
                    _write(os.path.join(d, "memory.swap.max"), "0")
                except OSError:
                    pass
                _write(os.path.join(d, "pids.max"), str(max_procs))
            elif c == "memory":
                _write(os.path.join(d, "memory.limit_in_bytes"), str(memory_bytes))
                try:
                    _write(os.path.join(d, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                except OSError:
                    pass
            else:
                _write(os.path.join(d, "pids.max"), str(max_procs))

    def remove(self) -> None:
        for d in reversed(self.created):
            _kill_members(d)
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.created = []


def _kill_members(d: str) -> None:
    for _ in range(50):
        try:
            pids = [int(x) for x in open(os.path.join(d, "cgroup.procs")).read().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.002)


def _remove_stale(roots: dict[str, str]) -> None:
    """Empty ``coevo-<pid>-*`` cgroups of executors that are gone (killed with -9)."""
    for d in roots.values():
        try:
            names = [n for n in os.listdir(d) if n.startswith("coevo-")]
        except OSError:
            continue
        for n in names:
            try:
                pid = int(n.split("-")[1])
                os.kill(pid, 0)
                continue  # still running
            except (ValueError, IndexError):
                continue
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            top = os.path.join(d, n)
            for sub in os.listdir(top) if os.path.isdir(top) else ():
                p = os.path.join(top, sub)
                if os.path.isdir(p):
                    _kill_members(p)
                    try:
                        os.rmdir(p)
                    except OSError:
                        pass
            try:
                os.rmdir(top)
            except OSError:
                pass


class CellCgroup:
    """Worker side: the worker's cgroup, at its path inside the sandbox."""

    def __init__(self, version: str, dirs: dict[str, str]):
        self.version = version
        self.dirs = dirs
        self.procs_files = [os.path.join(d, "cgroup.procs") for d in dirs.values()]
        mem = dirs.get("memory") or dirs.get("unified")  # v1 has "memory", v2 "unified"
        self.oom_file = os.path.join(mem, "memory.events" if version == "v2" else "memory.oom_control")  # type: ignore[arg-type]
        self.failcnt_file = os.path.join(mem, "memory.failcnt")  # type: ignore[arg-type]
        self.kill_file = os.path.join(dirs["unified"], "cgroup.kill") if version == "v2" else None
        self._oom = self._oom_count()

    def members(self) -> list[int]:
        out: set[int] = set()
        for f in self.procs_files:
            try:
                out.update(int(x) for x in open(f).read().split())
            except (OSError, ValueError):
                pass
        return sorted(out)

    def kill_all(self, wait: float = 2.0) -> bool:
        """Kill every process in the cgroup; True once it is empty."""
        deadline = time.monotonic() + wait
        pids = self.members()
        if not pids:
            return True
        if self.kill_file and os.path.exists(self.kill_file):
            try:
                _write(self.kill_file, "1")
            except OSError:
                pass
        while True:
            if not pids:
                return True
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            if time.monotonic() > deadline:
                return False
            time.sleep(0.0002)
            pids = self.members()

    def _oom_count(self) -> int:
        try:
            text = open(self.oom_file).read()
        except OSError:
            text = ""
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "oom_kill":
                return int(parts[1])
        try:
            return int(open(self.failcnt_file).read().strip() or 0)
        except (OSError, ValueError):
            return 0

    def oom_fired(self) -> bool:
        """Whether the out-of-memory killer fired in the cgroup since the last call."""
        now = self._oom_count()
        fired = now > self._oom
        self._oom = now
        return fired
