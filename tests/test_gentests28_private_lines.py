"""gen-tests' kill matrix: the lines of a function that is no unit of its own (a dataclass's
__post_init__, a private helper) were taken for the module's top level, so their mutants ran on
16 calls spread over the module instead of those that executed the line. orders.py: `raise
ValueError("quantity must be positive")` -> `pass` was reported a survivor (32 calls tried, none
of them reaching it) while the written suite's `with pytest.raises(ValueError, match='quantity
must be positive')` kills it."""

import json
import shutil
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "gentests28"


def test_mutants_in_post_init_and_private_helpers_run_on_the_calls_that_reach_them(tmp_path):
    from coevo.cli import main

    shutil.copy2(FIX / "orders.py", tmp_path / "orders.py")
    assert main(["gen-tests", str(tmp_path / "orders.py"), "--out", str(tmp_path / "out"),
                 "--time-budget", "40", "--quiet"]) == 0
    text = (tmp_path / "out" / "test_orders.py").read_text()
    report = json.loads((tmp_path / "out" / "test_orders.json").read_text())
    src = (FIX / "orders.py").read_text().splitlines()
    checked = 0
    for msg in ("quantity must be positive", "unit price cannot be negative"):
        line = next(i for i, ln in enumerate(src, 1) if f'raise ValueError("{msg}")' in ln)
        if f"match='{msg}'" not in text:
            continue
        checked += 1  # the suite asserts the raise ...
        survived = [s for s in report["survivors"] if s["line"] == line and s["operator"] == "raise"]
        assert survived == [], (survived, report["survivors"])  # ... so its deletion is killed
    assert checked, text
