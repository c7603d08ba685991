"""The worker: one per core; takes units of work from the executor and runs their cells through
the zygote, one process at a time, and answers with one record per cell.

For each row (one program against some tests):

1. a *program process* compiles and checks the program (:mod:`.harness`, ``program`` mode). A
   program that does not compile settles every cell of the row. A pure program runs its pure
   tests one after the other in that process (fresh namespace per test); if its module raises
   while loading and it is deterministic, that settles the row; if loading hangs, likewise.
   After a timeout the process is killed and the remaining tests continue in a new one; after
   an abnormal end (a crash, ``MemoryError``, a store into a shared object, the output cap, a
   garbled channel) the test concerned runs again alone.
2. every other test runs *isolated*: one fresh process for that cell (``cell`` mode), with real
   file descriptors, a fresh ``/tmp`` afterwards.
3. generic tests run in a *test process* against a *program process* (:mod:`.remote`).

After every process: its whole tree is killed (the cell's cgroup, else its session and every
orphan the worker inherited), the out-of-memory counter is read, and ``/tmp`` is replaced when the
process could write to it. Optional cells (extra inputs for output consensus) of a program that
has timed out once in the row are not run (``SKIPPED``).

The worker never runs, compiles or parses a program or a test; the zygote forks every process.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import signal
import socket
import sys
import time

from .harness import EXIT_CHANNEL, EXIT_FORBIDDEN, EXIT_HARNESS
from .records import MAX_ERR, STDERR_TAIL, CellRecord, Frame, Outcome, Row, Unit
from .wire import FrameReader, grow_pipe, read_message, write_message

CLAIMS = frozenset({Frame.VALUES, Frame.RAISED, Frame.STDOUT, Frame.VERDICT, Frame.TOO_LARGE})
_DIRECT_MODES = ("values", "stdio")


def _claim(key, kind: Frame, secs: float, body: bytes) -> CellRecord:
    return CellRecord(key, Outcome.CLAIM, 0, secs, bytes([int(kind)]) + body)


# ----------------------------------------------------------------------------- the zygote handle

class Zygote:
    """Starts the zygote (seccomp filter installed, then ``exec``) and talks to it."""

    def __init__(self, cfg: dict, proc_fd: int | None, drop_caps: bool, freeze: bool):
        from collections import deque

        self.cfg = cfg
        self.proc_fd = proc_fd
        self.exited: dict[int, int] = {}
        self.abandoned: set[int] = set()
        self.awaiting: deque = deque()  # processes whose pid has not arrived yet
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.seccomp = None
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the future zygote: filter, then exec a fresh interpreter
            try:
                parent.close()
                os.close(r)
                note = _seal_for_exec(cfg, drop_caps)
                os.write(w, note.encode()[:4000])
                null = os.open("/dev/null", os.O_RDWR)
                os.dup2(child.fileno(), 0)
                os.dup2(null, 1)
                os.closerange(3, 1 << 16)  # nothing of the worker's (its pipes, /proc) crosses
                os.execve(sys.executable, [sys.executable, "-s", "-B", cfg["package_dir"], "zygote"],
                          cfg["env"])
            finally:
                os._exit(EXIT_HARNESS)
        child.close()
        os.close(w)
        note = b""
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            note += b
        os.close(r)
        self.seccomp = note.decode("utf-8", "replace") or "none"
        self.pid = pid
        self.sock = parent
        self.sock.send(marshal.dumps(("config", {
            "import_paths": cfg.get("import_paths") or [], "allow_ctypes": bool(cfg.get("allow_ctypes")),
            "freeze": freeze})))
        self.frozen = False
        msg = self._recv_control(30.0)
        if freeze:
            if msg is None or msg[0] != "freeze":
                raise RuntimeError("the zygote did not start")
            ok = self._freeze(msg[1], msg[2])
            self.sock.send(marshal.dumps(("frozen", ok)))
            msg = self._recv_control(30.0)
        if msg is None or msg[0] != "ready":
            raise RuntimeError("the zygote did not become ready")
        self.frozen = bool(msg[1].get("frozen"))

    def _recv_control(self, timeout):
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            return None
        data = self.sock.recv(1 << 20)
        return marshal.loads(data) if data else None

    def _freeze(self, reqs, probes) -> bool:
        """Write the immutable-type flag into the zygote's standard-library classes through its
        ``/proc/PID/mem`` (the zygote has no ``ctypes``), after checking the layout probes."""
        import struct

        try:
            path = f"{self.pid}/mem"
            fd = os.open(path, os.O_RDWR, dir_fd=self.proc_fd) if self.proc_fd is not None else \
                os.open(f"/proc/{path}", os.O_RDWR)
        except OSError:
            return False
        q = struct.Struct("<Q")
        try:
            for addr, expected in probes:
                if q.unpack(os.pread(fd, 8, addr))[0] != expected:
                    return False
            for addr, expected, new in reqs:
                if q.unpack(os.pread(fd, 8, addr))[0] == expected:
                    os.pwrite(fd, q.pack(new), addr)
            return True
        except (OSError, struct.error, OverflowError):
            return False
        finally:
            os.close(fd)

    def read_messages(self) -> bool:
        """Take every waiting control message; False when the zygote is gone."""
        while True:
            try:
                data = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            msg = marshal.loads(data)
            if msg[0] == "exit":
                if msg[1] in self.abandoned:
                    self.abandoned.discard(msg[1])
                else:
                    self.exited[msg[1]] = msg[2]
            elif self.awaiting:
                proc = self.awaiting.popleft()
                if msg[0] == "pid":
                    proc._pid = msg[1]
                else:
                    proc._pid = -1
                    proc.spawn_error = str(msg[1]) if len(msg) > 1 else "spawn failed"

    def spawn(self, spec: dict, fds: list[int], proc) -> None:
        """Ask for a process (its pid arrives later: :meth:`pid_of`)."""
        socket.send_fds(self.sock, [marshal.dumps(("spawn", spec))], fds)
        self.awaiting.append(proc)

    def pid_of(self, proc) -> int:
        deadline = time.monotonic() + 30.0
        while proc._pid is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the zygote does not answer")
            r, _, _ = select.select([self.sock], [], [], 1.0)
            if r and not self.read_messages():
                raise RuntimeError("the zygote died")
        if proc._pid < 0:
            raise OSError(proc.spawn_error)
        return proc._pid

    def abandon(self, pid: int) -> None:
        """We no longer wait for ``pid``'s exit (it was killed): drop its notice when it comes."""
        if self.exited.pop(pid, None) is None:
            self.abandoned.add(pid)

    def wait_exit(self, pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while pid not in self.exited:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if r and not self.read_messages():
                return None
        return self.exited.pop(pid)


def _seal_for_exec(cfg: dict, drop_caps: bool) -> str:
    """In the process about to become the zygote: no_new_privs, the seccomp filter, and (in a user
    namespace) no capabilities left for the exec to grant. Returns what is in force."""
    from . import syscall_filter
    from .namespace import libc

    libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    note = "off"
    if cfg.get("seccomp", True):
        try:
            n = syscall_filter.install()
            note = f"on ({n} rules)"
        except Exception as exc:  # noqa: BLE001 - degrade, and say so
            note = f"unavailable ({type(exc).__name__}: {str(exc)[:200]})"
    if drop_caps:
        _drop_capabilities()
    return note


def _drop_capabilities() -> None:
    import ctypes

    from .namespace import libc

    lc = libc()
    for cap in range(64):
        if lc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            break

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    lc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)())


# ----------------------------------------------------------------------------- a running process

class Proc:
    """A process the zygote forked for the worker (its pid arrives asynchronously)."""

    def __init__(self, reader, mode, close_fds, out_fd=None, err_fd=None, zygote=None):
        self.zygote = zygote
        self._pid = None
        self.spawn_error = ""
        self.reader = reader
        self.mode = mode
        self.close_fds = close_fds
        self.out_fd = out_fd
        self.err_fd = err_fd
        self.status = None
        self.oom = False
        self.cmd_w = None  # the runner's command pipe (kept open)
        self.rows = 0

    @property
    def pid(self) -> int:
        return self._pid if self._pid is not None and self._pid >= 0 else self.zygote.pid_of(self)


class Worker:
    def __init__(self, cfg: dict, cmd_fd: int, out_fd: int, ns: dict | None):
        from .cgroups import CellCgroup

        self.cfg = cfg
        self.cmd_fd, self.out_fd = cmd_fd, out_fd
        self.ns = ns
        self.root = os.geteuid() == 0
        userns = bool(ns and ns["userns"])
        self.cell_uid = cfg.get("uid") if self.root and not userns else None
        self.cell_gid = cfg.get("gid") if self.cell_uid is not None else None
        self.test_uid = cfg.get("test_uid") if self.cell_uid is not None else None
        self.memory = int(cfg["memory_mb"]) << 20
        self.max_procs = int(cfg["max_procs"])
        self.max_out = int(cfg["max_output_bytes"])
        self.tmp = "/tmp" if ns else cfg["tmpdir"]
        self.proc_fd = ns["proc_fd"] if ns else None
        self.cgroup = self.runner_cgroup = None
        inside = cfg.get("cgroup_inside") or {}
        if cfg.get("cgroup_version") and inside:
            parts = {part: {k.split("-", 1)[1]: v for k, v in inside.items() if k.startswith(part + "-")}
                     for part in ("cell", "runner")}
            self.cgroup = CellCgroup(cfg["cgroup_version"], parts["cell"])
            self.runner_cgroup = CellCgroup(cfg["cgroup_version"], parts["runner"])
        # two zygotes: standard-library classes frozen for programs that run several tests in one
        # process, left as Python has them for every process that runs alone
        self.zygote = Zygote(cfg, self.proc_fd, drop_caps=userns, freeze=bool(cfg.get("batch", True)))
        self.zygote_plain = Zygote(cfg, self.proc_fd, drop_caps=userns, freeze=False)
        self.zygotes = (self.zygote, self.zygote_plain)
        self.runner_proc: Proc | None = None

    def detail(self) -> dict:
        return {"seccomp": self.zygote.seccomp, "frozen_classes": self.zygote.frozen,
                "cgroup": self.cfg.get("cgroup_version") or "none"}

    # ------------------------------------------------------------------ main loop
    def serve(self) -> None:
        import pickle

        while True:
            msg = read_message(self.cmd_fd)
            if msg is None:
                return
            unit_id, wire = pickle.loads(msg)
            if wire is None:
                return
            unit = Unit.from_wire(wire)
            try:
                records = self.run_unit(unit)
            except Exception as exc:  # a bug here must not wedge the executor
                import traceback

                err = "".join(traceback.format_exception(exc))[-MAX_ERR:].encode()
                records = [CellRecord(k, Outcome.SANDBOX, 0, 0.0, err) for row in unit.rows for k, _, _ in row.cells]
                if not self.zygote_alive():
                    write_message(self.out_fd, _pack(unit_id, records))
                    raise
            write_message(self.out_fd, _pack(unit_id, records))

    def zygote_alive(self) -> bool:
        return all(z.read_messages() for z in self.zygotes)

    def run_unit(self, unit: Unit) -> list[CellRecord]:
        out: dict[int, CellRecord] = {}
        for row in unit.rows:
            self.run_row(unit, row, out)
        keys = [k for row in unit.rows for k, _, _ in row.cells]
        return [out.get(k) or CellRecord(k, Outcome.SANDBOX, 0, 0.0, b"cell not run") for k in keys]

    # ------------------------------------------------------------------ one row
    def run_row(self, unit: Unit, row: Row, out: dict) -> None:
        code, setup, kind = unit.programs[row.program], unit.setups[row.setup], row.kind
        timeout = unit.timeout
        direct = [c for c in row.cells if unit.probes[c[1]][0] in _DIRECT_MODES]
        generic = [c for c in row.cells if unit.probes[c[1]][0] == "exec"]
        isolate: list = []
        pending = list(direct)
        if not self.cfg.get("batch", True):  # one fresh process per test
            isolate, pending = pending, []
        settle: CellRecord | None = None
        timed_out = False
        restarts = 0
        while pending and settle is None:
            if timed_out:
                pending = self._skip_optional(pending, out)
                if not pending:
                    break
            res = self.run_program(code, setup, kind, pending, unit, timeout)
            out.update(res["records"])
            timed_out = timed_out or any(r.outcome == Outcome.TIMEOUT for r in res["records"].values())
            settle = res["settle"]
            isolate.extend(res["isolate"])
            if res["all_impure"]:
                isolate.extend(res["remaining"])
                pending = []
            else:
                pending = res["remaining"]
            restarts += 1
            if timed_out and pending and settle is None:  # let the executor spread the rest
                self._skip_optional(pending, out)
                for key, _, optional in pending:
                    out.setdefault(key, CellRecord(key, Outcome.REQUEUE))
                pending = []
            if restarts > len(direct) + 2:  # never loop on a process that keeps dying
                isolate.extend(pending)
                pending = []
        rest = [c for c in row.cells if c[0] not in out]
        if settle is not None:
            for key, _, _ in rest:
                out[key] = CellRecord(key, settle.outcome, settle.exit_info, settle.seconds, settle.payload,
                                      settle.stdout, settle.stderr)
            return
        for cell in isolate + generic:
            key, pi, optional = cell
            if key in out:
                continue
            if optional and timed_out:
                out[key] = CellRecord(key, Outcome.SKIPPED)
                continue
            if unit.probes[pi][0] == "exec":
                rec = self.run_generic(code, setup, unit.probes[pi], key, timeout)
            else:
                rec = self.run_isolated(code, setup, kind, unit.probes[pi], key, timeout)
            out[key] = rec
            if rec.outcome == Outcome.TIMEOUT:
                timed_out = True
                for k2, p2, opt2 in isolate + generic:  # let the executor spread the rest
                    if k2 not in out:
                        out[k2] = CellRecord(k2, Outcome.SKIPPED if opt2 else Outcome.REQUEUE)
                return
            if rec.outcome == Outcome.SYNTAX or (rec.outcome == Outcome.BAD_TEST and rec.payload.startswith(b"setup")):
                for k2, _, _ in row.cells:  # the program (or the setup) does not compile: all cells
                    out.setdefault(k2, CellRecord(k2, rec.outcome, 0, 0.0, rec.payload))

    @staticmethod
    def _skip_optional(cells, out):
        keep = []
        for c in cells:
            if c[2]:
                out[c[0]] = CellRecord(c[0], Outcome.SKIPPED)
            else:
                keep.append(c)
        return keep

    # ------------------------------------------------------------------ the program process
    RUNNER_ROWS = 2000  # a runner is replaced after this many rows (its heap only grows)

    def runner(self) -> Proc:
        rn = self.runner_proc
        if rn is None or rn.rows >= self.RUNNER_ROWS:
            if rn is not None:
                self.finish(rn, tmp=False, tree=False)
            rn = self.runner_proc = self.start("runner", {"mode": "runner", "max_out": self.max_out}, cpu=3600)
        return rn

    def run_program(self, code, setup, kind, cells, unit, timeout) -> dict:
        """Run ``cells`` (direct probes) of one program in the runner; see the module docstring."""
        res = {"records": {}, "isolate": [], "remaining": [], "settle": None, "all_impure": False}
        probes = [unit.probes[pi] for _, pi, _ in cells]
        cmd = {"code": code, "setup": setup, "kind": kind, "probes": probes, "max_out": self.max_out}
        try:
            proc = self.runner()
            write_message(proc.cmd_w, marshal.dumps(cmd))
            proc.rows += 1
        except (OSError, RuntimeError) as exc:
            if self.runner_proc is not None:
                self.finish(self.runner_proc, tmp=False, tree=False)
                self.runner_proc = None
            res["records"] = {k: CellRecord(k, Outcome.SANDBOX, 0, 0.0, str(exc).encode()[:MAX_ERR])
                              for k, _, _ in cells}
            return res
        queue: list = []  # cells the runner will run, in order (known after its plan)
        planned = False
        deterministic = False
        loaded = False
        mark = time.monotonic()
        bad: set[int] = set()
        current = None  # the cell running now
        clean = False  # the row ended with DONE: the runner stays
        try:
            while True:
                ev = self.next_event(proc, mark + timeout)
                if ev[0] == "frames":
                    for fkind, secs, body in ev[1]:
                        if fkind == Frame.DONE:
                            if current is not None or queue:
                                raise _Garbled()
                            clean = True
                            return res
                        if not planned:
                            if fkind == Frame.SYNTAX:
                                res["settle"] = CellRecord(0, Outcome.SYNTAX, 0, 0.0, body[:MAX_ERR * 4])
                                continue
                            if fkind == Frame.BAD_PROBE:
                                idx, msg = _json_pair(body)
                                if idx == -1:
                                    res["settle"] = CellRecord(0, Outcome.BAD_TEST, 0, 0.0, msg.encode()[:MAX_ERR * 4])
                                elif isinstance(idx, int) and 0 <= idx < len(cells):
                                    key = cells[idx][0]
                                    res["records"][key] = CellRecord(key, Outcome.BAD_TEST, 0, 0.0,
                                                                     msg.encode()[:MAX_ERR * 4])
                                    bad.add(idx)
                                continue
                            if fkind == Frame.PLAN:
                                plan = _json(body)
                                if not isinstance(plan, dict):
                                    raise _Garbled()
                                planned = True
                                deterministic = plan.get("deterministic") is True and kind != "stdio"
                                iso = plan.get("isolate")
                                if iso == "all":
                                    res["all_impure"] = True
                                    res["remaining"] = [c for i, c in enumerate(cells) if i not in bad]
                                    continue
                                iso = {i for i in iso if isinstance(i, int)} if isinstance(iso, list) else set()
                                res["isolate"] = [c for i, c in enumerate(cells) if i in iso and i not in bad]
                                queue = [c for i, c in enumerate(cells) if i not in iso and i not in bad]
                                mark = time.monotonic()
                                if queue:
                                    current = queue.pop(0)
                                continue
                            raise _Garbled()
                        if fkind == Frame.LOADED and not loaded:
                            loaded = True
                            continue
                        if fkind == Frame.LOAD_FAILED and not loaded and current is not None:
                            if deterministic:
                                res["settle"] = _claim(0, Frame.RAISED, secs, body)
                                res["records"] = {}
                            else:
                                res["records"][current[0]] = _claim(current[0], Frame.RAISED, secs, body)
                            current, queue = None, []
                            continue
                        if fkind == Frame.ABNORMAL:
                            if current is None:
                                raise _Garbled()
                            res["isolate"].append(current)
                            if b"shared" in body:
                                res["all_impure"] = True
                            res["remaining"] = queue
                            return res
                        if fkind not in CLAIMS or fkind == Frame.VERDICT or current is None:
                            raise _Garbled()
                        res["records"][current[0]] = _claim(current[0], fkind, min(secs, time.monotonic() - mark),
                                                            body)
                        mark = time.monotonic()
                        current = queue.pop(0) if queue else None
                elif ev[0] == "timeout":
                    if not planned or (not loaded and deterministic and current is not None):
                        res["settle"] = CellRecord(0, Outcome.TIMEOUT, 0, timeout)
                        res["records"] = {}
                        return res
                    if current is None:  # between the last claim and DONE: a finalizer that hangs
                        return res
                    res["records"][current[0]] = CellRecord(current[0], Outcome.TIMEOUT, 0, time.monotonic() - mark)
                    res["remaining"] = queue
                    return res
                elif ev[0] == "exit":
                    if not planned:
                        res["isolate"] = [c for i, c in enumerate(cells) if i not in bad]
                        return res
                    if current is not None:
                        res["isolate"].append(current)
                    res["remaining"] = queue
                    return res
                else:  # corrupt channel
                    raise _Garbled()
        except _Garbled:
            if current is not None:
                res["isolate"].append(current)
                res["remaining"] = queue
            elif not planned:
                res["isolate"] = [c for i, c in enumerate(cells) if i not in bad]
            return res
        finally:
            if not clean:  # anything but a clean row: the runner is replaced
                self.finish(proc, tmp=False, tree=False)
                self.runner_proc = None

    # ------------------------------------------------------------------ one isolated cell
    def run_isolated(self, code, setup, kind, probe, key, timeout) -> CellRecord:
        stdin = probe[1] if probe[0] == "stdio" else None
        cmd = {"mode": "cell", "code": code, "setup": setup, "kind": kind, "probes": [probe],
               "max_out": self.max_out}
        try:
            proc = self.start("cell", cmd, cpu=int(timeout) + 2, stdin=stdin, capture=True)
        except (OSError, RuntimeError) as exc:
            return CellRecord(key, Outcome.SANDBOX, 0, 0.0, str(exc).encode()[:MAX_ERR])
        mark = time.monotonic()
        claim = None
        try:
            while claim is None:
                ev = self.next_event(proc, mark + timeout)
                if ev[0] == "frames":
                    for fkind, secs, body in ev[1]:
                        if fkind == Frame.LOADED:
                            continue
                        if fkind == Frame.SYNTAX:
                            return CellRecord(key, Outcome.SYNTAX, 0, 0.0, body[:MAX_ERR * 4])
                        if fkind == Frame.BAD_PROBE:
                            _, msg = _json_pair(body)
                            return CellRecord(key, Outcome.BAD_TEST, 0, 0.0, str(msg).encode()[:MAX_ERR * 4])
                        if fkind in CLAIMS and fkind != Frame.VERDICT:
                            claim = (fkind, min(max(secs, 0.0), time.monotonic() - mark), body)
                            break
                        return CellRecord(key, Outcome.PROTOCOL, 0, time.monotonic() - mark)
                elif ev[0] == "timeout":
                    return CellRecord(key, Outcome.TIMEOUT, 0, time.monotonic() - mark)
                elif ev[0] == "exit":
                    return self._ended(proc, key, kind, time.monotonic() - mark)
                else:
                    return CellRecord(key, Outcome.PROTOCOL, 0, time.monotonic() - mark)
            fkind, secs, body = claim
            osize, esize = os.fstat(proc.out_fd).st_size, os.fstat(proc.err_fd).st_size
            if osize >= self.max_out or esize >= self.max_out:
                return CellRecord(key, Outcome.OUTPUT_LIMIT, 0, secs)
            if fkind == Frame.STDOUT:
                stdout = os.pread(proc.out_fd, osize, 0).decode("utf-8", "replace")
                info = _json(body)
                body = json.dumps([stdout, info], ensure_ascii=True, separators=(",", ":")).encode("ascii")
                if len(body) > self.max_out + 64:
                    return CellRecord(key, Outcome.OUTPUT_LIMIT, 0, secs)
            return _claim(key, fkind, secs, body)
        finally:
            self.finish(proc, tmp=True)

    def _ended(self, proc, key, kind, secs) -> CellRecord:
        """A process ended without a claim: how, from its exit status, stderr and the cgroup."""
        status = proc.status
        code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
        osize = os.fstat(proc.out_fd).st_size if proc.out_fd is not None else 0
        esize = os.fstat(proc.err_fd).st_size if proc.err_fd is not None else 0
        err = b""
        if esize:
            start = max(0, esize - STDERR_TAIL)
            err = os.pread(proc.err_fd, esize - start, start)
        oom = self.cgroup.oom_fired() if self.cgroup else False
        proc.oom = oom
        if oom:
            return CellRecord(key, Outcome.MEMORY, code, secs, b"", b"", err)
        if code == -signal.SIGXCPU:
            return CellRecord(key, Outcome.TIMEOUT, code, secs)
        if code == -signal.SIGXFSZ or osize >= self.max_out or esize >= self.max_out:
            return CellRecord(key, Outcome.OUTPUT_LIMIT, code, secs)
        if code == EXIT_FORBIDDEN:
            return CellRecord(key, Outcome.FORBIDDEN, code, secs, b"", b"", err)
        if kind == "stdio" and code == 0:
            stdout = os.pread(proc.out_fd, osize, 0).decode("utf-8", "replace")
            body = json.dumps([stdout, None], ensure_ascii=True, separators=(",", ":")).encode("ascii")
            return _claim(key, Frame.STDOUT, secs, body)
        return CellRecord(key, Outcome.DIED, code, secs, b"", b"", err)

    # ------------------------------------------------------------------ a generic test
    def run_generic(self, code, setup, probe, key, timeout) -> CellRecord:
        """The test in a test process, the program in a program process (:mod:`.remote`)."""
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        procs = []
        try:
            try:
                serve_cmd = {"mode": "serve", "code": code, "setup": setup, "kind": "function",
                             "probes": [], "max_out": self.max_out}
                procs.append(self.start("serve", serve_cmd, cpu=int(timeout) + 2, rpc=a.fileno(), capture=True))
                test_cmd = {"mode": "test", "test": probe[1], "code": "", "setup": "", "kind": "function",
                            "probes": [], "max_out": self.max_out}
                procs.append(self.start("test", test_cmd, cpu=int(timeout) + 2, rpc=b.fileno()))
            except (OSError, RuntimeError) as exc:
                return CellRecord(key, Outcome.SANDBOX, 0, 0.0, str(exc).encode()[:MAX_ERR])
            finally:
                a.close()
                b.close()
            test = procs[1]
            mark = time.monotonic()
            while True:
                ev = self.next_event(test, mark + timeout)
                if ev[0] == "frames":
                    for fkind, secs, body in ev[1]:
                        if fkind == Frame.LOADED:  # the program loaded: the test's time starts
                            mark = time.monotonic()
                            continue
                        secs = min(max(secs, 0.0), time.monotonic() - mark)
                        if fkind == Frame.VERDICT:
                            return _claim(key, Frame.VERDICT, secs, body)
                        if fkind == Frame.SYNTAX:
                            return CellRecord(key, Outcome.SYNTAX, 0, 0.0, body[:MAX_ERR * 4])
                        if fkind == Frame.TOO_LARGE:
                            return CellRecord(key, Outcome.OUTPUT_LIMIT, 0, secs)
                        return CellRecord(key, Outcome.PROTOCOL, 0, secs)
                elif ev[0] == "timeout":
                    return CellRecord(key, Outcome.TIMEOUT, 0, time.monotonic() - mark)
                elif ev[0] == "exit":
                    if self.cgroup and self.cgroup.oom_fired():
                        return CellRecord(key, Outcome.MEMORY, 0, time.monotonic() - mark)
                    st = test.status
                    code_ = os.waitstatus_to_exitcode(st) if st is not None else -signal.SIGKILL
                    return CellRecord(key, Outcome.DIED, code_, time.monotonic() - mark)
                else:
                    return CellRecord(key, Outcome.PROTOCOL, 0, time.monotonic() - mark)
        finally:
            for i, p in enumerate(procs):
                self.finish(p, tmp=i == len(procs) - 1, tree=i == len(procs) - 1)

    # ------------------------------------------------------------------ processes
    def start(self, mode, cmd, *, cpu, stdin=None, capture=False, rpc=None) -> Proc:
        token = os.urandom(8)
        cmd = dict(cmd, token=token)
        data = marshal.dumps(cmd)
        res_r = res_w = None
        close = []
        if mode != "serve":
            res_r, res_w = os.pipe2(os.O_CLOEXEC)
            grow_pipe(res_r)
        cmd_r, cmd_w = os.pipe2(os.O_CLOEXEC)
        grow_pipe(cmd_w, max(1 << 16, min(len(data) + 64, 1 << 24)))
        out_fd = err_fd = None
        try:
            null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
            close.append(null)
            if stdin is not None:
                in_fd = os.memfd_create("stdin", os.MFD_CLOEXEC)
                view = memoryview(stdin.encode("utf-8", "surrogateescape"))
                while view:
                    view = view[os.write(in_fd, view):]
                os.lseek(in_fd, 0, os.SEEK_SET)
                close.append(in_fd)
            else:
                in_fd = null
            if capture:
                out_fd = os.memfd_create("stdout", os.MFD_CLOEXEC)
                err_fd = os.memfd_create("stderr", os.MFD_CLOEXEC)
            fds = [in_fd, out_fd if out_fd is not None else null, err_fd if err_fd is not None else null]
            targets = [0, 1, 2]
            if mode == "serve":
                fds += [rpc, cmd_r]
                targets += [5, 4]
            else:
                fds += [res_w, cmd_r]
                targets += [3, 4]
                if rpc is not None:
                    fds.append(rpc)
                    targets.append(5)
            uid = self.test_uid if mode == "test" else self.cell_uid
            group = self.runner_cgroup if mode == "runner" else self.cgroup
            spec = {"fds": targets, "cgroups": group.procs_files if group else [],
                    "uid": uid, "gid": uid if mode == "test" and uid is not None else self.cell_gid,
                    "limits": {"memory": self.memory, "fsize": self.max_out, "cpu": cpu, "nproc": self.max_procs},
                    "cwd": self.tmp}
            zygote = self.zygote if mode == "runner" else self.zygote_plain
            try:  # the command waits in the pipe for the process to read it
                write_message(cmd_w, data)
            except OSError:
                pass
            reader = None
            if res_r is not None:
                os.set_blocking(res_r, False)
                reader = FrameReader(res_r, token, self.max_out + 4096)
            proc = Proc(reader, mode, [res_r], out_fd, err_fd, zygote)
            zygote.spawn(spec, fds, proc)
        except BaseException:
            for fd in (res_r, res_w, cmd_r, cmd_w, out_fd, err_fd, *close):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            raise
        for fd in (res_w, cmd_r, *close):
            if fd is not None:
                os.close(fd)
        if mode == "runner":
            proc.cmd_w = cmd_w
            proc.close_fds = [res_r, cmd_w]
        else:
            os.close(cmd_w)
        return proc

    def next_event(self, proc: Proc, deadline: float):
        """("frames", [...]) | ("timeout",) | ("exit",) | ("corrupt",) for ``proc``."""
        reader = proc.reader
        zygote = proc.zygote
        socks = {z.sock.fileno(): z for z in self.zygotes}
        while True:
            frames = reader.frames()
            if frames:
                return ("frames", frames)
            if reader.corrupt:
                return ("corrupt",)
            if proc._pid is not None and proc._pid in zygote.exited:
                reader.fill()
                frames = reader.frames()
                if frames:
                    return ("frames", frames)
                if reader.corrupt:
                    return ("corrupt",)
                proc.status = zygote.exited.pop(proc._pid)
                return ("exit",)
            if proc._pid is not None and proc._pid < 0:
                raise OSError(proc.spawn_error)
            now = time.monotonic()
            if now >= deadline:
                return ("timeout",)
            fds = list(socks) + ([reader.fd] if not reader.eof else [])
            r, _, _ = select.select(fds, [], [], deadline - now)
            if reader.fd in r:
                reader.fill()
            for fd in r:
                z = socks.get(fd)
                if z is not None and not z.read_messages():
                    raise RuntimeError("the zygote died")

    def finish(self, proc: Proc, *, tmp: bool, tree: bool = True) -> None:
        """Kill the process and (with ``tree``) everything it left, and (with ``tmp``) replace
        ``/tmp``: a process that may have written there. Nothing waits for the process's exit
        notice (the zygote reaps it; the notice is dropped)."""
        try:
            pid = proc.pid
        except (OSError, RuntimeError):
            pid = None
        if pid is not None:
            if proc.status is None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.zygote.abandon(pid)
            if tree:
                self.kill_tree(pid)
        if self.cgroup is not None:
            proc.oom = self.cgroup.oom_fired() or proc.oom
        for fd in (*proc.close_fds, proc.out_fd, proc.err_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        proc.close_fds = ()
        proc.out_fd = proc.err_fd = None
        if tmp:
            self.replace_tmp()

    def kill_tree(self, pid: int) -> None:
        """The session of ``pid``, the cell's cgroup, every orphan the worker inherited."""
        for fn in (os.killpg, os.kill):
            try:
                fn(pid, signal.SIGKILL)
            except OSError:
                pass
        if self.cgroup is not None:
            self.cgroup.kill_all()
            self._reap()
        else:
            self._kill_orphans()

    def _reap(self) -> None:
        zpids = (self.zygote.pid, self.zygote_plain.pid)
        while True:
            try:
                wp, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not wp:
                return
            if wp in zpids:
                raise RuntimeError("the zygote died")

    def _kill_orphans(self) -> None:
        """Every child of the worker but the zygote is an orphan a cell left behind."""
        deadline = time.monotonic() + 2.0
        me = os.getpid()
        while True:
            while True:
                try:
                    wp, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    wp = 0
                if not wp:
                    break
                if wp in (self.zygote.pid, self.zygote_plain.pid):
                    raise RuntimeError("the zygote died")
            kids = [p for p in _children(me, self.proc_fd) if p not in (self.zygote.pid, self.zygote_plain.pid)]
            if not kids:
                return
            for p in kids:
                for fn in (os.killpg, os.kill):
                    try:
                        fn(p, signal.SIGKILL)
                    except OSError:
                        pass
            if time.monotonic() > deadline:
                return
            time.sleep(0.0002)

    def replace_tmp(self) -> None:
        if self.ns is not None:
            from .namespace import fresh_tmp

            fresh_tmp(self.ns)
        else:
            from .tmpdir import wipe

            wipe(self.tmp)


class _Garbled(Exception):
    pass


def _json(body: bytes):
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _json_pair(body: bytes):
    v = _json(body)
    if isinstance(v, list) and len(v) == 2:
        return v[0], str(v[1])
    return None, "malformed"


def _children(pid: int, proc_fd: int | None) -> list[int]:
    try:
        if proc_fd is not None:
            fd = os.open(f"{pid}/task/{pid}/children", os.O_RDONLY, dir_fd=proc_fd)
            try:
                data = os.read(fd, 1 << 16)
            finally:
                os.close(fd)
        else:
            with open(f"/proc/{pid}/task/{pid}/children", "rb") as fh:
                data = fh.read()
        return [int(x) for x in data.split()]
    except (OSError, ValueError):
        return []


def _pack(unit_id, records):
    from .records import pack_records

    return pack_records(unit_id, records)


__all__ = ["Worker", "Zygote", "EXIT_CHANNEL", "EXIT_HARNESS"]
