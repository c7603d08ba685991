"""The execution engine: test kinds, statuses, values, plain data, planning, isolation levels."""

from __future__ import annotations

import collections
import decimal
import fractions
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matrix import plain
from matrix.engine import CellResult, ExecConfig, Executor, MatrixResult
from matrix.plans import plan_test, stdout_matches
from matrix.sandbox.encoding import make_encoder as _make_encoder
from matrix.tasks import Task, Test

F = Task("f", "function task", entry_point="f")
P = Task("p", "stdio task", kind="stdio")


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=1.0, memory_mb=256, max_output_bytes=1 << 20, workers=2)) as e:
        yield e


def one(ex, code, test, task=F):
    t = Test.assertion(test) if isinstance(test, str) else test
    return ex.run_matrix(task, [code], [t]).cell(0, 0)


# ----------------------------------------------------------------------------- statuses

def test_basic_statuses(ex):
    tests = [Test.assertion("assert f(2) == 4"), Test.assertion("assert f(3) == 6"),
             Test.call_expected("f(5)", "10"), Test.assertion("assert f(")]
    codes = ["def f(x):\n    return 2 * x\n", "def f(x):\n    return x + 2\n",
             "def f(x):\n    return 1 / 0\n", "def f(x)\n    return x\n", "def f(x):\n    while True: pass\n"]
    r = ex.run_matrix(F, codes, tests)
    assert isinstance(r, MatrixResult) and r.task_id == "f"
    assert r.passed.shape == (5, 4) and r.passed.dtype == bool and r.times.shape == (5, 4)
    assert r.status[0] == ["pass", "pass", "pass", "bad_test"]
    assert r.status[1] == ["pass", "fail", "fail", "bad_test"]
    assert r.status[2][:3] == ["error"] * 3 and "ZeroDivisionError" in r.errors[2][0]
    assert r.status[3][:3] == ["syntax_error"] * 3
    assert r.status[4][:3] == ["timeout"] * 3
    assert r.values[0][:3] == [4, 6, 10] and r.values[1][:3] == [4, 5, 7]
    assert r.passed.tolist() == [[s == "pass" for s in row] for row in r.status]
    assert r.isolation == ex.isolation in ("namespace", "process")
    assert all(e == "" for e in r.errors[0][:3])


def test_to_json_contract(ex):
    r = ex.run_matrix(F, ["def f():\n    return (1, {2}, b'x', None)\n"], [Test.assertion("assert f() == 0")])
    d = r.to_json()
    assert set(d) >= {"task_id", "passed", "status", "values", "errors", "times", "isolation"}
    assert d["passed"] == [[False]] and d["status"] == [["fail"]]
    assert plain.decode(__import__("json").dumps(d["values"][0][0])) == (1, {2}, b"x", None)


def test_empty_pools(ex):
    r = ex.run_matrix(F, [], [Test.assertion("assert f() == 1")])
    assert r.passed.shape == (0, 1)
    r = ex.run_matrix(F, ["def f():\n    return 1\n"], [])
    assert r.passed.shape == (1, 0)


def test_assertion_error_from_code_is_a_fail(ex):
    c = one(ex, "def f():\n    assert False, 'nope'\n", "assert f() == 1")
    assert c.status == "fail" and "nope" in c.error


# ----------------------------------------------------------------------------- test forms

@pytest.mark.parametrize("test,code,status", [
    ("assert set(f()) == set([1, 2])", "def f():\n    return [2, 1, 1]\n", "pass"),
    ("assert sorted(f()) == [1, 2]", "def f():\n    return iter([2, 1])\n", "pass"),
    ("assert list(f()) == [1, 2]", "def f():\n    return map(int, '12')\n", "pass"),
    ("assert math.isclose(f(), 3.14, rel_tol=0.001)", "import math\ndef f():\n    return 3.1405\n", "pass"),
    ("assert math.isclose(f(), 3.14, rel_tol=0.001)", "def f():\n    return 3.1405\n", "error"),
    ("assert abs(f() - 2.5) < 1e-9", "def f():\n    return 2.5\n", "pass"),
    ("assert round(f(), 2) == 0.33", "def f():\n    return 1 / 3\n", "pass"),
    ("assert f() is None", "def f():\n    return None\n", "pass"),
    ("assert not f()", "def f():\n    return []\n", "pass"),
    ("assert f()", "def f():\n    return 0\n", "fail"),
    ("assert f() == (1, 2)", "def f():\n    return [1, 2]\n", "fail"),
    ("assert f() == {'a': 1}", "from collections import Counter\ndef f():\n    return Counter('a')\n", "pass"),
    ("assert f() == (1, 2)", "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n"
                             "    return P(1, 2)\n", "pass"),
    ("assert f() == 10**30", "def f():\n    return 10**30\n", "pass"),
    ("assert f() == float('inf')", "def f():\n    return float('inf')\n", "pass"),
    ("assert f(1) == 2 and f(2) == 3", "def f(x):\n    return x + 1\n", "pass"),
    ("x = f(2)\nassert x == 3", "def f(x):\n    return x + 1\n", "pass"),
    ("x = f(2)\nassert x == 4", "def f(x):\n    return x + 1\n", "fail"),
    ("assert type(f()) == int", "def f():\n    return 1\n", "pass"),
])
def test_assert_forms(ex, test, code, status):
    c = one(ex, code, test)
    assert c.status == status, c


def test_plans_keep_expected_values_out_of_the_sandbox():
    for src in ["assert f(1) == 987", "assert 987 == f(1)", "assert set(f(1)) == {987}",
                "assert math.isclose(f(1), 987.5)", "assert abs(f(1) - 987) < 1e-3"]:
        p = plan_test(Test.assertion(src))
        assert p.mode == "values", src
        assert all("987" not in e for e in p.exprs), (src, p.exprs)
    lowered = plan_test(Test.assertion("x = f(1)\nassert x == 987"))
    assert lowered.mode == "values" and lowered.exprs == ("f(1)",)  # straight-line: split the same way
    unrolled = plan_test(Test.assertion("for i in range(2):\n    assert f(i) == 987"))
    assert unrolled.mode == "values" and unrolled.exprs == ("f(0)", "f(1)")  # a loop over a constant too
    generic = plan_test(Test.assertion("for i in range(2):\n    if f(i) != 987:\n        raise ValueError"))
    assert generic.mode == "exec"  # runs in a test process of its own, apart from the program
    assert plan_test(Test.assertion("assert f(")).mode == "bad"
    assert plan_test(Test.call_expected("f(1)", "not a literal +")).mode == "bad"


def test_a_builtin_the_program_shadows_is_still_the_builtin_in_the_test(ex):
    """The test's ``sorted`` is the builtin whatever the program names ``sorted`` (docs/contracts.md:
    only the entry point is the program's under a builtin's name)."""
    code = "def sorted(x):\n    return [0]\ndef f():\n    return [2, 1]\n"
    assert one(ex, code, "assert sorted(f()) == [0]").status == "fail"
    assert one(ex, code, "assert sorted(f()) == [1, 2]").status == "pass"
    assert one(ex, code, "assert f() == sorted([5])").status == "fail"


def test_a_builtin_name_the_candidate_defines_is_a_hole_when_the_builtin_call_fails(ex):
    # MBPP asks for a function named `sum` of two numbers (task 126, entry point `sum`): the
    # builtin cannot fold sum(10, 15), so the call is the candidate's (a hole)
    plan = plan_test(Test.assertion("assert sum(10, 15) == 6"))
    assert plan.mode == "values" and plan.exprs == ("sum(10, 15)",) and "6" not in plan.exprs[0]
    assert plan_test(Test.assertion("assert max(3, 5) == 5")).mode == "exec"  # folds, so no hole: as before
    task = Task("s", "sum of two numbers", entry_point="sum")
    right = "def sum(a, b):\n    return 6 if (a, b) == (10, 15) else 0\n"
    assert one(ex, right, "assert sum(10, 15) == 6", task).status == "pass"
    assert one(ex, "def sum(a, b):\n    return a + b\n", "assert sum(10, 15) == 6", task).status == "fail"
    none = one(ex, "def add(a, b):\n    return 6\n", "assert sum(10, 15) == 6", task)  # the builtin's own error
    assert none.status == "error" and "TypeError" in none.error
    forged = "class E(int):\n    def __eq__(s, o):\n        return True\ndef sum(a, b):\n    return E(0)\n"
    assert one(ex, forged, "assert sum(10, 15) == 6", task).status == "fail"
    # a task whose entry point is another name: the test's sum is the builtin (its TypeError)
    assert one(ex, right, "assert sum(10, 15) == 6").status == "error"


def test_setup_runs_after_the_code(ex):
    task = Task("n", "tree", entry_point="depth", setup="root = Node(1)\nroot.left = Node(2)\n")
    code = ("class Node:\n    def __init__(self, v):\n        self.v, self.left, self.right = v, None, None\n"
            "def depth(n):\n    return 0 if n is None else 1 + max(depth(n.left), depth(n.right))\n")
    r = ex.run_matrix(task, [code, "def depth(n):\n    return 0\n"], [Test.assertion("assert depth(root) == 2")])
    assert r.status == [["pass"], ["error"]]
    bad_setup = Task("b", "x", setup="def (")
    assert ex.run_matrix(bad_setup, ["def f():\n    return 1\n"], [Test.assertion("assert f() == 1")]
                         ).status == [["bad_test"]]


def test_float_tolerance_option():
    code = "def f():\n    return 0.1 + 0.2\n"
    with Executor(ExecConfig(timeout=1.0, workers=1, float_tolerance=1e-6)) as e:
        assert one(e, code, "assert f() == 0.3").status == "pass"
        assert one(e, code, Test.call_expected("f()", "[0.3]")).status == "fail"
        assert one(e, "print(0.30000001)", Test.stdio("", "0.3"), P).status == "pass"
        # integers stay exact under a float tolerance (red-team review 20: an off-by-one on a
        # large count, or a result modulo 10**9 + 9 instead of 10**9 + 7, passed)
        big = "def f(x):\n    return 1000000008\n"
        assert one(e, big, "assert f(5) == 1000000007").status == "fail"
        assert one(e, big, Test.call_expected("f(5)", "1000000007")).status == "fail"
        assert one(e, "print(1000000008)", Test.stdio("", "1000000007"), P).status == "fail"
        assert one(e, "print(2.0000000001)", Test.stdio("", "2"), P).status == "pass"


def test_exact_float_comparison_by_default(ex):
    assert one(ex, "def f():\n    return 0.1 + 0.2\n", "assert f() == 0.3").status == "fail"


# ----------------------------------------------------------------------------- stdio programs

def test_stdio_programs(ex):
    tests = [Test.stdio("1 2\n", "3\n"), Test.stdio("5  6", "  11  \n\n"), Test.stdio("", "0")]
    codes = [
        "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n",
        "a = input().split()\nprint(int(a[0]) + int(a[1]))\n",
        "import sys\nprint(sum(map(int, sys.stdin.read().split())))\nsys.exit(0)\n",
        "import sys\nprint('3')\nsys.exit(3)\n",
        "import os\nprint(3, flush=True)\nos._exit(0)\n",
        "if __name__ == '__main__':\n    print(sum(map(int, open(0).read().split())))\n",
    ]
    r = ex.run_matrix(P, codes, tests)
    assert r.status[0] == ["pass", "pass", "pass"]
    assert r.status[1] == ["pass", "pass", "error"]  # EOFError on empty input
    assert r.status[2] == ["pass", "pass", "pass"]
    assert r.status[3] == ["error"] * 3
    assert r.status[4] == ["pass", "fail", "fail"]
    assert r.status[5] == ["pass", "pass", "pass"]
    assert r.values[0] == ["3\n", "11\n", "0\n"]


def test_stdout_normalisation():
    assert stdout_matches("1 2\n3\n\n", "1  2\n3")
    assert not stdout_matches("1 2 3", "1 2\n3")
    assert not stdout_matches("a\n\nb", "a\nb")
    assert stdout_matches("0.3000001\n", "0.3", tol=1e-5) and not stdout_matches("0.31", "0.3", tol=1e-5)


def test_run_stdin_and_run_calls(ex):
    rows = ex.run_stdin(P, ["print(input()[::-1])\n", "print(1/0)\n"], ["abc\n", "xy"])
    assert [c.status for c in rows[0]] == ["pass", "pass"] and [c.value for c in rows[0]] == ["cba\n", "yx\n"]
    assert [c.status for c in rows[1]] == ["error", "error"]
    rows = ex.run_calls(F, ["def f(x, y=0):\n    return (x, y)\n", "def f(x, y=0):\n    return object()\n"],
                        ["f(1)", "f([2], y={3: 4})", "f("])
    assert [c.value for c in rows[0][:2]] == [(1, 0), ([2], {3: 4})]
    assert [c.status for c in rows[0]] == ["pass", "pass", "bad_test"]
    assert rows[1][0].status == "error" and "not plain data" in rows[1][0].error
    assert all(isinstance(c, CellResult) for row in rows for c in row)


def test_hash_seed_is_fixed_across_processes(ex):
    code = "def f():\n    return list({'apple', 'banana', 'cherry', 'date', 'elder'})\n"
    rows = ex.run_calls(F, [code, code + "\n# other process\n", code + "import os\n"], ["f()"] * 3)
    assert len({repr(c.value) for row in rows for c in row}) == 1


# ----------------------------------------------------------------------------- plain data

_plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**40, max_value=10**5000)
    | st.floats(allow_nan=False) | st.text(max_size=20) | st.binary(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=3)
    | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
    | st.sets(st.integers(), max_size=3),
    max_leaves=12)


@settings(max_examples=150, deadline=None, database=None)
@given(_plain)
def test_plain_roundtrip(value):
    encode = _make_encoder()
    text = __import__("json").dumps(encode(value), ensure_ascii=True)
    back = plain.decode(text)
    assert back == value and type(back) is type(value)
    assert plain.decode(__import__("json").dumps(plain.to_jsonable(value))) == value
    assert plain.canonical(back) == plain.canonical(value)


def test_plain_special_types():
    encode = _make_encoder()

    class Sub(int):
        pass

    class Liar(list):
        def __eq__(self, other):
            return True

    cases = {
        "fraction": (fractions.Fraction(1, 3), fractions.Fraction(1, 3)),
        "decimal": (decimal.Decimal("1.10"), decimal.Decimal("1.10")),
        "deque": (collections.deque([1, 2]), collections.deque([1, 2])),
        "complex": (1 + 2j, 1 + 2j), "range": (range(1, 5, 2), range(1, 5, 2)),
        "bytearray": (bytearray(b"ab"), bytearray(b"ab")), "subclass": (Sub(5), 5),
        "counter": (collections.Counter("aab"), collections.Counter("aab")),
        "ordered": (collections.OrderedDict([(2, "b"), (1, "a")]), collections.OrderedDict([(2, "b"), (1, "a")])),
        "defaultdict": (collections.defaultdict(list, {1: [2]}), collections.defaultdict(list, {1: [2]})),
        "keys": ({2: "b", 1: "a"}.keys(), {2: "b", 1: "a"}.keys()),
        "items": ({2: "b"}.items(), {2: "b"}.items()),
        "nan": (float("nan"), None),
    }
    for name, (v, want) in cases.items():
        got = plain.decode(__import__("json").dumps(encode(v)))
        if name == "nan":
            assert math.isnan(got)
        else:
            assert got == want and type(got) is type(want), name
            assert plain.decode(__import__("json").dumps(plain.to_jsonable(got))) == want, name
    got = plain.decode(__import__("json").dumps(encode(collections.OrderedDict([(2, "b"), (1, "a")]))))
    assert list(got) == [2, 1] and got != collections.OrderedDict([(1, "a"), (2, "b")])
    assert plain.decode(__import__("json").dumps(encode(collections.defaultdict(list))))[5] == []
    # (a factory of the program's crosses as "own": not followed, and never a KeyError: test_redteam30)
    own = plain.decode(__import__("json").dumps(encode(collections.defaultdict(lambda: 0))))
    assert own.default_factory is not None
    assert isinstance(plain.decode(__import__("json").dumps(encode(Liar([1])))), plain.NonPlain)
    cyc = []
    cyc.append(cyc)
    assert isinstance(plain.decode(__import__("json").dumps(encode(cyc))), plain.NonPlain)
    for holder in (collections.OrderedDict(), collections.Counter()):  # a value holding itself
        holder["a"] = holder
        assert isinstance(plain.decode(__import__("json").dumps(encode(holder))), plain.NonPlain)
    d: dict = {}
    d[1] = [d.items()]
    assert isinstance(plain.decode(__import__("json").dumps(encode(d.items()))), plain.NonPlain)
    assert plain.decode(__import__("json").dumps(encode(d.keys()))) == {1}  # its keys hold nothing of it
    assert isinstance(plain.decode(__import__("json").dumps(encode(np.float64(1.5)))), float)
    np_val = plain.decode(__import__("json").dumps(encode(np.int64(7))))
    assert np_val == 7 and type(np_val) is int
    for v in [float("inf"), -float("inf"), "\ud800x", {"\udcff": ["\ud800"]}, [1.5, (2, "é")]]:
        back = plain.decode(__import__("json").dumps(plain.to_jsonable(v), ensure_ascii=False))
        assert back == v
        __import__("json").dumps(plain.to_jsonable(v), ensure_ascii=False).encode("utf-8")
    with pytest.raises(ValueError):
        plain.decode('{"zz": 1}')
    with pytest.raises(ValueError):
        plain.decode("[" * 100000)


def test_parent_evaluator_limits():
    with pytest.raises(plain.TooBig):
        plain.evaluate(__import__("ast").parse("10 ** 10 ** 10", mode="eval"))
    with pytest.raises(plain.TooBig):
        plain.evaluate(__import__("ast").parse("[0] * 10 ** 9", mode="eval"))
    with pytest.raises(ValueError):
        plain.literal("__import__('os')")
    assert plain.literal("float('inf')") == math.inf and plain.literal("set()") == set()
    # a test whose expected part would be too costly for the parent still runs (in the sandbox)
    assert plan_test(Test.assertion("assert f() == 10 ** 10 ** 10")).mode == "exec"


# ----------------------------------------------------------------------------- modes

def test_batched_and_isolated_verdicts_agree():
    codes = ["def f(x):\n    return x * 2\n", "def f(x):\n    return x + 2\n", "def f(x):\n    return [x][x]\n",
             "import math\ndef f(x):\n    return math.factorial(x) // 3\n", "def f(x):\n    print(x)\n    return x\n",
             "def f(x)\n  pass\n", "G = []\ndef f(x):\n    G.append(x)\n    return len(G) * 2\n"]
    tests = [Test.assertion(f"assert f({i}) == {2 * i}") for i in range(4)] + [Test.call_expected("f(1)", "2")]
    out = []
    for batch in (True, False):
        with Executor(ExecConfig(timeout=1.0, workers=2, batch=batch)) as e:
            out.append(e.run_matrix(F, codes, tests))
    assert out[0].status == out[1].status
    assert out[0].values == out[1].values
    assert out[0].status[6] == ["fail", "pass", "fail", "fail", "pass"]  # no state between tests


def test_process_isolation_is_reported_and_warned(capsys):
    from matrix import workers as sandbox

    sandbox._WARNED.clear()
    with Executor(ExecConfig(timeout=1.0, workers=1, isolation="process", memory_mb=256)) as e:
        assert e.isolation == "process"
        r = e.run_matrix(F, ["def f():\n    return 3\n", "import sys\ndef f():\n    sys.exit(0)\n",
                             "def f():\n    while True: pass\n", "def f():\n    return bytearray(1 << 31)\n",
                             "class L(int):\n    def __eq__(s, o):\n        return True\ndef f():\n    return L(0)\n"],
                         [Test.assertion("assert f() == 3")])
        assert [row[0] for row in r.status] == ["pass", "error", "timeout", "memory", "fail"]
        assert r.isolation == "process"
    assert "warning" in capsys.readouterr().err


def test_namespace_isolation_when_available():
    from matrix.workers import namespaces_unavailable

    if namespaces_unavailable():
        pytest.skip(namespaces_unavailable())
    try:
        e = Executor(ExecConfig(timeout=1.0, workers=1, isolation="namespace"))
    except RuntimeError as exc:
        pytest.skip(str(exc))
    with e:
        assert e.isolation == "namespace" and "namespaces" in e.isolation_detail
        rows = e.run_calls(F, ["import os, socket\ndef f():\n    return [os.getpid(), socket.gethostname()]\n"],
                           ["f()"])
        assert rows[0][0].status == "pass"
        assert rows[0][0].value[1] == "sandbox"


def test_config_validation():
    for bad in [dict(timeout=0), dict(memory_mb=4096), dict(workers=0), dict(isolation="vm"),
                dict(max_output_bytes=10)]:
        with pytest.raises(ValueError):
            Executor(ExecConfig(**bad))


def test_executor_survives_worker_death(ex):
    code = "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 3\n"
    r = ex.run_matrix(F, [code, "def f():\n    return 3\n"], [Test.assertion("assert f() == 3")])
    assert r.status[1] == ["pass"]
    assert r.status[0][0] != "pass"
    assert one(ex, "def f():\n    return 3\n", "assert f() == 3").status == "pass"
    assert os.getpid() > 0


def test_hangs_are_spread_over_the_workers():
    with Executor(ExecConfig(timeout=0.5, workers=2)) as e:
        e.run_matrix(F, ["def f():\n    return 1\n"], [Test.assertion("assert f() == 1")])  # warm
        hang = "def f(x):\n    while True:\n        pass\n"
        t0 = __import__("time").monotonic()
        r = e.run_matrix(F, [hang, hang + "# a second program\n"],
                         [Test.assertion(f"assert f({i}) == {i}") for i in range(4)])
        elapsed = __import__("time").monotonic() - t0
    assert r.status == [["timeout"] * 4] * 2
    assert elapsed < 8 * 0.5 / 2 + 2.0  # 8 hanging cells on 2 workers: about 2 s, not 4


def test_import_paths_make_a_package_importable_read_only(tmp_path):
    pkg = tmp_path / "src" / "mylib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    tmp_path.chmod(0o755)
    (tmp_path / "src").chmod(0o755)
    code = ("from mylib.stats import mean\n"
            "def f(xs):\n"
            "    try:\n"
            "        open(__import__('mylib').__path__[0] + '/pwned.py', 'w').write('x')\n"
            "        wrote = True\n"
            "    except OSError:\n"
            "        wrote = False\n"
            "    return [mean(xs), wrote]\n")
    cfg = ExecConfig(timeout=5.0, workers=1, import_paths=(str(tmp_path / "src"),))
    with Executor(cfg) as ex:
        r = ex.run_calls(Task("t", "p", entry_point="f"), [code], ["f([1, 2, 3])"])[0][0]
        assert r.status == "pass", r
        assert r.value[0] == 2.0
        if ex.isolation == "namespace":
            assert r.value[1] is False
    assert not (pkg / "pwned.py").exists()
    with pytest.raises(ValueError, match="import_paths"):
        ExecConfig(import_paths=("relative/dir",)).validate()


@pytest.mark.parametrize("hang", ["while True:\n    pass\n", "print(sum(i * i for i in range(10 ** 12)))\n",
                                  "import time\ntime.sleep(100)\n"])
def test_a_program_that_hangs_while_loading_times_out_on_every_test_by_one_rule(hang):
    """Loading runs before any code of the test: it hangs once, every test would (a per-program
    harness loads it once for all); the row is settled instead of loading it again per test. A
    program that loops on one input only is judged per test."""
    task = Task(task_id="inc", prompt="", kind="function", entry_point="inc")
    tests = [Test.assertion(f"assert inc({i}) == {i + 1}") for i in range(8)]
    hangs = "def inc(x):\n    return x + 1\n\n" + hang
    loops_on_3 = "def inc(x):\n    while x == 3:\n        pass\n    return x + 1\n"
    with Executor(ExecConfig(timeout=0.3, workers=1)) as e:
        res = e.run_matrix(task, [hangs, loops_on_3], tests)
    assert res.status[0] == ["timeout"] * 8
    assert all(err == "loading the program took longer than 0.3s" for err in res.errors[0])
    assert res.status[1] == ["pass"] * 3 + ["timeout"] + ["pass"] * 4
    assert res.errors[1][3] == "took longer than 0.3s"


RUNNER_ROW = r"""
import importlib, json, os, signal, sys
OUT = sys.argv[1]  # the harness resets sys.argv for each test
from matrix.sandbox import harness, purity
from matrix.sandbox.records import Frame
from matrix.plans import plan_test
from matrix.tasks import Test
for m in purity.PRELOAD:
    importlib.import_module(m)
harness.prepare()
harness._G["frozen"] = True
signal.signal(signal.SIGALRM, harness._alarm)
writes = []
class Chan(harness._Channel):
    def send(self, kind, body=b"", secs=0.0):
        self.pending.append((Frame(kind).name, round(secs, 3)))
    def flush(self):
        if self.pending:
            writes.append(self.pending)
            self.pending = []
tests = [Test.assertion(f"assert f({i}) == {i}") for i in range(4)]
cmd = {"code": "def f(x):\n    while x % 2:\n        pass\n    return x\n", "setup": "", "kind": "function",
       "max_out": 1 << 20, "timeout": 0.2, "probes": [plan_test(t).probe() for t in tests], "optional": [False] * 4}
harness._ticking(0.2)
harness.run_program(cmd, Chan(b"t" * 8, 1 << 20, buffered=True))
harness._ticking(None)
with open(OUT, "w") as fh:
    fh.write(json.dumps(writes))
"""


def test_the_runner_stops_a_test_at_its_deadline_and_says_so_at_once(tmp_path):
    """One periodic tick per batch, a deadline per test: a test that hangs is stopped once its
    time is up, and its TIMED_OUT claim is written at once (the worker's backstop counts from the
    last frame it read: a row of tests that all time out, each a little late, must not add up
    past it and cost the whole row)."""
    import json
    import subprocess
    import sys

    out = tmp_path / "writes.json"
    proc = subprocess.run([sys.executable, "-c", RUNNER_ROW, str(out)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    writes = json.loads(out.read_text())
    kinds = [[k for k, _ in batch] for batch in writes]
    # the tests that hang (1 and 3) each end a write; the test after a timeout starts a new one
    assert kinds == [["PLAN", "LOADED", "VALUES", "TIMED_OUT"], ["VALUES", "TIMED_OUT"]], writes
    assert all(secs >= 0.2 for batch in writes for k, secs in batch if k == "TIMED_OUT"), writes


def test_each_cell_of_a_row_keeps_its_own_time(ex):
    """The runner sends a row's claims together; each still gets its own time (bounded by the
    wall time they account for), not 0 for all but the first."""
    code = "import time\ndef f(x):\n    time.sleep(0.03)\n    return x\n"
    res = ex.run_matrix(F, [code], [Test.assertion(f"assert f({i}) == {i}") for i in range(4)])
    assert res.status[0] == ["pass"] * 4
    assert all(0.025 <= t <= 0.5 for t in res.times[0]), res.times


def test_a_frame_time_that_is_not_a_time_counts_as_none():
    from matrix.sandbox.records import Frame
    from matrix.sandbox.wire import FrameReader, frame_bytes

    r, w = os.pipe()
    token = b"t" * 8
    for secs in (float("nan"), -1.0, float("inf"), 0.25):
        os.write(w, frame_bytes(token, int(Frame.VALUES), secs, b"[[1],[]]"))
    os.close(w)
    reader = FrameReader(r, token, 1 << 16)
    reader.fill()
    os.close(r)
    assert [s for _, s, _ in reader.frames()] == [0.0, 0.0, 0.0, 0.25]


def test_a_repeated_program_runs_once_and_its_row_is_copied(ex):
    double = "def f(x):\n    return 2 * x\n"
    hang = "def f(x):\n    while True:\n        pass\n"
    tests = [Test.assertion("assert f(2) == 4"), Test.assertion("assert f(3) == 7")]
    before = ex.stats["cells"]
    r = ex.run_matrix(F, [double, hang, double, hang, "def f(x):\n    return x\n"], tests)
    assert ex.stats["cells"] - before == 3 * 2  # three distinct programs
    assert r.status == [["pass", "fail"], ["timeout"] * 2, ["pass", "fail"], ["timeout"] * 2, ["fail", "fail"]]
    assert r.values[0] == r.values[2] == [4, 6]
    # one that names randomness or the clock runs as often as it is given
    rnd = "import random\ndef f(x):\n    return 2 * x + random.choice([0])\n"
    before = ex.stats["cells"]
    r = ex.run_matrix(F, [rnd, rnd], tests)
    assert ex.stats["cells"] - before == 2 * 2 and r.status == [["pass", "fail"]] * 2
    rows = ex.run_calls(F, [double, double], ["f(5)"])
    assert [c.value for row in rows for c in row] == [10, 10]


def test_distinct_programs():
    from matrix.engine import distinct_programs

    assert distinct_programs([]) == ([], [])
    assert distinct_programs(["a", "b", "a", "a", "c", "b"]) == (["a", "b", "c"], [0, 1, 0, 0, 2, 1])
    clock = "import time\n"
    assert distinct_programs([clock, clock, "x"]) == ([clock, clock, "x"], [0, 1, 2])
    assert distinct_programs(["a", "a "]) == (["a", "a "], [0, 1])  # the same text only
    for unrepeatable in ("import uuid\n", "import os\n", "def f():\n    return id([])\n",
                         "def f():\n    return hash(object())\n", "from secrets import token_hex\n"):
        assert distinct_programs([unrepeatable] * 2)[1] == [0, 1], unrepeatable
    for repeatable in ("def f(x):\n    return valid(x)\n", "def f(xs):\n    return rehash(xs)\n"):
        assert distinct_programs([repeatable] * 2)[1] == [0, 0], repeatable


def test_unrepeatable_words_cover_the_pattern():
    """The literal prefilter of ``unrepeatable`` never hides a match of ``UNREPEATABLE``: each
    alternative holds one of the words, and the two agree on texts built from their pieces."""
    import re

    from matrix.engine import _UNREPEATABLE_WORDS, UNREPEATABLE, unrepeatable

    for alt in UNREPEATABLE.pattern.split("|"):
        literal = re.sub(r"\\b", "", alt).replace("\\(", "(")
        assert any(w in literal for w in _UNREPEATABLE_WORDS), alt
    assert unrepeatable(None) and not unrepeatable("def f(x):\n    return x\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["random", "time", "os", " os ", "xos", "id(", "valid(", "hash(", "rehash(",
                                 "gc", " gc\n", "environ", "getpid", "(", " ", "\n", "a", "_", "import "]),
                max_size=8))
def test_unrepeatable_agrees_with_the_pattern(pieces):
    from matrix.engine import UNREPEATABLE, unrepeatable

    text = "".join(pieces)
    assert unrepeatable(text) == (UNREPEATABLE.search(text) is not None)


def test_a_repeated_test_runs_once_and_its_column_is_copied(ex):
    codes = ["def f(x):\n    return 2 * x\n", "def f(x):\n    return x + 2\n", "def f(x):\n    return 2 * x\n"]
    t1, t2 = Test.assertion("assert f(2) == 4"), Test.assertion("assert f(3) == 6")
    before = ex.stats["cells"]
    r = ex.run_matrices([(F, codes, [t1, t2, t1, t1], ["f(5)"])])[0]
    assert ex.stats["cells"] - before == 2 * 2  # two distinct programs x two distinct tests (extra inputs aside)
    assert r.shape == (3, 4) and r.passed.shape == (3, 4)
    assert r.status == [["pass"] * 4, ["pass", "fail", "pass", "pass"], ["pass"] * 4]
    assert r.values[1] == [4, 5, 4, 4]
    assert [[c.value for c in row] for row in r.extra] == [[10], [7], [10]] and r.extra_inputs == ["f(5)"]
    plain_run = ex.run_matrices([(F, codes[:2], [t1, t2], ["f(5)"])])[0]
    assert [row[:2] for row in r.status[:2]] == plain_run.status


def test_lazy_extra_inputs_are_drawn_in_the_callers_thread(ex):
    """CPython's ast module (3.11, 3.12) counts its recursion depth per interpreter, not per
    thread: a draw of extra inputs (hypothesis, ast) in a background thread beside the parent's
    planning of tests raised ``SystemError: AST constructor recursion depth mismatch`` now and
    then (a real `coevo select` run skipped one task's output consensus at random; in the planning
    thread the same error would have ended the run). Draws run in the caller's thread, in job order,
    while it waits for the workers."""
    import threading

    order = []

    def draw(k):
        def fn():
            order.append((k, threading.current_thread() is threading.main_thread()))
            return [f"f({k})", f"f({k + 10})"]
        return fn

    jobs = [(F, ["def f(x):\n    return 2 * x\n"], [Test.assertion(f"assert f({k}) == {2 * k}")], draw(k))
            for k in range(4)]
    res = ex.run_matrices(jobs)
    assert order == [(k, True) for k in range(4)]
    for k, r in enumerate(res):
        assert r.status == [["pass"]] and r.extra_inputs == [f"f({k})", f"f({k + 10})"]
        assert [c.value for c in r.extra[0]] == [2 * k, 2 * (k + 10)]
