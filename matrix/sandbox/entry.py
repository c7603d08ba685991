"""The worker process's start: take over the pipes, enter the namespaces (or the degraded process
level), start the zygote, say ready, serve."""

from __future__ import annotations

import json
import os
import signal
import sys

from .wire import write_message


def _ready(out_fd: int, info: dict) -> None:
    try:
        write_message(out_fd, b"R" + json.dumps(info).encode())
    except OSError:  # the executor is gone (killed while we started): nothing to say, to anyone
        os._exit(0)


def worker_main(config_json: str) -> None:
    cfg = json.loads(config_json)
    cmd_fd, out_fd = os.dup(0), os.dup(1)
    for fd in (cmd_fd, out_fd):
        os.set_inheritable(fd, False)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from . import cgroups, namespace, tmpdir, worker  # noqa: F401 - loaded before the root changes
    if cfg.get("seccomp", True):
        try:  # load the bindings (and libseccomp) while the host's root is still visible
            from .syscall_filter import _bindings

            _bindings()
        except Exception:
            pass
    ns = None
    info = {"ok": True, "isolation": cfg["isolation"], "pid": os.getpid()}
    if cfg["isolation"] == "namespace":
        try:
            from .namespace import setup

            ns = setup(cfg, (cmd_fd, out_fd))
        except Exception as exc:  # report and stop; the parent falls back or fails
            _ready(out_fd, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            os._exit(3)
        info["detail"] = ns["detail"]
    else:
        try:
            from .namespace import libc

            libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come to us
        except Exception:
            pass
        info["detail"] = ("process: setsid + rlimits + scrubbed environment + private temp dir"
                          + (f"; uid {cfg['uid']}" if cfg.get("uid") and os.geteuid() == 0 else
                             "; same uid as the executor"))
    try:
        from .worker import Worker

        server = Worker(cfg, cmd_fd, out_fd, ns)  # not `worker`: that name is the module, above
    except Exception as exc:
        _ready(out_fd, {"ok": False, "error": f"sandbox start failed: {type(exc).__name__}: {exc}"})
        os._exit(3)
    info.update(server.detail())
    _ready(out_fd, info)
    try:
        if cfg.get("profile"):  # debugging aid: cProfile statistics of the worker loop on stderr
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.runcall(server.serve)
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumtime").print_stats(int(cfg["profile"]))
        else:
            server.serve()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the executor is gone (a run killed with kill -9): no traceback into its terminal
    finally:
        for z in server.zygotes:
            try:
                os.kill(z.pid, signal.SIGKILL)
            except OSError:
                pass
        if ns is None and cfg.get("tmpdir"):  # the executor may be gone: tidy up our temp dir
            import shutil

            shutil.rmtree(cfg["tmpdir"], ignore_errors=True)
    sys.stdout.flush()
    os._exit(0)
