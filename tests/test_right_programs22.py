"""Right programs that must keep passing beside red-team pass 22 (tests/test_redteam22.py): the
program moves, through the modules' own functions, state that a module computing from its
arguments keeps (``random``'s generator and ``gauss_next``, ``calendar.setfirstweekday``,
``hashlib``'s constructor cache, ``re``'s cache filled past its size, a ``decimal`` context), or
uses its own subclasses and objects with the module (an encoder subclass, ``__deepcopy__``, a
``string.Template`` subclass), while a generic test reads the module and calls it."""

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
    (IMPURE + "import random\ndef f(n):\n    random.seed(n)\n    return [random.gauss(0, 1) for _ in range(3)]\n",
     "random.seed(1)\nwant = [random.gauss(0, 1) for _ in range(3)]\nassert f(1) == want\nassert random.random() < 1"),
    (IMPURE + "import calendar\ndef f(y, m):\n    calendar.setfirstweekday(calendar.SUNDAY)\n"
     "    return calendar.monthcalendar(y, m)[0][0]\n",
     "assert f(2024, 1) == 0\nassert calendar.monthrange(2024, 2) == (3, 29)"),
    (IMPURE + "import hashlib\ndef f(s):\n    return hashlib.new('sha1', s.encode()).hexdigest()\n",
     "assert f('a') == hashlib.sha1(b'a').hexdigest()\nassert f('b') == hashlib.new('sha1', b'b').hexdigest()"),
    (IMPURE + "import re\ndef f(n):\n    return sum(1 for i in range(n) if re.fullmatch('a{%d}' % i, 'a' * i))\n",
     "assert f(600) == 600\nassert re.fullmatch('[a-z]+', 'abc')\nassert re.compile('b+').sub('b', 'abbb') == 'ab'"),
    (IMPURE + "import decimal\ndef f(a, b):\n    decimal.getcontext().prec = 5\n"
     "    return decimal.Decimal(a) / decimal.Decimal(b)\n",
     "got = f(1, 3)\nassert str(got) == '0.33333'\nassert decimal.Decimal(2) * 2 == 4"),
    (IMPURE + "import json\nclass E(json.JSONEncoder):\n    item_separator = ';'\n"
     "def f(x):\n    return json.dumps(x, cls=E)\n",
     "assert f([1, 2]) == '[1;2]'\nassert json.dumps([1, 2]) == '[1, 2]'"),
    (IMPURE + "import copy\nclass B:\n    def __init__(s, xs):\n        s.xs = xs\n"
     "    def __deepcopy__(s, memo):\n        return B(list(s.xs))\ndef f(x):\n    return B([x])\n",
     "b = f(1)\nc = copy.deepcopy(b)\nassert c.xs == [1] and c is not b"),
    (IMPURE + "import string\nclass T(string.Template):\n    delimiter = '%'\ndef f(s):\n"
     "    return T(s).substitute(x=1)\n",
     "assert f('a%x') == 'a1'\nassert string.Template('$x').substitute(x=2) == '2'"),
    (IMPURE + "import math\ndef f(r):\n    return math.pi * r * r\n",
     "assert math.isclose(f(2), 4 * math.pi)\nassert math.tau == 2 * math.pi"),
    (IMPURE + "import json\nclass S(str):\n    pass\ndef f(x):\n    return S(x)\n",
     "assert json.dumps([f('a'), 'b']) == '[\"a\", \"b\"]'"),
    # what the test sets on the program's standard module (or its own, forwarded), read back
    (IMPURE + "import statistics\ndef f(xs):\n    return statistics.mean(xs)\n",
     "from unittest import mock\nwith mock.patch.object(statistics, 'mean', return_value=7):\n"
     "    assert f([1, 2]) == 7\n    assert statistics.mean([1]) == 7\nassert statistics.mean([1, 2]) == 1.5"),
    (IMPURE + "import random\ndef f():\n    return random.random()\n",
     "import random\nfrom unittest import mock\nwith mock.patch('random.random', return_value=0.5):\n"
     "    assert f() == 0.5 and random.random() == 0.5"),
    (IMPURE + "import math\ndef f(x):\n    return x\n",
     "math.tau = 6.0\nassert f(math.tau) == 6.0\nassert math.pi > 3.14"),
    (IMPURE + "import json\ndef f(s):\n    return json.loads(s)\n",
     "try:\n    f('{')\nexcept json.decoder.JSONDecodeError as e:\n    assert e.pos == 1\n"
     "assert json.decoder.scanstring('a\"', 0) == ('a', 2)"),
    (IMPURE + "import string, re\ndef f(s):\n    return re.sub('[%s]' % re.escape(string.punctuation), '', s)\n",
     "assert f('a,b!') == 'ab'\nassert string.punctuation[0] == '!'\nassert re.IGNORECASE == 2"),
    # a str or int subclass's value (a member) given to a computing module: computed on its value
    (IMPURE + "import json\nfrom enum import Enum\nclass Color(str, Enum):\n    RED = 'red'\n"
     "def f():\n    return Color.RED\n",
     "assert json.dumps(f()) == '\"red\"'\nassert json.dumps({'c': f()}) == '{\"c\": \"red\"}'"),
    (IMPURE + "import re, textwrap, copy\nclass S(str):\n    pass\ndef f(s):\n    return S(s)\n",
     "assert re.fullmatch('[a-z]+', f('abc'))\nassert textwrap.shorten(f('abc def'), 20) == 'abc def'\n"
     "assert type(copy.copy(f('x'))).__name__ == 'S'"),
    (IMPURE + "import math, statistics, copy\nclass N(int):\n    pass\ndef f(n):\n    return N(n)\n",
     "assert math.factorial(f(5)) == 120\nassert statistics.mean([f(5), 1]) == 3"),
    # dict subclasses, judged on what they hold (the encoder reads dict's own views)
    ("import collections\nclass D(collections.OrderedDict):\n    def first(self):\n        return next(iter(self))\n"
     "def f(x):\n    d = D(a=1, b=2)\n    d.move_to_end('a')\n    return d\n",
     "assert list(f(1)) == ['b', 'a']\nassert f(1).first() == 'b'"),
    ("class D(dict):\n    def __iter__(self):\n        return iter(sorted(dict.keys(self)))\n    def keys(self):\n"
     "        return list(iter(self))\ndef f(x):\n    return D(b=2, a=1)\n",
     "assert f(1) == {'a': 1, 'b': 2}\nassert list(f(1)) == ['a', 'b']\nassert dict(f(1)) == {'a': 1, 'b': 2}"),
    ("class D(dict):\n    def __missing__(self, k):\n        return 0\ndef f(x):\n    return D(a=x)\n",
     "assert f(3) == {'a': 3}\nassert f(3)['z'] == 0"),
]


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=10.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("code,test", RIGHT, ids=[str(i) for i in range(len(RIGHT))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_right_program_moving_a_computing_modules_state_still_passes(ex, code, test, shape):
    t = test if shape == "split" else _generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] == "pass", (res.status, res.errors)


# subclasses of the standard library's dict subclasses whose == is their own (OrderedDict's is
# order-sensitive against another OrderedDict, Counter's a multiset's): verdicts as plain Python
ODICT = ("import collections\nclass D(collections.OrderedDict):\n    def first(self):\n"
         "        return next(iter(self))\ndef f(x):\n    d = D(a=1, b=2)\n    d.move_to_end('a')\n    return d\n")
COUNTER = ("import collections\nclass C(collections.Counter):\n    def top(self):\n"
           "        return self.most_common(1)\ndef f(s):\n    return C(s)\n")
STD_SUBCLASSES = [
    (ODICT, "assert f(1) == {'a': 1, 'b': 2}", "pass"),
    (ODICT, "assert f(1) == collections.OrderedDict([('b', 2), ('a', 1)])", "pass"),
    (ODICT, "assert f(1) == collections.OrderedDict([('a', 1), ('b', 2)])", "fail"),
    (COUNTER, "assert f('aab') == {'a': 2, 'b': 1}", "pass"),
    (COUNTER, "assert f('aab') == collections.Counter('aba')", "pass"),
    (COUNTER, "assert f('aab') == {'a': 2}", "fail"),
]


@pytest.mark.parametrize("code,test,want", STD_SUBCLASSES, ids=[str(i) for i in range(len(STD_SUBCLASSES))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_subclass_of_a_standard_dict_compares_as_plain_python_says(ex, code, test, want, shape):
    t = test if shape == "split" else _generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] == want, (res.status, res.errors)
