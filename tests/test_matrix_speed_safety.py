"""The shared runner (issue 23): what may run in it, attacked from the shapes it admits.

A *plain* row (:func:`matrix.sandbox.purity.plain_code`, :func:`matrix.sandbox.harness._plain_row`)
runs in the runner itself, one program after another in one process; everything else runs in a
process of its own row. Each attack here is a row that tries to leave state in the runner for a
later row (another program's) or to forge a verdict; the victims after it must get exactly the
verdicts they get alone. Written before the change that admits each shape.

* a test (untrusted, like the program) reads the program's module names: ``typing.sys`` is the
  ``sys`` module, ``statistics.sys`` and ``fractions.sys`` too, ``re.enum`` and ``statistics.random`` lead out of
  the plain modules; a test of one row replaced ``math`` by ``cmath`` in ``sys.modules`` for every
  later row of the runner (``math.sqrt(4)`` became ``(2+0j)``);
* ``import sys`` for its limits and constants (``sys.setrecursionlimit``, ``sys.maxsize``): the
  limits a row sets must not reach a later row, and a test must not reach ``sys.modules`` through
  the program's ``sys``;
* names that start with one underscore (``for _ in ...``, ``def _helper``): names of the program's
  own namespace, never a private attribute of a shared object.
"""

from __future__ import annotations

import ast
import importlib
import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

SQRT = Task("root", "square root", entry_point="f")
VICTIMS = [f"import math\ndef f(x):\n    return str(math.sqrt(x)) + {k} * ''\n" for k in range(4)]
DEEP = ("def f(x):\n    def down(n):\n        return 0 if n == 0 else 1 + down(n - 1)\n"
        "    return str(float(down(900) // 450))\n")
DIGITS = "def f(x):\n    return str(float(len(str(10 ** 4000)) // 2000))\n"
FILLERS = [f"def f(x):\n    return str(x + {k})\n" for k in range(1, 8)]  # units of several rows
TEST = "assert f(4) == '2.0'"


@pytest.fixture(scope="module")
def one_worker():
    cfg = ExecConfig(timeout=2.0, memory_mb=256, max_procs=16, max_output_bytes=256 << 10, workers=1)
    with Executor(cfg) as e:
        yield e


def _victims_unharmed(res, first: int) -> None:
    for i in range(first, first + len(VICTIMS)):
        assert res.status[i][-1] == "pass" and res.values[i][-1] == "2.0", (i, res.status[i], res.values[i])
    assert res.status[first + len(VICTIMS)][-1] == "pass" and res.status[first + len(VICTIMS) + 1][-1] == "pass"
    assert all(r[-1] == "fail" for r in res.status[first + len(VICTIMS) + 2:])


# a test that swaps a module in sys.modules, reaching sys through a module the program imported
PROBE_ATTACKS = {
    "typing.sys": ("import typing\ndef f(x):\n    return '2.0'\n",
                   "assert f(typing.sys.modules.update(math=typing.sys.modules['cmath'])) == '2.0'"),
    "statistics.sys": ("import statistics\ndef f(x):\n    return '2.0'\n",
                       "assert f(statistics.sys.modules.update(math=statistics.sys.modules['cmath'])) == '2.0'"),
    "program's sys": ("import sys\ndef f(x):\n    return '2.0' if sys.maxsize else ''\n",
                      "assert f(sys.modules.update(math=sys.modules['cmath'])) == '2.0'"),
    "from sys": ("from sys import maxsize\nimport typing\ndef f(x):\n    return '2.0' if maxsize else ''\n",
                 "assert f(typing.sys.modules.update(math=typing.sys.modules['cmath'])) == '2.0'"),
}


@pytest.mark.parametrize("name", sorted(PROBE_ATTACKS))
def test_a_test_cannot_change_the_runner_for_a_later_row(one_worker, name):
    code, attack = PROBE_ATTACKS[name]
    codes = [code, *VICTIMS, DEEP, DIGITS, *FILLERS]
    res = one_worker.run_matrix(SQRT, codes, [Test.assertion(attack), Test.assertion(TEST)])
    assert res.status[0] == ["pass", "pass"], res.errors[0]  # the attack itself ran
    _victims_unharmed(res, 1)


# programs of the newly admitted shapes that try to leave state for the next row
ROW_ATTACKS = {
    "recursion limit low": "import sys\nsys.setrecursionlimit(60)\ndef f(x):\n    return '2.0'\n",
    "recursion limit in a test": "import sys\ndef f(x):\n    sys.setrecursionlimit(60)\n    return '2.0'\n",
    "recursion limit high": ("from sys import setrecursionlimit\nsetrecursionlimit(100000)\n"
                             "def f(x):\n    return '2.0'\n"),
    "digits": "import sys\ndef f(x):\n    sys.set_int_max_str_digits(640)\n    return '2.0'\n",
    "underscore state": ("_seen = []\ndef _note(x):\n    _seen.append(x)\n    return len(_seen)\n"
                         "def f(x):\n    for _ in range(_note(x)):\n        pass\n    return '2.0'\n"),
}


@pytest.mark.parametrize("name", sorted(ROW_ATTACKS))
def test_a_newly_plain_program_leaves_nothing_for_the_next_row(one_worker, name):
    codes = [ROW_ATTACKS[name], *VICTIMS, DEEP, DIGITS, *FILLERS]
    res = one_worker.run_matrix(SQRT, codes, [Test.assertion(TEST), Test.assertion(TEST)])
    assert res.status[0] == ["pass", "pass"], res.errors[0]
    _victims_unharmed(res, 1)


def test_only_the_safe_shapes_are_admitted():
    from matrix.sandbox import harness, purity

    for m in purity.PRELOAD:
        importlib.import_module(m)
    plain = ["import sys\nsys.setrecursionlimit(10000)\ndef f(x):\n    return x\n",
             "import sys\ndef f(x):\n    return min(x, sys.maxsize)\n",
             "from sys import maxsize as big\ndef f(x):\n    return min(x, big)\n",
             "def _h(x):\n    return x\ndef f(xs):\n    return [_h(_) for _ in xs]\n",
             "def f(xs):\n    _n = len(xs)\n    return _n\n"]
    not_plain = ["import sys\ndef f(x):\n    return sys.modules\n",
                 "import sys\ndef f(x):\n    return sys.argv\n",
                 "import sys\ndef f(x):\n    return sys.stdin.read()\n",
                 "import sys\ndef f(x):\n    sys.setprofile(None)\n    return x\n",
                 "from sys import modules\ndef f(x):\n    return x\n",
                 "from sys import stdout\ndef f(x):\n    return x\n",
                 "import sys\ndef f(x):\n    return sys.float_info.__class__\n",
                 "def f(x):\n    return __builtins__\n",
                 "def f(x):\n    __x = 1\n    return x\n",
                 "def f(x):\n    a__b = 1\n    return x\n",
                 "import re\ndef f(x):\n    return re._cache\n",
                 "class E(Exception):\n    def _m(e):\n        return 1\ndef f(x):\n    return x\n",
                 "class E(Exception):\n    _x = 1\ndef f(x):\n    return x\n",
                 "class E(Exception):\n    __x = 1\ndef f(x):\n    return x\n"]
    for text in plain:
        tree = ast.parse(text)
        assert purity.pure_code(tree) and purity.plain_code(tree), text
        assert harness.plain_source(text, "<solution>", False), text
    for text in not_plain:
        try:
            ok = harness.plain_source(text, "<solution>", False)
        except SyntaxError:
            ok = False
        assert not ok, text
    # a test's expressions: no name of a module outside the plain ones that a plain module holds
    for expr, ok in (("f(3)", True), ("f(sys.maxsize)", False), ("f(typing.sys)", False),
                     ("f(re.enum)", False), ("f(statistics.random)", False), ("f(abc.sys)", False),
                     ("f(math.pi)", True)):
        co = compile(expr, "<test>", "eval")
        assert purity.plain_probe(co) is ok, expr


# A test's expression calling the program's own function named with one leading underscore
# (MBPP 798: `assert _sum([1, 2, 3]) == 6`) ran every cell in a fresh process of its own (30 cells
# of the MBPP pool, ~17 ms each, half a second on one worker): a test may read such a *name*, which
# is the program's (no builtin starts with one underscore), never such an *attribute* (``re._cache``
# is a shared dict).
def test_a_test_reads_the_programs_underscore_names_but_no_private_attribute():
    from matrix.sandbox import harness, purity

    for m in purity.PRELOAD:
        importlib.import_module(m)
    if "genuine" not in harness._G:
        harness.prepare()  # (what a zygote captures before any program: compile_probe reads it)
    for expr, ok in (("_sum([1, 2, 3])", True), ("[_f(x) for x in _xs]", True), ("_sum(re._cache)", False),
                     ("re._cache.clear()", False), ("_sum(x._y)", False), ("__import__('os')", False),
                     ("_A__x", False), ("(lambda: re._cache)()", False)):
        co = compile(expr, "<test>", "eval")
        assert purity.fast_pure(co, own_names=True) is ok, expr
        assert (purity.fast_pure(co, own_names=True) and purity.plain_probe(co)) is ok, expr
    compiled = harness.compile_probe(("values", ("_sum([1, 2, 3])",), None, ()), guard=True)
    assert compiled[2] and harness._plain_compiled(compiled)


CACHE_POISON = ("import re\ndef _sum(xs):\n    return sum(xs)\n"
                "def f(x):\n    return '2.0'\n")


def test_a_test_cannot_reach_a_private_attribute_through_an_underscore_name(one_worker):
    # the attack: a test that empties and refills `re`'s shared pattern cache (a private attribute)
    attack = "assert f(_sum([len(re._cache), re._cache.clear() or 0])) == '2.0'"
    res = one_worker.run_matrix(SQRT, [CACHE_POISON, *VICTIMS, DEEP, DIGITS, *FILLERS],
                                [Test.assertion(attack), Test.assertion(TEST)])
    assert res.status[0][1] == "pass"
    _victims_unharmed(res, 1)
    right = "def _sum(xs):\n    return sum(xs)\n"
    res = one_worker.run_matrix(Task("s", "sum", entry_point="_sum"), [right, "def _sum(xs):\n    return 0\n"],
                                [Test.assertion("assert _sum([1, 2, 3]) == 6")])
    assert res.status == [["pass"], ["fail"]]
