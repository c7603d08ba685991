from hypothesis import given, settings
from hypothesis import strategies as st

from matrix.tasks import Task, Test
from roles.parsing import fenced_blocks, parse_code, parse_task, parse_tests

FUNC = Task("t1", "Return the sum of a and b.", "function", "add")
STDIO = Task("s1", "Print the sum.", "stdio", None)
ADD = "def add(a, b):\n    return a + b"


# ---- code -----------------------------------------------------------------------------------

def test_code_in_fence_with_prose():
    r = parse_code(f"Sure! Here is the solution:\n\n```python\n{ADD}\n```\n\nIt adds a and b.")
    assert r.ok and r.code == ADD and r.error == ""


def test_code_without_fence_drops_prose_around_it():
    r = parse_code(f"Here is the code:\n{ADD}\nThis function returns the sum.")
    assert r.ok and r.code == ADD and r.error == "no code fence"


def test_code_unclosed_fence_is_kept_and_flagged():
    r = parse_code("```python\ndef add(a, b):\n    return a +")
    assert r.ok and r.code.startswith("def add") and r.error == "unclosed code block"


def test_code_multiple_blocks_prefers_the_entry_point_definition():
    text = ("```python\nprint(add(1, 2))\n```\n"
            f"```python\n{ADD}\n```\n"
            "```python\nassert add(1, 2) == 3\nassert add(2, 2) == 4\nassert add(0, 0) == 0\n```")
    assert parse_code(text, "add").code == ADD
    # without an entry point: the longest block that parses
    assert parse_code("```python\nx = 1\n```\n```python\n" + ADD + "\n```").code == ADD


def test_code_other_language_blocks_are_ignored():
    assert not parse_code("```javascript\nfunction add(a, b) { return a + b }\n```").ok
    r = parse_code("```js\nlet x\n```\n```py\n" + ADD + "\n```")
    assert r.ok and r.code == ADD


def test_code_garbage_and_empty():
    for text in ["", "   ", "blah blah blah", "\x00\x01\x02", "```python\n\n```", None, 42]:
        r = parse_code(text)
        assert not r.ok and r.code is None and r.error


def test_fenced_blocks_languages_and_closure():
    bs = fenced_blocks("a\n```Python 3\nx\n```\n```\ny\n")
    assert [(b.lang, b.body, b.closed) for b in bs] == [("python", "x", True), ("", "y", False)]


# ---- tests ----------------------------------------------------------------------------------

def test_tests_assert_block():
    r = parse_tests("```python\nassert add(1, 2) == 3\nassert add(0, 0) == 0\n```", FUNC)
    assert r.ok and [t.test for t in r.tests] == ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]
    assert all(t.kind == "assert" for t in r.tests)


def test_tests_without_fence_with_prose_and_call_style():
    text = ("Here are some tests:\nassert add(1, 2) == 3\nadd(2, 2) == 4\nadd(5, 5) -> 10\n"
            "These should pass.")
    r = parse_tests(text, FUNC)
    assert [t.test for t in r.tests] == ["assert add(1, 2) == 3", "assert add(2, 2) == 4",
                                         "assert add(5, 5) == 10"]


def test_tests_truncated_block_keeps_complete_lines():
    r = parse_tests("```python\nassert add(1, 2) == 3\nassert add(4, 4) == 8\nassert add(1,", FUNC)
    assert r.ok and len(r.tests) == 2


def test_tests_multiline_assert_and_unrelated_dropped():
    text = ("```python\nassert add(\n    1, 2\n) == 3\nassert True\nassert len([1]) == 1\n"
            "assert add(1, 2) == 3\nassert add(1, 2)  ==  3\n```")
    r = parse_tests(text, FUNC)
    assert len(r.tests) == 1 and r.tests[0].test.startswith("assert add(\n")
    assert r.dropped == 4  # two unrelated, two duplicates (whitespace differs)


def test_asserts_outside_the_code_blocks_count_as_rejected():
    # a second "```python" closes the first block: the asserts after it are never run, so they
    # must not vanish silently (a Tester learned to hide its risky tests this way)
    text = "```python\nassert add(0, 0) == 0\n```python\nassert add(1, 2) == 4\nassert add(2, 2) == 5\n```"
    r = parse_tests(text, FUNC)
    assert [t.test for t in r.tests] == ["assert add(0, 0) == 0"] and r.dropped == 2
    ok = parse_tests("```python\nassert add(0, 0) == 0\n```\nDone.", FUNC)
    assert ok.dropped == 0


def test_tests_cap_and_failure():
    text = "\n".join(f"assert add({i}, 0) == {i}" for i in range(10))
    r = parse_tests(text, FUNC, max_tests=3)
    assert len(r.tests) == 3 and r.dropped == 7
    bad = parse_tests("I cannot write tests.", FUNC)
    assert not bad.ok and bad.tests == [] and "no assert test" in bad.error


def test_tests_stdio_json_lines_list_and_prose():
    text = ('Tests:\n```json\n{"input": "1 2\\n", "output": "3\\n"}\n{"input": "2 2", "output": 4}\n'
            '{"input": "x"}\n```')
    r = parse_tests(text, STDIO)
    assert r.tests == [Test.stdio("1 2\n", "3\n"), Test.stdio("2 2", "4")] and r.dropped == 1
    r2 = parse_tests('[{"Input": ["1", "2"], "Output": "3"}] trailing', STDIO)
    assert r2.tests == [Test.stdio("1\n2", "3")]
    assert not parse_tests('{"input": "1"', STDIO).ok


# ---- tasks ----------------------------------------------------------------------------------

PROPOSAL = """### Task
Return the product of a and b.
### Function
mul
### Solution
```python
def mul(a, b):
    return a * b
```
### Inputs
```
mul(2, 3)
mul(0, 5)
print(1)
mul(2, 3)
```"""


def test_task_well_formed():
    r = parse_task(PROPOSAL)
    assert r.ok and r.inputs == ["mul(2, 3)", "mul(0, 5)"]
    t = r.task
    assert t.kind == "function" and t.entry_point == "mul" and t.prompt.startswith("Return")
    assert t.solutions == ["def mul(a, b):\n    return a * b"] and t.meta["inputs"] == r.inputs
    assert t.task_id.startswith("proposed-") and parse_task(PROPOSAL).task.task_id == t.task_id


def test_task_colon_headers_and_inferred_entry_point():
    text = ("Task: Double x.\nSolution:\n```python\ndef dbl(x):\n    return 2 * x\n```\n"
            "Inputs:\ndbl(1)\ndbl(2)\n")
    r = parse_task(text, kind="function")
    assert r.ok and r.task.entry_point == "dbl" and r.inputs == ["dbl(1)", "dbl(2)"]


def test_task_program_format_needs_no_description():
    text = "### Solution\n```python\ndef f(xs):\n    return sum(xs)\n```\n### Inputs\n```\nf([1])\nf([])\n```"
    r = parse_task(text)
    assert r.ok and r.task.prompt == "" and r.task.kind == "function" and r.task.entry_point == "f"
    assert r.inputs == ["f([1])", "f([])"]
    # a program that runs something at top level stays a stdio task
    prog = "### Solution\n```python\ndef g():\n    print(1)\ng()\n```\n### Inputs\n```\n\"x\"\n```"
    assert parse_task(prog).task.kind == "stdio"


def test_task_solution_header_may_be_left_out():
    """The program format's first section is a code block; a completion that leaves out its
    "### Solution" line (a tenth of the tiny world's malformed proposals) still says what it means."""
    bare = "```python\ndef f(xs):\n    return xs[:3]\n```\n### Inputs\n```\nf([1, 2, 3, 4])\nf([])\n```"
    r = parse_task(bare, kind="function")
    assert r.ok and r.task.entry_point == "f" and r.inputs == ["f([1, 2, 3, 4])", "f([])"]
    assert "xs[:3]" in r.task.solutions[0]
    # text before the first header without a code block is still no solution
    assert parse_task("some words\n### Inputs\n```\nf(1)\n```").error == "no solution"


def test_task_stdio():
    text = ('### Task\nEcho the line.\n### Solution\n```python\nprint(input())\n```\n'
            '### Inputs\n```\n"hello\\n"\nworld\n```')
    r = parse_task(text)
    assert r.ok and r.task.kind == "stdio" and r.inputs == ["hello\n", "world\n"]


def test_task_failures_are_values():
    cases = {
        "": "empty output",
        "### Task\nx\n": "no solution",
        PROPOSAL.split("### Inputs")[0]: "no inputs",
        PROPOSAL.replace("def mul", "def other"): "does not define mul",
        PROPOSAL.replace("return a * b", "return a *"): "not valid Python",
        "### Solution\n```python\nx=1\n```": "no inputs",
    }
    for text, err in cases.items():
        r = parse_task(text)
        assert not r.ok and r.task is None and err in r.error, (text, r.error)


# ---- never raises ---------------------------------------------------------------------------

@settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from(list("`#{}[]():=\"\\\n assertdefaddTaskInputs0123,.")) |
               st.characters(), max_size=300))
def test_parsers_never_raise(text):
    for r in (parse_code(text, "add"), parse_tests(text, FUNC), parse_tests(text, STDIO),
              parse_task(text)):
        assert isinstance(r.ok, bool) and isinstance(r.error, str)
