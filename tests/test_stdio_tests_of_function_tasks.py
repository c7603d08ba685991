"""docs/contracts.md: "A test's own kind decides how its cell runs, whatever the task's kind". A
stdio test (input/output) in a function task's tests ran the program loaded as a module with an
empty stdin first: a right script reading its input was an error on every such test."""

from __future__ import annotations

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

SCRIPT = "print(sum(map(int, input().split())))\n"
FUNC = "def add(a, b):\n    return a + b\n"


def test_a_stdio_test_of_a_function_task_gives_the_script_its_input():
    task = Task(task_id="t", prompt="add", entry_point="add")
    tests = [Test.stdio("1 2\n", "3\n"), Test.stdio("2 2\n", "4\n"), Test.assertion("assert add(1, 2) == 3")]
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        res = ex.run_matrix(task, [SCRIPT, "print(4)\n", FUNC], tests)
    status = [[res.cell(i, j).status for j in range(3)] for i in range(3)]
    assert status[0][:2] == ["pass", "pass"] and status[0][2] != "pass", status
    assert status[1][:2] == ["fail", "pass"], status  # a constant answer passes only where it is right
    assert status[2] == ["fail", "fail", "pass"], status  # the function prints nothing on stdin tests
