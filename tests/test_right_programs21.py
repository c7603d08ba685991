"""Right programs that must keep passing beside red-team pass 21 (tests/test_redteam21.py): the
test's calls of a standard module that computes from its arguments (``json``, ``re``, ``copy``,
``statistics``, ``collections``, ``random``...) now compute in the test's own process where no
object of the program's is among their arguments, the program's otherwise; a test's patches of the
program's modules still reach the program; the task's setup helpers with state of their own."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(180)]

TASK = Task("t", "p", entry_point="f")
IMPURE = "import os\n"


def _generic(test: str) -> str:
    return "def test_a():\n" + "".join("    " + line + "\n" for line in test.splitlines())


RIGHT = [
    (IMPURE + "import json\ndef f(s):\n    return json.loads(s)\n", "assert f('[1, 2]') == json.loads('[1, 2]')"),
    (IMPURE + "import re\ndef f(s):\n    return re.sub('l+', 'l', s)\n",
     "assert f('hello') == re.sub('l+', 'l', 'hello')"),
    (IMPURE + "import random\ndef f(xs):\n    random.seed(3)\n    return random.choice(xs)\n",
     "got = f([1, 2, 3, 4, 5, 6, 7])\nrandom.seed(3)\nassert got == random.choice([1, 2, 3, 4, 5, 6, 7])"),
    # the test seeds, the program draws: one generator, as in one interpreter
    (IMPURE + "import random\ndef f():\n    return random.random()\n",
     "random.seed(5)\ngot = f()\nrandom.seed(5)\nassert got == random.random()"),
    (IMPURE + "import collections\ndef f(s):\n    return collections.Counter(s).most_common(1)\n",
     "assert f('aab') == collections.Counter('aab').most_common(1)"),
    (IMPURE + "import statistics\ndef f(xs):\n    return statistics.mean(xs)\n",
     "assert f([1, 2]) == statistics.mean([1, 2])"),
    # a standard function given the program's objects runs where they live
    (IMPURE + "import functools\ndef f(a, b):\n    return a + b\n",
     "assert functools.reduce(f, [1, 2, 3]) == 6"),
    (IMPURE + "import itertools\ndef f():\n    yield from range(10)\n",
     "assert list(itertools.islice(f(), 3)) == [0, 1, 2]"),
    (IMPURE + "import copy\nclass P:\n    def __init__(self, x):\n        self.x = x\ndef f(x):\n    return P(x)\n",
     "assert copy.deepcopy(f(3)).x == 3"),
    # a compiled pattern the test makes and gives the program: still the program's re.Pattern
    (IMPURE + "import re\ndef f(p, s):\n    return re.sub(p, 'l', s)\n",
     "assert f(re.compile('l+'), 'hello') == 'helo'"),
    (IMPURE + "import re\ndef f(p, s):\n    return isinstance(p, re.Pattern) and p.sub('l', s)\n",
     "assert f(re.compile('l+'), 'hello') == 'helo'"),
    # the test's changes to a list through heapq, the program reading the list
    (IMPURE + "import heapq\ndef f(h):\n    return h[0]\n",
     "h = []\nheapq.heappush(h, 3)\nheapq.heappush(h, 1)\nassert f(h) == 1 and h == [1, 3]"),
    (IMPURE + "def f(d):\n    return os.path.join(d, 'b')\n", "assert f('a') == os.path.join('a', 'b')"),
    (IMPURE + "def f(p):\n    return os.path.exists(p)\n", "assert f('/nope/x') == os.path.exists('/nope/x')"),
    (IMPURE + "def f(p):\n    os.chdir('/')\n    return os.path.abspath(p)\n",
     "got = f('a')\nassert got == os.path.abspath('a') and got == '/a'"),
    (IMPURE + "import urllib.parse\ndef f(s):\n    return urllib.parse.unquote(s)\n",
     "assert f('a%20b') == urllib.parse.unquote('a%20b')"),
    (IMPURE + "import datetime\ndef f():\n    return datetime.date(2020, 1, 2)\n",
     "assert f() - datetime.date(2020, 1, 1) == datetime.timedelta(days=1)"),
    (IMPURE + "import time\ndef f():\n    return time.time()\n",
     "from unittest import mock\nwith mock.patch.object(time, 'time', return_value=5.0):\n    assert f() == 5.0\n"
     "assert f() != 5.0"),
    # a test importing the module itself: its patches reach the program's, as in one interpreter
    (IMPURE + "import time\ndef f():\n    return time.time()\n",
     "import time\nfrom unittest import mock\nwith mock.patch('time.time', return_value=5.0):\n    assert f() == 5.0\n"
     "assert f() != 5.0"),
    ("import time\ndef f():\n    return time.time()\n",
     "import time\nfrom unittest import mock\nwith mock.patch('time.time', return_value=5.0):\n    assert f() == 5.0\n"
     "assert f() != 5.0"),
    (IMPURE + "import time\ndef f():\n    return time.time()\n",
     "import time\nfrom unittest.mock import patch\nwith patch.object(time, 'time', return_value=7.0):\n"
     "    assert f() == 7.0\nassert f() != 7.0"),
    (IMPURE + "import time\ndef f():\n    return time.time()\n",
     "import time\nold = time.time\ntime.time = lambda: 3.0\nassert f() == 3.0\ntime.time = old\nassert f() != 3.0"),
    (IMPURE + "def f():\n    return os.getcwd()\n",
     "from unittest import mock\nwith mock.patch('os.getcwd', return_value='/x'):\n    assert f() == '/x'\n"),
]


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=5.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("code,test", RIGHT, ids=[str(i) for i in range(len(RIGHT))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_right_program_passes_where_the_test_computes_with_its_own_modules(ex, code, test, shape):
    t = test if shape == "split" else _generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] == "pass", (res.status, res.errors)


COUNT = "calls = 0\ndef count(x):\n    global calls\n    calls += 1\n    return x\n"


@pytest.mark.parametrize("test", [
    "assert f(count(1)) == 1\nassert f(count(2)) == 2 and calls == 2",
    "def test_a():\n    assert f(count(1)) == 1\n    assert f(count(2)) == 2\n",
    "def test_a():\n    assert f(count(1)) == 1\n    assert f(count(2)) == 2 and calls == 2\n",
])
def test_a_setup_helper_that_rebinds_its_own_global_is_no_change_of_the_programs(ex, test):
    """Review 22 M3: ``global calls; calls += 1`` in a setup helper made a right program an error
    ("the program changed the task's setup", generic) or a fail (``calls`` pinned at 0, split)."""
    task = Task("t", "p", entry_point="f", setup=COUNT)
    res = ex.run_matrix(task, ["def f(x):\n    return x\n"], [Test.assertion(test)])
    assert res.status[0][0] == "pass", (res.status, res.errors)


def test_a_right_setup_helper_reading_a_standard_module_passes(ex):
    setups = ["import math\ndef close(a, b):\n    return math.isclose(a, b)\n", "import math as m\n",
              "from math import isclose\ndef close(a, b):\n    return isclose(a, b)\n",
              "from math import *\ndef close(a, b):\n    return isclose(a, b)\n"]
    tests = ["assert close(f(1), 3.14)", "def test_a():\n    assert close(f(1), 3.14)\n"]
    for setup in setups:
        task = Task("t", "p", entry_point="f", setup=setup)
        ts = [t.replace("close(", "m.isclose(") if "as m" in setup else t for t in tests]
        for code in ("def f(x):\n    return 3.14\n", IMPURE + "import math\ndef f(x):\n    return 3.14\n"):
            res = ex.run_matrix(task, [code], [Test.assertion(t) for t in ts])
            assert res.status == [["pass", "pass"]], (setup, code, res.status, res.errors)


def test_a_setup_class_counting_its_instances_is_no_change_of_the_programs(ex):
    setup = ("class W:\n    made = 0\n    def __init__(self, v):\n        W.made += 1\n        self.v = v\n"
             "    def __eq__(self, o):\n        return type(o) is W and self.v == o.v\n")
    code = "def f(x):\n    return W(x + 1)\n"
    tests = ["assert f(1) == W(2)", "def test_a():\n    assert f(1) == W(2)\n    assert f(2) == W(3)\n",
             "assert f(1) == W(2) and W.made >= 2"]
    for c in (code, IMPURE + code):
        res = ex.run_matrix(Task("t", "p", entry_point="f", setup=setup), [c], [Test.assertion(t) for t in tests])
        assert res.status == [["pass"] * 3], (c, res.status, res.errors)
