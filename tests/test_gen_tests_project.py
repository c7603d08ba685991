"""`coevo gen-tests PATH` in a user's project as the user runs it: under the project's own pytest
configuration (ini files, conftest.py), in any order, next to the project's other modules."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coevo.cli import main

BUDGET = "6"


def gen(*argv):
    return main(["gen-tests", *map(str, argv), "--time-budget", BUDGET, "--quiet"])


def users_pytest(cwd: Path, *args, autoload: bool = False):
    """``python -m pytest`` as the user runs it in ``cwd`` (their config and conftest apply)."""
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=180)


APPCFG = '''import warnings

SCALE = 1


def old_api(x: int) -> int:
    warnings.warn("old_api is deprecated, use new_api", DeprecationWarning)
    return x + 1


def new_api(x: int) -> int:
    return x + 2


def scaled(x: int) -> int:
    return x * SCALE + 3
'''

USER_CONFTEST = '''import pytest

import appcfg


@pytest.fixture(autouse=True)
def _ten_times(monkeypatch):
    monkeypatch.setattr(appcfg, "SCALE", 10)
'''

CONFIGS = {
    "pyproject.toml": '[project]\nname = "x"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                      'filterwarnings = ["error"]\npythonpath = ["."]\n',
    "pytest.ini": "[pytest]\nfilterwarnings = error\npythonpath = .\n",
    "setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\nfilterwarnings =\n    error\npythonpath = .\n",
    "tox.ini": "[tox]\nenvlist = py3\n\n[pytest]\nfilterwarnings = error\npythonpath = .\n",
}


@pytest.mark.parametrize("config", ["pyproject.toml", "tox.ini"])
def test_the_suite_passes_under_the_projects_own_config_and_conftest(tmp_path, config, capsys):
    """Red-team pass 12 (gen-tests F4): the suite was verified without the project's pytest
    configuration: under its ``filterwarnings = error`` a test of a deprecated function failed, as
    did a test of what the project's tests/conftest.py autouse fixture changes, as soon as the user
    ran ``pytest``. The kept tests are verified under the project's own config as well."""
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / config).write_text(CONFIGS[config])
    (proj / "appcfg.py").write_text(APPCFG)
    (proj / "tests" / "conftest.py").write_text(USER_CONFTEST)
    assert gen(proj / "appcfg.py") == 0, capsys.readouterr().err
    text = (proj / "tests" / "test_appcfg.py").read_text()
    assert "new_api(" in text, text
    assert "old_api(" not in text and "scaled(" not in text, text
    rep = json.loads((proj / "tests" / "test_appcfg.json").read_text())
    assert config in rep["verification"] and "conftest.py" in rep["verification"], rep["verification"]
    for args in ((), ("-p", "no:randomly")):
        res = users_pytest(proj, *args)
        assert res.returncode == 0, res.stdout + res.stderr
    assert users_pytest(proj / "tests").returncode == 0


def test_a_project_config_that_cannot_run_in_the_sandbox_is_named_not_fatal(tmp_path, capsys):
    """A project conftest that fails on import (it needs a service the sandbox lacks) leaves the
    suite verified as before, and a warning says that the project's configuration was not applied."""
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "pytest.ini").write_text("[pytest]\n")
    (proj / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    (proj / "tests" / "conftest.py").write_text("raise RuntimeError('the database is not reachable')\n")
    assert main(["gen-tests", str(proj / "calc.py"), "--time-budget", BUDGET]) == 0
    err = capsys.readouterr().err
    assert "add(" in (proj / "tests" / "test_calc.py").read_text()
    assert "warning" in err and "the database is not reachable" in err, err
