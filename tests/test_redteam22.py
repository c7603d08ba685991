"""Red-team pass 22 on the matrix's verdicts: a wrong program must not pass a generic test by
changing, inside the call the test made, the state of a standard module that computes from its
arguments (``OWN_COMPUTING``) where the checks of pass 20 and 21 did not look: a constant replaced
by another value of its type (``math.pi = 3.0``, ``string.ascii_lowercase``, a class's
``json.JSONEncoder.item_separator``), behaviour put on an instance the module holds
(``json._default_encoder.encode``), an entry of a module's table replaced
(``copy._deepcopy_dispatch[list]``, a ``re._cache`` entry) -- read by the test's later reads of the
module or by its calls given an object of the program's (a ``str`` subclass's value, an instance),
which compute in the program's process. Each forgery here passed on 954746b."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, as_generic, executor_fixture

from matrix.tasks import Task, Test

pytestmark = FORK_ONLY

TASK = Task("t", "p", entry_point="f")
IMPURE = "import os\n"  # (one process per test, as most programs that import os)


ex = executor_fixture()


# (program, test): a constant of a standard module the test reads after the program's call
CONSTANTS = [
    (IMPURE + "import math\ndef f(x):\n    math.pi = 3.0\n    return 3.0 * x\n",
     "assert f(0) == math.pi * 0\nassert f(1) == math.pi"),
    ("import math\ndef f(x):\n    math.pi = 3.0\n    return 3.0 * x\n",
     "assert f(0) == math.pi * 0\nassert f(1) == math.pi"),
    (IMPURE + "import string\ndef f(n):\n    string.ascii_lowercase = '0123456789'\n    return '12345'[:n]\n",
     "assert len(string.digits) == 10\nassert all(c in string.ascii_lowercase for c in f(5))"),
]
# (program, test): a standard module the test read before the program's call, changed inside it,
# read again (the check before the call counted as the one after it)
AFTER_CALL = [
    (IMPURE + "import collections\ndef f(n):\n    collections.OrderedDict = dict\n    return {}\n",
     "c = collections.Counter('a')\nx = f(1)\nassert isinstance(x, collections.OrderedDict)"),
    (IMPURE + "import string\ndef f(n):\n    string.ascii_lowercase = '0123456789'\n    return '12345'[:n]\n",
     "assert len(string.digits) == 10\nx = f(5)\nassert string.ascii_lowercase == '0123456789'"),
]
# (program, test): calls given an object of the program's, computing in the program's process
GIVEN = [
    # a class's constant (the encoder's separator), json.dumps given a str subclass's value
    (IMPURE + "import json\nclass S(str):\n    pass\ndef f(x):\n    json.JSONEncoder.item_separator = ','\n"
     "    return S('a')\n", "assert json.dumps([f(1), 'b']) == '[\"a\",\"b\"]'"),
    # behaviour put on the instance json.dumps uses
    (IMPURE + "import json\njson._default_encoder.encode = lambda o: '[1, 2]'\ndef f(x):\n    return object()\n",
     "assert json.loads(json.dumps(f(1))) == [1, 2]"),
    (IMPURE + "import json\ndef f(x):\n    json._default_encoder.encode = lambda o: '[1, 2]'\n    return object()\n",
     "assert json.dumps(f(1)) == '[1, 2]'"),
    # an entry of copy's dispatch table
    (IMPURE + "import copy\nclass B:\n    def __init__(s, xs):\n        s.xs = xs\ndef f(x):\n"
     "    copy._deepcopy_dispatch[list] = lambda x, memo: [1, 2, 3]\n    return B([9])\n",
     "b = copy.deepcopy(f(1))\nassert b.xs == [1, 2, 3]"),
]


STATE = CONSTANTS + AFTER_CALL + GIVEN


@pytest.mark.parametrize("code,test", STATE, ids=[str(i) for i in range(len(STATE))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_programs_change_of_a_computing_modules_state_does_not_reach_the_test(ex, code, test, shape):
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


# (program, test): a cache of a computing module, planted, read by a call that computes in the
# program's process (given a program's object, or giving one back: a compiled pattern)
CACHES = [
    # a re._cache entry, re given a str subclass's value
    (IMPURE + "import re\nclass S(str):\n    pass\nre._cache[(str, '[a-z]+', 0)] = re.compile('.*')\n"
     "def f(x):\n    return S('123')\n", "assert re.fullmatch('[a-z]+', f(1))"),
    (IMPURE + "import re\nclass S(str):\n    pass\ndef f(x):\n    re._cache[(str, '[a-z]+', 0)] = re.compile('.*')\n"
     "    return S('123')\n", "assert re.fullmatch('[a-z]+', f(1))"),
    (IMPURE + "import re\nre._cache[(str, '[a-z]+', 0)] = re.compile('.*')\ndef f(x):\n    return '123'\n",
     "assert re.compile('[a-z]+').fullmatch(f(1))"),
    # base64's tables (None until first used), planted so that b'ho' encodes as b'hi' does
    (IMPURE + "import base64\nclass B(bytes):\n    pass\ndef f(b):\n    w = int.from_bytes(b'ho\\0\\0', 'big')\n"
     "    c2 = [b'Xl'] * 7225\n    c2[(w // 85) % 7225] = b'V!'\n    base64._b85chars2 = c2\n"
     "    base64._b85chars = [b'!'] * 85\n    return B(b'ho')\n",
     "assert base64.b85encode(f(b'hi')) == base64.b85encode(b'hi')"),
]


@pytest.mark.parametrize("code,test", CACHES, ids=[str(i) for i in range(len(CACHES))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_cache_the_program_planted_computes_nothing_for_the_test(ex, code, test, shape):
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


# (program, test): the program takes over its process (the harness's module through sys.modules) and
# turns the checks made there off, then changes what the test reads of a computing module
_HARNESS = "    H = [m for n, m in list(sys.modules.items()) if n.endswith('sandbox.harness')][0]\n"
_SERVER = "    S = [m for n, m in list(sys.modules.items()) if n.endswith('remote.program_side')][0]\n"
TAKEN_OVER = [
    (IMPURE + "import sys, statistics\ndef f(xs):\n    statistics.mean = lambda xs: 7\n" + _HARNESS
     + "    H.module_change = lambda *a, **k: None\n    return 7\n",
     "got = f([1, 2])\nassert got == statistics.mean([1, 2])"),
    (IMPURE + "import sys, statistics\ndef f(xs):\n    statistics.mean = lambda xs: 7\n" + _HARNESS
     + "    H.module_change = lambda *a, **k: None\n    return 7\n",
     "m = statistics.median([1])\ngot = f([1, 2])\nassert got == statistics.mean([1, 2])"),
    (IMPURE + "import sys, math\ndef f(x):\n    math.pi = 3.0\n" + _SERVER
     + "    S._Server._check_given = lambda self: None\n    return 3.0\n",
     "assert f(0) == 3.0\nassert f(1) == math.pi"),
    (IMPURE + "import sys, collections\ndef f(n):\n    collections.OrderedDict = dict\n" + _SERVER
     + "    S._Server._check_given = lambda self: None\n    return {}\n",
     "c = collections.Counter('a')\nx = f(1)\nassert isinstance(x, collections.OrderedDict)"),
]


@pytest.mark.parametrize("code,test", TAKEN_OVER, ids=[str(i) for i in range(len(TAKEN_OVER))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_program_that_turns_off_its_process_checks_still_reads_no_changed_module(ex, code, test, shape):
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)


# (program, test): a dict subclass whose iteration, keys and items lie about what it holds: the
# encoder copied it through them (dict.copy of a class with its own __iter__ calls keys() and
# __getitem__), so the value judged was not the one plain Python compares
_LYING = ("    def items(self):\n        return [('a', 1)]\n    def keys(self):\n        return ['a']\n"
          "    def __iter__(self):\n        return iter(['a'])\n    def __getitem__(self, k):\n        return 1\n"
          "    def __len__(self):\n        return 1\n")
ENCODED = [
    ("class D(dict):\n" + _LYING + "def f(x):\n    return D(b=2)\n", "assert f(1) == {'a': 1}"),
    (IMPURE + "class D(dict):\n" + _LYING + "def f(x):\n    return D(b=2)\n", "assert f(1) == {'a': 1}"),
    ("import collections\nclass D(collections.OrderedDict):\n" + _LYING + "def f(x):\n    return D(b=2)\n",
     "assert f(1) == {'a': 1}"),
    ("import collections\nclass D(collections.Counter):\n" + _LYING + "def f(x):\n    return D(b=2)\n",
     "assert f(1) == {'a': 1}"),
    ("import collections\nclass D(collections.defaultdict):\n" + _LYING + "def f(x):\n"
     "    return D(int, b=2)\n", "assert f(1) == {'a': 1}"),
]


@pytest.mark.parametrize("code,test", ENCODED, ids=[str(i) for i in range(len(ENCODED))])
@pytest.mark.parametrize("shape", ["split", "generic"])
def test_a_dict_subclass_is_judged_on_what_it_holds(ex, code, test, shape):
    t = test if shape == "split" else as_generic(test)
    res = ex.run_matrix(TASK, [code], [Test.assertion(t)])
    assert res.status[0][0] in ("fail", "error"), (res.status, res.errors)
