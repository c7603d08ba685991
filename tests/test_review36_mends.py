"""Mends of the session-35 review (/work/s34/review36): each row failed before its fix."""

import json

from matrix.tasks import Task
from roles.api_client import _from_event_stream
from roles.parsing import parse_code, parse_tests


def test_a_scratch_tool_call_does_not_replace_the_answers_python_block():
    """H7: an answer that tries something in a tool call, then gives its program (or tests) in a
    python block: the block is the answer."""
    text = ('Let me try it first:\n<tool_call>{"name": "python", "arguments": {"code": "print(2 + 2)"}}'
            '</tool_call>\nFinal answer:\n```python\ndef f(x):\n    return x + 1\n```')
    assert parse_code(text, "f").code == "def f(x):\n    return x + 1"
    tests = ('<tool_call>{"name": "python", "arguments": {"code": "print(1)"}}</tool_call>\n'
             "```python\nassert f(1) == 2\nassert f(2) == 3\nassert f(0) == 1\n```")
    got = parse_tests(tests, Task("t", "p", entry_point="f"))
    assert got.ok and len(got.tests) == 3
    # a tool call alone is still read
    only = '<tool_call>{"name": "python", "arguments": {"code": "def f(x):\\n    return x + 1"}}</tool_call>'
    assert parse_code(only, "f").code.startswith("def f(x):")


def test_a_dropped_stdin_demo_keeps_what_shares_its_line():
    """M2: the demo was cut by whole lines, so `import sys; input = sys.stdin.readline` lost the
    import, and `MOD = 10**9 + 7; n = int(input())` its constant."""
    code = ("import sys; input = sys.stdin.readline\nMOD = 10**9 + 7; n = int(input())\n\n"
            "def f(n):\n    return sys.maxsize % MOD + n\n\nprint(f(n))\n")
    got = parse_code("```python\n" + code + "```", "f").code
    ns: dict = {}
    exec(compile(got, "<answer>", "exec"), ns)  # loads with no stdin at all: the demo is gone
    assert ns["f"](1) == sys_maxsize_mod() + 1
    assert "input()" not in got and "print(f(n))" not in got


def sys_maxsize_mod():
    import sys

    return sys.maxsize % (10**9 + 7)


def test_a_streamed_answer_with_both_reasoning_fields_is_read_once():
    """M4: a server sending reasoning_content and reasoning in each delta (vLLM for a while) got
    every reasoning piece twice."""
    events = []
    for piece in ("def f(x):\n", "    return x + 1\n"):
        d = {"reasoning_content": piece, "reasoning": piece}
        events.append("data: " + json.dumps({"choices": [{"index": 0, "delta": d}]}))
    events.append("data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    events.append("data: [DONE]")
    out = _from_event_stream("\n\n".join(events).encode(), "chat")
    assert out["choices"][0]["message"]["reasoning_content"] == "def f(x):\n    return x + 1\n"


def test_a_function_task_with_stdio_tests_keeps_the_answers_stdin_demo():
    """M6: the demo was cut whatever the task's tests; a function task's stdio tests (they run the
    program as a script) then got a program printing nothing."""
    from matrix.tasks import Test
    from roles.parsing import sample_program

    answer = "```python\ndef add(a, b):\n    return a + b\n\na, b = map(int, input().split())\nprint(add(a, b))\n```"
    check = Test.assertion("assert add(1, 2) == 3")
    mixed = Task("t", "p", entry_point="add", tests=[Test.stdio("1 2\n", "3\n"), check])
    only_asserts = Task("t", "p", entry_point="add", tests=[check])
    assert "print(add(a, b))" in sample_program(answer, mixed)
    assert "input()" not in sample_program(answer, only_asserts)


def test_a_tool_call_written_in_the_text_is_read_as_one_the_server_parsed():
    """M7: two readers of a tool call's arguments, with different keys: 'script' or a lone
    'snippet' argument was code when the server parsed the call and 'no code found' in the text."""
    from matrix.tasks import answer_elsewhere

    for args in ({"script": "def f(x):\n    return x + 1"}, {"snippet": "def f(x):\n    return x + 1"}):
        text = "<tool_call>" + json.dumps({"name": "python", "arguments": args}) + "</tool_call>"
        assert parse_code(text, "f").code == "def f(x):\n    return x + 1"
        msg = {"content": None, "tool_calls": [{"function": {"name": "python", "arguments": json.dumps(args)}}]}
        served, how = answer_elsewhere(msg, "tool_calls")
        assert how == "via tool_calls" and parse_code(served, "f").code == "def f(x):\n    return x + 1"
    # a JSON answer that is no tool call keeps its old reading: an "input" field is not code
    assert parse_code('{"input": "1 2", "output": "3"}', "f").code != "1 2"
