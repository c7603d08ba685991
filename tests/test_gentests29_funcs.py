"""Higher-order helpers (funcs.py).

`compose(f, g)` and `make_adder(n)` return functions: their tests were written as a bare call,
`compose(abs, lambda x: x)`, asserting nothing (a compose that returned g, or a constant, would
pass). The returned function is now called on a drawn argument and its result asserted
(`h = compose(abs, lambda x: x)` / `assert h(-3) == 3`); a bare call returning a function is
not written.

`retry(func, attempts=3, delay=0.5)` passes `delay` to time.sleep: `retry(lambda x: x)` (a func
that always raises) slept 3 x 0.5 s in the user's suite. A parameter handed to time.sleep is now
always given, small (0, 0.01; a negative one raises at once)."""

import ast
import shutil
from pathlib import Path

import pytest

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"


def gen_and_unit(name):
    module = analyze(FIX / "funcs.py")
    gen = InputGenerator(module)
    return gen, next(u for u in module.units if u.qualname == name)


def test_a_returned_function_is_called_in_the_probes():
    for name in ("compose", "make_adder"):
        gen, unit = gen_and_unit(name)
        chained = [p for p in gen.initial(unit) if len(p.steps) == 2 and p.steps[0].callee == name
                   and p.steps[0].bind and p.steps[1].callee == p.steps[0].bind and p.steps[1].args]
        assert len(chained) >= 3, (name, [p.steps for p in gen.initial(unit)])


def test_a_delay_handed_to_sleep_is_always_given_and_small():
    gen, unit = gen_and_unit("retry")
    probes = gen.initial(unit) + gen.hypothesis([unit], n=10)
    for _ in range(40):
        probes.append(gen.mutate(probes[_ % len(probes)]) or probes[0])
    for p in probes:
        kw = dict(p.steps[-1].kwargs)
        delay = kw.get("delay", p.steps[-1].args[2] if len(p.steps[-1].args) > 2 else None)
        assert delay is not None, p.steps
        assert ast.literal_eval(delay) <= 0.01, p.steps


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    from coevo.cli import main

    tmp = tmp_path_factory.mktemp("funcs")
    shutil.copy2(FIX / "funcs.py", tmp / "funcs.py")
    assert main(["gen-tests", str(tmp / "funcs.py"), "--out", str(tmp / "out"), "--quiet"]) == 0
    return ast.parse((tmp / "out" / "test_funcs.py").read_text())


def test_every_written_test_of_a_function_returning_a_function_asserts_a_call_of_it(suite):
    tests = [f for f in suite.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")]
    closures = [f for f in tests if any(isinstance(n, ast.Call) and getattr(n.func, "id", "") in
                                        ("compose", "make_adder") for n in ast.walk(f))]
    assert closures, ast.unparse(suite)
    for f in closures:
        asserted = [n for n in ast.walk(f) if isinstance(n, ast.Assert)] + \
            [n for n in ast.walk(f) if isinstance(n, ast.With)]
        assert asserted, ast.unparse(f)


def test_no_written_call_of_retry_sleeps_the_default_delay(suite):
    calls = [n for n in ast.walk(suite) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "retry"]
    assert calls
    for c in calls:
        delay = next((k.value for k in c.keywords if k.arg == "delay"), c.args[2] if len(c.args) > 2 else None)
        assert delay is not None and ast.literal_eval(delay) <= 0.01, ast.unparse(c)
