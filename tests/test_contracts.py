"""docs/contracts.md cannot drift: its example records parse with the project's loaders, the
matrix and select examples are what the commands write for its example inputs, and its bad-input
lines are what the CLI prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coevo.cli import main
from matrix import plain
from matrix.engine import STATUSES
from matrix.tasks import load_codes, load_tasks, load_tests

DOC = Path(__file__).resolve().parent.parent / "docs" / "contracts.md"
MACHINE_DEPENDENT = {"matrix": ("times", "isolation", "sandbox"), "select": ("isolation",)}


def _blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"^```(?:jsonl|text) (\w+)\n(.*?)^```$", text, flags=re.M | re.S)
    names = [name for name, _ in found]
    assert len(names) == len(set(names)), names
    return dict(found)


@pytest.fixture()
def example(tmp_path, monkeypatch):
    blocks = _blocks()
    for name in ("tasks", "codes", "tests"):
        (tmp_path / f"{name}.jsonl").write_text(blocks[name], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return blocks


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_doc_has_every_contract():
    assert {"tasks", "codes", "tests", "matrix", "select", "errors"} <= set(_blocks())


def test_input_examples_parse_with_the_loaders(example):
    tasks = load_tasks("tasks.jsonl")
    ids = [t.task_id for t in tasks]
    assert ids == ["add", "echo", "pair", "later"]
    assert {t.kind for t in tasks} == {"function", "stdio"}
    codes = load_codes("codes.jsonl", ids)
    tests = load_tests("tests.jsonl", ids)
    assert sum(map(len, codes.values())) == len(_lines(example["codes"]))
    kinds = {t.kind for ts in tests.values() for t in ts} | {t.kind for task in tasks for t in task.tests}
    assert kinds == {"assert", "stdio", "call"}  # every test form is shown


def test_output_examples_are_well_formed(example):
    for row in _lines(example["matrix"]):
        n = len(row["passed"])
        assert all(len(r) == len(row["passed"][0]) for r in row["passed"]) if n else True
        for key in ("status", "values", "errors", "times"):
            assert [len(r) for r in row[key]] == [len(r) for r in row["passed"]], key
        for srow, prow, vrow in zip(row["status"], row["passed"], row["values"]):
            assert all(s in STATUSES for s in srow)
            assert [s == "pass" for s in srow] == prow
            for v in vrow:
                plain.decode(json.dumps(v))  # the tagged encoding reads back
    pair = next(r for r in _lines(example["matrix"]) if r["task_id"] == "pair")
    assert plain.decode(json.dumps(pair["values"][0][0])) == (2, 2)
    assert plain.decode(json.dumps(pair["values"][1][0])) == [2, 2]
    for row in _lines(example["select"]):
        assert len(row["test_scores"]) == row["n_tests"] and len(row["code_scores"]) == row["n_codes"]
        assert all(0 <= x <= 1 for x in row["test_scores"] + row["code_scores"])


def _same_except(got: list[dict], documented: list[dict], machine_dependent) -> None:
    assert [r["task_id"] for r in got] == [r["task_id"] for r in documented]
    for g, d in zip(got, documented):
        assert set(g) == set(d), g["task_id"]
        for key in d:
            if key not in machine_dependent:
                assert g[key] == d[key], (g["task_id"], key)


def test_matrix_example_is_what_coevo_matrix_writes(example):
    rc = main(["matrix", "--tasks", "tasks.jsonl", "--codes", "codes.jsonl", "--tests", "tests.jsonl",
               "--out", "m.jsonl", "--quiet", "--workers", "2"])
    assert rc == 0
    got, documented = _lines(Path("m.jsonl").read_text()), _lines(example["matrix"])
    _same_except(got, documented, MACHINE_DEPENDENT["matrix"])
    for g, d in zip(got, documented):
        assert set(g["sandbox"]) == set(d["sandbox"])
        assert [len(r) for r in g["times"]] == [len(r) for r in d["times"]]


def test_select_example_is_what_coevo_select_writes(example):
    rc = main(["select", "--tasks", "tasks.jsonl", "--codes", "codes.jsonl", "--tests", "tests.jsonl",
               "--out", "s.jsonl", "--quiet", "--workers", "2"])
    assert rc == 0
    _same_except(_lines(Path("s.jsonl").read_text()), _lines(example["select"]), MACHINE_DEPENDENT["select"])


BAD = [  # (command, the file replaced, its bad content, extra options)
    ("matrix", "codes.jsonl", "not json\n", []),
    ("matrix", "codes.jsonl", '{"task_id": "add", "code": 3}\n', []),
    ("matrix", "codes.jsonl", '{"task_id": "zzz", "code": "x"}\n', []),
    ("matrix", "tasks.jsonl", '{"task_id": "add", "prompt": "p", "tests": [{"input": "x"}]}\n', []),
    ("select", "tests.jsonl", '{"task_id": "add", "foo": "x"}\n', []),
    ("select", "codes.jsonl", "", []),
    ("matrix", None, None, ["--memory-mb", "5"]),
]


@pytest.mark.parametrize("command,name,content,options", BAD)
def test_bad_input_lines_are_what_the_cli_prints(example, capsys, command, name, content, options):
    if name is not None:
        Path(name).write_text(content, encoding="utf-8")
    argv = [command, "--tasks", "tasks.jsonl", "--codes", "codes.jsonl", "--out", "out.jsonl", *options]
    if command == "select":
        argv += ["--tests", "tests.jsonl"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err in example["errors"].splitlines()
    assert not Path("out.jsonl").exists()


def test_a_byte_order_mark_at_the_start_of_a_jsonl_file_is_read_past(tmp_path):
    """Editors on Windows (and PowerShell's Out-File) write UTF-8 with a BOM: the first record
    of a tasks, codes or tests file was 'malformed JSON (Unexpected UTF-8 BOM)'."""
    import gzip

    from matrix.tasks import load_codes, load_tasks, load_tests

    rec = '{"task_id": "t", "prompt": "Add.", "entry_point": "add"}\n'
    (tmp_path / "tasks.jsonl").write_bytes(b"\xef\xbb\xbf" + rec.encode())
    with gzip.open(tmp_path / "tests.jsonl.gz", "wb") as fh:
        fh.write(b"\xef\xbb\xbf" + b'{"task_id": "t", "test": "assert add(1, 2) == 3"}\n')
    code = b'{"task_id": "t", "code": "def add(a, b):\\n    return a + b"}\n'
    (tmp_path / "codes.jsonl").write_bytes(b"\xef\xbb\xbf" + code)
    tasks = load_tasks(tmp_path / "tasks.jsonl")
    assert [t.task_id for t in tasks] == ["t"]
    assert load_tests(tmp_path / "tests.jsonl.gz", ["t"])["t"][0].test == "assert add(1, 2) == 3"
    assert load_codes(tmp_path / "codes.jsonl", ["t"])["t"] == ["def add(a, b):\n    return a + b"]
