"""A new user's first hour (red-team pass 17e): what `coevo` says when the output folder cannot be
written (read-only, full disk, a file in the way), when a run is interrupted, and when a config
names a value the run cannot use. Each case: one line naming the file or field, a non-zero exit,
no traceback, nothing half-written."""

import errno
import json
from pathlib import Path

import pytest

from coevo.cli import main

MBPP_ROW = {"task_id": 1, "text": "Return x.", "code": "def f(x):\n    return x\n",
            "test_list": ["assert f(1) == 1"], "test_setup_code": ""}


def _mbpp(tmp_path: Path) -> Path:
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(MBPP_ROW) + "\n", encoding="utf-8")
    return path


def _metrics_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "loss": 1.0 / s}) + "\n" for s in (1, 2, 3)),
                                       encoding="utf-8")
    return run


def _one_line_error(capsys, rc: int, *needles: str) -> str:
    err = capsys.readouterr().err
    assert rc not in (0, None), err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_full_disk_while_converting_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    import matrix.jsonl

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matrix.jsonl.os, "fsync", full)
    out = tmp_path / "out" / "tasks.jsonl"
    rc = main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(out)])
    _one_line_error(capsys, rc, "No space left on device", str(out))
    assert not any((tmp_path / "out").iterdir())  # no temporary file left behind


def test_an_output_under_a_file_or_in_a_read_only_folder_is_one_line(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    rc = main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(blocker / "tasks.jsonl")])
    _one_line_error(capsys, rc, str(blocker))

    import tempfile

    def read_only(*args, **kwargs):  # what mkstemp raises in a read-only folder (name: its temp file)
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "ro" / ".tasks.jsonl.k2j4x8zq.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    rc = main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(tmp_path / "ro" / "tasks.jsonl")])
    line = _one_line_error(capsys, rc, "Read-only file system")
    assert str(tmp_path / "ro" / "tasks.jsonl") in line and ".tmp" not in line


def test_convert_into_a_directory_is_one_line(tmp_path, capsys):
    rc = main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(tmp_path)])
    _one_line_error(capsys, rc, str(tmp_path), "is a directory")


def test_plot_on_a_full_disk_keeps_the_old_png_whole(tmp_path, capsys, monkeypatch):
    run = _metrics_run(tmp_path)
    assert main(["plot", str(run)]) == 0
    png = run / "curves.png"
    good = png.read_bytes()
    capsys.readouterr()
    import matplotlib.figure

    def half_written(self, fname, *args, **kwargs):
        Path(fname).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_written)
    rc = main(["plot", str(run)])
    _one_line_error(capsys, rc, "No space left on device")
    assert png.read_bytes() == good
    assert sorted(p.name for p in run.iterdir()) == ["curves.png", "metrics.jsonl"]


def test_plot_to_an_unknown_image_format_names_the_option(tmp_path, capsys):
    run = _metrics_run(tmp_path)
    rc = main(["plot", str(run), "--out", str(tmp_path / "curves.txt")])
    line = _one_line_error(capsys, rc, "--out", "'txt'", "png")
    assert "metrics.jsonl" not in line
    assert not (tmp_path / "curves.txt").exists()


def test_every_plot_option_has_help():
    import argparse

    from coevo.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    plot = sub.choices["plot"]
    for action in plot._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, action.option_strings


@pytest.mark.parametrize("override, field", [
    ("tiny.size=huge", "tiny.size"),
    ("tiny.sft_batch_size=0", "tiny.sft_batch_size"),
    ("tiny.threads=-2", "tiny.threads"),
    ("tiny.vocab_size=0", "tiny.vocab_size"),
    ("tiny.sft_steps=-1", "tiny.sft_steps"),
    ("model.threads=-1", "model.threads"),
    ("data.format=mpbb", "data.format"),
    ("data.limit=-1", "data.limit"),
    ("train.role_weights.fxier=1.5", "train.role_weights.fxier"),
])
def test_a_value_the_run_cannot_use_stops_at_the_config(override, field, capsys):
    rc = main(["config", "--config", "smoke", override])
    _one_line_error(capsys, rc, f"field '{field}'")


def test_a_config_file_naming_an_unknown_role_weight_names_its_line(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("train:\n  lr: 1.0e-4\n  role_weights:\n    coder: 1.0\n    fxier: 2.0\n", encoding="utf-8")
    rc = main(["config", "--config", str(cfg)])
    _one_line_error(capsys, rc, f"{cfg}:5", "train.role_weights.fxier", "fixer")


def test_solve_checks_its_outputs_before_loading_a_model(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    assert main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(tasks), "-q"]) == 0
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    for extra in (["--out", str(blocker / "codes.jsonl")],
                  ["--out", str(tmp_path / "codes.jsonl"), "--details", str(blocker / "d.jsonl")]):
        rc = main(["solve", "--model", str(tmp_path / "no-model"), "--tasks", str(tasks), *extra])
        line = _one_line_error(capsys, rc, str(blocker))
        assert "no-model" not in line


def test_an_interrupted_run_says_how_to_continue(tmp_path, capsys, monkeypatch):
    import coevo.run_driver

    run = tmp_path / "runs" / "r"

    def interrupted(run_dir, *args, **kwargs):
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        (Path(run_dir) / "config.yaml").write_text("{}\n", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(coevo.run_driver, "start_run", interrupted)
    rc = main(["train", "--config", "smoke", "--out", str(run)])
    assert rc == 130
    _one_line_error(capsys, rc, "interrupted", f"coevo train --resume {run}")


def test_a_full_disk_during_a_run_says_how_to_continue(tmp_path, capsys, monkeypatch):
    import coevo.run_driver

    run = tmp_path / "runs" / "r"

    class SafetensorError(Exception):  # safetensors' own error type, not an OSError
        pass

    def full(run_dir, *args, **kwargs):
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        (Path(run_dir) / "config.yaml").write_text("{}\n", encoding="utf-8")
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(coevo.run_driver, "start_run", full)
    rc = main(["train", "--config", "smoke", "--out", str(run)])
    _one_line_error(capsys, rc, str(run), "No space left on device", f"coevo train --resume {run}")


def test_a_reversed_ids_range_names_the_option(tmp_path, capsys):
    rc = main(["data", "convert", "--input", str(_mbpp(tmp_path)), "--out", str(tmp_path / "t.jsonl"),
               "--ids", "600-10"])
    _one_line_error(capsys, rc, "field '--ids'", "empty range")
    assert not (tmp_path / "t.jsonl").exists()


def test_coevo_config_suggests_the_nearest_key(capsys):
    rc = main(["config", "loop.stesp"])
    _one_line_error(capsys, rc, "field 'loop.stesp'", "did you mean 'loop.steps'?")
    rc = main(["config", "lop"])
    _one_line_error(capsys, rc, "field 'lop'", "did you mean 'loop'?")


def test_resume_says_from_which_step(tmp_path, capsys, monkeypatch):
    import coevo.run_driver
    from coevo.settings import CoevoConfig
    from coevo.yaml_config import load_config, save_config

    run = tmp_path / "run"
    ckpt = run / "checkpoints" / "step-00000002"
    ckpt.mkdir(parents=True)
    (ckpt / "meta.json").write_text(json.dumps({"step": 2}), encoding="utf-8")
    (run / "checkpoints" / "latest").write_text("step-00000002\n", encoding="utf-8")
    save_config(load_config(CoevoConfig, "smoke", ["loop.steps=30"]), run / "config.yaml")
    monkeypatch.setattr(coevo.run_driver, "resume_run",
                        lambda run_dir, **kw: {"evals": [], "config": None, "finished": False})
    assert main(["train", "--resume", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"resuming the run in {run} after step 2/30" in err, err


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path, capsys, monkeypatch):
    import os
    import signal

    import coevo.run_driver

    run = tmp_path / "runs" / "r"

    def preempted(run_dir, *args, **kwargs):
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        (Path(run_dir) / "config.yaml").write_text("{}\n", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGTERM)  # a scheduler's preemption
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr(coevo.run_driver, "start_run", preempted)
    before = signal.getsignal(signal.SIGTERM)
    rc = main(["train", "--config", "smoke", "--out", str(run)])
    assert rc == 143
    _one_line_error(capsys, rc, "stopped by SIGTERM", f"coevo train --resume {run}")
    assert signal.getsignal(signal.SIGTERM) == before  # handed back as it was


@pytest.mark.parametrize("override", ["train.lr=.inf", "execution.timeout=.nan", "eval.temperature=.nan",
                                      "loop.temperature=.inf", "eval.api.timeout=-.inf", "train.lr=nan"])
def test_a_number_that_is_not_finite_stops_at_the_config(override, capsys):
    rc = main(["config", "--config", "smoke", override])
    _one_line_error(capsys, rc, f"field '{override.partition('=')[0]}'", "finite")


def test_a_list_given_as_a_word_shows_how_to_write_it(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("loop:\n  roles: coder\n", encoding="utf-8")
    rc = main(["config", "--config", str(cfg)])
    _one_line_error(capsys, rc, f"{cfg}:2", "field 'loop.roles'", "[coder]")


def test_plot_given_the_png_instead_of_the_run_says_so(tmp_path, capsys):
    run = _metrics_run(tmp_path)
    assert main(["plot", str(run), "-q"]) == 0
    rc = main(["plot", str(run / "curves.png")])
    _one_line_error(capsys, rc, str(run / "curves.png"), "not a metrics file")
    weird = tmp_path / "weird"
    (weird / "metrics.jsonl").mkdir(parents=True)
    rc = main(["plot", str(weird)])
    _one_line_error(capsys, rc, str(weird / "metrics.jsonl"), "is a directory")


def test_validate_on_a_dataset_file_says_to_convert_it(tmp_path, capsys):
    rc = main(["data", "validate", "--tasks", str(_mbpp(tmp_path))])
    _one_line_error(capsys, rc, "mbpp.jsonl", "mbpp", "coevo data convert --input")


def test_a_run_another_process_is_working_on_is_refused(tmp_path, capsys, monkeypatch):
    import fcntl
    import os

    import coevo.run_driver

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("{}\n", encoding="utf-8")
    calls = []
    monkeypatch.setattr(coevo.run_driver, "resume_run", lambda *a, **k: calls.append(a) or {"evals": []})
    fd = os.open(run / ".coevo.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running `coevo train` holds
        os.write(fd, b"4242")
        for argv in (["train", "--resume", str(run)], ["demo", "--out", str(run)]):
            rc = main(argv)
            _one_line_error(capsys, rc, str(run), "another coevo process (pid 4242)")
        assert not calls  # nothing of the run was touched
    finally:
        os.close(fd)
    assert main(["train", "--resume", str(run), "-q"]) == 0  # free again: it resumes
    assert calls


def test_a_failed_start_leaves_no_lock_and_no_folder(tmp_path, capsys, monkeypatch):
    import coevo.run_driver
    from matrix.errors import InputError

    def refused(run_dir, *args, **kwargs):
        raise InputError("bad config", field="loop.steps")

    monkeypatch.setattr(coevo.run_driver, "start_run", refused)
    run = tmp_path / "runs" / "new"
    rc = main(["train", "--config", "smoke", "--out", str(run)])
    _one_line_error(capsys, rc, "bad config")
    assert not run.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    rc = main(["train", "--config", "smoke", "--out", str(existing)])
    _one_line_error(capsys, rc, "bad config")
    assert list(existing.iterdir()) == []


def test_roles_without_the_coder_stop_before_any_work(tmp_path, capsys):
    rc = main(["config", "--config", "smoke", "loop.roles=[tester]"])
    _one_line_error(capsys, rc, "field 'loop.roles'", "coder")
    rc = main(["demo", "--out", str(tmp_path / "d"), "--roles", "tester,fixer"])  # ran a whole demo
    _one_line_error(capsys, rc, "loop.roles", "coder")
    assert not (tmp_path / "d").exists()


def test_a_missing_relative_path_names_both_places_looked(tmp_path, capsys, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    cfg = sub / "c.yaml"
    cfg.write_text("data:\n  train: data/missing.jsonl\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc = main(["train", "--config", str(cfg), "--out", str(tmp_path / "r")])
    line = _one_line_error(capsys, rc, f"{cfg}:2", "field 'data.train'")
    assert str(sub / "data" / "missing.jsonl") in line and str(tmp_path / "data" / "missing.jsonl") in line
    assert not (tmp_path / "r").exists()
