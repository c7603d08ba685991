"""Jobs for :mod:`coevo.testgen.harness`, run through the sandbox (:class:`matrix.engine.Executor`).

Each job is one cell: its code is ``__coevo_job__ = {...}`` (the module variant and the probe ids),
its setup the harness plus the probe table, its call ``_cv_main()``; the cell's value is the job's
result as plain data. Probe batches whose cell dies (a crash, ``os._exit``, a hang the in-cell
alarm could not stop, memory) are split in halves and run again, down to single probes, so one bad
input costs only itself: a single probe that still kills its cell gets the outcome ``{"crash":
status}``.
"""

from __future__ import annotations

import functools
import marshal
import math
import sys
from dataclasses import dataclass

from coevo.testgen.harness import SOURCE as HARNESS
from coevo.testgen.inputs import Probe
from coevo.testgen.target import ModuleInfo

__all__ = ["Variant", "SandboxRunner"]


@dataclass(frozen=True)
class Variant:
    """A version of the module: the original text, a mutant, or the original plus a patch (an
    independent implementation of one function, executed into the module's namespace)."""

    key: str  # "original", "m17", "impl3"
    source: str
    patch: str | None = None


def _setup(harness: str, extra: str = "") -> str:
    """The cells' setup: the harness and ``extra`` (the probe table) as constants that the cell
    runs in its own namespace. The sandbox parses and checks the setup it is handed in every cell:
    the harness's 2,000 lines and a table of hundreds of probes took 0.6-1 s a cell at load 8 (most
    of what a mutant cost), constants take nothing. Each part goes as its code object, compiled
    here once (the harness once per process), and as its text, which a cell whose Python is not
    this one compiles instead (a marshalled code object is this version's). The ``import`` keeps
    the setup impure to the sandbox, as the harness is: every cell runs in a process of its own."""
    parts = [_compiled(harness)] + ([_compile_part(extra)] if extra.strip() else [])
    return ("import sys as _cv_sys\nimport marshal as _cv_marshal\n"
            + "".join(f"exec(_cv_marshal.loads({code!r}) if _cv_sys.version == {sys.version!r} else "
                      f"compile({text!r}, '<setup>', 'exec', dont_inherit=True), globals())\n"
                      for code, text in parts))


def _compile_part(text: str) -> tuple[bytes, str]:
    return marshal.dumps(compile(text, "<setup>", "exec", dont_inherit=True)), text


@functools.lru_cache(maxsize=4)
def _compiled(text: str) -> tuple[bytes, str]:
    return _compile_part(text)


class SandboxRunner:
    def __init__(self, module: ModuleInfo, executor, *, long_executor=None):
        """``long_executor``: an executor with a long cell timeout for pytest runs that outlast the
        usual cell (or a function returning one, called only when needed)."""
        self.module = module
        self.executor = executor
        self._long = long_executor
        self.cells = 0
        # the module's import: its own allowance in every cell (apart from each call's limit) and
        # what it took when inspected (each variant pays it once per cell)
        self.import_limit: float | None = None
        self.import_seconds = 0.0
        # modules the sandbox lacks that the module's own import gets a stand-in for (harness
        # _cv_standin): set when the plain import failed on one of them
        self.standins: tuple[str, ...] = ()

    @property
    def long_executor(self):
        if callable(self._long) and not hasattr(self._long, "run_calls"):
            self._long = self._long()
        return self._long or self.executor

    # ------------------------------------------------------------------ plumbing
    def _task(self, setup_extra: str = ""):
        from matrix.tasks import Task

        return Task(task_id=self.module.name, prompt="", kind="function", entry_point=None,
                    setup=_setup(HARNESS, (f"_CV_STANDINS = {self.standins!r}\n" if self.standins else "")
                                 + setup_extra))

    def _job_code(self, job: dict) -> str:
        return f"__coevo_job__ = {job!r}\n"

    def _base(self, variant: Variant) -> dict:
        return {"name": self.module.name, "file": str(self.module.sandbox_path), "source": variant.source,
                "patch": variant.patch}

    @staticmethod
    def _stop(flag, v: Variant) -> bool:
        return bool(flag.get(v.key, False)) if isinstance(flag, dict) else bool(flag)

    def run_jobs(self, jobs: list[dict], setup_extra: str = "", long: bool = False):
        """The CellResult of each job (in order)."""
        if not jobs:
            return []
        ex = self.long_executor if long else self.executor
        codes = [self._job_code(j) for j in jobs]
        res = ex.run_calls(self._task(setup_extra), codes, ["_cv_main()"])
        self.cells += len(jobs)
        return [row[0] for row in res]

    # ------------------------------------------------------------------ jobs
    def inspect(self, limit: float = 5.0, doctest_runs: int = 0) -> tuple[dict | None, str, list]:
        """The inspection of the original module (or None and why, when the cell failed), and
        ``doctest_runs`` runs of its doctests (in cells of their own, alongside)."""
        base = self._base(Variant("original", self.module.source))
        jobs = [dict(base, op="inspect", limit=limit)] + [dict(base, op="doctests", limit=2.0)] * doctest_runs
        cells = self.run_jobs(jobs)
        docs = [c.value if c.status == "pass" and isinstance(c.value, dict) else None for c in cells[1:]]
        cell = cells[0]
        if cell.status != "pass" or not isinstance(cell.value, dict):
            return None, f"{cell.status}: {cell.error}".strip(": "), docs
        return cell.value, "", docs

    def pytest(self, files: dict[str, str], runs: list[tuple[int, bool]], paths: list[str],
               timeout: float = 120.0, project: dict | None = None) -> dict | None:
        """Run the files with pytest once per ``(PYTHONHASHSEED, reverse order)`` in ``runs``, each
        in a fresh interpreter process inside one cell; where the sandbox refuses new processes,
        each run gets a cell of its own instead (a fresh process, the sandbox's hash seed, the
        test functions called directly). ``project``: run them inside a mirror of the user's
        project, under its pytest configuration and conftests
        (:meth:`coevo.testgen.project.ProjectConfig.job`)."""
        job = {"op": "pytest", "files": files, "runs": [list(r) for r in runs], "paths": paths,
               "timeout": timeout, "name": self.module.name, "file": str(self.module.sandbox_path), "source": "",
               "project": project, "standins": list(self.standins)}
        cell = self.run_jobs([job])[0]  # the usual cell first: a small suite runs well within it
        if cell.status == "timeout" and self._long is not None:
            cell = self.run_jobs([job], long=True)[0]
        if cell.status != "pass" or not isinstance(cell.value, dict):
            return {"error": f"{cell.status}: {cell.error}"}
        if "spawn_error" not in cell.value:
            return dict(cell.value, mode="subprocess")
        jobs = [dict(job, runs=[list(r)], inprocess=True) for r in runs]
        cells = self.run_jobs(jobs, long=True)
        out = {"runs": [], "tail": "", "mode": "cells"}
        for c in cells:
            if c.status != "pass" or not isinstance(c.value, dict):
                return {"error": f"{c.status}: {c.error}"}
            out["runs"] += c.value.get("runs", [])
        return out

    def probes(self, variant: Variant, table: dict[int, Probe], batches: list[list[int]], *, cov: bool = False,
               limit: float = 0.5, stop_on_timeout: bool = False) -> tuple[dict[int, dict], dict[int, list]]:
        """Run ``batches`` of probe ids on ``variant``: ``({pid: outcome}, {pid: arcs})``."""
        by_key = self.probes_many([(variant, b) for b in batches], table, cov=cov, limit=limit,
                                  stop_on_timeout=stop_on_timeout, pack=False)
        return by_key.get(variant.key, ({}, {}))

    def _pack(self, units: list[tuple[Variant, list[int]]], limit_of, stop_of) -> list[list[tuple[Variant, list[int]]]]:
        """Units (variant, ids) grouped into cells: at least two cells per worker when there is
        enough work, and per cell a worst case (every stopping variant hanging once at its limit)
        well inside the cell's timeout."""
        if not units:
            return []
        workers = max(1, int(getattr(getattr(self.executor, "config", None), "workers", 2) or 2))
        timeout = float(getattr(getattr(self.executor, "config", None), "timeout", 20.0) or 20.0)
        total = sum(len(ids) for _, ids in units)
        n_cells = max(1, min(len(units), max(2 * workers, math.ceil(total / 800))))
        per_cell = total / n_cells
        # a long unit of a variant that does not stop at a hang (the original's second run on
        # every candidate, the stability check) in parts, one cell each: whole, its one cell ran
        # 366 calls of shlex's while the mutants' cells were done (11 s at load 11)
        parts: list[tuple[Variant, list[int]]] = []
        for v, ids in units:
            k = math.ceil(len(ids) / max(per_cell, 1.0)) if not stop_of(v) and len(ids) > 1.2 * per_cell else 1
            parts += [(v, ids[i::k]) for i in range(k)] if k > 1 else [(v, ids)]
        units = parts
        cells: list[list] = [[]]
        size, worst = 0, 0.0
        for v, ids in units:
            w = (limit_of(v) if stop_of(v) else 0.0) + self.import_seconds
            if cells[-1] and (size + len(ids) > per_cell * 1.2 or worst + w > timeout / 3):
                cells.append([])
                size, worst = 0, 0.0
            cells[-1].append((v, ids))
            size += len(ids)
            worst += w
        return cells

    def probes_many(self, work: list[tuple[Variant, list[int]]], table: dict[int, Probe], *, cov: bool = False,
                    limit: float | dict = 0.5, stop_on_timeout: bool | dict = False, pack: bool = True):
        """(variant, probe ids) units, several per cell, all cells in one parallel run; returns
        ``{variant key: ({pid: outcome}, {pid: arcs})}``."""
        def limit_of(v):
            return float(limit.get(v.key, 0.5)) if isinstance(limit, dict) else float(limit)

        def stop_of(v):
            return self._stop(stop_on_timeout, v)

        used = sorted({pid for _, ids in work for pid in ids})
        setup = "_CV_PROBES = {" + ", ".join(f"{pid}: {table[pid].wire()!r}" for pid in used) + "}\n"
        results: dict[str, tuple[dict, dict]] = {}
        for v, _ in work:
            results.setdefault(v.key, ({}, {}))
        units = [(v, list(ids)) for v, ids in work if ids]
        pending = self._pack(units, limit_of, stop_of) if pack else [[u] for u in units]
        while pending:
            jobs = []
            for cell in pending:
                jobs.append({"op": "probes", "name": self.module.name, "file": str(self.module.sandbox_path),
                             "cov": cov,
                             "variants": [{"key": v.key, "source": v.source, "patch": v.patch, "ids": ids,
                                           "limit": limit_of(v), "stop": stop_of(v),
                                           "import_limit": self.import_limit} for v, ids in cell]})
            cells = self.run_jobs(jobs, setup)
            again = []
            for cell_units, cell in zip(pending, cells):
                if cell.status == "pass" and isinstance(cell.value, dict):
                    for key, res in (cell.value.get("results") or {}).items():
                        out = results[key][0]
                        for pid, o in res.items():
                            out[int(pid)] = o
                    for key, res in (cell.value.get("arcs") or {}).items():
                        arcs = results[key][1]
                        for pid, a in res.items():
                            arcs[int(pid)] = [tuple(x) for x in a]
                    continue
                if len(cell_units) > 1:  # one variant at a time, to find the one that fails
                    again += [[u] for u in cell_units]
                    continue
                v, ids = cell_units[0]
                if stop_of(v) and cell.status == "timeout":
                    continue  # which probe hung is unknown: none is credited with the kill
                if len(ids) > 1:
                    half = len(ids) // 2
                    again += [[(v, ids[:half])], [(v, ids[half:])]]
                else:
                    results[v.key][0][ids[0]] = {"crash": cell.status, "error": (cell.error or "")[:300]}
            pending = again
        return results
