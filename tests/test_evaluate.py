"""Held-out evaluation figures on hand-made samples (a canned engine: no model needed)."""

import pytest

from coevo.evaluate import EvalConfig, _evaluate
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task
from roles.generation import Sample

# sum of the positive elements; its 8 seeded mutants (matrix.mutation.mutants(seed=0)) are
# x < 0, total = 1, total -= x, total = -1, the first statement deleted, x >= 0, x > -1, x > 1:
# the ground-truth tests below reject 6 of them (x >= 0 and x > -1 behave like the reference)
REFERENCE = ("def f(xs):\n    total = 0\n    for x in xs:\n        if x > 0:\n"
             "            total += x\n    return total\n")
TASK = Task.from_json({"task_id": "sumpos", "prompt": "Return the sum of the positive elements of xs.",
                       "kind": "function", "entry_point": "f", "solutions": [REFERENCE],
                       "tests": [{"test": t} for t in ("assert f([3, -1, 2]) == 5", "assert f([]) == 0",
                                                       "assert f([1, 0]) == 1", "assert f([-2]) == 0")]})
SUITES = {
    # kills all 6 behaviour-changing mutants
    "strong": "assert f([3, -1, 2]) == 5\nassert f([1]) == 1\n",
    # right, but kills only the 3 mutants that break the empty list (total = 1, total = -1, deleted)
    "weak": "assert f([]) == 0\n",
    # wrong (the reference fails it): checks nothing, although the mutant total = 1 passes it
    "wrong": "assert f([]) == 1\n",
}


class CannedEngine:
    """Answers every Coder request with the reference and Tester request i with suite i."""

    def __init__(self, suites):
        self.suites = list(suites)

    def generate(self, reqs, progress=False):
        out = []
        for req in reqs:
            for i in range(req.n):
                text = ("```python\n" + REFERENCE + "```" if req.role == "coder"
                        else "```python\n" + self.suites[i] + "```")
                out.append(Sample(req.role, req.task_id, None, None, None, text, False, index=i))
        return out


def run(suites, **cfg):
    cfg = EvalConfig(n_codes=2, n_tests=len(suites), fix_turns=0, **cfg)
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        return _evaluate(CannedEngine(suites), None, ex, [TASK], cfg, False)


@pytest.mark.timeout(60)
def test_test_kill_tells_a_suite_that_checks_from_one_that_does_not():
    strong = run([SUITES["strong"]])
    weak = run([SUITES["weak"]])
    # both suites are right: test_acc cannot tell them apart, test_kill can
    assert strong["test_acc"] == weak["test_acc"] == 1.0
    assert strong["test_kill"] == 1.0
    assert weak["test_kill"] == 0.5
    # a wrong test kills nothing (only right tests count); the figure averages over Tester samples
    mixed = run([SUITES["strong"], SUITES["weak"], SUITES["wrong"]])
    assert mixed["test_acc"] == pytest.approx(2 / 3)
    assert mixed["test_kill"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert mixed["code_acc"] == 1.0
    # mutants = 0 turns the figure off
    assert "test_kill" not in run([SUITES["strong"]], mutants=0)
    with pytest.raises(ValueError, match="mutants"):
        EvalConfig(mutants=-1).validate()

