"""A program that defines a builtin's name (``abs``, ``sorted``, ``len``, ``set``...) or binds a
standard module's name (``math``) to an object of its own must not change what a test computes
with that name: the test's ``abs`` is the builtin, its ``math`` the module, whatever the program
defines, except the task's entry point (a task may well ask for ``sum``). Before this, a wrong
program defining ``abs = lambda x: 0`` passed ``assert abs(f(1) - 3.14) < 1e-6``: plain
``exec(program); exec(test)`` semantics, a reward-hacking route for RL on MBPP-style tests
(red-team pass 19, found and left open). Each attack below passed on the tree before the fix."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(120)]

TASK = Task("t", "p", entry_point="f")

WRONG_SORTED = "def sorted(x, *a, **k):\n    return [1, 2]\ndef f(x):\n    return [9]\n"

# (a wrong program that defines a builtin's name, a test it passed by that name alone)
FORGERIES = [
    ("def sorted(x):\n    return 42\ndef f(x):\n    return 42\n", "assert f([3, 1]) == sorted([3, 1])"),
    ("abs = lambda x: 0\ndef f(x):\n    return 99\n", "assert abs(f(1) - 3.14) < 1e-6"),
    ("def f(x):\n    return 99\nlen = lambda x: 3\n", "assert len(f(1)) == 3"),
    ("def f(x):\n    return 99\nclass set:\n    def __init__(self, *a): pass\n"
     "    def __eq__(self, o): return True\n", "assert set(f(1)) == set([1, 2])"),
    (WRONG_SORTED, "assert sorted(f([2, 1])) == [1, 2]"),
    (WRONG_SORTED, "r = f([2, 1])\nassert sorted(r) == [1, 2]"),
    (WRONG_SORTED, "def test_f():\n    assert sorted(f([2, 1])) == [1, 2]\n"),
    (WRONG_SORTED, "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                   "        self.assertEqual(sorted(f([2, 1])), [1, 2])\n"),
    (WRONG_SORTED, "try:\n    assert sorted(f([2, 1])) == [1, 2]\nexcept ZeroDivisionError:\n    pass"),
    (WRONG_SORTED, "def check(g):\n    assert sorted(g([2, 1])) == [1, 2]\ncheck(f)"),
    ("import math as m\nmath = type('M', (), {'isclose': staticmethod(lambda *a, **k: True)})\n"
     "def f(x):\n    return 99\n", "assert math.isclose(f(1), 3.14)"),
    ("import math as m\nclass math:\n    pi = 99\ndef f(x):\n    return 99\n", "assert f(1) == math.pi"),
    ("def isinstance(a, b):\n    return True\ndef f(x):\n    return 'x'\n", "assert isinstance(f(1), int)"),
    ("def all(x):\n    return True\ndef f(x):\n    return [0]\n", "assert all(v > 0 for v in f(1))"),
    ("def round(x, n=0):\n    return 3.14\ndef f(x):\n    return 1\n", "assert round(f(1), 2) == 3.14"),
    ("def str(x):\n    return 'ab'\ndef f(x):\n    return 1\n", "assert str(f(1)) == 'ab'"),
    ("def f(x):\n    global abs\n    abs = lambda v: 0\n    return 99\n", "assert abs(f(1) - 3.14) < 1e-6"),
]


SELF_DELETING = "def {n}(*a, **k):\n    del globals()['{n}']\n    return {v}\n"

# review of the first version of this fix (found by the reviewer, each passed it): a shadow that
# removes itself when called, a patched `builtins` restored on the call, call tests
FORGERIES += [
    (SELF_DELETING.format(n="sorted", v="[1, 2]") + "def f(x):\n    return [9]\n",
     "assert sorted(f([2, 1])) == [1, 2]"),
    (SELF_DELETING.format(n="len", v="3") + "def f(x):\n    return 99\n", "assert len(f(1)) == 3"),
    (SELF_DELETING.format(n="round", v="3.14") + "def f(x):\n    return 1\n", "assert round(f(1), 2) == 3.14"),
    (SELF_DELETING.format(n="isinstance", v="True") + "def f(x):\n    return 'x'\n", "assert isinstance(f(1), int)"),
    ("import builtins\n_o = builtins.sorted\ndef _s(*a, **k):\n    builtins.sorted = _o\n    return [1, 2]\n"
     "builtins.sorted = _s\ndef f(x):\n    return [9]\n", "assert sorted(f([2, 1])) == [1, 2]"),
    (WRONG_SORTED, "assert sorted(f([2, 1]), key=len) == [1, 2]"),
    (WRONG_SORTED, "assert len(f([1])) + len(sorted(f([2, 1]))) == 3"),
]

# a standard module the program rebinds or patches, around the call or on the expected side
RE_PATCHED = "import re\nre.sub = lambda *a, **k: 'x'\ndef f(s):\n    return 'x'\n"
FORGERIES += [
    ("class collections:\n    Counter = staticmethod(lambda x: {'a': 2, 'b': 1})\ndef f(s):\n    return 'zzz'\n",
     "assert collections.Counter(f('aab')) == {'a': 2, 'b': 1}"),
    ("class datetime:\n    date = staticmethod(lambda *a: 5)\ndef f():\n    return 5\n",
     "assert f() == datetime.date(2020, 1, 2)"),
    (RE_PATCHED, "assert f('aa') == re.sub('a', 'b', 'aa')"),
    (RE_PATCHED, "def test_r():\n    assert f('aa') == re.sub('a', 'b', 'aa')\n"),
    ("import datetime\ndatetime.date = lambda *a: 5\ndef f():\n    return 5\n",
     "def test_r():\n    assert f() == datetime.date(2020, 1, 2)\n"),
    ("import heapq\nheapq.nlargest = lambda n, xs: [3, 2]\ndef f(x):\n    return [0]\n",
     "assert heapq.nlargest(2, f(1)) == [3, 2]"),
]

# review 21: a program that patches a standard module inside its function, after the test read
# the module's name, computed the test's expected value (generic tests; a split test's expected
# side ran where the program runs); also under a test that catches what it reads
RE_LATE = "import re\ndef f(s):\n    re.sub = lambda *a, **k: 'nope'\n    return 'nope'\n"
COUNTER_LATE = ("import collections\ndef f(s):\n    collections.Counter = lambda *a, **k: {'z': 1}\n"
                "    return {'z': 1}\n")
FORGERIES += [
    (RE_LATE, "def test_a():\n    assert f('x') == re.sub('l+', 'l', 'hellllo')\n"),
    (COUNTER_LATE, "def test_a():\n    assert f('ab') == collections.Counter('ab')\n"),
    (RE_LATE, "assert f('x') == re.sub('l+', 'l', 'hellllo')"),
    (RE_LATE, "got = f('x')\ntry:\n    want = re.sub('l+', 'l', 'hellllo')\nexcept Exception:\n    want = got\n"
              "assert got == want"),
    ("import re\n_o = re.sub\ndef _s(*a, **k):\n    re.sub = _o\n    return 'nope'\nre.sub = _s\n"
     "def f(s):\n    return 'nope'\n", "assert f('x') == re.sub('l+', 'l', 'hellllo')"),
]

CALL_FORGERIES = [
    (SELF_DELETING.format(n="sorted", v="[1, 2]") + "def f(x):\n    return [9]\n", "sorted(f([2, 1]))", "[1, 2]"),
    (WRONG_SORTED, "sorted(f([2, 1]))", "[1, 2]"),
    ("abs = lambda x: 0\ndef f(x):\n    return 99\n", "abs(f(1) - 3)", "0"),
    ("len = lambda x: 3\ndef f(x):\n    return 99\n", "len(f(1))", "3"),
]


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("code,test", FORGERIES, ids=[t.splitlines()[-1][:40] for _, t in FORGERIES])
def test_a_program_defining_a_builtins_name_does_not_pass_a_test_by_it(ex, code, test):
    res = ex.run_matrix(TASK, [code], [Test.assertion(test)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


@pytest.mark.parametrize("code,call,expected", CALL_FORGERIES, ids=[c for _, c, _ in CALL_FORGERIES])
def test_a_call_test_reads_the_builtins_too(ex, code, call, expected):
    res = ex.run_matrix(TASK, [code], [Test.call_expected(call, expected)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


RIGHT = [
    # right programs that define a builtin's name for their own use: still pass
    ("def sorted(x):\n    return 'mine'\ndef f(x):\n    return [v * 2 for v in x]\n",
     "assert sorted(f([2, 1])) == [2, 4]"),
    ("abs = 5\ndef f(x):\n    return 3.14\n", "assert abs(f(1) - 3.14) < 1e-6"),
    ("import math\ndef f(x):\n    return math.pi\n", "assert math.isclose(f(1), 3.14159265, rel_tol=1e-6)"),
    ("import math\nlen = 0\ndef f(x):\n    return [1, 2, 3]\n", "def test_f():\n    assert len(f(1)) == 3\n"),
]


MAX_HELPER = ("def max(a, b):\n    return a if a > b else b\ndef f(xs):\n    m = xs[0]\n    for x in xs:\n"
              "        m = max(m, x)\n    return [m, m]\n")
DATE = "import datetime\ndef f():\n    return datetime.date(2020, 1, 2)\n"
RIGHT += [
    # a right program's own helper under a builtin's name, which the builtin's reading of the test
    # must not call (the review: its TypeError was the cell's error)
    (MAX_HELPER, "assert max(f([1, 3])) == 3"),
    # the program's standard modules stay the program's where they are the modules themselves: the
    # test's changes reach the program and the program's values compare with the module's (review)
    ("import time\ndef f():\n    return time.time()\n",
     "def test_r():\n    time.time = lambda: 5.0\n    assert f() == 5.0\n"),
    ("import math\ndef f():\n    return math.pi\n", "def test_r():\n    math.pi = 3\n    assert f() == 3\n"),
    ("import time\ndef f():\n    return time.time()\n",
     "def test_r():\n    from unittest import mock\n    with mock.patch.object(time, 'time', return_value=5.0):\n"
     "        assert f() == 5.0\n"),
    (DATE, "assert f() == datetime.date(2020, 1, 2)"),
    ("import datetime\ndef f():\n    return datetime.timedelta(days=2)\n", "assert f() == datetime.timedelta(days=2)"),
    ("import re\nP = re.compile('a')\ndef f(s):\n    return P\n",
     "def test_r():\n    assert isinstance(f('x'), re.Pattern)\n"),
    ("import enum\nclass C(enum.Enum):\n    A = 1\ndef f():\n    return C.A\n",
     "def test_r():\n    assert isinstance(f(), enum.Enum)\n"),
    (DATE, "def test_r():\n    assert isinstance(f(), datetime.date)\n"),
    (DATE, "assert type(f()) is datetime.date"),
    # (session 23: the value classes read through the program's module are the test's own)
    ("import fractions\ndef f():\n    return fractions.Fraction(1, 3)\n", "assert type(f()) is fractions.Fraction"),
    ("import decimal\ndef f():\n    return decimal.Decimal('1.5')\n",
     "def test_r():\n    assert type(f()) is decimal.Decimal and f() == decimal.Decimal('1.5')\n"),
    (DATE, "def test_r():\n    assert (f() - datetime.date(2020, 1, 1)).days == 1\n"),
]


def test_a_programs_function_named_like_a_standard_module_stays_the_programs(ex):
    """A module's name the test calls (``select(xs, 2)``) is not read as that module: only a name
    the test reads as a module (``math.isclose``) is the module itself (the review: an error)."""
    code = "def select(xs, k):\n    return sorted(xs)[:k]\ndef f(xs):\n    return select(xs, 1)\n"
    tests = [Test.assertion("assert select([3, 1, 2], 2) == [1, 2]"),
             Test.assertion("def test_s():\n    assert select([3, 1, 2], 2) == [1, 2]\n")]
    res = ex.run_matrix(TASK, [code], tests)
    assert res.status == [["pass", "pass"]], (res.status, res.errors)


def test_a_call_test_does_not_call_a_programs_helper_under_a_builtins_name(ex):
    mine = "def sorted(x):\n    return 'mine'\ndef f(x):\n    return [v * 2 for v in x]\n"
    res = ex.run_matrix(TASK, [MAX_HELPER, mine],
                        [Test.call_expected("max(f([1, 3]))", "3"), Test.call_expected("sorted(f([2, 1]))", "[2, 4]")])
    assert res.status[0][0] == "pass" and res.status[1][1] == "pass", (res.status, res.errors)


@pytest.mark.parametrize("code,test", RIGHT, ids=[str(i) for i in range(len(RIGHT))])
def test_a_right_program_defining_a_builtins_name_still_passes(ex, code, test):
    res = ex.run_matrix(TASK, [code], [Test.assertion(test)])
    assert res.status == [["pass"]], (res.status, res.errors)


def test_the_entry_point_may_be_a_builtins_name(ex):
    """A task asking for ``sum`` (or ``max``...) tests the program's ``sum``: right passes, wrong fails."""
    task = Task("s", "write sum", entry_point="sum")
    right = "def sum(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n"
    wrong = "def sum(xs):\n    return 0\n"
    tests = [Test.assertion("assert sum([1, 2, 3]) == 6"),
             Test.assertion("assert abs(sum([1.5, 2]) - 3.5) < 1e-9"),
             Test.assertion("def test_s():\n    assert sum([4]) == 4\n"),
             Test.assertion("x = sum([1, 1])\nassert x == 2")]
    res = ex.run_matrix(task, [right, wrong], tests)
    assert res.status[0] == ["pass"] * 4, (res.status, res.errors)
    assert all(s in ("fail", "error") for s in res.status[1]), res.status


def test_without_an_entry_point_the_called_function_is_the_programs(ex):
    """A task without ``entry_point``: the function its tests call (inferred) is the program's."""
    task = Task("s", "write max")
    right = "def max(xs):\n    m = xs[0]\n    for x in xs:\n        m = x if x > m else m\n    return m\n"
    wrong = "def max(xs):\n    return -1\n"
    res = ex.run_matrix(task, [right, wrong], [Test.assertion("assert max([1, 5, 2]) == 5")])
    assert res.status == [["pass"], ["fail"]], (res.status, res.errors)


@pytest.mark.parametrize("wrap", ["chr(f(97)) == 'a'", "ord(f(1)) == 97", "divmod(f(7), 2) == (3, 1)",
                                  "pow(f(2), 2) == 4", "hash(f(1)) == 3", "next(f(1)) == 3"])
def test_the_inferred_entry_point_is_never_a_builtin_that_wraps_the_call(ex, wrap):
    """A task without an entry point: the name inferred from the tests' calls is the function they
    test, never a builtin around it (the review: `chr = lambda x: 'a'` passed ``chr(f(97)) == 'a'``)."""
    name = wrap.split("(")[0]
    task = Task("s", "no entry point")
    code = f"{name} = lambda *a, **k: {wrap.split(' == ')[1]}\ndef f(x):\n    return 0\n"  # the expected value
    res = ex.run_matrix(task, [code], [Test.assertion("assert " + wrap)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)
