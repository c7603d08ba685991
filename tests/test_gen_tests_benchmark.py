"""benchmarks/gen_tests_vs_pynguin.py, coevo's side on one small module (Pynguin is never needed)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_benchmark():
    spec = importlib.util.spec_from_file_location("gen_tests_vs_pynguin",
                                                  ROOT / "benchmarks" / "gen_tests_vs_pynguin.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_coevo_side_scores_one_small_module(tmp_path, capsys):
    bench = load_benchmark()
    assert bench.main(["--modules", "planted_bug.py", "--budget", "5", "--mutants", "12", "--work", str(tmp_path),
                       "--quiet"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    row = line["modules"]["planted_bug.py"]["coevo"]
    assert row["rc"] == 0 and row["tests"] >= 3 and row["passed"] == row["tests"]
    assert row["failed"] == 0 and row["flaky"] == 0
    assert row["line_coverage"] == 1.0 and row["branch_coverage"] == 1.0
    assert row["mutation_score_detail"]["total"] == 12 and row["mutation_score"] >= 0.5
    assert row["suspects"] == 2 and "pynguin" not in line["modules"]["planted_bug.py"]
    assert line["summary"]["coevo"]["tests"] == row["tests"]


def test_mutation_score_counts_what_the_suite_catches(tmp_path):
    bench = load_benchmark()
    src = tmp_path / "src"
    tests = tmp_path / "tests"
    src.mkdir()
    tests.mkdir()
    (src / "tiny.py").write_text("def inc(x):\n    return x + 1\n")
    (tests / "test_tiny.py").write_text("from tiny import inc\n\n\ndef test_inc():\n    assert inc(1) == 2\n")
    mutants = ["def inc(x):\n    return x - 1\n", "def inc(x):\n    return x + 1 if x != 7 else 0\n",
               "def inc(x):\n    while True:\n        pass\n"]
    res = bench.mutation_score(src, "tiny.py", src / "tiny.py", tests, mutants, [], timeout=5.0)
    assert res == {"score": round(2 / 3, 4), "killed": 2, "total": 3}  # the hang counts as killed
