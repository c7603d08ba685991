"""benchmarks/selection.py end to end on a handful of function and stdio tasks (runs the sandbox)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TASKS = [
    {"task_id": "sum", "prompt": "Sum a list.", "kind": "function", "entry_point": "add_up",
     "solutions": ["def add_up(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"],
     "tests": [{"test": "assert add_up([1, 2, 3]) == 6"}, {"test": "assert add_up([]) == 0"},
               {"test": "assert add_up([5, -1, 10]) == 14"}]},
    {"task_id": "clamp", "prompt": "Clamp x to [lo, hi].", "kind": "function", "entry_point": "clamp",
     "solutions": ["def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n"
                   "    return x\n"],
     "tests": [{"test": "assert clamp(5, 0, 10) == 5"}, {"test": "assert clamp(-3, 0, 10) == 0"},
               {"test": "assert clamp(12, 0, 10) == 10"}]},
    {"task_id": "spread", "prompt": "Print max minus min of the numbers.", "kind": "stdio",
     "solutions": ["xs = [int(t) for t in input().split()]\nlo = min(xs)\nhi = max(xs)\nprint(hi - lo)\n"],
     "tests": [{"input": "3 1 4\n", "output": "3\n"}, {"input": "5 5\n", "output": "0\n"},
               {"input": "10 -2 7\n", "output": "12\n"}]},
    {"task_id": "evens", "prompt": "Count the even numbers among n.", "kind": "stdio",
     "solutions": ["n = int(input())\nxs = [int(t) for t in input().split()]\ncount = 0\n"
                   "for x in xs[:n]:\n    if x % 2 == 0:\n        count += 1\nprint(count)\n"],
     "tests": [{"input": "3\n1 2 4\n", "output": "2\n"}, {"input": "4\n1 3 5 7\n", "output": "0\n"},
               {"input": "2\n8 6\n", "output": "2\n"}]},
]


def test_selection_benchmark_builds_function_and_stdio_pools(tmp_path):
    data = tmp_path / "tasks.jsonl"
    data.write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    pool_dir = tmp_path / "pool"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "selection.py"), "--data", str(data),
                           "--tasks", "0", "--min-mutants", "2", "--workers", "2", "--quiet",
                           "--write-pool", str(pool_dir)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = json.loads(proc.stdout.strip().splitlines()[-1])
    assert line["benchmark"] == "selection" and line["n_tasks"] >= 3
    for key in ("accuracy", "accuracy_ties_shared", "test_accuracy"):
        assert set(line[key]) == {"coevo", "b4", "codet", "max_pass", "consensus"}
        assert all(0.0 <= v <= 1.0 for v in line[key].values())
    labels = [json.loads(x) for x in (pool_dir / "labels.jsonl").read_text().splitlines()]
    kinds = {json.loads(x)["task_id"]: json.loads(x)["kind"]
             for x in (pool_dir / "tasks.jsonl").read_text().splitlines()}
    assert {"function", "stdio"} <= set(kinds.values())  # stdio benchmarks give pools too
    tests = [json.loads(x) for x in (pool_dir / "tests.jsonl").read_text().splitlines()]
    for lab in labels:
        assert any(lab["correct"]) and not all(lab["correct"])
        assert "gt" in lab["test_kind"] and len(lab["test_kind"]) == len(lab["test_correct"])
        own = [t for t in tests if t["task_id"] == lab["task_id"]]
        assert len(own) == len(lab["test_kind"])
        if kinds[lab["task_id"]] == "stdio":  # spurious / corrupted tests are stdin/stdout pairs too
            assert all("input" in t and "output" in t for t in own)


def test_stdio_tests_never_assert_an_object_address():
    """A mutant printing a function prints another address on every run: such an output must not
    become a spurious or corrupted test (it could never pass again)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import selection as bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from matrix.tasks import Task

    task = Task(task_id="t", prompt="p", kind="stdio", entry_point=None, tests=[], solutions=[])
    assert bench._test_on(task, "1\n", "<function f at 0x7f3a2c1e4d30>\n") is None
    made = bench._test_on(task, "1\n", "2\n")
    assert made is not None and (made.input, made.output) == ("1\n", "2\n")
