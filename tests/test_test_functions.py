"""Tests written as pytest-style ``test_*`` functions or ``unittest.TestCase`` classes (tests
contract: such a test means "run these tests"): coevo calls them, in the test process."""

from __future__ import annotations

import json

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.plans import plan_test
from matrix.tasks import Task, Test

F = Task("f", "function task", entry_point="f")
RIGHT = "def f(x):\n    return 2 * x\n"
WRONG = "def f(x):\n    return x + 2\n"
BROKEN = "def f(x):\n    return 1 / 0\n"

PYTEST_STYLE = "def test_f():\n    assert f(3) == 6\n\ndef test_g():\n    assert f(0) == 0\n"
UNITTEST_MAIN = ("import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                 "        self.assertEqual(f(3), 6)\n\nunittest.main()\n")
UNITTEST_GUARDED = ("import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                    "        self.assertEqual(f(3), 6)\n\nif __name__ == '__main__':\n    unittest.main()\n")
UNITTEST_BARE = ("from unittest import TestCase\n\nclass T(TestCase):\n    def setUp(self):\n"
                 "        self.k = 3\n\n    def test_a(self):\n        self.assertEqual(f(self.k), 6)\n\n"
                 "    def test_b(self):\n        for i in range(3):\n            with self.subTest(i=i):\n"
                 "                self.assertEqual(f(i), 2 * i)\n")
PYTEST_CLASS = "class TestF:\n    def test_a(self):\n        assert f(3) == 6\n"


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, memory_mb=256, max_output_bytes=1 << 20, workers=2)) as e:
        yield e


def row(ex, test: str, codes=(RIGHT, WRONG, BROKEN)):
    r = ex.run_matrix(F, list(codes), [Test.assertion(test)])
    return [(r.status[i][0], r.errors[i][0]) for i in range(len(codes))]


@pytest.mark.parametrize("test", [PYTEST_STYLE, UNITTEST_MAIN, UNITTEST_GUARDED, UNITTEST_BARE, PYTEST_CLASS],
                         ids=["pytest", "unittest.main", "__main__ guard", "TestCase+setUp+subTest", "pytest class"])
def test_right_passes_wrong_fails_broken_errors(ex, test):
    (s_right, e_right), (s_wrong, e_wrong), (s_broken, e_broken) = row(ex, test)
    assert s_right == "pass", e_right
    assert s_wrong == "fail", e_wrong
    assert e_wrong.startswith("AssertionError")
    assert s_broken == "error" and "ZeroDivisionError" in e_broken


def test_a_program_shadowing_builtins_does_not_run_coevos_runner(ex):
    """Red-team pass 13: a wrong program defining ``getattr``/``hasattr`` passed the pytest-class
    test, whose appended runner read them as free names (the program's, in the test process)."""
    shadow = WRONG + "def getattr(obj, name, *default):\n    return lambda *a, **k: None\n" \
                     "def hasattr(obj, name):\n    return False\n"
    for test in (PYTEST_CLASS, UNITTEST_BARE, PYTEST_STYLE):
        assert row(ex, test, (shadow,))[0][0] == "fail", test


def test_the_failing_function_is_found_whichever_it_is(ex):
    # only the second test function catches the wrong program
    test = "def test_two():\n    assert f(2) == 4\n\ndef test_three():\n    assert f(3) == 6\n"
    assert [s for s, _ in row(ex, test, ("def f(x):\n    return x * x\n", RIGHT))] == ["fail", "pass"]


def test_unittest_message_reaches_the_error(ex):
    (_, e_wrong), = row(ex, UNITTEST_BARE, (WRONG,))
    assert "5 != 6" in e_wrong


def test_a_test_that_calls_its_functions_runs_them_once(ex):
    # a second run of test_f fails it
    test = ("seen = []\n\ndef test_f():\n    assert not seen, 'ran twice'\n    seen.append(1)\n"
            "    assert f(3) == 6\n\ntest_f()\n")
    plan = plan_test(Test.assertion(test))
    assert plan.mode == "exec" and plan.source == test  # nothing to add: unchanged
    assert [s for s, _ in row(ex, test, (RIGHT, WRONG))] == ["pass", "fail"]
    # a test's `if __name__ == "__main__":` block never runs in coevo's test process (there the
    # name is the program's): it is dropped, and the functions it would call are called once
    main_block = test.replace("test_f()\n", "if __name__ == '__main__':\n    test_f()\n    print('ok')\n")
    assert "print" not in plan_test(Test.assertion(main_block)).source
    assert [s for s, _ in row(ex, main_block, (RIGHT, WRONG))] == ["pass", "fail"]


def test_fixtures_are_left_out_and_named_when_nothing_runs(ex):
    only_fixtures = "def test_f(tmp_path):\n    assert f(3) == 6\n"
    plan = plan_test(Test.assertion(only_fixtures))
    assert plan.mode == "bad" and "test_f" in plan.error and "tmp_path" in plan.error
    assert [s for s, _ in row(ex, only_fixtures, (RIGHT,))] == ["bad_test"]
    mixed = only_fixtures + "\ndef test_g():\n    assert f(1) == 2\n"
    assert [s for s, _ in row(ex, mixed, (RIGHT, WRONG))] == ["pass", "fail"]


def test_a_test_class_whose_methods_all_need_fixtures_is_a_bad_test_naming_them(ex):
    """Rows run as written (``--raw-code``): a pytest ``Test*`` class whose test methods all take
    arguments was skipped silently, so the row checked nothing and passed every program (a
    top-level function was already named); a hypothesis ``@given`` test coevo could not draw for
    is named as such."""
    test = "class TestAdd:\n    def test_a(self, numbers):\n        assert f(*numbers) == 3\n"
    plan = plan_test(Test.assertion(test))
    assert plan.mode == "bad" and "TestAdd.test_a" in plan.error and "numbers" in plan.error, plan.error
    assert [s for s, _ in row(ex, test, (RIGHT, WRONG))] == ["bad_test", "bad_test"]
    given = ("from hypothesis import given, strategies as st\n\n@given(st.builds(int))\n"
             "def test_g(x):\n    assert f(x) == 2 * x\n")
    plan = plan_test(Test.assertion(given))
    assert plan.mode == "bad" and "hypothesis" in plan.error and "test_g" in plan.error, plan.error


def test_a_testcase_without_test_methods_is_a_bad_test(ex):
    test = "import unittest\n\nclass T(unittest.TestCase):\n    def helper(self):\n        assert f(1) == 2\n"
    assert plan_test(Test.assertion(test)).mode == "bad"


def test_an_error_in_setup_is_an_error(ex):
    test = ("import unittest\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        raise KeyError('k')\n"
            "    def test_a(self):\n        self.assertEqual(f(3), 6)\n")
    assert [s for s, _ in row(ex, test, (RIGHT,))] == ["error"]


def test_plain_tests_are_unchanged():
    for src in ("assert f(1) == 2", "x = f(1)\nassert x == 2\n", "def check(c):\n    assert c(1) == 2\ncheck(f)\n",
                "def helper():\n    return 2\nassert f(1) == helper()\n"):
        plan = plan_test(Test.assertion(src))
        assert plan.mode == "values" or plan.source == src


def test_line_numbers_of_the_test_are_kept():
    plan = plan_test(Test.assertion(UNITTEST_MAIN))
    assert plan.mode == "exec"
    assert plan.source.splitlines()[:6] == UNITTEST_MAIN.splitlines()[:6]
    assert "unittest.main()" not in plan.source


def test_coevo_matrix_runs_unittest_tests(tmp_path):
    from coevo.cli import main

    (tmp_path / "tasks.jsonl").write_text(json.dumps({"task_id": "u", "prompt": "f(x) returns 2*x.",
                                                      "entry_point": "f"}) + "\n")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": "u", "code": c}) + "\n"
                                                  for c in (RIGHT, WRONG)))
    (tmp_path / "tests.jsonl").write_text("".join(json.dumps({"task_id": "u", "test": t}) + "\n"
                                                  for t in (UNITTEST_MAIN, UNITTEST_GUARDED, PYTEST_STYLE)))
    out = tmp_path / "m.jsonl"
    rc = main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
               "--tests", str(tmp_path / "tests.jsonl"), "--out", str(out), "--workers", "2", "-q"])
    assert rc == 0
    m = json.loads(out.read_text())
    assert m["status"] == [["pass"] * 3, ["fail"] * 3]
