"""Sampled answers (solve, eval, gen-tests --tasks, training) read as a codes file's chat answers
are read: a chat model shown HumanEval's prompt answers with the function alone, using the
prompt's ``List`` and ``math`` without importing them; ``coevo eval --codes`` ran such an answer
after the prompt's imports it needs while the same answer sampled through ``--api-base`` (or an
in-process model) was a NameError on every test."""

from __future__ import annotations

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task
from roles.generation import Sample
from roles.parsing import with_prompt_imports

PROMPT = ('import math\nfrom typing import List\n\n\ndef close(numbers: List[float], threshold: float) -> bool:\n'
          '    """Any two numbers closer than threshold?"""\n')
ANSWER = ("def close(numbers: List[float], threshold: float) -> bool:\n"
          "    return any(math.fabs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n")
TASK = Task.from_json({"task_id": "HumanEval/0", "prompt": PROMPT, "entry_point": "close",
                       "tests": [{"test": "assert close([1.0, 2.0, 3.9, 4.0], 0.3) == True"},
                                 {"test": "assert close([1.0, 2.0, 3.0], 0.5) == False"}]})


def test_with_prompt_imports_adds_only_what_the_answer_reads_and_never_binds():
    assert with_prompt_imports(PROMPT, ANSWER) == "import math; from typing import List\n" + ANSWER
    own = "import math\nfrom typing import List\n" + ANSWER
    assert with_prompt_imports(PROMPT, own) == own
    assert with_prompt_imports("Return the sum of a list.", ANSWER) == ANSWER  # a prompt in words
    assert with_prompt_imports(PROMPT, "") == ""


class Canned:
    """A served model's answers: the function alone, in a fenced block after a sentence."""

    def generate(self, reqs, progress=False, config=None):
        return [Sample(r.role, r.task_id, None, None, None,
                       f"Here it is:\n\n```python\n{ANSWER}```\n" if r.role == "coder"
                       else "```python\nassert close([0.0, 0.1], 0.5) == True\n```", False, index=i)
                for r in reqs for i in range(r.n)]


def test_sampled_pools_run_a_chat_answer_after_the_prompts_imports():
    from roles.pools import PoolConfig, sample_pools

    pool = sample_pools(Canned(), None, [TASK], PoolConfig(n_codes=2, n_tests=1))[0]
    assert pool.codes and all(c.startswith("import math; from typing import List\n") for c in pool.codes)
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        res = ex.run_matrix(TASK, pool.codes, TASK.tests)
    assert res.passed.all(), [c.status for c in res.cells] if hasattr(res, "cells") else res


def test_training_and_held_out_eval_score_the_answer_as_the_codes_file_does():
    from coevo.evaluate import EvalConfig, _evaluate
    from coevo.rollouts import parse_samples

    coder = Canned().generate([type("R", (), {"role": "coder", "task_id": TASK.task_id, "n": 2})()])
    assert all(c.startswith("import math; from typing import List\n") for c in parse_samples(TASK, coder, []).codes)
    task = Task.from_json({**TASK.to_json(), "solutions": ["import math\nfrom typing import List\n" + ANSWER]})
    with Executor(ExecConfig(timeout=5.0, workers=1)) as ex:
        got = _evaluate(Canned(), None, ex, [task], EvalConfig(n_codes=2, n_tests=1, fix_turns=0, mutants=0), False)
    assert got["code_acc"] == 1.0
