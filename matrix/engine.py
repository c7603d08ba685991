"""The code x test execution matrix: run every candidate program on every test, sandboxed.

>>> with Executor(ExecConfig(timeout=2.0)) as ex:        # doctest: +SKIP
...     res = ex.run_matrix(task, codes, tests)
...     res.passed            # bool ndarray, codes x tests

How a cell runs
    Long-lived workers (one per core, :mod:`matrix.workers`) run rows of cells through the
    sandbox (:mod:`matrix.sandbox`): every process that runs a program or a test is forked by a
    clean zygote that never held a program, confined (namespaces, cgroup, seccomp filter, audit
    hook, rlimits, unprivileged uid) and killed with its whole tree afterwards. A program whose
    code passes the purity check runs its tests one after the other in one process, each test in a
    fresh module namespace with the interpreter state reset; any other program runs one fresh
    process per test. A program text given twice for a task runs once and the copy gets its
    row (:func:`distinct_programs`); so does a test given twice (its column). A cell executes the
    code (module name ``solution``; ``__main__`` for stdin/stdout programs), then the task's
    ``setup`` (for function tasks after the code, so it may use the code's definitions; for stdio
    programs before it), then the test, in a scrubbed
    environment (``PYTHONHASHSEED=0``). Everything the sandbox sends back is a *claim* (a value,
    an exception, stdout); the parent decides the verdict (:mod:`matrix.verdicts`), accepting for
    each test only the kind of claim it can produce (:mod:`matrix.plans` says what runs where).

Cell statuses
    ``pass``          the test passed (``run_calls``/``run_stdin``: the code ran and returned a
                      plain value / exited normally)
    ``fail``          wrong value or output, a failed assertion (also an ``AssertionError`` the
                      code raises), or a value that is not plain data compared for equality
    ``error``         the code raised (while loading, in the setup or in the test), exited
                      (``sys.exit``, ``os._exit``, a non-zero exit status of a stdio program), died
                      on a signal, returned a non-plain value where plain data is needed, used an
                      operation the sandbox forbids, or wrote garbage on its result channel
    ``timeout``       the wall-clock limit (``ExecConfig.timeout`` per cell) or the CPU backstop
    ``memory``        ``MemoryError``, the address-space cap, or the memory limit of the cell's
                      process tree
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

Verdicts depend only on the (code, test) pair: no state flows between cells, a crash or hang ends
only its own processes, and the order of codes and tests does not matter (tested with hypothesis
permutations).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from matrix.tasks import Task, Test
from matrix.workers import Pool

if TYPE_CHECKING:
    import numpy as np

    from matrix.dispatch import Entry
    from matrix.verdicts import CellResult
# (the planner, the judge and the dispatch are imported where a run needs them: `coevo matrix`
# spawns its workers first, and their boot goes on while the rest is imported)


def __getattr__(name: str):
    if name == "CellResult":  # (exported here since the first version)
        from matrix.verdicts import CellResult

        return CellResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ExecConfig", "CellResult", "MatrixResult", "Executor", "STATUSES"]

_SMALL = 1 << 62  # an int this small is its own JSON form (as plain.to_jsonable gives it)
STATUSES = ("pass", "fail", "error", "timeout", "memory", "output_limit", "syntax_error",
            "bad_test", "sandbox_error")
MAX_MEMORY_MB = 2048


@dataclass
class ExecConfig:
    """Limits and parallelism of the executor.

    ``timeout``: wall-clock seconds per cell; ``memory_mb``: address-space cap per process and
    memory limit of a cell's process tree (at most 2048); ``max_procs``: processes + threads per
    cell; ``max_output_bytes``: cap on stdout, stderr, each file written and each returned value;
    ``workers``: parallel sandbox workers; ``isolation``: ``auto`` | ``namespace`` | ``process``
    (:mod:`matrix.workers`); ``float_tolerance``: when set, numbers in expected values and stdout
    tokens compare with ``math.isclose(rel_tol=abs_tol=tol)``; ``batch``: let a pure program run
    its tests one after the other in one process (off: one fresh process per test; the same
    verdicts, slower); ``tmp_mb``: size of a cell's private ``/tmp``; ``import_paths``:
    directories (absolute) put first on the cells' ``sys.path`` and made visible, read-only,
    inside the sandbox (a user's package and its source tree: ``coevo gen-tests``); ``cgroups``,
    ``seccomp``: use them where the kernel offers them (on by default); ``allow_ctypes``: let
    programs import ``ctypes`` (off: a program's own raw memory access could forge its claims;
    turn on only for trusted code that needs it)."""

    timeout: float = 2.0
    memory_mb: int = 1024
    max_procs: int = 32
    max_output_bytes: int = 4 << 20
    workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    isolation: str = "auto"
    float_tolerance: float | None = None
    batch: bool = True
    tmp_mb: int = 64
    import_paths: tuple[str, ...] = ()
    cgroups: bool = True
    seccomp: bool = True
    allow_ctypes: bool = False

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
class MatrixResult:
    """One task's matrix. ``passed`` and ``times`` are numpy arrays built on first use, so that
    ``coevo matrix`` (lists in, JSON out) never loads numpy."""

    task_id: str
    status: list[list[str]]
    values: list[list[Any]]
    errors: list[list[str]]
    time_rows: list[list[float]]
    shape: tuple[int, int]  # codes x tests (the tests' count stands even with no code)
    isolation: str
    extra: list[list[CellResult]] = field(default_factory=list)  # codes x extra inputs
    extra_inputs: list[str] = field(default_factory=list)
    sandbox: dict = field(default_factory=dict)  # the guards in force

    @functools.cached_property
    def passed(self) -> np.ndarray:
        """bool, codes x tests."""
        import numpy as np

        return np.array([[s == "pass" for s in row] for row in self.status], dtype=bool).reshape(self.shape)

    @functools.cached_property
    def times(self) -> np.ndarray:
        """float seconds, codes x tests."""
        import numpy as np

        return np.array(self.time_rows, dtype=float).reshape(self.shape)

    def passed_count(self) -> int:
        return sum(s == "pass" for row in self.status for s in row)

    def to_json(self) -> dict:
        """The ``coevo matrix`` output line (values in :func:`matrix.plain.to_jsonable` form)."""
        from matrix.plain import to_jsonable

        return {
            "task_id": self.task_id,
            "passed": [[s == "pass" for s in row] for row in self.status],
            "status": self.status,
            "values": [[v if v is None or type(v) is bool or (type(v) is int and -_SMALL < v < _SMALL)
                        else to_jsonable(v) for v in row] for row in self.values],
            "errors": self.errors,
            "times": [[round(float(t), 6) for t in row] for row in self.time_rows],
            "isolation": self.isolation,
            "sandbox": self.sandbox,
        }

    def cell(self, code: int, test: int) -> CellResult:
        from matrix.verdicts import CellResult

        return CellResult(self.status[code][test], self.values[code][test], self.errors[code][test],
                          float(self.time_rows[code][test]))


class Executor:
    """Runs code x test matrices in the sandbox. Not thread-safe; use one per thread."""

    def __init__(self, config: ExecConfig | None = None):
        self.config = config or ExecConfig()
        self.config.validate()
        cfg = self.config
        self._limits = {
            "memory_mb": int(cfg.memory_mb), "max_procs": int(cfg.max_procs),
            "max_output_bytes": int(cfg.max_output_bytes), "tmp_mb": int(cfg.tmp_mb),
            "import_paths": [os.path.realpath(p) for p in cfg.import_paths],
            "cgroups": bool(cfg.cgroups), "seccomp": bool(cfg.seccomp), "allow_ctypes": bool(cfg.allow_ctypes),
            "batch": bool(cfg.batch),
        }
        self.stats = {"cells": 0, "seconds": 0.0}
        self._pool: Pool | None = None
        self._ready = False
        # the workers boot in the background; the first use (or ``isolation``) waits for them
        self._pool = Pool(int(cfg.workers), cfg.isolation, self._limits)

    def _wait(self) -> Pool:
        if self._pool is None:
            raise RuntimeError("the executor is closed")
        if not self._ready:
            self._pool.await_ready()
            self._ready = True
        return self._pool

    @property
    def isolation(self) -> str:
        """The isolation level in force: ``namespace`` or ``process`` (:mod:`matrix.workers`)."""
        return self._wait().mode

    @property
    def isolation_detail(self) -> str:
        return self._wait().detail

    @property
    def guards(self) -> dict:
        """What is in force: level, namespaces, cgroup version, seccomp, separate uids."""
        return dict(self._wait().guards)

    @property
    def _workers(self):  # the pool's workers (tests look at them)
        return self._pool.workers if self._pool is not None else []

    # ------------------------------------------------------------------ public API
    def run_matrix(self, task: Task, codes: list[str], tests: list[Test]) -> MatrixResult:
        return self.run_matrices([(task, codes, tests)])[0]

    def run_matrices(self, jobs, progress: bool = False) -> list[MatrixResult]:
        """Every cell of every job, all in parallel; results in job order. A job is
        ``(task, codes, tests)`` or ``(task, codes, tests, extra)`` where ``extra`` lists call
        expressions (function tasks) or stdin texts (stdio tasks), or is a function returning
        them (called in job order while the workers run earlier tasks), to run as optional columns
        (:attr:`MatrixResult.extra`): a program that timed out in its row, or raised on every
        test, is not run on the extra inputs (they come back as ``timeout``)."""
        from matrix.dispatch import Entry

        entries = []
        lazy = []
        for job in jobs:
            task, codes, tests = job[0], list(job[1]), list(job[2])
            extra = job[3] if len(job) > 3 and job[3] else []
            e = Entry(task, codes, None, [], tests)
            if callable(extra):
                lazy.append((e, extra))
            elif extra:
                e.extra = list(extra)
            entries.append(e)
        draws = _Draws([e for e, _ in lazy], [fn for _, fn in lazy]) if lazy else None
        self._run(entries, progress, idle=draws.next if draws is not None else None)
        out = []
        guards = self.guards
        for e in entries:
            n = len(e.codes)
            m = e.optional_from if e.optional_from is not None else len(e.plans)  # type: ignore[arg-type]  # planned
            results = cast("list[list[CellResult]]", e.results)  # _run filled every cell
            rows = [r[:m] for r in results]
            status = [[c.status for c in row] for row in rows]
            out.append(MatrixResult(
                task_id=e.task.task_id,
                status=status,
                values=[[c.value for c in row] for row in rows],
                errors=[[c.error for c in row] for row in rows],
                time_rows=[[c.time for c in row] for row in rows],
                shape=(n, m),
                isolation=self.isolation,
                extra=[r[m:] for r in results],
                extra_inputs=list(e.extra or []) if isinstance(e.extra, list) else [],
                sandbox=guards))
        return out

    def run_calls(self, task: Task, codes: list[str], calls: list[str]) -> list[list[CellResult]]:
        """Value of each call expression (e.g. ``"f(1, [2])"``) for each code: status ``pass``
        and the plain value when the call returned plain data."""
        from matrix.dispatch import Entry
        from matrix.plans import plan_call

        entry = Entry(task, list(codes), [plan_call(c) for c in calls], [])
        self._run([entry], False)
        return entry.results  # type: ignore[return-value]  # _run filled every cell

    def run_stdin(self, task: Task, codes: list[str], inputs: list[str]) -> list[list[CellResult]]:
        """Stdout of each program on each stdin input (status ``pass`` when it exited normally)."""
        from matrix.dispatch import Entry
        from matrix.plans import plan_stdin

        entry = Entry(task, list(codes), [plan_stdin(x) for x in inputs], [])
        self._run([entry], False)
        return entry.results  # type: ignore[return-value]  # _run filled every cell

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            if self._pool is not None:
                self._pool.kill()
        except Exception:
            pass

    # ------------------------------------------------------------------ running
    def _run(self, entries: list[Entry], progress: bool, idle=None) -> None:
        """Run every cell of the entries, with the cyclic garbage collector paused meanwhile
        (:func:`_collector_paused`)"""
        with _collector_paused():
            self._run_entries(entries, progress, idle)

    def _run_entries(self, entries: list[Entry], progress: bool, idle=None) -> None:
        """Run every cell of the entries. A program that appears more than once in an entry (the
        same text; sampled pools repeat the easy answers) runs once and its row is copied, except
        where it may read randomness or the clock (:func:`distinct_programs`); a test given twice
        runs once and its column is copied."""
        rows_merged, cols_merged = [], []
        for e in entries:
            keep, where = distinct_programs(e.codes)
            if len(keep) < len(e.codes):
                rows_merged.append((e, e.codes, where))
                e.codes = keep
            if e.tests is not None and e.plans is None:
                try:
                    keep_t, where_t = _distinct(e.tests)
                except TypeError:  # not hashable: run them as given
                    keep_t, where_t = e.tests, []
                if len(keep_t) < len(e.tests):
                    cols_merged.append((e, e.tests, where_t))
                    e.tests = keep_t
        try:
            self._run_distinct(entries, progress, idle)
        finally:
            for e, tests, where in cols_merged:
                n = max(where) + 1
                e.tests = tests
                if e.plans is not None and len(e.plans) >= n:
                    e.plans = [e.plans[k] for k in where] + e.plans[n:]
                    if e.optional_from is not None:
                        e.optional_from = len(tests)
                    e.results = [[row[k] if first else _copy(row[k]) for k, first in _firsts(where)] + row[n:]
                                 for row in e.results]
            for e, codes, where in rows_merged:
                e.codes = codes
                if e.results and len(e.results) == max(where) + 1:
                    rows = e.results
                    e.results = [rows[k] if first else [_copy(c) for c in rows[k]]
                                 for k, first in _firsts(where)]

    def _run_distinct(self, entries: list[Entry], progress: bool, idle=None) -> None:
        from matrix.dispatch import Dispatcher, units

        if not self._ready and self._pool is not None:
            # the parent's own work (parsing and planning the tests) while the workers boot
            for e in entries:
                if self._pool.started():
                    break
                e.plan_tests(self.config.float_tolerance)
        pool = self._wait()
        total = sum(e.n_cells() for e in entries)
        bar = None
        if progress and total:
            import sys

            if sys.stderr.isatty():
                try:
                    from tqdm import tqdm

                    bar = tqdm(total=total, unit="cell", desc="matrix", file=sys.stderr, dynamic_ncols=True,
                               mininterval=0.5)
                except ImportError:
                    bar = None
        def grow(n):
            bar.total += n
            bar.refresh()

        source = units(entries, len(pool.workers), self.config.float_tolerance,
                       on_skip=bar.update if bar is not None else None, on_grow=grow if bar is not None else None)
        t0 = time.monotonic()
        try:
            Dispatcher(pool, self.config, bar).run(source, entries, idle=idle)
        except BaseException:
            pool.kill()
            self._pool = None
            raise
        finally:
            if bar is not None:
                bar.close()
        self.stats["cells"] += total
        self.stats["seconds"] += time.monotonic() - t0


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a matrix runs (on again after, when it was on):
    the dispatch makes a result object per cell and nearly no cycles, and every full collection
    meanwhile walked the whole heap again (the caller's too: a trainer's). What cycles there are
    are collected when it is back on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Draws:
    """Extra inputs drawn lazily (e.g. by hypothesis), in job order, in the caller's thread: one
    draw whenever the dispatcher would otherwise wait for the workers (``next``), and any draw not
    made yet when its task is planned (``result``). Not in a thread of their own: CPython's ast
    module (3.11, 3.12) keeps its recursion depth per interpreter, so a draw beside the planning of
    tests raised ``SystemError: AST constructor recursion depth mismatch`` now and then."""

    def __init__(self, entries: list[Entry], fns: list):
        self._todo = [_Draw(fn) for fn in fns]
        for e, d in zip(entries, self._todo):
            e.extra = d
        self._at = 0

    def next(self) -> bool:
        """Make the next draw not made yet; False when none is left."""
        while self._at < len(self._todo):
            d = self._todo[self._at]
            self._at += 1
            if not d.done:
                d.result()
                return True
        return False


class _Draw:
    """One task's draw: made once, on first demand; what it raised is raised to every caller."""

    def __init__(self, fn):
        self._fn = fn
        self.done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def result(self):
        if not self.done:
            self.done = True
            try:
                self._value = self._fn()
            except Exception as exc:  # Entry.plan treats a failed draw as no extra inputs
                self._error = exc
            self._fn = None
        if self._error is not None:
            raise self._error
        return self._value


# what a program names when its runs may differ: randomness (also os.urandom), the clock, the
# process and its environment, object addresses, threads and the collector
UNREPEATABLE = re.compile(r"random|time|decimal|statistics|uuid|secrets|\bos\b|\bid\(|\bhash\(|"
                          r"thread|\bgc\b|ctypes|__import__|importlib|environ|getpid")
# a literal each alternative of UNREPEATABLE contains: `in` over these is ~10x faster than the
# search, which then runs only on the texts holding one of them (a few percent of programs)
_UNREPEATABLE_WORDS = ("random", "time", "decimal", "statistics", "uuid", "secrets", "os", "id(", "hash(",
                       "thread", "gc", "ctypes", "__import__", "importlib", "environ", "getpid")


def unrepeatable(code) -> bool:
    """The program's text may reach something that differs from run to run (:data:`UNREPEATABLE`)."""
    if not isinstance(code, str):
        return True
    return any(w in code for w in _UNREPEATABLE_WORDS) and UNREPEATABLE.search(code) is not None


def distinct_programs(codes: list[str]) -> tuple[list[str], list[int]]:
    """``(programs to run, the index into them of each code)``: a text seen before maps to its
    first copy. Verdicts depend only on the (code, test) pair (the module docstring), so a copy's
    row is the first copy's; a program whose text may reach something that differs from run to
    run (:data:`UNREPEATABLE`: randomness, the clock, the process, object addresses) keeps a run
    of its own, as independent samples of it would get."""
    return _distinct(codes, alone=unrepeatable)


def _distinct(items: list, alone=None) -> tuple[list, list[int]]:
    """``(distinct items, the index into them of each item)``, first copies kept in order; an item
    for which ``alone`` is true is never merged with another."""
    keep: list = []
    seen: dict = {}
    where = []
    for x in items:
        single = alone is not None and alone(x)
        k = None if single else seen.get(x)
        if k is None:
            k = len(keep)
            keep.append(x)
            if not single:
                seen[x] = k
        where.append(k)
    return keep, where


def _firsts(where: list[int]):
    """``(index, whether this is its first use)`` for each entry of ``where``."""
    used: set[int] = set()
    for k in where:
        yield k, k not in used
        used.add(k)


def _copy(c):
    from matrix.verdicts import CellResult

    return None if c is None else CellResult(c.status, c.value, c.error, c.time)
