"""gen-tests on code that lists the working directory, or a directory handed over but listed
several calls down (gentests23's report: CPython's glob, `glob('*.txt')` and
`glob1(dirname, pattern)` -> _glob1 -> _listdir -> _iterdir -> `arg = dirname; os.scandir(arg)`,
only ever saw an empty directory). Fixtures in tests/fixtures/gentests24/."""

import re
from pathlib import Path

from test_gen_tests_realmodules7 import _gen, _pytest

FIX = Path(__file__).parent / "fixtures" / "gentests24"


def test_code_listing_the_working_directory_or_a_directory_four_calls_down_sees_files(tmp_path):
    """`find(pattern)` filters the working directory's names, `count_here(suffix)` counts them
    (both saw an empty directory: `find('hello') == []`, `count_here('hello') == 0` only);
    `total_size(dirname, suffix)` lists `dirname` four calls down through `arg = where` (the
    parameter was never found a directory). Each now runs over a tree the test writes first."""
    text, _ = _gen(tmp_path, "finder", (FIX / "finder.py").read_text())
    assert re.search(r"assert find\('[^']*'\) == \['", text), text  # a name found
    assert re.search(r"assert count_here\('[^']*'\) == [1-9]", text), text
    assert re.search(r"assert total_size\('\w+', '[^']*'\) == [1-9]", text), text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    run = _pytest(tmp_path / "out", reversed_listings=tmp_path / "site")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["finder.py", "out", "site"]
