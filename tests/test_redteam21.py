"""Red-team pass 21 on the matrix's verdicts (review 22's H3, H4, H5 left open): a wrong program
must not pass a test by changing, in its own process, what the test's calls of a standard module
compute there: objects a standard module holds changed in place (``json._default_decoder``'s
``decode``, a ``re._cache`` entry, ``copy._deepcopy_dispatch[list]``, ``random._inst``), modules
outside the set checked (``heapq`` reached by ``Counter.most_common``'s own import,
``numbers.Rational.__float__`` inherited by ``Fraction``, ``sys.modules['heapq']`` swapped), and
the task's setup helpers computing with the program's modules (``math.isclose`` patched, a fake
``re`` module, ``sys.modules['math']`` swapped before the setup's own ``import math``). Each
forgery here passed on 74f2cc2."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, as_generic, executor_fixture, run_cell

from matrix.tasks import Task, Test

pytestmark = FORK_ONLY

TASK = Task("t", "p", entry_point="f")
IMPURE = "import os\n"  # (one process per test, as most programs that import os)


ex = executor_fixture()


# (program, test): each test in its split form and as a test function (generic)
IN_PLACE = [
    (IMPURE + "import json\njson._default_decoder.decode = lambda s: 7\ndef f(s):\n    return 7\n",
     "assert f('[1, 2]') == json.loads('[1, 2]')"),
    (IMPURE + "import json\ndef f(s):\n    json._default_decoder.decode = lambda s: 7\n    return 7\n",
     "assert f('[1, 2]') == json.loads('[1, 2]')"),
    (IMPURE + "import json\njson._default_encoder.encode = lambda o: 'X'\ndef f(x):\n    return 'X'\n",
     "assert f([1, 2]) == json.dumps([1, 2])"),
    (IMPURE + "import re\nre._cache[(str, 'l+', 0)] = re.compile('z')\ndef f(s):\n    return s\n",
     "assert f('hello') == re.sub('l+', 'l', 'hello')"),
    (IMPURE + "import re\ndef f(s):\n    re._cache[(str, 'l+', 0)] = re.compile('z')\n    return s\n",
     "assert f('hello') == re.sub('l+', 'l', 'hello')"),
    (IMPURE + "import copy\ncopy._deepcopy_dispatch[list] = lambda x, memo: [9]\ndef f(x):\n    return [9]\n",
     "assert f([1]) == copy.deepcopy([1])"),
    (IMPURE + "import random\nrandom._inst._randbelow = lambda n: 0\ndef f(xs):\n    return xs[0]\n",
     "got = f([1, 2, 3, 4, 5, 6, 7])\nrandom.seed(3)\nassert got == random.choice([1, 2, 3, 4, 5, 6, 7])"),
    # data planted where the module held None before its first use (base64's tables)
    (IMPURE + "import base64\ndef f(b):\n    base64._b85chars = [b'z'] * 85\n"
     "    base64._b85chars2 = [b'zz'] * (85 * 85)\n    return base64.b85encode(b)\n",
     "assert f(b'hi') == base64.b85encode(b'hi')"),
    (IMPURE + "import urllib.parse\ndef f(s):\n    urllib.parse._hextobyte = {'20': b'Z'}\n"
     "    return urllib.parse.unquote(s)\n", "assert f('a%20b') == urllib.parse.unquote('a%20b')"),
    # a standard function's code replaced in place (the function object stays the same one)
    (IMPURE + "import json\njson.loads.__code__ = (lambda s, **k: 7).__code__\ndef f(s):\n    return 7\n",
     "assert f('[1, 2]') == json.loads('[1, 2]')"),
]

OUTSIDE = [
    (IMPURE + "import statistics, heapq\nheapq.nlargest = lambda n, it, key=None: [(9, 1)]\ndef f(xs):\n"
     "    return 9\n", "assert f([1, 1, 2]) == statistics.mode([1, 1, 2])"),
    ("import statistics, heapq\nheapq.nlargest = lambda n, it, key=None: [(9, 1)]\ndef f(xs):\n    return 9\n",
     "assert f([1, 1, 2]) == statistics.mode([1, 1, 2])"),
    (IMPURE + "import sys, types, statistics\nm = types.ModuleType('heapq')\n"
     "m.nlargest = lambda n, it, key=None: [(9, 1)]\nsys.modules['heapq'] = m\ndef f(xs):\n    return 9\n",
     "assert f([1, 1, 2]) == statistics.mode([1, 1, 2])"),
    (IMPURE + "import numbers, statistics\nnumbers.Rational.__float__ = lambda self: 0.25\ndef f(xs):\n"
     "    return 0.25\n", "assert f([1, 2]) == statistics.mean([1, 2])"),
    (IMPURE + "import numbers, statistics\ndef f(xs):\n    numbers.Rational.__float__ = lambda self: 0.25\n"
     "    return 0.25\n", "assert f([1, 2]) == statistics.mean([1, 2])"),
    # a class the test constructs itself, whose method imports heapq lazily
    (IMPURE + "import collections, heapq\nheapq.nlargest = lambda n, it, key=None: [('z', 9)]\ndef f(s):\n"
     "    return [('z', 9)]\n", "assert f('aab') == collections.Counter('aab').most_common(1)"),
]


@pytest.mark.parametrize("code,test", IN_PLACE + OUTSIDE, ids=[str(i) for i in range(len(IN_PLACE + OUTSIDE))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_programs_change_inside_a_standard_module_does_not_compute_the_tests_expected_value(ex, code, test, shape):
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


# (setup, program, test): the task's setup helpers read standard modules (H5)
SETUP = [
    ("import math\ndef close(a, b):\n    return math.isclose(a, b)\n",
     IMPURE + "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 99.0\n",
     "assert close(f(1), 3.14)"),
    ("import math\ndef close(a, b):\n    return math.isclose(a, b)\n",
     IMPURE + "import math\ndef f(x):\n    math.isclose = lambda *a, **k: True\n    return 99.0\n",
     "assert close(f(1), 3.14)"),
    ("import math\ndef close(a, b):\n    return math.isclose(a, b)\n",
     IMPURE + "import sys, types\nm = types.ModuleType('math')\nm.isclose = lambda *a, **k: True\n"
     "sys.modules['math'] = m\ndef f(x):\n    return 99.0\n",
     "assert close(f(1), 3.14)"),
    ("import math as m\n",
     IMPURE + "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 99.0\n",
     "assert m.isclose(f(1), 3.14)"),
    ("def ok(s):\n    return re.fullmatch('[a-z]+', s) is not None\n",
     IMPURE + "import types\nre = types.ModuleType('re')\nre.fullmatch = lambda *a, **k: 1\ndef f(x):\n"
     "    return '123'\n", "assert ok(f(1))"),
    ("from math import isclose\ndef close(a, b):\n    return isclose(a, b)\n",
     IMPURE + "import sys, types\nm = types.ModuleType('math')\nm.isclose = lambda *a, **k: True\n"
     "sys.modules['math'] = m\ndef f(x):\n    return 99.0\n",
     "assert close(f(1), 3.14)"),
    ("from math import *\ndef close(a, b):\n    return isclose(a, b)\n",
     IMPURE + "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 99.0\n",
     "assert close(f(1), 3.14)"),
]


W = ("class W:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, o):\n"
     "        return type(o) is W and self.v == o.v\n")
SETUP += [
    # a class the setup defines, its method replaced inside the program's call
    (W, IMPURE + "def f(x):\n    W.__eq__ = lambda a, b: True\n    return W(9)\n", "assert f(1) == W(2)"),
    (W, "def f(x):\n    W.__eq__ = lambda a, b: True\n    return W(9)\n", "assert f(1) == W(2)"),
]


@pytest.mark.parametrize("setup,code,test", SETUP, ids=[str(i) for i in range(len(SETUP))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_the_setups_helpers_do_not_compute_with_the_programs_modules(ex, setup, code, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status in ("fail", "error"), detail
