"""Right programs that use standard modules the test reads as well must pass (review 22 of red-team
pass 20). Two shapes had become an error or a fail for every program:

* ``isinstance(f(x), collections.Counter)`` (and ``collections.abc.Mapping``, ``typing.Mapping``,
  ``fractions.Fraction``, ``numbers.Number``, ``decimal.Decimal``, ``deque``, ``OrderedDict``): the
  value comes back as the test's own object, the class was the program process's;
* globals the standard library fills itself on first use (``base64``'s tables, ``posixpath``'s
  pattern, ``urllib.parse``'s table, asyncio's event loop policy, ``time.tzname`` after
  ``strptime``, ``difflib.HtmlDiff``'s counter) were taken for the program's changes.

A program that changes what the test reads (``re.sub``, ``collections.Counter.most_common``) still
does not pass: tests/test_builtin_shadowing.py, tests/test_redteam20.py."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(180)]

TASK = Task("t", "p", entry_point="f")

COUNTER = "import collections, collections.abc, typing\ndef f(s):\n    return collections.Counter(s)\n"
FRACTION = "import fractions, numbers, decimal\ndef f(x):\n    return fractions.Fraction(1, x)\n"
DEQUE = "import collections\ndef f(xs):\n    return collections.deque(xs)\n"
ORDERED = "import collections\ndef f(xs):\n    return collections.OrderedDict((x, 1) for x in xs)\n"

RIGHT = [
    (COUNTER, "assert isinstance(f('aab'), collections.Counter)"),
    (COUNTER, "assert isinstance(f('aab'), collections.abc.Mapping)"),
    (COUNTER, "assert isinstance(f('aab'), typing.Mapping)"),
    (COUNTER, "def test_a():\n    assert isinstance(f('aab'), collections.Counter)\n"),
    (FRACTION, "assert isinstance(f(3), fractions.Fraction)"),
    (FRACTION, "assert isinstance(f(3), numbers.Number)"),
    (DEQUE, "assert isinstance(f([1, 2]), collections.deque)"),
    (ORDERED, "assert isinstance(f([1, 2]), collections.OrderedDict)"),
    ("import base64\ndef f(b):\n    return base64.b85encode(b)\n", "assert f(b'hi') == base64.b85encode(b'hi')"),
    ("import base64\ndef f(b):\n    return base64.b85encode(b)\n",
     "assert base64.b85decode(base64.b85encode(b'hi')) == b'hi' and f(b'') == b''"),
    ("import os\ndef f(p):\n    return os.path.expandvars(p)\n",
     "assert f('$NOPE_X/a') == os.path.expandvars('$NOPE_X/a')"),
    ("import urllib.parse\ndef f(s):\n    return urllib.parse.unquote(s)\n",
     "assert f('a%20b') == urllib.parse.unquote('a%20b')"),
    ("import asyncio\nasync def f(x):\n    await asyncio.sleep(0)\n    return x + 1\n",
     "assert asyncio.run(f(1)) == 2\nassert asyncio.run(f(2)) == 3"),
    ("import time, datetime\ndef f(s):\n    return datetime.datetime.strptime(s, '%Y-%m-%d').year\n",
     "def test_a():\n    t = time.time()\n    assert f('2020-01-02') == 2020\n    assert time.time() - t < 5\n"),
    # a right program reading stdin, whose input() the harness replaced, beside a module the test reads
    ("import statistics\ndef f(xs):\n    return statistics.median(xs)\n",
     "def test_a():\n    import io, sys\n    sys.stdin = io.StringIO('1 2 3')\n"
     "    assert f([1, 2, 3]) == statistics.median([3, 2, 1])\n"),
    ("import difflib\ndef f(a, b):\n    return 'table' in difflib.HtmlDiff().make_table(a, b)\n",
     "assert f(['a'], ['b']) == ('table' in difflib.HtmlDiff().make_table(['a'], ['b']))"),
]

WRONG = [
    # the same shapes, wrong programs: still not a pass
    ("import collections\ndef f(s):\n    return dict(collections.Counter(s))\n",
     "assert isinstance(f('aab'), collections.Counter)"),
    ("import fractions\ndef f(x):\n    return 1 / x\n", "assert isinstance(f(3), fractions.Fraction)"),
    ("import base64\ndef f(b):\n    return b'x'\n", "assert f(b'hi') == base64.b85encode(b'hi')"),
    # the builtins of the program's process, which the module's functions call there (H1)
    ("import os\nimport statistics, builtins\nbuiltins.sorted = lambda d, **k: [9, 9, 9]\ndef f(xs):\n    return 9\n",
     "def test_a():\n    assert f([1, 2, 3]) == statistics.median([1, 2, 3])\n"),
    ("import os\nimport statistics, builtins\ndef f(xs):\n    builtins.sorted = lambda d, **k: [9, 9, 9]\n"
     "    return 9\n",
     "assert f([5, 1, 3]) == statistics.median([5, 1, 3])"),
    # a name the module did not have that shadows a builtin its functions call (review 22, H2)
    ("import os\nimport statistics\nstatistics.sorted = lambda d, **k: [9, 9, 9]\ndef f(xs):\n    return 9\n",
     "def test_a():\n    assert f([1, 2, 3]) == statistics.median([1, 2, 3])\n"),
]


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=5.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("code,test", RIGHT, ids=[str(i) for i in range(len(RIGHT))])
def test_a_right_program_using_the_standard_modules_the_test_reads_passes(ex, code, test):
    res = ex.run_matrix(TASK, [code], [Test.assertion(test)])
    assert res.status[0][0] == "pass", (res.status, res.errors)


@pytest.mark.parametrize("code,test", WRONG, ids=[str(i) for i in range(len(WRONG))])
def test_a_wrong_program_in_the_same_shapes_does_not_pass(ex, code, test):
    res = ex.run_matrix(TASK, [code], [Test.assertion(test)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)
