"""gen-tests' kill matrix: a mutant runs on a few of the candidates that reach its line, so the
report listed survivors the written suite kills. orders.py (gentests31, mutation 0.93 -> 0.89):

* `unit_price < 0` -> `< -1` (line 16, __post_init__) ran on 20 of the preselected candidates
  reaching the line, not on the suite's `LineItem('hello', 5, -0.5)` (raising 'unit price cannot
  be negative') that kills it;
* `discount_percent: float = 0.0` -> `1.0` (a default: the def line, run at import) ran on 16
  calls spread over the module, none calling `total()` bare; the suite's `order.total()` kills it.

The builder is stubbed (no sandbox): which candidates each mutant is handed to is checked."""


from coevo.testgen import module_suite
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.mutants import ModuleMutant
from coevo.testgen.writer import TestCase


def _builder(monkeypatch, n=30, now=None):
    now = now or [1000.0]
    monkeypatch.setattr(module_suite.time, "monotonic", lambda: now[0])
    b = module_suite._SuiteBuilder.__new__(module_suite._SuiteBuilder)
    b.clock = module_suite._Clock(60.0, None)
    b.table = {i: Probe("f", (Step("call", "f", (str(i),), unit="f"),)) for i in range(n)}
    b.keys = {p.steps: i for i, p in b.table.items()}
    b.outcomes = {i: {} for i in range(n)}
    b.cand_checks = {i: [] for i in range(n)}
    b.second = {i: {} for i in range(n)}
    b.arcs_of = {i: {(-1, 5), (5, 6), (6, -1)} for i in range(n)}
    b.coverage_ok = True
    b.kills, b.killed_by, b.file_kills = {}, {}, {}
    b.cuts = []
    return b, now


def test_the_written_suite_is_run_on_the_survivors_it_was_never_tried_on(monkeypatch):
    b, now = _builder(monkeypatch, n=6)
    now[0] += 0.85 * 60  # after verification, time left
    # mutant 0: a default value (line 1, top level); mutant 1: line 5 in a function; mutant 2: line 9,
    # reached by no chosen test; mutant 3: line 5, already tried on every chosen test
    b.mutants = [ModuleMutant(0, "a", "constant", 1, "0.0 -> 1.0"), ModuleMutant(1, "b", "constant", 5, "0 -> -1"),
                 ModuleMutant(2, "c", "constant", 9, "1 -> 2"), ModuleMutant(3, "d", "negate", 5, "negate")]
    b.in_function = {5, 6, 9}
    chosen = [0, 1, 2]
    b.tried = {0: {0}, 1: {1}, 2: set(), 3: {0, 1, 2}}
    cases = [TestCase(b.table[p], {}, []) for p in chosen]
    handed = {}

    def run_mutants(assign, originals, share_end, at_least=0):
        handed.update({mi: sorted(ids) for mi, ids in assign.items()})
        for mi, ids in assign.items():  # every one handed kills it
            b.tried[mi].update(ids)
            b.killed_by.setdefault(mi, set()).update(ids)
    b.run_mutants = run_mutants
    b.recheck_survivors(cases, {0, 1, 2, 3})
    assert handed == {0: [1, 2], 1: [0, 2]}, handed
    assert 0 in b.kills[1] and 1 in b.kills[0], b.kills
