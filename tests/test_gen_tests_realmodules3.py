"""gen-tests on the shapes of a third set of published modules (jsonpointer, packaging, tabulate,
toml, tomli, isodate, boltons, six, ...), each rebuilt as a small fixture here: the calls the
docstrings show, and what the written suite asserts and how it behaves under plain pytest."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coevo.testgen import observe
from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import InputGenerator, Probe, Step
from coevo.testgen.target import analyze
from coevo.testgen.writer import TestCase, import_bindings, render_file
from matrix.engine import ExecConfig, Executor

FIX = Path(__file__).parent / "fixtures" / "gentests19"


def test_doctest_calls_with_bound_documents_comparisons_and_print_are_used():
    """jsonpointer's examples bind ``obj = {...}`` first and write ``resolve_pointer(obj, '/foo') ==
    obj['foo']``; packaging's ``Version('1.0').is_prerelease``; tabulate's ``print(tabulate(...))``:
    none of them was taken (only a bare ``f(literal)`` line was), so the pointers that reach into a
    document were never tried (jsonpointer: lines 64%)."""
    gen = InputGenerator(analyze(FIX / "pointers.py"), seed=0)
    sources = {p.source() for p in gen.docstring_probes()}
    doc = "{'foo': {'bar': [10, 20]}, 'a b': 1}"
    assert f"resolve({doc}, '/foo/bar/1')" in sources, sorted(sources)
    assert f"resolve({doc}, '/a b')" in sources, sorted(sources)
    assert "version = Version('1.2'); version.is_prerelease" in sources, sorted(sources)
    assert "version = Version('1.2'); version.bump('minor')" in sources, sorted(sources)


@pytest.fixture(scope="module")
def sandboxed(tmp_path_factory):
    d = tmp_path_factory.mktemp("gentests19")
    d.chmod(0o755)
    for name in ("deprecations.py", "aio_client.py", "zones.py"):
        (d / name).write_text((FIX / name).read_text())
    with Executor(ExecConfig(timeout=20, workers=2, import_paths=(str(d),))) as ex:
        yield d, ex


def test_a_call_that_warns_is_asserted_with_pytest_warns(sandboxed, tmp_path):
    """jsonpointer's `pairwise([])`, idna's `uts46_remap(' L ', transitional=True)`, toml's
    `load([...])` warn: the suite passed with "1 warning" and asserted nothing of it (a mutant
    deleting the `warn` survived; under `-W error` the test failed)."""
    d, ex = sandboxed
    module = analyze(d / "deprecations.py")
    runner = SandboxRunner(module, ex)
    table = {0: Probe("pairwise", (Step("call", "pairwise", ("[1, 2, 3]",), unit="pairwise"),)),
             1: Probe("remap", (Step("call", "remap", ("'L'",), (("transitional", "True"),), unit="remap"),)),
             2: Probe("load", (Step("call", "load", ("['a.toml', 'b.ini']",), unit="load"),)),
             3: Probe("remap", (Step("call", "remap", ("'L'",), unit="remap"),)),
             4: Probe("convert_all", (Step("call", "convert_all", ("['x']",), unit="convert_all"),))}
    out, _ = runner.probes(Variant("original", module.source), table, [list(table)], limit=2.0)
    names = observe.Names("deprecations", {"pairwise", "remap", "load", "LegacyWarning", "warnings", "convert_all"})
    cases = [TestCase(table[k], out[k], observe.checks(out[k], names)) for k in table]
    text = render_file("deprecations", names.names, cases, {}, "Tests.")
    assert ("    with pytest.warns(\n        DeprecationWarning,\n"
            "        match=r'pairwise\\(\\) is deprecated") in text, text
    assert "with pytest.warns(DeprecationWarning, match='transitional processing is deprecated'):" in text
    assert "with pytest.warns(LegacyWarning, match='1 of the names are not TOML files'):" in text
    # (toml's load([...]) warned, then raised: the warning went unasserted)
    assert ("    with pytest.warns(DeprecationWarning, match='convert_all is deprecated'):\n"
            "        with pytest.raises(ValueError, match=") in text, text
    assert text.count("pytest.warns") == 4
    # a mutant that no longer warns is killed
    no_warn = dict(out[1], warns=[])
    assert observe.breaks(cases[1].checks, no_warn) and not observe.breaks(cases[1].checks, out[1])
    # and the suite passes under plain pytest, warnings as errors
    (tmp_path / "test_deprecations.py").write_text(text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-W", "error", str(tmp_path / "test_deprecations.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(d)))
    assert run.returncode == 0 and "5 passed" in run.stdout, run.stdout + run.stderr


def test_a_parameter_checked_against_a_table_gets_the_table_s_keys():
    """`if unit not in factors: raise ...` then `factors[unit]`, with `factors = {'km': ..., ...}`:
    `unit` was taken for an int (it indexes something) and every call raised ('unknown unit 5');
    the function's only working line was never run (lines 78%, mutation 0.40)."""
    module = analyze(FIX / "units.py")
    gen = InputGenerator(module, seed=0)
    units = {u.qualname: u for u in module.units}
    for fn, param, keys in (("convert", "unit", {"'km'", "'m'", "'cm'"}),
                            ("seconds", "per", {"'day'", "'hour'", "'minute'"}),
                            ("frame", "kind", {"'plain'", "'grid'"})):
        spec = dict((p.name, s) for p, s in gen.specs(units[fn]))[param]
        pool = set(gen.pool(spec, gen._consts(units[fn])))
        assert keys <= pool, (fn, spec, sorted(pool))


def test_the_mutant_phase_ends_near_its_share_of_the_budget_when_each_mutant_is_slow(monkeypatch):
    """bidict's _bidict.py on a loaded machine (each mutant imports the whole package): the first
    slice of 24 mutants, run whatever the time left, took 25 s and the module 62.6 s of a 60 s
    budget. The first slice is now small; the next ones are sized by what it cost."""
    from types import SimpleNamespace

    from coevo.testgen import module_suite
    from coevo.testgen.module_suite import _Clock, _SuiteBuilder

    now = [1000.0]
    monkeypatch.setattr(module_suite.time, "monotonic", lambda: now[0])
    clock = _Clock(60.0, None)
    now[0] += 0.4 * 60  # explore is over

    class Runner:
        def probes_many(self, work, table, **kw):
            mutants = [v for v, _ in work if v.key != "original"]
            now[0] += 1.0 * len(mutants) / 2 * 2  # 2 workers, 2 s a mutant (a loaded machine)
            return {v.key: ({pid: {"steps": [["ok", ["v", 1], "", []]]} for pid in ids}, {}) for v, ids in work}

    b = _SuiteBuilder.__new__(_SuiteBuilder)
    b.clock, b.runner, b.limit, b.table = clock, Runner(), 0.5, {}
    b.module = SimpleNamespace(source="x = 0\n")
    b.mutants = [SimpleNamespace(index=i, code=f"x = {i}\n") for i in range(60)]
    b.t_orig = {0: 0.01}
    b.second, b.killed_by, b.cand_checks = {}, {}, {0: []}
    b.tried = {m.index: set() for m in b.mutants}
    b.run_mutants({m.index: [0] for m in b.mutants}, [0], 0.64)
    assert now[0] <= clock.until(0.64) + 4.0, now[0] - clock.until(0.64)
    assert sum(1 for m in b.mutants if b.tried[m.index]) >= 6  # and it did run mutants


def test_async_functions_and_methods_are_tested_through_asyncio_run(sandboxed, tmp_path):
    """A module of coroutine functions ('async def') stopped with 'nothing testable: async
    functions are not tested', exit 2, nothing written; async methods got no test (a user's
    aio.py: mutation 0.0). They are now called as `asyncio.run(f(x))`."""
    d, ex = sandboxed
    module = analyze(d / "aio_client.py")
    assert {u.qualname for u in module.units} >= {"double", "check", "Fetcher", "Fetcher.fetch"}
    assert module.async_units == ["ticks"]  # an async generator: still said, not tested
    runner = SandboxRunner(module, ex)
    table = {0: Probe("double", (Step("call", "double", ("2",), unit="double"),)),
             1: Probe("check", (Step("call", "check", ("''",), unit="check"),)),
             2: Probe("Fetcher", (Step("call", "Fetcher", ("'http://a/'",), bind="fetcher", unit="Fetcher"),
                                  Step("call", "fetcher.fetch", ("'/x'",), unit="Fetcher.fetch")))}
    out, _ = runner.probes(Variant("original", module.source), table, [list(table)], limit=2.0)
    assert out[0]["steps"][0][:2] == ["ok", ["v", 4]], out[0]
    names = observe.Names("aio_client", {"double", "check", "Fetcher", "ticks", "asyncio"})
    cases = [TestCase(table[k], out[k], observe.checks(out[k], names)) for k in table]
    text = render_file("aio_client", names.names, cases, {}, "Tests.")
    assert "assert asyncio.run(double(2)) == 4" in text, text
    assert "        asyncio.run(check(''))" in text, text
    assert "assert asyncio.run(fetcher.fetch('/x')) == 'http://a/x'" in text, text
    (tmp_path / "test_aio_client.py").write_text(text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-W", "error", str(tmp_path / "test_aio_client.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(d)))
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout + run.stderr


def test_a_match_object_parameter_gets_matches_of_the_module_s_own_patterns():
    """tomli's `match_to_datetime(match: re.Match[str])` only ever got `5` (AttributeError: 'int'
    object has no attribute 'groups'): branches 0%. It now gets `RE_DATETIME.match('...')` with
    strings drawn from the module's compiled patterns (verbose ones, built with f-strings)."""
    module = analyze(FIX / "stamps.py")
    gen = InputGenerator(module, seed=0)
    units = {u.qualname: u for u in module.units}
    env: dict = {}
    exec(compile((FIX / "stamps.py").read_text(), "stamps.py", "exec"), env)
    for fn, param, regex in (("to_minutes", "match", "RE_TIME"), ("month_of", "m", "RE_DATE")):
        spec = dict((p.name, s) for p, s in gen.specs(units[fn]))[param]
        pool = [s for s in gen.pool(spec, gen._consts(units[fn])) if s.startswith(regex + ".match(")]
        assert pool, (fn, spec, gen.pool(spec, gen._consts(units[fn])))
        assert all(eval(s, env) is not None for s in pool), pool  # each one matches


def test_time_zones_and_aware_datetimes_are_asserted(sandboxed, tmp_path):
    """tomli's `cached_tz('0', '7', '+')` was written as a bare call, nothing asserted: the value's
    repr `datetime.timezone(datetime.timedelta(seconds=420))` (and an aware datetime's
    `tzinfo=datetime.timezone.utc`) was not taken as writable."""
    d, ex = sandboxed
    module = analyze(d / "zones.py")
    runner = SandboxRunner(module, ex)
    table = {0: Probe("offset", (Step("call", "offset", ("'0'", "'7'"), unit="offset"),)),
             1: Probe("stamp", (Step("call", "stamp", ("2020",), unit="stamp"),)),
             2: Probe("stamp", (Step("call", "stamp", ("2020",), (("utc", "False"),), unit="stamp"),))}
    out, _ = runner.probes(Variant("original", module.source), table, [list(table)], limit=2.0)
    names = observe.Names("zones", {"offset", "stamp", "datetime", "timedelta", "timezone"})
    cases = [TestCase(table[k], out[k], observe.checks(out[k], names)) for k in table]
    # (the module binds 'datetime' to the class: the values are written with its names)
    text = render_file("zones", names.names, cases, {}, "Tests.", {"offset", "stamp"}, import_bindings(module.tree))
    assert "assert offset('0', '7') == timezone(timedelta(seconds=420))" in text, text
    assert "assert stamp(2020) == datetime(2020, 1, 2, 3, 4, tzinfo=timezone.utc)" in text, text
    assert "tzinfo=timezone(timedelta(seconds=19800))" in text, text
    assert "from datetime import datetime, timedelta, timezone" in text or \
        "from datetime import datetime\nfrom datetime import timedelta\nfrom datetime import timezone" in text, text
    (tmp_path / "test_zones.py").write_text(text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                          str(tmp_path / "test_zones.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(d)))
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout + run.stderr


def test_the_first_module_s_budget_counts_the_time_before_it_started(tmp_path, monkeypatch):
    """bidict's _bidict.py at load 10: the module's own clock said 60.4 s, the command took 63.2 s
    of its 60 s budget (starting Python and coevo, the sandbox, hypothesis, writing out). The
    time spent before the first module starts (and a margin for what follows it) comes off that
    module's budget."""
    from coevo.cli import main
    from coevo.testgen import driver, module_suite

    seen = []

    def fake_generate_suite(module, executor, *, options, **kw):
        seen.append(options.time_budget)
        raise module_suite.ModuleError("stop here")

    monkeypatch.setattr(module_suite, "generate_suite", fake_generate_suite)
    monkeypatch.setattr(driver, "_process_age", lambda: 4.0)
    (tmp_path / "one.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "two.py").write_text("def g(x):\n    return x\n")
    assert main(["gen-tests", str(tmp_path / "one.py"), "--out", str(tmp_path / "out"), "-q"]) == 2
    assert len(seen) == 1 and 50.0 <= seen[0] <= 56.0, seen
    seen.clear()
    assert main(["gen-tests", str(tmp_path), "--out", str(tmp_path / "out"), "-q", "--time-budget", "20"]) == 2
    assert len(seen) == 2 and seen[0] < 20.0 and seen[1] == 20.0, seen  # the per-module budget of the others
    assert driver._process_age() >= 0.0


def test_a_constructor_argument_kept_on_the_object_is_typed_by_how_the_methods_use_it():
    """`Fetcher(base)` stores `self.base = base` and `fetch` calls `self.base.rstrip('/')`: `base`
    had no evidence of its own, got `5`, and every `fetch` raised AttributeError ('int' object has
    no attribute 'rstrip'): the method's working line was never run."""
    module = analyze(FIX / "aio_client.py")
    gen = InputGenerator(module, seed=0)
    init = next(u for u in module.units if u.kind == "init" and u.owner == "Fetcher")
    spec = dict((p.name, s) for p, s in gen.specs(init))["base"]
    assert spec.kind == "str", spec
