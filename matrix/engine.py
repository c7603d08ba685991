"""The code x test execution matrix: run every candidate program on every test, sandboxed.

>>> with Executor(ExecConfig(timeout=2.0)) as ex:        # doctest: +SKIP
...     res = ex.run_matrix(task, codes, tests)
...     res.passed            # bool ndarray, codes x tests

How a cell runs
    Long-lived workers (one per core, :mod:`matrix.sandbox`, :mod:`matrix.worker`) fork a fresh,
    confined child per cell; cells whose code and test pass the purity check (no I/O, no
    introspection, only pure standard-library modules) instead run in a long-lived confined
    *runner*, each test in a fresh module namespace with the interpreter state reset, and any
    abnormal end re-runs the cell in a fresh child (see :mod:`matrix.worker`). A cell executes the
    code (module name ``solution``; ``__main__`` for stdin/stdout programs), then the task's
    ``setup`` (for function tasks after the code, so it may use the code's definitions; for stdio
    programs before it), then the test, in a scrubbed environment (``PYTHONHASHSEED=0``, no
    ``PYTHONUNBUFFERED``: a program ending in ``os._exit`` loses unflushed output, as it would by
    default). The parent decides the verdict on plain data (:mod:`matrix.static` says what runs
    where; :mod:`matrix.plain` decodes and evaluates). Units of cells are planned lazily and
    dispatched to the workers as they free up; after a timeout a worker hands its remaining cells
    back so that several hanging cells are spread over the workers.

Cell statuses
    ``pass``          the test passed (``run_calls``/``run_stdin``: the code ran and returned a
                      plain value / exited normally)
    ``fail``          wrong value or output, a failed assertion (also an ``AssertionError`` the
                      code raises), or a value that is not plain data compared for equality
    ``error``         the code raised (while loading, in the setup or in the test), exited
                      (``sys.exit``, ``os._exit``, a non-zero exit status of a stdio program), died
                      on a signal, returned a non-plain value where plain data is needed, or
                      tampered with the result channel
    ``timeout``       the wall-clock limit (``ExecConfig.timeout`` per cell) or the CPU backstop
    ``memory``        ``MemoryError`` or a crash attributable to the address-space cap
    ``output_limit``  stdout/stderr, a file written or the returned value exceeded
                      ``max_output_bytes``
    ``syntax_error``  the code does not compile
    ``bad_test``      the test (or call, or expected value, or the task's setup) is malformed
    ``sandbox_error`` the sandbox failed to run the cell twice in a row (should not happen)

Only ``pass`` counts as passed. A cell's ``value`` is the value of the test's candidate call (the
first one, for tests with several) or the program's stdout, as exact builtin Python data (``int``,
``float``, ``str``, ``bool``, ``None``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``,
``bytes``, ``bytearray``, ``complex``, ``range``; also ``Fraction``, ``Decimal``, ``deque``), or
None; :func:`matrix.plain.to_jsonable` gives its JSON form. ``error`` is a message cut to 1000
characters ('' when there is none), ``time`` the cell's wall-clock seconds.

Verdicts depend only on the (code, test) pair: no state flows between cells (fresh process or
fresh namespace with the interpreter state reset), a crash or hang ends only its own child, and
the order of codes and tests does not matter (tested with hypothesis permutations).
"""

from __future__ import annotations

import math
import os
import pickle
import select
import signal
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from matrix import plain
from matrix.sandbox import WorkerProcess, await_workers, spawn_workers, start_workers
from matrix.static import Plan, plan_call, plan_stdin, plan_test
from matrix.tasks import Task, Test
from matrix.worker import (
    EXIT_CHANNEL,
    EXIT_HARNESS,
    OUT_BADTEST,
    OUT_DIED,
    OUT_OUTPUT,
    OUT_PROTOCOL,
    OUT_REQUEUE,
    OUT_RESULT,
    OUT_SANDBOX,
    OUT_SYNTAX,
    OUT_TIMEOUT,
    REC,
)

__all__ = ["ExecConfig", "CellResult", "MatrixResult", "Executor", "STATUSES"]

STATUSES = ("pass", "fail", "error", "timeout", "memory", "output_limit", "syntax_error",
            "bad_test", "sandbox_error")
MAX_ERROR = 1000
MAX_MEMORY_MB = 2048


@dataclass
class ExecConfig:
    """Limits and parallelism of the executor.

    ``timeout``: wall-clock seconds per cell; ``memory_mb``: address-space cap per cell (at most
    2048); ``max_procs``: processes + threads per cell; ``max_output_bytes``: cap on stdout,
    stderr, each file written and each returned value; ``workers``: parallel sandbox workers;
    ``isolation``: ``auto`` | ``namespace`` | ``process`` (:mod:`matrix.sandbox`);
    ``float_tolerance``: when set, numbers in expected values and stdout tokens compare with
    ``math.isclose(rel_tol=abs_tol=tol)``; ``batch``: run pure cells together (in the runner, or
    one forked child per batch with ``runner=False``); off = one fresh child per cell, the same
    verdicts, slower; ``tmp_mb``: size of the private ``/tmp`` of a worker's cells;
    ``import_paths``: directories (absolute) put first on the cells' ``sys.path`` and made visible,
    read-only, inside the sandbox (a user's package and its source tree: ``coevo gen-tests``)."""

    timeout: float = 2.0
    memory_mb: int = 1024
    max_procs: int = 32
    max_output_bytes: int = 4 << 20
    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    isolation: str = "auto"
    float_tolerance: float | None = None
    batch: bool = True
    runner: bool = True
    tmp_mb: int = 64
    import_paths: tuple[str, ...] = ()

    def validate(self) -> None:
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0 and math.isfinite(self.timeout)):
            raise ValueError("timeout: must be a positive number of seconds")
        if not 16 <= int(self.memory_mb) <= MAX_MEMORY_MB:
            raise ValueError(f"memory_mb: must be between 16 and {MAX_MEMORY_MB}")
        if int(self.max_procs) < 1:
            raise ValueError("max_procs: must be >= 1")
        if int(self.max_output_bytes) < 1024:
            raise ValueError("max_output_bytes: must be >= 1024")
        if int(self.workers) < 1:
            raise ValueError("workers: must be >= 1")
        if self.isolation not in ("auto", "namespace", "process"):
            raise ValueError("isolation: must be auto, namespace or process")
        if self.float_tolerance is not None and not self.float_tolerance >= 0:
            raise ValueError("float_tolerance: must be >= 0")
        for p in self.import_paths:
            if not (isinstance(p, str) and os.path.isabs(p) and os.path.isdir(p)):
                raise ValueError(f"import_paths: {p!r} is not an absolute path of a directory")


@dataclass
class CellResult:
    status: str
    value: Any = None
    error: str = ""
    time: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class MatrixResult:
    task_id: str
    passed: np.ndarray  # bool, codes x tests
    status: list[list[str]]
    values: list[list[Any]]
    errors: list[list[str]]
    times: np.ndarray
    isolation: str

    def to_json(self) -> dict:
        """The ``coevo matrix`` output line (values in :func:`matrix.plain.to_jsonable` form)."""
        return {
            "task_id": self.task_id,
            "passed": self.passed.astype(bool).tolist(),
            "status": self.status,
            "values": [[plain.to_jsonable(v) for v in row] for row in self.values],
            "errors": self.errors,
            "times": [[round(float(t), 6) for t in row] for row in self.times],
            "isolation": self.isolation,
        }

    def cell(self, code: int, test: int) -> CellResult:
        return CellResult(self.status[code][test], self.values[code][test], self.errors[code][test],
                          float(self.times[code][test]))


# ----------------------------------------------------------------------------- internals

@dataclass
class _Entry:
    """One (task, codes, plans) block of work; ``plans`` are made from ``tests`` when the entry's
    units are built (while the workers already run earlier entries)."""

    task: Task
    codes: list[str]
    plans: list[Plan] | None
    results: list[list[CellResult | None]]
    tests: list[Test] | None = None

    def plan(self, tol) -> None:
        if self.plans is None:
            self.plans = [plan_test(t, tol) for t in self.tests]

    def n_cells(self) -> int:
        return len(self.codes) * len(self.plans if self.plans is not None else self.tests)


@dataclass
class _Unit:
    """Cells sent to a worker in one message: (entry, code row, plan column) triples."""

    cells: list[tuple[int, int, int]]
    generic: bool = False  # exec-mode plans (or fallbacks): never mixed with protected cells
    retries: int = 0

    def n_cells(self) -> int:
        return len(self.cells)


_NO_DATA = object()


def _truncate(text: str, n: int = MAX_ERROR) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class Executor:
    """Runs code x test matrices in the sandbox. Not thread-safe; use one per thread."""

    def __init__(self, config: ExecConfig | None = None):
        self.config = config or ExecConfig()
        self.config.validate()
        self._workers: list[WorkerProcess] = []
        self._limits = {
            "memory_mb": int(self.config.memory_mb), "max_procs": int(self.config.max_procs),
            "max_output_bytes": int(self.config.max_output_bytes), "tmp_mb": int(self.config.tmp_mb),
            "runner": bool(self.config.runner),
            "import_paths": [os.path.realpath(p) for p in self.config.import_paths],
        }
        self._unit_ids = 0
        self.stats = {"cells": 0, "seconds": 0.0}
        self._isolation = None
        self._detail = ""
        # the workers boot in the background; the first use (or ``isolation``) waits for them
        self._pending = spawn_workers(int(self.config.workers), self.config.isolation, self._limits)
        self._workers = self._pending[0]

    def _ready(self) -> None:
        if self._pending is not None:
            workers, mode, reason = self._pending
            self._pending = None
            self._workers, self._isolation, self._detail = await_workers(
                workers, self.config.isolation, mode, reason, self._limits)

    @property
    def isolation(self) -> str:
        """The isolation level in force: ``namespace`` or ``process`` (:mod:`matrix.sandbox`)."""
        self._ready()
        return self._isolation

    @property
    def isolation_detail(self) -> str:
        self._ready()
        return self._detail

    # ------------------------------------------------------------------ public API
    def run_matrix(self, task: Task, codes: list[str], tests: list[Test]) -> MatrixResult:
        return self.run_matrices([(task, codes, tests)])[0]

    def run_matrices(self, jobs: list[tuple[Task, list[str], list[Test]]], progress: bool = False
                     ) -> list[MatrixResult]:
        """Every cell of every job, all in parallel; results in job order."""
        import numpy as np  # imported here so that the workers boot while numpy loads

        entries = [_Entry(task, list(codes), None, [], list(tests)) for task, codes, tests in jobs]
        self._run(entries, progress)
        out = []
        for e in entries:
            n, m = len(e.codes), len(e.plans)
            status = [[e.results[i][j].status for j in range(m)] for i in range(n)]
            out.append(MatrixResult(
                task_id=e.task.task_id,
                passed=np.array([[s == "pass" for s in row] for row in status], dtype=bool).reshape(n, m),
                status=status,
                values=[[e.results[i][j].value for j in range(m)] for i in range(n)],
                errors=[[e.results[i][j].error for j in range(m)] for i in range(n)],
                times=np.array([[e.results[i][j].time for j in range(m)] for i in range(n)],
                               dtype=float).reshape(n, m),
                isolation=self.isolation))
        return out

    def run_calls(self, task: Task, codes: list[str], calls: list[str]) -> list[list[CellResult]]:
        """Value of each call expression (e.g. ``"f(1, [2])"``) for each code: status ``pass``
        and the plain value when the call returned plain data."""
        entry = _Entry(task, list(codes), [plan_call(c) for c in calls], [])
        self._run([entry], False)
        return entry.results

    def run_stdin(self, task: Task, codes: list[str], inputs: list[str]) -> list[list[CellResult]]:
        """Stdout of each program on each stdin input (status ``pass`` when it exited normally)."""
        entry = _Entry(task, list(codes), [plan_stdin(x) for x in inputs], [])
        self._run([entry], False)
        return entry.results

    def close(self) -> None:
        self._pending = None
        for w in self._workers:
            w.close()
        self._workers = []

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            for w in self._workers:
                w.kill()
        except Exception:
            pass

    # ------------------------------------------------------------------ scheduling
    def _units(self, entries: list[_Entry], on_skip=None):
        """Plan the entries one by one and pack their cells into units of about ``target``
        cells: whole code rows of consecutive tasks (long rows are cut), protected and generic
        (``exec``) tests never together. A generator: the dispatcher pulls units while the
        workers run the earlier ones."""
        total = sum(e.n_cells() for e in entries)
        nw = max(1, len(self._workers))
        target = int(max(8, min(256, math.ceil(total / (4 * nw)))))
        current: dict[bool, list] = {False: [], True: []}
        tol = self.config.float_tolerance
        for ei, e in enumerate(entries):
            e.plan(tol)
            e.results = [[None] * len(e.plans) for _ in e.codes]
            cols = {False: [], True: []}
            for j, p in enumerate(e.plans):
                if p.mode == "bad":
                    for i in range(len(e.codes)):
                        e.results[i][j] = CellResult("bad_test", None, _truncate(p.error), 0.0)
                    if on_skip is not None:
                        on_skip(len(e.codes))
                else:
                    cols[p.mode == "exec"].append(j)
            for generic in (False, True):
                cs = cols[generic]
                if not cs:
                    continue
                for i in range(len(e.codes)):
                    for s0 in range(0, len(cs), target):
                        piece = [(ei, i, j) for j in cs[s0:s0 + target]]
                        if len(current[generic]) + len(piece) > target:
                            yield _Unit(current[generic], generic)
                            current[generic] = []
                        current[generic].extend(piece)
        for generic in (False, True):
            if current[generic]:
                yield _Unit(current[generic], generic)

    def _wire(self, u: _Unit, entries: list[_Entry]) -> dict:
        codes, code_ix = [], {}
        setups, setup_ix = [], {}
        probes, probe_ix = [], {}
        cells = []
        for ei, i, j in u.cells:
            e = entries[ei]
            src = e.codes[i]
            ci = code_ix.get(src)
            if ci is None:
                ci = code_ix[src] = len(codes)
                codes.append(src)
            setup = e.task.setup or ""
            si = setup_ix.get(setup)
            if si is None:
                si = setup_ix[setup] = len(setups)
                setups.append(setup)
            pi = probe_ix.get((ei, j))
            if pi is None:
                p = e.plans[j]
                if u.generic and p.fallback is not None:
                    p = p.fallback
                pi = probe_ix[(ei, j)] = len(probes)
                probes.append(p.probe())
            cells.append((ci, pi, si))
        return {"codes": codes, "setups": setups, "probes": probes, "cells": cells,
                "timeout": float(self.config.timeout), "batch": bool(self.config.batch)}

    def _run(self, entries: list[_Entry], progress: bool) -> None:
        self._ready()
        total = sum(e.n_cells() for e in entries)
        bar = None
        if progress and total:
            try:
                from tqdm import tqdm

                bar = tqdm(total=total, unit="cell", desc="matrix", file=__import__("sys").stderr,
                           dynamic_ncols=True, mininterval=0.5)
            except ImportError:
                bar = None
        units = self._units(entries, on_skip=bar.update if bar is not None else None)
        t0 = time.monotonic()
        try:
            self._dispatch(units, entries, bar)
        except BaseException:
            for w in self._workers:
                w.kill()
            self._workers = []
            raise
        finally:
            if bar is not None:
                bar.close()
        self.stats["cells"] += total
        self.stats["seconds"] += time.monotonic() - t0

    def _budget(self, u: _Unit) -> float:
        return u.n_cells() * (float(self.config.timeout) + 0.5) + 10.0

    def _dispatch(self, units, entries: list[_Entry], bar) -> None:
        """Run ``units`` (an iterator; plus the units their results ask for) on the workers
        (``_run`` has checked the executor is open)."""
        if not self._workers:
            self._workers, self._isolation, self._detail = start_workers(
                int(self.config.workers), self.config.isolation, self._limits)
        queue: deque = deque()
        source = iter(units)

        def take():
            if queue:
                return queue.popleft()
            return next(source, None)
        inflight: dict[int, tuple[_Unit, WorkerProcess]] = {}
        poller = select.poll()
        by_fd = {}

        def register(w):
            os.set_blocking(w.fd_out, False)
            poller.register(w.fd_out, select.POLLIN)
            by_fd[w.fd_out] = w

        for w in self._workers:
            register(w)

        def feed(w):
            while len(w.outstanding) < 2:
                u = take()
                if u is None:
                    return True
                self._unit_ids += 1
                uid = self._unit_ids
                msg = pickle.dumps((uid, self._wire(u, entries)), protocol=pickle.HIGHEST_PROTOCOL)
                try:
                    w.send(msg)
                except OSError:
                    queue.appendleft(u)
                    return False
                inflight[uid] = (u, w)
                w.outstanding.append(uid)
                now = time.monotonic()
                w.busy_until = max(w.busy_until, now) + self._budget(u)
            return True

        def replace(w, reason):
            """Kill a dead or hung worker, requeue its units (split per row), start a new one."""
            try:
                poller.unregister(w.fd_out)
            except (KeyError, ValueError):
                pass
            by_fd.pop(w.fd_out, None)
            w.kill()
            for uid in w.outstanding:
                u, _ = inflight.pop(uid)
                for piece in self._split(u):
                    if piece.retries > 1:
                        self._fail_unit(piece, entries, f"sandbox worker failed ({reason})")
                        if bar is not None:
                            bar.update(piece.n_cells())
                    else:
                        queue.append(piece)
            w.outstanding = []
            idx = self._workers.index(w)
            nw = WorkerProcess(w.index, self.isolation, self._limits)
            ready = nw.wait_ready()
            if not ready.get("ok"):
                raise RuntimeError(f"sandbox worker failed to restart: {ready.get('error')}")
            self._workers[idx] = nw
            register(nw)

        for k in range(len(self._workers)):
            if not feed(self._workers[k]):
                replace(self._workers[k], "pipe closed")
                feed(self._workers[k])
        while True:
            for w in list(self._workers):
                if len(w.outstanding) < 2 and not feed(w):
                    replace(w, "pipe closed")
            if not inflight and not queue:
                u = take()
                if u is None:
                    break
                queue.appendleft(u)
                continue
            events = poller.poll(200)
            for fd, _ev in events:
                w = by_fd.get(fd)
                if w is None:
                    continue
                alive = w.read_available()
                for frame in w.frames():
                    if frame[:1] != b"U":
                        continue
                    uid, n = struct.unpack_from("<II", frame, 1)
                    item = inflight.pop(uid, None)
                    if item is None:
                        continue
                    u, _ = item
                    if uid in w.outstanding:
                        w.outstanding.remove(uid)
                    more = self._absorb(u, frame, n, entries)
                    queue.extend(more)
                    if bar is not None:
                        bar.update(u.n_cells() - sum(m.n_cells() for m in more))
                if not alive:
                    replace(w, f"exited with status {w.proc.poll()}")
                    continue
                feed(w)
            now = time.monotonic()
            for w in list(self._workers):
                if w.outstanding and now > w.busy_until:
                    replace(w, "hung")

    def _split(self, u: _Unit) -> list[_Unit]:
        """After a worker failure: one unit per code row, and a retry count once single."""
        rows: dict[tuple[int, int], list] = {}
        for c in u.cells:
            rows.setdefault(c[:2], []).append(c)
        if len(rows) > 1:
            return [_Unit(cells, u.generic, u.retries) for cells in rows.values()]
        return [_Unit(list(u.cells), u.generic, u.retries + 1)]

    def _fail_unit(self, u: _Unit, entries, msg: str) -> None:
        for ei, i, j in u.cells:
            entries[ei].results[i][j] = CellResult("sandbox_error", None, msg, 0.0)

    # ------------------------------------------------------------------ verdicts
    def _absorb(self, u: _Unit, frame: bytes, n: int, entries: list[_Entry]) -> list[_Unit]:
        """Turn a unit's records into cell results; returns the units to run again: cells left
        after a timeout (one unit each) and cells whose test must run generic (a shadowed
        builtin)."""
        off = 9
        more: list[_Unit] = []
        generic_redo: list[tuple[int, int, int]] = []
        recs = []
        for _ in range(n):
            key, outcome, info, secs, lp, lo, le = REC.unpack_from(frame, off)
            off += REC.size
            payload = frame[off:off + lp]
            off += lp
            out = frame[off:off + lo]
            off += lo
            err = frame[off:off + le]
            off += le
            if key < len(u.cells):
                recs.append((key, outcome, info, secs, payload, out, err))
        # one JSON parse for the whole unit (each body on its own if any is malformed)
        bodies = [r[4][1:] for r in recs if r[1] == OUT_RESULT and len(r[4]) > 1]
        decoded = None
        if bodies:
            try:
                decoded = iter(plain.decode(b"[" + b",".join(bodies) + b"]"))
            except ValueError:
                decoded = None
        for key, outcome, info, secs, payload, out, err in recs:
            ei, i, j = u.cells[key]
            if outcome == OUT_REQUEUE:
                more.append(_Unit([(ei, i, j)], u.generic))
                continue
            e = entries[ei]
            plan = e.plans[j]
            if u.generic and plan.fallback is not None:
                plan = plan.fallback
            data = _NO_DATA
            if decoded is not None and outcome == OUT_RESULT and len(payload) > 1:
                data = next(decoded)
            res = self._interpret(outcome, info, secs, payload, out, err, plan, data)
            if res is None:
                generic_redo.append((ei, i, j))
                continue
            e.results[i][j] = res
        if generic_redo:
            more.append(_Unit(generic_redo, generic=True))
        return more

    def _interpret(self, outcome: int, info: int, secs: float, payload: bytes, out: bytes,
                   err: bytes, plan: Plan, data: Any = None) -> CellResult | None:
        cfg = self.config
        if outcome == OUT_TIMEOUT:
            return CellResult("timeout", None, f"took longer than {cfg.timeout:g}s", secs)
        if outcome == OUT_OUTPUT:
            return CellResult("output_limit", None,
                              f"output exceeded {cfg.max_output_bytes} bytes", secs)
        if outcome == OUT_SYNTAX:
            return CellResult("syntax_error", None, _truncate(payload.decode("utf-8", "replace")), secs)
        if outcome == OUT_BADTEST:
            return CellResult("bad_test", None, _truncate(payload.decode("utf-8", "replace")), secs)
        if outcome == OUT_SANDBOX:
            return CellResult("sandbox_error", None, _truncate(payload.decode("utf-8", "replace")
                                                               or "the sandbox could not run the cell"), secs)
        if outcome == OUT_PROTOCOL:
            return CellResult("error", None, "the program wrote garbage into the result channel", secs)
        stdout = out.decode("utf-8", "replace") if out else ""
        if outcome == OUT_DIED:
            tail = err.decode("utf-8", "replace").strip().splitlines()
            last = tail[-1] if tail else ""
            if info == 0 and plan.mode == "stdio":
                return self._judge_stdout(plan, stdout, secs)
            if info < 0:
                what = f"killed by {_signame(-info)}"
            elif info == EXIT_HARNESS:
                what = "the sandbox harness failed in the program's process"
            elif info == EXIT_CHANNEL:
                what = "the program closed or replaced the result channel"
            else:
                what = f"exited with status {info} before the test finished"
            if "MemoryError" in last or "Cannot allocate memory" in last or "out of memory" in last.lower():
                return CellResult("memory", None, _truncate(f"{what}: {last}"), secs)
            return CellResult("error", None, _truncate(f"{what}: {last}" if last else what), secs)
        # a result frame
        tag, body = payload[:1], payload[1:]
        if data is _NO_DATA:
            try:
                data = plain.decode(body) if body else None
            except ValueError as exc:
                return CellResult("error", None, str(exc), secs)
        if tag == b"O":
            return CellResult("output_limit", None, "the returned value exceeded the output cap", secs)
        if tag == b"V":
            try:
                values, names = data
                values = list(values)
            except (TypeError, ValueError):
                return CellResult("error", None, "malformed result", secs)
            if len(values) != len(plan.exprs) or len(names) != len(plan.names):
                return CellResult("error", None, "malformed result", secs)
            for name, st in zip(plan.names, names):
                if st == 2:
                    return None if plan.fallback is not None else CellResult(
                        "error", None, f"the program redefines {name}", secs)
                if st == 1:
                    return CellResult("error", None, f"NameError: name '{name}' is not defined", secs)
            first = values[0] if values else None
            nonplain = next((v for v in values if isinstance(v, plain.NonPlain)), None)
            shown = None if isinstance(first, plain.NonPlain) else first
            if plan.judge is None:
                if nonplain is not None:
                    return CellResult("error", None, f"returned a {nonplain.type_name}, not plain data", secs)
                return CellResult("pass", first, "", secs)
            try:
                ok = plan.judge(values)
            except Exception as exc:
                return CellResult("error", shown, _truncate(f"{type(exc).__name__}: {exc}"), secs)
            if ok:
                return CellResult("pass", shown, "", secs)
            msg = f"returned a {nonplain.type_name}, not plain data" if nonplain is not None else ""
            return CellResult("fail", shown, msg, secs)
        if tag == b"S":  # batched stdio: [stdout, exception info or None]
            try:
                stdout, data = data
                stdout = str(stdout)
            except (TypeError, ValueError):
                return CellResult("error", None, "malformed result", secs)
            tag = b"K" if data is None else b"E"
        if tag == b"K" or tag == b"E":
            exc_info = data
            if tag == b"K":
                if plan.mode == "stdio":
                    return self._judge_stdout(plan, stdout, secs)
                return CellResult("pass", None, "", secs)
            try:
                where, _name, msg, cat = exc_info
                msg = str(msg)
            except (TypeError, ValueError):
                return CellResult("error", None, "malformed result", secs)
            if where == "code" and cat != "assert":
                msg = "while loading the code: " + msg
            elif where == "setup":
                msg = "in the task's setup: " + msg
            if cat == "assert":
                return CellResult("fail", stdout if plan.mode == "stdio" else None, _truncate(msg), secs)
            if cat == "memory":
                return CellResult("memory", None, _truncate(msg), secs)
            if cat == "output":
                return CellResult("output_limit", None, _truncate(msg), secs)
            return CellResult("error", None, _truncate(msg), secs)
        return CellResult("error", None, "the program ended abnormally", secs)

    def _judge_stdout(self, plan: Plan, stdout: str, secs: float) -> CellResult:
        if plan.judge is None:
            return CellResult("pass", stdout, "", secs)
        if plan.judge(stdout):
            return CellResult("pass", stdout, "", secs)
        return CellResult("fail", stdout, "", secs)
