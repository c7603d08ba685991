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
    # the deprecated function is tested asserting its warning (passes under filterwarnings = error)
    assert "with pytest.warns(DeprecationWarning, match='old_api is deprecated, use new_api'):" in text, text
    assert "scaled(" not in text, text
    rep = json.loads((proj / "tests" / "test_appcfg.json").read_text())
    assert config in rep["verification"] and "conftest.py" in rep["verification"], rep["verification"]
    # (once: with plugin autoload off, `-p no:randomly` ran the very same session a second time)
    for cwd in (proj, proj / "tests"):  # (on failure: pytest's output and the suite, to find the cause)
        res = users_pytest(cwd)
        assert res.returncode == 0, f"{res.stdout}{res.stderr}\n--- the suite:\n{text}"


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


SEQS = '''def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


def count_up(start: int = 0):
    while True:
        yield start
        start += 1


def evens(n: int):
    for k in range(abs(n) % 300):
        if k % 2 == 0:
            yield k
    yield -1


def late():
    k = 0
    while True:
        k += 1
        if k > 50:
            yield "late"  # only after the 50th item: no test reads that far
        else:
            yield k
'''


def test_an_infinite_generator_gets_a_prefix_asserted_and_no_test_asserts_nothing(tmp_path):
    """Red-team pass 12 (gen-tests F11): for ``def fib(): while True: yield ...`` the suite held
    ``fib()`` alone (a generator that is never iterated runs none of its lines), and the report
    credited it with every line, which only the harness's own reading of 200 items had run."""
    import ast

    (tmp_path / "seqs.py").write_text(SEQS)
    out = tmp_path / "out"
    assert gen(tmp_path / "seqs.py", "--out", out) == 0
    text = (out / "test_seqs.py").read_text()
    assert "list(itertools.islice(fib(), 10)) == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]" in text, text
    assert "itertools.islice(count_up(" in text, text
    for fn in ast.parse(text).body:
        if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_"):
            asserts = [n for n in ast.walk(fn) if isinstance(n, (ast.Assert, ast.With))]
            assert asserts, ast.unparse(fn)  # every test asserts something
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    rep = json.loads((out / "test_seqs.json").read_text())
    assert rep["lines"]["covered"] == rep["lines"]["total"] - 1, rep["lines"]  # the 'late' line


@pytest.mark.parametrize("name", ["textwrap", "random"])
def test_a_module_named_like_the_standard_librarys_gets_its_suite(tmp_path, name):
    """Red-team pass 12 (gen-tests, shadowing): a project holding its own textwrap.py (flat
    layout) stopped every module's run with "could not run the generated suite in the sandbox:
    AttributeError: module 'textwrap' has no attribute 'dedent'": the verification put the
    project's directory before the standard library, and pytest itself imported the user's module."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / f"{name}.py").write_text('"""The user\'s own module."""\n\n\ndef shout(s: str) -> str:\n'
                                         '    return s.upper() + "!"\n')
    (tmp_path / "masks.py").write_text("def mask(s: str) -> str:\n    return '*' * len(s)\n")
    for mod in (name, "masks"):
        assert gen(tmp_path / f"{mod}.py") == 0
    assert "shout(" in (tmp_path / "tests" / f"test_{name}.py").read_text()
    assert "mask(" in (tmp_path / "tests" / "test_masks.py").read_text()
    # `pytest` (its script: `python -m pytest` here would put the user's module before pytest's own
    # import), with the installed plugins: hypothesis' imports textwrap after the suites ran
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    res = subprocess.run([str(Path(sys.executable).parent / "pytest"), "-q", "-p", "no:cacheprovider"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr


IDS = '''import itertools

_seq = itertools.count(1)
REGISTRY: dict[int, str] = {}


def next_id() -> int:
    return next(_seq)


def register(name: str) -> int:
    i = next_id()
    REGISTRY[i] = name
    return i


def registered() -> int:
    return len(REGISTRY)
'''

ORDERS = '''from dataclasses import dataclass, field

from .ids import register


@dataclass
class Order:
    customer: str
    items: list[str] = field(default_factory=list)
    id: int = field(init=False)

    def __post_init__(self):
        self.id = register(self.customer)

    def total_items(self) -> int:
        return len(self.items)


def make_order(customer: str, *items: str) -> Order:
    return Order(customer, list(items))
'''


def test_the_suites_of_a_package_pass_together_in_any_order(tmp_path):
    """Red-team pass 12 (gen-tests F6): the suite of shop/ids.py asserted ``REGISTRY == {}`` and
    ``registered() == 0``; the suite of shop/orders.py builds orders, which register themselves.
    Each suite passed alone, the two together failed with orders' first. The suites of a run are
    verified together, in both orders, and a test that fails there is dropped."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "ids.py").write_text(IDS)
    (tmp_path / "shop" / "orders.py").write_text(ORDERS)
    assert gen(tmp_path / "shop") == 0
    suites = [p for p in (tmp_path / "tests" / "test_shop_ids.py", tmp_path / "tests" / "test_shop_orders.py")
              if p.exists()]
    assert "Order(" in suites[-1].read_text()
    for order in (suites, suites[::-1]):
        res = users_pytest(tmp_path, *order)
        assert res.returncode == 0, res.stdout + res.stderr


LANG = '''import threading

_CURRENT = threading.local()
_TABLE = {"en": "Hello", "lv": "Sveiki", "fr": "Bonjour"}
HISTORY: list = []


class Settings:
    loud = False


SETTINGS = Settings()


def activate(code: str) -> None:
    if code not in _TABLE:
        raise KeyError(code)
    _CURRENT.code = code
    HISTORY.append(code)


def shout(on: bool) -> None:
    SETTINGS.loud = bool(on)


def greet(name: str) -> str:
    text = f"{_TABLE[getattr(_CURRENT, 'code', 'en')]}, {name}"
    return text.upper() if SETTINGS.loud else text
'''

USERS_OWN = '''from lang import HISTORY, greet


def test_greet_in_english():
    assert greet("x") == "Hello, x"
    assert HISTORY == []
'''


def test_the_suite_leaves_the_modules_state_as_it_found_it(tmp_path):
    """Red-team pass 14 (sweep, humanize.i18n): a kept test called ``activate('lv')`` and left
    Latvian active: the project's own tests that ran after it (and humanize.filesize's generated
    ones) failed. What a generated test changes in the code's module state (a global rebound, a
    module-level list or dict, an object's attributes, a thread-local) is put back after it."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "lang.py").write_text(LANG)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_users_own.py").write_text(USERS_OWN)
    assert gen(tmp_path / "lang.py") == 0
    text = (tmp_path / "tests" / "test_lang.py").read_text()
    assert "activate('" in text and "shout(" in text, text
    res = users_pytest(tmp_path, "tests/test_lang.py", "tests/test_users_own.py")
    assert res.returncode == 0, res.stdout + res.stderr


def test_public_data_the_module_imports_is_imported_by_its_test(tmp_path):
    """Sweep (a copy of random.py): ``from math import tau as TWOPI`` is public data of the
    module, and its test ``assert TWOPI == ...`` did not import it: a NameError in verification
    (the test dropped, a verification round spent)."""
    (tmp_path / "circles.py").write_text("from math import tau as TWOPI\n\n\ndef turns(a: float) -> float:\n"
                                         "    return a / TWOPI\n")
    out = tmp_path / "out"
    assert gen(tmp_path / "circles.py", "--out", out) == 0
    rep = json.loads((out / "test_circles.json").read_text())
    assert "failed under pytest" not in rep["verification"], rep["verification"]
    text = (out / "test_circles.py").read_text()
    assert "TWOPI ==" not in text or "TWOPI" in text.split("from circles import", 1)[1].split("\n")[0], text
