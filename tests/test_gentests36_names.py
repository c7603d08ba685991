"""gen-tests draws the module's own names where the code checks an argument against them
(gentests36b, test first): h11's ``Connection(our_role)`` raises unless ``our_role in (CLIENT,
SERVER)``, two module-level names; the in-tuple rule took only constants, so the suite only had
the invalid ``Connection('a')`` (4 tests, mutation 0.02). ``x in (NAME, ...)``, ``x not in``,
``x is NAME``, ``x == NAME`` with NAME a global of the module (or ``NAME.attr`` of one) now
draw those names as argument text."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests36"


def _pool(qualname, param):
    module = analyze(FIX / "sides.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == qualname)
    q, spec = next((q, s) for q, s in gen.specs(unit) if q.name == param)
    return gen._pool_for(q, spec, gen._consts(unit), 0, unit)


def test_a_role_checked_against_the_modules_names_draws_those_names():
    pool = _pool("Connection", "our_role")
    assert "CLIENT" in pool[:4] and "SERVER" in pool[:4], pool[:8]
    assert len(pool) > 2  # (and other values still: the invalid call is tested too)


def test_a_value_compared_with_a_names_attribute_draws_it():
    pool = _pool("mode_name", "mode")
    assert "Modes.FAST" in pool[:4] and "Modes.SLOW" in pool[:4], pool[:8]


def test_a_local_name_a_builtin_or_an_imported_module_is_not_drawn():
    # (nor a module the code imports whole: the suite cannot import ``os`` from the module, and
    # the test of ``f(os.sep)`` failed under pytest and was dropped at the end)
    src = ("import os\nLIMIT = 3\n"
           "def f(x):\n    other = object()\n    if x is other or x in (len, LIMIT) or x == os.sep:\n"
           "        return 1\n    return 0\n")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "locals36.py"
        path.write_text(src)
        module = analyze(path)
        gen = InputGenerator(module)
        unit = next(u for u in module.units if u.qualname == "f")
        q, spec = next((q, s) for q, s in gen.specs(unit) if q.name == "x")
        pool = gen._pool_for(q, spec, gen._consts(unit), 0, unit)
    assert "LIMIT" in pool and "other" not in pool and "len" not in pool, pool[:8]
    assert "os.sep" not in pool and "os" not in pool, pool[:8]


def test_the_suite_calls_with_a_valid_role_and_passes(tmp_path):
    (tmp_path / "sides.py").write_text((FIX / "sides.py").read_text())
    res = subprocess.run([sys.executable, "-m", "coevo.cli", "gen-tests", "sides.py", "--out", "tests", "-q",
                          "--time-budget", "10", "--seed", "1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    text = (tmp_path / "tests" / "test_sides.py").read_text()
    assert "Connection(CLIENT" in text or "Connection(SERVER" in text, text
    assert "Modes.FAST" in text and "Modes.SLOW" in text, text
    for seed in ("0", "1", "2"):
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                              str(tmp_path / "tests")], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stdout + run.stderr
