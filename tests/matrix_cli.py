"""Run `coevo matrix` as a user does on one task's tasks, codes and tests files (tests of real
model outputs share it)."""
from __future__ import annotations

import json

from coevo.cli import main


def run_matrix(tmp_path, task, codes, tests):
    """``(status, errors)`` of ``coevo matrix`` on ``task`` with ``codes`` and ``tests`` written as
    its JSONL files under ``tmp_path``."""
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
