import pytest
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


def test_an_answer_cut_off_after_its_function_runs_the_whole_statements_before_the_cut():
    """A chat answer stopped by max_tokens in its example usage (``print(add(1,``) lost a complete
    function to a ``syntax_error``: the unclosed block is cut before the first top-level statement
    that does not parse (evalplus's sanitizer keeps the function too). A function cut in its own
    body is never run half-written: the block stays as it is (a syntax error)."""
    cut = f"Here it is:\n```python\nimport math\n\n{ADD}\n\n\n# Example usage\nprint(add(1,"
    r = parse_code(cut, "add")
    assert r.ok and r.code == f"import math\n\n{ADD}" and r.error == "unclosed code block"
    # a helper cut off after the entry point: the complete definitions before it
    r = parse_code(f"```python\n{ADD}\n\ndef helper(x):\n    return [x,", "add")
    assert r.code == ADD
    assert parse_code("```python\nimport math\ndef add(a, b):\n    return a +", "add").code == (
        "import math\ndef add(a, b):\n    return a +")
    # a revision cut off inside its body: the earlier whole definition is the answer
    assert parse_code(f"```python\n{ADD}\n```\nBetter:\n```python\ndef add(a, b):\n    s = a\n    return s +",
                      "add").code == ADD
    # without an entry point (a stdio program) a cut block stays as it is
    assert parse_code("```python\nn = int(input())\nprint(n\n").code == "n = int(input())\nprint(n"


def test_code_before_a_bare_closing_fence_is_the_answer():
    """A chat template (or prompt) that opened the ```python block leaves the model's answer as
    code, a bare closing fence, then prose or an example block: the prose after the fence was taken
    for the code (a syntax error). A bare fence after prose still opens a block."""
    for text in (f"{ADD}\n```\n\nThis function returns the sum.",
                 f"{ADD}\n```\nExample:\n```python\nprint(add(1, 2))\n```", f"import math\n{ADD}\n```"):
        r = parse_code(text, "add")
        assert r.ok and r.code.endswith(ADD) and "```" not in r.code and r.error == "", text
    assert parse_code(f"Solution\n```\n{ADD}\n```", "add").code == ADD
    assert parse_code(f"print(1)\n```python\n{ADD}\n```", "add").code == ADD


def test_a_bare_fence_after_code_that_opens_a_block_of_code_still_opens_it():
    """Code outside the fences, then a bare fence opening the answer's block: the bare fence
    opens (the block holds code that defines something), it does not close the code before it."""
    text = f"import math\n```\n{ADD}\n```\nDone."
    assert parse_code(text, "add").code.endswith(ADD)


def test_a_stdio_answer_split_into_a_function_block_and_an_io_block_is_joined():
    """A stdio answer written as a function block, then "read the input and print" in a block of
    its own: the longest block (the function alone, printing nothing) was the program. Without an
    entry point, a block that reads stdin is the program, after the definitions it uses."""
    fn = "def solve(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total"
    io = "import sys\nxs = list(map(int, sys.stdin.read().split()))\nprint(solve(xs))"
    text = f"First the function:\n```python\n{fn}\n```\nThen the input:\n```python\n{io}\n```\n"
    got = parse_code(text).code
    assert got.endswith(io) and fn in got, got
    # a whole program, then an example block: the program
    prog = f"{fn}\n\n{io}"
    assert parse_code(f"```python\n{prog}\n```\nExample:\n```python\nprint(solve([1, 2]))\n```").code == prog
    # an example input block is no program
    assert parse_code(f"```python\n{prog}\n```\nInput:\n```\n1 2 3\n```").code == prog


def test_a_tilde_fence_is_a_code_block():
    """CommonMark's other fence, ``~~~python`` (some models use it, most often around code that
    shows a ``` itself): the answer was a syntax error. Its closing fence is tildes too."""
    assert parse_code(f"Solution:\n~~~python\n{ADD}\n~~~\n", "add").code == ADD
    inner = 'def add(a, b):\n    """```\n    add(1, 2)\n    ```"""\n    return a + b'
    assert parse_code(f"~~~~py\n{inner}\n~~~~\nDone.", "add").code == inner
    listed = ADD.replace("\n", "\n   ")
    assert parse_code(f"1. Code:\n   ~~~python\n   {listed}\n   ~~~\n", "add").code == ADD
    assert [b.lang for b in fenced_blocks("a ~~~ b\n~~~python\nx = 1\n~~~\n")] == ["python"]


def test_a_fence_whose_language_names_a_file_or_is_in_braces_is_python():
    """``python:solution.py`` (a file name after the language, as some assistants write it),
    ``{python}`` (Quarto / R Markdown) and ``{.python}`` (pandoc): the block was not read as
    Python and the answer had no code."""
    for lang in ("python:solution.py", "{python}", "{.python}", "py:main.py", "Python {linenos=true}"):
        r = parse_code(f"Here:\n```{lang}\n{ADD}\n```\n", "add")
        assert r.ok and r.code == ADD, lang
    assert not parse_code(f"```javascript:add.js\n{ADD}\n```").ok


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


# ---- code: chat layouts (red-team pass 12, F10) ----------------------------------------------

def _runs(code: str, check: str) -> bool:
    ns: dict = {}
    try:
        exec(code, ns)
        exec(check, ns)
        return True
    except Exception:
        return False


SUM_OK = "assert f([1, 2, 3]) == 6 and f([]) == 0"


def test_code_helper_and_import_in_their_own_blocks_are_joined():
    helper = ("First, a small helper to square a number:\n\n```python\ndef sq(x):\n    return x * x\n```\n\n"
              "Now the main function uses it:\n\n```python\ndef f(xs):\n    return sum(sq(x) for x in xs)\n```\n\n"
              "Example:\n\n```python\nprint(f([1, 2]))  # 5\n```\n")
    r = parse_code(helper, "f")
    assert r.ok and _runs(r.code, "assert f([1, 2]) == 5 and f([]) == 0")
    assert "print(" not in r.code  # the usage block is not joined
    imports = ("We need the `math` module:\n```python\nimport math\nfrom functools import reduce\n```\n"
               "Then the function:\n```python\ndef f(xs):\n    return math.fsum(xs)\n```\n")
    r = parse_code(imports, "f")
    assert r.ok and _runs(r.code, SUM_OK) and "reduce" not in r.code
    # three blocks: imports / helper (which needs the import) / solution; a helper given after
    three = ("```python\nfrom collections import Counter\n```\n"
             "```python\ndef counts(xs):\n    return Counter(xs)\n```\n"
             "```python\ndef f(xs):\n    return sum(k * v for k, v in counts(xs).items())\n```\n")
    r = parse_code(three, "f")
    assert r.ok and _runs(r.code, SUM_OK)
    after = ("```python\ndef f(xs):\n    return total(xs)\n```\nwhere `total` is:\n"
             "```python\ndef total(xs):\n    return sum(xs)\n```\n")
    assert _runs(parse_code(after, "f").code, SUM_OK)


def test_code_the_revised_block_wins_over_the_first_attempt():
    text = ("A naive version first:\n```python\ndef f(xs):\n    # O(n^2), and wrong for empty input\n"
            "    total = 0\n    for i in range(len(xs)):\n        for j in range(i):\n            pass\n"
            "    return total\n```\nThat is too slow and wrong. A better version:\n"
            "```python\ndef f(xs):\n    return sum(xs)\n```\n")
    r = parse_code(text, "f")
    assert r.ok and r.code == "def f(xs):\n    return sum(xs)"
    # ... unless the revision was cut off (does not parse) while the first attempt is whole
    cut = ("```python\ndef f(xs):\n    return sum(xs)\n```\nWith type hints:\n"
           "```python\ndef f(xs: list[int]) -> int:\n    return sum(xs")
    assert parse_code(cut, "f").code == "def f(xs):\n    return sum(xs)"
    # a test block that imports the entry point does not count as defining it
    tests_after = ("```python\ndef f(xs):\n    return sum(xs)\n```\n```python\nfrom solution import f\n\n"
                   "assert f([1]) == 1\n```")
    assert parse_code(tests_after, "f").code == "def f(xs):\n    return sum(xs)"


def test_code_fence_indented_in_a_list_is_dedented():
    text = ("Steps:\n\n1. Write the function:\n   ```python\n   def f(xs):\n       total = 0\n"
            "       for x in xs:\n           total += x\n       return total\n   ```\n2. Call it.\n")
    r = parse_code(text, "f")
    assert r.ok and r.error == "" and r.code.startswith("def f(xs):") and _runs(r.code, SUM_OK)
    bs = fenced_blocks(text)
    assert len(bs) == 1 and bs[0].closed and bs[0].body.startswith("def f")


def test_code_fence_inside_a_docstring_or_a_line_does_not_close_the_block():
    doc = ('```python\ndef f(xs):\n    """Sum of xs.\n\n    ```\n    f([1]) == 1\n    ```\n    """\n'
           "    return sum(xs)\n```\nDone.")
    r = parse_code(doc, "f")
    assert r.ok and r.error == "" and _runs(r.code, SUM_OK) and r.code.endswith("return sum(xs)")
    inline = '```python\ndef f(xs):\n    fence = "```"  # markdown fence\n    return sum(xs)\n```'
    r = parse_code(inline, "f")
    assert r.ok and _runs(r.code, SUM_OK) and "fence = " in r.code


def test_code_unfenced_with_a_prose_line_that_looks_like_code():
    r = parse_code("Sure.\nn = len(xs) is the size, so:\ndef f(xs):\n    return sum(xs)\n", "f")
    assert r.ok and _runs(r.code, SUM_OK)


# ---- tests: pytest functions and unittest classes ---------------------------------------------

def _srcs(r):
    return [t.test for t in r.tests]


def test_tests_pytest_functions_become_one_test_per_assert():
    text = ("Here are some unit tests using pytest:\n\n```python\nimport pytest\nfrom solution import add\n\n\n"
            "def test_add_positive():\n    assert add(1, 2) == 3\n    assert add(10, 20) == 30\n\n\n"
            "def test_add_zero():\n    \"\"\"Zero is neutral.\"\"\"\n    assert add(0, 0) == 0\n"
            "    assert add(1, 2) == 3\n```\n\n"
            "Run them with `pytest test_add.py`.")
    r = parse_tests(text, FUNC)
    assert r.ok and _srcs(r) == ["assert add(1, 2) == 3", "assert add(10, 20) == 30", "assert add(0, 0) == 0"]
    assert r.dropped == 1  # the duplicate


def test_tests_unittest_class_asserts_are_rewritten():
    text = ("```python\nimport unittest\nfrom main import *\n\n\nclass TestAdd(unittest.TestCase):\n"
            "    def test_basic(self):\n        self.assertEqual(add(1, 2), 3)\n"
            "        self.assertTrue(add(1, 1) == 2)\n"
            "        self.assertFalse(add(1, 1) == 3)\n        self.assertIn(add(1, 1), [2, 4])\n"
            "        self.assertNotIn(add(1, 1), [3])\n"
            "        self.assertAlmostEqual(add(0.1, 0.2), 0.3)\n"
            "        self.assertAlmostEqual(add(0.1, 0.2), 0.3, places=3)\n\n"
            "    def test_errors(self):\n        with self.assertRaises(TypeError):\n            add(1, 'a')\n\n\n"
            "if __name__ == '__main__':\n    unittest.main()\n```")
    r = parse_tests(text, FUNC)
    got = _srcs(r)
    last = [src.split("\n")[-1] for src in got[:7]]
    assert last == ["assert add(1, 2) == 3", "assert add(1, 1) == 2", "assert not add(1, 1) == 3",
                    "assert add(1, 1) in [2, 4]", "assert add(1, 1) not in [3]",
                    "assert _coevo_almost_equal(add(0.1, 0.2), 0.3)",
                    "assert _coevo_almost_equal(add(0.1, 0.2), 0.3, places=3)"]
    raises = got[7]
    assert raises.startswith("try:\n    add(1, 'a')\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError(")
    assert len(got) == 8
    assert all(_runs(ADD, src) for src in got)  # every test runs as written against a right add
    assert _runs(ADD, raises) and not _runs("def add(a, b):\n    return 0", raises)


def test_tests_assert_is_none_and_pytest_raises():
    text = ("```python\nimport pytest\n\ndef test_neg():\n    assert add(2, -2) == 0\n\n"
            "def test_raises():\n    with pytest.raises((TypeError, ValueError), match='unsupported'):\n"
            "        add(1, 'x')\n```")
    r = parse_tests(text, FUNC)
    assert len(r.tests) == 2 and r.tests[1].test.startswith(
        "import re\ntry:\n    add(1, 'x')\nexcept (TypeError, ValueError) as _raised:\n"
        "    assert re.search('unsupported', str(_raised))\nelse:\n")
    assert "pytest" not in r.tests[1].test and _runs(ADD, r.tests[1].test)
    u = parse_tests("```python\nclass T(unittest.TestCase):\n    def test_n(self):\n"
                    "        self.assertIsNone(add.__doc__)\n        self.assertIsNotNone(add(1, 2))\n```", FUNC)
    assert _srcs(u) == ["assert add.__doc__ is None", "assert add(1, 2) is not None"]


def test_tests_function_with_local_variables_is_one_multi_statement_test():
    text = ("```python\nimport math\nfrom solution import add\n\n\nclass TestAdd(unittest.TestCase):\n"
            "    def test_many(self):\n        cases = [(1, 2, 3), (2, 2, 4)]\n        for a, b, want in cases:\n"
            "            with self.subTest(a=a, b=b):\n                self.assertEqual(add(a, b), want)\n\n"
            "    def test_float(self):\n        result = add(0.5, 0.25)\n"
            "        self.assertTrue(math.isclose(result, 0.75))\n```")
    r = parse_tests(text, FUNC)
    assert len(r.tests) == 2, _srcs(r)
    many, flt = _srcs(r)
    assert many.startswith("cases = [(1, 2, 3), (2, 2, 4)]\nfor a, b, want in cases:") and "self" not in many
    assert flt.startswith("import math\nresult = add(0.5, 0.25)\n") and "solution" not in flt
    for src in (many, flt):
        assert _runs(ADD, src) and not _runs("def add(a, b):\n    return a - b", src)


def test_tests_parametrize_gives_one_test_per_parameter_set():
    text = ("```python\nimport pytest\nfrom solution import add\n\n\n"
            "@pytest.mark.parametrize(\"a, b, expected\", [\n    (1, 2, 3),\n    (-1, 1, 0),\n"
            "    ([1], [2], [1, 2]),\n])\n"
            "def test_add(a, b, expected):\n    assert add(a, b) == expected\n\n\n"
            "@pytest.mark.parametrize('n', [0, 5])\ndef test_zero(n):\n    assert add(n, 0) == n\n```")
    r = parse_tests(text, FUNC)
    assert _srcs(r) == ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add([1], [2]) == [1, 2]",
                        "assert add(0, 0) == 0", "assert add(5, 0) == 5"]


def test_tests_parametrize_binds_a_mutable_value_used_twice():
    task = Task("t2", "Sort xs in place.", "function", "sort_in_place")
    text = ("```python\nimport pytest\n\n@pytest.mark.parametrize('xs, want', [([3, 1, 2], [1, 2, 3])])\n"
            "def test_sort(xs, want):\n    sort_in_place(xs)\n    assert xs == want\n```")
    r = parse_tests(text, task)
    assert len(r.tests) == 1
    src = r.tests[0].test
    good = "def sort_in_place(xs):\n    xs.sort()"
    assert _runs(good, src) and not _runs("def sort_in_place(xs):\n    sorted(xs)", src)


def test_tests_functions_that_cannot_run_alone_are_rejected():
    # (a fixture that only returns a value is read: tests/test_real_outputs2.py, and so is one giving its
    # params as they are, request.param: tests/test_real_outputs4.py; one of pytest's own fixtures is not)
    text = ("```python\nimport pytest\n\n@pytest.fixture(params=[[1, 2]])\ndef numbers(request):\n"
            "    return request.param\n\n"
            "def test_fixture(numbers):\n    assert add(*numbers) == 3\n\n"
            "@pytest.mark.skip(reason='later')\ndef test_skipped():\n    assert add(1, 1) == 2\n\n"
            "def test_ok():\n    assert add(2, 3) == 5\n\ndef test_tmp(tmp_path):\n    assert add(1, 1) == 2\n```")
    r = parse_tests(text, FUNC)
    # (the skipped test is left out as pytest leaves it, not counted as rejected; tmp_path is)
    assert _srcs(r) == ["assert add(*[1, 2]) == 3", "assert add(2, 3) == 5"] and r.dropped >= 1


def test_tests_imports_used_by_asserts_come_first():
    text = ("```python\nimport math\nfrom solution import add\n\nassert math.isclose(add(0.1, 0.2), 0.3)\n\n"
            "def test_pi():\n    assert math.isclose(add(math.pi, 0), math.pi)\n```")
    r = parse_tests(text, FUNC)
    assert _srcs(r) == ["import math\nassert math.isclose(add(0.1, 0.2), 0.3)",
                        "import math\nassert math.isclose(add(math.pi, 0), math.pi)"]


def test_tests_solution_module_attribute_and_main_guard():
    text = ("```python\nimport solution\n\ndef test_add():\n    assert solution.add(1, 2) == 3\n\n"
            "if __name__ == '__main__':\n    assert add(2, 2) == 4\n    test_add()\n    print('ok')\n```")
    r = parse_tests(text, FUNC)
    assert _srcs(r) == ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]


def test_tests_the_cap_counts_tests_from_test_functions():
    body = "\n".join(f"    assert add({i}, 1) == {i + 1}" for i in range(6))
    r = parse_tests(f"```python\ndef test_many():\n{body}\n```", FUNC, max_tests=4)
    assert len(r.tests) == 4 and r.dropped == 2


# ---- converted tests check exactly what pytest/unittest check (red-team pass 13, F3) ----------

F = Task("t3", "f", "function", "f")


def _verdicts(answer: str, right: str, wrong: str) -> tuple[list[bool], list[bool], int]:
    """Whether each converted test passes the right and the wrong program; how many were dropped."""
    r = parse_tests(answer, F)
    return [_runs(right, t) for t in _srcs(r)], [_runs(wrong, t) for t in _srcs(r)], r.dropped


def _ut(body: str) -> str:
    return f"```python\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n{body}\n```"


def _pt(body: str) -> str:
    return f"```python\nimport pytest\n\ndef test_x():\n{body}\n```"


def test_raises_match_and_assert_raises_regex_keep_the_message_check():
    right = "def f(x):\n    raise ValueError(f'x is negative: {x}')"
    wrong = "def f(x):\n    raise ValueError('bad')"
    for answer in (_pt("    with pytest.raises(ValueError, match='negative'):\n        f(-1)"),
                   _pt("    with pytest.raises(expected_exception=ValueError, match=r'neg\\w+: -1$'):\n        f(-1)"),
                   _ut("        with self.assertRaisesRegex(ValueError, 'negative'):\n            f(-1)"),
                   _ut("        self.assertRaisesRegex(ValueError, 'neg', f, -1)"),
                   _ut("        self.assertRaisesRegex(ValueError, 'neg.*-1', f, x=-1)")):
        ok, bad, _ = _verdicts(answer, right, wrong)
        assert ok == [True] and bad == [False], (answer, ok, bad, _srcs(parse_tests(answer, F)))
    # a right program that raises nothing, or another type, still fails; no pattern: any message
    none = "def f(x):\n    return x"
    assert _verdicts(_pt("    with pytest.raises(ValueError, match='neg'):\n        f(-1)"), right, none)[1] == [False]
    assert _verdicts(_pt("    with pytest.raises(ValueError):\n        f(-1)"), wrong, none) == ([True], [False], 0)


def test_pytest_approx_uses_pytests_own_tolerance():
    def check(expr: str, passing: list[str], failing: list[str]) -> None:
        answer = _pt(f"    assert f(1) {expr}")
        for v in passing + failing:
            assert bool(eval(f"({v}) {expr}", {"pytest": pytest})) == (v in passing)  # pytest's own verdict
            ok, _, dropped = _verdicts(answer, f"def f(x):\n    return {v}", "def f(x):\n    return None")
            assert ok == [v in passing] and dropped == 0, (expr, v, _srcs(parse_tests(answer, F)))
    check("== pytest.approx(1000000, abs=0.5)", ["1000000.4", "999999.5"], ["1000000.9", "999999.4"])
    check("== pytest.approx(100, rel=0.1)", ["110", "90", "109.9"], ["111", "89", "None", "'100'"])
    check("== pytest.approx(0.3)", ["0.1 + 0.2", "0.29999971"], ["0.3000004", "0.31"])  # rel 1e-6
    check("== pytest.approx(0, abs=1e-3)", ["0.0009", "-0.001"], ["0.0011"])
    check("== pytest.approx(1e-13)", ["1.05e-12", "0"], ["1.2e-12"])  # abs 1e-12 by default
    check("== pytest.approx(100, 0.1)", ["109"], ["111"])  # rel given by position
    check("== pytest.approx(100, rel=0.01, abs=5)", ["104.9"], ["105.1"])  # max(rel * 100, abs)
    check("!= pytest.approx(100, rel=0.1)", ["111"], ["109"])
    check("== pytest.approx(1e999)", ["1e999"], ["1e308", "-1e999"])  # infinity equals only itself
    check("== pytest.approx(1e999 - 1e999)", [], ["1e999 - 1e999", "0"])  # NaN never equal
    check("== pytest.approx(1e999 - 1e999, nan_ok=True)", ["1e999 - 1e999"], ["0"])
    # approx of a list: left out (counted as dropped), never weakened
    r = parse_tests(_pt("    assert f(1) == pytest.approx([0.1, 0.2])"), F)
    assert r.tests == [] and r.dropped == 1


def test_assert_count_equal_is_unittests_count():
    answer = _ut("        self.assertCountEqual(f(1), [1, False])")
    ok, bad, _ = _verdicts(answer, "def f(x):\n    return [True, 0]", "def f(x):\n    return [1, 1]")
    assert ok == [True] and bad == [False]
    unhashable = _ut("        self.assertCountEqual(f(1), [[1], [2], [2]])")
    ok, bad, _ = _verdicts(unhashable, "def f(x):\n    return ([2], [1], [2])",
                           "def f(x):\n    return [[1], [2], [1]]")
    assert ok == [True] and bad == [False]
    short = "def f(x):\n    return [[1], [2]]"
    assert _verdicts(unhashable, "def f(x):\n    return [[2], [1], [2]]", short)[1] == [False]


def test_assert_almost_equal_is_unittests_rule():
    inf = "def f(x):\n    return float('inf')"
    ok, bad, _ = _verdicts(_ut("        self.assertAlmostEqual(f(1), float('inf'))"), inf,
                           "def f(x):\n    return 1e308")
    assert ok == [True] and bad == [False]
    # assertNotAlmostEqual(inf, inf): unittest fails it (first == second)
    ok, bad, _ = _verdicts(_ut("        self.assertNotAlmostEqual(f(1), float('inf'))"),
                           "def f(x):\n    return 1.0", inf)
    assert ok == [True] and bad == [False]
    ok, bad, _ = _verdicts(_ut("        self.assertNotAlmostEqual(f(1), 2, delta=-1)"),
                           "def f(x):\n    return 1", "def f(x):\n    return 2")
    assert ok == [True] and bad == [False]
    ok, bad, _ = _verdicts(_ut("        self.assertAlmostEqual(f(1), 2, delta=0.5)\n"
                               "        self.assertAlmostEqual(f(1), 2, 1)"),
                           "def f(x):\n    return 2.04", "def f(x):\n    return 2.06")
    assert ok == [True, True] and bad == [True, False]


def test_typed_unittest_equalities_keep_their_type_checks():
    ok, bad, _ = _verdicts(_ut("        self.assertListEqual(f(1), [1, 2])"),
                           "def f(x):\n    return [1, 2]", "def f(x):\n    return (1, 2)")
    assert ok == [True] and bad == [False]
    ok, bad, _ = _verdicts(_ut("        self.assertSequenceEqual(f(1), [1, 2])"),  # a tuple is fine here
                           "def f(x):\n    return (1, 2)", "def f(x):\n    return (1, 3)")
    assert ok == [True] and bad == [False]
    ok, bad, _ = _verdicts(_ut("        self.assertSetEqual(f(1), {1, 2})"),
                           "def f(x):\n    return {2, 1}", "def f(x):\n    return {1: 0, 2: 0}.keys()")
    assert ok == [True] and bad == [False]
    ok, bad, _ = _verdicts(_ut("        self.assertDictEqual(f(1), {'a': 1})"),
                           "def f(x):\n    return {'a': 1}",
                           "import types\ndef f(x):\n    return types.MappingProxyType({'a': 1})")
    assert ok == [True] and bad == [False]


def test_checks_that_cannot_be_converted_exactly_are_dropped():
    for answer in (_ut("        with self.assertRaises(ValueError) as cm:\n            f(-1)\n"
                       "        self.assertEqual(str(cm.exception), 'negative')"),
                   _pt("    with pytest.raises(ValueError) as e:\n        f(-1)\n    assert 'neg' in str(e.value)"),
                   _ut("        with self.assertWarns(UserWarning):\n            f(2)"),
                   _ut("        with self.assertLogs() as logs:\n            f(2)"),
                   _pt("    with pytest.warns(UserWarning):\n        f(2)"),
                   _pt("    with pytest.raises(ValueError, check=lambda e: e.args == (1,)):\n        f(2)"),
                   _pt("    assert f(1) == pytest.approx(0.1, rel=1e-3, foo=1)")):
        r = parse_tests(answer, F)
        assert r.tests == [] and r.dropped == 1, (answer, _srcs(r))


def test_set_up_with_checks_is_kept():
    answer = ("```python\nimport unittest\n\nclass T(unittest.TestCase):\n    def setUp(self):\n"
              "        self.assertEqual(f(0), 0)\n\n    def test_x(self):\n        self.assertEqual(f(1), 1)\n```")
    ok, bad, _ = _verdicts(answer, "def f(x):\n    return x", "def f(x):\n    return 1")
    assert ok == [True] and bad == [False]


def test_coevos_helpers_use_the_real_builtins_whatever_the_program_defines():
    """A test's free names are the program's where it defines them; the helpers a converted test
    carries (approx, count-equal...) must not answer with a program's own ``abs`` or ``isinstance``."""
    answer = ("```python\nimport pytest\n\ndef test_half():\n    assert half(3) == pytest.approx(1.5, abs=0.01)\n\n"
              "def test_count():\n    import unittest\n    unittest.TestCase().assertCountEqual(half(2), [1])\n```")
    tests = parse_tests(answer, Task("h", "half", entry_point="half")).tests
    approx = next(t.test for t in tests if "approx" in t.test)
    shadow = "def abs(x):\n    return 0\ndef max(*a):\n    return 10\ndef half(x):\n    return 7\n"
    assert not _runs(shadow, approx)
    assert _runs("def half(x):\n    return x / 2\n", approx)


def test_an_answer_starting_with_a_space_then_a_fenced_program_runs_that_program():
    """Some decoders start an answer with a space: its first prose line, indented, was taken for
    code before a bare fence (the shape of a completion body), so the prose ran and the program in
    the fence did not (review of 34b139d)."""
    loop = "for _ in range(int(input())):\n    a, b = map(int, input().split())\n    print(a + b)"
    got = parse_code(" Here is my solution.\n\n```\n" + loop + "\n```\n", None)
    assert got.ok and got.code == loop
    got = parse_code(" Here:\n```\nprint(f(1))\n```\n\n```python\ndef f(x):\n    return x + 1\n```\n", "f")
    assert got.ok and "def f(x):" in got.code
    body = parse_code("    return x + 1\n```\nThis adds one.\n", None)  # a completion body still is code
    assert body.code.strip() == "return x + 1"


def test_trailing_comment_lines_cost_linear_time():
    """An unfenced answer ending in thousands of comment lines: dropping them was a regex that
    backtracked from every newline (40,000 characters: 21.6 s of the parent's time)."""
    import time

    answer = "x = 1" + "\n#" * 19990 + "\ny = 2"
    t0 = time.perf_counter()
    got = parse_code(answer, None)
    assert time.perf_counter() - t0 < 5.0  # (linear: ~0.05 s; the regex: 21.6 s)
    assert got.ok and got.code.startswith("x = 1") and got.code.endswith("y = 2")
    assert parse_code("Here:\nx = 1\ny = 2\n# done\n#\n", None).code == "x = 1\ny = 2"
