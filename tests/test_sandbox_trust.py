"""Hostile programs against the verdict, against each other and against the parent: forged
claims, theft, leaks between cells, sabotage, decoding bombs, memory across a process tree, and
what a cell can see. Each attack is written first, bounded (finite loops, capped sizes, markers
that exit on their own), and must fail.

The target is a plainly false test, ``assert add(2, 2) == 5``, with ``add`` computing 4: any pass
is a forgery."""

from __future__ import annotations

import ast
import fractions
import json
import math
import os
import subprocess
import sys
import time

import pytest

from matrix import plain
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

TASK = Task("add", "add two numbers", entry_point="add")
FALSE_TEST = "assert add(2, 2) == 5"
GENERIC_FALSE = "for x in [add(2, 2)]:\n    assert x == 5"  # a loop: runs as a generic test
LOWERED_FALSE = "x = add(2, 2)\nassert x == 5"  # straight-line: split into values like one assert
HONEST = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def ex():
    cfg = ExecConfig(timeout=2.0, memory_mb=256, max_procs=16, max_output_bytes=256 << 10, workers=2)
    with Executor(cfg) as e:
        yield e


def verdicts(ex, code, tests=(FALSE_TEST, GENERIC_FALSE)):
    return ex.run_matrix(TASK, [code], [Test.assertion(t) for t in tests]).status[0]


def no_pass(ex, code, tests=(FALSE_TEST, GENERIC_FALSE, "assert add(2, 2) == 4", LOWERED_FALSE)):
    """The false tests never pass; the honest one may (the program computes 4)."""
    st = verdicts(ex, code, tests)
    assert st[0] != "pass" and st[1] != "pass", st
    assert len(st) < 4 or st[3] != "pass", st
    return st


# ----------------------------------------------------------------------------- forged claims

FRAMES = r'''
import os, struct, json
def frames():
    out = []
    for tag in (b"K", b"V", b"T", b"S"):
        body = b'[[5],[]]'
        out.append(struct.pack("<I", len(body) + 9) + tag + bytes(8) + body)       # the old format
        out.append(struct.pack("<I", len(body) + 17) + bytes(8) + bytes([5]) + bytes(8) + body)
        for kind in range(1, 12):                                                  # the new, no token
            out.append(struct.pack("<I8sBd", len(body) + 17, b"\0" * 8, kind, 0.0) + body)
    return out
def spray():
    for fd in range(0, 64):
        for f in frames():
            try:
                os.write(fd, f)
            except OSError:
                pass
'''


def test_frames_written_by_the_program_are_garbage(ex):
    no_pass(ex, FRAMES + "def add(a, b):\n    spray()\n    os._exit(0)\n")
    no_pass(ex, FRAMES + "def add(a, b):\n    spray()\n    return a + b\n")
    no_pass(ex, FRAMES + "spray()\nos._exit(0)\ndef add(a, b):\n    return a + b\n")


def test_replacing_what_the_harness_uses_changes_nothing(ex):
    code = FRAMES + r'''
import sys, json, builtins
def _fake(*a, **k):
    spray()
    return '[[5],[]]'
for name, mod in list(sys.modules.items()):
    if mod is None or name in ("sys", "builtins"):
        continue
    for attr in list(getattr(mod, "__dict__", {})):
        v = getattr(mod, attr, None)
        if callable(v) and attr.lower() in ("send", "_send", "write", "dumps", "encode", "send_json",
                                            "json_encode", "_scalar_json", "exc_info", "run_one"):
            try:
                setattr(mod, attr, _fake)
            except Exception:
                pass
    for attr, v in list(getattr(mod, "__dict__", {}).items()):
        if isinstance(v, dict) and ("write" in v or "encode" in v):
            for k in list(v):
                if callable(v[k]):
                    v[k] = _fake
json.JSONEncoder.encode = lambda self, o: '[[5],[]]'
builtins.AssertionError = type("AssertionError", (Exception,), {})
def add(a, b):
    return a + b
'''
    no_pass(ex, code)


def test_ctypes_cannot_rewrite_values(ex):
    code = r'''
def add(a, b):
    import ctypes
    ctypes.c_long.from_address(id(4) + 24).value = 5
    return a + b
'''
    st = no_pass(ex, code)
    assert st[2] != "pass"
    mem = r'''
def add(a, b):
    with open("/proc/self/mem", "r+b") as fh:
        fh.seek(id(4) + 24)
        fh.write((5).to_bytes(8, "little"))
    return a + b
'''
    no_pass(ex, mem)


def test_later_harness_actions_cannot_write_for_the_program(ex):
    deleter = FRAMES + r'''
class Bomb:
    def __del__(self):
        spray()
        os._exit(0)
KEEP = Bomb()
def add(a, b):
    global KEEP
    KEEP = Bomb()
    return a + b
'''
    formatter = FRAMES + r'''
class Msg:
    def __str__(self):
        spray()
        os._exit(0)
def add(a, b):
    raise ValueError(Msg())
'''
    signaller = FRAMES + r'''
import signal
def handler(*_):
    spray()
    os._exit(0)
def add(a, b):
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.0005)
    return a + b
'''
    for code in (deleter, formatter, signaller):
        no_pass(ex, code)


def test_a_protected_test_only_accepts_a_value(ex):
    # exits that would once read as "the test ran"
    for code in ["import os\ndef add(a, b):\n    os._exit(0)\n", "import sys\ndef add(a, b):\n    sys.exit(0)\n",
                 "def add(a, b):\n    raise SystemExit\n", "def add(a, b):\n    raise KeyboardInterrupt\n"]:
        no_pass(ex, code)


def test_a_generic_test_runs_apart_from_the_program(ex):
    finder = r'''
import sys, gc
def add(a, b):
    seen = []
    f = sys._getframe(0)
    while f is not None:
        seen.append(repr(f.f_globals.get("__file__")))
        seen.extend(repr(v)[:200] for v in f.f_locals.values())
        f = f.f_back
    if any("assert" in s or "== 5" in s for s in seen):
        raise RuntimeError("the test's text is in the program's process")
    return 5 if False else a + b
'''
    st = verdicts(ex, finder, [GENERIC_FALSE, "for x in [add(2, 2)]:\n    assert x == 4"])
    assert st == ["fail", "pass"], st
    patcher = r'''
import builtins
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.abs = lambda x: 5
def add(a, b):
    return a + b
'''
    # the test's builtins are its own: a program rebinding them in its process changes nothing there
    st = verdicts(ex, patcher, [GENERIC_FALSE, "assert abs(-1) == 1 and add(2, 2) == 4"])
    assert st == ["fail", "pass"], st
    breaker = "import builtins\nbuiltins.len = lambda x: 5\ndef add(a, b):\n    return a + b\n"
    assert verdicts(ex, breaker, [GENERIC_FALSE])[0] != "pass"  # it may break its own process


def test_program_objects_cannot_fake_equality_in_a_generic_test(ex):
    code = r'''
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __bool__(self):
        return True
    __hash__ = object.__hash__
def add(a, b):
    return Anything()
'''
    st = verdicts(ex, code, [GENERIC_FALSE, "assert add(2, 2) == 5", "assert add(2, 2)",
                             "for x in [add(1, 1)]:\n    assert x == add(2, 2)", "assert add(1, 1) == add(2, 2)",
                             "x = add(1, 1)\nassert x == add(2, 2)", LOWERED_FALSE])
    assert st[:2] == ["fail", "fail"], st
    assert st[2] == "pass"  # its own truth value is its to decide
    # two of its own objects compare with its own ==, whatever the test's shape (as in Python):
    # the parent sends such a test to run as a generic one
    assert st[3] == st[4] == st[5] == "pass"
    assert st[6] == "fail"  # against the test's own value: plain data only


# ----------------------------------------------------------------------------- theft

def test_a_program_cannot_read_another_programs_source(ex):
    victim = "def add(a, b):\n    def victim_fn_q7z():\n        return 'cargo_q7z'\n    return a + b\n"
    thief = r'''
import sys, types
def look():
    want = "".join(["victim", "_fn_q7z"])  # built at run time: not a constant of this code
    cargo = "".join(["cargo", "_q7z"])
    hits = []
    def scan(v):
        if isinstance(v, types.FunctionType):
            if v.__name__ == want:
                hits.append("function")
            v = v.__code__
        if isinstance(v, types.CodeType):
            if v.co_name == want or cargo in v.co_consts:
                hits.append("code")
            for c in v.co_consts:
                if isinstance(c, types.CodeType):
                    scan(c)
        elif isinstance(v, str) and cargo in v and v is not cargo:
            hits.append("string")
    for mod in list(sys.modules.values()):
        for v in list(getattr(mod, "__dict__", {}).values()):
            scan(v)
    f = sys._getframe(0)
    while f is not None:
        scan(f.f_code)
        for v in list(f.f_locals.values()) + list(f.f_globals.values()):
            scan(v)
        f = f.f_back
    return len(hits)
def add(a, b):
    return look()
'''
    res = ex.run_calls(TASK, [victim, thief, victim + "# again\n", thief + "# again\n"], ["add(1, 2)"])
    for row in (1, 3):
        assert res[row][0].status == "pass", res[row][0]
        assert res[row][0].value == 0, res[row][0]


# ----------------------------------------------------------------------------- leaks between cells

POLLUTERS = [
    # attributes on standard-library functions and typing objects, a shared class, a shared dict
    "import statistics\ndef add(a, b):\n    f = statistics.mean\n    f.calls = getattr(f, 'calls', 0) + 1\n"
    "    return a + b + f.calls - 1\n",
    "import typing\ndef add(a, b):\n    t = typing.AnyStr\n    t.calls = getattr(t, 'calls', 0) + 1\n"
    "    return a + b + t.calls - 1\n",
    "import typing\ndef add(a, b):\n    t = typing.Callable[[int], int]\n    t.calls = getattr(t, 'calls', 0) + 1\n"
    "    return a + b + t.calls - 1\n",
    "import collections\ndef add(a, b):\n    c = collections.Counter\n    c.calls = getattr(c, 'calls', 0) + 1\n"
    "    return a + b + c.calls - 1\n",
    "import textwrap\ndef add(a, b):\n    w = textwrap.TextWrapper()\n    d = w.unicode_whitespace_trans\n"
    "    d[1] = d.get(1, 0) + 1\n    return a + b + d[1] - 1\n",
    "import sys\ndef add(a, b):\n    n = sys.stdout.write('') if False else 0\n"
    "    sys.stdout.extra = getattr(sys.stdout, 'extra', 0) + 1\n"
    "    return a + b + sys.stdout.extra - 1\n",
    "def add(a, b):\n    f = exit\n    f.calls = getattr(f, 'calls', 0) + 1\n    return a + b + f.calls - 1\n",
    # no import, no forbidden name: only the attribute store (nested two functions deep) betrays it
    "def add(a, b):\n    def bump():\n        def inner(q):\n            try:\n                q.calls += 1\n"
    "            except AttributeError:\n                q.calls = 1\n            return q.calls\n"
    "        return inner(type(exit))\n    return a + b + bump() - 1\n",
]


def test_imports_and_attribute_stores_are_found_in_nested_code():
    """The runner's fast path (no import, no attribute store: the code objects alone decide) must
    see an import or a store wherever it sits: nested functions, classes, lambdas, comprehensions."""
    from matrix.sandbox.purity import fast_pure

    def co(src):
        return compile(src, "<t>", "exec")

    assert fast_pure(co("def f(x):\n    return x.real + len([y.imag for y in x])\n"))
    for src in ("def f():\n    def g():\n        import os\n    return g\n",
                "class C:\n    def m(self):\n        from math import pi\n        return pi\n",
                "f = lambda x: [y for y in [x] if (y.a if y else 0)] or (lambda: x)\n"
                "def g(x):\n    class K:\n        def h(self):\n            x.attr = 1\n",
                "def f(x):\n    return [[z for z in ()] for _ in () if x] and None\ndef g(x):\n    del x.a\n"):
        assert not fast_pure(co(src)), src


# ----------------------------------------------------------------------------- dead main blocks

MAIN_BLOCK = "if __name__ == '__main__':\n    import os\n    def add(a, b):\n        return a * b\n"
# each makes ``__name__ == "__main__"`` true before the block: the block runs, as in Python
REBINDERS = [
    "__name__ = '__main__'\n",
    "def setup():\n    global __name__\n    __name__ = '__main__'\nsetup()\n",
    "for __name__ in ['__main__']:\n    pass\n",
    "(__name__ := '__main__')\n",
    "match '__main__':\n    case __name__:\n        pass\n",
    "import sys\nsys.modules[__name__].__name__ = '__main__'\n",
    "__name__ += ''\n__name__ = __name__.replace('solution', '__main__')\n",
]


def _python_says(code: str, test: str) -> bool:
    """What plain Python does with ``code`` loaded as module ``solution``, then ``test``."""
    import types

    mod = types.ModuleType("solution")
    saved = sys.modules.get("solution")
    sys.modules["solution"] = mod
    try:
        exec(compile(code, "<solution>", "exec"), mod.__dict__)
        exec(test, mod.__dict__)
        return True
    except AssertionError:
        return False
    finally:
        if saved is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = saved


@pytest.mark.parametrize("rebind", REBINDERS)
def test_a_main_block_made_live_still_runs(ex, rebind):
    """The runner drops a function program's ``if __name__ == "__main__":`` blocks (dead code under
    the module name ``solution``, whose imports would make it run one process per test); a
    program that first makes ``__name__`` equal ``"__main__"`` keeps its block, as Python does."""
    code = HONEST + rebind + MAIN_BLOCK
    tests = ["assert add(2, 3) == 6", "assert add(2, 3) == 5"]
    expected = ["pass" if _python_says(code, t) else "fail" for t in tests]
    assert expected == ["pass", "fail"], expected  # the attack works in plain Python
    assert verdicts(ex, code, tests) == expected


def test_a_dead_main_block_is_dropped_and_its_else_kept(ex):
    from matrix.sandbox import harness

    dead = HONEST + "if __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n"
    assert harness.compile_source(dead, "<solution>", guard=True, as_main=False)[1] is True
    assert harness.compile_source(dead, "<solution>", guard=True, as_main=True)[1] is False
    for rebind in REBINDERS:  # nothing dropped: the block's import keeps the program impure
        assert harness.compile_source(HONEST + rebind + MAIN_BLOCK, "<solution>", guard=True,
                                      as_main=False)[1] is False, rebind
    tests = ["assert add(2, 3) == 5", "assert add(1, 1) == 2", "assert add(2, 2) == 5"]
    assert verdicts(ex, dead, tests) == ["pass", "pass", "fail"]
    with_else = "if __name__ == '__main__':\n    import os\n    os._exit(3)\nelse:\n" \
                "    def add(a, b):\n        return a + b\n"
    assert verdicts(ex, with_else, tests) == ["pass", "pass", "fail"]


def test_a_stdio_programs_main_block_runs(ex):
    task = Task("upper", "upper-case the input", kind="stdio")
    code = "import sys\nif __name__ == '__main__':\n    import os\n    print(sys.stdin.read().upper())\n"
    res = ex.run_matrix(task, [code], [Test.stdio("abc\n", "ABC\n"), Test.stdio("x", "y")])
    assert res.status[0] == ["pass", "fail"], res.errors


@pytest.mark.parametrize("code", POLLUTERS)
def test_state_does_not_flow_between_cells(ex, code):
    tests = [Test.assertion(f"assert add({i}, 1) == {i + 1}") for i in range(4)]
    res = ex.run_matrix(TASK, [code, code + "\n# again\n", HONEST], tests)
    assert res.status[0] == ["pass"] * 4, (res.status, res.errors)
    assert res.status[1] == ["pass"] * 4
    assert res.status[2] == ["pass"] * 4


def test_a_broken_stream_or_tmp_costs_only_its_own_cell(ex):
    saboteurs = [
        "import sys\ndef add(a, b):\n    sys.stdout.close()\n    sys.stderr.close()\n    return a + b\n",
        "import os\ndef add(a, b):\n    os.chmod('/tmp', 0)\n    return a + b\n",
        "import os\ndef add(a, b):\n    try:\n        os.setxattr('/tmp', 'user.mark', b'1')\n"
        "    except OSError:\n        pass\n"
        "    open('/tmp/left', 'w').write('x')\n    return a + b\n",
        "import os\ndef add(a, b):\n    os.chdir('/tmp')\n    for _ in range(1200):\n"
        "        os.mkdir('d')\n        os.chdir('d')\n"
        "    return a + b\n",
    ]
    # a Python environment that lives under the host's /tmp is bound back (read-only) at its path
    env = sorted({p.split("/")[2] for p in (sys.prefix, sys.exec_prefix) if p.startswith("/tmp/")})
    checker = ("import os\ndef add(a, b):\n    print('x')\n    open('/tmp/mine', 'w').write('1')\n"
               "    marks = os.listxattr('/tmp') if hasattr(os, 'listxattr') else []\n"
               f"    return a + b + len([n for n in os.listdir('/tmp') if n not in ['mine', *{env!r}]]) + len(marks)\n")
    tests = [Test.assertion("assert add(1, 1) == 2")]
    for code in saboteurs:
        res = ex.run_matrix(TASK, [code, checker, HONEST], tests)
        assert res.status[1] == ["pass"], (code, res.status, res.errors)
        assert res.status[2] == ["pass"]
    assert ex.run_matrix(TASK, [HONEST], tests).status == [["pass"]]  # the worker still works


def test_keyrings_and_namespaces_are_refused(ex):
    code = r'''
import subprocess, shutil
def add(a, b):
    out = []
    for cmd in (["unshare", "-U", "-r", "true"], ["unshare", "-m", "true"], ["keyctl", "add", "user", "k", "v", "@u"]):
        if shutil.which(cmd[0]) is None:
            out.append("absent")
            continue
        out.append(subprocess.run(cmd, capture_output=True).returncode)
    return out
'''
    r = ex.run_calls(TASK, [code], ["add(1, 1)"])[0][0]
    assert r.status == "pass", r
    if ex.guards["seccomp"]:
        assert 0 not in r.value, r.value


# ----------------------------------------------------------------------------- the parent

def test_values_that_are_costly_to_decode_cost_only_their_cell(ex):
    colliding = ("def add(a, b):\n    P = (1 << 61) - 1\n    return {k * P for k in range(1, 60000)}\n")
    huge_fraction = ("from fractions import Fraction\ndef add(a, b):\n"
                     "    return Fraction(3 ** 20000 + 1, 7 ** 12000)\n")
    t0 = time.monotonic()
    res = ex.run_matrix(TASK, [colliding, huge_fraction, HONEST],
                        [Test.assertion("assert add(2, 2) == 4"), Test.assertion("assert add(2, 2) == {1}")])
    assert time.monotonic() - t0 < 30
    assert res.status[2] == ["pass", "fail"]
    assert "pass" not in res.status[0] and "pass" not in res.status[1]
    json.dumps(res.to_json())  # the output line can be written


def test_coevo_matrix_survives_a_huge_fraction(tmp_path):
    tasks = tmp_path / "t.jsonl"
    codes = tmp_path / "c.jsonl"
    tests = tmp_path / "u.jsonl"
    out = tmp_path / "m.jsonl"
    tasks.write_text(json.dumps({"task_id": "a", "prompt": "add", "entry_point": "add"}) + "\n")
    codes.write_text("".join(json.dumps({"task_id": "a", "code": c}) + "\n" for c in [
        "from fractions import Fraction\ndef add(a, b):\n    return Fraction(10 ** 5000 + 1, 3)\n", HONEST]))
    tests.write_text(json.dumps({"task_id": "a", "test": "assert add(1, 2) == 3"}) + "\n")
    p = subprocess.run([sys.executable, "-m", "coevo", "matrix", "--tasks", str(tasks), "--codes", str(codes),
                        "--tests", str(tests), "--out", str(out), "--timeout", "2", "--workers", "1"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    line = json.loads(out.read_text())
    assert line["status"] == [["fail"], ["pass"]]
    assert "sandbox" in line and line["sandbox"]["level"] in ("namespace", "process")


# ----------------------------------------------------------------------------- memory and processes

def test_memory_limits_hold_for_the_whole_tree(ex):
    if ex.guards["cgroup"] == "none":
        pytest.skip("no cgroups here: limits are per process")
    tree = r'''
import os, time
def add(a, b):
    kids = []
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            try:
                x = bytearray(200 << 20)
                for i in range(0, len(x), 4096):
                    x[i] = 1
                time.sleep(3)
            finally:
                os._exit(0)
        kids.append(pid)
    for p in kids:
        os.waitpid(p, 0)
    return a + b
'''
    memfds = r'''
import os
def add(a, b):
    fds = []
    for _ in range(8):
        fd = os.memfd_create("x")
        os.ftruncate(fd, 200 << 20)
        os.pwrite(fd, b"\1" * (1 << 20), 0)
        for off in range(0, 200 << 20, 4 << 20):
            os.pwrite(fd, b"\1" * 4096, off)
        fds.append(fd)
    return a + b
'''
    limit = (ex.config.memory_mb + 64) << 20
    for code in (tree, memfds):
        t0 = time.monotonic()
        r = ex.run_matrix(TASK, [code], [Test.assertion("assert add(2, 2) == 4")])
        assert time.monotonic() - t0 < 20
        assert r.status[0][0] in ("pass", "memory", "error", "timeout", "output_limit"), (r.status, r.errors)
        for k in range(len(ex._workers)):  # no worker's cells ever held more than the limit
            dirs = list(ex._pool.cgroups.worker_dirs(k, "cell").values())
            dirs += list(ex._pool.cgroups.worker_dirs(k, "runner").values())
            for d in dirs:
                for f in ("memory.max_usage_in_bytes", "memory.peak"):
                    path = os.path.join(d, f)
                    if os.path.exists(path):
                        assert int(open(path).read()) <= limit + (8 << 20), (path, int(open(path).read()))


# ----------------------------------------------------------------------------- what a cell sees

def test_a_cell_sees_no_proc_and_harmless_devices(ex):
    if ex.isolation != "namespace":
        pytest.skip("only with namespace isolation")
    code = r'''
import os
def add(a, b):
    out = {}
    for path in ("/proc/1/cmdline", "/proc/self/status", "/proc/self/environ"):
        try:
            out[path] = open(path, "rb").read(100).decode("latin-1")
        except OSError as exc:
            out[path] = type(exc).__name__
    out["dev"] = sorted(os.listdir("/dev"))
    try:
        with open("/dev/urandom", "wb") as fh:
            fh.write(b"x")
        out["urandom"] = "written"
    except OSError as exc:
        out["urandom"] = type(exc).__name__
    return out
'''
    r = ex.run_calls(TASK, [code], ["add(1, 1)"])[0][0]
    assert r.status == "pass", r
    v = r.value
    assert all(v[p] in ("FileNotFoundError", "PermissionError") for p in ("/proc/1/cmdline", "/proc/self/environ")), v
    assert set(v["dev"]) <= {"null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout", "stderr"}
    assert v["urandom"] != "written"


def test_a_programs_finalizers_cannot_stall_the_next_program():
    """A pure program whose garbage (a suspended generator, a reference cycle) loops forever when
    finalized: the next program, run in the same runner, keeps its own verdicts. (A 1 s timeout of
    its own: each staller row waits out the timeout, 9 s of this test at 2 s; a stalled runner
    would time the honest rows out just the same.)"""
    staller = r'''
def add(a, b):
    def gen():
        try:
            yield 1
        finally:
            while True:
                try:
                    pass
                except BaseException:
                    pass
    g = gen()
    next(g)
    box = [g]
    box.append(box)  # a cycle: collected later, not when the test ends
    return a + b
'''
    tests = [Test.assertion(f"assert add({i}, 1) == {i + 1}") for i in range(3)]
    cfg = ExecConfig(timeout=1.0, memory_mb=256, max_procs=16, max_output_bytes=256 << 10, workers=2)
    t0 = time.monotonic()
    with Executor(cfg) as ex:
        res = ex.run_matrix(TASK, [staller, HONEST, staller + "# again\n", HONEST + "# again\n"], tests)
    assert res.status[1] == ["pass"] * 3 and res.status[3] == ["pass"] * 3, (res.status, res.errors)
    assert time.monotonic() - t0 < 60


# ----------------------------------------------------------------------------- one program against others
# (found by a red-team pass, 2026-11-27: each made an honest program fail and a wrong one pass)

SQ = Task("sq", "square", entry_point="f")
SQ_TEST = "assert f(3) == 9"
RIGHT_SQ, WRONG_SQ = "def f(x):\n    return x * x\n", "def f(x):\n    return x + 1\n"
FILLERS = [f"def f(x):\n    return x * x + {k}\n" for k in range(1, 10)]  # units of several rows

SHIFTER = r'''
import sys, os
def f(x):
    fr = sys._getframe()
    while fr is not None and fr.f_code.co_name != "run_cell":
        fr = fr.f_back
    if fr is not None and "chan" in fr.f_locals:
        fr.f_locals["chan"].send(5, b'[[0],[]],[[0],[]]')  # a claim body of two values
        os._exit(0)
    return 0
'''

HIJACK = r'''
import operator
ga = operator.attrgetter
box = []
def gen():
    fr = ga("gi_frame")(box[0])
    for _ in range(60):
        if fr is None or ga("f_code.co_name")(fr) == "run_rows":
            break
        fr = ga("f_back")(fr)
    yield fr
def f(x):
    box.clear()
    box.append(gen())
    fr = next(box[0])
    if fr is None:
        return 0
    cmds = ga("f_locals")(fr)["cmds"]
    b, g = ga("f_builtins")(fr), ga("f_globals")(fr)
    src = [c["code"] for c in cmds if "attrgetter" not in c["code"]][0]  # the right program, read
    real, comp, ex = g["run_one"], b["compile"](src, "<solution>", "exec"), b["exec"]
    def hook(code_co, lines, setup_co, probe, kind, ns, skip_load=False, real=real, comp=comp, ex=ex):
        ex(comp, ns)  # every later program runs the right one instead
        return real(code_co, lines, setup_co, probe, kind, ns, skip_load=True)
    g["run_one"] = hook
    ns = {}
    ex(comp, ns)
    return ns["f"](x)
'''

ABC_POISON = (
    "import operator\nfrom collections.abc import Iterable\n"
    "def flatten(x):\n    operator.methodcaller('register', int)(Iterable)\n    return isinstance(5, Iterable)\n")
ABC_HOOK = (
    "from collections.abc import Iterable\n"
    "class Evil(Iterable):\n    def __iter__(self):\n        return iter(())\n"
    "    def __subclasshook__(cls, other):\n        return True\n"
    "def flatten(x):\n    return isinstance(5, Iterable)\n")
FLATTEN = ("from collections.abc import Iterable\n"
           "def flatten(x):\n    out = []\n    for y in x:\n"
           "        if isinstance(y, Iterable) and not isinstance(y, str):\n            out.extend(flatten(y))\n"
           "        else:\n            out.append(y)\n    return out\n")


@pytest.fixture(scope="module")
def one_worker():
    cfg = ExecConfig(timeout=2.0, memory_mb=256, max_procs=16, max_output_bytes=256 << 10, workers=1)
    with Executor(cfg) as e:
        yield e


def test_a_claim_body_of_two_values_shifts_no_other_cell(one_worker):
    # the parent parsed a unit's small claim bodies as one JSON array: a body holding a comma
    # moved every later cell's value by one, so the right program failed and the wrong one passed
    res = one_worker.run_matrix(SQ, [SHIFTER, RIGHT_SQ, WRONG_SQ, *FILLERS], [Test.assertion(SQ_TEST)])
    assert res.status[1] == ["pass"] and res.status[2] == ["fail"], res.status[:3]
    assert res.values[1] == [9] and res.values[2] == [4]
    assert res.status[0] != ["pass"]


def test_a_pure_looking_program_cannot_take_over_the_runner(one_worker):
    # operator.attrgetter reads attributes by name, around the check of attribute names: it
    # reached the shared runner's frames and replaced its run_one for every later program
    res = one_worker.run_matrix(SQ, [HIJACK, RIGHT_SQ, WRONG_SQ, *FILLERS], [Test.assertion(SQ_TEST)])
    assert res.status[1] == ["pass"] and res.status[2] == ["fail"]
    import ast

    from matrix.sandbox.purity import pure_code
    assert not pure_code(ast.parse(HIJACK))
    for text in ("import string\ndef f(x):\n    return string.Formatter().get_field('0.real', [x], {})[0]\n",
                 "import typing\ndef f(x: 'int'):\n    return typing.get_type_hints(f)\n",
                 "from operator import methodcaller\ndef f(x):\n    return methodcaller('bit_length')(x)\n",
                 ABC_POISON, ABC_HOOK):
        assert not pure_code(ast.parse(text)), text


@pytest.mark.parametrize("evil", [ABC_POISON, ABC_HOOK])
def test_a_program_cannot_change_what_a_shared_abc_answers_for_later_programs(one_worker, evil):
    # registering int as an Iterable (or a subclass hook saying yes) stayed in the runner's
    # collections.abc for the next program: the right flatten then raised on ints
    task = Task("flat", "flatten nested lists", entry_point="flatten")
    tests = [Test.assertion("assert flatten([1, [2, [3]]]) == [1, 2, 3]"),
             Test.assertion("assert flatten([[4], 5]) == [4, 5]")]
    res = one_worker.run_matrix(task, [FLATTEN, evil, FLATTEN + "# victim\n"], tests)
    assert res.status[0] == ["pass", "pass"] and res.status[2] == ["pass", "pass"], res.status


def test_large_values_are_judged_whole_but_not_kept(one_worker):
    # every cell's value was kept decoded in the parent and written out: a program returning a
    # million floats on each of 20 tests held 1.3 GB of the parent's memory and wrote 104 MB
    big = "def f(x):\n    return [0.5] * 20_000 if x else [0.5]\n"  # ~100 KB encoded
    tests = [Test.assertion(f"assert f({i}) == {i * i}") for i in range(1, 6)]
    tests.append(Test.assertion("assert f(0) == [0.5]"))
    res = one_worker.run_matrix(SQ, [RIGHT_SQ, big], tests)
    assert res.status[0][:5] == ["pass"] * 5 and res.status[1] == ["fail"] * 5 + ["pass"]
    assert res.values[0][:5] == [1, 4, 9, 16, 25] and res.values[1][5] == [0.5]
    assert all("too large to keep" in str(res.to_json()["values"][1][k]) for k in range(5))
    assert len(json.dumps(res.to_json())) < 20_000


COSTLY = ["math.factorial(10**7)", "str([[0] * 10**6] * 10**6)", "sum([[0] * 1000] * 100000, [])",
          "sorted([[0] * 10**6] * 10**6)", "round(7, -10**12)", "math.comb(10**6, 5 * 10**5)",
          "math.perm(10**6)", "math.prod([3**100000] * 10)", "[[0] * 10**6] * 10**6 == []"]


def test_the_parent_refuses_to_evaluate_costly_constants():
    # the parent evaluates tests' constant parts while planning: `assert f(3) != math.factorial(10**7)`
    # stalled `coevo matrix` for good (C code: no signal stops it), `str([[0]*10**6]*10**6)` ate memory
    code = ("import ast, math, sys\nfrom matrix import plain\nfor e in sys.argv[1:]:\n"
            "    try:\n        plain.evaluate(ast.parse(e, mode='eval'))\n        print('EVALUATED', e)\n"
            "    except plain.TooBig:\n        print('TOOBIG')\n")
    out = subprocess.run([sys.executable, "-c", code, *COSTLY], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.stdout.split() == ["TOOBIG"] * len(COSTLY), out.stdout + out.stderr
    assert plain.evaluate(ast.parse("math.factorial(20) + len(str([[0] * 100] * 100))", mode="eval")) == \
        math.factorial(20) + len(str([[0] * 100] * 100))


def test_costly_or_deep_tests_cost_only_their_cells(one_worker):
    tests = [Test.assertion(SQ_TEST), Test.assertion("assert f(3) != math.factorial(10**7)"),
             Test.assertion("import math\nassert math.factorial(f(2)) == 24"),
             Test.call_expected("f(" + "-" * 400 + "3)", "9")]
    res = one_worker.run_matrix(SQ, [RIGHT_SQ, "def f(x):\n    return 10**7\n"], tests)
    assert res.status[0][0] == "pass" and res.status[0][2] == "pass"
    assert res.status[1][2] == "timeout"  # as Python would: factorial(10**7) runs for minutes
    assert res.status[0][3] == res.status[1][3] == "bad_test"


# A second red-team pass (2026-11-27) got past the purity check in ways a check of the text cannot
# see; since then every row (a program and its tests) runs in a process forked for it alone.
ACROSS_ROWS = {
    # copy's reconstruction calls setattr on what the program's __reduce_ex__ names: the class of
    # the harness's stdout, whose flush then raised for every later program
    "copy_reduce": ("import copy\nimport sys\n"
                    "def build():\n    import sys\n    def target():\n        return type(sys.stdout)\n"
                    "    def bad(self):\n        raise ValueError('poisoned')\n"
                    "    class E:\n        def __reduce_ex__(self, proto):\n"
                    "            return (target, (), (None, {'flush': bad}))\n    return E\n"
                    "copy.copy(build()())\n"
                    "def f(x):\n    return 0\n"),
    # a standard-library property initialised again in place: every Fraction's numerator read 9
    "property_init": ("import fractions\ndef fake(self):\n    return 9\n"
                      "property.__init__(fractions.Fraction.numerator, fake)\n"
                      "def f(x):\n    return 0\n"),
    # the subclass hook, with its name built at run time in a class made by type()
    "type_hook": ("from collections.abc import Iterable\nD = '_' * 2\n"
                  "Evil = type('Evil', (Iterable,), {D + 'iter' + D: lambda self: iter(()),\n"
                  "                                  D + 'subclasshook' + D: classmethod(lambda cls, o: True)})\n"
                  "def f(x):\n    return 0 if isinstance(5, Iterable) else 1\n"),
    # a shared class-level buffer of the harness's empty stdin
    "stdin_buffer": ("import sys\nsys.stdin.buffer.write(b'poison')\nsys.stdin.buffer.seek(0)\n"
                     "def f(x):\n    return 0\n"),
    # the other rows' program texts, read through str.format's attribute fields from a generator
    "format_walk": ("def g():\n"
                    "    yield '{0.gi_frame.f_back.f_back.f_back.f_back.f_back.f_locals[cmds][1][code]}'.format(it)\n"
                    "it = g()\n"
                    "def f(x):\n    src = next(it)\n    ns = {}\n    return x * x if 'x * x' in src else 0\n"),
}
VICTIMS = ["import fractions\ndef f(x):\n    return int(fractions.Fraction(x * x, 1) + fractions.Fraction(0))\n",
           "import sys\ndef f(x):\n    sys.stdout.flush()\n    return x * x + len(sys.stdin.buffer.read())\n",
           "from collections.abc import Iterable\ndef f(x):\n    return x * x if not isinstance(x, Iterable) else -1\n"]


@pytest.mark.parametrize("name", sorted(ACROSS_ROWS))
def test_what_a_program_leaves_in_its_process_reaches_no_other_program(one_worker, name):
    res = one_worker.run_matrix(SQ, [ACROSS_ROWS[name], *VICTIMS, WRONG_SQ, *FILLERS],
                                [Test.assertion(SQ_TEST), Test.assertion("assert f(4) == 16")])
    assert res.status[1:4] == [["pass", "pass"]] * 3, (name, res.status[:5], res.errors[:5])
    assert res.status[4] == ["fail", "fail"] and all(r == ["fail", "fail"] for r in res.status[5:])
    assert res.status[0] != ["pass", "pass"]


def test_only_plain_programs_share_the_runner():
    # the allow-list of what may run in the runner itself (the rest runs in a process of its row)
    from matrix.sandbox.purity import plain_code, pure_code

    plain = ["def f(x):\n    return x * x\n",
             "import math\nfrom collections import Counter\n"
             "def f(xs):\n    return max(Counter(xs).values()) + math.floor(1.5)\n",
             "def f(s):\n    st = []\n    for c in s:\n        if c in '([{':\n"
             "            st.append(c)\n    return len(st)\n",
             "class Empty(Exception):\n    pass\n"
             "def f(x):\n    if x < 0:\n        raise Empty('negative')\n    return x\n"]
    not_plain = [*ACROSS_ROWS.values(), HIJACK,
                 "class A:\n    def __init__(self):\n        self.v = 1\ndef f(x):\n    return A().v\n",
                 "def f(x):\n    return type(x).__name__\n",
                 "def f(x):\n    return '{0.real}'.format(x)\n",
                 "from collections.abc import Iterable\nclass E(Iterable):\n    pass\ndef f(x):\n    return 0\n",
                 "import copy\ndef f(x):\n    return copy.copy(x)\n",
                 "import re\ndef f(x):\n    return re.RegexFlag._member_map_\n"]
    for text in plain:
        tree = ast.parse(text)
        assert pure_code(tree) and plain_code(tree), text
    for text in not_plain:
        tree = ast.parse(text)
        assert not (pure_code(tree) and plain_code(tree)), text


# A third pass (2026-11-27): module attributes that are modules led out of the batch-safe ones
# (re.enum.bltns is builtins, typing.types has new_class, typing.contextlib.os is os), and a
# module's attribute that *is* eval was not the bare name the check refuses.
ENCODER_POISON = ("import re\n"
                  "def f(x):\n    u = '_' * 2\n"
                  "    g = re.enum.bltns.eval('[m for m in ' + u + 'import' + u + \"('sys').modules.values() \"\n"
                  "                           \"if hasattr(m, 'run_one') and hasattr(m, '_G')][0]._G\")\n"
                  "    g['encode'] = lambda v, truth=False: 9\n"
                  "    return x * x\n")


def test_module_chains_stay_in_the_batch_safe_modules(one_worker):
    from matrix.sandbox.purity import plain_code, pure_code

    for text in (ENCODER_POISON,
                 "import typing\ndef f(x):\n    return typing.types.new_class('K', ())\n",
                 "import typing\ndef f(x):\n    return typing.contextlib.os.getpid()\n",
                 "from typing import types\ndef f(x):\n    return types.new_class('K', ())\n",
                 "import re\ndef f(x):\n    return re.copyreg.dispatch_table\n"):
        assert not pure_code(ast.parse(text)), text
    # reached through a batch-safe module but not a plain one: pure, not plain
    text = "import re\ndef f(x):\n    return x * x if re.enum.IntEnum else 0\n"
    assert pure_code(ast.parse(text)) and not plain_code(ast.parse(text))
    res = one_worker.run_matrix(SQ, [ENCODER_POISON, RIGHT_SQ, WRONG_SQ, *FILLERS], [Test.assertion(SQ_TEST)])
    assert res.status[1] == ["pass"] and res.status[2] == ["fail"] and res.values[2] == [4]
    assert all(r == ["fail"] for r in res.status[3:])


# A fourth pass (2026-11-27): names that syntax holds as plain strings. A pattern's capture
# (`case __hash__:`), an import alias or an `except ... as` bound dunder hooks in a plain program's
# class, whose instance then sat in `re`'s cache in the shared runner; a class pattern's keyword
# (`case Callable(__self__=b)`) read `print.__self__`, the builtins module, and with its exec a
# plain row replaced the runner's encoder, a pure row's process became the runner for every later
# row and task. And the parent evaluated `%` formatting and big-int division without bounds.
RE_TROJAN = ("import re\n"
             "def hsh(me):\n    return 0\ndef eq(me, other):\n    return other == 0\n"
             "def band(me, other):\n    return 2 & other\ndef bor(me, other):\n    return 2 | other\n"
             "class K:\n"
             "    match hsh:\n        case __hash__:\n            pass\n"
             "    match eq:\n        case __eq__:\n            pass\n"
             "    match band:\n        case __and__:\n            pass\n"
             "    match band:\n        case __rand__:\n            pass\n"
             "    match bor:\n        case __or__:\n            pass\n"
             "    match bor:\n        case __ror__:\n            pass\n"
             're.compile("[a-z]+", K())\n'
             "def words(s):\n    return 0\n")
TAKE_ENCODER = ("import sys\\n"
                "h = [m for m in list(sys.modules.values()) if hasattr(m, 'run_one') and hasattr(m, '_G')][0]\\n"
                "real = h._G['encode']\\n"
                "h._G['encode'] = lambda v, truth=False, real=real: real(9 if v == 4 else v, truth)\\n")
BUILTINS_AT_LOAD = ("from collections.abc import Callable\n"
                    "match print:\n    case Callable(__self__=B):\n        pass\n"
                    f'B.exec("{TAKE_ENCODER}", {{}})\n'
                    "def f(x):\n    return 0\n")
BUILTINS_IN_CALL = ("from collections.abc import Callable\nimport sys\n"  # pure, not plain: a process of its own
                    "def f(x):\n    match print:\n        case Callable(__self__=B):\n            pass\n"
                    f'    B.exec("{TAKE_ENCODER}", {{}})\n'
                    "    return x * x\n")


def test_no_syntax_binds_a_hook_or_reads_an_attribute_around_the_checks(one_worker):
    from matrix.sandbox.purity import plain_code, plain_names, pure_code

    words = Task("w", "words", entry_point="words")
    right = 'import re\ndef words(s):\n    return re.findall("[a-zA-Z]+", s)\n'
    wrong = 'import re\ndef words(s):\n    return re.findall("[a-z]+", s)\n'
    res = one_worker.run_matrix(words, [RE_TROJAN, right, wrong],
                                [Test.assertion('assert words("Hello World") == ["Hello", "World"]'),
                                 Test.call_expected('words("ab1CD")', "['ab', 'CD']")])
    assert res.status[1] == ["pass", "pass"] and res.status[2] == ["fail", "fail"], res.status
    for evil in (BUILTINS_AT_LOAD, BUILTINS_IN_CALL):
        res = one_worker.run_matrix(SQ, [evil, RIGHT_SQ, WRONG_SQ, "import sys\n" + WRONG_SQ],
                                    [Test.assertion(SQ_TEST), Test.call_expected("f(3)", "9")])
        assert res.status[1] == ["pass", "pass"], res.status
        assert res.status[2] == res.status[3] == ["fail", "fail"] and res.values[2] == [4, 4], res.status
        assert not pure_code(ast.parse(evil))
    for text in ("from typing import cast as __coevo_own__\ndef f(x):\n    return x\n",
                 "class K:\n    try:\n        pass\n    except Exception as __hash__:\n        pass\n",
                 "def f(x):\n    return dict(__class__=x)\n"):
        assert not pure_code(ast.parse(text)), text
    for text in ("def f(x):\n    match x:\n        case 1:\n            return 0\n    return x\n",
                 "from math import floor as _floor\ndef f(x):\n    return _floor(x)\n",
                 "def f(x):\n    try:\n        return 1 // x\n    except ZeroDivisionError as _e:\n        return 0\n"):
        assert pure_code(ast.parse(text)) and not plain_code(ast.parse(text)), text
    # the compiled form is checked too: a private name bound by whatever syntax
    assert not plain_names(compile("class K:\n    match 1:\n        case __hash__:\n            pass\n", "<t>", "exec"))
    assert plain_names(compile("class K(Exception):\n    '''doc'''\n    x: int = 1\n", "<t>", "exec"))


def test_a_rows_process_answers_for_its_row_alone():
    # the runner passes on what a row's process writes up to its DONE frame only: frames after
    # it (the next rows' answers, forged) and anything malformed are dropped
    from matrix.sandbox import harness
    from matrix.sandbox.records import Frame
    from matrix.sandbox.wire import frame_bytes

    tok, other = b"T" * 8, b"U" * 8
    row = frame_bytes(tok, int(Frame.PLAN), 0.0, b"{}") + frame_bytes(tok, int(Frame.DONE), 0.0, b"")
    forged = frame_bytes(tok, int(Frame.PLAN), 0.0, b"{}") + frame_bytes(tok, int(Frame.DONE), 0.0, b"")

    def through(data):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.write(w, data)
            os._exit(0)
        os.close(w)
        harness._G.setdefault("read", os.read)
        try:
            return harness._row_frames(r, tok)
        finally:
            os.close(r)
            os.waitpid(pid, 0)

    assert through(row + forged) == (row, True)
    assert through(row[:-3]) == (row[: len(row) - len(frame_bytes(tok, int(Frame.DONE), 0.0, b""))], False)
    assert through(frame_bytes(other, int(Frame.DONE), 0.0, b"") + row) == (b"", False)
    big = frame_bytes(tok, int(Frame.VALUES), 0.0, b"x" * (1 << 20))
    assert through(big * 3 + row) == (big * 3 + row, True)  # more than a pipe holds: read as it comes


def test_the_parent_refuses_costly_division_and_formatting(one_worker):
    chained = "(1" + " << 200000" * 40 + ") // (3" + " << 200000" * 20 + " | 12345)"
    for expr in (chained, "divmod(1 << 190000, (1 << 180000) + 1) == 0", "(7 << 150000) << 150000"):
        with pytest.raises(plain.TooBig):
            plain.evaluate(ast.parse(expr, mode="eval"))
    for expr in ("'%01500000000d' % 0", "b'%.1000000000f' % 0.0"):
        with pytest.raises(plain.Unsupported):
            plain.evaluate(ast.parse(expr, mode="eval"))
    assert plain.evaluate(ast.parse("(10**40 + 7) % 97 + divmod(17, 5)[0] + (1 << 64) // 3", mode="eval")) == \
        (10**40 + 7) % 97 + 3 + (1 << 64) // 3
    t0 = time.monotonic()
    parity = Task("p", "double", entry_point="f")
    res = one_worker.run_matrix(parity, ["def f(x):\n    return x * 2\n", "def f(x):\n    return '%01500000000d'\n",
                                         "def f(x):\n    return (1 << (4000000 * x)) + 12345\n"],
                                [Test.assertion("assert f(4) % 2 == 0"), Test.assertion("assert f(2) % f(1) == 0")])
    assert res.status[0] == ["pass", "pass"] and res.status[1][0] != "pass" and res.status[2][1] != "pass"
    assert time.monotonic() - t0 < 60


# A fifth pass (2026-11-27): `from re import enum` reached a module out of the plain ones (its
# functional API gave a class dunder hooks named at run time: the `re` cache trojan again); a
# generator parked in typing's subscript cache ran its `finally` inside a later row's annotation
# when evicted; the parent weighed a big int as one item (`str([2**13999] * 10**5)`: 20 s) and
# raised a program's Fraction to any power.
ENUM_TROJAN = ("from re import enum\nimport re\n"
               "def hsh(me):\n    return 0\ndef eq(me, other):\n    return other == 0\n"
               "def band(me, other):\n    return 2 & other\ndef bor(me, other):\n    return 2 | other\n"
               "u = chr(95) * 2\n"
               "K = enum.Enum('K', [('a', 1), (u + 'hash' + u, hsh), (u + 'eq' + u, eq), (u + 'and' + u, band),\n"
               "                    (u + 'rand' + u, band), (u + 'or' + u, bor), (u + 'ror' + u, bor)])\n"
               "re.compile('[a-z]+', K.a)\n"
               "def words(s):\n    return []\n")
PARKED_FINALLY = ("import typing\n"
                  "def armed():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\n"
                  "g = armed()\nnext(g)\ntyping.List[g]\n"
                  "for i in range(127):\n    typing.List[i + 1000]\n"
                  "def total(nums):\n    return 0\n")


def test_what_a_plain_program_leaves_in_shared_caches_is_its_own(one_worker):
    import fractions  # noqa: F401 (loaded, as in the sandbox, which preloads the batch-safe modules)
    import statistics  # noqa: F401

    from matrix.sandbox.purity import plain_code, pure_code

    for text in (ENUM_TROJAN, "from statistics import random\ndef f(x):\n    return x\n",
                 "from fractions import operator\ndef f(x):\n    return x\n"):
        assert pure_code(ast.parse(text)) and not plain_code(ast.parse(text)), text
    words = Task("w", "words", entry_point="words")
    right, wrong = ('import re\ndef words(s):\n    return re.findall("[a-zA-Z]+", s)\n',
                    'import re\ndef words(s):\n    return re.findall("[a-z]+", s)\n')
    res = one_worker.run_matrix(words, [ENUM_TROJAN, right, wrong],
                                [Test.assertion('assert words("Hello World") == ["Hello", "World"]')])
    assert res.status[1:] == [["pass"], ["fail"]], res.status
    total = Task("total", "sum of a list", entry_point="total")
    honest = "from typing import List\ndef total(nums: List[int]) -> int:\n    return sum(nums)\n"
    forked = "import sys\nfrom typing import List\ndef total(nums: List[int]) -> int:\n    return sum(nums)\n"
    res = one_worker.run_matrix(total, [PARKED_FINALLY, honest, forked, "def total(nums):\n    return sum(nums) + 1\n"],
                                [Test.assertion("assert total([1, 2]) == 3"), Test.call_expected("total([5])", "5")])
    assert res.status[1] == res.status[2] == ["pass", "pass"], (res.status, res.errors)
    assert res.status[3] == ["fail", "fail"]


def test_the_parent_weighs_big_ints_and_fractions(one_worker):
    with pytest.raises(plain.TooBig):
        plain.evaluate(ast.parse("len(str([2**13999] * 100000))", mode="eval"))
    assert plain.evaluate(ast.parse("len(str([2**1000] * 1000))", mode="eval")) == len(str([2**1000] * 1000))
    t0 = time.monotonic()
    total = Task("total", "sum of a list", entry_point="total")
    res = one_worker.run_matrix(total, ["from fractions import Fraction\ndef total(nums):\n    return Fraction(3, 2)\n",
                                        "def total(nums):\n    return sum(nums)\n"],
                                [Test.assertion("assert total([1, 2]) == 3"),
                                 Test.assertion("assert total([1]) ** 30000000 != 0")])
    assert res.status[1] == ["pass", "pass"] and res.status[0][0] == "fail"
    assert time.monotonic() - t0 < 60
    # pass 12: divmod (and max, sorted...) of a huge Fraction cross-multiplies its parts too
    huge = fractions.Fraction(3 ** 600_000, 2 ** 900_000, _normalize=False)
    for expr in ("divmod(h0, 1)", "max([h0, 1])", "sorted([h0, 1, 2])"):
        with pytest.raises(plain.TooBig):
            plain.evaluate(_holes(ast.parse(expr, mode="eval")), [huge])
    assert plain.evaluate(_holes(ast.parse("divmod(h0, 1)", mode="eval")), [fractions.Fraction(7, 2)]) \
        == (3, fractions.Fraction(1, 2))


# A sixth pass (2026-11-27): `typing.ABCMeta` is a metaclass a plain program could call like
# `type()`: a subclass of Sequence with a hook named at run time put `set` into Sequence's cache for
# the runner's life (forked rows and other tasks too); `typing.abstractmethod` is the banned
# `abc.abstractmethod` under another name; the parent walked `(0, 1) in range(10**18)` and made
# ints of a program's `Decimal("1e999999999")` or a 4 MB Fraction.
ABC_BY_METACLASS = ("import typing\nimport collections.abc\nu = chr(95) * 2\n"
                    "def hook(c):\n    return True\n"
                    "K = typing.ABCMeta('K', (collections.abc.Sequence,), {u + 'subclasshook' + u: hook})\n"
                    "isinstance(set(), collections.abc.Sequence)\n"
                    "def is_collection(x):\n    return False\n")


def test_plain_code_reaches_no_metaclass_and_no_banned_function(one_worker):
    from matrix.sandbox.purity import plain_code, pure_code

    assert pure_code(ast.parse(ABC_BY_METACLASS)) and not plain_code(ast.parse(ABC_BY_METACLASS))
    assert not plain_code(ast.parse("from typing import ABCMeta\ndef f(x):\n    return x\n"))
    assert not pure_code(ast.parse("import typing\nimport statistics\ntyping.abstractmethod(statistics.mean)\n"))
    task = Task("coll", "True for a list, tuple or set", entry_point="is_collection")
    right = "def is_collection(x):\n    return isinstance(x, (list, tuple, set))\n"
    wrong = ("import collections.abc\ndef is_collection(x):\n"
             "    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)\n")
    res = one_worker.run_matrix(task, [ABC_BY_METACLASS, right, wrong, "import sys\n" + wrong],
                                [Test.assertion("assert is_collection({1, 2}) == True"),
                                 Test.assertion("assert is_collection([1]) == True")])
    assert res.status[1] == ["pass", "pass"] and res.status[2] == res.status[3] == ["fail", "pass"], res.status


def test_the_parent_walks_no_huge_range_and_makes_no_huge_int():
    from decimal import Decimal
    from fractions import Fraction

    big_fraction = Fraction(int("f" * 300000, 16), int("e" * 100000, 16) + 1, _normalize=False)
    for expr, holes in (("(0, 1) in H", [range(10**18)]), ("1.5 not in H", [range(10**12)]),
                        ("math.floor(H) == 3", [Decimal("1e999999999")]), ("int(H) == 3", [Decimal("1e99999")]),
                        ("math.floor(H) == 3", [big_fraction]), ("H == 2 ** 100000", [Decimal(3)]),
                        ("math.gcd(0, H, H + 1) == 1", [1 << 190000]), ("list(H) == []", [range(10**9)]),
                        # (a seventh pass: a program's big Fractions summed, multiplied, compared)
                        ("sum(H) == 1", [[big_fraction, big_fraction]]), ("math.prod(H) == 1", [[big_fraction] * 2]),
                        ("H < 1", [big_fraction])):
        tree = _holes(ast.parse(expr.replace("H", "h0"), mode="eval"))
        with pytest.raises(plain.TooBig):
            plain.evaluate(tree, holes)
    assert plain.evaluate(_holes(ast.parse("5 in h0 and math.floor(h1) == 3", mode="eval")),
                          [range(10**18), Decimal("3.5")]) is True


def _holes(tree):
    """Names h0, h1... of an expression as holes (values the sandbox computed)."""
    class Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id[:1] == "h" and node.id[1:].isdigit():
                return plain.Hole(int(node.id[1:]))
            return node
    return Sub().visit(tree)


# ------------------------------------------------------------- eighth pass: select, process mode, gen-tests

def _select(tmp_path, tasks, codes, tests):
    from coevo.cli import main

    files = {}
    for name, rows in (("tasks", tasks), ("codes", codes), ("tests", tests)):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    assert main(["select", "-q", "--workers", "1", "--timeout", "2", "--tasks", str(files["tasks"]),
                 "--codes", str(files["codes"]), "--tests", str(files["tests"]), "--out", str(out)]) == 0
    return json.loads(out.read_text().splitlines()[0])


def test_large_outputs_agree_in_consensus_only_when_they_are_equal(tmp_path):
    # a value over the keeping size was kept as a note of its type and byte length, and consensus
    # keyed it by that note: a program returning the list reversed on large inputs agreed with
    # every right program there and, first in the pool, was the one `coevo select` picked
    wrong = "def f(n):\n    r = list(range(n))\n    return r[::-1] if n > 14000 else r\n"
    right = ["def f(n):\n    return list(range(n))\n", "def f(n):\n    return [i for i in range(n)]\n"]
    task = {"task_id": "rng", "prompt": "Write f(n) returning the list [0, 1, ..., n-1].", "entry_point": "f"}
    tests = [{"task_id": "rng", "test": t} for t in
             ("assert f(3) == [0, 1, 2]", "assert len(f(20000)) == 20000", "assert f(15000)[0] + f(15001)[0] >= 0")]
    out = _select(tmp_path, [task], [{"task_id": "rng", "code": c} for c in [wrong, *right]], tests)
    assert out["index"] in (1, 2) and out["code_scores"][0] < out["code_scores"][1] == out["code_scores"][2], out
    # stdout over the keeping size: the same, and two right outputs differing in trailing spaces agree
    wrong = "n = int(input())\nr = list(range(n))\nif n > 20000:\n    r = r[::-1]\nprint('\\n'.join(map(str, r)))\n"
    right = ["n = int(input())\nfor i in range(n):\n    print(i, end=' \\n')\n",
             "n = int(input())\nprint('\\n'.join(str(i) for i in range(n)))\n"]
    task = {"task_id": "cnt", "prompt": "Read n; print 0..n-1, one per line.", "kind": "stdio"}
    tests = [{"task_id": "cnt", "input": f"{n}\n", "output": "".join(f"{i}\n" for i in range(n))} for n in (3, 20000)]
    out = _select(tmp_path, [task], [{"task_id": "cnt", "code": c} for c in [wrong, *right]], tests)
    assert out["index"] in (1, 2) and out["code_scores"][0] < out["code_scores"][1] == out["code_scores"][2], out


# ------------------------------------------------------------- tenth pass: what the run writes

def test_a_lone_surrogate_loses_no_results(tmp_path):
    # red-team pass 10: a program raising ValueError('\ud800') made `coevo matrix` run every cell
    # and then die writing --out (no UTF-8 form): no matrix for any task; a stdio test input with a
    # lone surrogate turned the task's cells into sandbox_error carrying a worker traceback
    from coevo.cli import main

    tasks = [{"task_id": "f1", "prompt": "f", "entry_point": "f", "tests": [{"test": "assert f(1) == 1"}]},
             {"task_id": "f2", "prompt": "g", "entry_point": "g", "tests": [{"test": "assert g(1) == 1"}]},
             {"task_id": "s1", "prompt": "echo", "kind": "stdio",
              "tests": [{"input": "\ud800\n", "output": "1\n"}, {"input": "2\n", "output": "2\n"}]}]
    codes = [{"task_id": "f1", "code": "def f(x):\n    raise ValueError('\\ud800')\n"},
             {"task_id": "f2", "code": "def g(x):\n    return 1\n"},
             {"task_id": "s1", "code": "print(input())\n"}]
    for name, rows in (("tasks", tasks), ("codes", codes)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "-q", "--workers", "1", "--tasks", str(tmp_path / "tasks.jsonl"),
                 "--codes", str(tmp_path / "codes.jsonl"), "--out", str(out)]) == 0
    rows = {r["task_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["f1"]["status"] == [["error"]] and "\ud800" in rows["f1"]["errors"][0][0]
    assert rows["f2"]["status"] == [["pass"]] and rows["s1"]["status"] == [["fail", "pass"]], rows
