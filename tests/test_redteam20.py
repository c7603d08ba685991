"""Red-team pass 20 on the matrix's verdicts: a wrong program must not pass a test by changing what
the test's own side computes (the task's setup helpers, a standard module's classes or inner
functions, ``sys`` / ``builtins``), nor a float answer pass an integer expected value by the float
tolerance's relative part. Each forgery here passed on the tree before its fix (406af34)."""

from __future__ import annotations

import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(120)]

TASK = Task("t", "p", entry_point="f")
IMPURE = "import os\n_sep = getattr(os, 'sep')\n"  # (runs one process per test, as most programs that import os)


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=3.0, workers=1)) as e:
        yield e


def _status(ex, task, code, test):
    res = ex.run_matrix(task, [code], [test if isinstance(test, Test) else Test.assertion(test)])
    return res.status[0][0], res.errors[0][0]


# A10: the task's setup (MBPP's test_setup_code) ran in the program's namespace, so a helper it
# defines read the program's `sorted` / `abs` / `len` when a test called it
SETUP_FORGERIES = [
    ("def norm(x):\n    return sorted(x)\n", "def sorted(x):\n    return 'zz'\ndef f(x):\n    return 'zz'\n",
     "assert f([3, 1]) == norm([3, 1])"),
    ("def close(a, b):\n    return abs(a - b) < 1e-6\n", "abs = lambda x: 0\ndef f(x):\n    return 99\n",
     "assert close(f(1), 3.14)"),
    ("def n(x):\n    return len(x)\n", "len = lambda x: 3\ndef f(x):\n    return 'a'\n",
     "def test_a():\n    assert n(f(1)) == 3\n"),
    ("want = sorted([3, 1, 2])\n", "def sorted(x):\n    return 'zz'\ndef f(x):\n    return 'zz'\n",
     "assert f([3, 1, 2]) == want"),
    ("def close(a, b):\n    return abs(a - b) < 1e-6\n",
     IMPURE + "import builtins\nbuiltins.abs = lambda x: 0\ndef f(x):\n    return 99\n",
     "assert close(f(1), 3.14)"),
]


# the program rebinding (`global want`) or changing in place what the setup bound, inside its call,
# or a setup helper's globals through the helper (`norm.__globals__`)
NORM, WANT = "def norm(x):\n    return sorted(x)\n", "want = [1, 3]\n"
REBIND_NORM = "def f(x):\n    global norm\n    norm = lambda y: 'zz'\n    return 'zz'\n"
REBIND_WANT = "def f(x):\n    global want\n    want = 'zz'\n    return 'zz'\n"
RE_NORM = "import re\ndef norm(s):\n    return re.sub('l+', 'l', s)\n"
SETUP_FORGERIES += [
    (RE_NORM, IMPURE + "import re\nre.sub = lambda *a, **k: 'zz'\ndef f(s):\n    return 'zz'\n",
     "assert f('hello') == norm('hello')"),
    (RE_NORM, IMPURE + "import re\nre.sub = lambda *a, **k: 'zz'\ndef f(s):\n    return 'zz'\n",
     "def test_a():\n    assert f('hello') == norm('hello')\n"),
    (RE_NORM, IMPURE + "import re\ndef f(s):\n    re.sub = lambda *a, **k: 'zz'\n    return 'zz'\n",
     "def test_a():\n    assert f('hello') == norm('hello')\n"),
    (NORM, REBIND_NORM, "assert f([3, 1]) == norm([3, 1])"),
    (NORM, REBIND_NORM, "def test_a():\n    assert f([3, 1]) == norm([3, 1])\n"),
    (WANT, REBIND_WANT, "assert f([3, 1]) == want"),
    (WANT, REBIND_WANT, "def test_a():\n    assert f([3, 1]) == want\n"),
    (WANT, "def f(x):\n    want[:] = ['zz']\n    return ['zz']\n", "assert f([3, 1]) == want"),
    (WANT, "def f(x):\n    want[:] = ['zz']\n    return ['zz']\n", "def test_a():\n    assert f([3, 1]) == want\n"),
    (NORM, IMPURE + "def f(x):\n    norm.__globals__['sorted'] = lambda y: 'zz'\n    return 'zz'\n",
     "assert f([3, 1]) == norm([3, 1])"),
    (NORM, IMPURE + "def f(x):\n    norm.__globals__['__builtins__']['sorted'] = lambda y: 'zz'\n    return 'zz'\n",
     "assert f([3, 1]) == norm([3, 1])"),
    (NORM, IMPURE + "def f(x):\n    norm.__globals__['sorted'] = lambda y: 'zz'\n    return 'zz'\n",
     "def test_a():\n    assert f([3, 1]) == norm([3, 1])\n"),
    (NORM, IMPURE + "def f(x):\n    norm.__globals__['__builtins__']['sorted'] = lambda y: 'zz'\n    return 'zz'\n",
     "def test_a():\n    assert f([3, 1]) == norm([3, 1])\n"),
]


@pytest.mark.parametrize("setup,code,test", SETUP_FORGERIES, ids=[t[:30] for _, _, t in SETUP_FORGERIES])
def test_a_setup_helper_reads_the_builtins_not_the_programs_names(ex, setup, code, test):
    task = Task("t", "p", entry_point="f", setup=setup)
    status, err = _status(ex, task, code, test)
    assert status in ("fail", "error"), err


def test_a_setup_still_sees_the_programs_definitions(ex):
    """MBPP 367/927: the setup builds trees of the program's ``Node`` class."""
    task = Task("t", "p", entry_point="f", setup="root = Node(3)\nroot.left = Node(4)\n")
    code = ("class Node:\n    def __init__(self, v):\n        self.v, self.left = v, None\n"
            "def sorted(x):\n    return list(x)\n"
            "def f(r):\n    return sorted([r.left.v, r.v])\n")
    for test in ("assert f(root) == [4, 3]", "def test_a():\n    assert f(root) == [4, 3]\n"):
        assert _status(ex, task, code, test)[0] == "pass"
    assert _status(ex, task, IMPURE + code, "assert f(root) == [4, 3]")[0] == "pass"
    right = "def f(x):\n    return sorted(x)\n"
    for setup, test in ((WANT, "assert f([3, 1]) == want"), (WANT, "def test_a():\n    assert f([3, 1]) == want\n"),
                        (NORM, "assert f([3, 1]) == norm([3, 1])"), (NORM, "assert norm(f([3, 1])) == [1, 3]"),
                        (WANT + "want.append(4)\n", "assert f([3, 4, 1]) == want"),
                        (RE_NORM, "def test_a():\n    assert norm('hello') == 'helo'\n")):
        assert _status(ex, Task("t", "p", entry_point="f", setup=setup), right, test)[0] == "pass", test
    # data the standard library fills on first use (time.tzname after strptime) is no change of the
    # program's, where the setup reads it (014a6f9 took it for one: an error for a right program)
    task = Task("t", "p", entry_point="f", setup="import time\ndef tz():\n    return len(time.tzname)\n")
    code = "import time\ntime.strptime('2020', '%Y')\ndef f():\n    return 1\n"
    for prog in (code, IMPURE + code):
        for test in ("assert f() == 1 and tz() == 2", "def test_a():\n    assert f() == 1 and tz() == 2\n"):
            assert _status(ex, task, prog, test)[0] == "pass", (prog, test)


# A4: a standard module's class or inner function patched, one level below what was checked; the
# test's expected side (or a call wrapping the program's value) ran the program's patch
COUNTER_MC = ("import collections\ncollections.Counter.most_common = lambda self, n=None: [('a', 2)]\n"
              "def f(s):\n    return 'zzz'\n")
MODULE_FORGERIES = [
    (COUNTER_MC, "assert collections.Counter(f('aab')).most_common(1) == [('a', 2)]"),
    (IMPURE + COUNTER_MC, "assert collections.Counter(f('aab')).most_common(1) == [('a', 2)]"),
    (IMPURE + "os.path.join = lambda *a: 'a/b'\ndef f(a):\n    return 'zz'\n",
     "assert os.path.join(f(1), 'b') == 'a/b'"),
    (IMPURE + "import difflib\ndifflib.SequenceMatcher.ratio = lambda self: 0.5\ndef f(a, b):\n    return 0.5\n",
     "assert f('ab', 'xy') == difflib.SequenceMatcher(None, 'ab', 'xy').ratio()"),
    (IMPURE + "import difflib\ndifflib.SequenceMatcher.ratio = lambda self: 0.5\ndef f(a, b):\n    return 0.5\n",
     "def test_a():\n    assert f('ab', 'xy') == difflib.SequenceMatcher(None, 'ab', 'xy').ratio()\n"),
    (IMPURE + "import textwrap\ntextwrap.TextWrapper.wrap = lambda self, t: ['x']\ndef f(s):\n    return ['x']\n",
     "def test_a():\n    assert f('a b') == textwrap.TextWrapper(width=1).wrap('a b')\n"),
    (IMPURE + "import string\nstring.Template.substitute = lambda self, *a, **k: 'q'\ndef f(s):\n    return 'q'\n",
     "def test_a():\n    assert f(1) == string.Template('$a').substitute(a=1)\n"),
    ("import statistics\ndef f(x):\n    statistics._sum = lambda data: (float, 0, 1)\n    return 0.0\n",
     "def test_a():\n    assert f([1, 2, 3]) == statistics.mean([1, 2, 3])\n"),
    (IMPURE + "import re\nclass P:\n    def sub(self, *a, **k):\n        return 'nope'\n"
     "def f(x):\n    re._compile = lambda *a, **k: P()\n    return 'nope'\n",
     "def test_a():\n    assert f(1) == re.sub('l+', 'l', 'hello')\n"),
    (IMPURE + "import json\ndef f(x):\n"
     "    json._default_decoder = type('D', (), {'decode': lambda s, x: 7})()\n    return 7\n",
     "def test_a():\n    assert f(1) == json.loads('[1, 2]')\n"),
    # the patch made inside the program's call, between the test's read of the module and its call
    (IMPURE + "import statistics\ndef f(x):\n    statistics._sum = lambda data: (float, 2, 1)\n    return [0]\n",
     "def test_a():\n    assert statistics.mean(f(1)) == 2\n"),
    # a patch that puts itself back when called
    ("import collections\n_o = collections.Counter.most_common\ndef _m(self, n=None):\n"
     "    collections.Counter.most_common = _o\n    return [('a', 2)]\n"
     "def f(s):\n    collections.Counter.most_common = _m\n    return 'zzz'\n",
     "assert collections.Counter(f('aab')).most_common(1) == [('a', 2)]"),
    (IMPURE + "import re\n_o = re.sub\ndef _s(*a, **k):\n    re.sub = _o\n    return 'ok'\nre.sub = _s\n"
     "def f(a):\n    return 'zz'\n", "assert re.sub('z', 'o', f(1)) == 'ok'"),
    # A6: sys and builtins were left out of the module checks (MBPP 596 reads sys.getsizeof)
    ("import sys\nsys.getsizeof = lambda x: 1\ndef f(a):\n    return 1\n",
     "assert f((1, 2)) == sys.getsizeof((1, 2))"),
    (IMPURE + "import sys\nsys.maxsize = 5\ndef f(x):\n    return 5\n", "assert f(1) == sys.maxsize"),
    (IMPURE + "import builtins\nbuiltins.sorted = lambda x: 'zz'\ndef f(x):\n    return 'zz'\n",
     "assert f([2, 1]) == builtins.sorted([2, 1])"),
]


@pytest.mark.parametrize("code,test", MODULE_FORGERIES, ids=[t.splitlines()[-1][:40] for _, t in MODULE_FORGERIES])
def test_a_standard_modules_classes_and_inner_functions_are_the_tests_own(ex, code, test):
    status, err = _status(ex, TASK, code, test)
    assert status in ("fail", "error"), err


RIGHT = [
    ("import collections\ndef f(s):\n    return collections.Counter(s).most_common(1)\n",
     "assert collections.Counter('aab').most_common(1) == f('aab')"),
    ("import collections\ndef f(s):\n    return s\n",
     "assert collections.Counter(f('aab')).most_common(1) == [('a', 2)]"),
    (IMPURE + "def f(a):\n    return a\n", "assert os.path.join(f('a'), 'b') == 'a/b'"),
    ("import statistics\ndef f(x):\n    return x\n", "def test_a():\n    assert statistics.mean(f([1, 2, 3])) == 2\n"),
    (IMPURE + "import difflib\ndef f(a, b):\n    return difflib.SequenceMatcher(None, a, b).ratio()\n",
     "def test_a():\n    assert f('ab', 'xy') == difflib.SequenceMatcher(None, 'ab', 'xy').ratio()\n"),
    ("import sys\ndef f(t):\n    return sys.getsizeof(t)\n", "assert f((1, 2)) == sys.getsizeof((1, 2))"),
    ("import logging\ndef f(x):\n    logging.getLogger('a').warning('w')\n    return x\n",
     "import logging\ndef test_a():\n    assert f(1) == 1\n"
     "    assert logging.getLogger('a').isEnabledFor(logging.WARNING)\n"),
]


@pytest.mark.parametrize("code,test", RIGHT, ids=[t.splitlines()[-1][:40] for _, t in RIGHT])
def test_right_programs_reading_standard_modules_still_pass(ex, code, test):
    status, err = _status(ex, TASK, code, test)
    assert status == "pass", err


def test_a_float_answer_does_not_pass_a_large_integer_by_the_relative_tolerance():
    """L1: under --float-tolerance 1e-9, ``1000000008.0`` was within the relative tolerance of
    ``1000000007`` (two ints were exact already); an integer expected value now takes a float
    answer only within the absolute tolerance, and exactly past 2**53."""
    P = Task("s", "p", kind="stdio")
    with Executor(ExecConfig(timeout=2.0, workers=1, float_tolerance=1e-9)) as e:
        def st(code, test, task=TASK):
            return e.run_matrix(task, [code], [test]).status[0][0]
        big = "def f(x):\n    return 1000000008.0\n"
        assert st(big, Test.assertion("assert f(5) == 1000000007")) == "fail"
        assert st(big, Test.call_expected("f(5)", "1000000007")) == "fail"
        assert st(big, Test.assertion("assert f(5) == [1000000007]")) == "fail"
        assert st("print(1000000008.0)", Test.stdio("", "1000000007"), P) == "fail"
        assert st("def f(x):\n    return 2.0**60\n", Test.assertion(f"assert f(5) == {2**60 + 1}")) == "fail"
        # as before: an integer expected value met by a float within the absolute tolerance
        assert st("def f(x):\n    return 2.0000000000001\n", Test.assertion("assert f(5) == 2")) == "pass"
        assert st("def f(x):\n    return 1000000007.0\n", Test.assertion("assert f(5) == 1000000007")) == "pass"
        assert st("print(1000000007.0)", Test.stdio("", "1000000007"), P) == "pass"
        assert st("def f(x):\n    return 0.1 + 0.2\n", Test.assertion("assert f(5) == 0.3")) == "pass"
        assert st("def f(x):\n    return 1000000008.0\n", Test.assertion("assert f(5) == 1000000007.5")) == "pass"
        # a float whose nearest integer is the expected one keeps the relative tolerance (review
        # 22: (0.1 + 0.2) * 10**10 = 3000000000.0000005 failed against 3000000000)
        near = "def f(x):\n    return (0.1 + 0.2) * x\n"
        assert st(near, Test.call_expected("f(10**10)", "3000000000")) == "pass"
        assert st(near, Test.assertion("assert f(10**10) == [3000000000][0]")) == "pass"
        assert st("print((0.1 + 0.2) * 10**10)", Test.stdio("", "3000000000"), P) == "pass"
        # a number as a judge reads it: float() and int() also read fullwidth and Arabic-Indic
        # digits and underscores, which passed an expected "10" under the tolerance
        for shown in ("\uff11\uff10", "\u0661\u0660", "1_0"):
            assert st(f"print({shown!r})", Test.stdio("", "10"), P) == "fail", shown
        assert st("print('1e1 +5 -.5')", Test.stdio("", "10 5 -0.5"), P) == "pass"


@pytest.mark.timeout(60)
def test_reading_proc_meminfo_is_no_memory_access_in_process_isolation():
    """The audit hook stopped any open of a /proc path containing "mem": a right program reading
    /proc/meminfo (the machine's memory, as a cache sizing itself does) was an error in process
    isolation. A process's ``mem`` is still refused (tests/test_sandbox_process.py holds the routes)."""
    from matrix import workers as sandbox

    sandbox._WARNED.clear()
    code = "def f():\n    with open('/proc/meminfo') as fh:\n        return fh.readline().split(':')[0]\n"
    mem = "def f():\n    with open('/proc/self/mem', 'rb') as fh:\n        return 'MemTotal'\n"
    with Executor(ExecConfig(timeout=2.0, workers=1, isolation="process")) as e:
        res = e.run_matrix(TASK, [code, mem], [Test.assertion("assert f() == 'MemTotal'")])
    assert res.status[0] == ["pass"], res.errors
    assert res.status[1] != ["pass"], res.errors


def test_cffi_is_refused_like_ctypes(ex):
    """cffi's backend reads and writes raw memory (``ffi.cast``, ``ffi.buffer``) as ctypes does; it
    was not among the modules the sandbox refuses. Its import now fails as ctypes' does, where it
    is installed or not."""
    code = ("def f():\n    try:\n        import _cffi_backend\n    except ImportError as exc:\n"
            "        return 'sandbox' in str(exc)\n    return 'imported'\n")
    status, err = _status(ex, TASK, code, "assert f() is True")
    assert status == "pass", err
