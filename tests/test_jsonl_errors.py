"""A tasks, codes or tests file that is not UTF-8 names the line of its first bad byte (it said
only "not UTF-8 text (invalid continuation byte)": which of 10,000 lines?)."""

import gzip
import json

import pytest

from matrix.errors import InputError
from matrix.jsonl import read_jsonl


@pytest.mark.parametrize("gz", [False, True])
def test_a_latin1_byte_names_its_line(tmp_path, gz):
    good = "".join(json.dumps({"task_id": f"t{i}", "code": "x = 1"}) + "\n" for i in range(5000))
    bad = '{"task_id": "t-caf\xe9", "code": "x = 1"}\n'.encode("latin-1")
    data = good.encode() + bad + good.encode()
    path = tmp_path / ("codes.jsonl.gz" if gz else "codes.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(InputError) as err:
        list(read_jsonl(path))
    msg = str(err.value)
    assert f"{path.name}:5001:" in msg and "not UTF-8 text (byte 0xe9" in msg, msg


def test_the_cli_says_it_in_one_line(tmp_path, capsys):
    from coevo.cli import main

    tasks = tmp_path / "tasks.jsonl"
    task = {"task_id": "a", "prompt": "p", "entry_point": "f", "tests": [{"test": "assert f() == 1"}]}
    tasks.write_text(json.dumps(task) + "\n", encoding="utf-8")
    codes = tmp_path / "codes.jsonl"
    codes.write_bytes(b'{"task_id": "a", "code": "def f(): return 1"}\n{"task_id": "a", "code": "# \xff"}\n')
    assert main(["matrix", "--tasks", str(tasks), "--codes", str(codes), "--out", str(tmp_path / "m.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "codes.jsonl:2:" in err[0] and "not UTF-8" in err[0], err


def test_a_bad_byte_after_a_character_split_across_reads_is_named(tmp_path):
    # review: the error position counts the decoder's kept bytes; indexing the chunk with it named
    # the wrong byte or raised IndexError (a traceback from coevo matrix)
    from matrix.jsonl import not_utf8

    path = tmp_path / "codes.jsonl"
    path.write_bytes(b"a" * ((1 << 20) - 2) + "\u20ac".encode() + b"\xff\n")
    assert "byte 0xff" in str(not_utf8(path)) and "codes.jsonl:1:" in str(not_utf8(path))
    path.write_bytes(b"\n" * ((1 << 20) - 1) + "\u20ac".encode() + b"\n\xe9\n")
    err = str(not_utf8(path))
    assert "byte 0xe9" in err and f"codes.jsonl:{(1 << 20) + 1}:" in err, err
