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
import stat as _stat
import sys
import time
from typing import Any

from . import setup_cell
from .harness import EXIT_CHANNEL, EXIT_FORBIDDEN, EXIT_HARNESS
from .records import LOAD_ALLOWANCE, LOAD_HANG, MAX_ERR, STDERR_TAIL, CellRecord, Frame, Outcome, Row, Unit
from .wire import (
    FrameReader,
    grow_pipe,
    message_bytes,
    read_message,
    stdin_bytes,
    write_available,
    write_message,
    write_within,
)

# host directories any uid can write (process mode); world-writable directories inside them are
# searched too, down to SHARED_DEPTH (red-team pass 19: /run/lock, /tmp/.X11-unix)
SHARED_TMPFS = ("/dev/shm", "/tmp", "/var/tmp", "/run/lock")
SHARED_DEPTH = 3
CLAIMS = frozenset({Frame.VALUES, Frame.RAISED, Frame.STDOUT, Frame.VERDICT, Frame.TOO_LARGE})
_DIRECT_MODES = ("values", "stdio")
# the bytes of cell replies one unit's answer may hold: past them the cells not run yet go back to
# the executor (REQUEUE), which sends them again in new units; so neither this process nor the
# parent ever holds more than this (plus one cell, at most the output caps) for a unit, however
# much its programs return (a pool of programs each returning 4 MB made frames of gigabytes)
UNIT_OUTPUT_BYTES = 32 << 20


_KIND_BYTE = {k: bytes([int(k)]) for k in Frame}


def _claim(key, kind: Frame, secs: float, body: bytes) -> CellRecord:
    return CellRecord(key, Outcome.CLAIM, 0, secs, _KIND_BYTE[kind] + body)


# ----------------------------------------------------------------------------- the zygote handle

class Zygote:
    """Starts the zygote (seccomp filter installed, then ``exec``) and talks to it; call
    :meth:`wait_ready` before the first spawn. With ``pair`` the one interpreter started serves
    two zygotes: after the imports they share it forks the plain (unfrozen) zygote
    (:func:`.zygote._fork_plain`), whose handle is :attr:`plain` (its pid comes with its ready
    message): one interpreter's start and imports instead of two."""

    def __init__(self, cfg: dict, proc_fd: int | None, drop_caps: bool, freeze: bool, pair: bool = False,
                 _sock=None, _seccomp: str | None = None):
        from collections import deque

        self.cfg = cfg
        self.proc_fd = proc_fd
        self.exited: dict[int, int] = {}
        self.abandoned: set[int] = set()
        self.awaiting: deque = deque()  # processes whose pid has not arrived yet
        self.freeze = freeze
        self.frozen = False
        self.plain: Zygote | None = None
        if _sock is not None:  # the plain zygote of a pair: started by the other's interpreter
            self.sock, self.seccomp = _sock, _seccomp
            self.pid = 0  # not known before its ready message (:meth:`wait_ready`)
            return
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent2 = child2 = None
        if pair:
            parent2, child2 = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.seccomp = None
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the future zygote: filter, then exec a fresh interpreter
            try:
                import fcntl

                parent.close()
                if parent2 is not None:
                    parent2.close()
                os.close(r)
                note = _seal_for_exec(cfg, drop_caps)
                os.write(w, note.encode()[:4000])
                null = os.open("/dev/null", os.O_RDWR)
                # the control sockets out of the way of the numbers they take, then in place
                high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD, 10) for s in (child, child2) if s is not None]
                os.dup2(null, 1)
                os.dup2(high[0], 0)
                if len(high) > 1:
                    os.dup2(high[1], 3)  # (zygote.PLAIN_CONTROL_FD)
                os.closerange(3 + (len(high) > 1), 1 << 16)  # nothing of the worker's (its pipes, /proc) crosses
                os.execve(sys.executable, [sys.executable, "-s", "-B", cfg["package_dir"], "zygote"],
                          cfg["env"])
            finally:
                os._exit(EXIT_HARNESS)
        child.close()
        if child2 is not None:
            child2.close()
        os.close(w)
        report = b""  # the child's seccomp note
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            report += b
        os.close(r)
        self.seccomp = report.decode("utf-8", "replace") or "none"
        self.pid = pid
        self.sock = parent
        self.sock.send(marshal.dumps(("config", {
            "import_paths": cfg.get("import_paths") or [], "allow_ctypes": bool(cfg.get("allow_ctypes")),
            "freeze": freeze, "pair": pair})))
        if parent2 is not None:
            self.plain = Zygote(cfg, proc_fd, drop_caps, False, _sock=parent2, _seccomp=self.seccomp)

    def wait_ready(self) -> None:
        """Wait for the started zygote (answering its freeze request); several zygotes start side
        by side and are waited for one after the other."""
        freeze = self.freeze
        msg = self._recv_control(30.0)
        if freeze:
            if msg is None or msg[0] != "freeze":
                raise RuntimeError("the zygote did not start")
            ok = self._freeze(msg[1], msg[2])
            self.sock.send(marshal.dumps(("frozen", ok)))
            msg = self._recv_control(30.0)
        if msg is None or msg[0] != "ready":
            raise RuntimeError("the zygote did not become ready")
        if not self.pid:  # the plain zygote of a pair: its pid is its word (it holds no program)
            pid = msg[1].get("pid") if isinstance(msg[1], dict) else None
            if not isinstance(pid, int) or pid <= 1:
                raise RuntimeError("the zygote did not say its pid")
            self.pid = pid
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
        self.unit_bytes = 0  # the bytes of the current unit's replies (UNIT_OUTPUT_BYTES)
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
        # (one interpreter started for both: :class:`Zygote` ``pair``)
        self.zygote = Zygote(cfg, self.proc_fd, drop_caps=userns, freeze=bool(cfg.get("batch", True)), pair=True)
        self.zygote_plain: Zygote = self.zygote.plain  # type: ignore[assignment]  # pair=True made it
        self.zygotes = (self.zygote, self.zygote_plain)
        for z in self.zygotes:  # both interpreters start side by side
            z.wait_ready()
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
        states = [_RowState(unit, row, bool(self.cfg.get("batch", True))) for row in unit.rows]
        self.unit_bytes = 0  # the bytes of the unit's replies so far (UNIT_OUTPUT_BYTES)
        self.run_direct(unit, states, out)
        for st in states:
            self.finish_row(unit, st, out)
        self.setup_values(unit, states, out)
        keys = [k for row in unit.rows for k, _, _ in row.cells]
        return [out.get(k) or CellRecord(k, Outcome.SANDBOX, 0, 0.0, b"cell not run") for k in keys]

    # ------------------------------------------------------------------ the runner part of rows
    RUNNER_ROWS = 2000  # a runner is replaced after this many rows (its heap only grows)

    def runner(self) -> Proc:
        rn = self.runner_proc
        if rn is None or rn.rows >= self.RUNNER_ROWS:
            if rn is not None:
                self.finish(rn, tmp=False, tree=False)
            rn = self.runner_proc = self.start("runner", {"mode": "runner", "max_out": self.max_out}, cpu=3600)
        return rn

    def drop_runner(self) -> None:
        if self.runner_proc is not None:
            try:
                pid = self.runner_proc.pid
            except (OSError, RuntimeError):
                pid = None
            self.finish(self.runner_proc, tmp=False, tree=False)
            if pid is not None:  # the row's process the runner forked (same process group)
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.runner_proc = None

    def run_direct(self, unit: Unit, states: list, out: dict) -> None:
        """The direct cells (values and stdin probes) of every row through the runner, the rows of
        a unit sent in one message so that the runner goes from row to row without waiting. After
        anything abnormal the runner is replaced and the rows not finished are sent again."""
        timeout = unit.timeout
        while True:
            todo = [st for st in states if st.pending and st.settle is None]
            if not todo:
                return
            runs = [_RowRun(st) for st in todo]
            cmd = [{"code": st.code, "setup": st.setup, "kind": st.kind, "max_out": self.max_out,
                    "timeout": timeout, "probes": [unit.probes[pi] for _, pi, _ in st.pending],
                    "optional": [bool(opt) for _, _, opt in st.pending]} for st in todo]
            fresh = True
            try:
                proc = self.runner()
                fresh = proc.rows == 0
                write_message(proc.cmd_w, marshal.dumps(cmd))
                proc.rows += len(cmd)
            except (OSError, RuntimeError) as exc:
                self.drop_runner()
                if not fresh:  # a runner that ended after its last row (a row's process ended badly
                    continue   # after its frames): the rows go to a new one
                for st in todo:
                    for key, _, _ in st.pending:
                        out[key] = CellRecord(key, Outcome.SANDBOX, 0, 0.0, str(exc).encode()[:MAX_ERR])
                    st.pending = []
                return
            i = 0
            mark = time.monotonic()
            stopped = full = False
            grace = max(0.05, 0.5 * timeout)  # the runner's own timer reports first; this is the backstop
            while i < len(runs) and not stopped:
                run = runs[i]
                # the runner sends a row's frames together: the backstop allows the row's tests
                # that have not reported their time (plus one: the program's loading and garbage)
                ev = self.next_event(proc, mark + (run.unreported() + 1) * timeout + grace)
                now = time.monotonic()
                if ev[0] == "frames":
                    # the wall time these frames can account for: a claim's own time is believed up
                    # to what is left of it (frames read together would otherwise get 0 but the first)
                    avail = now - mark
                    for fkind, secs, body in ev[1]:
                        try:
                            verdict = run.feed(fkind, secs, body, avail)
                        except _Garbled:
                            run.garbled()
                            stopped = True
                            break
                        self.unit_bytes += len(body)
                        if verdict == "progress" and self.unit_bytes > UNIT_OUTPUT_BYTES and run.records \
                                and not run.all_impure:
                            run.hand_back()  # the unit's answer is full: the rest goes back
                            full = stopped = True
                            break
                        if verdict == "progress":
                            mark = now
                            avail = max(0.0, avail - secs)
                        elif verdict == "done":
                            i += 1
                            mark = now
                            if i == len(runs):
                                break
                            run = runs[i]
                        elif verdict == "abnormal":
                            stopped = True
                            break
                elif ev[0] == "timeout":
                    run.backstop(now - mark, timeout)
                    stopped = True
                else:  # the runner ended or garbled its channel
                    (run.exited() if ev[0] == "exit" else run.garbled())
                    stopped = True
            if stopped:
                self.drop_runner()
            for run in runs[:i + 1] if stopped else runs:
                run.apply(out)
            if full:  # every cell not run yet goes back to the executor
                for st in states:
                    for key, _, _ in st.pending:
                        out[key] = CellRecord(key, Outcome.REQUEUE)
                    st.pending = []
                return

    @staticmethod
    def _no_value(row: Row, out: dict) -> bool:
        """The row's tests all ran and none gave a value or output (the program raised on every
        test): its extra inputs would only raise too."""
        tests = [out.get(k) for k, _, opt in row.cells if not opt]
        if not tests or any(r is None or r.outcome == Outcome.REQUEUE for r in tests):
            return False  # (a test handed back to the executor has not run)
        return not any(r.outcome == Outcome.CLAIM  # type: ignore[union-attr]  # no None: checked above
                       and r.payload[:1] in (bytes([Frame.VALUES]), bytes([Frame.STDOUT]))  # type: ignore[union-attr]
                       for r in tests)

    def finish_row(self, unit: Unit, st, out: dict) -> None:
        """What the runner did not settle: the row's verdict by rule, isolated and generic cells."""
        row = st.row
        if st.settle is not None:
            s = st.settle
            for key, _, _ in row.cells:
                if key not in out or out[key].outcome == Outcome.REQUEUE:
                    out[key] = CellRecord(key, s.outcome, s.exit_info, s.seconds, s.payload, s.stdout, s.stderr)
            return
        hung = False  # the program hung while loading, before any test code ran
        for cell in st.isolate + st.generic:
            key, pi, optional = cell
            if key in out:
                continue
            if hung:  # loading does not see the test: every cell would hang there too (as in a
                # harness that loads a program once for all its tests)
                out[key] = CellRecord(key, Outcome.SKIPPED) if optional else \
                    CellRecord(key, Outcome.TIMEOUT, 0, 0.0, LOAD_HANG)
                continue
            if self.unit_bytes > UNIT_OUTPUT_BYTES:  # the unit's answer is full: back to the executor
                out[key] = CellRecord(key, Outcome.REQUEUE)
                continue
            if optional and (st.timed_out or self._no_value(row, out)):
                out[key] = CellRecord(key, Outcome.SKIPPED)
                continue
            if st.timed_out:  # let the executor spread the rest
                out[key] = CellRecord(key, Outcome.REQUEUE)
                continue
            if unit.probes[pi][0] == "exec":
                rec = self.run_generic(st.code, st.setup, unit.probes[pi], key, unit.timeout)
            else:
                rec = self.run_isolated(st.code, st.setup, st.kind, unit.probes[pi], key, unit.timeout)
            out[key] = rec
            self.unit_bytes += len(rec.payload) + len(rec.stdout) + len(rec.stderr)
            if rec.outcome == Outcome.TIMEOUT:
                st.timed_out = True
                hung = rec.payload == LOAD_HANG
            if rec.outcome == Outcome.SYNTAX or (rec.outcome == Outcome.BAD_TEST and rec.payload.startswith(b"setup")):
                for k2, _, _ in row.cells:  # the program (or the setup) does not compile: all cells
                    if k2 not in out or out[k2].outcome == Outcome.REQUEUE:
                        out[k2] = CellRecord(k2, rec.outcome, 0, 0.0, rec.payload)
                return

    # ------------------------------------------------------------------ the setup, alone
    def setup_values(self, unit: Unit, states: list, out: dict) -> None:
        """The split tests' values that read only the task's setup (and builtins), computed in a
        process where no program ran (:mod:`.setup_cell`, one for each setup of the unit), put in
        place of what the program's process claimed for them (red-team pass 23: a program that
        reached the harness through ``sys.modules`` chose ``want``)."""
        wanted: dict[str, dict[int, list]] = {}  # setup -> probe index -> keys of the claims
        for st in states:
            if not st.setup or not st.setup.strip() or st.kind == "stdio":
                continue
            for key, pi, _ in st.row.cells:
                rec = out.get(key)
                if rec is not None and rec.outcome == Outcome.CLAIM and unit.probes[pi][0] == "values" \
                        and rec.payload[:1] in (_KIND_BYTE[Frame.VALUES], _KIND_BYTE[Frame.RAISED]):
                    wanted.setdefault(st.setup, {}).setdefault(pi, []).append(key)
        for setup, by_probe in wanted.items():
            pis = sorted(by_probe)
            trusted = self.run_setup_cell(setup, [unit.probes[pi] for pi in pis], unit.timeout)
            for j, pi in enumerate(pis):
                got = trusted[j] if trusted is not None else {}
                for key in by_probe[pi]:
                    rec = out[key]
                    if got:
                        rec.payload = setup_cell.merge(rec.payload, got)

    def run_setup_cell(self, setup, probes, timeout) -> list | None:
        """:func:`.setup_cell.run_setup_cell` in a process of its own: ``{hole: value}`` for each
        probe, or None (the setup does not run without the program, or the process failed)."""
        cmd = {"mode": "setup", "code": "", "setup": setup, "kind": "function", "probes": probes,
               "max_out": self.max_out}
        # (one test's time for the lot, at least the loading allowance: a setup too slow for it
        # leaves the values the program process's, and a unit's worker does not wait on it longer)
        limit = max(2.0 * timeout, LOAD_ALLOWANCE)
        try:
            proc = self.start("setup", cmd, cpu=int(limit) + 2)
        except (OSError, RuntimeError):
            return None
        deadline = time.monotonic() + limit
        try:
            while True:
                ev = self.next_event(proc, deadline)
                if ev[0] != "frames":
                    return None
                for fkind, _, body in ev[1]:
                    if fkind == Frame.VALUES:
                        return setup_cell.parse(body, len(probes))
                    if fkind != Frame.LOADED:
                        return None
        finally:
            self.finish(proc, tmp=True)

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
        loaded = kind == "stdio"  # a stdio program's loading is its run
        limit = timeout if loaded else max(timeout, LOAD_ALLOWANCE)
        try:
            while claim is None:
                ev = self.next_event(proc, mark + limit)
                if ev[0] == "frames":
                    for fkind, secs, body in ev[1]:
                        if fkind == Frame.LOADED:  # the test's own time starts, once: a process
                            # that sends it again (the program's own, through the harness's channel)
                            # does not restart the timer, or it would sleep past it for ever
                            if not loaded:
                                loaded = True
                                mark, limit = time.monotonic(), timeout
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
                elif ev[0] == "timeout":  # still loading: before any code of the test ran
                    return CellRecord(key, Outcome.TIMEOUT, 0, time.monotonic() - mark, b"" if loaded else LOAD_HANG)
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
                named = probe[3] if len(probe) > 3 and type(probe[3]) in (list, tuple) else ()
                own = [n for n in named if type(n) is str]  # the entry point (remote/test_side.py)
                test_cmd = {"mode": "test", "test": probe[1], "code": "", "setup": "", "kind": "function",
                            "probes": [], "max_out": self.max_out, "own": own,
                            "task_setup": setup or ""}  # (the test process runs it alone: remote/test_side.py)
                procs.append(self.start("test", test_cmd, cpu=int(timeout) + 2, rpc=b.fileno()))
            except (OSError, RuntimeError) as exc:
                return CellRecord(key, Outcome.SANDBOX, 0, 0.0, str(exc).encode()[:MAX_ERR])
            finally:
                a.close()
                b.close()
            test = procs[1]
            mark = time.monotonic()
            limit = max(timeout, LOAD_ALLOWANCE)  # until the program has loaded
            loaded = False
            while True:
                ev = self.next_event(test, mark + limit)
                if ev[0] == "frames":
                    for fkind, secs, body in ev[1]:
                        if fkind == Frame.LOADED:  # the program loaded: the test's time starts (once:
                            # the test's own code can send it again, which restarts nothing)
                            if not loaded:
                                loaded = True
                                mark, limit = time.monotonic(), timeout
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
                view = memoryview(stdin_bytes(stdin))
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
                fds += [res_w, cmd_r]  # type: ignore[list-item]  # res_w is a pipe when mode != "serve"
                targets += [3, 4]
                if rpc is not None:
                    fds.append(rpc)
                    targets.append(5)
            uid = self.test_uid if mode == "test" else self.cell_uid
            group = self.runner_cgroup if mode == "runner" else self.cgroup
            spec = {"fds": targets, "cgroups": group.procs_files if group else [],
                    "uid": uid, "gid": uid if mode == "test" and uid is not None else self.cell_gid,
                    # process mode: the test process also holds the program's group, which the cell's
                    # directory is shared with (tmpdir.CELL_DIR_MODE)
                    "groups": [self.cell_gid] if mode == "test" and self.ns is None and uid is not None
                    and self.cell_gid is not None else [],
                    "limits": {"memory": self.memory, "fsize": self.max_out, "cpu": cpu, "nproc": self.max_procs},
                    "cwd": self.tmp}
            zygote = self.zygote if mode == "runner" else self.zygote_plain
            # the command waits in the pipe for the process to read it; what does not fit (a pipe
            # that could not grow: the system's pipe-max-size or the user's pipe quota) follows
            # once the process exists, or the worker would wait forever on a pipe no one reads
            rest = write_available(cmd_w, message_bytes(data))
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
        if rest and not write_within(cmd_w, rest, 30.0 + len(rest) / 1e6):
            os.close(cmd_w)  # half a command: the process reads end of file and ends as a harness failure
            cmd_w = -1
        else:
            os.set_blocking(cmd_w, True)
        if mode == "runner":
            proc.cmd_w = cmd_w
            proc.close_fds = [res_r, cmd_w]
        elif cmd_w >= 0:
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
            from .tmpdir import CELL_DIR_MODE, wipe

            wipe(self.tmp, CELL_DIR_MODE if self.cell_uid is not None else 0o700)
            self._wipe_shared_tmpfs()

    def _wipe_shared_tmpfs(self) -> None:
        """Process mode with uids of the cells' own: remove what they left in the host's shared
        writable directories (:data:`SHARED_TMPFS`). Pages in /dev/shm stayed charged to the
        worker's cell cgroup after the cell was killed, so every later cell of every task ran short
        of memory (red-team pass 9); files in /tmp and /var/tmp outlived the run, readable by the
        next (pass 11); so did files in /run/lock or in a world-writable directory inside these
        (pass 19: /tmp/.X11-unix; searched down to :data:`SHARED_DEPTH`, at most 64 directories in each).
        (Under the executor's own uid nothing can tell the user's files from a program's: that
        level is documented as unprotected.)"""
        uids = {u for u in (self.cell_uid, self.test_uid) if u is not None} - {0}
        if not uids:
            return
        # (on directory fds only, never by path and never through a symlink: a directory another
        # uid could rename in swapped in a symlink to /etc between the look and the removal, and
        # root removed the same names there; red-team pass 19. Only root's directories are gone
        # down into: another uid's is that uid's, removed whole by its own cell's cleanup)
        for top in SHARED_TMPFS:  # each looked at; at most 64 directories gone down into, in each
            seen = 0  # (one budget for all: 70 in /tmp and /dev/shm was never looked at; pass 19)
            try:
                fd = os.open(os.path.realpath(top), _DIR_FLAGS)  # (the tops' own links are root's)
            except OSError:
                continue
            todo = [(fd, 0)]
            try:
                while todo:
                    fd, depth = todo.pop()
                    try:
                        with os.scandir(fd) as it:
                            entries = list(it)
                    except OSError:
                        entries = []
                    for e in entries:
                        try:
                            st = e.stat(follow_symlinks=False)
                            if st.st_uid in uids:
                                if _stat.S_ISDIR(st.st_mode):
                                    _remove_tree_at(e.name, fd, st)
                                else:
                                    os.unlink(e.name, dir_fd=fd)
                            elif (st.st_uid == 0 and depth < SHARED_DEPTH and seen < 64 and _stat.S_ISDIR(st.st_mode)
                                  and st.st_mode & _stat.S_IWOTH):
                                todo.append((_open_dir_at(e.name, fd, st), depth + 1))
                                seen += 1
                        except OSError:
                            pass
                    os.close(fd)
            finally:
                for fd, _ in todo:
                    os.close(fd)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TREE_DEPTH = 256  # the levels of a cell's directory tree removed (one fd each)
_TREE_ENTRIES = 200_000  # the entries of a cell's directory tree looked at


def _open_dir_at(name: str, dir_fd: int, st: os.stat_result) -> int:
    """The directory ``name`` in ``dir_fd``, opened without following a symlink, and only if it is
    still the one ``st`` (its lstat) describes."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise OSError(f"{name!r} was replaced")
    return fd


def _remove_tree_at(name: str, dir_fd: int, st: os.stat_result) -> None:
    """Remove the directory ``name`` in ``dir_fd`` (the one ``st`` describes) and what is in it, on
    directory fds only: no symlink is ever followed, so a name swapped for one removes nothing
    outside (``shutil.rmtree`` takes ``dir_fd`` only from Python 3.11). At most
    :data:`_TREE_DEPTH` levels and :data:`_TREE_ENTRIES` entries; what is past them stays."""
    budget = [_TREE_ENTRIES]

    def scan(fd: int) -> list:  # unlink what is not a directory; the directories, to go down into
        subdirs = []
        try:
            with os.scandir(fd) as it:
                for e in it:
                    budget[0] -= 1
                    if budget[0] < 0:
                        break
                    try:
                        est = e.stat(follow_symlinks=False)
                        if _stat.S_ISDIR(est.st_mode):
                            subdirs.append((e.name, est))
                        else:
                            os.unlink(e.name, dir_fd=fd)
                    except OSError:
                        pass
        except OSError:
            pass
        return subdirs

    fd = _open_dir_at(name, dir_fd, st)
    stack = [(name, dir_fd, fd, scan(fd))]
    try:
        while stack:
            at, parent, fd, subdirs = stack[-1]
            if subdirs and len(stack) < _TREE_DEPTH and budget[0] >= 0:
                sub, sst = subdirs.pop()
                try:
                    sfd = _open_dir_at(sub, fd, sst)
                except OSError:
                    continue
                stack.append((sub, fd, sfd, scan(sfd)))
                continue
            stack.pop()
            os.close(fd)
            try:
                os.rmdir(at, dir_fd=parent)
            except OSError:
                pass
    finally:
        for _, _, fd, _ in stack:
            os.close(fd)


class _Garbled(Exception):
    pass


class _RowState:
    """What is known of one row across rounds: cells left for the runner, cells to run alone,
    a verdict for the whole row (syntax error, loading failure or hang), whether it timed out."""

    def __init__(self, unit: Unit, row: Row, batch: bool):
        self.row = row
        self.code, self.setup, self.kind = unit.programs[row.program], unit.setups[row.setup], row.kind
        direct = [c for c in row.cells if unit.probes[c[1]][0] in _DIRECT_MODES]
        self.generic = [c for c in row.cells if unit.probes[c[1]][0] == "exec"]
        self.pending = list(direct) if batch else []
        self.isolate: list = [] if batch else list(direct)
        self.settle: CellRecord | None = None
        self.timed_out = False
        self.rounds = 0
        self.n_direct = len(direct)


class _RowRun:
    """The runner's frames for one row, read in order (see the module docstring)."""

    def __init__(self, st: _RowState):
        self.st = st
        self.cells = list(st.pending)
        self.records: dict[int, CellRecord] = {}
        self.isolate: list = []
        self.remaining: list = []
        self.settle: CellRecord | None = None
        self.all_impure = False
        self.planned = self.deterministic = self.loaded = self.finished = False
        self.bad: set[int] = set()
        self.queue: list = []
        self.current = None

    def feed(self, fkind, secs, body, elapsed) -> str | None:
        """One frame: "progress" (a claim or the plan: the next test's time starts), "done" (the
        row is over), "abnormal" (the runner must be replaced), or None."""
        current = self.current
        if (fkind is Frame.VALUES or fkind is Frame.RAISED) and self.planned and current is not None:
            # the common frame, a test's claim (what the last branch below does for it)
            key = current[0]
            self.records[key] = CellRecord(key, Outcome.CLAIM, 0, min(max(secs, 0.0), elapsed),
                                           _KIND_BYTE[fkind] + body)
            queue = self.queue
            self.current = queue.pop(0) if queue else None
            return "progress"
        if fkind == Frame.DONE:
            left = ([self.current] if self.current is not None else []) + self.queue
            if left and not all(c[2] for c in left):
                raise _Garbled()  # only extra inputs may be left out (after a timeout or errors)
            for key, _, _ in left:  # extra inputs of a program that timed out: not run
                self.records[key] = CellRecord(key, Outcome.SKIPPED)
            self.current, self.queue = None, []
            self.finished = True
            return "done"
        if not self.planned:
            if fkind == Frame.SYNTAX:
                self.settle = CellRecord(0, Outcome.SYNTAX, 0, 0.0, body[:MAX_ERR * 4])
                return None
            if fkind == Frame.BAD_PROBE:
                idx, msg = _json_pair(body)
                if idx == -1:
                    self.settle = CellRecord(0, Outcome.BAD_TEST, 0, 0.0, msg.encode()[:MAX_ERR * 4])
                elif isinstance(idx, int) and 0 <= idx < len(self.cells):
                    key = self.cells[idx][0]
                    self.records[key] = CellRecord(key, Outcome.BAD_TEST, 0, 0.0, msg.encode()[:MAX_ERR * 4])
                    self.bad.add(idx)
                return None
            if fkind != Frame.PLAN:
                raise _Garbled()
            plan = _PLANS.get(body)
            if plan is None:
                plan = _json(body)
            if not isinstance(plan, dict):
                raise _Garbled()
            self.planned = True
            self.deterministic = plan.get("deterministic") is True and self.st.kind != "stdio"
            iso = plan.get("isolate")
            live = [(i, c) for i, c in enumerate(self.cells) if i not in self.bad]
            if iso == "all":
                self.all_impure = True
                self.remaining = [c for _, c in live]
                return "progress"
            iso = {i for i in iso if isinstance(i, int)} if isinstance(iso, list) else set()
            self.isolate = [c for i, c in live if i in iso]
            self.queue = [c for i, c in live if i not in iso]
            self.current = self.queue.pop(0) if self.queue else None
            return "progress"
        if fkind == Frame.LOADED and not self.loaded:
            self.loaded = True
            return None
        if fkind == Frame.LOAD_FAILED and not self.loaded and self.current is not None:
            if self.deterministic:
                self.settle = _claim(0, Frame.RAISED, secs, body)
                self.records = {}
            else:
                self.records[self.current[0]] = _claim(self.current[0], Frame.RAISED, secs, body)
            self.current, self.queue = None, []
            return "progress"
        if fkind == Frame.TIMED_OUT:
            if self.current is None:
                raise _Garbled()
            if body == LOAD_HANG and not self.loaded:
                # loading hangs before any test code ran: every test would (the rule of a harness
                # that loads a program once for all its tests)
                self.settle = CellRecord(0, Outcome.TIMEOUT, 0, secs, LOAD_HANG)
                self.records, self.current, self.queue = {}, None, []
                return "progress"
            key = self.current[0]
            # the body: the values of the holes that ran before the hang, if any (the parent reads them)
            self.records[key] = CellRecord(key, Outcome.TIMEOUT, 0, max(secs, 0.0), b"" if body == LOAD_HANG else body)
            self.st.timed_out = True
            self.current = self.queue.pop(0) if self.queue else None
            return "progress"
        if fkind == Frame.ABNORMAL and body == b"finalizer":
            # the runner is stuck in a finalizer of this row's objects, after the claims it sent:
            # they stand; what is left runs in a new runner
            self.remaining = ([self.current] if self.current is not None else []) + self.queue
            self.current, self.queue = None, []
            return "abnormal"
        if fkind == Frame.ABNORMAL:
            if self.current is None:
                raise _Garbled()
            self.isolate.append(self.current)
            self.all_impure = b"shared" in body
            self.remaining, self.current = self.queue, None
            return "abnormal"
        if fkind not in CLAIMS or fkind == Frame.VERDICT or self.current is None:
            raise _Garbled()
        key = self.current[0]
        self.records[key] = _claim(key, fkind, min(max(secs, 0.0), elapsed), body)
        self.current = self.queue.pop(0) if self.queue else None
        return "progress"

    def unreported(self) -> int:
        """Tests of the row not reported yet (all of them before the plan)."""
        if not self.planned:
            return len(self.cells)
        return (self.current is not None) + len(self.queue)

    def backstop(self, elapsed: float, limit: float) -> None:
        """The runner did not report in time (its own timer failed: a program that swallows the
        timer's exception, or a long call in C): when one test was left it is that test's
        timeout; otherwise which test hung is unknown, and each runs again alone."""
        if self.planned and self.current is not None and not self.queue:
            self.timeout(elapsed, limit)
            return
        if not self.planned:
            live = [c for i, c in enumerate(self.cells) if i not in self.bad]
        else:
            live = ([self.current] if self.current is not None else []) + self.queue
        self.isolate.extend(live)
        self.remaining, self.current, self.queue = [], None, []

    def timeout(self, elapsed: float, limit: float) -> None:
        if not self.planned or (not self.loaded and self.deterministic and self.current is not None):
            self.settle = CellRecord(0, Outcome.TIMEOUT, 0, limit, LOAD_HANG)  # compiling or loading hangs
            self.records = {}
            return
        if self.current is None:  # after the last claim (a finalizer that hangs): nothing lost
            self.finished = True
            return
        self.records[self.current[0]] = CellRecord(self.current[0], Outcome.TIMEOUT, 0, elapsed)
        self.remaining, self.current = self.queue, None

    def hand_back(self) -> None:
        """The unit's answer is full (:data:`UNIT_OUTPUT_BYTES`): what the row has not reported
        yet goes back to the executor, the claims it made stand."""
        self.remaining = ([self.current] if self.current is not None else []) + self.queue
        self.current, self.queue = None, []

    def exited(self) -> None:
        """The runner died: the test it was running runs again alone, the rest in a new runner."""
        if not self.planned:
            self.isolate = [c for i, c in enumerate(self.cells) if i not in self.bad]
            return
        if self.current is not None:
            self.isolate.append(self.current)
        self.remaining, self.current = self.queue, None

    garbled = exited

    def apply(self, out: dict) -> None:
        st = self.st
        st.rounds += 1
        out.update(self.records)
        if any(r.outcome == Outcome.TIMEOUT for r in self.records.values()):
            st.timed_out = True
        st.isolate.extend(self.isolate)
        if self.settle is not None:
            st.settle, st.pending = self.settle, []
            return
        if self.all_impure:
            st.isolate.extend(self.remaining)
            st.pending = []
        elif self.finished:
            st.pending = []
        else:
            st.pending = self.remaining
        if st.timed_out and st.pending:  # let the executor spread the rest over the workers
            for key, _, optional in st.pending:
                out[key] = CellRecord(key, Outcome.SKIPPED if optional else Outcome.REQUEUE)
            st.pending = []
        if st.rounds > st.n_direct + 2:  # never loop on rows that keep killing the runner
            st.isolate.extend(st.pending)
            st.pending = []


# the plans nearly every row sends (read only, never changed: ``feed`` only reads them)
_ISOLATES: tuple[Any, ...] = ([], "all")
_PLANS: dict[bytes, dict[str, Any]] = {
    json.dumps({"isolate": iso, "deterministic": det}, separators=(",", ":")).encode(): {
        "isolate": iso, "deterministic": det} for iso in _ISOLATES for det in (True, False)}


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
