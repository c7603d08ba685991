"""Worked examples read from task statements (matrix.statement_examples)."""

from matrix.statement_examples import prompt_examples, split_examples, task_examples
from matrix.tasks import Task


def _asserts(prompt, entry="f"):
    return [t.test for t in prompt_examples(prompt, entry)]


def test_doctest_examples_with_wrapped_calls_and_comments():
    prompt = '''def f(xs, k):
    """Sum the first k.
    >>> f([1, 2, 3], 2)
    3
    >>> f([], 0)
    0
    >>> round(f([0.5, 0.25], 2), 2)  # floats
    0.75
    >>> f(
    ...
    >>> g(1)
    2
    """
'''
    assert _asserts(prompt) == [
        "assert f([1, 2, 3], 2) == 3",
        "assert f([], 0) == 0",
        "assert abs((round(f([0.5, 0.25], 2), 2)) - (0.75)) <= 1e-6 * max(1.0, abs(0.75))",
    ]


def test_inline_examples_and_their_separators():
    prompt = '''def f(s):
    """For example:
    f("ab") ==> 'ba'
    f("a") -> 'a'
    f('') ➞ ''
    f("xy") should return "yx".
    f("no") == "on" (two letters)
    f("z") => true
    f(abc) => False
    """
'''
    assert _asserts(prompt) == [  # the call as written, the value as Python writes it
        """assert f("ab") == 'ba'""", """assert f("a") == 'a'""", "assert f('') == ''",
        """assert f("xy") == 'yx'""", """assert f("no") == 'on'""", """assert f("z") == True""",
    ]


def test_what_is_not_an_example_is_skipped():
    prompt = '''def tri(n):
    """tri(1) = 3
    tri(n) = 1 + n / 2, if n is even.
    tri(2) == 1 + (2 / 2) = 2
    fruit("5 apples", 19) ->19 - 5 - 6 = 8
    find(["aa", "b"]) == ""aa""
    def tri(n) -> list
    """
'''
    assert _asserts(prompt, "tri") == []  # definitions (bare =), arithmetic after the value
    assert _asserts(prompt, "fruit") == [] and _asserts(prompt, "find") == []
    assert prompt_examples(prompt, None) == [] and prompt_examples("", "tri") == []
    assert _asserts("f(1) ==> 1e999") == []  # reads as inf: no assert can spell it


def test_input_output_blocks_become_positional_calls():
    prompt = '''def pluck(arr, k):
    """Example 1:
        Input: arr = [4, 2, 3], k = 2
        Output: [2, 1]
    Example 2:
        Input: [], 1
        Output: []
    """
'''
    assert _asserts(prompt, "pluck") == ["assert pluck([4, 2, 3], 2) == [2, 1]", "assert pluck([], 1) == []"]


def test_stdio_sample_blocks():
    statement = """Print the sum of n numbers.

Input

The first line holds n, the second the numbers.

Output

One integer.

Examples

Input

3
1 2 3


Output

6

Input
2
5 -5
Output
0

Note

1 + 2 + 3 = 6.
"""
    got = [(t.input, t.output) for t in prompt_examples(statement, None, kind="stdio")]
    assert got == [("3\n1 2 3\n", "6\n"), ("2\n5 -5\n", "0\n")]  # not the format section
    sample = "Reverse a line.\nSample Input 1:\nabc\nSample Output 1:\ncba\nExplanation: reversed.\n"
    assert [(t.input, t.output) for t in prompt_examples(sample, None, kind="stdio")] == [("abc\n", "cba\n")]


def test_task_examples_follow_the_task_kind_and_limit():
    fn = Task(task_id="f", prompt='def f(x):\n    """\n    >>> f(1)\n    2\n    >>> f(1)\n    2\n    """\n',
              kind="function", entry_point="f", tests=[], solutions=[])
    assert [t.test for t in task_examples(fn)] == ["assert f(1) == 2"]  # repeats once
    many = "".join(f"f({i}) ==> {i + 1}\n" for i in range(40))
    assert len(prompt_examples(many, "f")) == 16 and len(prompt_examples(many, "f", limit=3)) == 3


def test_split_examples_cuts_the_example_columns_off():
    tests, ex = split_examples([1, 0, 1, 0, 1, 1], 2, 2)  # 2 codes x (2 tests + 1 example)
    assert tests.tolist() == [[True, False], [False, True]] and ex.tolist() == [[True], [True]]
    tests, ex = split_examples([[1, 0], [0, 0]], 2, 2)  # no examples
    assert tests.shape == (2, 2) and ex.shape == (2, 0)


def test_a_hostile_statement_costs_a_bounded_number_of_parses(monkeypatch):
    """Red-team pass 12: one doctest line `>>> (` + N '#' was parsed once per '#' (200 KB of
    prompt held `coevo select` 64 s). Parses are counted, not timed."""
    import ast as ast_module

    from matrix import statement_examples

    calls = []
    real = ast_module.parse
    monkeypatch.setattr(statement_examples.ast, "parse", lambda *a, **k: calls.append(1) or real(*a, **k))
    prompt = "Return the square of x.\n>>> (" + "#" * 200_000 + "\n" + ">>> f(" + "(" * 1000 + "\n"
    assert statement_examples.prompt_examples(prompt, "f") == []
    assert len(calls) < 100
    calls.clear()
    hostile = ("f(" * 20_000 + "\n") + ("f(1) == " + "f(" * 1_000 + "\n") * 10
    assert statement_examples.prompt_examples(hostile + ">>> f(2)  # why\n4\n", "f")[0].test == "assert f(2) == 4"
    assert len(calls) < 2_000
