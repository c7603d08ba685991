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


def test_a_test_that_seeds_random_seeds_the_programs_random_too(ex):
    """A generic test seeding ``random`` (``random.seed(0)``, then comparing with what the seeded
    generator gives) seeded its own process's generator only: the program's draws were unseeded and
    every right program failed. In plain Python the two share one generator, both ways: what the
    program draws moves the test's generator on, and the test's draws the program's."""
    import random

    random.seed(0)
    first = random.randint(1, 1000)
    random.seed(0)
    shuffled = [1, 2, 3, 4, 5]
    random.shuffle(shuffled)
    right = ("import random\ndef f():\n    return random.randint(1, 1000)\ndef g(xs):\n    xs = list(xs)\n"
             "    random.shuffle(xs)\n    return xs\n")
    imported = ("from random import randint, shuffle\ndef f():\n    return randint(1, 1000)\ndef g(xs):\n"
                "    xs = list(xs)\n    shuffle(xs)\n    return xs\n")
    fixed = "def f():\n    return 7\ndef g(xs):\n    return list(xs)\n"
    tests = [f"import random\nrandom.seed(0)\nassert f() == {first}",
             f"import random\nrandom.seed(0)\nassert g([1, 2, 3, 4, 5]) == {shuffled}",
             "import random\nrandom.seed(1)\na = f()\nrandom.seed(1)\nassert f() == a",
             "import random\nrandom.seed(1)\na = [f(), random.random(), f()]\nrandom.seed(1)\n"
             "assert [f(), random.random(), f()] == a",
             "import random\nrandom.seed(2)\nf()\nx = random.random()\nrandom.seed(2)\nrandom.randint(1, 1000)\n"
             "assert random.random() == x"]
    got = _statuses(ex, "f", [right, imported, fixed], tests)
    assert got == [["pass"] * 5, ["pass"] * 5, ["fail", "fail", "pass", "pass", "fail"]], got


def test_a_programs_global_state_read_by_the_test_is_the_programs_as_it_is_now(ex):
    """A generic test reading one of the program's globals (a call counter, a log list, a cache
    dict) read a copy taken before the test ran: ``add(1); assert log == [1]`` failed a right
    program, and the test's own changes to such a container (``cache[4] = 0``) never reached the
    program. In plain Python they are one module's globals: the test sees the program's names as
    they are now."""
    right = ("calls = 0\nlog = []\ncache = {}\ndef add(x):\n    global calls\n    calls += 1\n    log.append(x)\n"
             "    return len(log)\ndef g(x):\n    if x not in cache:\n        cache[x] = x * 2\n    return cache[x]\n")
    wrong = ("calls = 0\nlog = []\ncache = {}\ndef add(x):\n    return 1\ndef g(x):\n    return x * 2\n")
    tests = ["add(1)\nadd(2)\nassert log == [1, 2]", "add(5)\nassert calls == 1", "g(3)\nassert cache == {3: 6}",
             "cache[4] = 0\nassert g(4) == 0", "assert calls == 0 and log == []",
             "x = calls\nadd(1)\nassert x == 0 and calls == 1"]
    got = _statuses(ex, "add", [right, wrong], [_generic(t) for t in tests])
    assert got == [["pass"] * 6, ["fail", "fail", "fail", "fail", "pass", "fail"]], got



def test_a_program_can_neither_read_nor_rewrite_what_the_test_binds(ex):
    """The other half of sharing the program's globals with the test (above) is left out on
    purpose: a name the test binds itself (``expected = 5``) is the test's alone, even where the
    program has a global of that name (in plain Python it would be the program's too, and a
    program setting ``expected = 999`` in its function would pass ``assert r == expected``). The
    program's process never sees the test's value, and what the program binds never reaches the
    test's name (a ``MOD = 7`` of the test's is not the program's either: see the report)."""
    code = ("expected = None\nseen = []\ndef f(x):\n    global expected\n    seen.append(expected)\n"
            "    expected = 999\n    return 999\ndef peek():\n    return seen\n")
    tests = ["expected = 5\nfor r in [f(1)]:\n    assert r == expected", "expected = 5\nassert f(1) == expected",
             "expected = 5\nf(1)\nassert peek() == [None] and expected == 5",
             "for r in [f(1)]:\n    assert r == expected"]
    got = _statuses(ex, "f", [code], tests)
    assert got == [["fail", "fail", "pass", "pass"]], got

def test_a_recursion_limit_the_test_sets_is_the_programs(ex):
    """A generic test raising the recursion limit (``sys.setrecursionlimit(5000)``) raised its own
    process's only: the program's ``f(3000)`` raised RecursionError and a right program failed
    (plain Python: one interpreter, one limit, the test's call sets it for the program too)."""
    rec = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
    own = "import sys\nsys.setrecursionlimit(10000)\n" + rec
    tests = ["import sys\nsys.setrecursionlimit(5000)\nassert f(3000) == 3000",
             "import sys\nsys.setrecursionlimit(5000)\ntry:\n    f(6000)\nexcept RecursionError:\n    pass\n"
             "else:\n    assert False",
             "import sys\nsys.setrecursionlimit(2000)\nassert f(3000) == 3000",
             "assert f(900) == 900"]
    got = _statuses(ex, "f", [rec, own], tests)
    assert got == [["pass", "pass", "error", "pass"], ["pass", "pass", "error", "pass"]], got


def test_files_the_test_and_the_program_make_are_each_others(ex):
    """A generic test runs in a process of its own, under another uid than the program's: files
    the test made (``open(p, 'w')``, ``tempfile.mkstemp``/``NamedTemporaryFile``/``mkdtemp``, with
    their private modes) could not be written or read by the program, and the program's files
    could not be removed by the test (``/tmp`` was sticky): a right program for a file task
    errored on every such test (plain Python: one process, the test's files are the program's)."""
    code = ("import os\ndef f(p, text):\n    with open(p, 'w') as fh:\n        fh.write(text)\ndef g(p):\n"
            "    with open(p) as fh:\n        return fh.read()\ndef rm(p):\n    os.remove(p)\n"
            "def app(p):\n    with open(p, 'a') as fh:\n        fh.write('!')\n")
    tests = ["import os\nf('out.txt', 'hi')\nassert open('out.txt').read() == 'hi'\nos.remove('out.txt')",
             "with open('in.txt', 'w') as fh:\n    fh.write('abc')\nrm('in.txt')\nimport os\n"
             "assert not os.path.exists('in.txt')",
             "with open('in.txt', 'w') as fh:\n    fh.write('abc')\napp('in.txt')\n"
             "assert open('in.txt').read() == 'abc!'",
             "import os\nos.mkdir('d')\nf('d/x.txt', 'z')\nassert g('d/x.txt') == 'z'",
             "import tempfile, os\nwith tempfile.TemporaryDirectory() as d:\n    p = os.path.join(d, 'a.txt')\n"
             "    f(p, 'q')\n    assert g(p) == 'q'",
             "import tempfile\nwith tempfile.NamedTemporaryFile('w+', suffix='.txt') as fh:\n    fh.write('zz')\n"
             "    fh.flush()\n    assert g(fh.name) == 'zz'\n    f(fh.name, 'ww')\n    fh.seek(0)\n"
             "    assert fh.read() == 'ww'",
             "import tempfile, os\nfd, p = tempfile.mkstemp()\nos.close(fd)\nf(p, 'k')\nassert g(p) == 'k'\n"
             "os.unlink(p)",
             "import os, shutil\nos.makedirs('e/f')\nf('e/f/x', '1')\nshutil.rmtree('e')\n"
             "assert not os.path.exists('e')"]
    got = _statuses(ex, "f", [code], tests)
    assert got == [["pass"] * len(tests)], got


def test_what_a_stdio_programs_finalizers_print_at_exit_is_its_output(ex):
    """``python prog.py`` clears the main module as it ends: the finalizers (``__del__``) of the
    objects it held run then, and what they print is output. The sandbox ended a stdio program
    after its exit handlers without clearing it: a program printing its last line from a
    finalizer failed, and ``3`` alone passed where Python prints ``3`` then ``4``."""
    task = Task("t", "p", kind="stdio")
    codes = ["class D:\n    def __del__(self):\n        print(4)\nd = D()\nprint(3)\n",
             "import atexit\nclass D:\n    def __del__(self):\n        print('del')\n"
             "_d = D()\natexit.register(lambda: print('atexit'))\nprint(3)\n",
             "print(3)\n"]
    tests = [Test.stdio("", "3\n4\n"), Test.stdio("", "3\n"), Test.stdio("", "3\natexit\ndel\n")]
    got = ex.run_matrix(task, codes, tests).status
    assert got == [["pass", "fail", "fail"], ["fail", "fail", "pass"], ["fail", "pass", "fail"]], got


def test_a_name_the_test_computes_and_never_reads_is_still_computed(ex):
    """A straight-line test judged in the parent computed what it bound to a name only where a
    claim read the name: ``x = f(1) + 'a'`` (a TypeError in plain Python: ``error``) passed when
    nothing read ``x``, and so did ``total = res[0] + res[1]`` for a wrong program returning too
    short a list. The computation now runs where the statement is, in order with the claims."""
    codes = ["def f(v):\n    return v\n", "def f(v):\n    return [] if isinstance(v, list) else v\n"]
    tests = ["x = f(1) + 'a'", "x = f(1) / 0\nassert f(2) == 2", "x = [f(1)][5]\nassert f(2) == 2",
             "x = {f([1])}\nassert f(2) == 2", "x = f(1)\ny = x + 'a'\nassert f(2) == 2",
             "x = f(1) < 'a'\nassert f(2) == 2", "res = f([1, 2])\ntotal = res[0] + res[1]\nassert f(3) == 3",
             "assert f(1) == 2\nx = f(1) + 'a'", "x = f(1) + 1\nassert f(2) == 2", "x = f(1)\ny = x * 2\nassert y == 2"]
    got = _statuses(ex, "f", codes, tests)
    assert got == [["error"] * 6 + ["pass", "fail", "pass", "pass"],
                   ["error"] * 7 + ["fail", "pass", "pass"]], got


def test_a_builtin_the_test_hands_the_program_is_the_programs_builtin(ex):
    """A generic test handing the program a builtin (``remove_datatype(t, int)``, MBPP 533; a key
    function ``len``) handed it a reference to the test's object: ``isinstance(x, data_type)`` was
    false, ``t is int`` false, ``t.__name__`` refused, and MBPP's own reference solution failed its
    tests once they ran as generic ones. A builtin travels as the same builtin of the program's (and
    a builtin type the program hands back as the test's: ``echo(int) is int``)."""
    code = ("def remove_datatype(test_tuple, data_type):\n"
            "    return [e for e in test_tuple if not isinstance(e, data_type)]\n"
            "def ident(t):\n    return t is int\ndef name(t):\n    return t.__name__\ndef by(xs, key):\n"
            "    return sorted(xs, key=key)\ndef echo(t):\n    return t\n")
    tests = ["assert remove_datatype((4, 5, 4, 7.7, 1.2), int) == [7.7, 1.2]", "assert ident(int)",
             "assert name(int) == 'int' and name(len) == 'len'",
             "assert remove_datatype((4, 'a'), (int, float)) == ['a']",
             "assert by(['bb', 'a'], len) == ['a', 'bb']", "assert by(['b', 'A'], str.lower) == ['A', 'b']",
             "assert echo(int) is int and echo(ValueError) is ValueError and echo(len)('ab') == 2"]
    got = _statuses(ex, "remove_datatype", [code], [_generic(t) for t in tests])
    assert got == [["pass"] * len(tests)], got


def test_a_name_the_test_binds_through_global_stays_the_tests(ex):
    # review of pass 18: `global expected` in a function of the test bound the test's own name, but it
    # counted as read from the program, and the program's rebinding of its own `expected` (sent as a
    # global the test reads) replaced it where the two values were the same object (None): forged pass
    liar = "expected = None\ndef f(k=0):\n    global expected\n    expected = 5\n    return 5\n"
    test = "def setup():\n    global expected\n    expected = None\nsetup()\nassert f(0) == expected"
    assert _statuses(ex, "f", [liar], [test]) == [["fail"]]


def test_a_huge_recursion_limit_set_by_the_test_is_no_error_of_the_program(ex):
    # review of pass 18: 10**9 is a legal limit; its refusal came back from the program's next call as
    # an exception the test could catch (pytest.raises passed a program that never raised)
    right = "def f(k):\n    return 1\n"
    tests = ["import sys\nsys.setrecursionlimit(10**9)\nassert f(9) == 1",
             "import sys\nsys.setrecursionlimit(10**9)\ntry:\n    f(9)\n    ok = False\nexcept Exception:\n"
             "    ok = True\nassert ok"]
    assert _statuses(ex, "f", [right], tests) == [["pass", "fail"]]
