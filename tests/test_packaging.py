"""`pip install .` ships what a user needs away from the repository: every package, and the configs
as package data (`coevo train --config smoke` from any directory)."""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("coevo", "matrix", "roles", "training")


def listed_packages() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
    except ImportError:  # Python 3.10
        m = re.search(r"^packages = \[(.*?)\]", text, re.M | re.S)
        return set(re.findall(r'"([\w.]+)"', m.group(1)))
    return set(tomllib.loads(text)["tool"]["setuptools"]["packages"])


def test_every_package_directory_is_listed():
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in TOP for p in (ROOT / top).rglob("__init__.py")}
    assert found <= listed_packages()
    assert "coevo.configs" in listed_packages()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE", *TOP, "configs"):
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(p, src / name)
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("coevo-*.whl")
    return whl


@pytest.mark.timeout(300)
def test_wheel_ships_the_configs(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"coevo/configs/{p.name}" for p in (ROOT / "configs").iterdir() if p.suffix in (".yaml", ".json")}
    assert {"coevo/configs/smoke.yaml", "coevo/configs/ds_zero3.json"} <= shipped <= names
    assert "coevo/cli.py" in names and "matrix/engine.py" in names
    assert not any(n.startswith("configs/") for n in names)  # no top-level `configs` package


@pytest.mark.timeout(300)
def test_wheel_ships_the_license(wheel):
    whl = zipfile.ZipFile(wheel)
    (metadata,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
    assert "License-Expression: Apache-2.0" in whl.read(metadata).decode().splitlines()
    (license_file,) = [n for n in whl.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert whl.read(license_file) == (ROOT / "LICENSE").read_bytes()
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.timeout(300)
def test_installed_package_runs_a_shipped_config_from_elsewhere(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", "from coevo.yaml_config import find_config, load_config;"
                        "from coevo.run_driver import load_run_config;"
                        "print(find_config('smoke')); print(load_run_config('multi_gpu_zero3', check=False)"
                        ".train.deepspeed)"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    smoke, ds = r.stdout.split()
    assert Path(smoke) == site / "coevo" / "configs" / "smoke.yaml"
    assert Path(ds) == site / "coevo" / "configs" / "ds_zero3.json" and Path(ds).is_file()
    # the whole command: the shipped config loads, then the bad override stops it before any work
    r = subprocess.run([sys.executable, "-m", "coevo", "train", "--config", "smoke", "--out", "r",
                        "model.device=gpu"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip() == (
        "coevo train: error: <overrides>: field 'model.device': 'gpu' is not a device; use auto, cpu, cuda or cuda:N")
    assert not (work / "r").exists()
