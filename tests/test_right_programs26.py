"""Right programs around red-team pass 26 (a value whose parts are one object), split and generic,
pure and impure; each test passes in plain Python (``exec(setup + program); exec(test)`` in a fresh
interpreter) and must pass in the sandbox.

* A right grid (``[[0] * n for _ in range(n)]``) under the tests that caught the wrong one.
* A right program whose value shares a part on purpose: compared only (``f(2) == [[0, 0], [0,
  0]]``, ``{'a': x, 'b': x}``), mutated through one name and read through the other (the sharing
  is the program's meaning), and ``is`` between the parts.
* A mutable default argument the test reads after a later call (``a == [1, 2]``): the first
  call's value as it is when read (a split test read it as it was when returned), and as it was
  when a claim read it before the later call (``assert f(1) == [1]`` then ``f(2) == [1, 2]``).
* The task's setup data a program sorts in place (``data = [3, 1, 2]``): a split test reading
  ``data == [1, 2, 3]`` after the call read the setup's list as it was before the call; a program
  that does not change it, and a test reading it before the call, keep passing."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"

ex = executor_fixture()

ROWS = "def f(n):\n    return [[0] * n] * n\n"
GRID = "def f(n):\n    return [[0] * n for _ in range(n)]\n"
SHARED_DICT = "def f(n):\n    x = [n]\n    return {'a': x, 'b': x}\n"
ACC = "def f(x, acc=[]):\n    acc.append(x)\n    return acc\n"

# (name, program, tests)
RIGHT = [
    ("grid", GRID, ["g = f(3)\ng[0][0] = 1\nassert g == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]",
                    "g = f(3)\ng[0][0] = 1\nassert g[1][0] == 0", "g = f(2)\nassert g[0] is not g[1]",
                    "assert f(2) == [[0, 0], [0, 0]]"]),
    ("shared_rows_compared", ROWS, ["assert f(2) == [[0, 0], [0, 0]]", "assert f(2)[1] == [0, 0] and len(f(2)) == 2",
                                    "assert f(3) == [[0] * 3] * 3", "g = f(2)\nassert g[0] is g[1]",
                                    "g = f(2)\ng[0][0] = 1\nassert g == [[1, 0], [1, 0]]",
                                    "assert str(f(2)) == '[[0, 0], [0, 0]]'"]),
    # (9M items with each reference counted, past what the parent walks: the test runs again as a generic one)
    ("shared_rows_large", ROWS, ["assert f(3000) != 5", "assert f(3000) == [[0] * 3000] * 3000"]),
    ("shared_dict", SHARED_DICT, ["assert f(2) == {'a': [2], 'b': [2]}",
                                  "d = f(1)\nd['a'].append(2)\nassert d['b'] == [1, 2]",
                                  "d = f(1)\nassert d['a'] is d['b']"]),
    ("shared_in_tuple", "def f():\n    r = [1]\n    return (r, [r, r])\n",
     ["t = f()\nt[0].append(2)\nassert t == ([1, 2], [[1, 2], [1, 2]])", "assert f() == ([1], [[1], [1]])"]),
    ("default_argument", ACC, ["a = f(1)\nb = f(2)\nassert a == [1, 2]", "assert f(1) == [1]\nassert f(2) == [1, 2]",
                               "a = f(1)\nb = f(2)\nassert a is b", "assert f(1) == [1] and f(2) == [1, 2]"]),
]

CELLS = [(name, prefix + code, test, shape) for name, code, tests in RIGHT for test in tests
         for prefix in ("", IMPURE) for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,test,shape", CELLS, ids=[f"{c[0]}-{i}-{c[3]}" for i, c in enumerate(CELLS)])
def test_a_right_program_passes(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "pass", detail


SORT = "def f(xs):\n    xs.sort()\n    return xs\n"
COPY = "def f(xs):\n    return sorted(xs)\n"
SETUP_CELLS = [(name, prefix + code, "data = [3, 1, 2]\n", test, shape)
               for name, code, test in [
                   ("sorted_in_place", SORT, "assert f(data) == [1, 2, 3]\nassert data == [1, 2, 3]"),
                   ("sorted_copy", COPY, "assert f(data) == [1, 2, 3]\nassert data == [3, 1, 2]"),
                   ("read_before", SORT, "assert data == [3, 1, 2]\nassert f(data) == [1, 2, 3]")]
               for prefix in ("", IMPURE) for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,setup,test,shape", SETUP_CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(SETUP_CELLS)])
def test_a_right_program_changing_the_setups_data_passes(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == "pass", detail
