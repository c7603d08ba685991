"""Red-team pass 18: verdicts that disagreed with plain Python (``exec(program); exec(test)`` in a
fresh interpreter), and claims a program could forge. One bounded test each, each failing on the
tree before its fix; each case lists programs, tests and the verdicts plain Python gives (a
program that ends its own process gives no verdict in plain Python: never a pass)."""

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


def _statuses(ex, entry, codes, tests):
    m = ex.run_matrix(Task("t", "p", entry_point=entry), codes, [Test.assertion(t) for t in tests])
    return [[m.cell(i, j).status for j in range(len(tests))] for i in range(len(codes))]


# tests that pass when the call raises: generic tests (a ``try`` or a ``with``), run in a test
# process of their own against the program's process
_EXPECTS_RAISE = ["try:\n    f(1)\nexcept Exception:\n    pass\nelse:\n    assert False",
                  "try:\n    f(1)\nexcept ValueError:\n    pass\nelse:\n    assert False",
                  "try:\n    f(1)\n    assert False\nexcept BaseException:\n    pass",
                  "import pytest\nwith pytest.raises(ValueError):\n    f(1)"]


def test_a_program_breaking_its_conversation_with_the_test_raises_nothing_the_test_can_catch(ex):
    """The program's process ending (``os._exit``, a kill) or writing a malformed reply on the
    socket to the test process raised an ``Exception`` (RemoteError, the decoder's ValueError) in
    the test, where ``except Exception`` / ``except ValueError`` / ``pytest.raises(ValueError)``
    caught it: a program passed every "this must raise" test without raising (plain Python: no
    verdict, the process ended; or the call returned 1 and the test fails)."""
    ended = "import os\ndef f(x):\n    os._exit(0)\n"
    killed = "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    garbled = ("import os, struct, time\ndef f(x):\n    for fd in range(3, 12):\n        try:\n"
               "            os.write(fd, struct.pack('<I', 5) + b'[1,2x')\n        except OSError:\n"
               "            pass\n    time.sleep(0.3)\n    return 1\n")
    raising = "def f(x):\n    raise ValueError(x)\n"
    got = _statuses(ex, "f", [ended, killed, garbled, raising], _EXPECTS_RAISE)
    for row in got[:3]:
        assert "pass" not in row, got
    assert got[3] == ["pass"] * 4, got


def test_a_programs_base_exception_is_no_exception_in_the_test(ex):
    """A program raising ``KeyboardInterrupt``, ``GeneratorExit`` or its own subclass of
    ``BaseException`` / ``SystemExit`` reached a generic test as an ``Exception``: ``except
    Exception`` caught it and a program that never did the task passed a "this must raise" test
    (plain Python: the exception escapes the ``except Exception``, no pass)."""
    codes = ["def f(x):\n    raise KeyboardInterrupt\n", "def f(x):\n    raise GeneratorExit\n",
             "class Stop(BaseException):\n    pass\ndef f(x):\n    raise Stop('x')\n",
             "class Quit(SystemExit):\n    pass\ndef f(x):\n    raise Quit(3)\n",
             "class Bad(ValueError):\n    pass\ndef f(x):\n    raise Bad('x')\n"]
    tests = ["try:\n    f(1)\nexcept Exception:\n    pass",
             "try:\n    f(1)\nexcept BaseException as e:\n    assert not isinstance(e, Exception)",
             "try:\n    f(1)\nexcept (KeyboardInterrupt, GeneratorExit, SystemExit):\n    pass",
             "try:\n    f(1)\nexcept BaseException as e:\n"
             "    assert type(e).__name__ in ('KeyboardInterrupt', 'GeneratorExit', 'Stop', 'Quit', 'Bad')"]
    got = _statuses(ex, "f", codes, tests)
    assert got == [["error", "pass", "pass", "pass"], ["error", "pass", "pass", "pass"],
                   ["error", "pass", "error", "pass"], ["error", "pass", "pass", "pass"],
                   ["pass", "fail", "error", "pass"]], got


def test_a_test_capturing_the_output_reads_what_the_program_printed(ex):
    """A generic test capturing standard output (``contextlib.redirect_stdout``, ``sys.stdout =
    io.StringIO()``, ``redirect_stderr``) read nothing of what the program printed: its process
    wrote to its own streams, so every right program failed. What loading prints is not captured
    (plain Python printed it before the test began)."""
    right = ("import sys\ndef f(x):\n    print(x)\n    return x\ndef g(cb):\n    print('x')\n    cb()\n"
             "    print('y', flush=True)\n    print('e', file=sys.stderr)\nprint('loaded')\n")
    wrong = "def f(x):\n    print(x + 1)\n    return x\ndef g(cb):\n    cb()\n    print('x')\n    print('y')\n"
    cap = ("import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_{}(buf):\n{}\n"
           "assert buf.getvalue() == {!r}")
    tests = [cap.format("stdout", "    f(3)", "3\n"),
             "import io, sys\nold = sys.stdout\nsys.stdout = io.StringIO()\nf(4)\nout = sys.stdout.getvalue()\n"
             "sys.stdout = old\nassert out == '4\\n'",
             cap.format("stdout", "    print('a')\n    f(3)\n    print('b')", "a\n3\nb\n"),
             cap.format("stdout", "    g(lambda: print('t'))", "x\nt\ny\n"),
             cap.format("stderr", "    g(lambda: None)", "e\n"),
             "f(1)\n" + cap.format("stdout", "    f(3)", "3\n"),
             "f(3)\nassert f(2) == 2"]
    got = _statuses(ex, "f", [right, wrong], tests)
    assert got == [["pass"] * 7, ["fail"] * 6 + ["pass"]], got


def test_two_values_of_the_program_are_identical_where_the_program_returned_one_object(ex):
    """``is`` between two values of the program (a cache, a singleton, a default argument kept
    between calls) was judged in the parent on the values' copies, each decoded to a new object:
    a right program failed ``assert get() is get()`` and a wrong one (returning its shared list)
    passed ``assert get() is not get()``. Such a test runs where the program's objects are."""
    shared = "_C = []\ndef get(x=None):\n    return _C\n"
    fresh = "def get(x=None):\n    return []\n"
    default = "def get(x=None, acc=[]):\n    return acc\n"
    tests = ["assert get() is get()", "a = get()\nb = get(1)\nassert a is b", "assert get() is not get()",
             "a = get()\nassert a is get()", "x = get()\ny = get()\nassert x == y and x is y",
             "assert [get()][0] is get()", "a, b = get(), get()\nassert a is b", "assert get() is not None"]
    got = _statuses(ex, "get", [shared, fresh, default], tests)
    same = ["pass", "pass", "fail", "pass", "pass", "pass", "pass", "pass"]
    assert got == [same, ["fail", "fail", "pass", "fail", "fail", "fail", "fail", "pass"], same], got


def _generic(test: str) -> str:
    """The test as a generic one (a ``try`` is never split into values)."""
    body = "\n".join("    " + line for line in test.splitlines())
    return f"try:\n{body}\nexcept ZeroDivisionError:\n    pass\n"


def test_a_nan_is_the_object_the_program_returned(ex):
    """Every NaN a program returned was decoded to one shared object (the JSON decoder's constant):
    ``[f()] == [f()]`` and ``f()[1] in f()`` passed a program making a new NaN at each call
    (plain Python compares containers by identity first: two NaNs are unequal), ``{f()[1]} !=
    {f()[1]}`` failed it, and ``math.nan`` returned was not ``math.nan`` (``f() == [1.0,
    math.nan]`` failed a right program). As written and as generic tests."""
    codes = ["import math\ndef f():\n    return [1.0, math.nan]\n", "def f():\n    return [1.0, float('nan')]\n"]
    tests = ["import math\nassert f() == [1.0, math.nan]", "assert f() != f()", "assert [f()] == [f()]",
             "import math\nassert f()[1] is math.nan", "r = f()\nassert r == r", "assert f()[1] in f()",
             "assert {f()[1]} != {f()[1]}", "assert len({f()[1], f()[1]}) == 2"]
    got = _statuses(ex, "f", codes, tests + [_generic(t) for t in tests])
    a = ["pass", "fail", "pass", "pass", "pass", "pass", "fail", "fail"]
    b = ["fail", "pass", "fail", "fail", "pass", "fail", "pass", "pass"]
    assert got == [a + a, b + b], got
