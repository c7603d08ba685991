"""`coevo train model.path=...` takes what `coevo solve --model` takes: a directory an earlier
`coevo train` run wrote (the run, its checkpoints folder, one step), not only a save_pretrained
directory; the run records the weights directory it started from, so a resume checks that one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tinymodel import build_tiny_model

from coevo.run_driver import load_run_config
from matrix.errors import InputError


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("from_run")
    base = Path(build_tiny_model(root / "base", layers=1, hidden_size=16))
    run = root / "run"
    (run / "init").mkdir(parents=True)
    (run / "init" / "source.json").write_text(json.dumps({"path": str(base), "files": {}}))
    d = run / "checkpoints" / "step-00000002" / "model"
    d.mkdir(parents=True)
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(base / name, d / name)
    (run / "checkpoints" / "latest").write_text("step-00000002\n")
    (run / "config.yaml").write_text("loop:\n  steps: 2\n")
    return run


@pytest.mark.parametrize("where", ["run", "checkpoints", "step", "step/model"])
def test_a_new_run_may_start_from_an_earlier_runs_checkpoint(run_dir, where):
    given = {"run": run_dir, "checkpoints": run_dir / "checkpoints",
             "step": run_dir / "checkpoints" / "step-00000002",
             "step/model": run_dir / "checkpoints" / "step-00000002" / "model"}[where]
    cfg = load_run_config("smoke", [f"model.path={given}"], check=True)
    assert cfg.model.path == str(given)


def test_a_model_path_that_is_no_model_is_one_line_naming_the_field(tmp_path):
    (tmp_path / "empty").mkdir()
    for bad in (tmp_path / "empty", tmp_path / "missing"):
        with pytest.raises(InputError) as err:
            load_run_config("smoke", [f"model.path={bad}"], check=True)
        msg = str(err.value)
        assert "model.path" in msg and "\n" not in msg and str(bad) in msg


def test_the_run_records_the_weights_directory_it_started_from(run_dir, tmp_path):
    from coevo.run_driver import SOURCE_FILE, _save_start, resolve_start_source

    src = resolve_start_source(str(run_dir / "checkpoints"))
    assert src == run_dir / "checkpoints" / "step-00000002" / "model"
    init = tmp_path / "init"
    _save_start(init, None, None, [], [], source=src)
    rec = json.loads((init / SOURCE_FILE).read_text())
    assert rec["path"] == str(src.resolve()) and "model.safetensors" in rec["files"]
