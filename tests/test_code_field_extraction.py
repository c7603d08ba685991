"""Codes files whose ``code`` fields are chat answers (prose around a fenced block): `coevo matrix`,
`coevo select` and `coevo eval --codes` run the code in them, as `coevo eval --api-base` does for
the answers it samples; plain code runs as written; ``--raw-code`` turns the reading off."""

from __future__ import annotations

import json

import pytest

from coevo.cli import main

TASK = {"task_id": "add", "prompt": "Add two numbers.", "entry_point": "add",
        "tests": [{"test": "assert add(1, 2) == 3"}, {"test": "assert add(-1, 1) == 0"}],
        "solutions": ["def add(a, b):\n    return a + b\n"]}
STDIO = {"task_id": "sum", "prompt": "Sum of the numbers on stdin.", "kind": "stdio",
         "tests": [{"input": "1 2\n", "output": "3\n"}]}
FENCED = ("Here is a Python function that solves it:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
          "Example:\n```python\nprint(add(1, 2))  # 3\n```\n")
PROSE = "Sure! The function is:\n\ndef add(a, b):\n    return a + b\n\nIt returns the sum of a and b.\n"
PLAIN_WRONG = "def add(a, b):\n    return a - b\n"
STDIO_FENCED = "```py\nprint(sum(map(int, input().split())))\n```"


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture()
def pool(tmp_path):
    codes = [{"task_id": "add", "code": c} for c in (FENCED, PLAIN_WRONG, PROSE)]
    codes.append({"task_id": "sum", "code": STDIO_FENCED})
    return {"tasks": write(tmp_path / "tasks.jsonl", [TASK, STDIO]),
            "codes": write(tmp_path / "codes.jsonl", codes), "dir": tmp_path}


def test_code_that_parses_is_run_as_written():
    from coevo.commands.codes_input import extracted_code

    for code in ("def add(a, b):\n    return a + b\n", "", "x = 1  # ```python\n", "print(1)",
                 '"""```python\ndef add(a, b): pass\n```"""\ndef add(a, b):\n    return a - b\n'):
        assert extracted_code(code, "add") is None


def test_plain_code_that_does_not_compile_stays_a_syntax_error():
    """A program cut off mid-line (5% of real samples) is a syntax error in every harness; reading
    it as a chat answer would run its longest parsing prefix and judge another program."""
    from coevo.commands.codes_input import extracted_code

    for code in ("def add(a, b):\n    return a +", "import math\ndef add(a, b):\n    return (a",
                 "# adds\ndef add(a, b):\n    return a + b\nprint(add(1,", '"""\nAdd.\n"""\ndef add(a, b):\n    retur',
                 "x = [1, 2\ndef add(a, b):\n    return a + b\n", "n = int(input()\nprint(n)\n"):
        assert extracted_code(code, "add") is None, code


def test_a_chat_answer_gives_its_code():
    from coevo.commands.codes_input import extracted_code

    assert extracted_code(FENCED, "add") == "def add(a, b):\n    return a + b"
    assert extracted_code(PROSE, "add") == "def add(a, b):\n    return a + b"
    assert extracted_code(STDIO_FENCED, None) == "print(sum(map(int, input().split())))"


def test_text_without_code_is_run_as_written():
    from coevo.commands.codes_input import extracted_code

    assert extracted_code("I cannot solve this task.", "add") is None
    assert extracted_code("```text\nno python here\n```", "add") is None


def test_matrix_reads_chat_answers_and_says_how_many(pool, capsys):
    out = pool["dir"] / "m.jsonl"
    rc = main(["matrix", "--tasks", pool["tasks"], "--codes", pool["codes"], "--out", str(out),
               "--workers", "2"])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["status"] == [["pass", "pass"], ["fail", "fail"], ["pass", "pass"]]
    assert rows[1]["status"] == [["pass"]]
    err = capsys.readouterr().err
    assert "3 codes extracted" in err and "--raw-code" in err


def test_matrix_raw_code_runs_the_fields_as_written(pool, capsys):
    out = pool["dir"] / "m.jsonl"
    rc = main(["matrix", "--tasks", pool["tasks"], "--codes", pool["codes"], "--out", str(out),
               "--workers", "2", "--raw-code"])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["status"][0] == ["syntax_error"] * 2 and rows[0]["status"][2] == ["syntax_error"] * 2
    assert rows[1]["status"] == [["syntax_error"]]
    assert "extracted" not in capsys.readouterr().err


def test_select_picks_the_answer_and_writes_the_code_that_ran(pool, capsys):
    tests = write(pool["dir"] / "tests.jsonl", [{"task_id": "add", "test": "assert add(2, 2) == 4"}])
    out = pool["dir"] / "chosen.jsonl"
    rc = main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", tests,
               "--out", str(out), "--no-consensus"])
    assert rc == 0
    row = [json.loads(line) for line in out.read_text().splitlines()][0]
    assert row["index"] in (0, 2) and row["code"] == "def add(a, b):\n    return a + b"
    assert "3 codes extracted" in capsys.readouterr().err


def test_eval_codes_agrees_with_the_sampled_route(pool, capsys):
    report = pool["dir"] / "report.json"
    rc = main(["eval", "--tasks", pool["tasks"], "--codes", pool["codes"], "--k", "1", "--mutants", "0",
               "--out", str(report), "--workers", "2"])
    assert rc == 0
    rep = json.loads(report.read_text())
    assert rep["codes_extracted"] == 3
    by_task = {r["task_id"]: r for r in rep["per_task"]}
    assert by_task["add"]["n_correct"] == 2 and by_task["sum"]["n_correct"] == 1
    assert "3 codes extracted" in capsys.readouterr().err
    rc = main(["eval", "--tasks", pool["tasks"], "--codes", pool["codes"], "--k", "1", "--mutants", "0",
               "--out", str(report), "--workers", "2", "--raw-code", "-q"])
    assert rc == 0
    rep = json.loads(report.read_text())
    assert rep["codes_extracted"] == 0 and rep["pass_at_k"]["1"] == 0.0


def test_raw_code_is_refused_when_a_model_samples(pool, capsys):
    rc = main(["eval", "--tasks", pool["tasks"], "--api-base", "http://127.0.0.1:9/v1", "--api-model", "m",
               "--out", str(pool["dir"] / "r.json"), "--raw-code"])
    assert rc != 0
    assert "--raw-code" in capsys.readouterr().err


RIGHT = "def add(a, b):\n    return a + b"
DRAFT = "```python\ndef add(a, b):\n    return a - b\n```"


def test_a_reasoning_block_is_not_the_answer():
    """Reasoning models write <think>...</think> before the answer (DeepSeek-R1 distills often
    without the opening tag, the chat template having sent it): the code is the answer's, never a
    draft of the reasoning; reasoning that never ended (cut off at the token limit) gave no
    answer, so the field runs as written (a syntax error), as a harness that strips the reasoning
    would judge it."""
    from coevo.commands.codes_input import extracted_code
    from roles.parsing import parse_code

    answers = [f"<think>\nFirst try:\n{DRAFT}\nNo, that subtracts.\n</think>\n\n{RIGHT}\n",
               f"<think>\nadd(1, 2) == 3 so a + b.\n</think>\nHere it is:\n```python\n{RIGHT}\n```\n",
               f"Okay, the user wants add.\n{DRAFT}\nwrong sign\n</think>\n\n```python\n{RIGHT}\n```",
               f"<think>\n{DRAFT}\n</think>\n\n{RIGHT}\n".replace("\n", "\r\n"),
               f"<thinking>\n{DRAFT}\n</thinking>\n{RIGHT}\n"]
    for text in answers:
        assert extracted_code(text, "add").replace("\r\n", "\n") == RIGHT, text
    cut = f"<think>\nLet me draft it:\n```python\n{RIGHT}\n```\nbut first check the edge cases, such as"
    assert extracted_code(cut, "add") is None
    assert not parse_code(cut, "add").ok and "reasoning" in parse_code(cut, "add").error


def test_tests_come_from_the_answer_not_the_reasoning():
    from matrix.tasks import Task
    from roles.parsing import parse_tests

    task = Task("add", "Add two numbers.", entry_point="add")
    got = parse_tests("<think>\nmaybe assert add(1, 1) == 3\n```python\nassert add(1, 1) == 3\n```\n</think>\n"
                      "```python\nassert add(1, 2) == 3\n```", task)
    assert [t.test for t in got.tests] == ["assert add(1, 2) == 3"]
    assert not parse_tests("<think>\n```python\nassert add(1, 2) == 3\n```\nand then", task).tests


def test_code_followed_by_a_closing_fence_or_prose_runs_the_code():
    """Chat models answering in code first (their template opened the fence, or they write no
    preamble) close with a bare fence or go on in prose: the field did not compile and ran as a
    syntax error (or ran the prose after the fence); the code before runs. A program cut off
    mid-line (its last line code, not words) still does not."""
    from coevo.commands.codes_input import extracted_code

    imp = "import sys\n\n" + RIGHT
    cases = [(RIGHT + "\n\nThis function returns the sum of a and b.\n", RIGHT),
             (RIGHT + "\n```\n\nThis function returns the sum.\n", RIGHT),
             (RIGHT + "\n```\n\nExample:\n```python\nprint(add(1, 2))\n```\n", RIGHT),
             (imp + "\n\n**Explanation:**\n- it adds the two numbers\n", imp),
             (imp + "\n\n### Explanation\nThe function adds a and b.\n", imp)]
    for text, want in cases:
        assert (extracted_code(text, "add") or "").rstrip() == want, text
    for text in (RIGHT + "\nprint(add(1,", RIGHT + "\nresult = add(1,", RIGHT + "\nmy_list.append(x, y",
                 RIGHT + "\nnot (a", RIGHT + "\nmatch x"):
        assert extracted_code(text, "add") is None, text


def test_a_completion_followed_by_a_closing_fence_or_prose_runs_prompt_and_body():
    """A chat model asked to complete a prompt writes the body, then ``` and a word on it: human-
    eval's prompt + completion is a syntax error for all 36 MBPP tasks written so; coevo runs the
    prompt + the body (as README "Select the right program among candidates" says)."""
    from coevo.commands.codes_input import completion_code

    prompt = 'def add(a, b):\n    """Add a and b."""\n'
    for comp in ("    return a + b\n```\n\nThis adds them.", "    return a + b\n\nThis function adds them.\n",
                 "    return a + b\n```", "    s = a + b\n    return s\n\n\nExplanation: it adds.\n"):
        got = completion_code(prompt, comp, "add")
        assert got is not None and got.startswith(prompt), comp
        assert got[len(prompt):].rstrip() == comp.split("\n\n")[0].split("\n```")[0].rstrip(), comp
    for comp in ("    return (a +\nThe end.", "    return a +\n```"):
        assert completion_code(prompt, comp, "add") is None, comp


def test_a_code_llama_instruct_answer_gives_its_code():
    from coevo.commands.codes_input import extracted_code

    answer = f"[PYTHON]\n{RIGHT}\n[/PYTHON]\n[TESTS]\n# Test case 1:\nassert add(1, 2) == 3\n[/TESTS]\n"
    assert extracted_code(answer, "add") == RIGHT
    assert extracted_code(f"xs = [PYTHON]\n{RIGHT}\n", "add") is None  # code that compiles runs as written


def test_words_inside_a_docstring_do_not_make_cut_off_code_a_chat_answer():
    """A line of prose after the code reads a field as a chat answer; the same words at column 0
    inside a docstring of a program cut off mid-line do not (the program stays a syntax error,
    not a shorter program)."""
    from coevo.commands.codes_input import extracted_code

    for q in ('"""', "'''"):
        code = f"import math\n{q}\nThis module adds two numbers.\n{q}\n{RIGHT}\ndef sub(a, b):\n    return (a -"
        assert extracted_code(code, "add") is None
    assert extracted_code(f'"""Adds."""\n{RIGHT}\n\nThis function adds them.\n', "add").endswith(RIGHT)


def test_reading_a_field_for_prose_is_bounded():
    """Looking for prose after the code compiles the lines shaped like words; a field of 100,000
    such lines that compile (``x or y``) held the parent 2.5 s a field. A bounded number are tried."""
    import time

    from coevo.commands.codes_input import completion_code, extracted_code

    field = "x or y\n" * 100_000 + "def ("
    start = time.perf_counter()
    assert extracted_code(field, "f") is None
    assert completion_code('def f():\n    """Do."""\n', field, "f") is None
    assert time.perf_counter() - start < 1.0


def test_end_of_sequence_tokens_left_in_a_decoded_sample_end_its_code():
    """Samples decoded without skipping special tokens (``tokenizer.decode(ids)``) end with the
    model's end-of-sequence text, often repeated as padding: the program was a syntax error;
    evalplus's codegen cuts a sample at its first end-of-sequence string, and so does coevo. A
    field that compiles (the marker in a string) runs as written."""
    from coevo.commands.codes_input import completion_code, extracted_code

    for eos in ("<|endoftext|>", "<|endoftext|><|endoftext|><|endoftext|>", "</s>", "<|im_end|>", "<|eot_id|>",
                "<｜end▁of▁sentence｜>", "<|EOT|>", "<eos>", "<|end|>"):
        assert extracted_code(f"{RIGHT}\n{eos}\ndef junk(:\n", "add") == RIGHT, eos
        assert extracted_code(f"{RIGHT}{eos}", "add") == RIGHT, eos
    prompt = 'def add(a, b):\n    """Add."""\n'
    assert completion_code(prompt, "    return a + b\n<|endoftext|>x = (", "add") == prompt + "    return a + b\n"
    assert extracted_code(f"{RIGHT}\nEND = '</s>'\n", "add") is None
