"""What real programs do and the sandbox must judge as Python does (red-team pass 12 on real model
outputs): numpy (which imports ctypes inside ``try``), a module that takes longer to load than
one test's time, identity with the program's own singletons, dict views."""

from __future__ import annotations

import importlib.util
import os

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=0.1, workers=1)) as e:
        yield e


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="needs numpy")
def test_a_numpy_program_is_judged_and_ctypes_stays_out(ex):
    right = "import numpy as np\ndef f(x):\n    return int(np.array(x).sum())\n"
    wrong = "import numpy as np\ndef f(x):\n    return int(np.array(x).max())\n"
    probe = ("def f(x):\n    try:\n        import ctypes\n    except ImportError as e:\n        return 'refused'\n"
             "    return 'loaded'\n")
    direct = "import ctypes\ndef f(x):\n    return ctypes.string_at(0)\n"
    tests = [Test.assertion("assert f([1, 2, 3]) == 6"), Test.assertion("for n in [3]:\n    assert f([1, 2, n]) == 6")]
    result = ex.run_matrix(Task("np", "sum", entry_point="f"), [right, wrong, probe, direct], tests)
    assert result.status[0] == ["pass", "pass"], result.errors[0]  # numpy loads (in ~0.15 s > the 0.1 s test time)
    assert result.status[1] == ["fail", "fail"]
    assert result.values[2][0] == "refused"
    assert result.status[3] == ["error", "error"] and "ImportError" in result.errors[3][0]


def test_loading_has_its_own_allowance_and_a_load_that_hangs_is_a_timeout(ex):
    slow = "import time\nt = time.time()\nwhile time.time() - t < 0.3:\n    pass\nimport os\ndef f(x):\n    return x\n"
    hang = "import os\nwhile True:\n    pass\ndef f(x):\n    return x\n"
    tests = [Test.assertion("assert f(1) == 1"), Test.assertion("for n in [2]:\n    assert f(n) == n")]
    result = ex.run_matrix(Task("load", "load", entry_point="f"), [slow, hang], tests)
    assert result.status == [["pass", "pass"], ["timeout", "timeout"]], result.errors


def test_identity_and_dict_views_mean_what_they_mean_in_python(ex):
    enum_src = "import enum\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\n"
    right = enum_src + "def f(d):\n    return Color.RED\n"
    wrong = enum_src + "def f(d):\n    return Color.BLUE\n"
    views = "def f(d):\n    return d.keys()\n"
    items = "def f(d):\n    return d.items()\n"
    values = "def f(d):\n    return d.values()\n"
    tests = ["assert f({}) is Color.RED", "assert f({}) is not Color.RED", "assert f({}) is not None",
             "assert f({2: 'b', 1: 'a'}) == {1, 2}", "assert list(f({2: 'b', 1: 'a'})) == [2, 1]",
             "assert f({1: 'a'}) == {(1, 'a')}", "assert sorted(f({2: 5, 1: 4})) == [4, 5]"]
    result = ex.run_matrix(Task("id", "id", entry_point="f"), [right, wrong, views, items, values],
                           [Test.assertion(t) for t in tests])
    assert result.status[0][:3] == ["pass", "fail", "pass"]
    assert result.status[1][:3] == ["fail", "pass", "pass"]
    assert result.status[2][3:6] == ["pass", "pass", "fail"]
    assert result.status[3][3:6] == ["fail", "fail", "pass"]
    assert result.status[4][3:] == ["fail", "fail", "fail", "pass"]


def test_a_test_may_import_the_program_as_solution(ex):
    """Test files written for a harness import the code under test (`from solution import f`):
    every program used to error on them (red-team pass 12 verification)."""
    codes = ["def f(x):\n    return 2 * x\n", "def f(x):\n    return x + 2\n"]
    tests = ["from solution import f\nassert f(3) == 6", "import solution\nassert solution.f(3) == 6",
             "from solution import g\nassert g(1)"]
    result = ex.run_matrix(Task("imp", "double", entry_point="f"), codes, [Test.assertion(t) for t in tests])
    assert result.status == [["pass", "pass", "error"], ["fail", "fail", "error"]], result.errors
