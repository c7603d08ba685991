"""`coevo matrix`: the docs/contracts.md contract, bad input, and a light --help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coevo.cli import main


def _write(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture()
def files(tmp_path):
    tasks = _write(tmp_path / "tasks.jsonl", [
        {"task_id": "add", "prompt": "add", "entry_point": "add",
         "tests": [{"test": "assert add(1, 2) == 3"}]},
        {"task_id": "sum", "prompt": "sum of stdin", "kind": "stdio",
         "tests": [{"input": "1 2\n", "output": "3\n"}]},
        {"task_id": "none", "prompt": "no codes for this one"},
    ])
    codes = _write(tmp_path / "codes.jsonl", [
        {"task_id": "sum", "code": "print(sum(map(int, input().split())))"},
        {"task_id": "add", "code": "def add(a, b):\n    return a + b\n"},
        {"task_id": "add", "code": "def add(a, b):\n    return a - b\n"},
        {"task_id": "add", "code": "import sys\ndef add(a, b):\n    sys.exit(0)\n"},
    ])
    tests = _write(tmp_path / "tests.jsonl", [
        {"task_id": "add", "test": "assert add(2, 2) == 4"},
        {"task_id": "add", "call": "add(0, 0)", "expected": "0"},
        {"task_id": "sum", "input": "5 5", "output": "10"},
    ])
    return tmp_path, tasks, codes, tests


def _run(*argv):
    return main(["matrix", *map(str, argv), "--quiet", "--workers", "2"])


def test_matrix_lines_follow_the_tasks_file(files):
    d, tasks, codes, tests = files
    out = d / "m.jsonl"
    assert _run("--tasks", tasks, "--codes", codes, "--tests", tests, "--out", out, "--timeout", "1") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["task_id"] for x in lines] == ["add", "sum", "none"]
    add, summ, none = lines
    assert add["passed"] == [[True, True], [False, True], [False, False]]
    assert add["status"] == [["pass", "pass"], ["fail", "pass"], ["error", "error"]]
    assert add["values"][0] == [4, 0] and add["values"][2] == [None, None]
    assert len(add["errors"]) == 3 and len(add["times"][0]) == 2
    assert add["isolation"] in ("namespace", "process")
    assert summ["passed"] == [[True]] and summ["values"] == [["10\n"]]
    assert none["passed"] == [] and none["status"] == []


def test_ground_truth_tests_when_tests_are_omitted(files):
    d, tasks, codes, _ = files
    out = d / "gt.jsonl"
    assert _run("--tasks", tasks, "--codes", codes, "--out", out) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["passed"] == [[True], [False], [False]]
    assert lines[1]["passed"] == [[True]]


@pytest.mark.parametrize("which,content,needle", [
    ("codes", ['{"task_id": "add", "code": "x"}', "{not json"], "codes.jsonl:2"),
    ("codes", ['{"task_id": "add"}'], "code"),
    ("codes", ['{"task_id": "nope", "code": "x"}'], "unknown task_id"),
    ("codes", [], "no codes"),
    ("tests", ['{"task_id": "add", "test": 5}'], "test"),
    ("tests", ['{"task_id": "zzz", "test": "assert 1"}'], "unknown task_id"),
    ("tasks", ['{"prompt": "no id"}'], "task_id"),
])
def test_bad_input_is_one_line_and_writes_nothing(files, capsys, which, content, needle):
    d, tasks, codes, tests = files
    path = {"codes": codes, "tests": tests, "tasks": tasks}[which]
    path.write_text("".join(c + "\n" for c in content))
    out = d / "never.jsonl"
    assert _run("--tasks", tasks, "--codes", codes, "--tests", tests, "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in err[0]
    assert not out.exists()


@pytest.mark.parametrize("opt,val", [("--timeout", "0"), ("--workers", "0"), ("--memory-mb", "99999")])
def test_bad_options(files, capsys, opt, val):
    d, tasks, codes, tests = files
    assert main(["matrix", "--tasks", str(tasks), "--codes", str(codes), "--out", str(d / "x.jsonl"),
                 opt, val]) == 2
    assert opt in capsys.readouterr().err


def test_help_does_not_import_torch():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "coevo", "matrix", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--tasks" in proc.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "torch" not in imported and "transformers" not in imported


def test_a_run_does_not_import_numpy(files):
    """Lists in, JSON out: the arrays of a MatrixResult are built only for callers that ask."""
    d, tasks, codes, tests = files
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "coevo", "matrix", "--tasks", str(tasks),
                           "--codes", str(codes), "--tests", str(tests), "--out", str(d / "np.jsonl"), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "numpy" not in imported and "matrix" in imported
    rows = [json.loads(x) for x in (d / "np.jsonl").read_text().splitlines()]
    assert rows[0]["passed"] == [[True, True], [False, True], [False, False]] and rows[2]["passed"] == []


def test_odd_strings_are_written(tmp_path):
    tasks = _write(tmp_path / "t.jsonl", [
        {"task_id": "s", "prompt": "p", "tests": [{"test": "assert f() == 1"}]},
        {"task_id": "p", "prompt": "p", "kind": "stdio", "tests": [{"input": "", "output": "x"}]},
    ])
    codes = _write(tmp_path / "c.jsonl", [
        {"task_id": "s", "code": "def f():\n    return '\\ud800' + chr(0xdcff)\n"},
        {"task_id": "p", "code": "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe ok')\n"},
    ])
    out = tmp_path / "m.jsonl"
    assert _run("--tasks", tasks, "--codes", codes, "--out", out) == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["status"] == [["fail"]] and rows[1]["status"] == [["fail"]]


def test_candidates_syntax_warnings_stay_off_the_terminal(tmp_path):
    """`1if x else 2` compiles with a SyntaxWarning ("invalid decimal literal"); a pool of model
    outputs holds many such programs and tests, and every parse of them used to print one."""
    tasks = _write(tmp_path / "t.jsonl", [{"task_id": "w", "prompt": "p", "entry_point": "f",
                                          "tests": [{"test": "assert f(1) == 1if True else 0"}]}])
    codes = _write(tmp_path / "c.jsonl", [{"task_id": "w", "code": "def f(x):\n    return 1if x else 2\n"}])
    tests = _write(tmp_path / "u.jsonl", [{"task_id": "w", "test": "assert f(0) == 2if True else 0"}])
    out = tmp_path / "m.jsonl"
    proc = subprocess.run([sys.executable, "-m", "coevo", "matrix", "--tasks", str(tasks), "--codes", str(codes),
                           "--tests", str(tests), "--out", str(out), "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "SyntaxWarning" not in proc.stderr, proc.stderr[-2000:]
    assert json.loads(out.read_text())["status"] == [["pass"]]
    # a file of the user's own still warns as Python does
    bad = tmp_path / "user_module.py"
    bad.write_text("x = 1if True else 2\n")
    proc = subprocess.run([sys.executable, "-c", f"import matrix, runpy; runpy.run_path({str(bad)!r})"],
                          capture_output=True, text=True, timeout=60)
    assert "SyntaxWarning" in proc.stderr
