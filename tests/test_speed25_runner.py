"""The runner's per-test bookkeeping (speed25, issue 23: R2 of /work/s20/REQUESTS.md).

Before each test's load and before its holes, the runner sets the recursion limit so that a
program has the room it has in plain Python (:func:`matrix.sandbox.harness.room_as_in_python`,
red-team pass 17). That walked the whole stack to find the caller's depth at every call: twice a
test, though all of a row's calls come from the same frame of ``run_program`` (the same place,
the same depth). The limits found are now kept for the row. These tests count the walks and check
that every test of the row still gets Python's room (f(996) passes, f(997) raises, in any order)."""

from __future__ import annotations

import json
import subprocess
import sys

RUNNER_ROW = r"""
import importlib, json, sys
OUT = sys.argv[1]  # the harness resets sys.argv for each test
real_getframe = sys._getframe
walks = []
def counting_getframe(depth=0):
    # (the harness binds sys._getframe when it is imported: count the calls the room makes)
    if real_getframe(1).f_code.co_name == "room_as_in_python":
        walks.append(1)
    return real_getframe(depth + 1)
sys._getframe = counting_getframe
import signal
from matrix.sandbox import harness, purity
from matrix.sandbox.records import Frame
from matrix.plans import plan_test
from matrix.tasks import Test
sys._getframe = real_getframe
for m in purity.PRELOAD:
    importlib.import_module(m)
harness.prepare()
harness._G["frozen"] = True
signal.signal(signal.SIGALRM, harness._alarm)
frames = []
class Chan(harness._Channel):
    def send(self, kind, body=b"", secs=0.0):
        frames.append((Frame(kind).name, bytes(body).decode("utf-8", "replace")))
    def flush(self):
        pass
depths = [996, 997, 996, 997, 5, 996]
tests = [Test.assertion(f"assert f({n}) == {n}") for n in depths]
code = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
out = {}
for kind in ("function", "function"):  # two rows: the second finds the limits the first computed
    walks.clear(); frames.clear()
    cmd = {"code": code, "setup": "", "kind": kind, "max_out": 1 << 20, "timeout": 5.0,
           "probes": [plan_test(t).probe() for t in tests], "optional": [False] * len(tests)}
    compiled = harness._plain_row(cmd)
    assert compiled is not None
    harness._ticking(5.0)
    harness.run_program(cmd, Chan(b"t" * 8, 1 << 20, buffered=True), compiled)
    harness._ticking(None)
    out.setdefault("walks", []).append(len(walks))
    out.setdefault("frames", []).append(frames[:])
with open(OUT, "w") as fh:
    fh.write(json.dumps(out))
"""


def test_a_row_walks_the_stack_for_the_room_once_and_each_test_keeps_pythons_room(tmp_path):
    out = tmp_path / "row.json"
    proc = subprocess.run([sys.executable, "-c", RUNNER_ROW, str(out)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    got = json.loads(out.read_text())
    frames = got["frames"][0]  # (a fresh process's first row: see the report of speed25 on later rows)
    kinds = [k for k, _ in frames]
    assert kinds == ["PLAN", "LOADED", "VALUES", "RAISED", "VALUES", "RAISED", "VALUES", "VALUES"], frames
    assert all("RecursionError" in body for k, body in frames if k == "RAISED"), frames
    # one place (run_one's calls: a function program's load and its holes share one offset):
    # one walk for the row, not two a test (11 for these 6 tests before)
    assert got["walks"] == [1, 1], got["walks"]


# The parent plans every test (matrix.plans); each hole's builtins were found by a walk that made a
# generator per syntax node (ast.iter_child_nodes): ~0.13 s of the MBPP pool's 5,841 plans. The
# walk reads the fields itself now; what it finds is the same.
HOLES = [
    "f(1, [1, 2, 3])", "sorted(f(x))", "f(lambda a: len(a))", "f([len(y) for y in range(3)])",
    "collections.Counter(f(x)).most_common(1)", "f(math.pi) + abs(-1)", "f({k: max(v) for k, v in d.items()})",
    "f(*args, key=min, **kw)", "f(x)[1:2]", "f(x) if any(f(y) for y in z) else sum(w)", "f(a)(b).c.d(e=len)",
    "f(f'{len(s)!r:>{width}}')", "(lambda: (yield from map(str, f(1))))", "f(x := len(y))", "[*map(int, f('1 2'))]",
]


def _reference_builtins_read(node):
    import ast

    from matrix import plans

    top, nested = set(), set()
    stack = [(node, False)]
    while stack:
        n, inner = stack.pop()
        if type(n) is ast.Name:
            if n.id in plans._BUILTINS:
                (nested if inner else top).add(n.id)
            continue
        if type(n) is ast.Attribute and type(n.value) is ast.Name and n.value.id in plans._STDLIB \
                and n.value.id not in plans._BUILTINS:
            nested.add(n.value.id)
        inner = inner or isinstance(n, plans._SCOPES)
        stack.extend((c, inner) for c in ast.iter_child_nodes(n))
    return top, nested


def test_the_builtins_a_hole_reads_are_found_without_a_generator_per_node(monkeypatch):
    import ast

    from matrix import plans

    expected = [_reference_builtins_read(ast.parse(h, mode="eval").body) for h in HOLES]
    calls = []
    real = ast.iter_child_nodes

    def counting(node):
        calls.append(1)
        return real(node)

    monkeypatch.setattr(ast, "iter_child_nodes", counting)
    got = [plans._builtins_read(ast.parse(h, mode="eval").body) for h in HOLES]
    assert got == expected
    assert any(top for top, _ in got) and any(nested for _, nested in got)  # (the corpus finds both kinds)
    assert calls == []
