"""On honest code, a test passes in the matrix exactly when it passes in plain Python: every
assert shape (truth values of non-plain results such as ``re.Match``, ``is``, ``in``, chained
comparisons, ``not``, ``bool()``, lengths and items of the program's own objects, several calls,
generic tests), protected or not. The oracle is plain Python itself: code and test run in one
fresh interpreter, the test with the builtins' and standard modules' own names (but the entry
point's) whatever the program binds (docs/contracts.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.plans import plan_test
from matrix.tasks import Task, Test

MATCH = "import re\ndef f(s):\n    return re.match(r'a+', s)\n"
BOX = ("class Box:\n    def __init__(self, items):\n        self.items = list(items)\n"
       "    def __len__(self):\n        return len(self.items)\n"
       "    def __contains__(self, x):\n        return x in self.items\n"
       "    def __getitem__(self, i):\n        return self.items[i]\n"
       "    def __bool__(self):\n        return bool(self.items)\n"
       "def f(n):\n    return Box(range(n))\n")
GEN = "def f(n):\n    return (i * i for i in range(n))\n"
NUM = "def f(x):\n    return x * 2\n"
NONE = "def f(x):\n    return None if x < 0 else x\n"
MUT = "def f(xs):\n    xs.append(1)\n    return len(xs)\n"
DIV = "def f(a, b):\n    return a // b, a % b\n"
ALL = "all = lambda xs: True\ndef f(x):\n    return x\n"  # the test's all is the builtin
SHADOW = "range = lambda n: [5]\ndef f(x):\n    return 2 * x if x != 5 else 0\n"  # the test's range is the builtin
CASES = [
    (MATCH, "assert f('aa')"), (MATCH, "assert not f('b')"), (MATCH, "assert f('b')"),
    (MATCH, "assert f('aa') is not None"), (MATCH, "assert f('b') is None"), (MATCH, "assert bool(f('a'))"),
    (MATCH, "assert f('aaa').group() == 'aaa'"), (MATCH, "assert f('aaa') == 'aaa'"),
    (BOX, "assert f(3)"), (BOX, "assert not f(0)"), (BOX, "assert len(f(3)) == 3"), (BOX, "assert 2 in f(3)"),
    (BOX, "assert 5 not in f(3)"), (BOX, "assert f(3)[1] == 1"), (BOX, "assert list(f(3)) == [0, 1, 2]"),
    (GEN, "assert list(f(3)) == [0, 1, 4]"), (GEN, "assert f(3)"), (GEN, "assert sum(f(4)) == 14"),
    (NUM, "assert 0 <= f(2) < 10"), (NUM, "assert 0 <= f(6) < 10"), (NUM, "assert f(2) in [4, 5]"),
    (NUM, "assert f(2) in (1, 2)"), (NUM, "assert f(1) == 2 == f(1)"), (NUM, "assert f(1) < f(2) < f(3)"),
    (NUM, "assert f(1) == 2 and f(2) == 4"), (NUM, "assert f(1) == 3 or f(2) == 4"),
    (NUM, "assert f(True) == 2"), (NUM, "assert f(0.5) == 1.0"), (NUM, "assert f(2) is not None"),
    (NUM, "assert not f(0)"), (NUM, "assert f(3) != 7"), (NUM, "assert [f(i) for i in range(3)] == [0, 2, 4]"),
    (NUM, "x = f(3)\nassert x == 6\nassert x > 5"), (NUM, "assert type(f(1)) == int"),
    (NUM, "assert isinstance(f(1.5), float)"), (NUM, "assert f('ab') == 'abab'"),
    (NONE, "assert f(-1) is None"), (NONE, "assert f(2) is None"), (NONE, "assert not f(-1)"),
    (NONE, "assert f(0) == 0 and f(-1) is None"),
    # several statements (most become values plans: see test_straight_line_tests_are_judged_here)
    (NUM, "r = f(2); assert r == 4"), (NUM, "r = f(2)\nassert r + 1 == 5\nassert r * 2 == 9"),
    (NUM, "expected = 6\nassert f(3) == expected"), (NUM, "r = f(3)\nassert r == 6, f'got {r}'"),
    (NUM, "r = f(3)\nassert r == 7, f'got {r}'"), (NUM, "f(1)\nassert f(2) == 4"),
    (NUM, "import math\nassert math.isclose(f(0.1), 0.2)"), (NUM, "r = f(2)\nr2 = f(r)\nassert r2 == 8"),
    (NUM, "r = f(2)\nassert r == 4\nassert f(r) == 9"),
    (NUM, "x = [1, 2]\nassert f(x) == [1, 2, 1, 2]\nassert x == [1, 2]"),
    (NUM, "'doc'\nr = f(2)\npass\nassert r"), (NUM, "r = f(0)\nassert r"),
    (MUT, "x = [0]\nassert f(x) == 2"), (MUT, "x = [0]\nassert f(x) == 2\nassert x == [0, 1]"),
    (MUT, "x = [0]\nf(x)\nassert x == [0, 1]"), (MUT, "x = [0]\nf(x)\nassert x == [0]"),
    (DIV, "q, r = f(7, 2)\nassert q == 3\nassert r == 1"), (DIV, "q, r = f(7, 2)\nassert q == 3 and r == 2"),
    (DIV, "q, r, s = f(7, 2)\nassert q == 3"), (DIV, "[q, r] = f(9, 4)\nassert (q, r) == (2, 1)"),
    (GEN, "a, b = f(2)\nassert (a, b) == (0, 1)"), (GEN, "a, b = f(3)"),
    (GEN, "g = f(3)\nassert list(g) == [0, 1, 4]"),
    (NONE, "r = f(-1)\nassert r is None"), (BOX, "b = f(3)\nassert len(b) == 3\nassert 2 in b"),
    (BOX, "b = f(3)\nassert 7 in b"), (MATCH, "m = f('aa')\nassert m.group() == 'aa'"),
    # loops over constants (written out as straight-line statements) and loops that stay generic
    (NUM, "for i in range(3):\n    assert f(i) == 2 * i"), (NUM, "for x, y in [(1, 2), (2, 5)]:\n    assert f(x) == y"),
    (NUM, "cases = [(1, 2), (3, 6)]\nfor a, b in cases:\n    assert f(a) == b"),
    (NUM, "for i, x in enumerate([0, 1]):\n    assert f(x) == 2 * i"),
    (NUM, "for a, b in zip([1, 2], [2, 5]):\n    r = f(a)\n    assert r == b, f'got {r}'"),
    (NUM, "for i in range(2):\n    for j in range(2):\n        assert f(i + j) == 2 * (i + j)"),
    (NUM, "for s in ['ab', 'c']:\n    assert f(s) == s + s"), (NUM, "for x in (1, 2):\n    assert f(x) != 4"),
    (NUM, "for x in [1, 2]:\n    assert f(x) == 2 * x\nassert x == 2"), (NUM, "for x in {1, 2}:\n    assert f(x)"),
    (MUT, "for n in range(2):\n    x = [0] * n\n    assert f(x) == n + 1"),
    (MUT, "for x in [[0], [1]]:\n    assert f(x) == 2\n    assert x == [0]"),
    (SHADOW, "for i in range(3):\n    assert f(i) == 2 * i"), (SHADOW, "for i in range(3):\n    assert f(i) != 7"),
    # comprehensions over constants (written out as displays)
    (NUM, "assert all(f(i) == 2 * i for i in range(5))"), (NUM, "assert all(f(x) == y for x, y in [(1, 2), (2, 5)])"),
    (NUM, "assert sum(f(i) for i in range(3)) == 6"), (NUM, "assert {f(i) for i in range(3)} == {0, 2, 4}"),
    (NUM, "assert [f(i) for i in range(10) if i % 2 == 0] == [0, 4, 8, 12, 16]"),
    (NUM, "assert len(f(i) for i in range(3)) == 3"), (NUM, "assert any(f(i) == 7 for i in range(4))"),
    (NUM, "assert sorted(f(c) for c in 'ba') == ['aa', 'bb']"), (NUM, "assert max(f(i) for i in [3, 1]) == 6"),
    (ALL, "assert all(f(i) == 99 for i in range(3))"), (ALL, "assert [f(i) for i in range(2)] == [0, 1]"),
    (MUT, "assert [f(x) == len(x) for x in [[0], [1, 2]]] == [True, True]"),
    (MUT, "assert all(f(x) == 2 for x in [[0], [1]])"),
    (SHADOW, "assert [f(i) for i in range(3)] == [0, 2, 4]"), (SHADOW, "assert sum(f(i) for i in range(3)) == 0"),
]


# the test's builtins are the builtins and its standard modules the modules, whatever the program
# binds, except the entry point (docs/contracts.md): the program's names, less those, are the test's
_ORACLE = """
import builtins, importlib, sys
g = {"__name__": "__main__"}
exec(compile(sys.argv[1], "<program>", "exec"), g)
t = {"__name__": "__main__"}
for n, v in g.items():
    if n == "f" or not (hasattr(builtins, n) or n in sys.stdlib_module_names):
        t[n] = v
    elif n in sys.stdlib_module_names and not hasattr(builtins, n):
        t[n] = importlib.import_module(n)
exec(compile(sys.argv[2], "<test>", "exec"), t)
"""


def plain_python(code: str, test: str) -> bool:
    p = subprocess.run([sys.executable, "-c", _ORACLE, code, test], capture_output=True, timeout=60)
    return p.returncode == 0


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=5.0, workers=2)) as e:
        yield e


def test_every_assert_shape_agrees_with_plain_python(ex):
    task = Task("t", "assert shapes", entry_point="f")
    codes = list(dict.fromkeys(c for c, _ in CASES))
    tests = [Test.assertion(t) for _, t in CASES]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:  # plain Python's runs beside the matrix
        plain = pool.map(lambda case: plain_python(*case), CASES)
        res = ex.run_matrix(task, codes, tests)
        wants = list(plain)
    wrong = []
    for j, (code, test) in enumerate(CASES):
        i = codes.index(code)
        got = res.status[i][j] == "pass"
        want = wants[j]
        if got != want:
            wrong.append((test, res.status[i][j], res.errors[i][j], plan_test(tests[j]).mode))
    assert not wrong, wrong


def test_straight_line_tests_are_judged_here():
    """Tests of several statements whose only contact with the program is calls on literals
    are split like one assert: the values come back, the claims are judged in the parent."""
    values = ["r = f(2); assert r == 4", "expected = 6\nassert f(3) == expected", "f(1)\nassert f(2) == 4",
              "import math\nassert math.isclose(f(0.1), 0.2)", "x = [0]\nassert f(x) == 2",
              "q, r = f(7, 2)\nassert q == 3\nassert r == 1", "r = f(2)\nassert r + 1 == 5\nassert r * 2 == 9",
              "for i in range(3):\n    assert f(i) == 2 * i",
              "for a, b in [(1, 2), (2, 4)]:\n    r = f(a)\n    assert r == b", "assert f(1) == 2 and f(2) == 4",
              "assert f(1) == 2 and (f(2) == 4 and f(3)), 'message'"]
    generic = ["r = f(2)\nr2 = f(r)\nassert r2 == 8", "x = [0]\nf(x)\nassert x == [0, 1]",
               "r = f(1)\nr = f(2)\nassert r == 4",
               "m = f('aa')\nassert m.group() == 'aa'", "try:\n    f(1)\nexcept ValueError:\n    pass",
               "for x in {1, 2}:\n    assert f(x)", "for i in range(1000):\n    assert f(i)",
               "for x in [1, 2]:\n    if x:\n        break", "for x in f(3):\n    assert x",
               "for x in [1, 2]:\n    assert f(x)\nassert x == 2", "for x in [1]:\n    assert f(x)\nelse:\n    pass"]
    for t in values:
        plan = plan_test(Test.assertion(t))
        assert plan.mode == "values", t
        assert "math" not in plan.names  # the test imports math itself (or does not use it)
    for t in generic:
        assert plan_test(Test.assertion(t)).mode == "exec", t
    plan = plan_test(Test.assertion("expected = [1, 2, 3]\nr = f(4)\nassert r == expected"))
    assert plan.exprs == ("f(4)",)  # the expected value stays in the parent
    plan = plan_test(Test.assertion("assert all(f(i) == i for i in range(2))"))
    assert plan.exprs == ("f(0)", "f(1)") and plan.names == ("all", "range")
    plan = plan_test(Test.assertion("for i, x in enumerate('ab'):\n    assert f(x) == i"))
    assert plan.exprs == ("f('a')", "f('b')") and plan.names == ("enumerate",)  # a shadowed one: generic


def test_a_hostile_test_cannot_make_planning_copy_without_bound(monkeypatch):
    """Writing loops and comprehensions out, and putting a test's literals in where it reads them,
    copies syntax trees in the parent: a 15 KB test must not make it copy millions of nodes (64
    copies of a 5,000-item call, or a 5,000-item literal read 300 times, took 8-23 s before the
    bound). Counted as nodes copied, not as time."""
    import ast
    import copy

    from matrix.plans import MAX_WRITTEN_NODES

    copied = [0]
    real = copy.deepcopy

    def counting(x, *a, **k):
        if isinstance(x, ast.AST):
            copied[0] += sum(1 for _ in ast.walk(x))
        return real(x, *a, **k)

    monkeypatch.setattr(copy, "deepcopy", counting)
    big = "[" + ", ".join(["1"] * 5000) + "]"
    refs = ", ".join(["x"] * 300)
    for src in ["x = " + big + "\nassert f(" + refs + ") == 0\n",
                "for x in [" + big + "]:\n    assert f(" + refs + ") == 0\n",
                "for i in range(64):\n    for j in range(64):\n        assert f(" + big + ") == 0\n",
                "for i in range(64):\n    assert f(" + big + ") == 0\n",
                "assert [f(" + big + ") for i in range(64)] == []"]:
        copied[0] = 0
        plan_test(Test.assertion(src))
        assert copied[0] <= 2 * MAX_WRITTEN_NODES, (src[:40], copied[0])


STOPS = ("def f(x):\n    if x == 3:\n        raise ValueError('three')\n    if x == 4:\n        while True:\n"
         "            pass\n    return x + 1\n")
STATUS_CASES = [  # a plain run stops at the first false claim: a later raise or hang is never reached
    "assert f(1) == 5\nassert f(3) == 4", "r = f(1)\nassert r == 5\nassert f(3) == 4",
    "assert f(1) == 5\nassert f(4) == 5", "for x in [1, 3]:\n    assert f(x) == 5",
    "for x in [1, 4]:\n    assert f(x) == 5", "assert f(1) == 5 and f(3) == 4", "assert f(1) == 5 and f(4) == 4",
    "assert f(1) == 5\nassert f(3) == 4, 'message'", "r = f(1)\nassert r > 9\ns = f(3)",
    "assert 0 is False\nr = f(3)", "assert None in [2, 3]\nassert f(4) == 5",
    "assert f(1) == 5\nassert math.isclose(f(2), 3)", "assert f(1) == 5\nassert math.isclose(f(3), 3)",
    "assert f(1) == 2\nassert math.isclose(f(2), 3)",  # math is not imported: NameError once reached
    "assert all(f(x) == 5 for x in [1, 3])", "for y in [5]:\n    assert all(f(x) == y for x in (1, 4))",
    # ... and where it is reached first, the error or timeout stands
    "assert f(1) == 2 and f(3) == 4", "assert f(1) == 2 and f(4) == 5", "r = f(1)\ns = f(3)\nassert r == 5",
    "assert f(1) == 2\nassert f(3) == 4", "assert f(1) == 2\nassert f(4) == 5", "x = f(1)\nassert x == 2\ny = f(3)",
    "assert [f(1), f(3)] == [5, 4]", "assert f(1) == 2\nassert f(2) == 9", "assert all(f(x) == x + 1 for x in [1, 3])",
    "assert all([f(1) == 5, f(3) == 4])", "assert any(f(x) == 5 for x in [1, 3])",
    # a generator that stops before the call that raises or hangs: a plain run passes
    "assert any(f(x) == 2 for x in [1, 3])", "assert not all(f(x) == 5 for x in [1, 3])",
    "assert not all(f(x) == 5 for x in [1, 4])", "assert all(f(x) == 5 for x in [1, 3]) is False",
]


def plain_status(code: str, test: str, timeout: float) -> str:
    try:
        p = subprocess.run([sys.executable, "-c", code + "\n" + test + "\n"], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode == 0:
        return "pass"
    last = p.stderr.decode(errors="replace").strip().splitlines()[-1]
    return "fail" if last.startswith("AssertionError") else "error"


def test_a_test_that_fails_before_a_later_call_raises_or_hangs_fails_as_in_plain_python():
    """A split test runs its holes before the parent judges; when a later hole raises or hangs,
    the sandbox sends the values it had, and a claim that a plain run judges earlier decides."""
    task = Task("t", "statuses", entry_point="f")
    tests = [Test.assertion(t) for t in STATUS_CASES]
    lazy = ("any(", "not all(", ") is False")  # generators a plain run may stop early: run as written
    assert [plan_test(Test.assertion(t)).names for t in STATUS_CASES if "math." in t] == [("math",)] * 3
    assert all((plan_test(t).mode == "exec") == any(x in t.test for x in lazy) for t in tests)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:  # the plain runs that hang take their whole timeout: beside the matrix
        plain = pool.map(lambda t: plain_status(STOPS, t, 3.0), STATUS_CASES)
        with Executor(ExecConfig(timeout=2.0, workers=2)) as e:  # generic cells: 2 processes, room for a busy machine
            res = e.run_matrix(task, [STOPS], tests)
        want = list(plain)
    wrong = [(t, res.status[0][j], want[j]) for j, t in enumerate(STATUS_CASES) if res.status[0][j] != want[j]]
    assert not wrong, wrong


def test_values_sent_with_a_raise_can_only_turn_it_into_a_fail():
    """The values of the holes before a raise or a hang are claims like any other: they can make
    the verdict ``fail`` (a claim a plain run judges first is false), never ``pass``, and
    malformed ones, a full set of values or a shadowed name leave the error standing."""
    import json

    from matrix.sandbox.records import CellRecord, Frame, Outcome
    from matrix.verdicts import interpret

    plan = plan_test(Test.assertion("r = f(1)\nassert r == 5\nassert all(f(i) == i for i in range(2))"))
    assert plan.mode == "values" and plan.names == ("all", "range") and len(plan.exprs) == 3

    def raised(extra):
        body = json.dumps(["test", "ValueError", "ValueError: three", "other", *extra]).encode()
        return interpret(CellRecord(0, Outcome.CLAIM, 0, 0.1, bytes([int(Frame.RAISED)]) + body), plan,
                         json.loads(body), 1.0, 1 << 20).status

    def hung(payload):
        return interpret(CellRecord(0, Outcome.TIMEOUT, 0, 1.0, payload), plan, None, 1.0, 1 << 20).status

    assert raised([[[2], [0, 0]]]) == "fail"  # f(1) gave 2, a plain run stops at `assert r == 5`
    assert raised([[[5], [0, 0]]]) == "error"  # the first claim holds: the raise is reached
    assert raised([]) == "error"
    assert raised([[[2], [2, 0]]]) == raised([[[2], [0, 1]]]) == "error"  # the program shadows all / range
    assert raised([[[2, 0, 1], [0, 0]]]) == "error"  # every hole ran: the raise came after them
    assert raised([[[2]]]) == raised([["x"]]) == raised([7]) == raised([[[2], [0]]]) == "error"
    assert hung(b'[[2],[0,0]]') == "fail"
    assert hung(b'[[5],[0,0]]') == hung(b"") == hung(b"garbage") == hung(b'[[5,0,1],[0,0]]') == "timeout"


def _random_test(rng) -> str:
    """A random straight-line test: asserts over comparisons, and/or/not, chained comparisons,
    generators (all, any, sum), comprehensions, names bound to calls, loops over constants."""
    def arg():
        return rng.choice([0, 1, 2, 3, 5])  # f(3) raises, f(5) returns None

    def atom(d):
        r = rng.random()
        if r < 0.55 or d > 1:
            return f"f({arg()})" if r < 0.8 else str(rng.randint(0, 6))
        return rng.choice([f"({atom(d + 1)} + {atom(d + 1)})", f"max({atom(d + 1)}, {atom(d + 1)})"])

    def cond(d=0):
        r = rng.random()
        if d < 2 and r < 0.3:
            return rng.choice([f"({cond(d + 1)} and {cond(d + 1)})", f"({cond(d + 1)} or {cond(d + 1)})",
                               f"not {cond(d + 1)}"])
        xs = [arg() for _ in range(rng.randint(1, 3))]
        if r < 0.45:
            return f"{rng.choice(['all', 'any'])}(f(x) == {rng.choice(['x + 1', '2', 'None'])} for x in {xs})"
        if r < 0.55:
            return rng.choice([f"sum(f(x) for x in {xs}) == {rng.randint(0, 9)}",
                               f"[f(x) for x in {xs}] == {[x + 1 for x in xs]}"])
        op = rng.choice(["==", "==", "!=", "<"])
        return f"{atom(0)} {op} {atom(0)}" + (f" {op} {atom(0)}" if rng.random() < 0.1 else "")

    lines: list[str] = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.6:
            lines.append(f"assert {cond()}")
        elif r < 0.75:
            lines.append(f"r{len(lines)} = f({arg()})")
        elif r < 0.85 and any(x.startswith("r") for x in lines):
            lines.append(f"assert {[x.split()[0] for x in lines if x.startswith('r')][-1]} == {rng.randint(0, 6)}")
        else:
            lines.append(f"for x in {[arg() for _ in range(rng.randint(1, 3))]}:\n    assert f(x) == x + 1")
    return "\n".join(lines)


def test_random_straight_line_tests_pass_exactly_when_plain_python_passes(ex):
    """Differential check on 120 random tests (fixed seed) against a program that raises on one
    input and returns None on another: split or generic, short-circuits and generators included,
    pass / not pass is plain Python's. (It found `any(...)` written out: a pass turned error.)"""
    import random

    rng = random.Random(20261126)
    code = "def f(x):\n    if x == 3:\n        raise ValueError('three')\n    return None if x == 5 else x + 1\n"
    tests = list(dict.fromkeys(_random_test(rng) for _ in range(120)))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:  # plain Python's runs beside the matrix
        plain = pool.map(lambda t: plain_python(code, t), tests)
        res = ex.run_matrix(Task("t", "random tests", entry_point="f"), [code], [Test.assertion(t) for t in tests])
        want = list(plain)
    wrong = [(t, res.status[0][j]) for j, t in enumerate(tests) if (res.status[0][j] == "pass") != want[j]]
    assert not wrong, wrong
    assert sum(plan_test(Test.assertion(t)).mode == "values" for t in tests) > len(tests) // 3


def test_a_wrong_count_of_values_to_unpack_is_an_error_as_in_plain_python(ex):
    """``a, b = f(x)`` is checked in the parent (the count of values); a plain run raises
    ``ValueError`` there, so the verdict is ``error``, and a later claim is never reached."""
    task = Task("t", "unpacking", entry_point="f")
    cases = ["q, r, s = f(7, 2)", "q, r, s = f(7, 2)\nassert q == 9", "q, r = f(7, 2)\nassert q == 9",
             "assert f(7, 2) == (3, 1)\nq, = f(7, 2)", "q, r = f(7, 2)\nassert (q, r) == (3, 1)"]
    res = ex.run_matrix(task, [DIV], [Test.assertion(t) for t in cases])
    got = [res.status[0][j] for j in range(len(cases))]
    assert got == [plain_status(DIV, t, 10.0) for t in cases] == ["error", "error", "fail", "error", "pass"]
    assert all(plan_test(Test.assertion(t)).mode == "values" for t in cases)


def test_values_before_a_raise_that_exceed_the_output_cap_leave_the_error_or_timeout():
    """The values sent with a raise or a hang are dropped when they exceed the output cap (they
    would turn the frame into an output-limit claim): the error or the timeout stands."""
    code = STOPS.replace("return x + 1", "return 'x' * 700_000 if x == 1 else x + 1")
    cases = ["r = f(1)\ns = f(1)\nassert r == 'y'\nt = f(3)", "r = f(1)\ns = f(1)\nassert r == 'y'\nt = f(4)",
             "r = f(1)\nassert r == 'y'\nt = f(3)"]
    with Executor(ExecConfig(timeout=1.0, workers=1, max_output_bytes=1 << 20)) as e:
        res = e.run_matrix(Task("t", "cap", entry_point="f"), [code], [Test.assertion(t) for t in cases])
    assert res.status[0] == ["error", "timeout", "fail"]
