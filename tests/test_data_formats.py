"""APPS / TACO, LiveCodeBench and DeepCoder / verl records as coevo tasks (coevo/data_formats.py).

The records are built by hand, shaped as the datasets ship them: APPS's ``solutions`` and
``input_output`` are JSON strings; LiveCodeBench's ``private_test_cases`` is base64 of zlib of a
pickled JSON string. The APPS comparison rule is checked against a transcription of
``hendrycks/apps`` ``eval/testing_util.py`` (call-based branch)."""

import base64
import json
import pickle
import subprocess
import sys
import zlib

import pytest

from coevo.data import detect_format, load_any
from matrix.errors import InputError
from matrix.plans import plan_test
from matrix.tasks import Test

# ----------------------------------------------------------------------------- helpers


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "coevo", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def matrix(tmp_path, tasks_file, task_id, codes):
    """``coevo matrix`` on the raw dataset file with the given codes: the task's status row."""
    codes_file = write_jsonl(tmp_path / "codes.jsonl", [{"task_id": task_id, "code": c} for c in codes])
    out = tmp_path / "m.jsonl"
    r = run_cli("matrix", "--tasks", str(tasks_file), "--codes", str(codes_file), "--out", str(out),
                "--timeout", "5", "--workers", "1")
    assert r.returncode == 0, r.stderr
    rows = {row["task_id"]: row for row in map(json.loads, out.read_text().splitlines())}
    return rows[task_id]["status"]


def judge(test: Test, value):
    """The parent's verdict on a candidate's returned ``value`` (as the matrix judges it)."""
    plan = plan_test(test)
    assert plan.mode == "values", plan  # judged outside the program's process
    return bool(plan.judge([value]))


def apps_rule(output, expected):
    """hendrycks/apps eval/testing_util.py, call-based branch (transcribed)."""
    if isinstance(output, tuple):
        output = list(output)
    ok = output == expected
    if isinstance(expected, list) and expected:
        ok = ok or (output == expected[0])
    try:
        if isinstance(output[0], tuple):
            ok = ok or ([list(x) for x in output] == expected[0])
    except Exception:  # noqa: BLE001 - as APPS: any failure leaves the result as it was
        pass
    return bool(ok)


def apps_record(**kw):
    rec = {"problem_id": 7, "question": "Q", "solutions": json.dumps([]), "starter_code": "",
           "difficulty": "introductory", "url": "https://example.org/p"}
    rec.update(kw)
    return rec


# ----------------------------------------------------------------------------- APPS / TACO

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"


def test_apps_stdin_record_becomes_a_stdio_task(tmp_path):
    rec = apps_record(problem_id=4000, question="Print a + b.", solutions=json.dumps([SUM]),
                      input_output=json.dumps({"inputs": ["1 2\n", ["3 4"]], "outputs": ["3\n", ["7"]]}))
    assert detect_format(rec) == "apps"
    (task,) = load_any(write_jsonl(tmp_path / "apps.jsonl", [rec]))
    assert task.task_id == "apps/4000" and task.kind == "stdio" and task.entry_point is None
    # an input or output given as a list of lines is joined with newlines, as testing_util does
    assert task.tests == [Test.stdio("1 2\n", "3\n"), Test.stdio("3 4", "7")]
    assert task.prompt.startswith("Print a + b.")
    assert len(task.solutions) == 1 and task.solutions[0].endswith(SUM)
    assert task.meta["source"] == "apps" and task.meta["difficulty"] == "introductory"


def test_coevo_data_convert_takes_every_format_by_name(tmp_path):
    """`coevo data convert --format apps` was refused by argparse (its choices were a list of their
    own, without the formats added since): they are now the loader's FORMATS."""
    from coevo.data import FORMATS

    rec = apps_record(problem_id=4001, solutions=json.dumps([SUM]),
                      input_output=json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]}))
    src = write_jsonl(tmp_path / "apps.jsonl", [rec])
    out = tmp_path / "tasks.jsonl"
    r = run_cli("data", "convert", "--input", str(src), "--out", str(out), "--format", "apps")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text().splitlines()[0])["task_id"] == "apps/4001"
    r = run_cli("data", "convert", "--help")
    assert all(f in r.stdout for f in FORMATS)


def test_apps_call_based_tests_follow_the_apps_comparison_rule(tmp_path):
    """A tuple result compares as a list, an output wrapped in a one-element list matches its
    element, a list of tuples matches a wrapped list of lists; every verdict equals APPS's."""
    expected_values = [[[1, 3]], [1, 3], 5, [5], "ab", [["ab"]], [[[1, 2], [3, 4]]], [], {"a": 1}, [{"a": 1}],
                       None, [None], [[]], True, [1.5]]
    outputs = [(1, 3), [1, 3], [[1, 3]], 5, [5], (5,), "ab", ["ab"], ("ab",), [(1, 2), (3, 4)],
               ((1, 2), (3, 4)), [[1, 2], [3, 4]], [(1, 2), [3, 4]], [], (), {"a": 1}, None, [None],
               [[]], True, 1, 1.5, [1.5], (1.5,), 0, [0, 1]]
    recs = [apps_record(problem_id=i, input_output=json.dumps({"fn_name": "f", "inputs": [[0]], "outputs": [e]}))
            for i, e in enumerate(expected_values)]
    tasks = load_any(write_jsonl(tmp_path / "apps.jsonl", recs))
    for task, e in zip(tasks, expected_values):
        assert task.kind == "function" and task.entry_point == "f"
        (test,) = task.tests
        for out in outputs:
            assert judge(test, out) == apps_rule(out, e), (test, out, e)


def test_apps_call_based_task_end_to_end(tmp_path):
    """coevo matrix on the raw APPS file: the reference (returns a tuple where the data holds a
    wrapped list) passes every test; a wrong program fails."""
    ref = "def min_max(xs):\n    return (min(xs), max(xs))\n"
    rec = apps_record(problem_id=2500, question="Return the min and max of xs.", solutions=json.dumps([ref]),
                      starter_code="def min_max(xs):\n\t",
                      input_output=json.dumps({"fn_name": "min_max", "inputs": [[[3, 1, 2]], [[5]]],
                                               "outputs": [[[1, 3]], [[5, 5]]]}))
    tasks_file = write_jsonl(tmp_path / "apps.jsonl", [rec])
    (task,) = load_any(tasks_file)
    assert "def min_max(xs):" in task.prompt  # the starter code is part of the prompt
    wrong = "def min_max(xs):\n    return (max(xs), min(xs))\n"
    status = matrix(tmp_path, tasks_file, "apps/2500", [task.solutions[0], wrong])
    assert status == [["pass", "pass"], ["fail", "pass"]]


def test_apps_class_solution_starter_calls_a_solution_method(tmp_path):
    ref = ("class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
           "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
           "                return [seen[target - x], i]\n            seen[x] = i\n")
    rec = apps_record(problem_id=300, question="Two sum.", solutions=json.dumps([ref]),
                      starter_code=ref.split("        seen")[0],
                      input_output=json.dumps({"fn_name": "twoSum", "inputs": [[[2, 7, 11, 15], 9], [[3, 3], 6]],
                                               "outputs": [[0, 1], [0, 1]]}))
    tasks_file = write_jsonl(tmp_path / "apps.jsonl", [rec])
    (task,) = load_any(tasks_file)
    assert task.entry_point == "Solution"
    assert all("Solution().twoSum(" in (t.test or t.call or "") for t in task.tests)
    # the reference leans on APPS's import header (List): it runs with it, as APPS runs it; a
    # candidate written the same way (as the dataset holds it) gets the header too, as APPS's
    # run_test puts it before the program it grades (tests/test_real_outputs2.py)
    wrong = task.solutions[0].replace("[seen[target - x], i]", "[i]")
    status = matrix(tmp_path, tasks_file, "apps/300", [task.solutions[0], wrong, ref])
    assert status == [["pass", "pass"], ["fail", "fail"], ["pass", "pass"]]


def test_apps_dict_inputs_and_outputs_get_int_keys_as_apps_gives_them():
    """JSON makes dict keys strings; APPS turns a first-argument dict's keys (and an output
    dict's) back into ints (and wraps the output dict in a list)."""
    from coevo.data_formats import from_apps

    rec = apps_record(input_output=json.dumps({"fn_name": "g", "inputs": [[{"1": "a", "2": "b"}]],
                                               "outputs": [{"3": 4}]}))
    (test,) = from_apps(rec, {"file": "x.jsonl", "line": 1}).tests
    assert "g({1: 'a', 2: 'b'})" in (test.test or test.call or "")
    assert judge(test, {3: 4}) and not judge(test, {"3": 4})


def test_taco_record_without_problem_id(tmp_path):
    rec = {"question": "Echo.", "solutions": json.dumps(["print(input())\n"]), "starter_code": "",
           "input_output": json.dumps({"inputs": ["hi\n"], "outputs": ["hi\n"]}), "difficulty": "EASY",
           "source": "codechef", "name": "echo", "tags": "[]"}
    (task,) = load_any(write_jsonl(tmp_path / "taco.jsonl", [rec]))
    assert task.task_id == "taco/1" and task.meta["source"] == "taco" and task.kind == "stdio"


@pytest.mark.parametrize("field, value, message", [
    ("input_output", "{not json", "not JSON"),
    ("input_output", json.dumps({"inputs": ["1"], "outputs": []}), "1 inputs but 0 outputs"),
    ("input_output", json.dumps({"fn_name": "f", "inputs": ["1"], "outputs": [1]}), "list of arguments"),
    ("solutions", "[1, 2", "not JSON"),
])
def test_malformed_apps_records_are_one_line_errors(tmp_path, field, value, message):
    good = apps_record(problem_id=1, input_output=json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]}))
    bad = dict(good, problem_id=2)
    bad[field] = value
    src = write_jsonl(tmp_path / "apps.jsonl", [good, bad])
    with pytest.raises(InputError) as err:
        load_any(src)
    assert err.value.line == 2 and (err.value.field or "").startswith(field) and message in err.value.message
    out = tmp_path / "out.jsonl"
    r = run_cli("data", "convert", "--input", str(src), "--out", str(out))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "apps.jsonl:2: field" in r.stderr
    assert not out.exists()


# ----------------------------------------------------------------------------- LiveCodeBench


def lcb_private(tests) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def lcb_record(**kw):
    rec = {"question_title": "T", "question_content": "Q", "platform": "leetcode", "question_id": "2876",
           "contest_id": "weekly-contest-1", "contest_date": "2023-08-01T00:00:00", "starter_code": "",
           "difficulty": "easy", "public_test_cases": "[]", "private_test_cases": lcb_private([]),
           "metadata": "{}"}
    rec.update(kw)
    return rec


def test_lcb_functional_record_reads_public_and_private_tests(tmp_path):
    starter = "class Solution:\n    def addPair(self, nums: List[int], k: int) -> List[int]:\n        "
    public = [{"input": "[1, 2]\n3", "output": "[4, 5]", "testtype": "functional"}]
    private = [{"input": "[]\n0", "output": "[]", "testtype": "functional"},
               {"input": "[\"a\"]\n1", "output": "7", "testtype": "functional"}]
    rec = lcb_record(starter_code=starter, public_test_cases=json.dumps(public),
                     private_test_cases=lcb_private(private), metadata=json.dumps({"func_name": "addPair"}))
    assert detect_format(rec) == "livecodebench"
    tasks_file = write_jsonl(tmp_path / "lcb.jsonl", [rec])
    (task,) = load_any(tasks_file)
    assert task.task_id == "lcb/2876" and task.kind == "function" and task.entry_point == "Solution"
    assert len(task.tests) == 3 and task.meta["visible_tests"] == [0]
    assert starter.strip() in task.prompt
    first, _, third = task.tests
    assert "Solution().addPair([1, 2], 3)" in (first.test or first.call or "")
    # lcb_runner: a tuple prediction compares as a list; nothing else is loosened
    assert judge(first, [4, 5]) and judge(first, (4, 5)) and not judge(first, [[4, 5]])
    assert judge(third, 7) and not judge(third, [7])
    ref = ("class Solution:\n    def addPair(self, nums, k):\n"
           "        return 7 if nums == ['a'] else tuple(x + k for x in nums)\n")
    wrong = "class Solution:\n    def addPair(self, nums, k):\n        return [x + k + 1 for x in nums]\n"
    status = matrix(tmp_path, tasks_file, "lcb/2876", [ref, wrong])
    assert status == [["pass", "pass", "pass"], ["fail", "pass", "error"]]  # str + int raises


def test_lcb_stdin_record_end_to_end(tmp_path):
    public = [{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]
    private = [{"input": "1\n10\n", "output": "10\n", "testtype": "stdin"}]
    rec = lcb_record(platform="atcoder", question_id="abc301_a", public_test_cases=json.dumps(public),
                     private_test_cases=lcb_private(private))
    tasks_file = write_jsonl(tmp_path / "lcb.jsonl", [rec])
    (task,) = load_any(tasks_file)
    assert task.kind == "stdio" and task.tests == [Test.stdio("3\n1 2 3\n", "6\n"), Test.stdio("1\n10\n", "10\n")]
    ok = "input()\nprint(sum(map(int, input().split())))\n"
    status = matrix(tmp_path, tasks_file, "lcb/abc301_a", [ok, "print(6)\n"])
    assert status == [["pass", "pass"], ["pass", "fail"]]


def test_lcb_private_tests_as_plain_json_are_read_too(tmp_path):
    private = [{"input": "1\n", "output": "1\n", "testtype": "stdin"}]
    rec = lcb_record(question_id="x1", private_test_cases=json.dumps(private))
    (task,) = load_any(write_jsonl(tmp_path / "lcb.jsonl", [rec]))
    assert task.tests == [Test.stdio("1\n", "1\n")]


class _System:
    """Pickles as a call of os.system (the attack a plain pickle.loads would run)."""

    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        import os

        return (os.system, (self.cmd,))


def test_lcb_private_tests_that_pickle_a_call_are_refused_and_run_nothing(tmp_path):
    marker = tmp_path / "pwned"
    payload = base64.b64encode(zlib.compress(pickle.dumps(_System(f"touch {marker}")))).decode()
    rec = lcb_record(question_id="evil", private_test_cases=payload)
    src = write_jsonl(tmp_path / "lcb.jsonl", [rec])
    with pytest.raises(InputError) as err:
        load_any(src)
    assert err.value.field == "private_test_cases" and err.value.line == 1
    out = tmp_path / "out.jsonl"
    r = run_cli("data", "convert", "--input", str(src), "--out", str(out))
    assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0
    assert "lcb.jsonl:1: field 'private_test_cases'" in r.stderr
    assert not marker.exists() and not out.exists()


@pytest.mark.parametrize("private, message", [
    ("!!!not base64", "base64"),
    (base64.b64encode(b"not zlib").decode(), "zlib"),
    (base64.b64encode(zlib.compress(pickle.dumps(["a list"]))).decode(), "string"),
    (lcb_private({"input": "1"}), "list"),
])
def test_malformed_lcb_private_tests_are_one_line_errors(tmp_path, private, message):
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "lcb.jsonl", [lcb_record(private_test_cases=private)]))
    assert err.value.field == "private_test_cases" and message in err.value.message


def test_lcb_functional_test_without_func_name_is_an_error(tmp_path):
    public = [{"input": "1", "output": "1", "testtype": "functional"}]
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "lcb.jsonl", [lcb_record(public_test_cases=json.dumps(public))]))
    assert err.value.field == "metadata.func_name"
    bad_input = [{"input": "[1,", "output": "1", "testtype": "functional"}]
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "lcb2.jsonl", [lcb_record(public_test_cases=json.dumps(bad_input),
                                                                  metadata=json.dumps({"func_name": "f"}))]))
    assert err.value.field == "public_test_cases[0].input" and "JSON" in err.value.message


# ----------------------------------------------------------------------------- DeepCoder / verl


def test_deepcoder_records_in_each_subset_layout(tmp_path):
    """agentica-org/DeepCoder-Preview-Dataset: ``problem`` and ``tests`` (a JSON string) laid out
    as its subsets have them: taco (APPS's inputs/outputs), lcbv5 (LiveCodeBench tests, func_name
    in ``metadata``), primeintellect (``type: stdin_stdout``) and codeforces (input/output)."""
    taco = {"problem": "Double it.", "tests": json.dumps({"inputs": [[2]], "outputs": [[4]], "fn_name": "double"}),
            "starter_code": "def double(x):\n    ", "metadata": "{}"}
    lcb = {"problem": "Add.", "starter_code": "class Solution:\n    def add(self, a: int, b: int) -> int:\n        ",
           "tests": json.dumps([{"input": "1\n2", "output": "3", "testtype": "functional"}]),
           "metadata": json.dumps({"func_name": "add"})}
    prime = {"problem": "Sum.", "tests": json.dumps([{"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"}])}
    codeforces = {"problem": "Max.", "tests": json.dumps([{"input": "3 6 9", "output": "9"}]), "metadata": {}}
    assert all(detect_format(r) == "deepcoder" for r in (taco, lcb, prime, codeforces))
    t_taco, t_lcb, t_prime, t_cf = load_any(write_jsonl(tmp_path / "dc.jsonl", [taco, lcb, prime, codeforces]))
    assert t_taco.task_id == "deepcoder/1" and t_taco.kind == "function" and t_taco.entry_point == "double"
    assert judge(t_taco.tests[0], 4) and judge(t_taco.tests[0], [4]) and not judge(t_taco.tests[0], 5)
    assert t_lcb.entry_point == "Solution" and "Solution().add(1, 2)" in (t_lcb.tests[0].call or "")
    assert judge(t_lcb.tests[0], 3) and not judge(t_lcb.tests[0], [3])  # LiveCodeBench's rule
    assert t_prime.kind == "stdio" and t_prime.tests == [Test.stdio("1 2\n", "3\n")]
    assert t_cf.tests == [Test.stdio("3 6 9", "9")] and t_cf.meta["source"] == "deepcoder"


def test_deepcoder_function_call_tests_are_read_as_rllm_grades_them(tmp_path):
    """primeintellect's ``type: function_call`` tests: rllm (primeintellect_check_correctness) hands
    their inputs, outputs and the first test's fn_name to TACO's run_test: APPS's call-based rule."""
    cases = [{"input": [[1, 2]], "output": [[2, 1]], "type": "function_call", "fn_name": "rev"},
             {"input": [[]], "output": [[]], "type": "function_call", "fn_name": "rev"}]
    (task,) = load_any(write_jsonl(tmp_path / "dc.jsonl", [{"problem": "P", "tests": json.dumps(cases)}]))
    assert task.kind == "function" and task.entry_point == "rev"
    first = task.tests[0]
    assert "rev([1, 2])" in (first.test or first.call or "")
    for out in ([2, 1], (2, 1), [[2, 1]], [1, 2], None):
        assert judge(first, out) == apps_rule(out, [[2, 1]])
    bad = [{"input": "[1, 2]", "output": "[2, 1]", "type": "function_call", "fn_name": "rev"}]
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "bad.jsonl", [{"problem": "P", "tests": json.dumps(bad)}]))
    assert err.value.field == "tests.inputs[0]" and "list of arguments" in err.value.message


def test_deepcoder_tests_of_an_unknown_type_are_refused_by_name(tmp_path):
    rec = {"problem": "P", "tests": json.dumps([{"input": "1", "output": "1", "type": "interactive"}])}
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "dc.jsonl", [rec]))
    assert err.value.field == "tests[0].type" and "interactive" in err.value.message


def test_verl_preprocessed_record_end_to_end(tmp_path):
    """rllm's verl parquet rows (scripts/data/code_dataset.py): the chat ``prompt``, ``data_source``
    and the tests as ``reward_model.ground_truth`` (with func_name in each test's metadata)."""
    gt = [{"input": "[3, 1, 2]", "output": "[1, 2, 3]", "testtype": "functional", "metadata": {"func_name": "srt"}},
          {"input": "[]", "output": "[]", "testtype": "functional", "metadata": {"func_name": "srt"}}]
    rec = {"data_source": "livecodebench", "ability": "code",
           "prompt": [{"role": "system", "content": "You are a coder."},
                      {"role": "user", "content": "Sort xs.\n```python\ndef srt(xs):\n```"}],
           "reward_model": {"style": "rule", "ground_truth": json.dumps(gt)},
           "extra_info": {"split": "train", "index": 12}}
    assert detect_format(rec) == "verl"
    tasks_file = write_jsonl(tmp_path / "verl.jsonl", [rec])
    (task,) = load_any(tasks_file)
    assert task.task_id == "livecodebench/12" and task.prompt.startswith("Sort xs.") and task.entry_point == "srt"
    status = matrix(tmp_path, tasks_file, "livecodebench/12",
                    ["def srt(xs):\n    return tuple(sorted(xs))\n", "def srt(xs):\n    return xs\n"])
    assert status == [["pass", "pass"], ["fail", "pass"]]


def test_verl_records_whose_ground_truth_is_test_code_are_refused(tmp_path):
    rec = {"data_source": "kodcode", "prompt": [{"role": "user", "content": "P"}],
           "reward_model": {"style": "rule", "ground_truth": "def test_f():\n    assert f() == 1\n"}}
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "verl.jsonl", [rec]))
    assert err.value.field == "reward_model.ground_truth" and "kodcode" in err.value.message


def test_parquet_files_of_these_formats_load_as_their_json_lines_do(tmp_path):
    """Users bring the Hugging Face Parquet shards: nested verl structs and LiveCodeBench strings
    come through the datasets reader as through the JSON Lines one."""
    pytest.importorskip("datasets")
    import pandas as pd

    verl = {"data_source": "codeforces", "ability": "code", "prompt": [{"role": "user", "content": "Echo."}],
            "reward_model": {"style": "rule", "ground_truth": json.dumps([{"input": "a\n", "output": "a\n"}])},
            "extra_info": {"split": "test", "index": 0, "reference": None}}
    lcb = lcb_record(question_id="abc1_a", public_test_cases=json.dumps([{"input": "1\n", "output": "1\n",
                                                                          "testtype": "stdin"}]))
    for name, rec in (("verl", verl), ("lcb", lcb)):
        parquet = tmp_path / f"{name}.parquet"
        pd.DataFrame([rec]).to_parquet(parquet)
        assert load_any(parquet) == load_any(write_jsonl(tmp_path / f"{name}.jsonl", [rec]))


def test_lcb_private_tests_past_the_size_cap_are_refused(tmp_path, monkeypatch):
    from coevo import data_formats

    monkeypatch.setattr(data_formats, "MAX_PRIVATE_BYTES", 1000)
    big = [{"input": "x" * 5000, "output": "1", "testtype": "stdin"}]
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "lcb.jsonl", [lcb_record(private_test_cases=lcb_private(big))]))
    assert err.value.field == "private_test_cases" and "more than 1000 bytes" in err.value.message


def test_lcb_private_tests_that_pickle_anything_but_a_string_are_refused_unbuilt(tmp_path, monkeypatch):
    """A pickle may build far more than its size (6.5 KB of references to one object made a list
    of 2.5 million items before its type was looked at): only the opcodes of a pickled string are
    read; anything else is refused before unpickling, nothing built."""
    from coevo import data_formats

    def never(*args, **kwargs):
        raise AssertionError("unpickled")

    monkeypatch.setattr(data_formats, "_PlainUnpickler", never)
    many = pickle.dumps([["x"] * 1000] * 100, protocol=4)  # memo references: far larger built than read
    with pytest.raises(InputError) as err:
        load_any(write_jsonl(tmp_path / "lcb.jsonl", [lcb_record(
            private_test_cases=base64.b64encode(zlib.compress(many)).decode())]))
    assert err.value.field == "private_test_cases" and "refused pickle: it holds" in err.value.message
    cut = base64.b64encode(zlib.compress(pickle.dumps("[]"))[:-4]).decode()  # a stream cut short
    with pytest.raises(InputError, match="truncated"):
        load_any(write_jsonl(tmp_path / "lcb2.jsonl", [lcb_record(private_test_cases=cut)]))
