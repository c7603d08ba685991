"""What reaches the user's terminal: one spelling of --quiet/--progress across subcommands, no
progress bars off a terminal, no library chatter on stdout (DeepSpeed's accelerator warning,
transformers' weight-loading bar), help texts naming real paths, `--out -`, and `python -m coevo`
next to a user's own `matrix.py` or beside a foreign `matrix` distribution."""

import argparse
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coevo.cli import COMMANDS, build_parser, main, progress_enabled

ROOT = Path(__file__).resolve().parents[1]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _leaf_parsers():
    """(name, parser) of every subcommand, `data convert` and the like included."""
    for name, p in _subparsers(build_parser()).items():
        nested = _subparsers(p)
        if nested:
            yield from ((f"{name} {n}", q) for n, q in nested.items())
        else:
            yield name, p


def _options(parser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


def test_one_spelling_of_quiet_and_progress():
    leaves = dict(_leaf_parsers())
    assert {"train", "demo", "plot", "data convert", "matrix", "select"} <= set(leaves)
    for name, parser in leaves.items():
        opts = _options(parser)
        assert {"-q", "--quiet"} <= opts, name
        assert not opts & {"--no-progress", "--silent", "--no-bar"}, name
    for name in ("train", "demo", "matrix", "select", "eval", "solve", "gen-tests"):
        assert "--progress" in _options(leaves[name]), name
        quiet = next(a for a in leaves[name]._actions if "-q" in a.option_strings)
        assert quiet.dest == "quiet" and quiet.const is True, name


def test_progress_bars_only_on_a_terminal(monkeypatch):
    ns = argparse.Namespace
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert progress_enabled(ns(quiet=False, progress=None)) is False
    assert progress_enabled(ns(quiet=False, progress=True)) is True
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress_enabled(ns(quiet=False, progress=None)) is True
    assert progress_enabled(ns(quiet=True, progress=None)) is False


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_names_paths_a_run_creates(name):
    text = _subparsers(build_parser())[name].format_help()
    assert "/final" not in text  # a run exports RUN_DIR/model; nothing is called final


def test_readme_plot_output_is_the_default_of_coevo_plot(tmp_path):
    from training.plot import CURVES_FILE

    readme = (ROOT / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("coevo plot "))
    assert f"runs/tiny/{CURVES_FILE}" in line
    assert CURVES_FILE in _subparsers(build_parser())["plot"].format_help()


def test_plot_and_convert_write_to_stdout_with_dash(tmp_path, capsysbinary):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(f'{{"step": {s}, "loss": {1 / s}}}\n' for s in (1, 2, 3)))
    assert main(["plot", str(run), "--out", "-"]) == 0
    out, err = capsysbinary.readouterr()
    assert out.startswith(b"\x89PNG\r\n\x1a\n") and err == b""
    assert not (run / "curves.png").exists()
    src = tmp_path / "mbpp.jsonl"
    src.write_text('{"task_id": 2, "text": "Add.", "code": "def add(a, b):\\n    return a + b", '
                   '"test_list": ["assert add(1, 2) == 3"], "test_setup_code": ""}\n')
    assert main(["data", "convert", "--input", str(src), "--out", "-", "--quiet"]) == 0
    out, err = capsysbinary.readouterr()
    assert out.count(b"\n") == 1 and b'"entry_point": "add"' in out and err == b""


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    src = tmp_path / "mbpp.jsonl"  # converted, ~300 KB: more than a pipe holds
    src.write_text("".join(f'{{"task_id": {i}, "text": "Add.", "code": "def add(a, b):\\n    return a + b", '
                           f'"test_list": ["assert add(1, {i}) == {i + 1}"], "test_setup_code": ""}}\n'
                           for i in range(1500)))
    proc = subprocess.Popen([sys.executable, "-m", "coevo", "data", "convert", "--input", str(src), "--out", "-"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(8)  # `| head -c 8`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""


def _python(code: str, cwd: Path, env: dict | None = None, args=("-c",)) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    full.pop("DS_ACCELERATOR", None)
    return subprocess.run([sys.executable, *args, code] if code else [sys.executable, *args], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.timeout(120)
def test_deepspeed_says_nothing_on_stdout(tmp_path):
    """save_pretrained makes accelerate import DeepSpeed, which announced on stdout that it chose
    the CPU, on every run."""
    r = _python(textwrap.dedent("""
        from coevo.cli import configure_output
        configure_output()
        from coevo.run_driver import configure_torch
        from coevo.settings import CoevoConfig
        configure_torch(CoevoConfig())
        import deepspeed, logging
        logging.getLogger("DeepSpeed").warning("a warning of DeepSpeed's own")
    """), tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert "Setting accelerator to CPU" not in r.stderr
    assert "a warning of DeepSpeed's own" in r.stderr  # routed, not lost


@pytest.mark.timeout(120)
def test_no_weight_loading_bar(tmp_path):
    r = _python(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from coevo.cli import configure_output
        configure_output()
        from tinymodel import tiny_model_path
        from roles.model_io import load_model
        load_model(tiny_model_path(), device="cpu")
    """), tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Loading weights" not in r.stderr and "it/s" not in r.stderr and r.stdout == ""


def test_python_m_coevo_beside_a_users_matrix_py(tmp_path):
    (tmp_path / "matrix.py").write_text("raise SystemExit('the user matrix.py was imported')\n")
    (tmp_path / "roles.py").write_text("raise SystemExit('the user roles.py was imported')\n")
    r = _python("", tmp_path, args=("-m", "coevo", "matrix", "--help"))
    assert r.returncode == 0, r.stderr
    assert "usage: coevo matrix" in r.stdout


def test_a_shadowing_module_stops_with_one_line(tmp_path):
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "__init__.py").write_text("")
    r = _python("", tmp_path, env={"PYTHONPATH": str(tmp_path)}, args=("-m", "coevo", "plot", "x"))
    assert r.returncode == 2
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith("coevo: error: the import name 'training' resolves to ")
    assert str(tmp_path / "training") in line


def test_a_foreign_distribution_with_our_names_stops_with_one_line(tmp_path):
    site = tmp_path / "site"
    info = site / "matrix-0.0.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: matrix\nVersion: 0.0.9\n")
    (info / "top_level.txt").write_text("matrix\n")
    r = _python("", tmp_path, env={"PYTHONPATH": str(site)}, args=("-m", "coevo", "select", "--help"))
    assert r.returncode == 2
    line = r.stderr.strip()
    assert "\n" not in line
    assert "the installed distribution 'matrix 0.0.9' also provides the top-level package 'matrix'" in line
    assert "pip uninstall matrix" in line


def test_matrix_and_select_write_to_stdout_with_dash(tmp_path, capsys, monkeypatch):
    """`--out -` is standard output (no file named '-'); gen-tests writes directories and refuses it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tasks.jsonl").write_text('{"task_id": "t", "prompt": "", "kind": "function", "entry_point": "neg"}\n')
    (tmp_path / "codes.jsonl").write_text('{"task_id": "t", "code": "def neg(a):\\n    return -a"}\n'
                                          '{"task_id": "t", "code": "def neg(a):\\n    return a"}\n')
    (tmp_path / "tests.jsonl").write_text('{"task_id": "t", "test": "assert neg(1) == -1"}\n')
    files = ["--tasks", "tasks.jsonl", "--codes", "codes.jsonl", "--tests", "tests.jsonl", "--out", "-", "-q"]
    assert main(["matrix", *files, "--isolation", "process"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and '"passed": [[true], [false]]' in out
    assert main(["select", *files, "--timeout", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and '"index": 0' in out
    assert not (tmp_path / "-").exists()
    (tmp_path / "mod.py").write_text("def f(x: int) -> int:\n    return x\n")
    assert main(["gen-tests", "mod.py", "--out", "-", "-q"]) == 2
    assert "'-' (standard output) does not apply" in capsys.readouterr().err
    assert not (tmp_path / "-").exists()
