"""`coevo gen-tests`: --time-budget is a deadline, and Ctrl-C / SIGTERM stop the command at once.

On a loaded 2-core machine (load 8-14) modules ran past their 60 s: isodate.duration 62.5 s (each
test that failed verification cost another round of four pytest processes, and the rounds never
looked at the clock), toml.decoder 60.9 s, boltons.strutils 68.3 s. The budget checks here run on
an injected clock; the signal checks are bounded by generous upper limits (a stop within 10 s)."""

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from coevo.testgen import module_suite
from coevo.testgen.choose import Candidate
from coevo.testgen.inputs import Probe, Step

ROOT = Path(__file__).resolve().parent.parent


def _builder(monkeypatch, now, n=12, budget=60.0):
    """A module's builder at the end of its mutant phase, on the clock ``now`` (a one-item list)."""
    monkeypatch.setattr(module_suite.time, "monotonic", lambda: now[0])
    b = module_suite._SuiteBuilder.__new__(module_suite._SuiteBuilder)
    b.clock = module_suite._Clock(budget, None)
    b.table = {i: Probe(f"f{i}", (Step("call", f"f{i}", (str(i),), unit=f"f{i}"),)) for i in range(n - 1)}
    # a look-alike of the first test (same unit, same first call)
    b.table[n - 1] = Probe("f0", (Step("call", "f0", ("0",), unit="f0"), Step("call", "f0", ("1",), unit="f0")))
    b.keys = {p.steps: i for i, p in b.table.items()}
    b.outcomes = {i: {} for i in range(n)}
    b.cand_checks = {i: [] for i in range(n)}
    b.stable = list(range(n))
    b.candidate = lambda pid: Candidate(pid)
    b.shorten = lambda chosen: chosen
    b.module = SimpleNamespace(name="m", units=[], tree=ast.parse(""))
    b.opts = module_suite.Options(time_budget=budget)
    b.all_names, b.defined, b.header_extra = set(), set(), ""
    b.warnings, b.cuts, b.runner, b.verify_seconds = [], [], None, 0.0
    b.kills, b.arcs_of, b.statements, b.branches, b.coverage_ok = {}, {}, set(), set(), False
    b.mutants, b.suspects, b.file, b.phases, b.executor, b.extra = [], [], "m.py", {}, None, None
    b.module.selected = None

    def render(name, all_names, cases, units, header, defined, bindings):
        for tc in cases:
            tc.name = f"test_{b.keys[tc.probe.steps]}"
        return "\n".join(tc.name for tc in cases)

    monkeypatch.setattr(module_suite, "render_file", render)
    monkeypatch.setattr(module_suite, "_header", lambda module, extra: "")
    monkeypatch.setattr(module_suite, "greedy_suite", lambda cands, k: list(cands))
    return b


@pytest.mark.timeout(60)
def test_a_verification_round_that_would_end_past_the_budget_is_not_started(monkeypatch):
    """isodate.duration at load 10-14: 8 tests dropped by verification, each drop another round of
    four pytest processes (choose and verify 17.5 s; the module 62.5 s of 60). A round after the
    first now starts only if it can end within the budget; the suite is then the one verified less
    the tests that failed there (nothing unverified is added), and the report says what was cut."""
    now = [1000.0]
    b = _builder(monkeypatch, now)
    now[0] += 0.82 * 60  # the choose phase starts where the shorten share ends
    rounds = []

    def verify(runner, module, text, project=None):
        rounds.append(text)
        now[0] += 8.0  # four pytest processes on a loaded machine
        names = text.split("\n")
        if len(rounds) <= 3:  # the first three rounds each find a failing test
            return [names[0]], "1 failing test(s) dropped", "", True
        return [], f"{len(names)} tests passed 4 times in fresh processes", "", True

    monkeypatch.setattr(module_suite, "_verify", verify)
    cases, text, note = b.choose_and_verify()
    assert len(rounds) == 1, rounds  # a second round (8 s) would have ended at 65.2 s of 60
    assert now[0] <= b.clock.until(1.0), now[0] - b.clock.until(1.0)
    # only the test that failed goes: its look-alike passed every run (a second round would have
    # dropped it too, and chosen again)
    assert len(cases) == 11 and "test_0\n" not in text + "\n" and "test_11" in text, text
    assert "1 failing test(s) dropped; the 11 tests left were not run again" in note and "--time-budget" in note, note
    assert b.cuts and "verification" in b.cuts[0], b.cuts
    report = b.report(cases, set(), note)
    assert report["budget_cuts"] == b.cuts


@pytest.mark.timeout(60)
def test_verification_rounds_that_fit_the_budget_still_run(monkeypatch):
    """With time left, a failing test is dropped and the suite verified again, as before."""
    now = [1000.0]
    b = _builder(monkeypatch, now)
    now[0] += 0.5 * 60
    rounds = []

    def verify(runner, module, text, project=None):
        rounds.append(text)
        now[0] += 2.0
        names = text.split("\n")
        if len(rounds) == 1:
            return [names[0]], "1 failing test(s) dropped", "", True
        return [], f"{len(names)} tests passed 4 times in fresh processes", "", True

    monkeypatch.setattr(module_suite, "_verify", verify)
    cases, text, note = b.choose_and_verify()
    # (the failing test and its look-alike dropped, the suite chosen again and verified)
    assert len(rounds) == 2 and len(cases) == 10 and not b.cuts, (rounds, b.cuts)
    assert "passed 4 times" in note and "--time-budget" not in note, note


@pytest.mark.timeout(60)
def test_the_suites_are_run_together_only_if_that_ends_within_the_run_s_budget(monkeypatch):
    """A package's suites are verified together after the last module: that round is now skipped
    (and said in each suite's report) when it would end past the command's deadline."""
    now = [1000.0]
    results = []
    for k in range(2):
        b = _builder(monkeypatch, now)
        b.verify_seconds = 6.0
        b.runner = SimpleNamespace(pytest=lambda *a, **kw: pytest.fail("ran past the deadline"))
        results.append(module_suite.ModuleResult(module=SimpleNamespace(name=f"m{k}", selected=None), text="x",
                                                 report={}, builder=b))
    module_suite.verify_together(results, {"m0": "test_m0", "m1": "test_m1"}, deadline=now[0] + 8.0)  # 1.5 x 6 s
    for r in results:
        assert r.report["budget_cuts"] and "together" in r.report["budget_cuts"][0], r.report


@pytest.mark.timeout(60)
def test_a_slice_of_mutants_that_hang_does_not_carry_the_mutant_phase_far_past_its_end(monkeypatch):
    """toml's decoder at load 10: 75 mutants ran in 1.6 s, so the next slice took the 82 left,
    which hung at their limits: 11.8 s, the phase 9.6 s past its end (the module 62.4 s of 60).
    A slice is now sized by the mean cost so far (half the time left) and by what it would cost if
    every mutant hung on its first call (here the last 150 mutants cost six times the first 450)."""
    now = [1000.0]
    clock = module_suite._Clock(60.0, None)
    monkeypatch.setattr(module_suite.time, "monotonic", lambda: now[0])
    clock.t0 = now[0]
    now[0] += 0.4 * 60

    class Runner:
        import_seconds = 0.0

        def probes_many(self, work, table, **kw):
            cost = sum(0.05 if int(v.key[1:]) < 450 else 0.3 for v, _ in work if v.key != "original")
            now[0] += cost / 2  # two workers
            return {v.key: ({pid: {"steps": [["ok", ["v", 1], "", []]]} for pid in ids}, {}) for v, ids in work}

    b = module_suite._SuiteBuilder.__new__(module_suite._SuiteBuilder)
    b.clock, b.runner, b.limit, b.table = clock, Runner(), 0.5, {}
    b.module = SimpleNamespace(source="x = 0\n")
    b.mutants = [SimpleNamespace(index=i, code=f"x = {i}\n") for i in range(600)]
    b.t_orig = {0: 0.05}  # a mutant's limit: 20 times that, 1 s
    b.second, b.killed_by, b.cand_checks = {}, {}, {0: []}
    b.tried = {m.index: set() for m in b.mutants}
    b.run_mutants({m.index: [0] for m in b.mutants}, [0], 0.64)
    assert now[0] <= clock.until(0.64) + 2.0, now[0] - clock.until(0.64)
    assert sum(1 for m in b.mutants if b.tried[m.index]) >= 400


def test_making_the_mutants_stops_at_its_deadline():
    """Writing toml's decoder's 1,000 mutants took 6.7 s at load 10, outside every check of the
    clock: past the deadline no more are made (a prefix of the list, spread over the module)."""
    from coevo.testgen.mutants import module_mutants

    src = (ROOT / "coevo" / "testgen" / "choose.py").read_text()
    every = module_mutants(src, limit=1000)
    not_made: list = []
    few = module_mutants(src, limit=1000, deadline=time.monotonic() - 1.0, at_least=24, left_out=not_made)
    assert 24 <= len(few) < len(every)
    assert not_made and not_made[0] >= len(every) - len(few), (not_made, len(every), len(few))
    assert [m.code for m in few] == [m.code for m in every[:len(few)]]


def test_a_module_after_one_that_ran_over_gets_what_is_left_of_the_run_s_budget():
    """`gen-tests mylib/ --time-budget 30`: every module got 30 s from its own start, so what one
    module ran over was added to the command's time. Module k now ends by the command's start plus
    k + 1 budgets (less the 3% margin for writing out), at most one budget, at least half of one."""
    from coevo.testgen.driver import module_budget

    assert module_budget(0, 60.0, 0.0, 3.0) == pytest.approx(60.0 - 3.0 - 1.8)
    assert module_budget(1, 60.0, 0.0, 64.0) == pytest.approx(120.0 - 1.8 - 64.0)  # 4 s over: 54.2
    assert module_budget(1, 60.0, 0.0, 30.0) == 60.0  # an early end gives no module more than its budget
    assert module_budget(2, 60.0, 0.0, 170.0) == 30.0  # far over: still half a budget


# ----------------------------------------------------------------------------- signals

MODULE = '''"""A small module with enough to do for a minute."""


def clamp(x: int, lo: int = 0, hi: int = 10) -> int:
    """Clamp x into [lo, hi].

    >>> clamp(12)
    10
    """
    if lo > hi:
        raise ValueError("lo > hi")
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def classify(word: str) -> str:
    if not word:
        return "empty"
    if word.isdigit():
        return "number"
    if word.upper() == word:
        return "shout"
    return "word"


class Counter:
    def __init__(self, start: int = 0):
        self.n = start

    def add(self, k: int = 1) -> int:
        if k < 0:
            raise ValueError("negative step")
        self.n += k
        return self.n
'''


def _children(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _verifying(pid: int) -> bool:
    """Whether a verification run (``python -m pytest`` in the sandbox) is under ``pid``."""
    for k in _children(pid):
        try:
            with open(f"/proc/{k}/cmdline", "rb") as f:
                if b"\0-m\0pytest\0" in f.read():
                    return True
        except OSError:
            continue
    return False


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _stop(tmp_path, sig, when):
    """Start gen-tests on a small module, send ``sig`` once ``when(pid, elapsed)`` says so; returns
    (exit status, seconds from the signal to the exit, stderr, the processes left behind)."""
    (tmp_path / "small.py").write_text(MODULE)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # (Ctrl-C as at a terminal's foreground command: a suite run as a background job of a
    # non-interactive shell, as CI may start it, inherits SIGINT ignored, and so would the command)
    p = subprocess.Popen([sys.executable, "-m", "coevo", "gen-tests", str(tmp_path / "small.py"), "--out", str(out),
                          "--time-budget", "40", "-q"], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.monotonic()
    kids: list[int] = []
    try:
        while p.poll() is None and not when(p.pid, time.monotonic() - t0):
            kids = sorted(set(kids) | set(_children(p.pid)))
            time.sleep(0.2)
        assert p.poll() is None, "gen-tests ended before the signal"
        kids = sorted(set(kids) | set(_children(p.pid)))
        sent = time.monotonic()
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            pytest.fail("gen-tests did not stop within 60 s of the signal")
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
    deadline = time.monotonic() + 5
    left = [k for k in kids if _alive(k)]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [k for k in kids if _alive(k)]
    return p.returncode, took, err.decode(), left


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig,status,word,phase", [(signal.SIGINT, 130, "interrupted", "verifying"),
                                                   (signal.SIGTERM, 143, "stopped by SIGTERM", "verifying"),
                                                   (signal.SIGTERM, 143, "stopped by SIGTERM", "exploring")])
def test_a_signal_stops_gen_tests_at_once_with_nothing_written_and_no_process_left(tmp_path, sig, status, word,
                                                                                   phase):
    """Ctrl-C (SIGINT) or SIGTERM during the run (while the sandbox runs the module's calls, or the
    suite's four pytest processes): the command stops within seconds (a SIGTERM took ~35 s once),
    with the CLI's exit status (130, 143), one line on stderr and no traceback, no file in --out
    and none of its sandbox processes (pytest's included) left running."""
    if phase == "verifying":
        rc, took, err, left = _stop(tmp_path, sig, lambda pid, t: _verifying(pid))
    else:
        rc, took, err, left = _stop(tmp_path, sig, lambda pid, t: t > 3 and len(_children(pid)) >= 2)
    assert rc == status, (rc, err)
    assert took < 10, took
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in err, err
    out = tmp_path / "out"
    assert not out.exists() or not [p for p in out.iterdir()], list(out.iterdir())
    assert not left, left


def test_the_suites_and_their_manifest_are_written_with_signals_held(tmp_path, monkeypatch):
    """A signal while the suites, reports and manifest are being written acts once they all are:
    a suite without the manifest entry that records it was taken for the user's own file by the
    next run (its new suite went to test_<module>_generated.py)."""
    from coevo.testgen import driver

    got = []

    def handler(signum, frame):
        got.append(signum)

    before = signal.signal(signal.SIGINT, handler)
    try:
        with driver._signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert got == []
        time.sleep(0.05)
        assert got == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_report_says_what_was_cut(tmp_path):
    """The summary prints each cut under the module's line."""
    from coevo.testgen.driver import _summary

    rep = {"tests_kept": 3, "tests_tried": 9, "mutation_score": 0.5, "mutants": {"killed": 1, "run": 2},
           "line_coverage": 0.5, "branch_coverage": 0.5, "seconds": 59.0, "suspects": [],
           "budget_cuts": ["mutants: 4 of 6 not run"]}
    r = SimpleNamespace(report=rep, module=SimpleNamespace(name="m", selected=None), text="x")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        _summary(SimpleNamespace(quiet=False), r, tmp_path, {"m": "test_m"})
    assert "cut to end within --time-budget: mutants: 4 of 6 not run" in buf.getvalue(), buf.getvalue()
    json.dumps(rep)
