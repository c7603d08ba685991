"""Chat answers as served models write them (robust34): a closing fence glued to the last line of
code (``    return a + b```"``, small instruct models), with or without text after it, and code
indented with no-break spaces (U+00A0, from a chat UI's copy, or U+3000 from CJK chat models) or
holding zero-width spaces. Before, each was a syntax error: the fence's backticks or the odd
space stayed in the program."""

import json

import pytest

from coevo.cli import main
from roles.parsing import parse_code

F = "```"
ADD = "def add(a, b):\n    return a + b"

GLUED = {
    "glued_end": f"{F}python\n{ADD}{F}",
    "glued_then_text": f"Here you go:\n{F}python\n{ADD}{F}\n\nThis adds two numbers.",
    "glued_then_usage_block": f"{F}python\n{ADD}{F}\nUsage:\n{F}python\nprint(add(1, 2))\n{F}\n",
    "glued_with_space": f"{F}python\n{ADD} {F}\n",
    "glued_tilde": f"~~~python\n{ADD}~~~\n",
    # the first line of code on the opening fence's line (no newline after the fence or its language)
    "on_fence_line_with_lang": f"{F}python def add(a, b):\n    return a + b\n{F}",
    "on_fence_line_no_lang": f"Here:\n{F}def add(a, b):\n    return a + b\n{F}\nDone.",
}
SPACES = {
    "nbsp_indent": f"{F}python\ndef add(a, b):\n\u00a0\u00a0\u00a0\u00a0return a + b\n{F}",
    "nbsp_unfenced": "Sure:\n\ndef add(a, b):\n\u00a0\u00a0\u00a0\u00a0return a + b\n",
    "nbsp_inside": f"{F}python\ndef add(a, b):\n    return a\u00a0+ b\n{F}",
    "ideographic_indent": f"{F}python\ndef add(a, b):\n\u3000\u3000return a + b\n{F}",
    "zero_width": f"{F}python\ndef add(a, b):\u200b\n    return a + b\n{F}",
}
# unfenced code as a user's file can hold it: indented as a whole (an answer continuing a markdown
# list, a decoder's leading spaces), line ends escaped twice (a string JSON-encoded twice), HTML
UNFENCED = {
    "indented_whole": "    def add(a, b):\n        return a + b\n",
    "indented_after_prose": "Here is the function:\n\n    def add(a, b):\n        return a + b\n\nIt adds.",
    "escaped_twice": "def add(a, b):\\n    return a + b\\n",
    "html_pre_code": '<pre><code class="language-python">def add(a, b):\n    if a &lt; 0 &lt; b:\n'
                     '        return b + a\n    return a + b\n</code></pre>',
}


@pytest.mark.parametrize("name", sorted(GLUED) + sorted(SPACES) + sorted(UNFENCED))
def test_the_function_is_taken(name):
    text = {**GLUED, **SPACES, **UNFENCED}[name]
    got = parse_code(text, "add")
    assert got.code is not None
    ns: dict = {}
    exec(compile(got.code, "<answer>", "exec"), ns)
    assert ns["add"](2, 3) == 5


def test_a_string_holding_backticks_or_a_no_break_space_is_kept():
    """Code that is valid as written runs as written: its strings are the program's."""
    src = f"def add(a, b):\n    s = 'x{F}'\n    t = '\u00a0'\n    return a + b\n"
    got = parse_code(f"{F}python\n{src}{F}\n", "add")
    assert got.code is not None and "'x```'" in got.code and "'\u00a0'" in got.code


def test_a_function_cut_off_stays_a_syntax_error():
    """A glued fence after half a function is no complete program: nothing is made to parse."""
    got = parse_code(f"{F}python\ndef add(a, b):\n    return a +{F}\n", "add")
    with pytest.raises(SyntaxError):
        compile(got.code or "", "<answer>", "exec")


def test_through_the_matrix_command(tmp_path, capsys):
    task = {"task_id": "t/1", "prompt": "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n", "kind": "function",
            "entry_point": "add", "tests": ["assert add(1, 2) == 3"]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    rows = [GLUED["glued_then_text"], SPACES["nbsp_indent"], SPACES["nbsp_unfenced"], UNFENCED["indented_whole"],
            UNFENCED["escaped_twice"], UNFENCED["html_pre_code"], "def add(a, b):\n\u00a0\u00a0return a + b\n"]
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": "t/1", "code": c}) + "\n" for c in rows))
    out = tmp_path / "m.jsonl"
    rc = main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
               "--out", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["status"] == [["pass"]] * len(rows)


# a stdio answer whose program is a function that reads the input, and a later block that only
# calls it ("Call it:", "Run with:"): the program alone defined the function and printed nothing
DRIVEN = {
    "call_block": f"Here's the solution:\n{F}python\ndef solve():\n    a, b = map(int, input().split())\n"
                  f"    print(a + b)\n{F}\n\nCall it:\n{F}python\nsolve()\n{F}",
    "main_guard_block": f"{F}python\nimport sys\n\ndef main():\n    data = sys.stdin.read().split()\n"
                        f"    print(int(data[0]) + int(data[1]))\n{F}\nAnd run with:\n"
                        f"{F}python\nif __name__ == '__main__':\n    main()\n{F}",
    "exit_main_block": f"{F}python\ndef main():\n    a, b = map(int, input().split())\n    print(a + b)\n"
                       f"    return 0\n{F}\n{F}python\nimport sys\nsys.exit(main())\n{F}",
}


def _stdout_of(code: str, stdin: str) -> str:
    import contextlib
    import io
    import sys

    out = io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            exec(compile(code, "<answer>", "exec"), {"__name__": "__main__"})
    finally:
        sys.stdin = old
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_a_stdio_program_runs_its_driver_block(name):
    got = parse_code(DRIVEN[name], None)
    assert got.code is not None
    assert _stdout_of(got.code, "2 3\n") == "5\n"


def test_a_later_example_call_with_arguments_is_not_added():
    """A block calling the function on made-up values is an example, not the program's driver:
    its output would be added to the program's."""
    text = (f"{F}python\ndef solve(data=None):\n    a, b = map(int, (data or input()).split())\n    print(a + b)\n{F}\n"
            f"Example:\n{F}python\nsolve('1 1')\n{F}")
    got = parse_code(text, None)
    assert got.code is not None and "solve('1 1')" not in got.code


def test_a_program_that_calls_its_function_gets_nothing_more():
    text = (f"{F}python\ndef solve():\n    a, b = map(int, input().split())\n    print(a + b)\n\nsolve()\n{F}\n"
            f"Run:\n{F}python\nsolve()\n{F}")
    got = parse_code(text, None)
    assert got.code is not None and _stdout_of(got.code, "2 3\n") == "5\n"


def test_a_fence_attribute_is_not_code():
    """```python title=solution.py``` (MkDocs-style attributes after the language) stays an attribute."""
    for info in ('python title=solution.py', 'python title="solution.py" linenums="1"', "{.python .numberLines}"):
        got = parse_code(f"{F}{info}\n{ADD}\n{F}", "add")
        assert got.code == ADD, info


@pytest.mark.parametrize("start", [
    "threading.stack_size(1 << 26)\nthreading.Thread(target=main).start()",
    "import atexit\natexit.register(main)",
    "list(map(main, [None]))",
    "run = main\nrun()",
])
def test_a_program_that_starts_its_function_by_reference_gets_nothing_more(start):
    """review34 M2: `threading.Thread(target=main).start()` (the competitive programmer's deep
    recursion idiom) starts main without a call of its name: a later `main()` block was appended
    and the program printed twice."""
    text = (f"{F}python\nimport sys, threading\ndef main(_=None):\n    a, b = map(int, sys.stdin.read().split())\n"
            f"    print(a + b)\n{start}\n{F}\nTo run it, call:\n{F}python\nmain()\n{F}")
    got = parse_code(text, None)
    assert got.code is not None and not got.code.rstrip().endswith("\nmain()"), got.code
