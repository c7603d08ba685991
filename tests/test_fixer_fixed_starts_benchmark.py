"""benchmarks/fixer_fixed_starts.py: the same broken programs (failing reference mutants) for every
model, one JSON line with each model's repair success and its gain over the run's SFT start."""

import json
import subprocess
import sys
from pathlib import Path

from tinymodel import build_tiny_model

ROOT = Path(__file__).resolve().parents[1]
TASK = {"task_id": "t/add", "prompt": "Add two numbers.", "entry_point": "add",
        "solutions": ["def add(a, b):\n    return a + b\n"],
        "tests": [{"test": t} for t in ("assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(0, 5) == 5")]}


def test_fixed_starts_for_the_sft_start_and_a_model(tmp_path):
    run = tmp_path / "run"
    build_tiny_model(run / "init")
    build_tiny_model(run / "model", seed=1)
    (run / "heldout.jsonl").write_text(json.dumps(TASK) + "\n")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from fixer_fixed_starts import broken_starts
    finally:
        sys.path.pop(0)
    from matrix.engine import ExecConfig, Executor
    from matrix.tasks import load_tasks

    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        starts, n = broken_starts(load_tasks(str(run / "heldout.jsonl")), ex, per_task=2)
    assert n == 1 and 1 <= len(starts) <= 2
    for _t, code, res, i in starts:  # each start is a mutant that fails a ground-truth test
        assert code != TASK["solutions"][0] and not all(s == "pass" for s in res.status[i])
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fixer_fixed_starts.py"), str(run),
                        "--per-task", "1", "--turns", "1", "--samples", "2"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["benchmark"] == "fixer_fixed_starts" and out["tasks"] == 1 and out["episodes"] == 1
    assert out["sft_start"]["fix_fixed_acc"] == 0.0  # random weights repair nothing
    assert out["seeds"] == [1234, 1235] and out["sft_start"]["per_seed"] == [0.0, 0.0]
    assert out["models"] == {str(run / "model"): {"fix_fixed_acc": 0.0, "per_seed": [0.0, 0.0],
                                                  "gain_points": 0.0, "gain_se": 0.0}}


def test_the_gain_is_the_mean_paired_difference_with_its_standard_error():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fixer_fixed_starts import _gain

    # hand-worked: differences 10, 20, 30 points -> mean 20, sd 10, se 10 / sqrt(3) = 5.77
    assert _gain([0.3, 0.4, 0.5], [0.2, 0.2, 0.2]) == {"gain_points": 20.0, "gain_se": 5.8}
    assert _gain([0.3], [0.2]) == {"gain_points": 10.0, "gain_se": None}
