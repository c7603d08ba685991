"""`coevo gen-tests PATH` end to end: suites that pass (twice, fresh processes), reports, suspects,
bad input as one line with nothing written, hostile modules kept in the sandbox, stale files."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coevo.cli import main

FIX = Path(__file__).parent / "fixtures" / "gentests"
BUDGET = "6"


def run_pytest(path: Path, *extra, seed: str = "1"):
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(path)],
                          capture_output=True, text=True, cwd=path, env=env, timeout=120)


def gen(*argv):
    return main(["gen-tests", *map(str, argv), "--time-budget", BUDGET, "--quiet"])


def suite_of(tmp_path, name: str, source: str) -> tuple[str, Path]:
    """Write module ``name`` with ``source``, generate its suite into ``tmp_path/out`` (exit status
    0 expected) and return the suite's text and the output directory."""
    mod = tmp_path / f"{name}.py"
    mod.write_text(source)
    out = tmp_path / "out"
    assert gen(mod, "--out", out) == 0
    return (out / f"test_{name}.py").read_text(), out


@pytest.fixture
def project(tmp_path):
    """A copy of the planted-bug fixture in a fresh project (pyproject.toml + src/)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(FIX / "planted_bug.py", src / "planted_bug.py")
    return tmp_path


def test_suite_passes_report_and_suspects(project, capsys):
    report = project / "run.json"
    rc = main(["gen-tests", str(project / "src" / "planted_bug.py"), "--time-budget", BUDGET,
               "--report", str(report)])
    err = capsys.readouterr().err
    assert rc == 0, err
    out = project / "tests"  # the default: next to the project's tests
    suite = out / "test_planted_bug.py"
    text = suite.read_text()
    compile(text, str(suite), "exec")
    assert "from planted_bug import" in text and "def test_0" not in text
    # the suspect is reported (with input, what the code returns and what the docstring says) ...
    rep = json.loads((out / "test_planted_bug.json").read_text())
    sus = {s["input"]: s for s in rep["suspects"]}
    assert sus["median([3, 1, 2])"]["code_returns"] == "1" and "2" in sus["median([3, 1, 2])"]["evidence"]
    assert "median([3, 1, 2])" in err and "suspect" in err
    # ... and never asserted as if it were the truth
    assert "median([3, 1, 2])" not in text and "median([4, 1, 3, 2])" not in text
    for key in ("mutation_score", "line_coverage", "branch_coverage", "tests_kept", "tests_tried", "seconds"):
        assert rep[key] is not None, key
    assert rep["tests_kept"] >= 3 and rep["line_coverage"] == 1.0 and rep["mutation_score"] >= 0.8
    assert "passed 4 times" in rep["verification"] and rep["verification"].count(",") >= 3  # four seeds
    assert json.loads(report.read_text())["modules"][0]["module"] == "planted_bug"
    # pytest on the output passes on the unchanged code, every time (other seeds, reverse order too)
    for seed in ("7", "12345"):
        res = run_pytest(out, seed=seed)
        assert res.returncode == 0 and "passed" in res.stdout, res.stdout + res.stderr
    # a rerun replaces what the earlier run wrote; files coevo did not write are left alone
    (out / "test_mine.py").write_text("def test_mine():\n    assert True\n")
    (out / "test_old_planted_bug.py").write_text("x = 1\n")
    manifest = json.loads((out / ".coevo-gen-tests.json").read_text())
    manifest["files"]["test_old_planted_bug.py"] = {"module": "planted_bug", "key": "planted_bug",
                                                    "source": str((project / "src" / "planted_bug.py").resolve())}
    (out / ".coevo-gen-tests.json").write_text(json.dumps(manifest))
    assert gen(project / "src" / "planted_bug.py") == 0
    assert not (out / "test_old_planted_bug.py").exists() and (out / "test_mine.py").exists()


def test_package_directory_and_a_single_name(tmp_path):
    shutil.copytree(FIX / "shapes", tmp_path / "shapes", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "out"
    assert gen(tmp_path / "shapes" / "geometry.py::Rectangle", "--out", out) == 0
    text = (out / "test_shapes_geometry_Rectangle.py").read_text()
    assert "from shapes.geometry import Rectangle" in text and "bounding_box" not in text
    assert run_pytest(out).returncode == 0
    assert gen(tmp_path / "shapes", "--out", out) == 0
    assert {p.name for p in out.glob("test_*.py")} >= {"test_shapes_geometry.py", "test_shapes_units.py"}
    res = run_pytest(out)  # the suites of every module (and the earlier ::name one) run together
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("source, message", [
    ("def broken(:\n    pass\n", "mod_x.py:1: does not parse"),
    ("import no_such_module_anywhere\n\ndef f(x):\n    return x\n",
     "importing the module fails (line 1): ModuleNotFoundError: No module named 'no_such_module_anywhere'"),
    ("import time\ntime.sleep(60)\n\ndef f(x):\n    return x\n", "importing the module did not finish in time"),
    ("VALUE = 3\n", "nothing testable"),
    ("def f(x):\n    while True:\n        pass\n", "nothing testable: no call"),
])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, capsys, source, message):
    mod = tmp_path / "mod_x.py"
    mod.write_text(source)
    out = tmp_path / "out"
    rc = main(["gen-tests", str(mod), "--out", str(out), "--time-budget", "4"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith("coevo gen-tests: error: ") and message in err[0].replace(str(tmp_path) + "/", "")
    assert "Traceback" not in err[0] and not out.exists()


def test_hostile_module_runs_only_in_the_sandbox(tmp_path):
    """Generated inputs make functions do anything: nothing escapes to the host."""
    from matrix.engine import ExecConfig, Executor

    with Executor(ExecConfig(workers=1)) as ex:
        if ex.isolation != "namespace":
            pytest.skip("host files are protected by the namespace sandbox only")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    marker = tmp_path / "marker"
    mod = tmp_path / "hostile.py"
    mod.write_text(
        "import os\n"
        f"VICTIM = {str(victim)!r}\nMARKER = {str(marker)!r}\n\n"
        "def wipe(path: str = VICTIM) -> bool:\n"
        "    try:\n        os.remove(path)\n    except OSError:\n        pass\n"
        "    try:\n        open(MARKER, 'w').write('escaped')\n    except OSError:\n        return False\n"
        "    return True\n\n"
        "def grow(n: int) -> int:\n    data = []\n    while True:\n        data.append(' ' * 10 ** 6)\n\n"
        "def double(n: int) -> int:\n    return 2 * n\n")
    out = tmp_path / "out"
    assert gen(mod, "--out", out) == 0
    assert victim.read_text() == "keep me" and not marker.exists()
    # wipe() writes outside its working directory (the victim, the marker): noted as the machine's,
    # so no written test calls it (under pytest it would remove the user's file); the harmless
    # function gets its tests (before: rc 2, "nothing testable", where wipe was the only call)
    text = (out / "test_hostile.py").read_text()
    assert "double(" in text and "wipe(" not in text, text


def test_options_are_checked_before_any_work(tmp_path, capsys):
    mod = tmp_path / "m.py"
    mod.write_text("def f(x):\n    return x\n")
    assert main(["gen-tests", str(mod), "--time-budget", "0"]) == 2
    assert "--time-budget" in capsys.readouterr().err
    (tmp_path / "afile").write_text("")
    assert main(["gen-tests", str(mod), "--out", str(tmp_path / "afile")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["gen-tests"]) == 2
    assert "give PATH" in capsys.readouterr().err
    # a file name given as --out (a first-hour slip) is refused, not made into a directory
    assert main(["gen-tests", str(mod), "--out", str(tmp_path / "test_m.py")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "test_m.py" in err[0] and "directory" in err[0], err
    assert not (tmp_path / "test_m.py").exists()


NOTES = '''"""Notes kept in a JSON file."""
import json

NOTES_FILE = "notes.json"


def save_notes(notes: list, path: str = NOTES_FILE) -> int:
    with open(path, "w") as fh:
        json.dump(notes, fh)
    return len(notes)


def load_notes(path: str = NOTES_FILE) -> list:
    with open(path) as fh:
        return json.load(fh)
'''

CALENDAR = '''"""A user module that shares its name with the standard library's calendar."""


def overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def free_slots(busy: list, day_end: int) -> list:
    out, t = [], 0
    for s, e in sorted(busy):
        if s > t:
            out.append((t, s))
        t = max(t, e)
    if t < day_end:
        out.append((t, day_end))
    return out
'''


def test_suites_run_in_fresh_directories_from_their_source_beside_a_users_conftest(tmp_path, monkeypatch):
    # three ways a written suite went wrong as a user ran it (plain `pytest`, from anywhere):
    # (1) tests of code with a default relative path wrote into the directory pytest ran in,
    #     overwriting the user's own notes.json; (2) a user's tests/conftest.py kept coevo from
    #     writing the one that put a src/ layout's root on sys.path: nothing imported; (3) a module
    #     named like a standard-library one (calendar) imported the standard library's
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[project]\nname = 'notes'\n")
    (proj / "src" / "notes.py").write_text(NOTES)
    (proj / "src" / "calendar.py").write_text(CALENDAR)
    (proj / "tests").mkdir()
    (proj / "tests" / "conftest.py").write_text("# the user's own\n")
    (proj / "notes.json").write_text('["precious"]')
    (proj / "tests" / "notes.json").write_text('["precious"]')
    where = tmp_path / "cwd"
    where.mkdir()
    monkeypatch.chdir(where)
    assert gen(proj / "src" / "notes.py") == 0
    assert gen(proj / "src" / "calendar.py") == 0
    assert list(where.iterdir()) == []  # nothing outside the suites' directory (hypothesis' cache once)
    suites = sorted(p.name for p in (proj / "tests").glob("test_*.py"))
    assert suites == ["test_calendar.py", "test_notes.py"]
    assert (proj / "tests" / "conftest.py").read_text() == "# the user's own\n"
    text = (proj / "tests" / "test_notes.py").read_text()
    assert "save_notes(" in text  # the writer is tested ...
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONPATH", None)
    for cwd in (proj, proj / "tests", tmp_path):
        res = subprocess.run([sys.executable, "-c", "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                              "-q", "-p", "no:cacheprovider", str(proj / "tests")],
                             capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
    # ... and wrote nowhere it was run from
    assert (proj / "notes.json").read_text() == '["precious"]'
    assert (proj / "tests" / "notes.json").read_text() == '["precious"]'
    assert not (tmp_path / "notes.json").exists()
    assert "del sys.modules[_name]" in (proj / "tests" / "test_calendar.py").read_text()
    assert "del sys.modules" not in text  # only where the name is found elsewhere too


def test_a_module_that_does_not_parse_is_left_out_of_a_package_run(tmp_path, capsys):
    # one broken module in a package stopped the whole run (exit 2, nothing written), while a
    # module whose import fails was only left out: both are now left out with a warning (exit 1)
    pkg = tmp_path / "mp"
    pkg.mkdir()
    (pkg / "good.py").write_text("def double(x: int) -> int:\n    return 2 * x\n")
    (pkg / "broken.py").write_text("def broken(:\n    pass\n")
    out = tmp_path / "out"
    assert gen(pkg, "--out", out) == 1
    err = capsys.readouterr().err
    assert f"warning: {pkg / 'broken.py'}: does not parse: invalid syntax (line 1)" in err
    assert (out / "test_good.py").exists() and not list(out.glob("test_broken*"))
    assert run_pytest(out).returncode == 0
    (pkg / "good.py").unlink()
    assert gen(pkg, "--out", tmp_path / "out2") == 2
    assert "broken.py:1: does not parse" in capsys.readouterr().err and not (tmp_path / "out2").exists()


def test_a_suite_the_user_edited_is_never_overwritten(tmp_path, capsys):
    (tmp_path / "calc.py").write_text("def double(x: int) -> int:\n    return 2 * x\n")
    out = tmp_path / "out"
    assert gen(tmp_path / "calc.py", "--out", out) == 0
    suite = out / "test_calc.py"
    again = suite.read_text()
    assert gen(tmp_path / "calc.py", "--out", out) == 0  # unedited: replaced in place
    assert suite.read_text() == again and not (out / "test_calc_generated.py").exists()
    edited = again + "\n\ndef test_mine():\n    assert True\n"
    suite.write_text(edited)
    capsys.readouterr()
    assert gen(tmp_path / "calc.py", "--out", out) == 0
    assert suite.read_text() == edited  # the user's now
    assert (out / "test_calc_generated.py").exists()
    assert "was not written by coevo or was edited since" in capsys.readouterr().err
    manifest = json.loads((out / ".coevo-gen-tests.json").read_text())
    assert "test_calc.py" not in manifest["files"] and "test_calc_generated.py" in manifest["files"]


def test_a_module_with_an_int_past_the_digit_limit_gets_its_suite(tmp_path):
    # red-team pass 8: a literal of 4,000 hex digits (past Python's 4,300 decimal digits) in the
    # code reached a mutant's description, in a docstring example `ast.unparse`: a traceback, no suite
    big, before = "0x" + "f" * 4000, sys.get_int_max_str_digits()
    mod = tmp_path / "bigint.py"
    mod.write_text(f'def g(n):\n    """Residue mod 7, or 1 for one number.\n\n    >>> g({big})\n    1\n    """\n'
                   f"    if n == {big}:\n        return 1\n    return n % 7\n")
    out = tmp_path / "out"
    assert gen(mod, "--out", out) == 0
    r = run_pytest(out)
    assert r.returncode == 0, r.stdout[-2000:]
    assert sys.get_int_max_str_digits() == before  # the limit is raised for the module's run only


@pytest.mark.parametrize("imports", ["import asyncio\n", "from unittest import mock\n"])
def test_a_module_importing_asyncio_or_mock_gets_its_suite(tmp_path, imports):
    # red-team pass 12, F7: asyncio's import builds a code object (types.coroutine), which the
    # sandbox forbids once programs run: the module was left out as "forbidden operation"
    text, out = suite_of(tmp_path, "amod", imports + "\n\ndef double(x: int) -> int:\n    return 2 * x\n")
    assert "double(" in text
    r = run_pytest(out)
    assert r.returncode == 0, r.stdout[-2000:]


def test_async_functions_are_tested_and_async_generators_named_as_not_tested(tmp_path, capsys):
    # red-team pass 12, F12: async functions were skipped silently; since gentests19 coroutine
    # functions and methods are run as asyncio.run(f(x)); async generators are still named
    mod = tmp_path / "coro.py"
    mod.write_text("def inc(x: int) -> int:\n    return x + 1\n\n\nasync def double(x: int) -> int:\n"
                   "    return 2 * x\n\n\nclass Client:\n    def __init__(self, n: int = 1):\n        self.n = n\n\n"
                   "    async def fetch(self) -> int:\n        return self.n\n\n\n"
                   "async def ticks(n: int):\n    for i in range(n):\n        yield i\n")
    out = tmp_path / "out"
    assert gen(mod, "--out", out) == 0
    err = capsys.readouterr().err
    assert "async functions are not tested: ticks" in err, err
    assert "asyncio.run(double(" in (out / "test_coro.py").read_text()
    rc = main(["gen-tests", f"{mod}::ticks", "--out", str(tmp_path / "out2"), "--time-budget", BUDGET])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "'ticks' is an async function" in err[0], err
    only = tmp_path / "only_async.py"
    only.write_text("async def ticks(n: int):\n    yield n\n")
    rc = main(["gen-tests", str(only), "--out", str(tmp_path / "out3"), "--time-budget", BUDGET])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "async functions are not tested" in err[0], err
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "plain.py").write_text("def inc(x: int) -> int:\n    return x + 1\n")
    shutil.copy2(only, pkg / "only_async.py")
    assert gen(pkg, "--out", tmp_path / "out4") == 1  # one module left out, said
    err = capsys.readouterr().err
    assert "only_async.py: nothing testable: async functions are not tested: ticks" in err, err


@pytest.mark.parametrize("top", ["import time\ntime.sleep(0.6)\n",  # longer than a call's limit (0.15 s here)
                                 "for _k in range(20000):\n    print('x' * 10)\n"])  # past the 64 KiB output cap
def test_a_slow_or_noisy_import_is_not_a_call_that_failed(tmp_path, top):
    # red-team pass 12, F9/F10: the import counted against the first call's time limit ("nothing
    # testable"), and an import printing more than 64 KiB failed with the harness's own exception
    text, _ = suite_of(tmp_path, "slowmod", top + "\n\ndef lookup(i: int) -> int:\n    return i * 2\n")
    assert "lookup(" in text


ENVDEP = '''import getpass
import os
import shutil
import socket
import sys


def username() -> str:
    return getpass.getuser()


def hostname() -> str:
    return socket.gethostname()


def term_width() -> int:
    return shutil.get_terminal_size().columns


def cpus() -> int:
    return os.cpu_count() or 1


def has_bashrc() -> bool:
    return os.path.exists(os.path.expanduser("~/.bashrc"))


def kernel() -> str:
    return os.uname().release


def scratch() -> str:
    import tempfile
    return tempfile.gettempdir()


def first_arg(argv=None) -> str:
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    return parser.parse_args(argv).name


def package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def inc(x: int) -> int:
    return x + 1
'''


def test_no_test_asserts_the_sandbox_s_environment_or_pytest_s_command_line(tmp_path):
    # red-team pass 12, F1/F3: tests asserted the sandbox's user, host, terminal width, CPU count,
    # HOME, kernel and temporary directory, and a call reading sys.argv saw pytest's command line
    text, out = suite_of(tmp_path, "envdep", ENVDEP)
    assert "inc(" in text and str(tmp_path) not in text  # nor this checkout's path
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "97", "HOME": str(home),
           "LOGNAME": "someone", "USER": "someone", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
    env.pop("PYTHONPATH", None)
    # as a user runs it: `python -m pytest tests/test_x.py`, no flag before the file
    r = subprocess.run([sys.executable, "-m", "pytest", "test_envdep.py"], capture_output=True, text=True,
                       cwd=out, env=env, timeout=120)
    assert r.returncode == 0, text + r.stdout[-3000:]


CLOCKDEP = '''import calendar
import datetime
import time
from datetime import date


def stamp() -> float:
    return time.time()


def today() -> date:
    return date.today()


def this_year() -> int:
    return datetime.datetime.now().year


def day_name() -> str:
    return time.strftime("%A")


def november(year: int) -> str:
    return calendar.month(year, 11)


def greeting() -> str:
    hour = datetime.datetime.now().hour
    return "morning" if 5 <= hour < 12 else "afternoon" if hour < 18 else "evening" if hour < 22 else "night"


def inc(x: int) -> int:
    return x + 1
'''


def test_no_test_asserts_the_clock(tmp_path):
    """Red-team pass 12 (gen-tests, item 2): tests asserted time.time() (within pytest.approx's
    default tolerance of about half an hour), date.today() and the current year: they fail a day
    (or an hour) later. The second verification run's clock is 400 days ahead; what depends on
    the clock fails it and is dropped, what does not (a given year's calendar) is kept."""
    text, _ = suite_of(tmp_path, "clockdep", CLOCKDEP)
    assert "inc(" in text and "november(" in text
    for name in ("stamp(", "today(", "this_year(", "day_name(", "greeting("):
        assert name not in text, text


def test_a_clock_behaviour_one_shift_maps_onto_itself_is_still_dropped(tmp_path):
    """The two verification runs on "another machine" shifted the clock by the same 400 days and
    12 hours (local hours 17.8 apart): a behaviour of the time of day that lands on the same value
    after that shift was kept (greeting() is 'afternoon' at 00:10 and at 17:58, so at some times of
    day the clock test above failed). The two runs now shift by different amounts; a behaviour
    periodic in the first shift (here exactly) fails the second and is dropped."""
    src = ("import time\n\n\ndef phase() -> int:\n"
           "    return int((time.time() % (400 * 86400 + 12 * 3600 + 1017.25)) // 3600)\n\n\n"
           "def inc(x: int) -> int:\n    return x + 1\n")
    text, _ = suite_of(tmp_path, "clockphase", src)
    assert "inc(" in text and "phase(" not in text, text


DATECODE = '''import argparse
import datetime

EPOCH = datetime.date(2020, 1, 1)


def a_datetime_is_a_date() -> bool:
    return isinstance(datetime.datetime(2021, 5, 3, 12, 0), datetime.date) and EPOCH.year == 2020


def days_since_epoch(year: int) -> int:
    return (datetime.date(2020 + abs(year) % 50, 3, 1) - EPOCH).days


def name_from(argv: list) -> str:
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("name")
    return parser.parse_args([str(a) for a in argv][:1] or ["x"]).name
'''


def test_the_later_clock_keeps_date_arithmetic_and_argparse_tests(tmp_path):
    """Red-team check of the clock shift and the environment rule: swapping in subclasses of
    date and datetime broke `isinstance(datetime, date)` (a module with a date constant kept no
    test at all), and every call building an argparse parser (it reads COLUMNS and LANG) was
    counted as reading the environment and never asserted."""
    text, _ = suite_of(tmp_path, "datecode", DATECODE)
    for name in ("a_datetime_is_a_date(", "days_since_epoch(", "name_from("):
        assert name in text, text


TZCODE = '''import datetime
import time


def local_hour(ts: int) -> int:
    return time.localtime(abs(ts) % 10**9).tm_hour


def local_day(ts: int) -> str:
    return datetime.datetime.fromtimestamp(abs(ts) % 10**9).strftime("%Y-%m-%d %H")


def utc_hour(ts: int) -> int:
    return time.gmtime(abs(ts) % 10**9).tm_hour
'''


def test_no_test_asserts_the_time_zone(tmp_path):
    """Gen-tests verification pass: values in local time were asserted in the sandbox's UTC and
    failed for a user with TZ=Europe/Paris. The second verification run has another time zone."""
    text, _ = suite_of(tmp_path, "tzcode", TZCODE)
    assert "utc_hour(" in text and "local_hour(" not in text and "local_day(" not in text, text
