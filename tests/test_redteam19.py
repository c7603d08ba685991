"""Red-team pass 19: new ways a hostile program (or test) could forge a verdict, leave state for
another cell or run, or escape; one bounded test each, each failing on the tree before its fix."""

from __future__ import annotations

import os
import shutil

import pytest

from matrix import workers as sandbox
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

TASK = Task("t", "p", entry_point="f")


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/run/lock"), reason="root executor, host /run/lock")
@pytest.mark.timeout(60)
def test_what_a_process_mode_cell_leaves_in_any_world_writable_directory_goes_with_it(tmp_path):
    """Process isolation (a root executor: the cells run under uids of their own) removed what a
    cell left only at the top of /dev/shm, /tmp and /var/tmp: a file in /run/lock (world-writable,
    sticky, a tmpfs on most hosts) or in a world-writable directory inside /tmp outlived the cell
    and the run, for any later cell or run to read (cross-cell and cross-run state on the host)."""
    inner = f"/tmp/coevo_rt19_ww_{os.getpid()}"
    os.mkdir(inner)
    os.chmod(inner, 0o1777)  # (as /tmp/.X11-unix is)
    litter = ("def f():\n"
              f"    for d in ('/run/lock', '/var/lock', {inner!r}):\n"
              "        try:\n"
              "            open(d + '/coevo_rt19_litter', 'w').write('x')\n"
              "        except OSError:\n"
              "            pass\n"
              f"    os.mkdir({inner!r} + '/coevo_rt19_dir')\n"
              f"    open({inner!r} + '/coevo_rt19_dir/x', 'w').write('x')\n"
              "    return 3\n")
    try:
        sandbox._WARNED.clear()
        cfg = ExecConfig(timeout=2.0, memory_mb=256, workers=1, isolation="process")
        with Executor(cfg) as ex:
            res = ex.run_matrix(TASK, ["import os\n" + litter], [Test.assertion("assert f() == 3")])
            assert res.status == [["pass"]], res.errors
            left = [d for d in ("/run/lock/coevo_rt19_litter", inner + "/coevo_rt19_litter", inner + "/coevo_rt19_dir")
                    if os.path.lexists(d)]
            assert not left, left
    finally:
        for p in ("/run/lock/coevo_rt19_litter",):
            if os.path.lexists(p):
                os.unlink(p)
        shutil.rmtree(inner, ignore_errors=True)


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


def _statuses(ex, entry, codes, tests):
    m = ex.run_matrix(Task("t", "p", entry_point=entry), codes, [Test.assertion(t) for t in tests])
    return [[m.cell(i, j).status for j in range(len(tests))] for i in range(len(codes))]


def test_a_program_reads_the_input_the_test_gives_it(ex):
    """A test feeding a function that reads standard input (``sys.stdin = io.StringIO(...)``,
    ``mock.patch('builtins.input', side_effect=...)``, ``mock.patch('sys.stdin', ...)``) reached a
    program process reading its own, empty, stdin: every right program raised EOFError (an error)
    while a wrong one returning a constant passed, where ``exec(program); exec(test)`` passes the
    right one. The program's ``input()`` and ``sys.stdin`` read the test's now; what loading reads
    is still the process's own (plain Python read it before the test ran)."""
    right = "def f():\n    a = int(input())\n    b = int(input())\n    return a + b\n"
    right_stdin = ("import sys\ndef f():\n    a = int(sys.stdin.readline())\n"
                   "    return a + sum(int(x) for x in sys.stdin.read().split())\n")
    right_iter = "import sys\ndef f():\n    t = 0\n    for line in sys.stdin:\n        t += int(line)\n    return t\n"
    constant = "def f():\n    return 5\n"
    tests = ["import sys, io\nsys.stdin = io.StringIO('2\\n3\\n')\nassert f() == 5",
             "from unittest import mock\nwith mock.patch('builtins.input', side_effect=['2', '3']):\n"
             "    assert f() == 5",
             "import io\nfrom unittest import mock\nwith mock.patch('sys.stdin', io.StringIO('4\\n3\\n')):\n"
             "    assert f() == 7",
             "try:\n    f()\nexcept (EOFError, ValueError):\n    pass\nelse:\n    assert False",
             "import io, sys\nout = io.StringIO()\nsys.stdout = out\nsys.stdin = io.StringIO('1\\n2\\n')\nr = f()\n"
             "sys.stdout = sys.__stdout__\nassert r == 3"]
    got = _statuses(ex, "f", [right, right_stdin, right_iter, constant], tests)
    assert got == [["pass"] * 5, ["pass", "error", "pass", "pass", "pass"], ["pass", "fail", "pass", "fail", "pass"],
                   ["pass", "pass", "fail", "fail", "fail"]], got  # (plain Python's verdicts)
    # what the test does not give, the program reads as before: its own (empty) stdin, its fd 0
    own = "import sys\ndef f():\n    return [sys.stdin.buffer.read(), sys.stdin.isatty(), sys.stdin.fileno()]\n"
    assert _statuses(ex, "f", [own], ["try:\n    r = f()\nexcept ZeroDivisionError:\n    pass\n"
                                      "assert r == [b'', False, 0], r"]) == [["pass"]]


def test_the_environment_directory_and_command_line_the_test_sets_are_the_programs(ex):
    """A generic test setting ``os.environ`` (``mock.patch.dict`` too), changing directory
    (``os.chdir`` into a directory it made) or ``sys.argv`` (``mock.patch('sys.argv', ...)``) set
    them in its own process only: a right program reading them failed or errored, a wrong one
    returning constants passed (plain Python: one interpreter, one environment, directory and
    command line). They now reach the program before each request where the test changed them."""
    right = ("import os, sys\n"
             "def env():\n    return os.environ.get('COEVO_X', 'none')\n"
             "def here():\n    with open('data.txt') as h:\n        return h.read()\n"
             "def args():\n    return sys.argv[1:]\n"
             "def path():\n    return os.environ.get('PATH')\n")
    wrong = ("def env():\n    return 'y'\n"
             "def here():\n    return 'abc'\n"
             "def args():\n    return ['a', 'b']\n")
    tests = ["import os\nos.environ['COEVO_X'] = 'y'\nassert env() == 'y'",
             "import os\nfrom unittest import mock\nwith mock.patch.dict(os.environ, {'COEVO_X': 'w'}):\n"
             "    assert env() == 'w'\nassert env() == 'none'",
             "import os\nos.environ['COEVO_X'] = 'y'\nassert env() == 'y'\ndel os.environ['COEVO_X']\n"
             "assert env() == 'none'",
             "import os, tempfile\nd = tempfile.mkdtemp()\nos.chdir(d)\nwith open('data.txt', 'w') as h:\n"
             "    h.write('abc')\nassert here() == 'abc'",
             "import sys\nsys.argv = ['prog', 'a', 'b']\nassert args() == ['a', 'b']",
             "from unittest import mock\nwith mock.patch('sys.argv', ['p', '-n', '3']):\n"
             "    assert args() == ['-n', '3']",
             "import os\nos.environ['PATH'] = '/x'\nassert os.environ['PATH'] == path() == '/x'\n"
             "del os.environ['PATH']\nassert path() is None\nos.environ['PATH'] = '/y'\nassert path() == '/y'",
             "import sys\nsys.argv[1:] = ['q']\nassert args() == ['q']\nsys.argv[1:] = []\nassert args() == []"]
    got = _statuses(ex, "env", [right, wrong], tests)
    assert got == [["pass"] * 8, ["pass", "fail", "fail", "pass", "pass", "fail", "error", "fail"]], got  # (plain's)


def test_a_warning_the_program_gives_reaches_the_tests_filters(ex):
    """A program's ``warnings.warn`` went to its own process's filters: ``pytest.warns``,
    ``catch_warnings(record=True)`` and ``simplefilter('error')`` in a generic test saw nothing,
    so every right program that warns failed while plain Python (one ``warnings`` module) passes
    it. Its warnings now go through the test's ``warnings`` (recorded, shown or raised there; raised
    inside the program's call, as in Python)."""
    right = ("import warnings\nfrom warnings import warn\nclass Odd(UserWarning):\n    pass\n"
             "def f(x):\n    if x < 0:\n        warnings.warn('negative', UserWarning)\n"
             "    if x == 3:\n        warn(Odd('three'))\n    return abs(x)\n")
    wrong = "def f(x):\n    return abs(x)\n"
    tests = ["import pytest\nwith pytest.warns(UserWarning, match='neg'):\n    assert f(-1) == 1",
             "import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
             "    f(-2)\n    f(-2)\nassert len(w) == 2 and str(w[0].message) == 'negative'",
             "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('error')\n    try:\n"
             "        f(-1)\n    except UserWarning:\n        pass\n    else:\n        assert False",
             "import pytest\nwith pytest.warns(Odd):\n    assert f(3) == 3",
             "assert f(-4) == 4"]
    got = _statuses(ex, "f", [right, wrong], tests)
    assert got == [["pass"] * 5, ["error", "fail", "fail", "error", "pass"]], got


def test_the_decimal_context_and_digit_limit_the_test_sets_are_the_programs(ex):
    """A generic test setting ``decimal``'s context (``getcontext().prec = 4``, ``localcontext()``,
    a trap) or ``sys.set_int_max_str_digits`` set its own process's: a right program dividing
    Decimals or printing a 16,326-digit factorial failed or raised, a wrong one returning the
    expected constant passed (plain Python: one context, one limit)."""
    right = ("from decimal import Decimal\nimport math\n"
             "def f(a, b):\n    return Decimal(a) / Decimal(b)\n"
             "def digits(n):\n    return len(str(math.factorial(n)))\n")
    wrong = ("from decimal import Decimal\n"
             "def f(a, b):\n    return Decimal('0.3333')\n"
             "def digits(n):\n    return 16326\n")
    tests = ["from decimal import getcontext, Decimal\ngetcontext().prec = 4\nassert f(1, 3) == Decimal('0.3333')",
             "from decimal import localcontext, Decimal\nwith localcontext() as ctx:\n    ctx.prec = 4\n"
             "    assert f(1, 3) == Decimal('0.3333')\nassert f(1, 3) != Decimal('0.3333')",
             "import decimal\ndecimal.getcontext().traps[decimal.Inexact] = True\ntry:\n    f(1, 3)\n"
             "except ArithmeticError:\n    pass\nelse:\n    assert False",
             "import sys\nsys.set_int_max_str_digits(100000)\nassert digits(5000) == 16326"]
    got = _statuses(ex, "f", [right, wrong], tests)
    assert got == [["pass"] * 4, ["pass", "fail", "fail", "pass"]], got  # (plain Python's)


def test_a_standard_library_exception_of_the_program_is_the_tests_class(ex):
    """A program raising an exception class of the standard library (``json.JSONDecodeError``,
    ``decimal.InvalidOperation``, ``re.error``, ``statistics.StatisticsError``, ``queue.Empty``)
    reached a generic test as a stand-in class of the same name: ``pytest.raises(json.JSONDecodeError)``
    and ``except queue.Empty`` missed it, so every right program errored (plain Python: pass).
    Such a class is now the test's own class of that module (where the test has loaded it), with
    the exception's attributes; ``unittest.SkipTest`` and other test-runner outcomes stay
    stand-ins (a program must not skip its test)."""
    right = ("import json, decimal, re, statistics, queue, unittest\n"
             "def f(k):\n"
             "    if k == 0:\n        return json.loads('{bad')\n"
             "    if k == 1:\n        return decimal.Decimal('x')\n"
             "    if k == 2:\n        return re.compile('(')\n"
             "    if k == 3:\n        return statistics.mean([])\n"
             "    if k == 4:\n        return queue.Queue().get_nowait()\n"
             "    if k == 5:\n        raise unittest.SkipTest('no')\n"
             "    return k\n")
    tests = ["import json, pytest\nwith pytest.raises(json.JSONDecodeError) as e:\n    f(0)\nassert e.value.pos == 1",
             "import decimal, pytest\nwith pytest.raises(decimal.InvalidOperation):\n    f(1)",
             "import re\ntry:\n    f(2)\nexcept re.error as e:\n    assert e.pos == 0\nelse:\n    assert False",
             "import statistics, pytest\nwith pytest.raises(statistics.StatisticsError, match='at least one'):\n"
             "    f(3)",
             "import queue\ntry:\n    f(4)\nexcept queue.Empty:\n    pass\nelse:\n    assert False",
             "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(5), 5)\n",
             "import json, pytest\nwith pytest.raises(json.JSONDecodeError):\n    f(6)"]
    got = _statuses(ex, "f", [right], tests)
    assert got == [["pass"] * 5 + ["error", "error"]], got


def test_what_the_program_logs_reaches_the_tests_logging(ex):
    """A program's ``logging`` calls went to its own process's loggers: ``assertLogs`` and a handler
    the test adds saw nothing, so every right program that logs failed such tests (plain Python:
    one ``logging`` tree). Its records now go to the test's logger of that name, whose levels and
    handlers decide, as one interpreter's would."""
    right = ("import logging\nlog = logging.getLogger('app')\n"
             "def f(x):\n    if x < 0:\n        log.warning('negative %s', x)\n    logging.info('called %d', x)\n"
             "    try:\n        1 / x\n    except ZeroDivisionError:\n        log.exception('zero')\n"
             "    return abs(x)\n")
    wrong = "def f(x):\n    return abs(x)\n"
    tests = ["import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
             "        with self.assertLogs('app', level='WARNING') as cm:\n            f(-1)\n"
             "        self.assertEqual(cm.output, ['WARNING:app:negative -1'])\n",
             "import logging, io\nbuf = io.StringIO()\nlogging.getLogger().addHandler(logging.StreamHandler(buf))\n"
             "f(-2)\nassert buf.getvalue() == 'negative -2\\n'",
             "import logging, io\nbuf = io.StringIO()\nroot = logging.getLogger()\nroot.setLevel(logging.INFO)\n"
             "root.addHandler(logging.StreamHandler(buf))\nf(3)\nassert buf.getvalue() == 'called 3\\n'",
             "import logging, io\nbuf = io.StringIO()\nlogging.getLogger().addHandler(logging.StreamHandler(buf))\n"
             "f(0)\nassert buf.getvalue().startswith('zero\\nTraceback') and 'ZeroDivisionError' in buf.getvalue()",
             "assert f(-5) == 5"]
    got = _statuses(ex, "f", [right, wrong], tests)
    assert got == [["pass"] * 5, ["fail", "fail", "fail", "fail", "pass"]], got


def test_a_builtin_the_test_patches_is_the_programs_too(ex):
    """A generic test patching a builtin the program calls (``mock.patch('builtins.print')``,
    ``mock.patch('builtins.open', mock_open(read_data=...))``) patched its own process's: the
    program printed and opened for real, so ``assert_called_with`` failed and a file read raised
    FileNotFoundError for every right program (plain Python: one ``builtins``). While the test has
    a builtin replaced, the program's name for it calls the test's object."""
    right = ("def hello(name):\n    print('hi', name)\n"
             "def count(path):\n    with open(path) as fh:\n        return len(fh.readlines())\n"
             "def first(path):\n    with open(path) as fh:\n        for line in fh:\n            return line.strip()\n")
    wrong = ("def hello(name):\n    return None\n"
             "def count(path):\n    return 2\n"
             "def first(path):\n    return 'a'\n")
    tests = ["from unittest import mock\nwith mock.patch('builtins.print') as p:\n    hello('bo')\n"
             "p.assert_called_once_with('hi', 'bo')",
             "from unittest.mock import patch, mock_open\n"
             "with patch('builtins.open', mock_open(read_data='a\\nb\\n')):\n"
             "    assert count('x.txt') == 2",
             "from unittest.mock import patch, mock_open\n"
             "with patch('builtins.open', mock_open(read_data='q\\nb\\n')) as m:\n"
             "    assert first('y.txt') == 'q'\nm.assert_called_once_with('y.txt')",
             "import builtins\nseen = []\nold = builtins.print\nbuiltins.print = lambda *a, **k: seen.append(a)\n"
             "hello('x')\nbuiltins.print = old\nhello('y')\nassert seen == [('hi', 'x')]"]
    got = _statuses(ex, "hello", [right, wrong], tests)
    assert got == [["pass"] * 4, ["fail", "pass", "fail", "fail"]], got


def test_a_program_cannot_reconfigure_the_tests_mock(ex):
    """A program handed the test's ``unittest.mock`` object (a patched ``builtins.print``, or a
    Mock passed as an argument) called its management API through the channel:
    ``print.configure_mock(assert_called_once_with=ok)`` made the test's assertion a no-op, so a
    program that never printed passed (review 19, r2/r6). The mock API is refused to the program;
    calling the mock and using its children (``mock_open``'s handle) still works."""
    ok = "def ok(*a, **k):\n        return None\n"
    right = "def hello(name):\n    print('hi', name)\n"
    forge = ("def hello(name):\n    " + ok + "    print.configure_mock(assert_called_once_with=ok)\n")
    spy = ("def hello(name):\n    " + ok + "    print.assert_called_once_with = ok\n")
    reset = "def hello(name):\n    print('no')\n    print.reset_mock()\n    print.return_value\n    print('hi', name)\n"
    tests = ["from unittest import mock\nwith mock.patch('builtins.print') as p:\n    hello('bo')\n"
             "p.assert_called_once_with('hi', 'bo')"]
    got = _statuses(ex, "hello", [right, forge, spy, reset], tests)
    assert got[0] == ["pass"] and all(r[0] in ("fail", "error") for r in got[1:]), got
    arg_right = "def f(cb):\n    cb(3)\n    cb.child(4)\n    return cb.child.name_x\n"
    arg_forge = "def f(cb):\n    cb.configure_mock(assert_called_once_with=lambda *a, **k: None)\n"
    arg_count = "def f(cb):\n    cb.call_count\n    cb(3)\n"
    t = ["from unittest import mock\nm = mock.Mock()\nf(m)\nm.assert_called_once_with(3)\n"
         "m.child.assert_called_once_with(4)"]
    got = _statuses(ex, "f", [arg_right, arg_forge, arg_count], t)
    assert got[0] == ["pass"] and got[1][0] in ("fail", "error") and got[2][0] in ("fail", "error"), got


def _uid_tree(base, layout):
    """Directories and files under ``base``: (relative path, 'd' or 'f', uid, mode)."""
    for rel, kind, uid, mode in layout:
        p = os.path.join(base, rel)
        if kind == "d":
            os.mkdir(p)
        else:
            with open(p, "w") as fh:
                fh.write("x")
        os.chown(p, uid, uid)
        os.chmod(p, mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown: root")
@pytest.mark.timeout(30)
def test_the_shared_directory_cleanup_never_follows_a_parent_swapped_for_a_symlink(tmp_path, monkeypatch):
    """Process isolation's cleanup of the shared writable directories went down into world-writable
    directories and removed a cell's litter by path, as root: whoever could rename the parent (its
    owner, another cell's uid; anyone in a non-sticky world-writable one) swapped in a symlink
    between the look and the removal, and root removed the same names wherever it pointed (review
    19, r5). The swap is made here at the moment of the first removal: what is outside survives."""
    from matrix.sandbox import worker as W

    cell, other = 60000, 60001
    top, victim = str(tmp_path / "top"), str(tmp_path / "etc")
    os.mkdir(victim)
    _uid_tree(victim, [("victim", "f", 0, 0o644), ("victimdir", "d", 0, 0o755), ("victimdir/important", "f", 0, 0o644)])
    os.mkdir(top)
    os.chmod(top, 0o1777)
    # a root-owned non-sticky world-writable directory (anyone may rename in it) and one of another uid
    _uid_tree(top, [("w", "d", 0, 0o777), ("w/x", "d", 0, 0o777), ("b", "d", other, 0o777), ("b/x", "d", other, 0o777)])
    for parent in ("w/x", "b/x"):
        _uid_tree(top, [(parent + "/victim", "f", cell, 0o644), (parent + "/victimdir", "d", cell, 0o755),
                        (parent + "/victimdir/important", "f", cell, 0o644)])
    swapped: list = []

    def swap():
        for parent in ("w/x", "b/x"):
            p = os.path.join(top, parent)
            if os.path.isdir(p) and not os.path.islink(p):
                os.rename(p, p + "_old")
                os.symlink(victim, p)
        swapped.append(1)

    def racing(real):
        def call(*a, **k):
            if not swapped:
                swap()
            return real(*a, **k)
        return call

    for name in ("unlink", "rmdir", "remove"):
        monkeypatch.setattr(os, name, racing(getattr(os, name)))
    monkeypatch.setattr(shutil, "rmtree", racing(shutil.rmtree))
    monkeypatch.setattr(W, "SHARED_TMPFS", (top,))

    class Cell:
        cell_uid, test_uid = cell, None

    try:
        W.Worker._wipe_shared_tmpfs(Cell())  # type: ignore[arg-type]
        monkeypatch.undo()
        assert swapped
        assert os.path.exists(os.path.join(victim, "victim"))
        assert os.path.exists(os.path.join(victim, "victimdir/important"))
        # the cell's litter in the root-owned directory went (where it was renamed to)
        assert not os.path.lexists(os.path.join(top, "w/x_old/victim"))
        assert not os.path.lexists(os.path.join(top, "w/x_old/victimdir"))
    finally:
        monkeypatch.undo()
        shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown: root")
@pytest.mark.timeout(30)
def test_many_world_writable_directories_in_one_shared_directory_do_not_spare_the_others(tmp_path, monkeypatch):
    """The cleanup's budget of 64 directories was shared by all the shared directories: 70
    world-writable directories in /tmp used it up and /dev/shm was never looked at, so a cell's
    file there (its pages charged to the worker's cgroup) outlived it (review 19, r7). Every
    shared directory is looked at; the budget is for going down, in each."""
    from matrix.sandbox import worker as W

    cell = 60000
    tops = [str(tmp_path / t) for t in ("tmp", "dev_shm", "var_tmp", "run_lock")]
    for t in tops:
        os.mkdir(t)
        os.chmod(t, 0o1777)
    _uid_tree(tops[0], [(f"d{i}", "d", 0, 0o777) for i in range(70)])
    for t in tops:
        _uid_tree(t, [("litter", "f", cell, 0o644)])
    _uid_tree(tops[1], [("ww", "d", 0, 0o1777), ("ww/litter", "f", cell, 0o644)])
    monkeypatch.setattr(W, "SHARED_TMPFS", tuple(tops))

    class Cell:
        cell_uid, test_uid = cell, None

    try:
        W.Worker._wipe_shared_tmpfs(Cell())  # type: ignore[arg-type]
        left = [p for p in [t + "/litter" for t in tops] + [tops[1] + "/ww/litter"] if os.path.lexists(p)]
        assert not left, left
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.timeout(60)
def test_a_warning_shown_for_the_program_reads_no_file_the_program_names(ex):
    """The program's warning reached the test's ``warnings`` with the file name the program chose:
    showing it (``formatwarning``) made the test process read that file's line (linecache) and
    write it to the test's stderr (review 19, r9). The place keeps its line, never a file read.
    (A file only the test process has stands for one the program should not read.)"""
    prog = ("import warnings\n"
            "def f(path):\n"
            "    exec(compile('warnings.warn(\"probe\")', path, 'exec'), {'warnings': warnings})\n"
            "    return 1\n")
    make = ("import os, tempfile\nfd, path = tempfile.mkstemp(suffix='.py')\nos.write(fd, b'SECRET_LINE_19 = 1\\n')\n"
            "os.close(fd)\n")
    tests = [make + "import contextlib, io, warnings\nbuf = io.StringIO()\ntry:\n"
             "    with contextlib.redirect_stderr(buf), warnings.catch_warnings():\n"
             "        warnings.simplefilter('always')\n        f(path)\nfinally:\n    os.unlink(path)\n"
             "assert 'probe' in buf.getvalue() and 'SECRET_LINE_19' not in buf.getvalue(), buf.getvalue()",
             "import pytest\nwith pytest.warns(UserWarning, match='pro') as w:\n    f('x.py')\nassert w[0].lineno == 1"]
    assert _statuses(ex, "f", [prog], tests) == [["pass", "pass"]]
