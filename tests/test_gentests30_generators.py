"""A generator of objects (gendays.py).

`workdays(start, end)` yields dates. A result checked for several facts was written as
`result = workdays(...)` followed by `assert len(list(result)) == 1` and
`assert list(result)[0] == date(...)`: the second list() read an exhausted generator, so every
such test failed under pytest and was dropped (shifts.py's workdays had no test: its loop, its
weekday test and its step all survived). An infinite one (`every`) was read with
`list(itertools.islice(result, 10))` once per fact, each read taking the next ten. The returned
iterator is now read once into the result (`result = list(workdays(...))`)."""

import ast
import shutil
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures" / "gentests30"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    from coevo.cli import main

    tmp = tmp_path_factory.mktemp("gendays")
    shutil.copy2(FIX / "gendays.py", tmp / "gendays.py")
    assert main(["gen-tests", str(tmp / "gendays.py"), "--out", str(tmp / "out"), "--quiet",
                 "--time-budget", "12"]) == 0
    return ast.parse((tmp / "out" / "test_gendays.py").read_text())


def _tests_of(tree, name):
    return [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")
            and any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == name for n in ast.walk(f))]


@pytest.mark.parametrize("name", ["workdays", "every"])
def test_a_generator_of_objects_keeps_tests_asserting_several_of_its_items(written, name):
    tests = _tests_of(written, name)
    assert any(sum(isinstance(n, ast.Assert) for n in ast.walk(f)) >= 2 for f in tests), ast.unparse(written)


def test_no_test_reads_a_returned_generator_twice(written):
    for f in _tests_of(written, "workdays") + _tests_of(written, "every"):
        bound = {t.id for n in ast.walk(f) if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name) and isinstance(n.value, ast.Call)
                 and getattr(n.value.func, "id", "") in ("workdays", "every")}
        for var in bound:
            reads = [n for n in ast.walk(f) if isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Load)]
            assert len(reads) <= 1, ast.unparse(f)
