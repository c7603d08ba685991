"""Configs ship with the package (``--config NAME`` from any directory) and the paths written in a
config file resolve against that file, those in overrides against the current directory."""

import json
from pathlib import Path

import pytest

from coevo.run_driver import load_run_config
from coevo.settings import CoevoConfig
from coevo.yaml_config import find_config, load_config, shipped_configs
from matrix.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_configs_found_by_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert {"smoke", "tiny", "single_gpu", "multi_gpu_zero3"} <= set(shipped_configs())
    assert find_config("smoke").read_text() == (ROOT / "configs" / "smoke.yaml").read_text()
    assert find_config("smoke.yaml") == find_config("smoke")
    cfg = load_config(CoevoConfig, "smoke")
    assert cfg.tiny.size == "nano"
    with pytest.raises(InputError, match=r"no such config file \(shipped configs, by name: .*smoke"):
        find_config("smok")
    with pytest.raises(InputError, match="no such config file"):
        find_config("configs/smoke.yaml")  # a path is a path: not found from here


def test_a_local_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke.yaml").write_text("loop:\n  steps: 7\n")
    assert load_config(CoevoConfig, "smoke.yaml").loop.steps == 7
    assert load_config(CoevoConfig, "smoke").tiny.size == "nano"  # a bare name is the shipped one


def test_paths_in_a_config_resolve_against_its_directory(tmp_path, monkeypatch):
    conf = tmp_path / "exp"
    conf.mkdir()
    (conf / "ds.json").write_text("{}")
    (conf / "tasks.jsonl").write_text("")
    (conf / "c.yaml").write_text("train:\n  deepspeed: ds.json\ndata:\n  train: tasks.jsonl\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.jsonl").write_text("")
    monkeypatch.chdir(elsewhere)
    cfg = load_run_config(conf / "c.yaml", ["data.heldout=other.jsonl"])
    assert cfg.train.deepspeed == str(conf / "ds.json")
    assert cfg.data.train == str(conf / "tasks.jsonl")
    assert cfg.data.heldout == str(elsewhere / "other.jsonl")  # an override: the current directory


def test_a_config_path_missing_beside_the_file_falls_back_to_the_current_directory(tmp_path, monkeypatch):
    # the shipped GPU configs name the user's converted data as data/...: that lives where the user works
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mbpp-train.jsonl").write_text("")
    monkeypatch.chdir(tmp_path)
    cfg = load_run_config("single_gpu", check=False)
    assert cfg.data.train == str(tmp_path / "data" / "mbpp-train.jsonl")


def test_missing_deepspeed_file_is_one_line_with_file_line_field(tmp_path):
    c = tmp_path / "c.yaml"
    c.write_text("loop:\n  steps: 2\ntrain:\n  deepspeed: nope.json\n")
    with pytest.raises(InputError) as exc:
        load_run_config(c)
    assert str(exc.value) == (f"{c}:4: field 'train.deepspeed': no such DeepSpeed config file: "
                              f"{tmp_path / 'nope.json'} (a relative path is looked for beside the config "
                              f"file, then in the current directory: not at {Path.cwd() / 'nope.json'} either)")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match=r"field 'train.deepspeed': .*bad.json is not a DeepSpeed JSON config"):
        load_run_config(None, [f"train.deepspeed={tmp_path / 'bad.json'}"])
    (tmp_path / "ok.json").write_text(json.dumps({"zero_optimization": {"stage": 2}}))
    assert load_run_config(None, [f"train.deepspeed={tmp_path / 'ok.json'}"]).train.deepspeed.endswith("ok.json")


def test_device_and_model_path_checked_before_any_work(tmp_path):
    import torch

    with pytest.raises(InputError, match=r"<overrides>: field 'model.device': 'gpu' is not a device"):
        load_run_config(None, ["model.device=gpu"])
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match=r"field 'model.device': 'cuda': no CUDA device is available"):
            load_run_config(None, ["model.device=cuda"])
    with pytest.raises(InputError, match=r"field 'model.path': .*: not a model directory"):
        load_run_config(None, [f"model.path={tmp_path}"])
    with pytest.raises(InputError, match=r"field 'data.train': no such file or directory"):
        load_run_config(None, ["data.train=missing.jsonl"])
    assert load_run_config(None, ["model.device=cpu"]).model.device == "cpu"


def test_saved_run_config_holds_absolute_paths(tmp_path, monkeypatch):
    from coevo.yaml_config import save_config

    (tmp_path / "t.jsonl").write_text("")
    monkeypatch.chdir(tmp_path)
    cfg = load_run_config(None, ["data.train=t.jsonl"])
    save_config(cfg, tmp_path / "run" / "config.yaml")
    monkeypatch.chdir("/")
    assert load_run_config(tmp_path / "run" / "config.yaml").data.train == str(tmp_path / "t.jsonl")
