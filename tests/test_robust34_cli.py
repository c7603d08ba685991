"""A new user's mistakes with the CLI's files (robust34): an --out that names one of the
command's own input files (the input was overwritten, lost), an --out that is a device or a pipe
(``--out /dev/null`` as root replaced /dev/null with a regular file; tested here on a FIFO
only, never on /dev/null itself: a regression would break the machine running the tests), an --out that is a symlink
(the link was replaced by a plain file), an --out that is a folder (found only after all the
work, exit 1). Each gets one line naming the option, exit status 2, before any work, and the
inputs are left as they were."""

import json
import os
import stat

import pytest

from coevo.cli import main
from matrix.jsonl import write_jsonl_atomic

TASK = {"task_id": "t/1", "prompt": "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n", "kind": "function",
        "entry_point": "add", "tests": ["assert add(1, 2) == 3"]}
CODES = [{"task_id": "t/1", "code": "def add(a, b):\n    return a + b\n"},
         {"task_id": "t/1", "code": "def add(a, b):\n    return a - b\n"}]
TESTS = [{"task_id": "t/1", "test": "assert add(2, 2) == 4"}]


def _files(tmp_path):
    paths = {}
    for name, rows in (("tasks", [TASK]), ("codes", CODES), ("tests", TESTS)):
        p = tmp_path / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths[name] = p
    return paths


def _argv(cmd, paths, out):
    base = ["--tasks", str(paths["tasks"]), "--codes", str(paths["codes"]), "--tests", str(paths["tests"]),
            "--out", str(out), "-q"]
    return [cmd, *base] + (["--mutants", "0"] if cmd == "eval" else [])


@pytest.mark.parametrize("cmd", ["matrix", "select", "eval"])
@pytest.mark.parametrize("which", ["tasks", "codes", "tests"])
def test_out_equal_to_an_input_is_refused(tmp_path, capsys, cmd, which):
    paths = _files(tmp_path)
    before = {k: p.read_bytes() for k, p in paths.items()}
    rc = main(_argv(cmd, paths, paths[which]))
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "--out" in err and f"--{which}" in err, err
    assert {k: p.read_bytes() for k, p in paths.items()} == before


def test_out_equal_to_an_input_by_another_spelling(tmp_path, capsys, monkeypatch):
    paths = _files(tmp_path)
    before = paths["codes"].read_bytes()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(_argv("matrix", paths, "../codes.jsonl")) == 2
    (tmp_path / "link.jsonl").symlink_to(paths["codes"])
    assert main(_argv("matrix", paths, tmp_path / "link.jsonl")) == 2
    assert paths["codes"].read_bytes() == before
    assert capsys.readouterr().err.count("error") == 2


def test_convert_out_equal_to_input_is_refused(tmp_path, capsys):
    paths = _files(tmp_path)
    before = paths["tasks"].read_bytes()
    rc = main(["data", "convert", "--input", str(paths["tasks"]), "--out", str(paths["tasks"])])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "--input" in err, err
    assert paths["tasks"].read_bytes() == before


@pytest.mark.parametrize("cmd", ["matrix", "select", "eval"])
def test_out_a_folder_is_refused_before_the_work(tmp_path, capsys, cmd):
    paths = _files(tmp_path)
    (tmp_path / "dd").mkdir()
    rc = main(_argv(cmd, paths, tmp_path / "dd"))
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "--out" in err and "directory" in err, err
    assert list((tmp_path / "dd").iterdir()) == []


def test_write_to_a_fifo_goes_through_it(tmp_path):
    """``--out /dev/stdout``, ``--out >(gzip > m.gz)``: a pipe stays a pipe and gets the rows."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_jsonl_atomic(fifo, [{"a": 1}, {"b": 2}])
        data = os.read(r, 1 << 16)
    finally:
        os.close(r)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert data == b'{"a": 1}\n{"b": 2}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary file left


def test_write_through_a_symlink_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "m.jsonl"
    target.write_text("old\n")
    link = tmp_path / "m.jsonl"
    link.symlink_to(target)
    write_jsonl_atomic(link, [{"a": 1}])
    assert link.is_symlink()
    assert target.read_text() == '{"a": 1}\n'


def test_ctrl_c_while_the_command_starts_is_one_line(monkeypatch, capsys):
    """Ctrl-C while the subcommands' modules are imported or the arguments read (the first few
    tenths of a second) printed a KeyboardInterrupt traceback."""
    import coevo.cli as cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    try:
        rc = cli.main(["matrix", "--help"])
    except KeyboardInterrupt:  # (left to propagate, it would stop the whole test run)
        pytest.fail("KeyboardInterrupt escaped main()")
    assert rc == 130
    assert capsys.readouterr().err == "coevo: interrupted\n"


def test_eval_names_the_line_of_a_task_without_tests(tmp_path, capsys):
    """A task with codes but no ground-truth tests was named by its id only (no line)."""
    paths = _files(tmp_path)
    bare = {**TASK, "task_id": "t/2", "tests": []}
    paths["tasks"].write_text(json.dumps(TASK) + "\n\n" + json.dumps(bare) + "\n")
    paths["codes"].write_text("".join(json.dumps(r) + "\n" for r in [*CODES, {**CODES[0], "task_id": "t/2"}]))
    rc = main(_argv("eval", paths, tmp_path / "r.json"))
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert f"{paths['tasks']}:3: field 'tests':" in err and "'t/2'" in err, err
    assert not (tmp_path / "r.json").exists()


def test_tinyworld_out_a_file_is_an_input_error(tmp_path, capsys):
    """`coevo data tinyworld --out FILE` (a folder is asked for): exit 1 as a disk error before."""
    f = tmp_path / "tasks.jsonl"
    f.write_text("keep\n")
    rc = main(["data", "tinyworld", "--out", str(f)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "--out" in err and "folder" in err, err
    assert f.read_text() == "keep\n"


def test_solve_out_and_details_naming_one_file_is_refused(tmp_path, capsys):
    """`coevo solve --out x --details x`: the details were written over the chosen codes."""
    paths = _files(tmp_path)
    out = tmp_path / "sub" / ".." / "chosen.jsonl"
    rc = main(["solve", "--tasks", str(paths["tasks"]), "--model", str(tmp_path / "no_model"),
               "--out", str(out), "--details", str(tmp_path / "chosen.jsonl"), "-q"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "--details" in err and "--out" in err, err


def test_a_device_or_fifo_named_twice_is_no_lost_input(tmp_path):
    """review34 L2: `--input /dev/stdin --out /dev/stdout` on a terminal (one pty) and
    `--out /dev/null --details /dev/null` were refused as one file written over another; writing a
    device or a FIFO loses nothing. (A FIFO here: the tests never write /dev/null.)"""
    import argparse

    from coevo.cli import _same_file, check_outputs

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert not _same_file(fifo, fifo)
    check_outputs(argparse.Namespace(command="data", data_command="validate", input=str(fifo), out=str(fifo)))
    check_outputs(argparse.Namespace(command="solve", out=str(fifo), details=str(fifo)))
    # a regular file stays refused by any spelling, a hard link, and before it exists
    f = tmp_path / "codes.jsonl"
    f.write_text("{}\n")
    os.link(f, tmp_path / "hard.jsonl")
    assert _same_file(f, tmp_path / "hard.jsonl") and _same_file(tmp_path / "x" / ".." / "codes.jsonl", f)
    assert _same_file(tmp_path / "new.jsonl", tmp_path / "." / "new.jsonl")
    assert not _same_file(tmp_path / "new.jsonl", f)
