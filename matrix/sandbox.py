"""Starting, talking to and stopping the sandbox workers (:mod:`matrix.worker`).

Isolation levels (``ExecConfig.isolation``):

``namespace``
    Each worker is PID 1 of fresh mount, PID, network, IPC and UTS namespaces (plus a user
    namespace when the executor is not root) with a minimal read-only root: the Python
    installation, ``/usr`` and ``/lib`` read-only, a synthetic ``/etc``, ``/dev/{null,zero,full,
    random,urandom}``, a fresh ``/proc``, and a size-capped private tmpfs on ``/tmp`` that is
    wiped after every cell. No network (only a down loopback). Cells run under an unprivileged
    uid of their own (root executor) or with every capability dropped (user namespace), with
    ``no_new_privs``. The executor's processes and files are not visible; the worker (PID 1)
    ignores every signal a cell may send. Every process a cell leaves behind is killed.
``process``
    The degraded level where namespaces are unavailable: the same rlimits, new session, scrubbed
    environment and private temporary directory, the worker as child subreaper killing every
    orphan. Cells can see the host file system (read-only only where permissions say so), use the
    network, and, when they run under the executor's uid, signal its processes. A warning says so.
``auto``
    ``namespace`` when it works here, else ``process`` with a warning (printed once per process).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from matrix.worker import grow_pipe

WORKER = str(Path(__file__).with_name("worker.py"))
FRAME = struct.Struct("<I")
_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"coevo sandbox: warning: {message}", file=sys.stderr, flush=True)


def scrubbed_env(tmp: str = "/tmp") -> dict[str, str]:
    """The environment of every worker and cell: nothing of the caller's survives."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }


def namespaces_unavailable() -> str | None:
    """A reason why namespaces cannot work here, or None when they may (the worker confirms)."""
    if not sys.platform.startswith("linux"):
        return f"namespaces need Linux (platform {sys.platform})"
    if not hasattr(os, "memfd_create"):
        return "os.memfd_create is unavailable"
    if os.geteuid() != 0:
        try:
            if Path("/proc/sys/kernel/unprivileged_userns_clone").read_text().strip() == "0":
                return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
        except OSError:
            pass
        try:
            if int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0:
                return "user namespaces are disabled (user.max_user_namespaces=0)"
        except (OSError, ValueError):
            pass
    return None


def _world_traversable(path: str) -> bool:
    """Whether an unprivileged uid can read the Python installation at ``path``."""
    p = Path(path).resolve()
    for part in [p, *p.parents]:
        try:
            mode = part.stat().st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
    try:
        return bool(p.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _python_dirs() -> list[str]:
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    exe = os.path.realpath(sys.executable)
    if not any(exe.startswith(d.rstrip("/") + "/") for d in dirs):
        dirs.add(os.path.dirname(exe))
    return sorted(d for d in dirs if d and os.path.isdir(d))


class WorkerProcess:
    """One worker: a ``python matrix/worker.py`` process and its two pipes."""

    def __init__(self, index: int, mode: str, limits: dict):
        self.index = index
        self.mode = mode
        self.stage = None
        self.tmpdir = None
        cfg = dict(limits)
        cfg["isolation"] = mode
        uid = gid = None
        if os.geteuid() == 0:
            # two unprivileged ids per worker: its isolated cells, and its runner of pure cells
            uid = gid = 1_800_000_000 + ((os.getpid() % 100_000) * 64 + 2 * index) % 200_000_000
        cfg["uid"], cfg["gid"] = uid, gid
        cfg["runner_uid"] = uid + 1 if uid is not None else None
        if mode == "namespace":
            self.stage = tempfile.mkdtemp(prefix=".coevo-ns-")
            cfg["stage"] = self.stage
            cfg["binds"] = _python_dirs() + list(cfg.get("import_paths", ()))
            env = scrubbed_env("/tmp")
        else:
            self.tmpdir = tempfile.mkdtemp(prefix="coevo-cell-")
            if uid is not None:
                if all(_world_traversable(d) for d in _python_dirs()):
                    os.chown(self.tmpdir, uid, gid)
                else:  # the dropped uid could not import the standard library
                    cfg["uid"] = cfg["gid"] = cfg["runner_uid"] = None
                    cfg["drop_caps"] = True
            cfg["tmpdir"] = self.tmpdir
            env = scrubbed_env(self.tmpdir)
        self.cfg = cfg
        self.proc = subprocess.Popen(
            [sys.executable, "-s", "-B", WORKER, json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env, close_fds=True,
            start_new_session=True, cwd="/")
        self.fd_in = self.proc.stdin.fileno()
        self.fd_out = self.proc.stdout.fileno()
        for fd in (self.fd_in, self.fd_out):
            grow_pipe(fd)  # whole units without blocking
        self.buf = bytearray()
        self.ready: dict | None = None
        self.outstanding: list[int] = []
        self.busy_until = 0.0

    # -- startup
    def wait_ready(self, timeout: float = 30.0) -> dict:
        """Block until the worker's ready frame; ``{"ok": False, "error": ...}`` on failure."""
        import select

        deadline = time.monotonic() + timeout
        os.set_blocking(self.fd_out, False)
        while self.ready is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return {"ok": False, "error": "worker did not start in time"}
            r, _, _ = select.select([self.fd_out], [], [], left)
            if not r:
                continue
            alive = self.read_available()
            for frame in self.frames():
                if frame[:1] == b"R":
                    self.ready = json.loads(frame[1:])
                    break
            if self.ready is None and not alive:
                self.kill()
                return {"ok": False, "error": f"worker exited during start-up (status {self.proc.poll()})"}
        return self.ready

    # -- I/O
    def send(self, obj: bytes) -> None:
        data = FRAME.pack(len(obj)) + obj
        view = memoryview(data)
        while view:
            n = os.write(self.fd_in, view)
            view = view[n:]

    def read_available(self) -> bool:
        """Append what the pipe holds to the buffer; False once the worker's end is closed."""
        while True:
            try:
                chunk = os.read(self.fd_out, 1 << 20)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.buf += chunk

    def frames(self):
        while len(self.buf) >= 4:
            n = FRAME.unpack_from(self.buf, 0)[0]
            if len(self.buf) < 4 + n:
                return
            frame = bytes(self.buf[4:4 + n])
            del self.buf[:4 + n]
            yield frame

    # -- shutdown
    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        self._cleanup()

    def close(self, wait: float = 2.0) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                pass
        self._cleanup()

    def _cleanup(self) -> None:
        try:
            self.proc.wait(5)
        except (subprocess.TimeoutExpired, OSError):
            pass
        try:
            self.proc.stdout.close()
        except OSError:
            pass
        if self.stage:
            try:
                os.rmdir(self.stage)
            except OSError:
                pass
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def spawn_workers(n: int, requested: str, limits: dict) -> tuple[list[WorkerProcess], str, str | None]:
    """Start ``n`` worker processes without waiting for them (they boot while the caller plans).
    Returns (workers, mode tried, why namespaces are unavailable or None)."""
    if requested not in ("auto", "namespace", "process"):
        raise ValueError(f"isolation must be auto, namespace or process, not {requested!r}")
    mode = "process" if requested == "process" else "namespace"
    reason = namespaces_unavailable() if mode == "namespace" else None
    if reason:
        if requested == "namespace":
            raise RuntimeError(f"namespace isolation unavailable: {reason}")
        mode = "process"
    return [WorkerProcess(i, mode, limits) for i in range(n)], mode, reason


def await_workers(workers: list[WorkerProcess], requested: str, mode: str, reason: str | None,
                  limits: dict) -> tuple[list[WorkerProcess], str, str]:
    """Wait for the workers' ready frames; fall back from namespaces to processes under
    ``auto`` (with a warning). Returns (workers, level, detail)."""
    n = len(workers)
    try:
        readies = [w.wait_ready() for w in workers]
        failed = next((r for r in readies if not r.get("ok")), None)
        if failed is not None and mode == "namespace":
            reason = failed.get("error", "unknown error")
            for w in workers:
                w.kill()
            workers = []
            if requested == "namespace":
                raise RuntimeError(f"namespace isolation unavailable: {reason}")
            mode = "process"
            workers = [WorkerProcess(i, mode, limits) for i in range(n)]
            readies = [w.wait_ready() for w in workers]
            failed = next((r for r in readies if not r.get("ok")), None)
        if failed is not None:
            raise RuntimeError(f"sandbox worker failed to start: {failed.get('error')}")
    except BaseException:
        for w in workers:
            w.kill()
        raise
    detail = readies[0].get("detail", "") if readies else ""
    if mode == "process":
        why = f" ({reason})" if reason else (" (requested)" if requested == "process" else "")
        if workers and workers[0].cfg.get("uid"):
            who = ""
        elif os.geteuid() == 0:
            who = ("; cells run as root without capabilities (the Python installation is not "
                   "readable by an unprivileged uid), so the process cap is not enforced and "
                   "root-owned host files are exposed")
        else:
            who = "; cells run under the executor's uid and can signal its processes"
        warn_once("namespace isolation unavailable" + why + "; running cells with process isolation "
                  "only: rlimits, new session and a private temp dir, but the host file system and "
                  "the network are visible" + who)
    return workers, mode, detail


def start_workers(n: int, requested: str, limits: dict) -> tuple[list[WorkerProcess], str, str]:
    """Start ``n`` workers at the requested isolation and wait for them: (workers, level, detail)."""
    workers, mode, reason = spawn_workers(n, requested, limits)
    return await_workers(workers, requested, mode, reason, limits)
