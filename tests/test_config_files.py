"""Every shipped config loads and validates; configs/tiny.yaml is exactly the built-in defaults."""

from pathlib import Path

import pytest

from coevo.settings import CoevoConfig
from coevo.yaml_config import load_config, to_dict

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_config_loads(name):
    cfg = load_config(CoevoConfig, CONFIGS / name)
    assert cfg.loop.steps >= 1


def test_tiny_yaml_is_the_default():
    assert to_dict(load_config(CoevoConfig, CONFIGS / "tiny.yaml")) == to_dict(CoevoConfig())


def test_deepspeed_configs_referenced_exist(tmp_path, monkeypatch):
    from coevo.run_driver import load_run_config

    monkeypatch.chdir(tmp_path)  # paths inside a config resolve against the config file, from anywhere
    for name in ("multi_gpu_zero3",):
        cfg = load_run_config(name, check=False)
        assert Path(cfg.train.deepspeed).is_file()
        assert Path(cfg.train.deepspeed).parent == CONFIGS
