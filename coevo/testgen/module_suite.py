"""One module end to end, within its time budget: inspect -> probe with coverage -> mutants ->
choose -> write -> verify four times in fresh processes -> report.

Phases and their share of ``--time-budget`` (each stops early when it has nothing left to gain;
see ``EXPLORE``, ``MUTANTS``, ``SHORTEN``):

1. inspect (sandbox): the module loads, coverage.py lists its statements and branch arcs; its
   doctests run twice (suspects);
2. explore (until 40%): pools, docstring calls, hypothesis draws, then mutations of the probes that
   reached new lines or branches, in rounds, measured by coverage.py inside the sandbox;
3. mutants (until 72%): AST mutants of the module; every candidate test runs on the mutants whose
   changed line it executed (and once more on the original, in fresh processes: an outcome that
   differs is dropped as nondeterministic);
4. choose: greedy minimal subset (kills, branches, lines, one test per behaviour), then call
   sequences shortened where a call can go without losing any of that (until 82%);
5. write and verify: the pytest file runs four times in the sandbox in fresh interpreter processes
   (``python -m pytest``; four ``PYTHONHASHSEED`` values, both test orders, every other run as
   another user on another machine 400 days later: ``harness``); a test that fails in any run is
   dropped and the file verified again.
"""

from __future__ import annotations

import ast
import contextlib
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest

from coevo.testgen import observe
from coevo.testgen.choose import Candidate, goals, greedy_suite
from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import InputGenerator, Probe, Step
from coevo.testgen.mutants import module_mutants
from coevo.testgen.suspects import doctest_suspects, inline_examples, inline_suspects, same_call
from coevo.testgen.target import ModuleInfo
from coevo.testgen.writer import TestCase, import_bindings, render_file

__all__ = ["Options", "ModuleResult", "ModuleError", "generate_suite"]


# shares of the time budget at which the phases end (verification takes what is left)
EXPLORE, MUTANTS, SHORTEN = 0.4, 0.72, 0.82
DATA_UNIT = "<module data>"  # the unit of the probes that read the module's public data


class ModuleError(Exception):
    """The module cannot be tested (its import fails or hangs, nothing testable): one line."""


@dataclass
class Options:
    time_budget: float = 60.0
    seed: int = 0
    probe_limit: float = 0.5  # seconds per probe on the original code
    max_mutants: int = 1000
    max_tests: int | None = None
    verify: bool = True
    batch: int = 32  # probes per sandbox cell
    extra: Callable | None = None  # model side: (module, inputs, runner) -> coevo.testgen.model.ModelEvidence
    # the user's project as pytest there sees the suite (coevo.testgen.project.ProjectConfig.job)
    project: dict | None = None


@dataclass
class ModuleResult:
    module: ModuleInfo
    text: str = ""
    report: dict = field(default_factory=dict)
    cases: list = field(default_factory=list)
    builder: object = None  # the module's _SuiteBuilder (verify_together drops tests through it)


class _Clock:
    def __init__(self, budget: float, progress: Callable[[float, str], None] | None):
        self.t0 = time.monotonic()
        self.budget = max(1.0, float(budget))
        self.progress = progress

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def until(self, share: float) -> float:
        return self.t0 + share * self.budget

    def left(self, share: float = 1.0) -> float:
        return self.until(share) - time.monotonic()

    def say(self, fraction: float, text: str) -> None:
        if self.progress is not None:
            self.progress(min(1.0, max(0.0, fraction)), text)


def _estimated_score(killed: int, ran: int, unreached: int, not_run: int) -> float | None:
    """The share of the mutants the suite kills, when the budget ran only some of those a call
    reaches: the mutants on lines no call reaches survive any suite (counted as they are), and
    the reached ones left unrun are estimated at the kill rate of the reached ones that ran (a
    spread sample: mutants are run in a seeded round-robin over lines, :func:`module_mutants`).
    Counting only what ran weighed every unreached mutant against a budget-cut few of the reached
    (shlex, load 10: 14 killed of the 19 reached that ran, 98 unreached, reported 14 / 117 = 0.12
    while 332 reached mutants were never run). Where everything ran: killed / (ran + unreached)."""
    if not ran:
        return round(killed / unreached, 4) if unreached else None
    reached = ran + not_run
    return round(killed / ran * reached / (reached + unreached), 4)


def _arcs_lines(arcs) -> set[int]:
    out = set()
    for a, b in arcs:
        if a > 0:
            out.add(a)
        if b > 0:
            out.add(b)
    return out


def _procedures(module: ModuleInfo) -> set[str]:
    """Units that never ``return`` a value (their ``None`` is not worth an assert)."""
    out = set()
    for u in module.units:
        if u.node is None or u.is_generator or u.kind in ("init", "property"):
            continue
        returns = [n for n in ast.walk(u.node) if isinstance(n, ast.Return) and n.value is not None
                   and not (isinstance(n.value, ast.Constant) and n.value.value is None)]
        if not returns:
            out.add(u.qualname)
    return out


def _drop_procedure_nones(probe: Probe, cs: list, procedures: set[str]) -> list:
    drop = {("ret", i) for i, st in enumerate(probe.steps) if st.unit in procedures}
    # an attribute set (setattr(obj, 'a', 5), written obj.a = 5) is a statement: nothing of it is
    # asserted there (the object's attributes are, after it)
    assigns = {i for i, st in enumerate(probe.steps) if st.kind == "call" and st.callee == "setattr"}
    return [c for c in cs if not (c.root in drop and c.op == "is" and c.value is None and not c.path)
            and not (c.root[0] in ("ret", "arg") and c.root[1] in assigns)]


def _behaviour(probe: Probe, outcome: dict) -> tuple:
    """(unit, kind of outcome): an exception type, None, True, False, an empty value, or a value."""
    last = outcome["steps"][-1]
    if last[0] == "raise":
        kind = "raise:" + last[1][0][0][1]
    else:
        d = last[1]
        kind = "ok"
        if d[0] == "v":
            v = d[1]
            if v is None or isinstance(v, bool):
                kind = f"ok:{v}"
            elif isinstance(v, (str, bytes, list, tuple, dict, set, frozenset)) and not v:
                kind = "ok:empty"
    return (probe.steps[-1].unit or probe.unit, kind)


def _explicit_raise(module: ModuleInfo, outcome: dict) -> bool | None:
    """For an outcome ending in an exception: raised by a ``raise`` of the module (True) or
    somewhere else (False); None when it did not raise."""
    last = outcome["steps"][-1]
    if last[0] != "raise":
        return None
    line = last[1][2] if len(last[1]) > 2 else 0
    if not line:
        return False
    lines = module.source.splitlines()
    return 0 < line <= len(lines) and lines[line - 1].strip().startswith("raise")


def generate_suite(module: ModuleInfo, executor, *, options: Options | None = None, long_executor=None,
                   progress: Callable[[float, str], None] | None = None, header_extra: str = "") -> ModuleResult:
    """The suite for one module (raises :class:`ModuleError` when the module cannot be tested)."""
    with _int_digits_for(module):
        try:
            return _SuiteBuilder(module, executor, options or Options(), long_executor, progress, header_extra).run()
        except ValueError as exc:
            if "integer string conversion" not in str(exc):
                raise
            raise ModuleError(f"holds an int too long to write as a test (past {MAX_INT_DIGITS:,} digits)") from None


MAX_INT_DIGITS = 200_000  # str() of an int is quadratic: ~2 s at this size


@contextlib.contextmanager
def _int_digits_for(module: ModuleInfo):
    """Python's limit on decimal digits of an int, raised for one module's run to what its source
    can hold (a literal, in the code or a docstring example, is at most the source's length; hex
    digits write ~1.2 decimal ones), up to :data:`MAX_INT_DIGITS`. Mutants, doctest probes and the
    written tests print its ints in decimal: a 4,000-digit literal ended the run with a traceback."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:
        yield
        return
    before = get()
    need = min(MAX_INT_DIGITS, int(1.25 * len(module.source)) + 100)
    if before and need > before:
        sys.set_int_max_str_digits(need)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


class _SuiteBuilder:
    """The state of one module's run, one method per phase."""

    def __init__(self, module: ModuleInfo, executor, opts: Options, long_executor, progress, header_extra: str):
        self.module = module
        self.executor = executor
        self.opts = opts
        self.header_extra = header_extra
        self.clock = _Clock(opts.time_budget, progress)
        self.runner = SandboxRunner(module, executor, long_executor=long_executor)
        self.file = str(module.path)
        self.limit = opts.probe_limit
        # where the code is on this machine: an observed value holding it holds a path of this
        # checkout (a module's own directory, a file beside it), not one the suite will see elsewhere
        self.local_paths = sorted({str(p) for p in (module.root, module.sandbox_root, module.path.parent,
                                                    module.sandbox_path.parent)}, key=len, reverse=True)
        tree = module.tree
        self.defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        self.defined |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        self.phases: dict[str, float] = {}
        # probes and what running them on the original showed
        self.table: dict[int, Probe] = {}
        self.keys: dict[tuple, int] = {}
        self.outcomes: dict[int, dict] = {}
        self.arcs_of: dict[int, set] = {}
        self.covered_arcs: set = set()
        self.covered_lines: set = set()
        self.hung: dict[str, int] = {}  # unit -> probes that hit the time limit
        self.cand_checks: dict[int, list] = {}  # probes a test can be written from -> what it asserts
        self.suspects: list[dict] = []
        self.suspect_calls: list[str] = []
        # mutants
        self.mutants: list = []
        self.by_line: dict[int, list[int]] = {}  # line -> candidates that executed it
        self.tried: dict[int, set[int]] = {}  # mutant -> probes already run on it
        self.killed_by: dict[int, set[int]] = {}  # mutant -> probes that kill it
        self.file_kills: dict[int, set[int]] = {}  # probe -> mutants only its file checks kill
        self.second: dict[int, dict] = {}  # the second run of candidates on the original
        self.t_orig: dict[int, float] = {}
        self.kills: dict[int, set[int]] = {}
        self.extra = None
        self.warnings: list[str] = []
        self.cuts: list[str] = []  # work left out to end within --time-budget (reported)
        self.verify_seconds = 0.0  # the longest verification round

    def cut(self, what: str) -> None:
        if what not in self.cuts:
            self.cuts.append(what)

    def phase_done(self, name: str) -> None:
        self.phases[name] = round(self.clock.elapsed() - sum(self.phases.values()), 2)

    def run(self) -> ModuleResult:
        self.inspect()
        self.phase_done("inspect")
        self.explore()
        self.candidates()
        self.phase_done("explore")
        done = self.kill_mutants()
        self.phase_done("mutants")
        cases, text, note = self.choose_and_verify()
        self.phase_done("choose_and_verify")
        self.recheck_survivors(cases, done)
        report = self.report(cases, done, note)
        self.evaluated, self.note = done, note
        self.clock.say(1.0, "done")
        return ModuleResult(module=self.module, text=text, report=report, cases=cases, builder=self)

    def recheck_survivors(self, cases: list[TestCase], evaluated: set[int]) -> None:
        """The mutants the written suite is not known to kill, run on its tests that reach them
        and were never tried on them (while the budget lasts): a mutant ran on a spread few of the
        calls reaching its line (a default value's, `discount_percent: float = 0.0` -> `1.0`, on 16
        over the module), so the report listed survivors the suite kills."""
        chosen = [self.keys[tc.probe.steps] for tc in cases if tc.probe.steps in self.keys]
        chosen = [p for p in chosen if p in self.cand_checks]
        if not chosen or self.clock.left(1.0) < 2.0:
            return
        killed = set().union(*(self.kills.get(p, set()) for p in chosen))
        lines_of = {p: _arcs_lines(self.arcs_of.get(p, ())) for p in chosen}
        assign: dict[int, list[int]] = {}
        for m in self.mutants:
            if m.index not in evaluated or m.index in killed:
                continue
            anywhere = m.reach_line not in self.in_function or not self.coverage_ok
            ids = [p for p in chosen if p not in self.tried[m.index] and (anywhere or m.reach_line in lines_of[p])]
            if ids:
                assign[m.index] = ids
        if not assign:
            return
        self.run_mutants(assign, [], 1.0)
        chosen_set = set(chosen)
        for mi, pids in self.killed_by.items():
            for p in pids & chosen_set:
                self.kills.setdefault(p, set()).add(mi)

    def without(self, names: set[str], why: str) -> tuple[list[TestCase], str, dict]:
        """The suite less the tests named ``names`` (written and reported again)."""
        cases = [tc for tc in self.cases_kept if tc.name not in names]
        units = {u.qualname if u.kind != "init" else u.owner: u for u in self.module.units}
        text = render_file(self.module.name, self.all_names, cases, units, _header(self.module, self.header_extra),
                           self.defined, import_bindings(self.module.tree)) if cases else ""
        self.cases_kept = cases
        self.note += f"; {why}"
        return cases, text, self.report(cases, self.evaluated, self.note)

    def _leave_out_standin_users(self, guarded: set[str] | None = None) -> None:
        """The module was imported with stand-ins for modules the sandbox lacks (or imports them
        where a failed import takes its fallback, ``guarded``): the functions, classes and methods
        that use them get no tests (said in the report)."""
        from coevo.testgen.target import standin_nodes

        module = self.module
        names = set(self.runner.standins) | (guarded or set())
        bad, tainted = standin_nodes(module.tree, names)
        if self.info is not None:  # the module's data computed with them is not asserted either
            self.info["data"] = [k for k in self.info.get("data") or [] if k not in tainted]
        out = [f.qualname for f in module.functions if id(f.node) in bad]
        module.functions = [f for f in module.functions if id(f.node) not in bad]
        kept = []
        for c in module.classes:
            if id(c.node) in bad or id(c.init.node) in bad:
                out.append(c.name)
                continue
            out += [m.qualname for m in c.methods if id(m.node) in bad]
            c.methods = [m for m in c.methods if id(m.node) not in bad]
            kept.append(c)
        module.classes = kept
        which = ", ".join(sorted(names))
        if not module.units:
            raise ModuleError(f"every function and class of the module uses {which}, which the sandbox that "
                              f"runs your code does not have (it gives raw memory access): nothing to test")
        if out:
            self.warnings.append(f"no tests for {', '.join(out[:12])}{' ...' if len(out) > 12 else ''}: they use "
                                 f"{which}, which the sandbox does not have (" + ("the module was imported with a "
                                 "stand-in for it" if self.runner.standins else "its import fails there") +
                                 "; a test drawn there would be wrong when run for real)")

    # ------------------------------------------------------------------ 1. inspect
    def inspect(self) -> None:
        module, opts = self.module, self.opts
        self.clock.say(0.01, "loading the module in the sandbox")
        has_doctests = ">>>" in module.source
        allowance = max(2.0, min(15.0, opts.time_budget / 4))
        info, why, docs = self.runner.inspect(limit=allowance, doctest_runs=2 if has_doctests else 0)
        for _ in range(4):  # a module the sandbox lacks (ctypes), imported by the module itself
            lacking = _lacking_module(info, module)
            if not lacking or lacking in self.runner.standins or not _imports_itself(module, lacking):
                break
            self.runner.standins += (lacking,)
            info, why, docs = self.runner.inspect(limit=allowance, doctest_runs=2 if has_doctests else 0)
        hangs = (f"importing the module did not finish in time ({allowance:g} s; it hangs or takes too long: "
                 f"the import may take a quarter of --time-budget, at most 15 s)")
        if info is None:
            if why.startswith("timeout"):
                raise ModuleError(hangs)
            raise ModuleError(f"the sandbox could not load the module ({why})")
        if info.get("load"):
            types, msg, line = info["load"]
            name = types[0][1] if types else "Exception"
            where = f" (line {line})" if line else ""
            if name == "TimeoutError" and "did not finish" in msg:
                raise ModuleError(hangs)
            if name == "SystemExit":  # a script whose top level parses the command line or exits
                code = f": {msg}" if msg and msg != "None" else ""
                raise ModuleError(f"importing the module exits{where}: SystemExit{code}; it runs as a script "
                                  f"when imported: put that code under if __name__ == '__main__': (or in a "
                                  f"main() function) so that a test can import its functions")
            lacking = _lacking_module(info, module)
            if lacking:
                raise ModuleError(_lacking_message(lacking, where, module))
            raise ModuleError(f"importing the module fails{where}: {name}: {msg}".rstrip(": "))
        # every cell imports the module once, under its own allowance (a few times what it took
        # here, under coverage), apart from each call's time limit
        took = float(info.get("load_seconds") or 0.0)
        self.runner.import_seconds = took
        self.runner.import_limit = min(allowance, max(2.0, 3 * took + 1.0))
        self.info = info
        self.warnings += _import_warnings(info)
        # a module the sandbox refuses that the module imports where its import does not fail (inside
        # a function, under try/except ImportError): what uses it took the module's fallback here,
        # not what it does for real, so it gets no tests either
        from matrix.sandbox.zygote import FORBIDDEN_MODULES

        guarded = {m for m in FORBIDDEN_MODULES if m not in self.runner.standins and _imports_itself(module, m)}
        if self.runner.standins or guarded:
            self._leave_out_standin_users(guarded)
        # (with the public data it imports, "from math import tau as TWOPI": its test names it)
        self.all_names = self.defined | set(info.get("callables", [])) | set(info.get("data", []))
        self.names = observe.Names(module.name, self.all_names)
        self.target_lines = module.target_lines()
        self.statements = set(info.get("statements") or [])
        self.branches = {tuple(b) for b in info.get("branches") or []}
        if self.target_lines is not None:
            self.statements &= self.target_lines
            self.branches = {b for b in self.branches if b[0] in self.target_lines}
        self.coverage_ok = "coverage_error" not in info and bool(self.statements)
        self.gen = InputGenerator(module, seed=opts.seed, enums=info.get("enums"))
        if len(docs) == 2:
            self.suspects = doctest_suspects(docs[0], docs[1], self.file)

    # ------------------------------------------------------------------ probes on the original
    def add(self, probes: list[Probe]) -> list[int]:
        ids = []
        for p in probes:
            if p.steps in self.keys:
                continue
            pid = len(self.table)
            self.table[pid] = p
            self.keys[p.steps] = pid
            ids.append(pid)
        return ids

    def run_batch(self, ids: list[int], share: float | None = None) -> list[int]:
        """Run probes on the original with coverage, in slices (with ``share``, later slices only
        while that share of the budget lasts; probes of a unit that keeps hanging are left out);
        returns those that reached something new."""
        new = []
        pos = 0
        per_call = getattr(self, "_per_call", None)  # seconds a call took so far (earlier batches too)
        while pos < len(ids):
            size = 120
            if share is not None:
                left = self.clock.left(share)
                if pos and left < 0.5:
                    break
                if per_call:  # what fits in the share left (a slice runs to its end once started;
                    # the first one of a batch runs 8 calls at least)
                    size = max(8, min(120, int(left / per_call)))
            part = [pid for pid in ids[pos:pos + size] if self.hung.get(self.table[pid].unit, 0) < 3]
            pos += size
            if part:
                t0 = time.monotonic()
                new += self._run_slice(part)
                took = (time.monotonic() - t0) / len(part)
                per_call = took if per_call is None else max(took, 0.5 * (per_call + took))
                self._per_call = per_call
        return new

    def _run_slice(self, ids: list[int]) -> list[int]:
        n_cells = max(1, math.ceil(len(ids) / self.opts.batch))
        batches = [ids[k::n_cells] for k in range(n_cells)]
        res, arcs = self.runner.probes(Variant("original", self.module.source), self.table, batches,
                                       cov=self.coverage_ok, limit=self.limit)
        new = []
        for pid in ids:
            raw = res.get(pid)
            read = raw.pop("darcs", None) if isinstance(raw, dict) else None
            o = _machine_paths_left_out(raw, self.local_paths)
            self.outcomes[pid] = o
            if isinstance(o, dict) and (o.get("crash") or any(st[0] == "timeout" for st in o.get("steps", []))):
                unit = self.table[pid].unit
                self.hung[unit] = self.hung.get(unit, 0) + 1
            a = set(arcs.get(pid, []))
            if read and observe.usable(o) and _asserts_a_value(observe.checks(o, self.names)):
                # what the harness ran reading the values (a generator's items, properties) is
                # credited only where the test asserts what was read: it runs it again then
                a |= {tuple(x) for x in read}
            self.arcs_of[pid] = a
            if not observe.usable(o):
                continue
            if a - self.covered_arcs or _arcs_lines(a) - self.covered_lines:
                new.append(pid)
                self.covered_arcs.update(a)
                self.covered_lines.update(_arcs_lines(a))
        return new

    # ------------------------------------------------------------------ 2. explore
    def seeds(self) -> list[Probe]:
        """The first candidate calls: docstring examples, the model's, pools, class sequences,
        hypothesis draws, the module's public data; units in turn."""
        module, gen = self.module, self.gen
        self.inline = inline_examples(module.units)
        seeds: list[Probe] = gen.docstring_probes()
        for qual, call, _, _ in self.inline:
            unit = gen.units.get(qual)
            try:
                node = ast.parse(call, mode="eval").body
                seeds.append(Probe(qual, (Step("call", unit.name, tuple(ast.unparse(a) for a in node.args),
                                               tuple((k.arg, ast.unparse(k.value)) for k in node.keywords),
                                               unit=qual),), "docstring"))
            except (SyntaxError, AttributeError):
                pass
        self.extra = self.opts.extra(module, gen, self.runner) if self.opts.extra is not None else None
        if self.extra is not None:
            seeds += self.extra.probes
        for u in module.units:
            seeds += gen.initial(u)
        seeds += gen.round_trips()
        for c in module.classes:
            seeds += gen.sequences(c.name)
            seeds += gen.protocol_probes(c.name)
        seeds += gen.hypothesis([u for u in module.units if u.kind != "property"], n=6)
        # the module's public data as built by its import (tables, constants): a test each, kept
        # when it catches a change the calls do not
        seeds += [Probe(DATA_UNIT, (Step("attr", name),), "constant") for name in self.info.get("data", [])
                  if name.isidentifier()]
        by_unit: dict[str, list[Probe]] = {}
        for p in seeds:
            by_unit.setdefault(p.unit, []).append(p)
        return [p for group in zip_longest(*by_unit.values()) for p in group if p is not None]

    def explore(self) -> None:
        """Rounds of new calls (mutations of those that reached something new, fresh random and
        hypothesis calls aimed at the units holding what is not covered yet) until everything is
        covered, nothing new turns up, or the explore share of the budget is spent."""
        module, gen, clock, table = self.module, self.gen, self.clock, self.table
        first_ids = self.add(self.seeds())
        clock.say(0.05, f"exploring: {len(first_ids)} candidate calls")
        corpus = self.run_batch(first_ids, EXPLORE)
        seen_kinds = {_behaviour(table[p], self.outcomes[p]) for p in first_ids
                      if observe.usable(self.outcomes.get(p))}
        unit_of_line: dict[int, list] = {}
        for u in module.units:
            if u.node is not None:
                for ln in u.lines:
                    unit_of_line.setdefault(ln, []).append(u)
        stale_rounds = rnd = 0
        while clock.left(EXPLORE) > 0.5:
            missing_b = {b for b in self.branches if b not in self.covered_arcs}
            missing_l = self.statements - self.covered_lines
            all_covered = self.coverage_ok and not missing_b and not missing_l
            if all_covered or stale_rounds >= 6:
                break  # the mutant phase looks further where a mutant survives
            rnd += 1
            holes = missing_l | {b[0] for b in missing_b}
            targets = list({id(u): u for ln in holes for u in unit_of_line.get(ln, [])}.values())
            target_names = {u.qualname for u in targets} | {u.owner for u in targets if u.owner}
            usable_ids = [p for p in table if observe.usable(self.outcomes.get(p))]
            pool = corpus + [p for p in usable_ids if table[p].unit in target_names or
                             any(st.unit in target_names for st in table[p].steps)]
            pool = pool or usable_ids
            if not pool:
                break
            n_new = min(160, max(40, 8 * len(pool)))
            fresh: list[Probe] = []
            for _ in range(n_new * 2):
                if len(fresh) >= n_new:
                    break
                m = gen.mutate(table[gen.rng.choice(pool[-60:] if gen.rng.random() < 0.6 else pool)])
                if m is not None and m.steps not in self.keys:
                    fresh.append(m)
            for u in module.units:  # fresh random calls: many for the targets, a few for the rest
                if u.kind == "property":
                    continue
                if u in targets:
                    fresh += [gen.probe(u, gen._random_choice(u), "random") for _ in range(6)]
                elif gen.rng.random() < 0.5:
                    fresh.append(gen.probe(u, gen._random_choice(u), "random"))
            fresh += gen.hypothesis([u for u in targets if u.kind != "property"], n=6, salt=rnd)
            for c in module.classes:
                if c.name in target_names or any(m.qualname in target_names for m in c.methods):
                    fresh += gen.sequences(c.name, n=8)
            ids = self.add([p for p in fresh if self.hung.get(p.unit, 0) < 3])
            got = self.run_batch(ids, EXPLORE)
            corpus += got
            kinds = {_behaviour(table[p], self.outcomes[p]) for p in ids if observe.usable(self.outcomes.get(p))}
            new_kinds = kinds - seen_kinds
            seen_kinds |= kinds
            stale_rounds = 0 if (got or new_kinds) else stale_rounds + 1
            done = len(self.covered_arcs & self.branches) / max(1, len(self.branches)) if self.branches else 1.0
            clock.say(0.05 + 0.35 * min(1.0, clock.elapsed() / (EXPLORE * clock.budget)),
                      f"exploring: round {rnd}, {len(table)} calls tried, branch coverage {done:.0%}")
        if not any(observe.usable(o) for o in self.outcomes.values()):
            slow = [o["load_timeout"] for o in self.outcomes.values() if isinstance(o, dict) and o.get("load_timeout")]
            if slow:
                raise ModuleError(f"importing the module took longer than {max(slow):g} s in the sandbox's "
                                  f"calls (it took {self.runner.import_seconds:.1f} s when first loaded): "
                                  f"raise --time-budget")
            writes = sorted({_dir_of(e[6:]) for o in self.outcomes.values() if isinstance(o, dict)
                             for st in o.get("steps") or () if isinstance(st, list) and st and st[0] == "env"
                             and len(st) > 1 and isinstance(st[1], list)
                             for e in st[1] if isinstance(e, str) and e.startswith("write ")})
            if writes:  # what such a write does is the machine's: root writes there, others raise
                shown = ", ".join(writes[:3]) + (f" and {len(writes) - 3} more" if len(writes) > 3 else "")
                raise ModuleError(f"nothing testable: the calls write outside the working directory (in {shown}); "
                                  f"what that does depends on the machine (it writes there, or raises for want "
                                  f"of permission), so no test asserts it")
            raise ModuleError("nothing testable: no call of the module's functions or classes returned or raised "
                              "within the limits")

    # ------------------------------------------------------------------ candidates
    def candidates(self) -> None:
        """Suspects from the inline docstring examples and the model; every probe a test can be
        written from (never a suspect) gets its checks."""
        self.suspect_calls = [s["input"] for s in self.suspects]
        if self.inline:
            def outcome_of(call: str):
                for pid, p in self.table.items():
                    if len(p.steps) == 1 and same_call(p.steps[0].source(), call):
                        return self.outcomes.get(pid)
                return None
            self._suspect(inline_suspects(self.inline, outcome_of, self.file))
        if self.extra is not None:
            self._suspect(self.extra.suspects(self.outcomes, self.table))
        self.procedures = _procedures(self.module)
        for pid in list(self.outcomes):
            self.admit(pid)

    def _suspect(self, found: list[dict]) -> None:
        self.suspects += found
        self.suspect_calls += [s["input"] for s in found]

    def is_suspect(self, p: Probe) -> bool:
        last = p.steps[-1].source()
        return any(same_call(last, c) or same_call(p.source(), c) for c in self.suspect_calls)

    def admit(self, pid: int) -> bool:
        """A probe whose outcome can be written as a test (and passes its own checks)."""
        o = self.outcomes.get(pid)
        if not observe.usable(o) or self.is_suspect(self.table[pid]):
            return False
        cs = _drop_procedure_nones(self.table[pid], observe.checks(o, self.names), self.procedures)
        if observe.breaks(cs, o):
            return False
        self.cand_checks[pid] = cs
        self.t_orig[pid] = (o or {}).get("t", 0.01)
        for ln in _arcs_lines(self.arcs_of.get(pid, ())):
            self.by_line.setdefault(ln, []).append(pid)
        return True

    # ------------------------------------------------------------------ 3. mutants
    def kill_mutants(self) -> set[int]:
        """The kill matrix: pass 1 the preselected candidates, pass 2 the others for the
        survivors, pass 3 small changes of the calls that reach a survivor's line; returns the
        mutants evaluated."""
        module, clock = self.module, self.clock
        clock.say(EXPLORE, "building mutants")
        # (making them may take a few percent of the budget: more would not be run in time)
        made_by = max(clock.until(EXPLORE + 0.06), time.monotonic() + 1.0)
        not_made: list[int] = []
        self.mutants = module_mutants(module.source, lines=self.target_lines, limit=self.opts.max_mutants,
                                      seed=self.opts.seed, deadline=made_by, at_least=200, left_out=not_made)
        if not_made:
            self.cut(f"mutants: {len(self.mutants)} made, about {not_made[0]} more not (making them would have "
                     f"taken the time to run them)")
        mutants = self.mutants
        self.tried = {m.index: set() for m in mutants}
        self.in_function = set()
        for u in module.units:
            if u.node is not None:
                self.in_function.update(range(u.node.body[0].lineno, u.end + 1))
        # and the bodies of the functions that are no unit (a dataclass's __post_init__, private
        # helpers): taken for the top level, their mutants ran on 16 calls spread over the module,
        # not on those that executed the line (orders.py: `raise ValueError(...)` -> `pass` in
        # __post_init__ reported a survivor, 32 calls tried, none reaching it; the suite killed it)
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
                self.in_function.update(range(node.body[0].lineno, node.end_lineno + 1))
        pre = _preselect(self.cand_checks, self.table, self.outcomes, self.arcs_of)
        pre_set = set(pre)
        self.run_mutants({m.index: self.reach(m, pre_set, 20) for m in mutants}, list(pre), MUTANTS - 0.08)
        survivors = [m for m in mutants if m.index not in self.killed_by]
        if survivors and clock.left(MUTANTS - 0.04) > 1.0:
            rest = set(self.cand_checks) - pre_set
            assign = {m.index: self.reach(m, rest, 60) for m in survivors}
            self.run_mutants(assign, sorted({p for ids in assign.values() for p in ids}), MUTANTS - 0.02)
        self.aim_at_survivors()
        done = {m.index for m in mutants if self.tried[m.index] or
                (not self.by_line.get(m.reach_line) and m.reach_line in self.in_function)}
        if len(done) < len(mutants) and clock.left(MUTANTS - 0.02) < 0.5:
            self.cut(f"mutants: {len(mutants) - len(done)} of {len(mutants)} not run (their share of the "
                     f"budget was spent; the mutation score estimates them at the kill rate of those run)")
        # a candidate is kept only when a second run in a fresh process agrees on every assertion
        self.stable = [pid for pid in self.cand_checks if self.agrees(pid)]
        stable_set = set(self.stable)
        self.kills = {pid: set() for pid in self.stable}
        for mi, pids in self.killed_by.items():
            for pid in pids & stable_set:
                self.kills[pid].add(mi)
        return done

    def agrees(self, pid: int) -> bool:
        """Whether the candidate's second run in a fresh process agrees on every assertion; where
        only the contents of files differ (a time stamp), those file checks go, and the kills only
        file checks made with them (the contents were the run's, not the code's)."""
        if pid not in self.second:
            return False
        first, second = self.outcomes[pid], self.second[pid]
        if observe.stable_pair(first, second, self.names):
            return True
        cs = observe.stable_checks(self.cand_checks[pid], first, second, self.names)
        if cs is None:
            return False
        self.cand_checks[pid] = cs
        for mi in self.file_kills.pop(pid, ()):
            self.killed_by.get(mi, set()).discard(pid)
        return True

    def reach(self, m, pool: set[int], k: int) -> list[int]:
        """Up to ``k`` probes of ``pool`` that executed the mutant's statement (a statement of the
        module's top level runs on every import: the public-data tests and a spread few calls)."""
        top_level = m.reach_line not in self.in_function
        src = self.by_line.get(m.reach_line, []) if self.coverage_ok and not top_level else list(self.cand_checks)
        ids = [pid for pid in src if pid in pool and pid not in self.tried[m.index]]
        if top_level:  # the module is loaded once per cell: coverage sees its top level once
            k = min(k, 16)
            data = [pid for pid in ids if self.table[pid].unit == DATA_UNIT]
            rest = [pid for pid in ids if self.table[pid].unit != DATA_UNIT]
            return data + (_spread(rest, k, self.table) if len(rest) > k else rest)
        return _spread(ids, k, self.table) if len(ids) > k else ids

    def run_mutants(self, assign: dict[int, list[int]], originals: list[int], share_end: float,
                    at_least: int = 0) -> None:
        """Run each mutant on its assigned probes (and the original once more on ``originals``),
        in slices while ``share_end`` of the budget lasts (the first slice always; with
        ``at_least``, the first slice holds that many mutants)."""
        clock = self.clock
        items = [(m, ids) for m in self.mutants if (ids := assign.get(m.index))]
        pos = 0
        step = max(48, len(items) // 6 or 1)  # a slice is one round trip to the sandbox
        # the first slice is small: what a mutant costs here (the module's import, the calls, a
        # loaded machine) is measured on it, and the next slices take what fits in the time left
        # (24 mutants of a package's module, each importing the package, took 25 s at load 7)
        n = max(min(step, 8), at_least)
        first = True
        spent, ran = 0.0, 0  # mutants run so far and the time they took (all slices: a slice of
        # mutants that hang costs many times one of quick ones; toml's decoder, load 10: 75 in 1.6 s,
        # the next 82 in 11.8 s, 9.6 s past the phase's end)
        workers = max(1, int(getattr(getattr(getattr(self, "executor", None), "config", None), "workers", 2) or 2))
        while (pos < len(items) or (first and originals)) and (first or clock.left(share_end) > 0.5):
            part = items[pos:pos + n]
            pos += n
            t0 = time.monotonic()
            work = [(Variant("original", self.module.source), originals)] if first and originals else []
            limits = {"original": self.limit}
            for m, ids in part:
                key = f"m{m.index}"
                work.append((Variant(key, m.code), ids))
                # a mutant gets a multiple of what the original needed: a hang is a kill, found fast
                limits[key] = min(1.0, max(0.05, 20 * max(self.t_orig[p] for p in ids)))
            first = False
            if not work:
                continue
            stops = {v.key: v.key != "original" for v, _ in work}
            by_key = self.runner.probes_many(work, self.table, cov=False, limit=limits, stop_on_timeout=stops)
            self.second.update(by_key.get("original", ({}, {}))[0])
            if part:
                took = time.monotonic() - t0
                if originals and len(work) > len(part):
                    # the original's second run shared the round trip: the mutants' part of it
                    # by their calls (taken whole, 366 calls of the original made 8 mutants cost
                    # 11 s and the slices after it held 8 mutants each; shlex, load 11)
                    calls = sum(len(ids) for _, ids in part)
                    took *= calls / max(1, calls + len(originals))
                spent += took
                ran += len(part)
                left = clock.left(share_end)
                # the next slice: half the time left at the mean cost so far (the later mutants,
                # those of the lines with the most, cost more), and no more than could run in twice
                # that time if every mutant hung on its first call (its limit and the module's
                # import): a slice of slow mutants overruns the phase by a few seconds at most,
                # which the shorter phases after it absorb
                worst = max(limits.values()) + float(getattr(self.runner, "import_seconds", 0.0) or 0.0)
                n = max(1, min(step, int(0.5 * left / max(spent / ran, 1e-4)), int(2 * workers * left / worst)))
            for m, ids in part:
                res = by_key.get(f"m{m.index}", ({}, {}))[0]
                self.tried[m.index].update(ids)
                for pid, o in res.items():
                    cs = self.cand_checks[pid]
                    if observe.breaks(cs, o):
                        self.killed_by.setdefault(m.index, set()).add(pid)
                        if any(c.root[0] == "file" for c in cs) and \
                                not observe.breaks([c for c in cs if c.root[0] != "file"], o):
                            self.file_kills.setdefault(pid, set()).add(m.index)
            done = sum(1 for m in self.mutants if self.tried[m.index])
            clock.say(EXPLORE + 0.3 * min(1.0, clock.elapsed() / (MUTANTS * clock.budget)),
                      f"mutants: {done}/{len(self.mutants)} run, {len(self.killed_by)} killed")

    def aim_at_survivors(self) -> None:
        """Pass 3: small changes of the calls that reach a surviving mutant's line, tried on the
        original (with coverage) and then on the mutant they aim at; stops when a round kills
        nothing (what is left is most likely equivalent to the code)."""
        gen, table = self.gen, self.table
        for _ in range(4):
            if self.clock.left(MUTANTS) <= 1.5:
                return
            survivors = [m for m in self.mutants if m.index not in self.killed_by
                         and self.by_line.get(m.reach_line) and m.reach_line in self.in_function]
            if not survivors:
                return
            aim: dict[tuple, list[int]] = {}
            fresh: list[Probe] = []
            for m in survivors[:60]:
                seeds = self.by_line[m.reach_line]
                for _ in range(8):
                    q = gen.mutate(table[gen.rng.choice(seeds)])
                    if q is not None and q.steps not in self.keys:
                        aim.setdefault(q.steps, []).append(m.index)
                        fresh.append(q)
            ids = self.add(fresh)
            if not ids:
                return
            before = len(self.killed_by)
            self.run_batch(ids, MUTANTS)  # the first 120 always, the rest while the phase lasts
            new_cands = [pid for pid in ids if self.admit(pid)]
            assign: dict[int, list[int]] = {}
            for pid in new_cands:
                lines = _arcs_lines(self.arcs_of.get(pid, ()))
                for mi in aim.get(table[pid].steps, []):
                    if not self.coverage_ok or self.mutants[mi].reach_line in lines:
                        assign.setdefault(mi, []).append(pid)
            self.run_mutants(assign, new_cands, MUTANTS)
            if len(self.killed_by) == before:
                return

    # ------------------------------------------------------------------ 4. choose, 5. write + verify
    def candidate(self, pid: int) -> Candidate:
        p = self.table[pid]
        a = self.arcs_of.get(pid, set())
        cs = self.cand_checks[pid]
        explicit = _explicit_raise(self.module, self.outcomes[pid])
        # a test that asserts nothing (a call alone: it does not raise) brings what it runs and
        # the mutants it kills, not a behaviour of its own
        asserts = _asserts_a_value(cs) or any(c.op == "raises" for c in cs)
        return Candidate(pid=pid, kills=frozenset(self.kills.get(pid, ())), branches=frozenset(a & self.branches),
                         lines=frozenset(_arcs_lines(a) & self.statements),
                         behaviours=frozenset({_behaviour(p, self.outcomes[pid])} if asserts else ()),
                         cost=p.size() / 40 + len(cs) / 4 + (1.5 if explicit is False else 0)
                         + sum(len(repr(c.value)) for c in cs) / 200,  # long literals read badly
                         bonus=(0.5 if p.origin == "docstring" else 0.0) + (0.3 if explicit else 0.0))

    def _smaller(self, probe: Probe) -> list[Probe]:
        """Shorter versions of ``probe``, the likeliest first: a call's keyword arguments all left
        out, a call left out (sequences of three or more), one keyword argument left out, the last
        positional argument left out where its parameter has a default."""
        steps = probe.steps
        whole: list[Probe] = []
        single: list[Probe] = []

        def with_step(i: int, args: tuple, kwargs: tuple) -> Probe:
            st = steps[i]
            return Probe(probe.unit, steps[:i] + (Step(st.kind, st.callee, args, kwargs, st.bind, st.unit),)
                         + steps[i + 1:], probe.origin)

        for i, st in enumerate(steps):
            if st.kind != "call":
                continue
            unit = self.gen.units.get(st.unit) if st.unit else None
            # (a delay handed to time.sleep stays: its default would sleep in the user's suite)
            kept = self.gen.slept(unit) if unit is not None else set()
            if len(st.kwargs) >= 2:
                whole.append(with_step(i, st.args, tuple(kv for kv in st.kwargs if kv[0] in kept)))
            single += [with_step(i, st.args, st.kwargs[:j] + st.kwargs[j + 1:]) for j in range(len(st.kwargs))
                       if st.kwargs[j][0] not in kept]
            if st.args and unit is not None:
                pos = [p for p in unit.params if p.kind in ("pos", "posonly")]
                j = len(st.args) - 1
                star = any(p.kind == "star" for p in unit.params)
                if (j < len(pos) and not pos[j].required and pos[j].name not in kept) or (j >= len(pos) and star):
                    single.append(with_step(i, st.args[:-1], st.kwargs))
        calls = [Probe(probe.unit, steps[:k] + steps[k + 1:], probe.origin)
                 for k in range(1, len(steps)) if steps[k].bind is None] if len(steps) >= 3 else []
        return whole + calls + single

    @staticmethod
    def _merged(probe: Probe, dropped: list[Probe]) -> Probe | None:
        """``probe`` without every keyword argument that one of ``dropped`` (each ``probe`` less
        one keyword argument, found to lose nothing) left out; None when that is one of them."""
        gone: set[tuple[int, str]] = set()
        for d in dropped:
            if len(d.steps) != len(probe.steps):
                continue
            for i, (a, b) in enumerate(zip(probe.steps, d.steps)):
                if a.args == b.args and len(b.kwargs) == len(a.kwargs) - 1:
                    gone |= {(i, k) for k, _ in a.kwargs} - {(i, k) for k, _ in b.kwargs}
        if len(gone) < 2:
            return None
        steps = tuple(Step(st.kind, st.callee, st.args, tuple(kv for kv in st.kwargs if (i, kv[0]) not in gone),
                           st.bind, st.unit) for i, st in enumerate(probe.steps))
        return Probe(probe.unit, steps, probe.origin)

    def _same(self, a: int, b: int) -> bool:
        """Whether probes ``a`` and ``b`` (run on the original) ran the same arcs and assert the
        same (what is asserted of the arguments aside: ``b``'s may hold more of them)."""
        def own(pid: int) -> list:
            return [c for c in self.cand_checks.get(pid, ()) if c.root[0] != "arg"]

        def ran(pid: int) -> set:  # (the module's top level runs once per cell: its first probe sees it)
            return {x for x in self.arcs_of.get(pid, ()) if all(n <= 0 or n in self.in_function for n in x)}
        return a in self.cand_checks and ran(a) == ran(b) and own(a) == own(b)

    def _near(self, k: int, chosen: list[Candidate], vs: list[Probe]) -> tuple[list[int], set]:
        """The variants ``vs`` of ``chosen[k]`` (run on the original) that keep the lines,
        branches and behaviour only this test brings, and the mutants only it kills."""
        others = set().union(*(goals(o) for j, o in enumerate(chosen) if j != k))
        own = goals(chosen[k]) - others
        covered = {g for g in own if g[0] != "k"}
        out = []
        for v in vs:
            vid = self.keys.get(v.steps)
            if vid is None or vid not in self.cand_checks:
                continue
            arcs = self.arcs_of.get(vid, set())
            reach = goals(Candidate(vid, branches=frozenset(arcs & self.branches),
                                    lines=frozenset(_arcs_lines(arcs) & self.statements),
                                    behaviours=frozenset({_behaviour(v, self.outcomes[vid])})))
            if covered <= reach:
                out.append(vid)
        return out, {g[1] for g in own if g[0] == "k"}

    def shorten(self, chosen: list[Candidate]) -> list[Candidate]:
        """Chosen tests made shorter where the shorter one keeps every kill, branch, line and
        behaviour that only this test brings: a call of a sequence left out, arguments left out
        (the coverage-guided changes add keyword arguments that then change nothing: dateutil's
        ``relativedelta(dt1=..., dt2=..., leapdays=30, hours=150, ...)``), in rounds while the
        budget lasts. In a round, the keyword arguments that each could go as far as coverage
        tells are tried all at once before the mutants run, so one round usually does it.

        The first round runs to its end whatever is left of the phase's share (the phases before
        it end late on a loaded machine, and the written calls were then longer, load 5-9: 6
        keyword arguments where 2 do the same): its variants on the original (up to 120, and the
        merged ones), and the likeliest shorter version of each test on the mutants only that
        test kills (up to 48 mutants); the rest, and later rounds, while the share lasts."""
        table = self.table
        share = SHORTEN
        for rnd in range(4):
            first = rnd == 0
            if not first and self.clock.left(share) < 1.0:
                return chosen
            variants: dict[int, list[Probe]] = {}
            for k, c in enumerate(chosen):
                vs = self._smaller(table[c.pid])
                if vs:
                    variants[k] = vs
            if not variants:
                return chosen
            # the likeliest variants of every test first: later slices run only while the phase lasts
            order = [v for vs in zip_longest(*variants.values()) for v in vs if v is not None]
            ids = self.add(order)
            if not ids:
                return chosen
            if first:  # (a slice of 120 at most, as a batch's first slice)
                self.run_batch(ids[:120])
                self.run_batch(ids[120:], share)
            else:
                self.run_batch(ids, share)
            for pid in ids:
                if pid in self.outcomes:
                    self.admit(pid)
            near = {k: self._near(k, chosen, vs) for k, vs in variants.items()}
            # merged: the keyword arguments that each could go as far as coverage tells, and those
            # whose leaving out changes nothing at all (the same coverage and the same checks:
            # ``span(5, 97, step=2, reverse=True, label=' 31 ')`` less label; less reverse keeps
            # the lines, not the value, nor the mutants only it kills)
            together = []
            for k, (vids, _) in near.items():
                pid = chosen[k].pid
                for dropped in (vids, [v for v in vids if self._same(v, pid)]):
                    m = self._merged(table[pid], [table[v] for v in dropped])
                    if m is not None and all(m.steps != t.steps for _, t in together):
                        together.append((k, m))
            more = self.add([m for _, m in together])
            if more and (first or self.clock.left(share) > 0):
                self.run_batch(more, None if first else share)
                for pid in more:
                    if pid in self.outcomes:
                        self.admit(pid)
            # (a merged call met before, while exploring, is in the table already: it counts too)
            for k, m in together:
                vids, kills = near[k]
                variants[k].insert(0, m)
                near[k] = ([v for v in self._near(k, chosen, [m])[0] if v not in vids] + vids, kills)
            # only those run on the mutants, and only on the mutants only their test kills: the
            # likeliest shorter version of each test (the fewest calls, then the cheapest) first
            top: dict[int, list[int]] = {}
            assign: dict[int, list[int]] = {}
            fresh: set[int] = set()
            for k, (vids, kills) in near.items():
                pid = chosen[k].pid  # a variant that changes nothing first, then the shortest
                vids.sort(key=lambda v: (not self._same(v, pid), len(table[v].steps), self.candidate(v).cost))
                for j, vid in enumerate(vids):
                    fresh.add(vid)
                    for mi in kills:
                        to = top if j == 0 else assign
                        if vid not in self.tried[mi] and vid not in to.get(mi, ()):
                            to.setdefault(mi, []).append(vid)
            originals = sorted(v for v in fresh if v not in self.second)
            if top or originals:
                self.run_mutants(top, originals, share, at_least=min(48, len(top)) if first else 0)
            self.run_mutants(assign, sorted(v for v in fresh if v not in self.second), share)
            chosen = self._recheck(chosen, near)
            new_chosen = list(chosen)
            for k, c in enumerate(chosen):
                if k not in near:
                    continue
                others = set().union(*(goals(o) for o in new_chosen if o is not new_chosen[k]))
                own = goals(c) - others  # what only this test brings to the suite
                best = c
                for vid in near[k][0]:
                    if not self.agrees(vid):
                        continue
                    self.kills[vid] = {mi for mi, ps in self.killed_by.items() if vid in ps}
                    cv = self.candidate(vid)
                    if own <= goals(cv) and (len(table[vid].steps), cv.cost) < (len(table[best.pid].steps), best.cost):
                        best = cv
                new_chosen[k] = best
            if [c.pid for c in new_chosen] == [c.pid for c in chosen]:
                return chosen
            chosen = new_chosen
        return chosen

    def _recheck(self, chosen: list[Candidate], near: dict[int, tuple[list[int], set]]) -> list[Candidate]:
        """The likeliest shorter version of a test that changes nothing on the original (the same
        arcs, the same checks) yet missed mutants the test killed: both run on those mutants once
        more. A kill that does not repeat was the machine's (a call past its time limit on a
        loaded machine: `span(4, 97, step=5, reverse=True, label='Hello, World!')` "killed"
        mutants of the lines the same call less label ran unchanged) and is dropped; returns
        ``chosen`` with their kills as they stand then."""
        pairs: dict[int, list[tuple[int, int]]] = {}
        for k, (vids, kills) in near.items():
            pid = chosen[k].pid
            vid = vids[0] if vids else None
            if vid is None or not self._same(vid, pid):
                continue
            missed = sorted(mi for mi in kills if vid in self.tried[mi] and vid not in self.killed_by.get(mi, ()))
            for mi in missed[:8]:
                pairs.setdefault(mi, []).append((pid, vid))
        if not pairs:
            return chosen
        items = [(m, pairs[m.index]) for m in self.mutants if m.index in pairs]
        work = [(Variant(f"m{m.index}", m.code), sorted({p for pr in prs for p in pr})) for m, prs in items]
        limits = {v.key: min(1.0, max(0.05, 20 * max(self.t_orig.get(p, 0.0) for p in ids))) for v, ids in work}
        by_key = self.runner.probes_many(work, self.table, cov=False, limit=limits,
                                         stop_on_timeout={v.key: False for v, _ in work})
        touched = set()
        for m, prs in items:
            res = by_key.get(f"m{m.index}", ({}, {}))[0]
            for pid, vid in prs:
                if pid not in res or vid not in res:
                    continue
                if observe.breaks(self.cand_checks[vid], res[vid]):
                    self.killed_by.setdefault(m.index, set()).add(vid)
                elif not observe.breaks(self.cand_checks[pid], res[pid]):
                    self.killed_by.get(m.index, set()).discard(pid)
                    self.kills.get(pid, set()).discard(m.index)
                    touched.add(pid)
        return [self.candidate(c.pid) if c.pid in touched else c for c in chosen]

    def choose_and_verify(self) -> tuple[list[TestCase], str, str]:
        """Greedy suite (shortened), written and verified; a test that fails under pytest is
        dropped with its look-alikes and the suite chosen again (later rounds only remove)."""
        module, table = self.module, self.table
        self.clock.say(MUTANTS, "choosing the suite")
        cands = [self.candidate(pid) for pid in self.stable]
        units = {u.qualname if u.kind != "init" else u.owner: u for u in module.units}
        dropped: set[int] = set()
        cases: list[TestCase] = []
        text, note = "", "not run"
        failed_total = 0
        regreedy = True
        chosen: list[Candidate] = []
        longest = 0.0  # the longest verification round so far (four pytest processes)
        complete = True
        last_failed = 0
        failed_pids: set[int] = set()
        for attempt in range(7):
            # a round after the first starts only if a round as long as the longest so far ends
            # within the budget: else the suite is the last one verified less the tests that failed
            # there (only removals, nothing unverified added), and the report says so
            # (not after a run that died in a test: the tests after it did not run there)
            no_time = attempt > 0 and complete and self.clock.left(1.0) < longest
            if no_time:  # only the tests that failed go (their look-alikes passed every run)
                chosen = [c for c in chosen if c.pid not in failed_pids]
            elif regreedy:
                chosen = greedy_suite([c for c in cands if c.pid not in dropped], self.opts.max_tests)
                if attempt == 0:
                    chosen = self.shorten(chosen)
            else:  # the suite as it is, minus what failed
                chosen = [c for c in chosen if c.pid not in dropped]
            cases = [TestCase(table[c.pid], self.outcomes[c.pid], self.cand_checks[c.pid],
                              comment="from the docstring" if table[c.pid].origin == "docstring" else "")
                     for c in chosen]
            text = render_file(module.name, self.all_names, cases, units, _header(module, self.header_extra),
                               self.defined, import_bindings(self.module.tree)) if cases else ""
            if not self.opts.verify or not cases:
                break
            if no_time:
                note = (f"{note}; the {len(cases)} tests left were not run again without them: another run "
                        f"(about {longest:.0f} s) would have ended past --time-budget")
                self.cut(f"verification: the suite less {last_failed} failing test(s) was not verified again "
                         f"(another {longest:.0f} s run would have ended past the budget)")
                break
            self.clock.say(SHORTEN + 0.02 * attempt, "verifying the suite in four fresh processes")
            started = time.monotonic()
            bad, note, warning, complete = _verify(self.runner, module, text, self.opts.project)
            longest = max(longest, time.monotonic() - started)
            self.verify_seconds = longest
            if warning and warning not in self.warnings:
                self.warnings.append(warning)
            if bad is None:
                raise ModuleError(f"could not run the generated suite in the sandbox: {note}")
            if not bad:
                break
            by_name = {tc.name: tc for tc in cases}
            if not (set(bad) & set(by_name)):  # the file itself fails (a collection error)
                raise ModuleError(f"the generated suite does not run: {note}")
            last_failed = len(set(bad) & set(by_name))
            failed_pids = {self.keys[by_name[n].probe.steps] for n in bad if n in by_name}
            failed_total += last_failed
            if self.opts.project and not warning and \
                    any(self.outcomes[self.keys[by_name[n].probe.steps]].get("warned") for n in bad if n in by_name):
                # under the project's configuration a test whose calls warn failed: likely all of
                # them do (filterwarnings = error), and each would cost a verification round
                dropped.update(c.pid for c in cands if (self.outcomes.get(c.pid) or {}).get("warned"))
            for name in bad:
                tc = by_name.get(name)
                if tc is None:
                    continue
                dropped.add(self.keys[tc.probe.steps])
                # what runs differently under pytest than in the sandbox (stdin, the working
                # directory...) likely does so for the same call: its look-alikes go too
                first = _first_call(tc.probe)
                dropped.update(c.pid for c in cands if table[c.pid].unit == tc.probe.unit
                               and _first_call(table[c.pid]) == first)
            # later rounds (or any past the budget) only remove, so that the suite converges
            regreedy = attempt < 2 and self.clock.left(1.0) > 3.0
        else:
            raise ModuleError("the generated suite kept failing in verification")
        if failed_total:
            note += f"; {failed_total} test(s) that failed under pytest were dropped on the way"
        self.cases_kept = cases
        return cases, text, note

    # ------------------------------------------------------------------ report
    def report(self, cases: list[TestCase], evaluated: set[int], note: str) -> dict:
        chosen_ids = [self.keys[tc.probe.steps] for tc in cases]
        killed = set().union(*(self.kills.get(p, set()) for p in chosen_ids)) if chosen_ids else set()
        suite_arcs = set().union(*(self.arcs_of.get(p, set()) for p in chosen_ids)) if chosen_ids else set()
        suite_lines = _arcs_lines(suite_arcs) & self.statements
        statements, branches, cov = self.statements, self.branches, self.coverage_ok
        # evaluated: the mutants run, and those on lines no call reaches (survivors for certain);
        # the reached ones the budget left unrun are estimated from those that ran
        ran = {m.index for m in self.mutants if m.index in evaluated and self.tried.get(m.index)}
        not_run = len(self.mutants) - len(evaluated)
        report = {
            "module": self.module.name,
            "file": self.file,
            "target": self.module.selected,
            "tests_kept": len(cases),
            "tests_tried": len(self.outcomes),
            "mutation_score": _estimated_score(len(killed), len(ran), len(evaluated) - len(ran), not_run),
            "mutants": {"total": len(self.mutants), "run": len(evaluated), "killed": len(killed),
                        "unreached": len(evaluated) - len(ran), "reached_not_run": not_run},
            "line_coverage": round(len(suite_lines) / len(statements), 4) if statements and cov else None,
            "branch_coverage": (round(len(suite_arcs & branches) / len(branches), 4) if branches else 1.0)
            if cov else None,
            "lines": {"total": len(statements), "covered": len(suite_lines)},
            "branches": {"total": len(branches), "covered": len(suite_arcs & branches)},
            "suspects": _cap_suspects(self.suspects),
            "survivors": [{"line": m.line, "operator": m.op, "change": m.description}
                          for m in self.mutants if m.index in evaluated and m.index not in killed][:50],
            "verification": note,
            "seconds": round(self.clock.elapsed(), 2),
            "phases": self.phases,
            "time_budget": self.opts.time_budget,
            "isolation": getattr(self.executor, "isolation", None),
        }
        if self.cuts:
            report["budget_cuts"] = list(self.cuts)
        left = self._outside_writers(cases)
        if left:  # (as the error of a module whose calls all write there says it)
            dirs = sorted(set().union(*left.values()))
            shown = ", ".join(dirs[:3]) + (f" and {len(dirs) - 3} more" if len(dirs) > 3 else "")
            names = sorted(left)
            msg = (f"no test of {', '.join(names)}: {'its' if len(names) == 1 else 'their'} calls write outside "
                   f"the working directory (in {shown}); what that does depends on the machine (it writes "
                   f"there, or raises for want of permission), so no test asserts it")
            if msg not in self.warnings:
                self.warnings.append(msg)
        if self.warnings:
            report["warnings"] = list(self.warnings)
        if self.extra is not None:
            report["model"] = self.extra.summary()
        return report


    def _outside_writers(self, cases: list[TestCase]) -> dict[str, set[str]]:
        """The units (qualnames) with no written test whose calls wrote outside the working
        directory (the harness's ``["env", ["write /etc/x"]]``), each with the top directories
        written (/etc, /var)."""
        out: dict[str, set[str]] = {}
        for pid, o in self.outcomes.items():
            if not isinstance(o, dict) or pid not in self.table:
                continue
            for st in o.get("steps") or ():
                if isinstance(st, list) and len(st) > 1 and st[0] == "env" and isinstance(st[1], list):
                    dirs = {_dir_of(e[6:]) for e in st[1] if isinstance(e, str) and e.startswith("write ")}
                    if dirs:
                        out.setdefault(self.table[pid].unit, set()).update(dirs)
        tested = {tc.probe.unit for tc in cases} | {st.unit for tc in cases for st in tc.probe.steps if st.unit}
        return {u: d for u, d in out.items() if u not in tested}


# what the verification runs set otherwise ("another user on another machine"): a test that
# depends on them at import is dropped there, so they need no warning (PATH is set in both)
_VARIED_AT_IMPORT = frozenset({"HOME", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ", "PATH"})


def _dir_of(path: str) -> str:
    """The top directory of a written path: /var/log/app.log -> /var (the generated names vary)."""
    return "/" + path.strip("/").split("/")[0]


def _lacking_module(info: dict | None, module: ModuleInfo) -> str | None:
    """The module the sandbox refuses (ctypes, cffi: raw memory) that the import failed on, if any."""
    import re

    load = (info or {}).get("load")
    if not load:
        return None
    m = re.search(r"the sandbox has no module '([\w.]+)' \(raw memory\)", str(load[1]))
    return m.group(1).split(".")[0] if m else None


def _imports_itself(module: ModuleInfo, name: str) -> bool:
    for n in ast.walk(module.tree):
        if isinstance(n, ast.Import) and any(a.name.split(".")[0] == name for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == name:
            return True
    return False


def _lacking_message(name: str, where: str, module: ModuleInfo) -> str:
    head = (f"importing the module fails{where}: the sandbox that runs your code has no module '{name}' "
            f"(it gives raw memory access)")
    if _imports_itself(module, name):
        return (head + f"; the module uses {name} as it is imported: move that use inside the functions that "
                f"need it (or under try/except), and gen-tests tests the other functions")
    return head + f"; a module it imports needs {name} as it is imported, so gen-tests cannot import it"


def _import_warnings(info: dict) -> list[str]:
    """What the module's import depended on that may differ where the user runs pytest: the
    environment variables it read, the optional dependencies it did not find."""
    out = []
    env = [k for k in info.get("import_env") or [] if k not in _VARIED_AT_IMPORT]
    if env:
        out.append(f"importing it reads the environment variable(s) {', '.join(env)}: the suite asserts what the "
                   f"code does with them unset; where pytest runs with them set, its tests may fail")
    missing = info.get("import_missing") or []
    if missing:
        out.append(f"it imports {', '.join(missing)} where installed, and {'they are' if len(missing) > 1 else 'it is'}"
                   f" not installed for this Python ({sys.executable}): the suite asserts what the code does without "
                   f"{'them' if len(missing) > 1 else 'it'}")
    return out


def _asserts_a_value(cs: list) -> bool:
    """Some check of ``cs`` asserts a value (not only that a call returned, or raised)."""
    return any(c.op not in ("ok", "raises") for c in cs)


def _machine_paths_left_out(outcome, paths: list[str]):
    """``outcome``, or an unusable one (its call counted as reading the environment) when what it
    observed holds one of ``paths``: such a value is true of this checkout only."""
    if not isinstance(outcome, dict) or not outcome.get("steps") or not paths:
        return outcome
    text = repr(outcome["steps"])
    if any(p in text for p in paths if len(p) > 1):
        return dict(outcome, steps=[["env", ["<the code's directory>"]]])
    if outcome.get("files") and any(p in repr(outcome["files"]) for p in paths if len(p) > 1):
        # a file the calls wrote holds it: what they did to the files is not asserted
        return {k: v for k, v in outcome.items() if k != "files"}
    return outcome


def _cap_suspects(suspects: list[dict], per_unit: int = 5) -> list[dict]:
    """At most ``per_unit`` suspects per (unit, kind of evidence), the shortest inputs first; the
    count of the others is noted on the last one kept (all of them are kept out of the suite)."""
    groups: dict[tuple, list[dict]] = {}
    for s in suspects:
        groups.setdefault((s["unit"], s["source"]), []).append(s)
    out = []
    for group in groups.values():
        group = sorted(group, key=lambda s: (len(s["input"]), s["input"]))
        kept = [dict(s) for s in group[:per_unit]]
        if len(group) > per_unit:
            kept[-1]["more"] = len(group) - per_unit
        out += kept
    return out


def _header(module: ModuleInfo, extra: str) -> str:
    what = f"{module.name}" + (f"::{module.selected}" if module.selected else "")
    lines = [f"Tests for {what}, written by `coevo gen-tests`.",
             "",
             "Expected values are the code's observed behaviour (regression tests): a failing test means",
             "the behaviour changed. Behaviours that disagree with the docstrings (suspects) are listed in",
             "the report, never asserted here."]
    if extra:
        lines += ["", extra]
    return "\n".join(lines)


def _spread(ids: list[int], k: int, table: dict[int, Probe]) -> list[int]:
    """``k`` of ``ids``, spread over the units they test."""
    by_unit: dict[str, list[int]] = {}
    for pid in ids:
        by_unit.setdefault(table[pid].unit, []).append(pid)
    out: list[int] = []
    while len(out) < k:
        progressed = False
        for group in by_unit.values():
            if group and len(out) < k:
                out.append(group.pop(0))
                progressed = True
        if not progressed:
            break
    return out


def _preselect(cand_checks: dict[int, list], table, outcomes, arcs_of, per_group: int = 6,
               cap: int = 300) -> list[int]:
    """Candidates worth running on the mutants: for every unit, probes with different paths
    (arcs) or different outcomes, a few of each, the shortest first."""
    groups: dict[tuple, list[int]] = {}
    for pid in cand_checks:
        p = table[pid]
        o = outcomes[pid]
        sig = (p.unit, frozenset(arcs_of.get(pid, ())), _behaviour(p, o)[1])
        groups.setdefault(sig, []).append(pid)
    for g in groups.values():
        g.sort(key=lambda pid: (table[pid].origin != "docstring", table[pid].size()))
        if len(g) > 2:  # the shortest first, then spread over the sizes (bigger inputs kill more)
            rest = g[1:]
            order = []
            lo, hi = 0, len(rest) - 1
            while lo <= hi:
                order.append(rest[hi])
                if lo != hi:
                    order.append(rest[(lo + hi) // 2] if (lo + hi) // 2 not in (hi,) else rest[lo])
                hi -= 1
                lo += 1
            g[1:] = list(dict.fromkeys(order + rest))
    picked: list[int] = []
    outs_seen: dict[tuple, set] = {}
    for k in range(per_group):
        for sig, g in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            if k < len(g) and len(picked) < cap:
                pid = g[k]
                # a different observed value than the ones already picked for this path
                val = repr([c.value for c in cand_checks[pid]])[:2000]
                seen = outs_seen.setdefault(sig, set())
                if k > 0 and val in seen:
                    continue
                seen.add(val)
                picked.append(pid)
    return picked


def _first_call(probe: Probe) -> str:
    """The source of a probe's first call, with the files written before it (the same call on a
    file of other text is no look-alike)."""
    k = next((i for i, st in enumerate(probe.steps) if st.kind != "file"), len(probe.steps) - 1)
    return "; ".join(st.source() for st in probe.steps[:k + 1])


def _verify(runner: SandboxRunner, module: ModuleInfo, text: str,
            project: dict | None = None) -> tuple[list[str] | None, str, str, bool]:
    """Run the suite four times in fresh processes in the sandbox (four hash seeds, so that a test
    asserting a set's iteration order survives with odds of one in 16 for two items, less for more;
    both test orders; every other run as another user on another machine 400 days later: see
    ``harness``), inside a mirror of the user's project when ``project`` is given (its pytest
    configuration and conftests apply, as when the user runs ``pytest`` there; where they cannot
    be applied in the sandbox, the runs are repeated without them and a warning says why);
    (names of failing tests, note, warning, whether every run ran every test: none died in one), or
    (None, why, warning, True) when pytest could not run at all."""
    import random
    from pathlib import Path

    from coevo.testgen.outdir import shadowed, with_import_root

    fname = "test_generated_suite.py"
    seeds = [random.randrange(1, 2 ** 31) for _ in range(4)]
    plan = [(seeds[0], False), (seeds[1], True), (seeds[2], True), (seeds[3], False)]
    # the suite as written: it puts the code's import root first on sys.path itself, once pytest
    # has started (a root on PYTHONPATH would come before the standard library: a project's own
    # textwrap.py or random.py was what pytest imported, and no suite ran)
    top = module.name.split(".")[0]
    text = with_import_root(text, str(module.sandbox_root), top if shadowed(top, Path(module.root)) else None)
    paths: list[str] = []
    res = runner.pytest({fname: text}, plan, paths, project=project)
    warning = ""
    applied = False
    if project and res and res.get("mode") == "subprocess" and "runs" in res:
        ran = [r for r in res["runs"] if _config_applied(r)]
        if len(ran) < len(res["runs"]):
            failed = next(r for r in res["runs"] if not _config_applied(r))
            warning = (f"the project's pytest configuration ({project['describe']}) could not be applied in "
                       f"the sandbox, so the suite was verified without it: {_why_not_applied(failed)}")
            plain = runner.pytest({fname: text}, plan, paths)
            if plain and "runs" in plain:
                res = dict(plain, runs=ran + plain["runs"])
            else:
                res = plain
        applied = bool(ran)
    if not res or "runs" not in res:
        return None, (res or {}).get("error", "no result"), warning, True
    runs = res["runs"]
    bad: set[str] = set()
    total = None
    complete = True
    for r in runs:
        if "__culprit__" in r:  # the run died or hung in this test: it goes, the others are known
            bad.add(str(r["__culprit__"]).rpartition("::")[2])
            complete = False  # the tests after it did not run
            continue
        if "__timeout__" in r:
            return None, "pytest did not finish in time", warning, True
        if "__error__" in r:
            tail = res.get("tail", "").strip().splitlines()
            return None, (tail[-1] if tail else r["__error__"]), warning, True
        names = {k: v for k, v in r.items() if not k.startswith("__")}  # (those that did not pass)
        total = r.get("__total__", len(names))
        if not total and r.get("__rc__") not in (0, 5):
            tail = res.get("tail", "").strip().splitlines()
            return None, " | ".join(tail[-3:]) if tail else "pytest failed", warning, True
        for k, v in names.items():
            if v != "passed":
                bad.add(k.rpartition("::")[2])
    if res.get("mode") == "cells":
        how = ("in two fresh sandbox processes (the test functions called directly, forward and reverse "
               "order; the sandbox's hash seed)")
        if project:
            how += f"; the project's pytest configuration ({project['describe']}) was not applied"
    else:
        how = (f"in fresh processes (PYTHONHASHSEED {', '.join(map(str, seeds))}, forward and reverse "
               "order)")
        if applied and not warning:
            how += f" under the project's pytest configuration ({project['describe']})" if project else ""
        elif applied:
            how += f", some under the project's pytest configuration ({project['describe']})" if project else ""
    if not bad:
        note = f"{total} tests passed {len(runs)} times {how}"
    elif complete:
        note = f"{len(bad)} failing test(s) dropped; the others passed {len(runs)} times {how}"
    else:
        note = f"{len(bad)} failing test(s) dropped"
    return sorted(bad), note, warning, complete


def verify_together(results: list[ModuleResult], names: dict[str, str], rounds: int = 3,
                    deadline: float | None = None) -> None:
    """The suites of one run, verified together in fresh processes (forward and reverse order, two
    hash seeds): modules of a package share state (one module's registry, filled by another's
    functions), and a test asserting it passes next to its own suite and fails after another's.
    A test that fails there is dropped from its suite (which is written and reported again).
    ``deadline`` (``time.monotonic()``): a round starts only if one as long as the suites' own
    verification rounds together ends by then; one left out is reported in every suite's report."""
    import random
    from pathlib import Path

    from coevo.testgen.outdir import shadowed, with_import_root

    for k in range(rounds):
        live = [r for r in results if r.text and isinstance(r.builder, _SuiteBuilder)]
        if len(live) < 2:
            return
        # the suites run together in two fresh pytest processes: mostly pytest's start-up, as
        # for one suite (isodate's 8 suites, load 10: 4 s each alone, about 4 s together)
        estimate = 1.5 * max(r.builder.verify_seconds for r in live)  # type: ignore[attr-defined]
        if deadline is not None and time.monotonic() + estimate > deadline:
            what = ("the suites were not run together (about {:.0f} s: past the run's --time-budget); a test "
                    "that fails only next to another module's suite may be kept" if k == 0 else
                    "the suites less the tests that failed next to each other were not run together again "
                    "(about {:.0f} s: past the run's --time-budget)").format(estimate)
            for r in live:
                b = r.builder
                assert isinstance(b, _SuiteBuilder)
                b.cut("verification together: " + what)
                r.report["budget_cuts"] = list(b.cuts)
            return
        files: dict[str, ModuleResult] = {}
        texts: dict[str, str] = {}
        for r in live:
            key = r.module.name + (f"::{r.module.selected}" if r.module.selected else "")
            fname = names[key] + ".py"
            top = r.module.name.split(".")[0]
            files[fname] = r
            texts[fname] = with_import_root(r.text, str(r.module.sandbox_root),
                                            top if shadowed(top, Path(r.module.root)) else None)
        runner = live[0].builder.runner  # type: ignore[attr-defined]
        seeds = [random.randrange(1, 2 ** 31) for _ in range(2)]
        res = runner.pytest(texts, [(seeds[0], False), (seeds[1], True)], [])
        if not res or "runs" not in res:
            return
        bad: dict[str, set[str]] = {}
        for run in res["runs"]:
            for k, v in run.items():
                if k.startswith("__") or v == "passed":
                    continue
                fname, _, test = k.partition("::")
                if fname in files and test:
                    bad.setdefault(fname, set()).add(test)
        if not bad:
            return
        for fname, tests in bad.items():
            r = files[fname]
            b = r.builder
            assert isinstance(b, _SuiteBuilder)
            r.cases, r.text, r.report = b.without(
                tests, f"{len(tests)} test(s) dropped that failed next to the run's other suites "
                       f"(state the modules share)")


def _config_applied(run: dict) -> bool:
    """A verification run inside the project's mirror ran the tests: not a run whose pytest stopped
    before any test (a conftest that fails to import, an option of the project's configuration this
    pytest does not know, a collection error), nor one in which every test errored in its setup
    (a fixture of the project that cannot work in the sandbox)."""
    if "__timeout__" in run or "__error__" in run:
        return False
    names = {k: v for k, v in run.items() if not k.startswith("__")}  # (those that did not pass)
    total = run.get("__total__", len(names))
    return total > 0 and sum(1 for v in names.values() if v == "error") < total


def _why_not_applied(run: dict) -> str:
    """One line from a failed run's output: the error pytest reported."""
    import re

    if "__timeout__" in run:
        return "pytest did not finish in time"
    lines = [ln.strip() for ln in str(run.get("__project__") or "").splitlines() if ln.strip()]
    pick = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    if not pick:
        pick = [ln for ln in lines if "rror" in ln and not set(ln) <= set("=_- ")]
    why = (pick[-1] if pick else lines[-1] if lines else run.get("__error__") or "pytest failed")
    return re.sub(r"\S*cv-project-[^/\s]*/", "", why)[:300]
