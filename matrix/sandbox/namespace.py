"""The worker's namespaces and minimal root, set up as a list of steps (in the manner of
bubblewrap): each step is one small function, :func:`setup` runs them in order.

Steps: new user namespace (when not root) -> new PID namespace and a fork (the caller stays
outside as a relay; the child is PID 1) -> new mount, network, IPC and UTS namespaces -> a tmpfs
stage -> read-only binds of the Python installation, ``/usr``, ``/lib*``, ``/bin``, the import
paths and the cgroups of the worker -> the sandbox package at ``/run/coevo`` -> a synthetic
``/etc`` -> ``/dev`` with ``null``/``zero``/``full`` and read-only ``random``/``urandom`` -> a
``/proc`` -> the modules no test needs masked by an empty file (``ctypes``, ``_testcapi``...) ->
pivot_root -> read-only root -> hostname, IPC limits -> ``/proc`` kept open for the worker and
unmounted for everyone else -> a fresh ``/tmp`` (import paths and Python directories, e.g. a
virtual environment, that live under the host's ``/tmp`` are kept at ``/run/coevo/import`` and
bound again, read-only, into every fresh ``/tmp``) (:func:`fresh_tmp`, again after every cell
that could write to it).

Only the worker calls this module (it uses ``ctypes`` for the system calls Python lacks); the
processes of cells are forked by the zygote, which never loads ``ctypes``.
"""

from __future__ import annotations

import os

__all__ = ["setup", "fresh_tmp", "libc", "SANDBOX_DIR", "CGROUP_DIR", "SYSTEM_BINDS", "HOST_ETC_FILES"]

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
SANDBOX_DIR = "/run/coevo/_coevo_sandbox"  # the sandbox package, inside the root
CGROUP_DIR = "/run/coevo/cgroup"
# what a cell sees as the machine has it, read-only (coevo/testgen/harness.py reads these too)
SYSTEM_BINDS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
HOST_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")  # the rest of /etc is its own

_libc = None


def libc():
    global _libc
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(ret, what):
    if ret != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enc(s):
    return s.encode() if isinstance(s, str) else s


def mount(src, dst, fstype, flags, data=None):
    _check(libc().mount(_enc(src), _enc(dst), _enc(fstype), flags, _enc(data)), f"mount {dst}")


def umount(path, flags=MNT_DETACH):
    _check(libc().umount2(_enc(path), flags), f"umount {path}")


def _statvfs_flags(path):
    f = os.statvfs(path).f_flag
    out = 0
    for st, ms in ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
                   (2048, MS_NODIRATIME), (4096, MS_RELATIME)):
        if f & st:
            out |= ms
    return out


def _mountinfo_under(prefix):
    out = []
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                mp = line.split()[4].encode().decode("unicode_escape")
                if mp == prefix or mp.startswith(prefix.rstrip("/") + "/"):
                    out.append(mp)
    except OSError:
        pass
    return out


def bind_ro(src, dst):
    """Bind ``src`` at ``dst`` read-only (with every mount below it)."""
    mount(src, dst, None, MS_BIND | MS_REC)
    for mp in _mountinfo_under(dst):
        try:
            mount(None, mp, None, _statvfs_flags(mp) | MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        except OSError:
            if mp == dst:
                raise


def _touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        with open(path, "w"):
            pass


def _replicate(stage, path, target=None):
    """Make ``path`` exist at ``target`` (default: the same path) under ``stage``: symlinks are
    copied, directories and files bound read-only."""
    dst = stage + (target or path)
    if os.path.islink(path) and target is None:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.lexists(dst):
            os.symlink(os.readlink(path), dst)
        return
    if os.path.isdir(path):
        os.makedirs(dst, exist_ok=True)
        bind_ro(path, dst)
    elif os.path.isfile(path):
        _touch(dst)
        bind_ro(path, dst)


# ----------------------------------------------------------------------------- the steps

def step_user_namespace(state):
    """Map ourselves to root of a new user namespace (only when not already root)."""
    if not state["userns"]:
        return
    uid, gid = os.getuid(), os.getgid()
    _check(libc().unshare(CLONE_NEWUSER), "unshare(user)")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"0 {gid} 1")


def step_pid_namespace(state):
    """A new PID namespace; fork: the parent stays outside as a relay (it must stay in the
    host's mount namespace to remove the stage directory at the end) and mirrors the child's
    exit; the child, PID 1, continues."""
    import signal

    _check(libc().unshare(CLONE_NEWPID), "unshare(pid)")
    executor = os.getppid()
    pid = os.fork()
    if pid:
        for fd in (0, 1, *state["keep_fds"]):
            try:
                os.close(fd)
            except OSError:
                pass
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = _relay(pid, executor)
        try:
            os.rmdir(state["stage"])
        except OSError:
            pass
        os._exit(code if code >= 0 else 128 - code)
    libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _relay(pid: int, executor: int) -> int:
    """Wait for the namespace's PID 1 and return its exit code; when the executor that started
    this worker is gone (killed: its pipes are not read any more), kill PID 1 (and so the whole
    namespace) instead of waiting on a worker that may be busy or blocked for a long time."""
    import signal

    # SIGCHLD held pending, so that the wait below ends the moment PID 1 exits (a plain sleep
    # between polls kept every worker's exit waiting up to a poll period: 0.2 s of a small
    # matrix's 0.6 s); an exit before the mask took effect is seen by the waitpid first.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 1
        if done:
            return os.waitstatus_to_exitcode(status)
        if os.getppid() != executor:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            return 1
        signal.sigtimedwait({signal.SIGCHLD}, 0.25)


def step_other_namespaces(state):
    _check(libc().unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def step_stage(state):
    mount("tmpfs", state["stage"], "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")


def step_binds(state):
    """Read-only binds: the Python installation, system libraries, import paths (those under
    ``/tmp`` are bound again into every fresh ``/tmp``)."""
    stage = state["stage"]
    binds = []
    for p in state["binds"]:
        if p == "/tmp" or p.startswith("/tmp/"):
            continue  # see step_sandbox_package and fresh_tmp
        if os.path.lexists(p) and not any(p == b or p.startswith(b.rstrip("/") + "/") for b in binds):
            binds.append(p)
    for p in SYSTEM_BINDS:
        if os.path.lexists(p) and p not in binds:
            binds.append(p)
    for p in sorted(binds, key=len):  # parents before children
        if any(p != b and p.startswith(b.rstrip("/") + "/") for b in binds if not os.path.islink(b)):
            continue  # visible through a bound parent
        _replicate(stage, p)


def step_sandbox_package(state):
    """The sandbox package at :data:`SANDBOX_DIR` (host paths stay out of the root), and the
    worker's cgroups under :data:`CGROUP_DIR`."""
    stage = state["stage"]
    _replicate(stage, state["package"], SANDBOX_DIR)
    state["host_import"] = {}
    for k, p in enumerate(state["tmp_paths"]):  # the host's /tmp is out of reach once pivoted: keep a bind
        inside = f"/run/coevo/import/{k}"
        _replicate(stage, p, inside)
        state["host_import"][p] = inside
    for name, path in state["cgroups"].items():
        dst = stage + f"{CGROUP_DIR}/{name}"
        os.makedirs(dst, exist_ok=True)
        mount(path, dst, None, MS_BIND)


def step_etc(state):
    stage = state["stage"]
    etc = stage + "/etc"
    os.makedirs(etc, exist_ok=True)
    uid, gid = state["cell_uid"], state["cell_gid"]
    with open(etc + "/passwd", "w") as fh:
        fh.write("root:x:0:0:root:/root:/bin/sh\n")
        if uid:
            fh.write(f"sandbox:x:{uid}:{gid}:sandbox:/tmp:/bin/sh\n")
        fh.write("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    with open(etc + "/group", "w") as fh:
        fh.write("root:x:0:\n" + (f"sandbox:x:{gid}:\n" if gid else "") + "nogroup:x:65534:\n")
    with open(etc + "/hosts", "w") as fh:
        fh.write("127.0.0.1 localhost\n::1 localhost\n")
    with open(etc + "/hostname", "w") as fh:
        fh.write("sandbox\n")
    for f in HOST_ETC_FILES:
        try:
            if os.path.islink(f):
                os.symlink(os.readlink(f), stage + f)
            elif os.path.isfile(f):
                _touch(stage + f)
                bind_ro(f, stage + f)
        except OSError:
            pass


def step_dev(state):
    """A ``/dev`` of its own: ``null``, ``zero`` and ``full`` (writing to them affects nothing),
    ``random`` and ``urandom`` readable but not writable (a write would feed the host's entropy
    pool). Device nodes of our own (mknod, root executor); binds of the host's where that is not
    allowed (user namespace)."""
    import stat

    dev = state["stage"] + "/dev"
    os.makedirs(dev, exist_ok=True)
    nodes = (("null", 3, 0o666), ("zero", 5, 0o666), ("full", 7, 0o666), ("random", 8, 0o444),
             ("urandom", 9, 0o444))
    try:
        mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
        for name, minor, mode in nodes:
            os.mknod(f"{dev}/{name}", stat.S_IFCHR | mode, os.makedev(1, minor))
            os.chmod(f"{dev}/{name}", mode)
        state["dev"] = "own nodes"
    except OSError:
        for name, _, _ in nodes:
            try:
                _touch(f"{dev}/{name}")
                mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
            except OSError:
                pass
        state["dev"] = "host nodes"
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{name}")
    if state["dev"] == "own nodes":
        mount(None, dev, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)


def step_proc(state):
    os.makedirs(state["stage"] + "/tmp", exist_ok=True)
    os.makedirs(state["stage"] + "/proc", exist_ok=True)
    try:
        mount("proc", state["stage"] + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        state["proc"] = True
    except OSError:
        state["proc"] = False


def step_mask_modules(state):
    """Bind an empty file over the extension modules that give a program raw memory access or a
    second interpreter (``_ctypes``, ``_testcapi``, ``_xxsubinterpreters``...): importing them
    fails."""
    stage = state["stage"]
    empty = stage + "/run/coevo/empty"
    _touch(empty)
    masked = 0
    for path in state["mask"]:
        dst = stage + path
        if os.path.isfile(dst):
            try:
                mount(empty, dst, None, MS_BIND)
                mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
                masked += 1
            except OSError:
                pass
    state["masked"] = masked


def step_pivot(state):
    import platform

    os.chdir(state["stage"])
    nr = SYS_PIVOT_ROOT.get(platform.machine())
    state["pivoted"] = False
    if nr is not None and libc().syscall(nr, b".", b".") == 0:
        umount(".")
        state["pivoted"] = True
    else:
        os.chroot(".")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def step_host_settings(state):
    try:
        libc().sethostname(b"sandbox", 7)
    except Exception:
        pass
    for path, value in (("/proc/sys/kernel/msgmni", "0"), ("/proc/sys/kernel/shmmni", "0"),
                        ("/proc/sys/kernel/sem", "0 0 0 0"), ("/proc/sys/fs/mqueue/queues_max", "0")):
        try:
            with open(path, "w") as fh:
                fh.write(value)
        except OSError:
            pass


def step_hide_proc(state):
    """Keep a descriptor on ``/proc`` for the worker, then unmount it: the processes of cells see
    an empty ``/proc`` (no command lines, no other process's memory)."""
    state["proc_fd"] = None
    if state.get("proc"):
        state["proc_fd"] = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        try:
            umount("/proc")
        except OSError:
            pass


STEPS = (step_user_namespace, step_pid_namespace, step_other_namespaces, step_stage, step_binds,
         step_sandbox_package, step_etc, step_dev, step_proc, step_mask_modules, step_pivot,
         step_host_settings, step_hide_proc)


def setup(cfg: dict, keep_fds=()) -> dict:
    """Run :data:`STEPS`. Returns, in PID 1 of the new namespaces, the state (uids, the ``/proc``
    descriptor, what was done). The calling process stays outside as a relay."""
    userns = os.geteuid() != 0
    state = {
        "userns": userns, "keep_fds": keep_fds, "stage": cfg["stage"], "binds": cfg["binds"],
        "package": cfg["package"], "cgroups": cfg.get("cgroup_dirs") or {},
        "mask": cfg.get("mask") or (), "tmp_mb": int(cfg["tmp_mb"]),
        "cell_uid": 0 if userns else cfg["uid"], "cell_gid": 0 if userns else cfg["gid"],
        "import_paths": cfg.get("import_paths") or (),
    }
    # import paths and Python directories (a virtual environment) under the host's /tmp: bound
    # again, read-only, at the same path into every fresh /tmp (parents first)
    under = {p for p in (*state["import_paths"], *state["binds"]) if p.startswith("/tmp/") and os.path.isdir(p)}
    state["tmp_paths"] = sorted(under, key=len)
    for step in STEPS:
        step(state)
    fresh_tmp(state)
    parts = ["user" if userns else None, "mount", "pid", "net", "ipc", "uts"]
    state["detail"] = ("namespaces: " + "+".join(p for p in parts if p) + "; read-only minimal root ("
                       + ("pivot_root" if state["pivoted"] else "chroot") + "); fresh tmpfs /tmp per cell; "
                       + ("capabilities dropped" if userns else f"uid {state['cell_uid']}")
                       + "; no network; no /proc" + f"; {state['masked']} modules masked")
    return state


def fresh_tmp(state) -> None:
    """Replace ``/tmp`` by a new empty tmpfs (root-owned, world-writable: a cell can neither chmod
    nor mark it), and bind the import paths that live under ``/tmp`` into it. Not sticky: a cell's
    test process and program process (two uids, one process in plain Python) remove each other's
    files (red-team pass 18, :func:`.remote.peer.share_files`); nothing else writes there."""
    try:
        umount("/tmp")
    except OSError:
        pass
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={state['tmp_mb']}m,nr_inodes=4096,mode=0777")
    for p in state["tmp_paths"]:
        os.makedirs(p, mode=0o755, exist_ok=True)
        bind_ro(state["host_import"][p], p)
