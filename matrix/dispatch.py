"""Spreading a matrix over the sandbox workers: units of rows out, cell results in.

An :class:`Entry` is one task's codes x plans (plus optional extra columns). Its cells are packed
into units of *rows* (one program against consecutive tests of one task: the worker runs a row in
as few processes as it can, see :mod:`matrix.sandbox.worker`) of about ``target`` cells, planned
lazily while the workers run the earlier ones; each worker has at most two units in flight. A
worker that dies or hangs past its budget is replaced and its units run again row by row (a row
that kills its worker twice is a ``sandbox_error``). A cell whose program shadows a builtin the
parent's side of the test uses runs again as a generic test.
"""

from __future__ import annotations

import math
import os
import pickle
import select
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from matrix.inputs import infer_entry_point, normalize_stdout, value_key
from matrix.plans import Plan, plan_call, plan_stdin, plan_test
from matrix.preludes import harness_header
from matrix.sandbox.encoding import NonPlain
from matrix.sandbox.records import LOAD_ALLOWANCE, Outcome, Row, Unit, unpack_records
from matrix.tasks import Task, Test
from matrix.verdicts import NEEDS_GENERIC, CellResult, decode_claims, interpret, truncate

# A cell's value (what the candidate returned) is judged whole, but kept for the result only up to
# this size of its encoded form; past it, a note of what it was (a program returning a million
# floats on every test held 1.3 GB of the parent's memory for 20 cells and wrote 104 MB)
KEEP_VALUE_BYTES = 64 << 10


@dataclass
class Entry:
    """One (task, codes, plans) block of work; ``plans`` are made from ``tests`` when the entry's
    units are built. Columns from ``optional_from`` on are optional (extra inputs): a program
    that timed out in its row skips the rest of them."""

    task: Task
    codes: list[str]
    plans: list[Plan] | None
    results: list[list[CellResult | None]]
    tests: list[Test] | None = None
    optional_from: int | None = None
    extra: Any = None  # extra inputs (optional columns): a list, or a Future of one
    _own: tuple[str, ...] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # a task converted from LiveCodeBench or APPS runs its programs after that harness's lines
        self.codes = [harness_header(self.task, c) + c for c in self.codes]

    def own_names(self) -> tuple[str, ...]:
        """The names a generic test reads from the program even where they are a builtin's or a
        standard module's: the task's entry point (inferred from the tests where it has none)."""
        if self._own is None:
            entry = self.task.entry_point or infer_entry_point(self.tests or self.task.tests or ())
            self._own = (entry,) if entry else ()
        return self._own

    def plan_tests(self, tol) -> list[Plan]:
        """The plans of the given tests (not of the extra inputs, which may still be drawn)."""
        if self.plans is None:
            self.plans = [plan_test(t, tol) for t in self.tests]  # type: ignore[union-attr]  # tests given when plans is not
        return self.plans

    def plan(self, tol) -> None:
        plans = self.plan_tests(tol)
        if self.extra is not None and self.optional_from is None:
            extra = self.extra
            if hasattr(extra, "result"):
                try:
                    extra = extra.result()
                except Exception:  # a refinement: the matrix stands without it
                    extra = []
            extra = list(extra or [])
            self.optional_from = len(plans)
            kind = getattr(self.task, "kind", "function")
            self.plans = plans + [plan_stdin(x) if kind == "stdio" else plan_call(x) for x in extra]
            self.extra = extra

    def n_cells(self) -> int:
        return len(self.codes) * len(self.plans if self.plans is not None else self.tests)  # type: ignore[arg-type]  # one is given


@dataclass
class _Cells:
    """Cells sent in one unit: (entry, code row, plan column) triples, grouped by row."""

    cells: list[tuple[int, int, int]]
    generic: bool = False  # re-runs of shadowed-builtin cells as generic tests
    retries: int = 0
    extra: dict = field(default_factory=dict)

    def n_cells(self) -> int:
        return len(self.cells)


UNIT_CELLS = 256  # the most cells a unit holds
TAIL_UNIT_CELLS = 16  # the least a unit is cut down to toward the end (a row may still be shorter)


def units(entries: list[Entry], n_workers: int, tol, on_skip=None, on_grow=None):
    """Plan the entries one by one and pack their cells into units of about ``target`` cells,
    whole rows of consecutive tasks (long rows are cut). A generator.

    ``target`` is a quarter of a worker's share of the cells left (at most :data:`UNIT_CELLS`,
    at least :data:`TAIL_UNIT_CELLS` once the start's share is larger), so units shrink toward
    the end: a cell may cost 20 us or a whole timeout, and a last unit of 256 cells of rows that
    hang kept one worker busy for seconds while the other had nothing left (real-output pool:
    9.3 s idle, issue 23)."""
    workers = max(1, n_workers)
    total = sum(e.n_cells() for e in entries)
    first = int(max(1, min(UNIT_CELLS, math.ceil(total / (4 * workers)))))
    least = min(first, TAIL_UNIT_CELLS)
    packed = 0

    def size() -> int:
        return int(max(least, min(first, math.ceil((total - packed) / (4 * workers)))))

    target = first
    current: list = []
    for ei, e in enumerate(entries):
        before = e.n_cells()
        e.plan(tol)
        if e.n_cells() != before:
            total += e.n_cells() - before
        if on_grow is not None and e.n_cells() > before:
            on_grow(e.n_cells() - before)  # extra inputs drawn meanwhile
        plans: list[Plan] = e.plans  # type: ignore[assignment]  # set by e.plan(tol)
        e.results = [[None] * len(plans) for _ in e.codes]
        cols = []
        for j, p in enumerate(plans):
            if p.mode == "bad":
                for i in range(len(e.codes)):
                    e.results[i][j] = CellResult("bad_test", None, truncate(p.error), 0.0)
                if on_skip is not None:
                    on_skip(len(e.codes))
            else:
                cols.append(j)
        total -= (len(plans) - len(cols)) * len(e.codes)  # (bad tests: settled here, not packed)
        if not cols:
            continue
        for i in range(len(e.codes)):
            target = size()
            step = math.ceil(len(cols) / math.ceil(len(cols) / target))  # (a long row in even pieces)
            for s0 in range(0, len(cols), step):
                piece = [(ei, i, j) for j in cols[s0:s0 + step]]
                if current and len(current) + len(piece) > target:
                    packed += len(current)
                    yield _Cells(current)
                    current = []
                current.extend(piece)
    if current:
        yield _Cells(current)


def _may_queue_second(outstanding: int, waiting: int, n_workers: int) -> bool:
    """Whether a worker with ``outstanding`` units may be given another while ``waiting`` units
    wait in the parent: a first one always; a second one (queued behind the first, so that the
    worker goes on without a round trip) only while, after it, every other worker can still get
    one. At the end of a run a unit queued at a busy worker cannot move to an idle one."""
    if outstanding == 0:
        return waiting > 0
    return outstanding == 1 and waiting - 1 >= n_workers - 1


def to_wire(u: _Cells, entries: list[Entry], timeout: float) -> dict:
    programs: list[str] = []
    program_ix: dict[str, int] = {}
    setups: list[str] = []
    setup_ix: dict[str, int] = {}
    probes: list[tuple] = []
    probe_ix: dict[tuple[int, int], int] = {}
    rows: dict[tuple[int, int, str], Row] = {}
    for key, (ei, i, j) in enumerate(u.cells):
        e = entries[ei]
        src = e.codes[i]
        ci = program_ix.get(src)
        if ci is None:
            ci = program_ix[src] = len(programs)
            programs.append(src)
        setup = e.task.setup or ""
        si = setup_ix.get(setup)
        if si is None:
            si = setup_ix[setup] = len(setups)
            setups.append(setup)
        pi = probe_ix.get((ei, j))
        if pi is None:
            p = e.plans[j]  # type: ignore[index]  # planned by units()
            if u.generic and p.fallback is not None:
                p = p.fallback
            pi = probe_ix[(ei, j)] = len(probes)
            probe = p.probe()
            if probe[0] == "exec":  # a generic test reads builtins and modules as they are, not as the
                # program rebinds them, except the task's entry point (docs/contracts.md, tests)
                probe = ("exec", probe[1], None, e.own_names())
            elif probe[0] == "values" and probe[4]:  # the holes' builtins: the same, in the sandbox
                own = e.own_names()
                probe = probe[:4] + (tuple(n for n in probe[4] if n not in own),)
            probes.append(probe)
        # a test's own kind decides how its cell runs, whatever the task's (docs/contracts.md): a
        # stdio test of a function task runs the program as a script on its input, in a row of its own
        kind = "stdio" if e.task.kind == "stdio" or e.plans[j].mode == "stdio" else "function"  # type: ignore[index]
        row = rows.get((ei, i, kind))
        if row is None:
            row = rows[(ei, i, kind)] = Row(ci, si, kind)
        optional = e.optional_from is not None and j >= e.optional_from
        row.cells.append((key, pi, optional))
    return Unit(programs, setups, probes, list(rows.values()), float(timeout)).to_wire()


class Dispatcher:
    """Runs units on a :class:`matrix.workers.Pool` and writes results into the entries."""

    def __init__(self, pool, config, progress_bar=None):
        self.pool = pool
        self.config = config
        self.bar = progress_bar
        self.unit_ids = 0

    def budget(self, u: _Cells) -> float:
        """How long a worker may take over a unit before it counts as hung: every cell its time,
        the load allowance of a program in a process of its own, and the processes' start."""
        return u.n_cells() * (float(self.config.timeout) + LOAD_ALLOWANCE + 0.5) + 10.0

    def run(self, source, entries: list[Entry], idle=None) -> None:
        """Run the units of ``source`` to the end. ``idle()``, when given, does a piece of the
        caller's own work whenever no worker has anything to read (False once there is none)."""
        queue: deque = deque()
        source = iter(source)
        pool = self.pool
        source_done = False

        def take():
            if queue:
                return queue.popleft()
            return next(source, None)

        def waiting(k: int) -> int:
            """Units waiting in the parent, the source read ahead for up to ``k`` of them."""
            nonlocal source_done
            while not source_done and len(queue) < k:
                u = next(source, None)
                if u is None:
                    source_done = True
                else:
                    queue.append(u)
            return len(queue)

        n_workers = len(pool.workers)

        inflight: dict[int, tuple[_Cells, object]] = {}
        poller = select.poll()
        by_fd = {}

        def register(w):
            os.set_blocking(w.fd_out, False)
            poller.register(w.fd_out, select.POLLIN)
            by_fd[w.fd_out] = w

        for w in pool.workers:
            register(w)

        def feed(w):
            while len(w.outstanding) < 2:
                if not _may_queue_second(len(w.outstanding), waiting(n_workers), n_workers):
                    return True
                u = take()
                if u is None:
                    return True
                self.unit_ids += 1
                uid = self.unit_ids
                msg = pickle.dumps((uid, to_wire(u, entries, self.config.timeout)),
                                   protocol=pickle.HIGHEST_PROTOCOL)
                try:
                    w.send(msg)
                except OSError:
                    queue.appendleft(u)
                    return False
                inflight[uid] = (u, w)
                w.outstanding.append(uid)
                w.busy_until = max(w.busy_until, time.monotonic()) + self.budget(u)
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
                for piece in _split(u):
                    if piece.retries > 1:
                        for ei, i, j in piece.cells:
                            entries[ei].results[i][j] = CellResult("sandbox_error", None,
                                                                   f"sandbox worker failed ({reason})", 0.0)
                        if self.bar is not None:
                            self.bar.update(piece.n_cells())
                    else:
                        queue.append(piece)
            w.outstanding = []
            nw = pool.replace(pool.workers.index(w))
            register(nw)

        for w in list(pool.workers):
            if not feed(w):
                replace(w, "pipe closed")
        while True:
            for w in list(pool.workers):
                if len(w.outstanding) < 2 and not feed(w):
                    replace(w, "pipe closed")
            if not inflight and not queue:
                u = take()
                if u is None:
                    break
                queue.appendleft(u)
                continue
            events = poller.poll(0) if idle is not None else None
            if not events:
                if idle is not None and idle():
                    events = poller.poll(0)  # what arrived meanwhile
                else:
                    idle = None
                    events = poller.poll(200)
            for fd, _ev in events:
                w = by_fd.get(fd)
                if w is None:
                    continue
                alive = w.read_available()
                for frame in w.frames():
                    if frame[:1] != b"U":
                        continue
                    uid, records = unpack_records(frame)
                    item = inflight.pop(uid, None)
                    if item is None:
                        continue
                    u, _ = item
                    if uid in w.outstanding:
                        w.outstanding.remove(uid)
                    more = self.absorb(u, records, entries)
                    queue.extend(more)
                    if self.bar is not None:
                        self.bar.update(u.n_cells() - sum(m.n_cells() for m in more))
                if not alive:
                    replace(w, f"exited with status {w.proc.poll()}")
                    continue
                feed(w)
            now = time.monotonic()
            for w in list(pool.workers):
                if w.outstanding and now > w.busy_until:
                    replace(w, "hung")

    def absorb(self, u: _Cells, records, entries: list[Entry]) -> list[_Cells]:
        """Turn a unit's records into cell results; returns the cells to run again as generic
        tests (their program shadows a builtin the parent's side of the test uses)."""
        cells = u.cells
        n = len(cells)
        records = [r for r in records if 0 <= r.key < n]
        data = decode_claims(records)
        redo = []
        requeue = []
        cfg = self.config
        timeout, max_output, generic = float(cfg.timeout), int(cfg.max_output_bytes), u.generic
        requeued, claim = Outcome.REQUEUE, Outcome.CLAIM
        for rec, d in zip(records, data):
            ei, i, j = cells[rec.key]
            if rec.outcome == requeued:
                requeue.append((ei, i, j))
                continue
            e = entries[ei]
            plan = e.plans[j]
            if generic and plan.fallback is not None:
                plan = plan.fallback
            res = interpret(rec, plan, d, timeout, max_output)
            if res is NEEDS_GENERIC:
                redo.append((ei, i, j))
                continue
            if rec.outcome == claim and res.value is not None and len(rec.payload) > KEEP_VALUE_BYTES:
                res.value = _dropped(res.value, len(rec.payload))
            e.results[i][j] = res
        waiting = set(redo) | set(requeue)
        for c in cells:
            ei, i, j = c
            if entries[ei].results[i][j] is None and c not in waiting:
                entries[ei].results[i][j] = CellResult("sandbox_error", None, "no result for the cell", 0.0)
        more = [_Cells(redo, generic=True)] if redo else []
        if requeue:
            more.append(_Cells(requeue, generic=u.generic))
        return more


def _dropped(value, size: int) -> NonPlain:
    """The note kept for a value too large to keep: its type and size, and digests of it (as a
    value and as stdout is compared) with which output consensus still tells equal values from
    different ones (a note of type and size alone made every list of one length agree)."""
    if isinstance(value, NonPlain):
        return value
    stdout_key = value_key(normalize_stdout(value)) if isinstance(value, str) else None
    return NonPlain(f"{type(value).__name__} too large to keep ({size} bytes)", None, value_key(value), stdout_key)


def _split(u: _Cells) -> list[_Cells]:
    """After a worker failure: one unit per code row, and a retry count once single."""
    rows: dict[tuple[int, int], list] = {}
    for c in u.cells:
        rows.setdefault(c[:2], []).append(c)
    if len(rows) > 1:
        return [_Cells(cells, u.generic, u.retries) for cells in rows.values()]
    return [_Cells(list(u.cells), u.generic, u.retries + 1)]
