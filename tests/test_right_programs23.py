"""Right programs around a task's setup (MBPP's ``test_setup_code``) keep passing, split and
generic, pure and impure, now that the setup's values are computed where no program ran (red-team
pass 23: a process of the setup alone for split tests, the test process for generic ones): data
the setup binds, helpers and classes it defines that the test and the program share, modules it
imports, state its helpers keep, files it writes, and setups that read the program's own
definitions (which cannot run alone)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"


ex = executor_fixture()


# (name, program, setup, tests): every test passes in plain Python (setup, then program, then test)
RIGHT = [
    ("data", "def f(x):\n    return [1, 2, 3]\n", "want = [1, 2, 3]\n",
     ["assert f(3) == want", "assert f(3) == sorted(want)", "assert f(3) == want[:]\nassert len(want) == 3"]),
    ("dict", "def f(x):\n    return {'a': x}\n", "cases = {1: {'a': 1}, 2: {'a': 2}}\n",
     ["assert f(1) == cases[1]", "for k, v in cases.items():\n    assert f(k) == v"]),
    ("helper", "def f(x):\n    return [3, 1, 2]\n", "def norm(xs):\n    return sorted(xs)\n",
     ["assert norm(f(3)) == [1, 2, 3]", "assert sorted(f(3)) == norm([2, 3, 1])"]),
    ("module", "import math\ndef f(x):\n    return math.floor(x)\n", "import math\nwant = math.floor(2.5)\n",
     ["assert f(2.5) == want", "assert f(2.5) == math.floor(2.5)"]),
    ("class", "def f(n):\n    return 0 if n is None else 1 + max(f(n.l), f(n.r))\n",
     "class Node:\n    def __init__(self, v, l=None, r=None):\n        self.v, self.l, self.r = v, l, r\n"
     "root = Node(1, Node(2, Node(4)), Node(3))\n",
     ["assert f(root) == 3", "assert f(Node(1)) == 1"]),
    ("reads_program", "def f(x):\n    return 2 * x\nclass Box:\n    def __init__(self, v):\n        self.v = v\n",
     "base = f(1)\nbox = Box(5)\n", ["assert f(3) == base * 3", "assert f(box.v) == 10", "assert base == 2"]),
    ("counter", "def f(x):\n    return x + 1\n",
     "calls = 0\ndef g(x):\n    global calls\n    calls += 1\n    return calls\n",
     ["assert f(0) == g(5)", "assert g(0) == 1\nassert f(1) == g(0)"]),
    ("random", "def f(x):\n    return x\n", "import random\nrandom.seed(7)\nwant = random.randint(0, 10 ** 6)\n",
     ["assert f(want) == want", "import random\nrandom.seed(7)\nassert f(random.randint(0, 10 ** 6)) == want"]),
    ("file", IMPURE + "def f(p):\n    with open(p) as fh:\n        return fh.read()\n",
     "with open('data.txt', 'w') as fh:\n    fh.write('abc')\nwant = 'abc'\n",
     ["assert f('data.txt') == want"]),
    ("tuple_set", "def f(x):\n    return (1, frozenset({2}))\n", "want = (1, frozenset({2}))\nnone = None\n",
     ["assert f(0) == want", "assert none is None\nassert f(1) == want"]),
    ("counter_data", "import collections\ndef f(s):\n    return collections.Counter(s)\n",
     "import collections\nwant = collections.Counter('aab')\n",
     ["assert f('aba') == want", "assert f('aab')['a'] == want['a']\nassert want.most_common(1) == [('a', 2)]"]),
    ("fraction", "from fractions import Fraction\ndef f(x):\n    return Fraction(1, x)\n",
     "from fractions import Fraction\nwant = [Fraction(1, 3)]\n", ["assert [f(3)] == want"]),
    ("decimal_ctx", "import decimal\ndef f(x):\n    return decimal.Decimal(1) / decimal.Decimal(x)\n",
     "import decimal\ndecimal.getcontext().prec = 5\nwant = decimal.Decimal('0.33333')\n", ["assert f(3) == want"]),
    ("env", "import os\ndef f(x):\n    return int(os.environ.get('COEVO_X23', '0')) + x\n",
     "import os\nos.environ['COEVO_X23'] = '7'\nwant = 7\n", ["assert f(0) == want"]),
    ("datetime", "import datetime\ndef f(d):\n    return d + datetime.timedelta(days=1)\n",
     "import datetime\nday = datetime.date(2020, 1, 31)\nwant = datetime.date(2020, 2, 1)\n",
     ["assert f(day) == want"]),
    ("counter_arg", "import collections\ndef f(c):\n    return c + collections.Counter('a')\n",
     "import collections\nwant_in = collections.Counter('ab')\nq = collections.deque([1, 2])\n",
     ["assert f(want_in) == collections.Counter('aab')", "assert list(q) == [1, 2]\nassert f(want_in)['a'] == 2"]),
    # a setup whose values differ from run to run: the program's and the test's must be one run's
    ("unseeded", "def f(x):\n    return x * 2\ndef g():\n    return VAL\n",
     "import random\nwant = random.random()\nVAL = [random.random()]\n",
     ["assert f(want) == want * 2", "assert g() == VAL", "assert g()[0] * 2 == f(VAL[0])"]),
    # HumanEval: the task's test file is the setup (METADATA, ``def check(candidate)``), the test
    # ``check(f)`` where its asserts could not be split out (a loop)
    ("humaneval", "def f(xs, k=1):\n    xs.sort()\n    return [x * k for x in xs]\n",
     "METADATA = {'author': 'x', 'dataset': 'test'}\n\n"
     "def check(candidate):\n    for i in range(3):\n        assert candidate([i, 0]) == sorted([i, 0])\n"
     "    lst = [3, 1, 2]\n    candidate(lst)\n    assert lst == [1, 2, 3]\n"
     "    assert abs(candidate([0.1], 3)[0] - 0.3) < 1e-6\n    try:\n        candidate(None)\n"
     "    except AttributeError:\n        pass\n    else:\n        assert False\n",
     ["check(f)", "assert METADATA['dataset'] == 'test'\ncheck(f)"]),
    # an int of more digits than Python's JSON reads, beside a setup's value (the worker's
    # replacement of the setup's values reads the claim's body)
    ("big_int", "def f(n):\n    return 7 ** n\n", "want = 5\n",
     ["assert f(6000) == 7 ** 6000 and want == 5", "assert [f(6000) % 10, want] == [1, 5]"]),
    # data bound before the setup reads the program, and data it changes afterwards
    ("data_then_program", "class Node:\n    def __init__(self, v):\n        self.v = v\n"
     "def f(x):\n    return [x.v, 2, 3]\n",
     "want = [1, 2, 3]\nroot = Node(1)\nlater = []\nlater.append(root.v)\nsame = [1]\nsame = same + [root.v]\n",
     ["assert f(root) == want", "assert later == [1] and same == [1, 1]\nassert f(root) == want"]),
    # a function bound before the setup reads the program, reading a name rebound afterwards
    ("rebound_after", "class Node:\n    def __init__(self, v):\n        self.v = v\ndef f(x):\n    return [2]\n",
     "want = [1]\ndef g():\n    return want\nroot = Node(1)\nwant = [2]\nk = (3, 'a')\n",
     ["assert f(0) == g()", "assert f(0) == want and k == (3, 'a')"]),
    ("limit", "def f(x):\n    return min(x, LIMIT)\n", "LIMIT = 10\n", ["assert f(50) == LIMIT", "assert f(3) == 3"]),
]

CELLS = [(name, prefix + code, setup, test, shape) for name, code, setup, tests in RIGHT for test in tests
         for prefix in ("", IMPURE) for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,setup,test,shape", CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(CELLS)])
def test_a_right_program_around_a_setup_passes(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == "pass", detail


# a wrong program around the same setups still fails
WRONG = [
    ("data", "def f(x):\n    return [9]\n", "want = [1, 2, 3]\n", "assert f(3) == want"),
    ("helper", "def f(x):\n    return [9]\n", "def norm(xs):\n    return sorted(xs)\n",
     "assert f(3) == norm([3, 1, 2])"),
    ("humaneval", "def f(xs, k=1):\n    return [x * k for x in xs]\n",
     "def check(candidate):\n    for i in range(3):\n        assert candidate([i, 0]) == sorted([i, 0])\n",
     "check(f)"),
    ("class", "def f(n):\n    return 7\n",
     "class Node:\n    def __init__(self, v, l=None):\n        self.v, self.l = v, l\nroot = Node(1, Node(2))\n",
     "assert f(root) == 2"),
]


@pytest.mark.parametrize("name,code,setup,test", WRONG, ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("shape", ["split", "generic"])
@pytest.mark.parametrize("prefix", ["", IMPURE], ids=["pure", "impure"])
def test_a_wrong_program_around_a_setup_fails(ex, name, code, setup, test, shape, prefix):
    status, detail = run_cell(ex, prefix + code, setup, test, shape)
    assert status == "fail", detail
