"""Real model outputs in codes files (robust36): a function task's answer that ends with a demo reading
stdin (``a = int(input())``, ``print(f(int(input())))``, a ``while True: input()`` loop) at the top
level. The sandbox runs a function task's program with an empty stdin, so the demo raised EOFError
while loading and a right function failed every test. The demo is dropped (with what only it feeds);
a demo under ``if __name__ == "__main__":`` never ran and stays; a stdio program keeps its reads."""

from __future__ import annotations

import json

import pytest

from coevo.cli import main
from roles.parsing import parse_code

F = "```"
ADD = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("demo", [
    "a = int(input('a: '))\nprint(add(a, 2))\n",
    "print(add(int(input()), 2))\n",
    "while True:\n    line = input('> ')\n    if not line:\n        break\n    print(add(*map(int, line.split())))\n",
    "import sys\na, b = map(int, sys.stdin.readline().split())\nresult = add(a, b)\nprint(result)\n",
    "data = sys.stdin.read().split()\nprint(add(int(data[0]), int(data[1])))\n",
    "nums = list(map(int, open(0).read().split()))\nprint(add(*nums))\n",
], ids=["assigned", "in_call", "loop", "sys_stdin_readline", "sys_stdin_read", "open_0"])
def test_a_function_answers_stdin_demo_is_dropped(demo):
    got = parse_code(f"{F}python\nimport sys\n{ADD}\n{demo}{F}\n", "add")
    assert got.ok
    assert "input" not in got.code and "stdin" not in got.code and "open(0)" not in got.code
    assert "def add(a, b):" in got.code
    ns: dict = {}
    exec(compile(got.code, "<answer>", "exec"), ns)  # loads with no stdin at all
    assert ns["add"](1, 2) == 3


def test_what_the_function_needs_stays_and_a_main_guard_is_left_alone():
    text = (f"{F}python\nMOD = 10 ** 9 + 7\n\ndef add(a, b):\n    return (a + b) % MOD\n\n"
            "n = int(input())\nprint(add(n, n))\nCACHE = {}\n\n"
            "if __name__ == '__main__':\n    print(add(int(input()), 1))\n" + F)
    got = parse_code(text, "add")
    assert "MOD = 10 ** 9 + 7" in got.code and "CACHE = {}" in got.code
    assert "n = int(input())" not in got.code and "print(add(n, n))" not in got.code
    assert "if __name__ == '__main__':\n    print(add(int(input()), 1))" in got.code


def test_a_stdio_program_and_a_function_reading_stdin_itself_keep_their_reads():
    stdio = f"{F}python\nn = int(input())\nprint(n * 2)\n{F}"
    assert parse_code(stdio, None).code == "n = int(input())\nprint(n * 2)"
    inside = f"{F}python\ndef add(a, b):\n    extra = input()\n    return a + b\n{F}"
    assert "extra = input()" in parse_code(inside, "add").code


def test_the_matrix_runs_the_function_of_an_answer_with_a_stdin_demo(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "add", "prompt": "Return the sum of a and b.", "kind": "function",
                                 "entry_point": "add", "tests": [{"test": "assert add(1, 2) == 3"},
                                                                 {"test": "assert add(0, 5) == 5"}]}) + "\n")
    answers = [f"{F}python\r\n{ADD}\r\na = int(input('a: '))\r\nprint(add(a, 2))\r\n{F}\r\n".replace("\n", "\r\n")
               .replace("\r\r\n", "\r\n"),
               f"Here it is:\n{F}python\n{ADD}{F}\nUsage:\n{F}python\nx = int(input())\nprint(add(x, 1))\n{F}\n",
               f"{F}python\n{ADD}\nprint(add(int(input()), 2))\n{F}\n"]
    codes = tmp_path / "codes.jsonl"
    codes.write_text("".join(json.dumps({"task_id": "add", "response": a}) + "\n" for a in answers))
    out = tmp_path / "m.json"
    rc = main(["matrix", "--tasks", str(tasks), "--codes", str(codes), "--out", str(out), "--quiet",
               "--workers", "1"])
    assert rc == 0, capsys.readouterr().err
    got = json.loads(out.read_text())
    assert got["passed"] == [[True, True]] * 3, got["errors"]


# ---------------------------------------------------------------- the answer's own checks at the top level

@pytest.mark.parametrize("checks", [
    "# Test cases\nassert add(1, 2) == 3\nassert add(1, 1) == 3  # the model's own wrong expectation\n",
    "import unittest\n\nclass TestAdd(unittest.TestCase):\n    def test_it(self):\n"
    "        self.assertEqual(add(1, 1), 3)\n\nunittest.main()\n",
    "import pytest\npytest.main([__file__])\n",
], ids=["asserts", "unittest_main", "pytest_main"])
def test_a_function_answers_own_checks_at_the_top_level_do_not_sink_it(checks):
    """A chat model's solution block often ends with its own checks, run as the program loads: a wrong
    expectation (or unittest.main()'s SystemExit) failed a right function on every test."""
    got = parse_code(f"{F}python\n{ADD}\n{checks}{F}\n", "add")
    assert "assert add(1, 1) == 3" not in got.code and "unittest.main()" not in got.code
    assert "pytest.main" not in got.code
    ns: dict = {"__name__": "solution"}
    exec(compile(got.code, "<answer>", "exec"), ns)
    assert ns["add"](1, 2) == 3


def test_checks_under_a_main_guard_or_inside_functions_stay():
    text = (f"{F}python\n{ADD}\ndef check():\n    assert add(1, 2) == 3\n\n"
            "if __name__ == '__main__':\n    assert add(1, 2) == 3\n" + F)
    assert parse_code(text, "add").code == text[len(F) + 7:-len(F)].strip("\n")


# ---------------------------------------------------------------- fences and cells that are not python-labelled

@pytest.mark.parametrize("label", ["text", "plaintext", "txt", "plain", "code"])
def test_a_python_program_in_a_fence_labelled_as_text_is_read(label):
    got = parse_code(f"Solution:\n{F}{label}\n{ADD}{F}\n", "add")
    assert got.ok and got.code == ADD.strip()


def test_a_text_fence_is_no_answer_where_a_python_block_is_or_it_is_no_program():
    assert parse_code(f"{F}text\nadd(1, 2) -> 3\n{F}\n{F}python\n{ADD}{F}", "add").code == ADD.strip()
    assert parse_code(f"Output:\n{F}text\n3\n{F}\n", "add").code is None


def test_a_notebook_cell_magic_line_is_not_part_of_the_program():
    got = parse_code(f"{F}python\n%%writefile solution.py\n{ADD}{F}\n", "add")
    assert got.code == ADD.strip()


# ---------------------------------------------------------------- saved API messages whose content is empty

CODE = f"{F}python\n{ADD}{F}"
TOOL = {"type": "function", "function": {"name": "py", "arguments": json.dumps({"code": ADD})}}


@pytest.mark.parametrize("row", [
    {"response": {"role": "assistant", "content": None, "reasoning_content": CODE}},
    {"response": {"role": "assistant", "content": "", "reasoning": "hmm\n" + CODE}},
    {"response": {"role": "assistant", "content": None, "tool_calls": [TOOL]}},
    {"messages": [{"role": "user", "content": "add"}, {"role": "assistant", "content": None, "tool_calls": [TOOL]}]},
    {"response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": None,
                                                       "reasoning_content": CODE}, "finish_reason": "stop"}]}},
], ids=["reasoning_content", "reasoning", "tool_calls", "conversation_tool_call", "completion_reasoning"])
def test_a_saved_answer_with_its_code_outside_the_content_is_read(tmp_path, capsys, row):
    """What coevo solve reads from a server (robust36) is read from a codes file of saved answers too:
    they gave an empty program."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "add", "prompt": "Return the sum of a and b.", "kind": "function",
                                 "entry_point": "add", "tests": [{"test": "assert add(1, 2) == 3"}]}) + "\n")
    codes = tmp_path / "codes.jsonl"
    codes.write_text(json.dumps(dict(row, task_id="add")) + "\n")
    out = tmp_path / "m.json"
    rc = main(["matrix", "--tasks", str(tasks), "--codes", str(codes), "--out", str(out), "--quiet", "--workers", "1"])
    assert rc == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["passed"] == [[True]]


def test_a_saved_answer_cut_while_reasoning_is_still_no_program(tmp_path, capsys):
    from matrix.tasks import answer_elsewhere

    assert answer_elsewhere({"content": None, "reasoning_content": CODE}, "length") == (None, "cut_reasoning")


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "python", "arguments": {"code": "def add(a, b):\\n    return a + b\\n"}}\n</tool_call>',
    '<tool_call>{"name": "run", "arguments": "{\\"code\\": \\"def add(a, b):\\\\n    return a + b\\"}"}</tool_call>',
    '{"name": "python", "parameters": {"code": "def add(a, b):\\n    return a + b"}}',
], ids=["hermes_tool_call", "arguments_as_json_text", "llama_parameters"])
def test_a_tool_call_written_into_the_content_is_read(text):
    """A model that calls a tool in its text (Hermes/Qwen's <tool_call> tags, Llama 3's JSON with
    "parameters") where the server parsed no tool call."""
    got = parse_code(text, "add")
    assert got.ok and got.code.strip() == ADD.strip()


@pytest.mark.parametrize("key", ["code", "tests"])
def test_a_testers_tool_call_written_into_the_content_is_read(key):
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    args = json.dumps({key: "assert add(1, 2) == 3\nassert add(2, 2) == 4"})
    text = f'<tool_call>\n{{"name": "python", "arguments": {args}}}\n</tool_call>'
    got = parse_tests(text, Task("add", "Return the sum of a and b.", "function", "add"))
    assert [t.test for t in got.tests] == ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
