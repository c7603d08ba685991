"""A LiveCodeBench or APPS/TACO task's programs run after the lines that benchmark's harness puts
before every program it grades, on every path into the matrix: a codes file (coevo matrix/select/
eval --codes) had them, programs sampled by `coevo solve` / `eval --model` and by training did not,
so the same answer passed through one door and was an error through the other."""

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.preludes import harness_header
from matrix.tasks import Task, Test

ANSWER = "n = int(input())\nq = deque(map(int, input().split()))\nprint(sum(q))\n"  # deque unimported


def _task(source):
    return Task(task_id="t", prompt="Sum the numbers.", entry_point=None, kind="stdio",
                tests=[Test.stdio("3\n1 2 3\n", "6\n")], meta={"source": source} if source else {})


@pytest.mark.parametrize("source, status", [("livecodebench", "pass"), ("apps", "pass"), ("taco", "pass"),
                                            (None, "error"), ("mbpp", "error")])
def test_sampled_programs_run_after_their_benchmarks_harness_lines(source, status):
    task = _task(source)
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        (res,) = ex.run_matrices([(task, [ANSWER], list(task.tests))])
    assert res.status == [[status]], (res.status, res.errors)


def test_the_lines_are_added_once():
    task = _task("livecodebench")
    header = harness_header(task, ANSWER)
    assert header.endswith("\n") and header.count("\n") == 1  # one line: line numbers move by one
    assert harness_header(task, header + ANSWER) == ""  # a program that has them already
    assert harness_header(_task(None), ANSWER) == ""
