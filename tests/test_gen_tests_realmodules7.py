"""gen-tests on what the sixth pass on published modules left (gentests22's report): code that
reads system files outside the project (CPython's mimetypes reads /etc/mime.types, which the
sandbox does not show), directory parameters (zipapp.create_archive(source), filecmp.dircmp(a, b)).
Fixtures in tests/fixtures/gentests23/ (with their licence notes)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from coevo.cli import main

FIX = Path(__file__).parent / "fixtures" / "gentests23"


def _gen(tmp_path, name: str, source: str, budget: str = "12") -> tuple[str, dict]:
    (tmp_path / f"{name}.py").write_text(source)
    assert main(["gen-tests", str(tmp_path / f"{name}.py"), "--out", str(tmp_path / "out"),
                 "--time-budget", budget, "--quiet"]) == 0
    text = (tmp_path / "out" / f"test_{name}.py").read_text()
    report = json.loads((tmp_path / "out" / f"test_{name}.json").read_text())
    return text, report


def _pytest(out: Path, reversed_listings: Path | None = None) -> subprocess.CompletedProcess:
    """pytest on the written suite; with ``reversed_listings`` (a directory for a sitecustomize),
    on a file system that lists a directory's entries in the other order (os.listdir, os.scandir)."""
    env = dict(os.environ)
    if reversed_listings is not None:
        reversed_listings.mkdir(exist_ok=True)
        (reversed_listings / "sitecustomize.py").write_text(REVERSED_LISTINGS)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(reversed_listings), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(out)], capture_output=True, text=True, cwd=out.parent, timeout=120, env=env)


REVERSED_LISTINGS = """\
import os

_listdir, _scandir = os.listdir, os.scandir


class _Reversed:
    def __init__(self, it):
        self._it, self._left = it, iter(list(it)[::-1])

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._left)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._it.close()

    def close(self):
        self._it.close()


os.listdir = lambda *a, **k: _listdir(*a, **k)[::-1]
os.scandir = lambda *a, **k: _Reversed(_scandir(*a, **k))
"""


def test_a_call_that_reads_a_system_file_outside_the_project_is_no_test(tmp_path):
    """A module reading the system's services and protocols databases (/etc/services,
    /etc/protocols: `os.path.isfile(path)`, `open(path)`, `os.path.exists`): the sandbox does not
    show them, so `load_services() == {'http': 80, 'https': 443, 'ssh': 22}` and
    `has_system_table() is False` were kept, and failed under pytest on this machine (2 failed,
    13 passed, 3 runs of 3). A call that opens, stats or lists an absolute path outside the
    project, the working directory and the Python installation is no test, as a call reading an
    environment variable is; the module's other functions are tested."""
    text, report = _gen(tmp_path, "sysfiles", (FIX / "sysfiles.py").read_text())
    tests = text[text.index("\ndef test"):]
    assert "parse_line(" in tests, text
    for call in (r"load_services\(\)", r"port_of\(", r"name_of\(", r"protocol_number\(", r"has_system_table\("):
        assert not re.search(call, tests), (call, text)
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr


DIRS = '''\
import os


def listing(top):
    """The files under top, with their sizes, sorted."""
    out = []
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            out.append((os.path.relpath(path, top), os.path.getsize(path)))
    return sorted(out)


def count_py_lines(top):
    total = 0
    for root, dirs, files in os.walk(top):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(root, name)) as fh:
                    total += len(fh.readlines())
    return total


def names(top):
    return sorted(os.listdir(top))


def entries(top):
    return [e.name for e in os.scandir(top)]


def first(top):
    return os.listdir(top)[0]


class dircmp:
    def __init__(self, a, b):
        self.left = a
        self.right = b

    def common(self):
        return sorted(set(os.listdir(self.left)) & set(os.listdir(self.right)))

    def left_only(self):
        return sorted(set(os.listdir(self.left)) - set(os.listdir(self.right)))
'''


def test_a_parameter_used_as_a_directory_gets_a_directory_with_files(tmp_path):
    """CPython's zipapp (`create_archive(source)`: `source.rglob('*')`) and filecmp (`dircmp(a,
    b)`: `os.listdir(self.left)`): a directory parameter only got strings of the pool or a file
    (NotADirectoryError, FileNotFoundError), so no test listed a tree. A parameter the code
    lists or walks as a directory gets a directory the test writes first, with files (and a
    subdirectory) in it; a second one the same tree or another."""
    text, report = _gen(tmp_path, "dirs", DIRS, budget="25")  # (at 12 and load 12 no test of dircmp.common)
    assert "mkdir(" in text and re.search(r"pathlib\.Path\('top/[\w/.]+'\)\.write_text\(", text), text
    assert re.search(r"assert listing\('top'\) == \[\(", text), text  # a tree's files, with sizes
    assert re.search(r"count_py_lines\('top'\) == [1-9]", text), text  # a file with the extension it looks for
    assert re.search(r"\.common\(\) == \['\w+", text), text  # files in both directories
    assert re.search(r"\.left_only\(\) == \['\w+", text), text  # a file in one of them only
    # os.listdir(3) lists a descriptor the call did not open (under pytest: one of its capture
    # files, or none), as os.stat(5) was: no test
    assert not re.search(r"names\(-?\d+\)", text), text
    # the order of a directory's entries is the file system's (a tmpfs in the sandbox, another on
    # the user's machine: filecmp's `dircmp('a', '_').left_list == ['b.txt', 'a.txt', 'sub']`
    # failed there): no test asserts it (a directory of one entry has one order: `entries('top') ==
    # ['sub']` is right anywhere), so the suite passes with every listing reversed too
    assert not re.search(r"entries\('\w+'\) == \[[^\]]*,", text), text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    run = _pytest(tmp_path / "out", reversed_listings=tmp_path / "site")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    assert not list(tmp_path.glob("top")), list(tmp_path.iterdir())  # written where each test runs


def test_a_list_whose_items_are_handed_to_a_function_of_str_is_a_list_of_str():
    """CPython's shlex: `join(split_command)` is `' '.join(quote(arg) for arg in split_command)`
    and `quote(s)` uses `s` as a string; split_command was a list of ints (`join([3, 1, 2])`:
    TypeError in quote, the only tests). The items a loop or comprehension hands to a module
    function take that function's parameter's type."""
    import tempfile

    from coevo.testgen.inputs import InputGenerator
    from coevo.testgen.target import analyze
    source = (Path(__file__).parent / "fixtures" / "gentests22" / "shlex.py").read_text()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "shlex_copy.py"
        path.write_text(source)
        module = analyze(path)
    gen = InputGenerator(module, seed=0)
    join = next(u for u in module.units if u.qualname == "join")
    spec = dict((p.name, s) for p, s in gen.specs(join))["split_command"]
    values = [eval(src) for src in gen.pool(spec, gen._consts(join))]
    assert any(v and all(type(x) is str for x in v) for v in values), values
    assert not any(v and all(type(x) is int for x in v) for v in values), values
