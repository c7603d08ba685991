"""The sanitized MBPP references pass their own tests in the matrix (apart from genuine
timeouts): 737, 787 and 794 return an ``re.Match`` that their tests use for its truth, and a
spread sample of the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.engine import ExecConfig, Executor

DATA = Path("/work/shared/data/sanitized-mbpp.json")
if not DATA.exists():
    DATA = Path(__file__).resolve().parents[1] / "data" / "sanitized-mbpp.json"


@pytest.mark.skipif(not DATA.exists(), reason="sanitized MBPP not available")
def test_sanitized_references_pass_their_tests():
    from coevo.data import load_any

    tasks = [t for t in load_any(DATA) if t.solutions and t.tests]
    named = {"737", "787", "794"}
    picked = [t for i, t in enumerate(tasks) if i % 8 == 0 or t.task_id.rsplit("/", 1)[-1] in named]
    assert {t.task_id.rsplit("/", 1)[-1] for t in picked} >= named
    with Executor(ExecConfig(timeout=10.0, workers=2)) as ex:
        results = ex.run_matrices([(t, [t.solutions[0]], list(t.tests)) for t in picked])
    failing = [(t.task_id, s, r.errors[0][j]) for t, r in zip(picked, results)
               for j, s in enumerate(r.status[0]) if s not in ("pass", "timeout")]
    assert failing == []
