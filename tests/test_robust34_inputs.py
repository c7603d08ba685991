"""Benchmark problem files as a user's tools leave them (robust34): `coevo data convert --input`
and `--tasks` read JSON Lines with a UTF-8 byte order mark, gzip data without a .gz suffix and
UTF-16 text (PowerShell 5's ``>``), but a file that is one JSON array (sanitized-mbpp.json, CURE's
outputs) and a benchmark's JSON Lines read through the converter (MBPP, HumanEval) were read as
plain UTF-8: "expected a JSON object, got list" for the array with a byte order mark, "not UTF-8
text (byte 0x8b)" for gzip data, "byte 0xff" for UTF-16."""

import gzip
import json

import pytest

from coevo.cli import main
from coevo.data import load_any

MBPP = {"task_id": 2, "prompt": "Write a function add(a, b) that returns the sum.",
        "code": "def add(a, b):\n    return a + b\n", "test_imports": [], "test_list": ["assert add(1, 2) == 3"]}

ARRAY = json.dumps([MBPP], indent=1)
LINE = json.dumps(MBPP) + "\n"
SAVED = {
    "array_bom.json": b"\xef\xbb\xbf" + ARRAY.encode(),
    "array_utf16.json": ARRAY.encode("utf-16"),
    "array_gzip.json": gzip.compress(ARRAY.encode()),
    "array_gzip_bom.json": gzip.compress(b"\xef\xbb\xbf" + ARRAY.encode()),
    "lines_gzip.jsonl": gzip.compress(LINE.encode()),
    "lines_utf16.jsonl": LINE.encode("utf-16"),
    "lines_gzip_bom.jsonl": gzip.compress(b"\xef\xbb\xbf" + LINE.encode()),
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_convert_reads_the_file_as_saved(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(SAVED[name])
    tasks = load_any(p)
    assert [t.task_id for t in tasks] == ["mbpp-sanitized/2"]
    assert tasks[0].entry_point == "add" and len(tasks[0].tests) == 1


@pytest.mark.parametrize("name", ["array_bom.json", "lines_gzip.jsonl", "lines_utf16.jsonl"])
def test_matrix_tasks_reads_the_file_as_saved(tmp_path, capsys, name):
    p = tmp_path / name
    p.write_bytes(SAVED[name])
    codes = tmp_path / "codes.jsonl"
    codes.write_text(json.dumps({"task_id": 2, "code": "def add(a, b):\n    return a + b\n"}) + "\n")
    out = tmp_path / "m.jsonl"
    rc = main(["matrix", "--tasks", str(p), "--codes", str(codes), "--out", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    row = json.loads(out.read_text())
    assert row["task_id"] == "mbpp-sanitized/2" and row["status"] == [["pass"]]


def test_a_corrupt_gzip_array_is_one_line(tmp_path, capsys):
    p = tmp_path / "tasks.json"
    p.write_bytes(gzip.compress(ARRAY.encode())[:-12])
    rc = main(["data", "convert", "--input", str(p), "--out", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and str(p) in err, err
    assert not (tmp_path / "o.jsonl").exists()


def test_a_bad_byte_in_a_gzip_array_names_its_line(tmp_path, capsys):
    p = tmp_path / "tasks.json"
    p.write_bytes(gzip.compress(ARRAY.encode().replace(b"Write", b"Wr\xffte")))
    rc = main(["data", "convert", "--input", str(p), "--out", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "not UTF-8" in err and f"{p}:4:" in err, err
