"""Red-team pass 15: attacks on the newest sandbox code, one bounded test each (each fails on the
tree before its fix)."""

from __future__ import annotations

import os
import time

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

TASK = Task("t", "hostile", entry_point="sq")


@pytest.fixture(scope="module")
def ex():
    cfg = ExecConfig(timeout=1.0, memory_mb=256, max_procs=8, max_output_bytes=64 << 10, workers=1)
    with Executor(cfg) as e:
        yield e


# the harness's channel, found through the frames (a process that runs a program or a generic test
# alone may do anything), sent LOADED again and again for 5 s: each one restarted the worker's timer
# for the cell, so a sleeping process (no CPU: the rlimit never fires) held the run for ever
_RESET_LOADED = r'''
import sys, time
_f = sys._getframe()
while _f is not None and "chan" not in _f.f_locals:
    _f = _f.f_back
_c = _f.f_locals["chan"]
_end = time.monotonic() + 5
while time.monotonic() < _end:
    _c.send(4)  # Frame.LOADED
    time.sleep(0.2)
'''


def test_a_program_resending_loaded_does_not_restart_its_cells_timer(ex):
    code = "import sys\n" + _RESET_LOADED + "def sq(x):\n    return x * x\n"
    t0 = time.monotonic()
    r = ex.run_matrix(TASK, [code], [Test.assertion("assert sq(3) == 9")]).cell(0, 0)
    assert time.monotonic() - t0 < 4.0
    assert r.status == "timeout", r


def test_a_generic_test_resending_loaded_does_not_restart_its_cells_timer(ex):
    test = _RESET_LOADED + "try:\n    assert sq(3) == 9\nexcept ZeroDivisionError:\n    pass\n"
    t0 = time.monotonic()
    r = ex.run_matrix(TASK, ["def sq(x):\n    return x * x\n"], [Test.assertion(test)]).cell(0, 0)
    assert time.monotonic() - t0 < 4.0
    assert r.status == "timeout", r


# A test file written for a harness imports the program as the module `solution`: its other names are
# the builtins (pytest: `abs` is the builtin whatever solution.py defines). coevo resolved every free
# name of a test from the program, so a wrong program defining `abs` and `all` passed such tests.
_AREA_RIGHT = "import math\ndef area(r):\n    return math.pi * r * r\n"
_AREA_WRONG = "def area(r):\n    return 3 * r * r\n"
_AREA_SHADOW = _AREA_WRONG + "def abs(x):\n    return 0\ndef all(it):\n    return True\n"
_HARNESS_TESTS = [
    "from solution import area\n\ndef test_area():\n    assert abs(area(2) - 12.566) < 1e-3\n",
    "import unittest\nfrom solution import area\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
    "        self.assertTrue(all(abs(area(r) - 3.14159 * r * r) < 0.01 for r in (1, 2)))\n\n"
    "if __name__ == '__main__':\n    unittest.main()\n",
    "import solution\nassert abs(solution.area(2) - 12.566) < 1e-3\n",
    '"""Doc."""\nfrom __future__ import annotations\nimport solution as s\nassert abs(s.area(2) - 12.566) < 1e-3\n',
]


def test_a_test_importing_the_program_as_a_module_reads_the_builtins_not_the_programs_names(ex):
    m = ex.run_matrix(TASK.__class__("t", "area", entry_point="area"), [_AREA_RIGHT, _AREA_WRONG, _AREA_SHADOW],
                      [Test.assertion(t) for t in _HARNESS_TESTS])
    statuses = [[m.cell(i, j).status for j in range(len(_HARNESS_TESTS))] for i in range(3)]
    assert statuses[0] == ["pass"] * len(_HARNESS_TESTS), statuses
    assert statuses[1] == ["fail"] * len(_HARNESS_TESTS), statuses
    assert statuses[2] == ["fail"] * len(_HARNESS_TESTS), statuses


def test_a_star_import_of_the_program_still_sees_its_names_but_not_as_builtins(ex):
    # `from solution import *` imports the program's public names (its `area`), but a test's
    # builtins stay the builtins whatever the program names `abs` (tests/test_builtin_shadowing.py:
    # else a wrong program defining `abs` passed a test that star-imports it)
    task = TASK.__class__("t", "area", entry_point="area")
    test = "from solution import *\nassert abs(area(2) - 12.566) < 1e-3\n"
    m = ex.run_matrix(task, [_AREA_RIGHT, _AREA_SHADOW], [Test.assertion(test)])
    assert [m.cell(0, 0).status, m.cell(1, 0).status] == ["pass", "fail"], m.status


def test_one_value_makes_few_namedtuple_classes_in_the_parent():
    """A cell's value of 600 namedtuples, each of a class with a fresh name (20 KB encoded, kept
    whole in the cell's result), made 600 classes in the parent that the result kept alive for the
    whole run whatever the class cache's bound: 3.5 MiB of parent memory per cell, 553 MiB after
    150 cells of one program (/work/redteam15/c1_nt_classes_held). A value may bring few new
    classes; many values of one class, or of classes already made, cost nothing more."""
    import json

    from matrix import plain
    from matrix.sandbox import encoding

    many = json.dumps([{"NT": [f"Fresh{i}x", ["a"], [i]]} for i in range(200)])
    with pytest.raises(ValueError):
        plain.decode(many, budget=5.0)
    same = plain.decode(json.dumps([{"NT": ["Same", ["a", "b"], [i, i]]} for i in range(2000)]), budget=5.0)
    assert len(same) == 2000 and same[5].b == 5 and len({type(v) for v in same}) == 1
    few = plain.decode(json.dumps([{"NT": [f"Few{i}", ["a"], [i]]} for i in range(20)]), budget=5.0)
    assert [type(v).__name__ for v in few] == [f"Few{i}" for i in range(20)]
    again = plain.decode(json.dumps([{"NT": [f"Few{i % 20}", ["a"], [i]]} for i in range(2000)]), budget=5.0)
    assert len(again) == 2000 and len(encoding._NT_CLASSES) < 4096


# The parent's parsers of model answers (codes fields read as chat answers, Coder/Tester/Proposer
# samples), each within their 40,000-character cap, took time quadratic in a run of one character.

def _secs(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def test_a_run_of_backticks_costs_the_code_parser_linear_time():
    from roles.parsing import fenced_blocks, parse_code

    assert _secs(parse_code, "```" + "`" * 12000, "f") < 1.0  # 3.3 s before (40,000: 42 s)
    assert _secs(fenced_blocks, "x ``" + "`" * 12000 + "\n") < 1.0
    blocks = fenced_blocks("a ````python\nx = 1\n````\nb\n```\ny\n```\n")
    assert [(b.lang, b.body) for b in blocks] == [("python", "x = 1"), ("", "y")]


def test_a_line_of_blanks_costs_the_task_parser_linear_time():
    from roles.parsing import parse_task

    assert _secs(parse_task, "#" + " " * 12000 + "x") < 1.0  # 9 s before (20,000: 26 s)
    assert _secs(parse_task, " " * 12000 + "x") < 1.0
    assert _secs(parse_task, "** task" + " " * 12000 + "x") < 1.0
    got = parse_task("### Task\nSquare it.\n**Function**: sq\n### Solution\n```python\ndef sq(x):\n    return x * x\n"
                     "```\n# Inputs\n```\nsq(1)\nsq(2)\n```\n")
    assert got.ok and got.task is not None and got.task.entry_point == "sq" and got.task.prompt == "Square it."
    assert got.task.meta["inputs"] == ["sq(1)", "sq(2)"]


def test_the_tests_read_from_one_answer_carry_bounded_text():
    """Every assert using one big helper carried the helper: 1,000 asserts after a 1,300-line helper
    (35 KB) made 18 MB of tests and 74 s of the parent's time."""
    from roles.parsing import parse_tests
    from roles.runner_tests import MAX_TEST_TEXT

    big = "def h(x):\n" + "    x = x + 1\n" * 1300 + "    return x\n"
    ans = "```python\n" + big + "".join(f"assert f(h({i}))\n" for i in range(300)) + "```"
    got = parse_tests(ans, Task("t", "p", entry_point="f"))  # the bound is on the text, not on a clock
    assert got.ok and 0 < len(got.tests) < 300
    assert sum(len(t.test) for t in got.tests) <= MAX_TEST_TEXT
    asserts = "".join(f"assert f(h({i})) == {i}\n" for i in range(50))
    small = parse_tests("```python\ndef h(x):\n    return x\n" + asserts + "```", Task("t", "p", entry_point="f"))
    assert len(small.tests) == 50


@pytest.mark.skipif(os.geteuid() != 0, reason="cell uids of their own need a root executor")
def test_two_executors_of_one_process_never_share_a_cell_uid():
    """coevo gen-tests keeps a second executor beside its usual one (long pytest runs); each worker
    index got the pair the process had locked for it first, so both executors' workers 0 ran their
    programs under one uid (a shared process count; in process mode, the right to signal each
    other's programs). A pair a closed executor gave back serves the next one."""
    from matrix import workers as pool_mod

    a = Executor(ExecConfig(timeout=1.0, workers=2, memory_mb=256))
    b = Executor(ExecConfig(timeout=1.0, workers=2, memory_mb=256))
    try:
        ua = {w.cfg["uid"] for w in a._pool.workers} | {w.cfg["test_uid"] for w in a._pool.workers}
        ub = {w.cfg["uid"] for w in b._pool.workers} | {w.cfg["test_uid"] for w in b._pool.workers}
        assert len(ua) == 4 and len(ub) == 4 and ua.isdisjoint(ub), (ua, ub)
    finally:
        a.close()
    c = Executor(ExecConfig(timeout=1.0, workers=2, memory_mb=256))
    try:
        uc = {w.cfg["uid"] for w in c._pool.workers} | {w.cfg["test_uid"] for w in c._pool.workers}
        assert uc == ua and uc.isdisjoint(ub)
    finally:
        b.close()
        c.close()
    assert all(os.path.exists(os.path.join(pool_mod.UID_LOCKS, str(u))) for u in ua if u % 2 == 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="cell uids of their own need a root executor")
def test_a_finished_run_leaves_no_uid_lock_file():
    """Every run left its lock files in /run/coevo-uids (1,467 after a day of runs here)."""
    import subprocess
    import sys

    from matrix import workers as pool_mod

    code = ("from matrix.engine import ExecConfig, Executor\n"
            "e = Executor(ExecConfig(timeout=1.0, workers=2, memory_mb=256))\n"
            "print(sorted(w.cfg['uid'] for w in e._pool.workers))\ne.close()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    uids = [int(x) for x in out.stdout.strip().strip("[]").split(",")]
    assert len(uids) == 2, out
    assert [u for u in uids if os.path.exists(os.path.join(pool_mod.UID_LOCKS, str(u)))] == []


def test_a_dict_type_of_colliding_keys_is_built_once_under_the_budget():
    """An OrderedDict (Counter, defaultdict) was built as a dict under the decode budget and then
    built again, unchecked: 6,000 int keys of one hash took 1.4 s of a 0.5 s budget for an
    OrderedDict (each key's insert walks the others)."""
    import json

    from matrix import plain

    m = (1 << 61) - 1
    pairs = [[k * m + 1, 0] for k in range(1, 6001)]
    for body in ({"O": pairs}, {"C": pairs}, {"DD": [None, pairs]}):
        text = json.dumps(body)
        t0 = time.process_time()  # CPU time: what the budget bounds, not the machine's load
        try:
            v = plain.decode(text, budget=0.5)
            assert len(v) == 6000
        except ValueError:
            pass
        assert time.process_time() - t0 < 0.9, body.keys()
    od = plain.decode(json.dumps({"O": [["b", 1], ["a", 2]]}))
    assert type(od).__name__ == "OrderedDict" and list(od) == ["b", "a"]
    c = plain.decode(json.dumps({"C": [["a", 2]]}))
    assert type(c).__name__ == "Counter" and c["z"] == 0 and c["a"] == 2
    dd = plain.decode(json.dumps({"DD": ["list", [["a", [1]]]]}))
    assert dd["new"] == [] and dd["a"] == [1]


def test_an_unfenced_answer_costs_bounded_parsing(monkeypatch):
    """Code without fences is read from each of up to 10 code-looking lines, dropping up to 40
    trailing lines of prose: 400 parses of the whole answer when its end never parses (34 KB of
    assignments then 45 stray lines: 7 s of the parent's time per answer). Counted, not timed (a
    bound in seconds failed on a loaded machine): at most 40 parses of at most the answer each."""
    import ast

    from roles.parsing import parse_code

    parsed = []
    real_parse = ast.parse

    def counting(src, *args, **kwargs):
        parsed.append(len(src))
        return real_parse(src, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    junk = "".join("? \n" for _ in range(45))
    answer = "Here is my answer\n" + "".join(f"x{i} = {i}\n" for i in range(2800)) + junk
    parse_code(answer, "f")
    assert len(parsed) <= 40 and sum(parsed) <= 40 * len(answer), (len(parsed), sum(parsed))
    got = parse_code("Here it is:\ndef f(x):\n    return x + 1\nThis adds one.\n", "f")
    assert got.ok and got.code == "def f(x):\n    return x + 1"
    honest = "Sure.\n" + "".join(f"y{i} = {i}\n" for i in range(300)) + "def f(x):\n    return x\n" + \
        "".join(f"Note {i}: more words.\n" for i in range(30))
    got = parse_code(honest, "f")
    assert got.ok and got.code.endswith("def f(x):\n    return x")


def test_a_units_budget_allows_each_cell_its_load_allowance():
    """G1: a worker is declared hung when a unit runs past its budget; each cell of a program that
    runs in a process of its own (isolated or generic) may spend LOAD_ALLOWANCE loading before its
    test's time starts, which the budget did not count: with a small --timeout, 27 such cells of a
    slow-loading program in one unit made its worker 'hung' and the cells sandbox_error."""
    from matrix.dispatch import Dispatcher, _Cells
    from matrix.sandbox.records import LOAD_ALLOWANCE

    d = Dispatcher(None, ExecConfig(timeout=0.1), None)
    for n in (1, 30, 256):
        assert d.budget(_Cells([(0, 0, j) for j in range(n)])) >= n * (0.1 + LOAD_ALLOWANCE) + 5


# Red-team pass 16: containers the F1 write-back did not follow. A numpy array nested in a call's
# argument (`f([arr])`) and a list inside a namedtuple argument (`f(P([1], 2))`) went as copies
# whose changes were dropped, so a wrong program changing them passed `assert arr[0] == 0` and
# `assert p.x == [1]` (plain Python fails both), and a right one changing them failed.
_NESTED_CHANGER = '''
def f(a):
    if isinstance(a, list):
        a[0][0] = 99
    else:
        a.x.append(99)
    return 0
'''
_GENERIC = "try:\n{}\nexcept ZeroDivisionError:\n    pass\n"


def _statuses(ex, entry, code, bodies):
    """The statuses of one program against generic tests made of ``bodies``."""
    m = ex.run_matrix(TASK.__class__("t", entry, entry_point="f"), [code],
                      [Test.assertion(_GENERIC.format(b)) for b in bodies])
    return [m.cell(0, j).status for j in range(len(bodies))], [m.cell(0, j) for j in range(len(bodies))]


def test_a_numpy_array_nested_in_an_argument_is_changed_in_the_test(ex):
    pytest.importorskip("numpy")
    arr = "    import numpy as np\n    arr = np.zeros(3)\n"
    got, cells = _statuses(ex, "nested", _NESTED_CHANGER,
                           [arr + "    f([arr])\n    assert arr[0] == 0", arr + "    f([arr])\n    assert arr[0] == 99",
                            arr + "    box = [arr, arr]\n    f(box)\n    assert box[1] is arr and arr[0] == 99"])
    assert got == ["fail", "pass", "pass"], cells


def test_a_list_inside_a_namedtuple_argument_is_changed_in_the_test(ex):
    nt = "    from collections import namedtuple\n    P = namedtuple('P', 'x y')\n    p = P([1], 2)\n"
    got, cells = _statuses(ex, "nested", _NESTED_CHANGER,
                           [nt + "    f(p)\n    assert p.x == [1]", nt + "    f(p)\n    assert p.x == [1, 99]",
                            nt + "    q = P(p.x, p.x)\n    f(q)\n    assert q.y == [1, 99] and p.x is q.y"])
    assert got == ["fail", "pass", "pass"], cells


# A list the program reads from an object of the test's (`box.items`) reached it as a copy: a
# wrong program appending to it passed `assert b.items == [1]` (plain Python fails), a right one
# failed. Such a container is now one of the pending call's containers: changed in place in the
# test, and the same object as an argument it is (`box.items is arg`).
_BOX_CHANGER = '''
def f(box, other=None):
    box.items.append(99)
    return box.items is other
'''


def test_a_list_read_from_an_object_of_the_tests_is_changed_in_the_test(ex):
    box = "    class Box:\n        def __init__(self):\n            self.items = [1]\n    b = Box()\n"
    got, cells = _statuses(ex, "box", _BOX_CHANGER,
                           [box + "    f(b)\n    assert b.items == [1]",
                            box + "    f(b)\n    assert b.items == [1, 99]",
                            box + "    assert f(b, b.items) is True and b.items == [1, 99]"])
    assert got == ["fail", "pass", "pass"], cells


def test_an_array_of_flexible_string_size_is_bounded_by_its_bytes():
    """A program's array data naming dtype '<U0' (item size 0) passed the 64 MiB bound whatever
    its items: numpy sizes such an array by its longest string, so one long string among many
    empty ones (a message of a few hundred KB) made an array of gigabytes in the test process."""
    pytest.importorskip("numpy")
    from matrix.sandbox.remote.arrays import _MAX_ARRAY_BYTES, _array_from

    n, width = 1200, 20000  # as '<U20000': 96 MB
    got = _array_from(["ndarray", "<U0", [n], ["x" * width] + [""] * (n - 1)])
    assert got is None or got.nbytes <= _MAX_ARRAY_BYTES
    ok = _array_from(["ndarray", "<U3", [2], ["abc", ""]])
    assert ok is not None and ok.tolist() == ["abc", ""]


def test_the_arrays_of_one_message_are_bounded_together():
    """Each array a reply carries was bounded (64 MiB), their number was not: 40 arrays of one
    character as '<U4194304' (16 MiB each, a few KB of JSON) asked the test process for 640 MiB,
    each padded in full."""
    pytest.importorskip("numpy")
    import json
    import socket
    import struct

    from matrix.sandbox.remote.arrays import _MAX_ARRAY_BYTES
    from matrix.sandbox.remote.peer import _Peer

    a, b = socket.socketpair()
    try:
        peer = _Peer(a, "T", 1 << 20, 1.0)
        refs = [{"R": ["C", i + 1, "ndarray", [], ["ndarray", "<U4194304", [1], ["a"]]]} for i in range(40)]
        data = json.dumps(["r", refs, None]).encode()
        b.sendall(struct.pack("<I", len(data)) + data)
        msg = peer.recv()
        arrays = [x for x in msg[1] if type(x).__name__ == "ndarray"]
        assert sum(x.nbytes for x in arrays) <= _MAX_ARRAY_BYTES
        data = json.dumps(["r", refs[:1], None]).encode()  # a later message has its own bound
        b.sendall(struct.pack("<I", len(data)) + data)
        assert type(peer.recv()[1][0]).__name__ == "ndarray"
    finally:
        a.close()
        b.close()


# A reference to a program object kept its own state in slots named _peer, _rid, _tname, _callable,
# _plain, _base and a method _q: the test read those, not the program's attributes of those names
# (a right program's `self._q = []` failed `assert len(s._q) == 2`).
_PRIVATE_NAMES = '''
class Box:
    def __init__(self):
        self._q = [1, 2]
        self._base = 10
        self._rid = "r"
        self._peer = None
        self._tname = "t"
'''


def test_a_program_objects_private_attributes_are_its_own_in_a_generic_test(ex):
    test = _GENERIC.format("    b = Box()\n    assert b._q == [1, 2] and b._base == 10 and b._rid == 'r'\n"
                           "    assert b._peer is None and b._tname == 't'")
    m = ex.run_matrix(TASK.__class__("t", "box", entry_point="Box"), [_PRIVATE_NAMES], [Test.assertion(test)])
    assert m.cell(0, 0).status == "pass", m.cell(0, 0)


# What a function of the test's returns to the program (`get()`), and what the program draws from an
# iterator of the test's, went as copies: a wrong program appending to the list a getter gave it
# passed `assert items == [1]`.
_GETTER_CHANGER = '''
def f(get, rows):
    get().append(99)
    for row in rows:
        row.append(0)
    return 0
'''


def test_a_list_a_function_of_the_tests_returns_is_changed_in_the_test(ex):
    setup = "    items = [1]\n    grid = [[1], [2]]\n    class Rows:\n        def __iter__(self):\n" \
            "            return iter(grid)\n    f(lambda: items, Rows())\n"
    got, cells = _statuses(ex, "get", _GETTER_CHANGER,
                           [setup + "    assert items == [1]",
                            setup + "    assert items == [1, 99] and grid == [[1, 0], [2, 0]]"])
    assert got == ["fail", "pass"], cells


def test_an_arrays_items_are_scalars_so_its_bound_holds():
    """Review of pass 16: the bound was worked out from the shape, but numpy builds the array from
    the items first: a shape of [1] over one list of 200 long strings as '<U262144' was charged
    1 MiB and made a (1, 200) array of 200 MiB (the reshape failed after). Items must be scalars."""
    pytest.importorskip("numpy")
    import tracemalloc

    from matrix.sandbox.remote.arrays import _array_from

    tracemalloc.start()
    got = _array_from(["ndarray", "<U65536", [1], [["a"] * 200]])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert got is None and peak < 16 << 20
    assert _array_from(["ndarray", "<i8", [2, 2], [1, 2, 3, 4]]).tolist() == [[1, 2], [3, 4]]


def test_a_program_cannot_claim_a_bool_subclass():
    """Review of pass 16: no class can subclass bool, so a reference flagged 'base:bool' is a lie
    that made isinstance(x, bool) true for a stateful proxy."""
    from matrix.sandbox.remote.stand_ins import _PLAIN_BASES

    assert "bool" not in _PLAIN_BASES
