"""Verdicts on values that are not plain builtins mean what plain Python says: the standard
library's dict and tuple subclasses keep their type and behaviour on the way out of the sandbox,
and two objects of the program compare with the program's own ``==`` whatever the test's shape
(red-team pass 12: both were judged on a plain copy, failing right programs and passing wrong
ones). Each case lists a right and a wrong program and the verdicts ``python -c code+test``
gives them."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


LEVEL = "from enum import IntEnum\nclass Level(IntEnum):\n    LOW = 1\n    HIGH = 2\n"
COLOR = "from enum import Enum\nclass Color(str, Enum):\n    RED = 'red'\n    BLUE = 'blue'\n"
PERM = "from enum import IntFlag\nclass P(IntFlag):\n    R = 4\n    W = 2\n    X = 1\n"
STACK = ("class Stack(list):\n    def push(self, x):\n        self.append(x)\n"
         "    def peek(self):\n        return self[-1]\n")
POINT = "from dataclasses import dataclass\n@dataclass(frozen=True)\nclass Point:\n    x: int\n    y: int\n"
CASES = {
    "counter": ("count",
                ["from collections import Counter\ndef count(s):\n    return Counter(s)\n",
                 "def count(s):\n    return {c: s.count(c) for c in s}\n"],
                ["c = count('aab')\nassert c['z'] == 0",
                 "c = count('aab')\nassert c.most_common(1) == [('a', 2)]",
                 "assert count('aab') + count('b') == {'a': 2, 'b': 2}",
                 "assert count('aab') == {'a': 2, 'b': 1}"],
                [["pass"] * 4, ["error", "error", "error", "pass"]]),
    "ordered": ("by_value",
                ["from collections import OrderedDict\n"
                 "def by_value(d):\n    return OrderedDict(sorted(d.items(), key=lambda kv: kv[1]))\n",
                 "from collections import OrderedDict\ndef by_value(d):\n    return OrderedDict(d)\n"],
                ["from collections import OrderedDict\n"
                 "assert by_value({'a': 2, 'b': 1}) == OrderedDict([('b', 1), ('a', 2)])",
                 "assert list(by_value({'a': 2, 'b': 1})) == ['b', 'a']",
                 "assert by_value({'a': 2, 'b': 1}) == {'a': 2, 'b': 1}"],
                [["pass", "pass", "pass"], ["fail", "fail", "pass"]]),
    "defaultdict": ("groups",
                    ["from collections import defaultdict\ndef groups(ws):\n    g = defaultdict(list)\n"
                     "    for w in ws:\n        g[len(w)].append(w)\n    return g\n",
                     "def groups(ws):\n    g = {}\n    for w in ws:\n        g.setdefault(len(w), []).append(w)\n"
                     "    return g\n"],
                    ["g = groups(['ab'])\nassert g[5] == []", "assert type(groups(['a'])) is dict",
                     "assert groups(['ab', 'c']) == {2: ['ab'], 1: ['c']}"],
                    [["pass", "fail", "pass"], ["error", "pass", "pass"]]),
    "namedtuple": ("mk",
                   ["from collections import namedtuple\nP = namedtuple('P', 'x y')\n"
                    "def mk(a, b):\n    return P(a, b)\n",
                    "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int\n"
                    "def mk(a, b):\n    return P(b, a)\n",
                    "def mk(a, b):\n    return (a, b)\n"],
                   ["p = mk(1, 2)\nassert p.x == 1", "assert mk(1, 2) == (1, 2)", "assert type(mk(1, 2)) is tuple",
                    "assert repr(mk(1, 2)) == 'P(x=1, y=2)'"],
                   [["pass", "pass", "fail", "pass"], ["fail", "fail", "fail", "fail"],
                    ["error", "pass", "pass", "fail"]]),
    "objects": ("move",
                [POINT + "def move(p):\n    return Point(p.x + 1, p.y)\n", POINT + "def move(p):\n    return p\n"],
                ["assert move(Point(0, 0)) == Point(1, 0)", "assert move(Point(0, 0)) != Point(0, 0)",
                 "assert move(Point(0, 0)) in {Point(1, 0)}", "assert [move(Point(0, 0))] == [Point(1, 0)]",
                 "assert move(Point(0, 0)) == (1, 0)"],
                [["pass", "pass", "pass", "pass", "fail"], ["fail", "fail", "fail", "fail", "fail"]]),
    "exceptions": ("check",
                   ["class ApiError(Exception):\n    def __init__(self, code):\n"
                    "        super().__init__(f'error {code}')\n        self.code = code\n"
                    "def check(x):\n    if x < 0:\n        raise ApiError(400)\n    raise ValueError('neg', x)\n",
                    "class ApiError(Exception):\n    pass\ndef check(x):\n    if x < 0:\n        raise ApiError(404)\n"
                    "    raise ValueError('neg')\n"],
                   ["try:\n    check(1)\nexcept ValueError as e:\n    assert e.args == ('neg', 1)",
                    "try:\n    check(-1)\nexcept ApiError as e:\n    assert e.code == 400",
                    "try:\n    check(-1)\nexcept Exception as e:\n    assert e.args[0] in ('error 400', 400)"],
                   [["pass", "pass", "pass"], ["fail", "error", "fail"]]),
    # red-team pass 14: an enum member with a builtin mixin (IntEnum, ``class C(str, Enum)``,
    # IntFlag) crossed as its plain value, so a program returning plain 2 passed ``is Level.HIGH``
    # (small ints are cached) and the right one failed ``is Color.RED`` and ``P.W in perm()``
    "enum_int": ("level",
                 [LEVEL + "def level():\n    return Level.HIGH\n", LEVEL + "def level():\n    return 2\n",
                  LEVEL + "def level():\n    return Level.LOW\n"],
                 ["assert level() is Level.HIGH", "x = level()\nassert x is Level.HIGH", "assert level() == 2",
                  "assert level() == Level.HIGH", "assert level() in {Level.HIGH}", "assert level() > Level.LOW",
                  "assert level().name == 'HIGH'", "assert level() is not Level.HIGH",
                  "r = level()\nassert isinstance(r, Level) and isinstance(r, int) and r == 2",
                  "assert [level()] == [2] and {level(): 'x'}[2] == 'x'"],
                 [["pass", "pass", "pass", "pass", "pass", "pass", "pass", "fail", "pass", "pass"],
                  ["fail", "fail", "pass", "pass", "pass", "pass", "error", "pass", "fail", "pass"],
                  ["fail", "fail", "fail", "fail", "fail", "fail", "fail", "pass", "fail", "fail"]]),
    "enum_str": ("color",
                 [COLOR + "def color():\n    return Color.RED\n", COLOR + "def color():\n    return 'red'\n"],
                 ["assert color() is Color.RED", "assert color() == 'red'", "assert color() == Color.RED",
                  "c = color()\nassert c == 'red' and c is Color.RED", "assert color().value == 'red'",
                  "c = color()\nassert len(Color) == 2 and list(Color) == [Color.RED, Color.BLUE]\n"
                  "assert Color['RED'] is Color.RED and Color.RED in Color and Color('blue') is Color.BLUE"],
                 [["pass", "pass", "pass", "pass", "pass", "pass"], ["fail", "pass", "pass", "fail", "error", "pass"]]),
    "intflag": ("perm",
                [PERM + "def perm():\n    return P.R | P.W\n", PERM + "def perm():\n    return 6\n"],
                ["assert perm() is P.R | P.W", "assert P.W in perm()", "assert perm() == 6",
                 "assert perm() == P.R | P.W",
                 "try:\n    perm() | 'x'\nexcept TypeError:\n    pass\nelse:\n    assert False",
                 "p = perm()\nassert p & P.W is P.W and str(p) == '6' and list(p) == [P.R, P.W]"],
                [["pass", "pass", "pass", "pass", "pass", "pass"], ["fail", "error", "pass", "pass", "pass", "error"]]),
    # a program's subclass of a builtin type (``class Stack(list)`` with methods) reached a generic
    # test as a plain list: its methods were gone (a right program's error), and ``isinstance(r,
    # Point)`` of a program object in a generic test was always false
    "builtin_subclass": ("Stack",
                         [STACK, STACK.replace("self[-1]", "self[0]")],
                         ["s = Stack()\ns.push(1)\ns.push(2)\nassert s.peek() == 2",
                          "s = Stack()\nassert isinstance(s, Stack) and isinstance(s, list)",
                          "s = Stack()\ns.push(3)\nassert s == [3] and [3] == s and s != [4]",
                          "s = Stack([1, 2])\nassert s.peek() == 2", "s = Stack()\nassert type(s) is not list"],
                         [["pass"] * 5, ["fail", "pass", "pass", "fail", "pass"]]),
    "objects_isinstance": ("move",
                           [POINT + "def move(p):\n    return Point(p.x + 1, p.y)\n",
                            POINT + "def move(p):\n    return (p.x + 1, p.y)\n"],
                           ["r = move(Point(0, 0))\nassert isinstance(r, Point)\nassert r.x == 1",
                            "r = move(Point(0, 0))\nassert isinstance(r, (int, Point))",
                            "r = move(Point(0, 0))\nassert not isinstance(r, tuple)"],
                           [["pass", "pass", "pass"], ["fail", "fail", "fail"]]),
    # a dict argument the program changed came back as raw JSON (string keys, a tag the decoder
    # refused): every generic test of a function that updates a dict in place was an error, and a
    # list argument's tuples came back as lists
    "mutated_arguments": ("add",
                          ["def add(d):\n    d['x'] = (1, 2)\n", "def add(d):\n    d['y'] = (1, 2)\n",
                           "def add(d):\n    d[(1, 2)] = [3]\n", "def add(d):\n    d.append((1, 2))\n"],
                          ["d = {}\nadd(d)\nassert d == {'x': (1, 2)}", "d = {'a': 0}\nadd(d)\nassert len(d) == 2",
                           "d = {}\nadd(d)\nassert d == {(1, 2): [3]}", "l = []\nadd(l)\nassert l == [(1, 2)]"],
                          [["pass", "pass", "fail", "error"], ["fail", "pass", "fail", "error"],
                           ["fail", "pass", "pass", "error"], ["error", "error", "error", "pass"]]),
    # red-team pass 15, F1: a container nested in an argument that the program changed in place came
    # back as a NEW object, so the test's own name for it went stale (a right program failed
    # ``assert row == [1, 2]``, a wrong one passed ``assert row == [1]``); aliasing, a replaced element
    # (the test's old object stays as it was), dicts of lists, sets in dicts, tuples holding lists, cycles
    "nested_arguments": ("grow",
                         ["def grow(rows):\n    rows[0].append(2)\n",
                          "def grow(rows):\n    rows[0] = rows[0] + [2]\n"],
                         ["row = [1]\nrows = [row]\ngrow(rows)\nassert row == [1, 2]",
                          "row = [1]\nrows = [row]\ngrow(rows)\nassert row == [1]",
                          "row = [1]\nrows = [row]\ngrow(rows)\nassert rows[0] is row",
                          "row = [1]\nrows = [row, row]\ngrow(rows)\nassert rows[1] == [1, 2] and rows[1] is rows[0]",
                          "d = {'a': [1]}\ngrow([d['a']])\nassert d == {'a': [1, 2]}",
                          "inner = [1]\na = [inner]\na.append(a)\ngrow(a)\n"
                          "assert inner == [1, 2] and a[1] is a and a[0] is inner",
                          "row = [1]\ngrow([row])\ntry:\n    assert row == [1, 2]\n"
                          "except ZeroDivisionError:\n    pass",
                          "row = [1]\ngrow(rows=[[0], row])\nassert row == [1]"],
                         [["pass", "fail", "pass", "pass", "pass", "pass", "pass", "pass"],
                          ["fail", "pass", "fail", "fail", "fail", "fail", "fail", "pass"]]),
    # red-team pass 15: such a member was a reference in a generic test, which C code needing a real
    # str or int refused (``", ".join``, ``json.dumps``, ``re``, ``in 'text'``, ``range``, indexing)
    "enum_str_c": ("colors",
                   [COLOR + "def colors():\n    return [Color.RED, Color.BLUE]\n",
                    COLOR + "def colors():\n    return ['red', 'blue']\n"],
                   ["c = colors()\nassert ', '.join(c) == 'red, blue'",
                    "import json\nc = colors()\nassert json.dumps(c) == '[\"red\", \"blue\"]'",
                    "import re\nc = colors()\nassert re.match('r', c[0]) and c[0] in 'a red car'",
                    "c = colors()\nassert c[0] is Color.RED and isinstance(c[0], str) and isinstance(c[0], Color)",
                    "c = colors()\nassert f'{c[0]}' == 'Color.RED' and str(c[0]) == 'Color.RED'",
                    "c = colors()\nassert {c[0]: 1}['red'] == 1 and c[0] == 'red' and hash(c[0]) == hash('red')",
                    "c = colors()\nassert c[0].upper() == 'RED' and c[0].name == 'RED'",
                    "c = colors()\nassert Color(c[1]) is Color.BLUE and c.index(Color.BLUE) == 1",
                    "c = colors()\nassert c[0] is not c[1] and c[0] != c[1] and c[0] == colors()[0]",
                    "c = colors()\nassert [x for x in Color] == c and (c[0] < c[1]) is False"],
                   [["pass", "pass", "pass", "pass", "pass", "pass", "pass", "pass", "pass", "pass"],
                    ["pass", "pass", "pass", "fail", "fail", "pass", "error", "pass", "pass", "pass"]]),
    "enum_int_c": ("level",
                   [LEVEL + "def level():\n    return Level.HIGH\n", LEVEL + "def level():\n    return 2\n"],
                   ["x = level()\nassert list(range(x)) == [0, 1]", "x = level()\nassert ['a', 'b', 'c'][x] == 'c'",
                    "x = level()\nassert '%d' % x == '2' and f'{x}' == '2'",
                    "x = level()\nassert x is Level.HIGH and isinstance(x, int)",
                    "import json\nx = level()\nassert json.dumps([x]) == '[2]'",
                    "x = level()\nassert x.name == 'HIGH' and x + 1 == 3 and Level(x) is x"],
                   [["pass", "pass", "pass", "pass", "pass", "pass"],
                    ["pass", "pass", "pass", "fail", "pass", "error"]]),
    # red-team pass 15: ``dataclasses.asdict`` (and ``astuple``, ``fields``, ``replace``) of a program's
    # dataclass instance in a generic test raised "should be called on dataclass instances"
    "dataclass_functions": ("move",
                            [POINT + "def move(p):\n    return Point(p.x + 1, p.y)\n",
                             POINT + "def move(p):\n    return p\n"],
                            ["import dataclasses\nr = move(Point(0, 0))\n"
                             "assert dataclasses.asdict(r) == {'x': 1, 'y': 0}",
                             "import dataclasses\nr = move(Point(0, 0))\n"
                             "assert dataclasses.astuple(r) == (1, 0) and dataclasses.is_dataclass(r)",
                             "import dataclasses\nr = move(Point(0, 0))\n"
                             "assert [f.name for f in dataclasses.fields(r)] == ['x', 'y']",
                             "import dataclasses\nr = move(Point(0, 0))\n"
                             "assert dataclasses.replace(r, y=5) == Point(1, 5)",
                             "from dataclasses import asdict\n"
                             "assert [asdict(p) for p in [move(Point(0, 0))]] == [{'x': 1, 'y': 0}]",
                             "r = move(Point(0, 0))\nassert r.__class__ is Point and type(r).__name__ == 'Point'",
                             "import dataclasses\nr = move(Point(0, 0))\nassert not dataclasses.is_dataclass(r.x)"],
                            [["pass", "pass", "pass", "pass", "pass", "pass", "pass"],
                             ["fail", "fail", "pass", "fail", "fail", "pass", "pass"]]),
    # a change made in place before the program raised stays made, as in Python
    "mutated_then_raised": ("f",
                            ["def f(rows):\n    rows[0].append(2)\n    rows.append(3)\n    raise ValueError('x')\n",
                             "def f(rows):\n    raise ValueError('x')\n"],
                            ["row = [1]\nrows = [row]\ntry:\n    f(rows)\nexcept ValueError:\n    pass\n"
                             "assert row == [1, 2] and rows == [[1, 2], 3]",
                             "row = [1]\ntry:\n    f([row])\nexcept ValueError as e:\n    assert e.args == ('x',)\n"
                             "assert row == [1]"],
                            [["pass", "fail"], ["fail", "pass"]]),
    # ``type(x) is Point`` of a program object in a generic test was false (its type was the
    # reference's); a program's class is now a class of the test standing for it
    "program_types": ("move",
                      [POINT + "class Sub(Point):\n    pass\ndef move(p):\n    return Point(p.x + 1, p.y)\n"
                       "def sub():\n    return Sub(0, 0)\n",
                       POINT + "class Sub(Point):\n    pass\ndef move(p):\n    return (p.x + 1, p.y)\n"
                       "def sub():\n    return Point(0, 0)\n"],
                      ["r = move(Point(0, 0))\nassert type(r) is Point",
                       "r = move(Point(0, 0))\nassert type(r) == Point and type(r)(1, 0) == r",
                       "r = move(Point(0, 0))\nassert type(r).__name__ == 'Point' and isinstance(r, Point)",
                       "s = sub()\nassert type(s) is Sub and isinstance(s, Point) and type(s) is not Point",
                       "assert issubclass(Sub, Point) and not issubclass(Point, Sub) and Point.__name__ == 'Point'",
                       "assert {Point: 1}[Point] == 1 and Point is not Sub and Point != Sub",
                       "import dataclasses\nassert [f.name for f in dataclasses.fields(Point)] == ['x', 'y']"],
                      [["pass"] * 7, ["fail", "fail", "fail", "fail", "pass", "pass", "pass"]]),
    # a program returning a container of its argument returns the test's own object, as in Python
    "returned_argument": ("first",
                          ["def first(rows):\n    return rows[0]\n", "def first(rows):\n    return list(rows[0])\n"],
                          ["row = [1]\nassert first([row]) is row",
                           "row = [1]\nr = first([row])\nr.append(2)\nassert row == [1, 2]",
                           "row = [1]\nassert first([row]) == [1]"],
                          [["pass", "pass", "pass"], ["fail", "fail", "pass"]]),
    "nested_dict_of_lists": ("add",
                             ["def add(d, k, v):\n    d[k].append(v)\n",
                              "def add(d, k, v):\n    d[k] = d[k] + [v]\n"],
                             ["xs = [1]\nd = {'a': xs}\nadd(d, 'a', 2)\nassert xs == [1, 2]",
                              "xs = [1]\nd = {'a': xs, 'b': xs}\nadd(d, 'a', 2)\nassert d['b'] == [1, 2]",
                              "xs = [1]\nd = {'a': xs}\nadd(d, 'a', 2)\nassert d == {'a': [1, 2]}",
                              "xs = [1]\nadd(d={'a': xs}, k='a', v=3)\nassert xs == [1, 3]"],
                             [["pass", "pass", "pass", "pass"], ["fail", "fail", "pass", "fail"]]),
    "nested_dicts_sets": ("tag",
                          ["def tag(items):\n    for it in items:\n        it['seen'] = True\n        it['s'].add(1)\n",
                           "def tag(items):\n    items[:] = [dict(it, seen=True, s=it['s'] | {1}) for it in items]\n"],
                          ["s = set()\nit = {'s': s}\ntag([it])\nassert it['seen'] and s == {1}",
                           "it = {'s': set()}\nitems = [it]\ntag(items)\nassert items[0] is it",
                           "it = {'s': set()}\nitems = [it]\ntag(items)\nassert items == [{'s': {1}, 'seen': True}]"],
                          [["pass", "pass", "pass"], ["error", "fail", "pass"]]),
    "nested_in_tuples": ("push",
                         ["def push(pairs):\n    for _, xs in pairs:\n        xs.append(0)\n",
                          "def push(pairs):\n    pairs[:] = [(k, xs + [0]) for k, xs in pairs]\n"],
                         ["xs = []\npairs = [('a', xs)]\npush(pairs)\nassert xs == [0]",
                          "xs = []\npush((('a', xs), ('b', xs)))\nassert xs == [0, 0]",
                          "xs = []\npairs = [('a', xs)]\npush(pairs)\nassert pairs == [('a', [0])]"],
                         [["pass", "pass", "pass"], ["fail", "error", "pass"]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdicts_are_those_of_plain_python(ex, name):
    entry, codes, tests, expected = CASES[name]
    result = ex.run_matrix(Task(name, name, entry_point=entry), codes, [Test.assertion(t) for t in tests])
    assert result.status == expected, (result.status, result.errors)


def test_a_tuple_dressed_as_a_namedtuple_is_not_taken_for_one(ex):
    """A tuple subclass with a ``_fields`` of its own but its own ``__repr__`` (or a property for
    a field) is not rebuilt as a namedtuple in the parent, whose repr and fields would answer for
    it: it travels as its base, a plain tuple."""
    dressed = ("class P(tuple):\n    _fields = ('x', 'y')\n    def __repr__(self):\n        return 'P(x=1, y=2)'\n"
               "def mk(a, b):\n    return P((b, a))\n")
    prop = ("from collections import namedtuple\nclass P(tuple):\n    _fields = ('x', 'y')\n"
            "    x = property(lambda self: 1)\ndef mk(a, b):\n    return P((b, a))\n")
    result = ex.run_matrix(Task("nt", "nt", entry_point="mk"), [dressed, prop],
                           [Test.assertion("assert mk(1, 2) == (2, 1)"), Test.assertion("assert mk(1, 2).x == 1")])
    assert [row[0] for row in result.status] == ["pass", "pass"]
    assert result.values[0][0] == (2, 1) and type(result.values[0][0]) is tuple
    assert type(result.values[1][0]) is tuple
    assert [row[1] for row in result.status] == ["error", "pass"]  # no field x; its own property


def test_the_parent_decodes_no_namedtuple_it_cannot_make_and_keeps_few():
    """Red-team pass 13: field names that normalize alike ('ﬁ', 'fi') made ``namedtuple`` raise
    SyntaxError in the parent (no matrix written for any task); 54 claims of long names held
    1.3 GiB in the class cache."""
    import json

    from matrix import plain
    from matrix.sandbox import encoding

    for bad in (["T", ["\ufb01", "fi"], [1, 2]], ["T", ["a", "a"], [1, 2]], ["class", ["a"], [1]],
                ["T", ["x" * 65], [1]], ["T\u00e9", ["a"], [1]], ["T", ["_a"], [1]], ["T", [1], [1]]):
        with pytest.raises(ValueError):
            plain.decode(json.dumps({"NT": bad}))
    for i in range(300):
        fields = [f"f{j}" + "x" * 60 for j in range(256)]
        plain.decode(json.dumps({"NT": [f"N{i}", fields, list(range(256))]}))
    assert encoding._NT_CHARS <= 1 << 18 and len(encoding._NT_CLASSES) < 20
    assert plain.decode(json.dumps({"NT": ["P", ["x", "y"], [1, 2]]})).x == 1


NP_RIGHT = "import numpy as np\ndef double(a):\n    return np.asarray(a) * 2\n"
NP_WRONG = "import numpy as np\ndef double(a):\n    return np.asarray(a) * 2 + np.array([0, 0, 1])\n"
NP_TESTS = ["import numpy as np\nassert np.array_equal(double([1, 2, 3]), np.array([2, 4, 6]))",
            "import numpy as np\nassert np.allclose(double([1, 2, 3]), [2, 4, 6])",
            "import numpy as np\nassert (double([1, 2, 3]) == np.array([2, 4, 6])).all()",
            "import numpy as np\nnp.testing.assert_allclose(double([1.0, 2.0, 3.0]), [2, 4, 6])",
            "import numpy as np\nr = double([1, 2, 3])\nassert isinstance(r, np.ndarray) and r.shape == (3,)",
            "assert list(double([1, 2, 3])) == [2, 4, 6]"]


def test_numpy_arrays_reach_a_generic_test_as_arrays(ex):
    """Red-team pass 14: a program's numpy array reached a generic test as a reference, on which
    the test's numpy failed (``np.array_equal`` false, ``np.allclose`` 'invalid __array_struct__'):
    every usual numpy test failed the right program. With numpy loaded in the test process the
    array arrives as an array of its own (a copy, as lists are); a numpy bool is not ``True``."""
    pytest.importorskip("numpy")
    result = ex.run_matrix(Task("np", "np", entry_point="double"), [NP_RIGHT, NP_WRONG],
                           [Test.assertion(t) for t in NP_TESTS])
    assert result.status == [["pass"] * 6, ["fail", "fail", "fail", "fail", "pass", "fail"]], result.errors
    truth = ("import numpy as np\ndef big(a):\n    return np.mean(a) > 1\n",
             "def big(a):\n    return sum(a) / len(a) > 1\n")
    result = ex.run_matrix(Task("nb", "nb", entry_point="big"), list(truth),
                           [Test.assertion(t) for t in ("assert big([1, 2]) is True", "assert big([1, 2]) == True",
                                                        "assert big([1, 2])", "x = big([1, 2])\nassert x is True",
                                                        "assert big([0]) is not False")])
    assert result.status == [["fail", "pass", "pass", "fail", "pass"], ["pass"] * 4 + ["fail"]], result.errors
    # an array of the test's the program changes in place is changed in the test too, as a list is
    scale = ("def scale(a):\n    a *= 2\n", "def scale(a):\n    a = a * 2\n")
    result = ex.run_matrix(Task("ns", "ns", entry_point="scale"), list(scale),
                           [Test.assertion("import numpy as np\nx = np.array([1, 2])\nscale(x)\n"
                                           "assert np.array_equal(x, [2, 4])")])
    assert result.status == [["pass"], ["fail"]], result.errors


# a program that takes over its own process: it finds the program process's server through the
# frames and answers the request it is serving with a reply of its own making
HIJACK_REPLY = """import sys
def _server():
    fr = sys._getframe()
    while fr is not None and not (fr.f_code.co_name == "handle" and "self" in fr.f_locals):
        fr = fr.f_back
    return fr.f_locals["self"]
def _reply_once(srv, reply):
    real = srv.send
    def send(msg):
        del srv.send
        real(reply)
    srv.send = send
"""
HOSTILE_WRITEBACK = HIJACK_REPLY + """def grow(rows):
    _reply_once(_server(), ["r", None, CRAFTED])
"""
# what a program may send back as the changes to the test's containers (it may send any bytes), and
# the verdict of ``row = [1]; grow([row]); assert row == [1, 2]``: the first is what a program could
# do honestly (``rows[0].append(2)``); the others are malformed or odd, and must not pass
CRAFTED = [('[["N", 1, [1, 2]]]', "pass"),
           ('[["N", 1, {"M": 9}]]', "error"),  # a mark of no container of the call
           ('[["N", 1, {"M": 1}]]', "fail"),  # a container's contents that are a container of the test's
           ('[["N", 1, {"d": [[1, 2]]}]]', "fail"),  # a list's new contents a dict
           ('[["N", 7, [1, 2]], ["N", -1, [1, 2]], ["N", "1", [1, 2]], ["N", True, [1, 2]]]', "fail"),
           ('[["N", 1, {"s": [{"M": 0}]}]]', "error"),  # a list in a set
           ('[["N", 0, [[1, 2]]], ["N", 0, [{"M": 1}]]]', "fail"),  # a container twice: the first counts
           ('[[0, [[1, 2]]]]', "fail"),  # an argument's new contents as for a numpy array
           ('[["N", 1, [{"M": 0}] * 200000]]', "fail"),  # many marks: what rows[0].extend([rows] * ...) does
           ('[["N", 0, {"t": [1]}], ["N", 1, {"N": ["x", True]}]]', "fail")]


CRAFTED_SECOND = ["pass", "error", "pass", "pass", "pass", "error", "fail", "pass", "fail", "pass"]


def test_a_program_cannot_forge_the_changes_to_nested_arguments(ex):
    """Red-team pass 15, F1: the containers nested in a call's arguments come back as marks that
    the test side turns into its own objects. A program sending whatever changes it likes can make
    them no more than it could by changing them honestly: malformed ones are errors or are ignored,
    and none crashes or hangs the test."""
    codes = [HOSTILE_WRITEBACK.replace("CRAFTED", c) for c, _ in CRAFTED]
    tests = ["row = [1]\ngrow([row])\nassert row == [1, 2]",
             "row = [1]\nrows = [row]\ngrow(rows)\nassert rows[0] is row and len(rows) == 1 and row[0] == 1"]
    result = ex.run_matrix(Task("hw", "hw", entry_point="grow"), codes, [Test.assertion(t) for t in tests])
    assert [row[0] for row in result.status] == [v for _, v in CRAFTED], result.errors
    # the same test run on: every container the program changed is one it was given
    assert [row[1] for row in result.status] == CRAFTED_SECOND, result.errors


HOSTILE_MEMBER = HIJACK_REPLY + """def f():
    _reply_once(_server(), ["r", {"R": ["C", 999, "Color", ["plain", "base:str"], None, DATA]}, None])
"""
# what a program may claim of a member's value and of the names its class defines; only a str value
# and names that are not ``==``, the hash or the conversions to the value make a str of the test's
MEMBER_DATA = [('["red", []]', "pass"), ('["red", ["__eq__"]]', "error"), ('[5, []]', "error"),
               ('["red", ["__hash__"]]', "error"), ('["red", ["__index__"]]', "error"),
               ('["red", ["_secret"]]', "error"), ('["red", "upper"]', "error"), ('["red", ["upper"]]', "pass")]


def test_a_program_cannot_forge_a_member_of_the_test(ex):
    """A program's str or int enum member becomes, in a generic test, a str or int of the test's
    holding the member's value (red-team pass 15): whatever a program claims of it, it equals and
    hashes as its value, and a claim naming ``==``, the hash or a conversion is a reference as before."""
    codes = [HOSTILE_MEMBER.replace("DATA", d) for d, _ in MEMBER_DATA]
    tests = ["x = f()\nassert x == 'red' and hash(x) == hash('red') and isinstance(x, str)"]
    result = ex.run_matrix(Task("hm", "hm", entry_point="f"), codes, [Test.assertion(t) for t in tests])
    assert [row[0] for row in result.status] == [v for _, v in MEMBER_DATA], result.errors


DATACLASS_CLAIMS = [('"fields:x,y"', "pass"), ('"fields:class,y"', "fail"), ('"fields:__init__"', "fail"),
                    ('"fields:x,x"', "fail"), ('"fields:" + ",".join(f"a{i}" for i in range(300))', "fail"),
                    ('"fields:x\\u00e9"', "fail"), ('"fields:x", "class"', "fail")]
HOSTILE_DATACLASS = HIJACK_REPLY + """class P:
    pass
def f():
    srv = _server()
    cid = srv.export(P)["R"][1]
    _reply_once(srv, ["r", {"R": ["C", 999, "P", [CLAIM, "cls:" + str(cid)]]}, None])
"""


def test_a_program_claiming_a_dataclass_gets_no_more_than_one(ex):
    """A program's dataclass instance is, in a generic test, a reference whose class carries the
    fields' names the program claims (red-team pass 15: ``dataclasses.asdict`` of it raised): names
    that are not fields' (keywords, dunders, repeated, too many, not ASCII) make a class without."""
    codes = [HOSTILE_DATACLASS.replace("CLAIM", c) for c, _ in DATACLASS_CLAIMS]
    tests = ["import dataclasses\nx = f()\nassert dataclasses.is_dataclass(x) and not isinstance(x, type)"]
    result = ex.run_matrix(Task("hd", "hd", entry_point="f"), codes, [Test.assertion(t) for t in tests])
    assert [row[0] for row in result.status] == [v for _, v in DATACLASS_CLAIMS], result.errors


def test_arguments_keep_their_shape_where_they_hold_program_objects_or_are_deep(ex):
    """The shape of a call's arguments (red-team pass 15, F1) holds where they also carry what is
    not plain data (a function of the test's, a program object in a set, a Counter) and where they
    nest deeper than the containers followed: the program sees the same objects as Python."""
    code = ("from collections import Counter\n"
            "def same(a, b):\n    return a is b\n"
            "def grow(rows):\n    rows[0].append(2)\n"
            "def count(c, words):\n    c.update(words)\n")
    tests = ["f = lambda: 1\nrow = [f]\nassert same(row, row) and same([row][0], row)",
             "s = {same}\nassert same(s, s)",
             "row = [1]\nrows = [row, [lambda: 0], row]\ngrow(rows)\nassert row == [1, 2] and rows[2] is row",
             "deep = [1]\nx = deep\nfor _ in range(40):\n    x = [x]\ngrow(x)\nassert len(x[0]) == 2 and len(x) == 1",
             "deep = [1]\nx = [deep]\nfor _ in range(40):\n    x = [x, lambda: 0]\nrow = [0]\ngrow([row, x])\n"
             "assert row == [0, 2]",
             "from collections import Counter\nc = Counter('ab')\nitems = [c]\ncount(c, 'a')\nassert c['a'] == 2",
             "from collections import Counter\nc = Counter({'a': same})\ncount(c, 'b')\nassert c['b'] == 1"]
    result = ex.run_matrix(Task("sh", "sh", entry_point="grow"), [code], [Test.assertion(t) for t in tests])
    assert result.status == [["pass"] * len(tests)], result.errors


def test_a_reply_with_marks_and_big_ints_does_not_walk_the_tests_objects():
    """Decoding a reply resolves marks to the test's own containers (red-team pass 15, F1); the
    pass that puts big ints in place walks the value's lists, not those objects (a test's tuple
    holding itself twice, 60 times over, would take for ever)."""
    import json
    import time

    from matrix.sandbox.encoding import decode

    row = [1]
    t: tuple = (row,)
    for _ in range(60):
        t = (t, t)
    start = time.perf_counter()
    value = decode(json.dumps([{"M": 0}, [{"I": "f" * 4000}]]), 1.0, marks=lambda n: t)
    assert value[0] is t and value[1][0] == int("f" * 4000, 16)
    assert time.perf_counter() - start < 1.0
    with pytest.raises(ValueError):
        decode(json.dumps({"M": 0}))  # no marks where no call is pending
