"""Red-team pass 28 (trust28's R6): a generator (or a map, filter, zip, enumerate, reversed
iterator) the program returns is a reference on the test's side, and was no instance of its
class: ``def f(n): yield n`` FAILED ``isinstance(f(1), types.GeneratorType)`` and
``inspect.isgenerator(f(1))``, right in plain Python (a test of a generator exercise asks
exactly that). Its reference now carries its kind, and its ``__class__`` is that class on the
test's side (``isinstance``, ``inspect``, ``collections.abc.Iterator`` as in Python; ``type()``
still names the stand-in). Each WRONG test fails in plain Python and must fail in the sandbox;
each RIGHT one passes in plain Python and must pass."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, four_way_ids, four_ways, run_cell

pytestmark = FORK_ONLY

ex = executor_fixture()

GEN = "def f(n):\n    for i in range(n):\n        yield i\n"
LIST = "def f(n):\n    return [i for i in range(n)]\n"
MAP = "def f(xs):\n    return map(str, xs)\n"

RIGHT = [
    ("generator_type", GEN, "import types\nassert isinstance(f(3), types.GeneratorType) and list(f(3)) == [0, 1, 2]"),
    ("inspect_isgenerator", GEN, "import inspect\nassert inspect.isgenerator(f(3))"),
    ("iterator_abc", GEN, "import collections.abc\nassert isinstance(f(3), collections.abc.Iterator)"),
    ("class_name", GEN, "assert f(3).__class__.__name__ == 'generator'"),
    ("still_runs", GEN, "g = f(2)\nassert next(g) == 0 and next(g) == 1"),
    ("map_object", MAP, "assert isinstance(f([1, 2]), map) and list(f([1, 2])) == ['1', '2']"),
]
WRONG = [
    ("a_list_is_no_generator", LIST, "import types\nassert isinstance(f(3), types.GeneratorType)"),
    ("a_generator_is_no_list", GEN, "assert isinstance(f(3), list)"),
    ("a_generator_is_no_map", GEN, "assert isinstance(f(3), map)"),
    ("not_a_generator", GEN, "import inspect\nassert not inspect.isgenerator(f(3))"),
]



@pytest.mark.parametrize("name,code,test,shape", four_ways(RIGHT), ids=four_way_ids(RIGHT))
def test_a_returned_iterator_is_an_instance_of_its_class(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "pass", detail


@pytest.mark.parametrize("name,code,test,shape", four_ways(WRONG), ids=four_way_ids(WRONG))
def test_a_returned_iterator_is_no_instance_of_another_class(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "fail", detail
