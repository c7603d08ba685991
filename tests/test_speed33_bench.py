"""benchmarks/matrix_speed.py's before/after mode (speed33): ``--pool-file`` reads a built and
screened pool (no MBPP data file needed, the same cells in every run) and ``--no-peers`` runs coevo
and the floor alone; the report keeps the floor's agreement and leaves the peers' keys out."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

POOL = [
    {"task_id": "t/add", "prompt": "add", "setup": "", "code": "def add(a, b):\n    return a + b\n",
     "tests": ["assert add(1, 2) == 3"],
     "codes": ["def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"],
     "all_tests": ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]},
    {"task_id": "t/rev", "prompt": "rev", "setup": "", "code": "def rev(s):\n    return s[::-1]\n",
     "tests": ["assert rev('ab') == 'ba'"],
     "codes": ["def rev(s):\n    return s[::-1]\n"],
     "all_tests": ["assert rev('ab') == 'ba'", "assert rev('') == ''", "assert rev('a') == 'b'"]},
]


def test_pool_file_and_no_peers(tmp_path):
    import matrix_speed

    pool_file = tmp_path / "pool.json"
    pool_file.write_text(json.dumps({"pool": POOL, "hanging_codes_dropped": 0}))
    before = pool_file.read_text()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = matrix_speed.main(["--pool-file", str(pool_file), "--no-peers", "--repeat", "1", "--workers", "1",
                                "--data", str(tmp_path / "no-such-data.jsonl.gz")])
    assert rc == 0
    report = json.loads(out.getvalue().strip().splitlines()[-1])
    assert report["cells"] == 2 * 2 + 1 * 3 and report["tasks"] == 2
    assert report["agreement"]["floor"] == {"agree": 7, "disagree": 0, "examples": []}
    assert report["coevo_matrix"]["statuses"] == {"pass": 3, "fail": 4}
    assert "per_program_harness" not in report and "per_cell_harness" not in report
    assert "within_1.5x_of_floor" in report["goals"]
    assert pool_file.read_text() == before  # read, not built again
