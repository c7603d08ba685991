"""The executor's pool of sandbox workers: starting them (at the isolation level that works
here), talking to them, stopping them.

Isolation levels (``ExecConfig.isolation``):

``namespace``
    Each worker is PID 1 of fresh mount, PID, network, IPC and UTS namespaces (plus a user
    namespace when the executor is not root) with a minimal read-only root
    (:mod:`matrix.sandbox.namespace`): no network, no ``/proc``, no host files but the Python
    installation and system libraries (read-only), a fresh tmpfs ``/tmp`` for every cell that
    could write to it. Programs and tests run under unprivileged uids of their own (root
    executor) or without capabilities (user namespace).
``process``
    The degraded level where namespaces are unavailable: the same rlimits, seccomp filter, audit
    hook, cgroups and fresh processes, a private temporary directory emptied after every cell;
    but the host file system and the network are visible. A warning says so.
``auto``
    ``namespace`` when it works here, else ``process`` with a warning (once per process).

At every level: processes forked by a clean zygote (:mod:`matrix.sandbox.zygote`), a seccomp
filter (:mod:`matrix.sandbox.syscall_filter`), cgroup limits for a cell's whole process tree
(:mod:`matrix.sandbox.cgroups`) where the kernel offers them; each missing mechanism is named in
one warning and in :attr:`Pool.guards` (the ``sandbox`` field of ``coevo matrix`` output).
"""

from __future__ import annotations

import fcntl
import importlib.util
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

from matrix.sandbox.tmpdir import CELL_DIR_MODE
from matrix.sandbox.wire import grow_pipe

PACKAGE = str(Path(__file__).with_name("sandbox"))
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
        "PYTHONWARNINGS": "ignore",
        # numeric libraries start one thread per core by default: a cell's threads count against
        # its process limit, and the workers already use the cores
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
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


def masked_modules() -> list[str]:
    """Files of the extension modules no test needs (raw memory, subinterpreters)."""
    from matrix.sandbox.zygote import FORBIDDEN_MODULES

    out = []
    for name in sorted(FORBIDDEN_MODULES):
        if "." in name:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        origin = getattr(spec, "origin", None) if spec else None
        if origin and origin.endswith(".so") and os.path.isfile(origin):
            out.append(os.path.realpath(origin))
    return out


UID_FIRST, UID_PAIRS = 1_800_000_000, 100_000_000  # the cells' uids: pairs above 1.8e9
UID_LOCKS = "/run/coevo-uids"  # one lock file per pair in use (root only)
_held_uids: dict[int, tuple[int, int]] = {}  # worker index -> (base uid, locked fd), this process
_more_uids: dict[int, int] = {}  # base uid -> locked fd: further pairs this process holds
_lent_uids: set[int] = set()  # bases a live worker of this process runs its programs under
_lock_pid = [0]  # the process that holds the locks (a forked child holds none of its own)


def _uids(index: int) -> tuple[int, int]:
    """Two unprivileged uids per worker (root executor): programs, tests.

    A pair is this process's while it holds the pair's lock file (``flock``, released by the
    kernel when the process ends, ``kill -9`` included), so two runs at once never share a uid,
    whatever their pids (a shared uid would share its process count and, in process mode, the
    right to signal). Within the process a pair serves one live worker at a time (two executors at
    once, as coevo gen-tests keeps beside its usual one, once got the same pairs; red-team pass 15):
    worker ``index`` takes the pair it locked first when no live worker has it (a restarted
    worker, a later executor), else one given back, else a new one; :func:`_give_back_uids` when
    the worker is gone. The lock files are removed when the process exits."""
    held = _held_uids.get(index)
    if held is not None and held[0] not in _lent_uids:
        _lent_uids.add(held[0])
        return held[0], held[0] + 1
    for base in sorted(b for b in (*(h[0] for h in _held_uids.values()), *_more_uids) if b not in _lent_uids):
        _lent_uids.add(base)
        return base, base + 1
    start = os.getpid() * 32 + index
    try:
        os.makedirs(UID_LOCKS, mode=0o700, exist_ok=True)
        found = os.lstat(UID_LOCKS)
        if found.st_uid != 0 or not stat.S_ISDIR(found.st_mode):
            raise OSError(f"{UID_LOCKS} is not a directory of root's")
    except OSError:  # no /run to lock in: the pair of the pid, as before locks
        k = start % UID_PAIRS
        while UID_FIRST + 2 * k in _lent_uids:
            k = (k + 1) % UID_PAIRS
        _keep_uids(index, UID_FIRST + 2 * k, -1)
        return UID_FIRST + 2 * k, UID_FIRST + 2 * k + 1
    for probe in range(4096):
        base = UID_FIRST + 2 * ((start + probe) % UID_PAIRS)
        path = os.path.join(UID_LOCKS, str(base))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (a pair of this process's: a lock of its own)
            if os.stat(path, follow_symlinks=False).st_ino != os.fstat(fd).st_ino:
                raise OSError("removed by the run that held it")  # locked after that run let it go
        except OSError:
            os.close(fd)
            continue
        _keep_uids(index, base, fd)
        return base, base + 1
    raise RuntimeError(f"no free pair of cell uids under {UID_LOCKS} (4096 tried)")


def _keep_uids(index: int, base: int, fd: int) -> None:
    if _lock_pid[0] != os.getpid():  # the first pair of this process: its files go when it exits
        _lock_pid[0] = os.getpid()
        import atexit

        atexit.register(_remove_uid_locks)
    if index not in _held_uids:
        _held_uids[index] = (base, fd)
    else:
        _more_uids[base] = fd
    _lent_uids.add(base)


def _give_back_uids(base: int | None) -> None:
    """The worker that ran its programs under the pair ``base`` is gone: the pair may serve another."""
    if base is not None:
        _lent_uids.discard(base)


def _forget_uids() -> None:
    """In a forked child: the parent's pairs are not the child's (their locks are shared with the
    parent through the inherited descriptors), so an executor of the child locks pairs of its own."""
    _held_uids.clear()
    _more_uids.clear()
    _lent_uids.clear()
    _lock_pid[0] = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_uids)


def _remove_uid_locks() -> None:
    """At exit: remove this process's lock files (each while still locked: a run that opened it
    before finds it removed once it gets the lock, and takes another), then let them go."""
    if _lock_pid[0] != os.getpid():
        return
    for base, fd in [*_held_uids.values(), *((b, f) for b, f in _more_uids.items())]:
        if fd < 0:
            continue
        try:
            os.unlink(os.path.join(UID_LOCKS, str(base)))
        except OSError:
            pass
        try:
            os.close(fd)
        except OSError:
            pass
    _held_uids.clear()
    _more_uids.clear()
    _lent_uids.clear()


class WorkerProcess:
    """One worker: a ``python matrix/sandbox worker`` process and its two pipes."""

    def __init__(self, index: int, mode: str, limits: dict, cgroup_dirs: dict | None = None,
                 cgroup_version: str | None = None):
        self.index = index
        self.mode = mode
        self.stage = None
        self.tmpdir = None
        cfg = {k: v for k, v in limits.items()}
        cfg["isolation"] = mode
        uid = gid = test_uid = None
        self.uid_base: int | None = None
        if os.geteuid() == 0:
            uid, test_uid = _uids(index)
            gid = self.uid_base = uid
        cfg["uid"], cfg["gid"], cfg["test_uid"] = uid, gid, test_uid
        cfg["package"] = PACKAGE
        cfg["cgroup_version"] = cgroup_version if cgroup_dirs else None
        if mode == "namespace":
            from matrix.sandbox.namespace import CGROUP_DIR, SANDBOX_DIR

            self.stage = tempfile.mkdtemp(prefix=".coevo-ns-")
            cfg["stage"] = self.stage
            cfg["binds"] = _python_dirs() + [p for p in cfg.get("import_paths", ()) if not p.startswith("/tmp/")]
            cfg["package_dir"] = SANDBOX_DIR
            cfg["mask"] = [] if cfg.get("allow_ctypes") else masked_modules()
            cfg["cgroup_dirs"] = cgroup_dirs or {}
            cfg["cgroup_inside"] = {k: f"{CGROUP_DIR}/{k}" for k in (cgroup_dirs or {})}
            env = scrubbed_env("/tmp")
        else:
            self.tmpdir = tempfile.mkdtemp(prefix="coevo-cell-")
            if uid is not None:
                # programs never run as root: where the Python installation is not readable by
                # other users (a pyenv under /root), the switch stays, and a program imports what
                # the zygote loaded before it (the standard library's usual modules), nothing else
                # (red-team pass 8: keeping root there gave programs every capability). The cell's
                # two processes (a generic test's test and program, two uids) share it through the
                # program's group, which the test process also holds: each may remove the other's
                # files, as in plain Python's one process (red-team pass 18), and no other uid gets
                # in (0777 let another worker's or run's program unlink a running cell's files)
                os.chown(self.tmpdir, 0, uid)
                os.chmod(self.tmpdir, CELL_DIR_MODE)
                cfg["private_python"] = not all(_world_traversable(d) for d in _python_dirs() + [PACKAGE])
            cfg["tmpdir"] = self.tmpdir
            cfg["package_dir"] = PACKAGE
            cfg["cgroup_inside"] = cgroup_dirs or {}
            env = scrubbed_env(self.tmpdir)
        cfg["env"] = env
        self.cfg = cfg
        self.proc = subprocess.Popen(
            [sys.executable, "-s", "-B", PACKAGE, "worker", json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env, close_fds=True,
            start_new_session=True, cwd="/")
        self.fd_in = self.proc.stdin.fileno()  # type: ignore[union-attr]  # stdin=PIPE
        self.fd_out = self.proc.stdout.fileno()  # type: ignore[union-attr]  # stdout=PIPE
        for fd in (self.fd_in, self.fd_out):
            grow_pipe(fd)
        self.buf = bytearray()
        self.ready: dict | None = None
        self.outstanding: list[int] = []
        self.busy_until = 0.0

    # -- startup
    def wait_ready(self, timeout: float = 60.0) -> dict:
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
        view = memoryview(FRAME.pack(len(obj)) + obj)
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

    def end_input(self) -> None:
        """Tell the worker to end: its stdin closed (it finishes and exits at end of input)."""
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]  # stdin=PIPE
        except OSError:
            pass

    def close(self, wait: float = 2.0) -> None:
        self.end_input()
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
        _give_back_uids(self.uid_base)
        self.uid_base = None
        try:
            self.proc.stdout.close()  # type: ignore[union-attr]  # stdout=PIPE
        except OSError:
            pass
        if self.stage:
            try:
                os.rmdir(self.stage)
            except OSError:
                pass
        if self.tmpdir:
            from matrix.sandbox.tmpdir import wipe

            wipe(self.tmpdir)
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def _compile_sandbox() -> None:
    """Byte-compile the sandbox's modules next to them, its subpackages too (what ``pip install``
    does for a wheel), so that every worker, zygote and cell reads them instead of compiling them
    again: those processes run with ``-B`` and never write bytecode themselves. Nothing happens
    when the files are up to date or the directory is not writable. (The top directory alone left
    ``remote/`` to be compiled from source by every zygote's start and by every row's process
    that loaded it: 60 ms of CPU a row with a task's setup on the MBPP pool, issue 23.)"""
    if sys.dont_write_bytecode:
        return
    import compileall

    try:
        compileall.compile_dir(PACKAGE, maxlevels=2, quiet=2)
    except OSError:
        pass


class Pool:
    """The workers of one executor, their cgroups, and what is in force (:attr:`guards`)."""

    def __init__(self, n: int, requested: str, limits: dict):
        if requested not in ("auto", "namespace", "process"):
            raise ValueError(f"isolation must be auto, namespace or process, not {requested!r}")
        self.n = n
        self.requested = requested
        self.limits = limits
        self.mode = "process" if requested == "process" else "namespace"
        self.reason = namespaces_unavailable() if self.mode == "namespace" else None
        if self.reason:
            if requested == "namespace":
                raise RuntimeError(f"namespace isolation unavailable: {self.reason}")
            self.mode = "process"
        self.cgroups = None
        self.cgroup_version = None
        self.cgroup_reason = None
        if limits.get("cgroups", True):
            from matrix.sandbox.cgroups import CgroupTree

            mem = (int(limits["memory_mb"]) + 64) << 20
            self.cgroups, info = CgroupTree.create(n, mem, int(limits["max_procs"]) + 4)
            if self.cgroups is None:
                self.cgroup_reason = info
            else:
                self.cgroup_version = info
        else:
            self.cgroup_reason = "turned off"
        _compile_sandbox()
        self.workers = [self.new_worker(i) for i in range(n)]
        self.detail = ""
        self.guards: dict = {}

    def new_worker(self, index: int) -> WorkerProcess:
        dirs = None
        if self.cgroups is not None:
            dirs = {f"{part}-{c}": d for part in ("cell", "runner")
                    for c, d in self.cgroups.worker_dirs(index, part).items()}
        return WorkerProcess(index, self.mode, self.limits, dirs, self.cgroup_version)

    def started(self) -> bool:
        """Whether every worker has said something since it was started (its ready frame, or its
        end), without blocking: :meth:`await_ready` would not wait."""
        import select

        fds = [w.fd_out for w in self.workers if w.ready is None]
        if not fds:
            return True
        readable, _, _ = select.select(fds, [], [], 0)
        return len(readable) == len(fds)

    def await_ready(self) -> None:
        """Wait for the workers' ready frames; fall back from namespaces to processes under
        ``auto`` (with a warning); name every missing mechanism in one warning."""
        try:
            readies = [w.wait_ready() for w in self.workers]
            failed = next((r for r in readies if not r.get("ok")), None)
            if failed is not None and self.mode == "namespace":
                self.reason = failed.get("error", "unknown error")
                for w in self.workers:
                    w.kill()
                if self.requested == "namespace":
                    raise RuntimeError(f"namespace isolation unavailable: {self.reason}")
                self.mode = "process"
                self.workers = [self.new_worker(i) for i in range(self.n)]
                readies = [w.wait_ready() for w in self.workers]
                failed = next((r for r in readies if not r.get("ok")), None)
            if failed is not None:
                raise RuntimeError(f"sandbox worker failed to start: {failed.get('error')}")
        except BaseException:
            self.kill()
            raise
        info = readies[0] if readies else {}
        self.detail = info.get("detail", "")
        seccomp = str(info.get("seccomp", "off"))
        self.guards = {
            "level": self.mode,
            "namespaces": self.mode == "namespace",
            "cgroup": self.cgroup_version or "none",
            "seccomp": seccomp.startswith("on"),
            "separate_uids": bool(self.workers and self.workers[0].cfg.get("uid")),
            "frozen_classes": bool(info.get("frozen_classes")),
        }
        missing = []
        if self.mode == "process":
            why = f" ({self.reason})" if self.reason else (" (requested)" if self.requested == "process" else "")
            missing.append("namespaces" + why + ": the host file system and the network are visible to programs")
        if self.cgroups is None:
            missing.append(f"cgroups ({self.cgroup_reason}): memory and process limits hold per process, "
                           "not for a cell's whole process tree")
        if not self.guards["seccomp"]:
            missing.append(f"seccomp ({seccomp}): new namespaces, mounts and keyrings are not refused")
        if not self.guards["separate_uids"]:
            missing.append("separate uids: programs run under the executor's uid")
        elif self.workers and self.workers[0].cfg.get("private_python"):
            missing.append("the Python installation is not readable by the programs' uids: they import "
                           "only the modules loaded before the switch (the standard library's usual ones)")
        if not self.guards["frozen_classes"] and self.limits.get("batch", True):
            missing.append("frozen standard-library classes: every program runs one fresh process per test")
        if missing:
            warn_once("sandbox degraded: " + "; ".join(missing))

    def replace(self, index: int) -> WorkerProcess:
        w = self.new_worker(index)
        ready = w.wait_ready()
        if not ready.get("ok"):
            raise RuntimeError(f"sandbox worker failed to restart: {ready.get('error')}")
        self.workers[index] = w
        return w

    def kill(self) -> None:
        for w in self.workers:
            w.kill()
        self._release()

    def close(self) -> None:
        for w in self.workers:  # every worker told first: they wind down together, not one after another
            w.end_input()
        for w in self.workers:
            w.close()
        self._release()

    def _release(self) -> None:
        """After the workers are gone: no worker list, the cgroup tree removed."""
        self.workers = []
        if self.cgroups is not None:
            self.cgroups.remove()
            self.cgroups = None
