"""The end of a matrix run: no worker idles while another holds work it has not started (issue 23).
Packing and feeding only; no timings here.

Measured on the real-output pool (300 tasks, 72,133 cells, 0.1 s timeout; a unit of 256 cells
holding rows that hang on every test costs seconds): one worker waited 9.3 s for a unit at the end
while the other still had its two units (98 s against 88 s of work). Units now shrink as the work
left shrinks, and a worker is given a second unit only while there is enough left for the others.
"""

from __future__ import annotations

from collections import Counter

from matrix.dispatch import Entry, _may_queue_second, units
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test


def _entries(n_tasks: int, n_codes: int, n_tests: int) -> list[Entry]:
    out = []
    for k in range(n_tasks):
        task = Task(f"t{k}", "double", entry_point="f")
        tests = [Test.assertion(f"assert f({j}) == {2 * j}") for j in range(n_tests)]
        out.append(Entry(task, [f"def f(x):\n    return 2 * x + {c}\n" for c in range(n_codes)], None, [], tests))
    return out


def test_units_shrink_toward_the_end_and_cover_every_cell_once():
    entries = _entries(60, 10, 20)  # 12,000 cells: 256-cell units at first
    sizes, seen = [], Counter()
    for u in units(entries, 2, None):
        sizes.append(u.n_cells())
        seen.update(u.cells)
    assert sum(sizes) == 12_000 and len(seen) == 12_000 and max(seen.values()) == 1
    assert sizes[0] == 240  # whole rows of 20 cells, up to 256
    assert sizes[-1] < 64 and max(sizes[-4:]) < 240  # the last ones are small
    assert all(s >= 1 for s in sizes)


def test_a_small_matrix_is_packed_as_before():
    entries = _entries(2, 3, 4)  # 24 cells, 2 workers: units of ceil(24 / 8) = 3 cells
    sizes = [u.n_cells() for u in units(entries, 2, None)]
    assert sum(sizes) == 24 and max(sizes) <= 3


def test_a_worker_gets_a_second_unit_only_while_the_others_still_have_work_waiting():
    # one unit in flight: a second one only when, after it, every other worker can still get one
    assert _may_queue_second(outstanding=0, waiting=1, n_workers=2)
    assert _may_queue_second(outstanding=1, waiting=2, n_workers=2)
    assert not _may_queue_second(outstanding=1, waiting=1, n_workers=2)
    assert not _may_queue_second(outstanding=1, waiting=3, n_workers=4)
    assert not _may_queue_second(outstanding=2, waiting=100, n_workers=2)
    assert _may_queue_second(outstanding=1, waiting=1, n_workers=1)


def test_the_verdicts_are_those_of_one_unit_per_row():
    codes = [f"def f(x):\n    return 2 * x + {c % 3}\n" for c in range(9)]
    codes.append("def f(x):\n    while True:\n        pass\n")
    tests = [Test.assertion(f"assert f({j}) == {2 * j}") for j in range(7)]
    task = Task("t", "double", entry_point="f")
    with Executor(ExecConfig(timeout=0.5, workers=2)) as ex:
        r = ex.run_matrix(task, codes, tests)
    for c, row in enumerate(r.status[:9]):
        assert row == ["pass" if c % 3 == 0 else "fail"] * 7
    assert r.status[9] == ["timeout"] * 7
