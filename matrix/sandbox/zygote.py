"""The zygote: the one process that forks the processes in which programs and tests run.

It is a fresh interpreter (the worker ``exec``\\ s it; it is never a fork of a process that held
a program), loads the standard library and the harness once, and then only forks: its memory
holds no program, test or result, so neither does any process it forks. Its seccomp filter is
installed before the ``exec`` and every process it forks inherits it; it installs the audit hook
that stops a process on the operations no test needs (:func:`install_audit_hook`).

A worker's two zygotes (one with the standard library's classes frozen, for the runner; one
plain, for every process that runs alone) come from one interpreter start: after the imports they
share, the plain zygote is forked off (:func:`_fork_plain`) before anything else happens in either,
and talks to the worker on a control socket of its own.

Control protocol with the worker (a ``SOCK_SEQPACKET`` socket on fd 0, marshal messages):

* zygote -> worker, once: ``("freeze", [(address, flags, frozen flags)...], [(address, flags)...])``
  asks the worker to write the immutable-type flag of the standard library's classes into the
  zygote's memory (the zygote has no ``ctypes``; the second list are layout probes); the worker
  answers ``("frozen", ok)``; then ``("ready", detail)``.
* worker -> zygote: ``("spawn", spec)`` with file descriptors attached (``SCM_RIGHTS``); the
  zygote answers ``("pid", pid)``.
* zygote -> worker, whenever a child ends: ``("exit", pid, wait status)``.
"""

from __future__ import annotations

import os
import sys

_TP_FLAGS_OFFSET = 21 * 8  # offsetof(PyTypeObject, tp_flags) on LP64 (3.8 - 3.13)
_IMMUTABLE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE (3.10+)
_HEAPTYPE = 1 << 9
FORBIDDEN_EVENTS = frozenset({
    "code.__new__",  # crafted code objects read and write arbitrary memory
    "sys.addaudithook",  # a program's hook would run inside the harness's later actions
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",  # reaching the harness's objects
    "cpython.PyInterpreterState_New",  # a subinterpreter has no audit hook
})
FORBIDDEN_MODULES = frozenset({"ctypes", "_ctypes", "_testcapi", "_testinternalcapi", "_testbuffer",
                               "_testmultiphase", "_testimportmultiple", "_xxsubinterpreters",
                               "_xxtestfuzz", "_ctypes_test", "_testclinic",
                               "cffi", "_cffi_backend"})  # (cffi: ffi.cast, ffi.buffer: raw memory, as ctypes)


# modules the harness imports inside the processes it forks: loaded here, before any of them
# switches to its own uid, which may not be able to read the Python installation (process mode
# under a root executor, a pyenv under /root: the test process of a generic test failed on
# `import symtable`)
HARNESS_IMPORTS = ("symtable", "opcode", "importlib.util", "ast", "warnings", "traceback", "operator",
                   "json", "math", "time", "io", "enum", "fcntl", "resource")
# modules of the standard library that stdio programs need beyond those: ``threading`` (the
# competitive-programming idiom runs ``main`` in a thread with a larger stack; the interpreter's
# exit joins it, :func:`.harness._exit_like_python`), importable where the cells' uid cannot read
# the Python installation
PROGRAM_IMPORTS = ("threading",)


def install_audit_hook(allow_ctypes: bool = False) -> None:
    """Stop the process (exit status 72, the event named on stderr) on :data:`FORBIDDEN_EVENTS`,
    on any ``ctypes`` event and on opening another process's memory through ``/proc``; an import
    of :data:`FORBIDDEN_MODULES` raises ``ImportError`` before anything is loaded, as where the
    module is not installed (numpy and other libraries import ``ctypes`` inside ``try: ... except
    ImportError`` and work without it; a program that goes on without the module gains nothing).
    Audit hooks cannot be removed; this one keeps what it needs in default arguments."""
    forbidden_modules = FORBIDDEN_MODULES - ({"ctypes", "_ctypes", "cffi", "_cffi_backend"} if allow_ctypes else set())

    def hook(event, args, _forbidden=FORBIDDEN_EVENTS, _modules=forbidden_modules, _write=os.write,
             _exit=os._exit, _ctypes=not allow_ctypes, _str=str, _type=type, _int=int, _fspath=os.fspath,
             _real=os.path.realpath, _import_error=ImportError):
        if event in _forbidden:
            pass
        elif event == "import":
            if args[0] not in _modules and _str(args[0]).split(".")[0] not in _modules:
                return
            raise _import_error(f"the sandbox has no module {_str(args[0])[:100]!r} (raw memory)")
        elif event[:7] == "ctypes.":
            if not _ctypes:
                return
        elif event == "open":
            # the path as the kernel will follow it (`//proc/1/mem`, a relative path after
            # chdir("/proc"), a symlink, a Path object all reached the parent's memory in process
            # mode; red-team pass 8); in namespace mode there is no /proc at all
            path = args[0]
            if _type(path) is _int or path is None:
                return
            try:
                path = _real(_fspath(path))
                if _type(path) is bytes:
                    path = path.decode("utf-8", "replace")
            except BaseException:  # the open itself fails the same way
                return
            if not (_type(path) is _str and path[:6] == "/proc/"
                    and (path.rsplit("/", 1)[-1] == "mem" or "/map_files" in path)):
                return  # (a process's `mem` or `map_files`; `/proc/meminfo` is no one's memory)
        else:
            return
        try:
            _write(2, b"\ncoevo sandbox: forbidden operation: " + _str(event).encode("ascii", "replace") + b"\n")
        except OSError:
            pass
        _exit(72)

    sys.addaudithook(hook)


def freeze_requests():
    """(requests, probes) for :mod:`.worker`: the addresses of the ``tp_flags`` of the standard
    library's heap classes and the values to write there (immutable type), and layout probes."""
    import types

    from .purity import SAFE_MODULES

    probes = [(id(t) + _TP_FLAGS_OFFSET, t.__flags__) for t in (type, int, types.FunctionType)]
    seen = {}
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] not in SAFE_MODULES or not isinstance(mod, types.ModuleType):
            continue
        for v in list(vars(mod).values()):
            if isinstance(v, type) and v.__flags__ & _HEAPTYPE and not v.__flags__ & _IMMUTABLE:
                seen[id(v)] = v
        for v in list(vars(mod).values()):  # classes reachable as class attributes (nested)
            if isinstance(v, type):
                for x in list(vars(v).values()):
                    if isinstance(x, type) and x.__flags__ & _HEAPTYPE and not x.__flags__ & _IMMUTABLE \
                            and x.__module__.split(".")[0] in SAFE_MODULES:
                        seen[id(x)] = x
    reqs = [(i + _TP_FLAGS_OFFSET, c.__flags__, c.__flags__ | _IMMUTABLE) for i, c in seen.items()]
    return reqs, probes, list(seen.values())


def shared_imports() -> None:
    """What both zygotes of a pair load before any program exists: the standard modules programs
    and the harness use (:data:`.purity.PRELOAD`, :data:`HARNESS_IMPORTS`, :data:`PROGRAM_IMPORTS`)
    and the sandbox's own package for generic tests (``remote``). That package was the plain
    zygote's alone, but a runner's row with a task's setup reads it too (the setup's check of the
    standard modules it names), and each such row's process loaded it again, seven modules (issue
    23). Loaded before the freeze, whatever standard module it pulls in is frozen with the rest,
    and before :func:`.harness.prepare`, its objects are among those the store guard keeps."""
    from .purity import PRELOAD

    for name in PRELOAD + HARNESS_IMPORTS + PROGRAM_IMPORTS:
        try:
            __import__(name)
        except Exception:
            pass
    from . import remote  # noqa: F401


def main(config: dict) -> None:
    """Run as the zygote: ``config`` comes from the worker (limits, preload list, detail)."""
    import gc
    import marshal
    import select
    import signal
    import socket

    from . import harness

    ctl = socket.socket(fileno=0)
    shared_imports()
    for p in config.get("import_paths", ()):
        if p not in sys.path:
            sys.path.insert(0, p)
    if config.get("pair"):
        ctl, config = _fork_plain(ctl, config)
    frozen = False
    if config.get("freeze"):
        reqs, probes, classes = freeze_requests()
        ctl.send(marshal.dumps(("freeze", reqs, probes)))
        reply = marshal.loads(ctl.recv(1 << 16))
        frozen = bool(reply[1]) and all(c.__flags__ & _IMMUTABLE for c in classes)
    harness.prepare()
    harness._G["frozen"] = frozen
    install_audit_hook(bool(config.get("allow_ctypes")))
    gc.collect()
    gc.freeze()
    r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctl.send(marshal.dumps(("ready", {"frozen": frozen, "pid": os.getpid()})))
    poller = select.poll()
    poller.register(ctl.fileno(), select.POLLIN)
    poller.register(r, select.POLLIN)
    while True:
        for fd, _ev in poller.poll():
            if fd == r:
                try:
                    while os.read(r, 512):
                        pass
                except BlockingIOError:
                    pass
                _reap(ctl)
                continue
            try:
                msg, fds, _flags, _addr = socket.recv_fds(ctl, 1 << 16, 16)
            except OSError:
                os._exit(0)
            if not msg:
                os._exit(0)
            op, spec = marshal.loads(msg)
            if op != "spawn":
                for fd_ in fds:
                    os.close(fd_)
                continue
            try:
                pid = os.fork()
            except OSError as exc:
                for fd_ in fds:
                    os.close(fd_)
                ctl.send(marshal.dumps(("error", f"fork failed: {exc}")))
                continue
            if pid == 0:
                _child(ctl, r, w, spec, fds)
            for fd_ in fds:
                os.close(fd_)
            ctl.send(marshal.dumps(("pid", pid)))
            _reap(ctl)


PLAIN_CONTROL_FD = 3  # a zygote pair's second control socket: the plain zygote's (:func:`_fork_plain`)


def _fork_plain(ctl, config: dict):
    """A zygote pair (one interpreter started for two zygotes): after the imports they share,
    fork the plain zygote off this one, before anything else (the freeze, the harness's captures,
    the audit hook) and long before any program exists, so that it is as clean as a zygote of its
    own. It is a grandchild (the middle process ends at once), so that it is the worker's child
    again, as the zygote it replaces was (the worker is the pid namespace's init, or a
    subreaper): its death is the worker's to see. Returns this process's (control socket,
    config): the plain zygote's on its own socket (fd :data:`PLAIN_CONTROL_FD`), unfrozen."""
    import socket

    pid = os.fork()
    if pid == 0:
        try:
            if os.fork() != 0:
                os._exit(0)
            ctl.close()  # the other zygote's control socket (fd 0)
            os.dup2(PLAIN_CONTROL_FD, 0)
            os.close(PLAIN_CONTROL_FD)
            return socket.socket(fileno=0), dict(config, freeze=False, pair=False)
        except BaseException:
            os._exit(70)
    os.close(PLAIN_CONTROL_FD)
    while True:
        try:
            os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    return ctl, config


def _reap(ctl) -> None:
    import marshal

    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        try:
            ctl.send(marshal.dumps(("exit", pid, status)))
        except OSError:
            os._exit(0)


def _child(ctl, r, w, spec, fds) -> None:
    """In the forked child: become the cell's process (fds, cgroup, session, limits, identity),
    then run the harness. Never returns."""
    import resource
    import signal

    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        ctl.close()
        os.close(r)
        os.close(w)
        for path in spec["cgroups"]:  # join the cell's cgroup while still allowed to
            with open(path, "w") as fh:
                fh.write("0")
        import fcntl

        targets = spec["fds"]  # target fd numbers, in the order the fds arrived
        floor = max(targets) + 1
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd in fds]  # out of the way first
        for fd in fds:
            os.close(fd)
        for target, fd in zip(targets, high):
            os.dup2(fd, target, inheritable=target < 3)
            os.close(fd)
        os.closerange(max(targets) + 1, 1 << 16)
        os.setsid()
        os.chdir(spec["cwd"])
        limits = spec["limits"]
        for lim, val in ((resource.RLIMIT_AS, limits["memory"]), (resource.RLIMIT_FSIZE, limits["fsize"]),
                         (resource.RLIMIT_CPU, limits["cpu"]), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_MSGQUEUE, 0),
                         (resource.RLIMIT_NPROC, limits["nproc"])):
            if val is None:
                continue
            try:
                soft, hard = resource.getrlimit(lim)
                v = val if hard == resource.RLIM_INFINITY else min(val, hard)
                resource.setrlimit(lim, (v, v))
            except (ValueError, OSError):
                pass
        if spec["uid"] is not None:
            os.setgroups(spec.get("groups") or [])
            os.setgid(spec["gid"])
            os.setuid(spec["uid"])
        from . import harness

        harness.child_main()
    finally:
        os._exit(70)
