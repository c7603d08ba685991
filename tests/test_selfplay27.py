"""A copy graded as low as garbage (loop.proposer_copy_grade), session 26.

Late in a default demo half of the Proposer's outputs are duplicates of known tasks (0.41-0.51 of
all proposals over the last 20 steps). Sampled from a demo's final model (80 proposals), 31 of 41
duplicates were dataset tasks the shared model also learns as the Coder and 10 the run's own
accepted proposals; one was a copy of a reference shown in the prompt. A copy is graded -0.5, as a
broken task, so in a group with garbage (-1) it still ranks above the mean. ``proposer_copy_grade
= "malformed"`` grades duplicates and in-batch repeats like garbage (-1): RL then has nothing to
gain from writing a known program. The default ("copy") keeps the old rewards."""

import numpy as np
import pytest

from coevo.curriculum import Curriculum
from coevo.loop import CoEvolution, LoopConfig
from coevo.rollouts import proposer_rollouts, solver_jobs


def _sample(role, text=""):
    from types import SimpleNamespace

    return SimpleNamespace(role=role, text=text, prompt_ids=[1], completion_ids=[2], logprobs=[0.0],
                           truncated=False)


def _batch(copy_grade):
    """A new composition, the same again (repeat), a seed task (duplicate), garbage; the
    new task solved by 1 of 2 solver samples. Returns (reasons, grades, proposer rewards)."""
    from coevo.tinyworld import library as lib
    from coevo.tinyworld.proposals import ProposalGuard
    from matrix.engine import ExecConfig, Executor

    seed = lib.make_task(("list.double", "list.sum"))
    new = lib.reference_code(("list.add_one", "list.max"))
    fmt = "### Solution\n```python\n{}```\n### Inputs\n```\nf([1, 2])\nf([5])\nf([-3, 0])\n```"
    texts = [fmt.format(new), fmt.format(new), fmt.format(seed.solutions[0]), "### Sol"]
    config = LoopConfig(roles=["coder", "proposer"], n_solves=2, repetition_penalty=0.5,
                        proposer_copy_grade=copy_grade)
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        loop = CoEvolution(config, None, tokenizer=None, trainer=None, executor=ex,
                           curriculum=Curriculum.from_tasks([seed]), examples=[],
                           proposal_check=ProposalGuard(frozenset()))
        info = loop.validate_proposals([_sample("proposer", t) for t in texts])
        solves = [_sample("coder", "```python\n" + new + "```"),
                  _sample("coder", "```python\ndef f(xs):\n    return 0\n```")]
        jobs = solver_jobs(info, solves)
        scored = proposer_rollouts(info, jobs, solves, ex.run_matrices(jobs), config)
    rewards = [x.reward for x in scored.rollouts if x.group == "proposer/batch"]
    return info["reasons"], info["grades"], rewards, scored.metrics


def test_the_default_grades_a_copy_as_before():
    reasons, grades, rewards, _ = _batch("copy")
    assert reasons == ["ok", "repeat", "duplicate", "malformed"]
    assert grades == ["valid", "copy", "copy", "malformed"]
    np.testing.assert_allclose(rewards, [0.5 + 0.25 - 0.5 / 3, -0.5, -0.5, -1.0])


def test_copy_grade_malformed_gives_duplicates_and_repeats_the_garbage_reward():
    reasons, grades, rewards, metrics = _batch("malformed")
    assert reasons == ["ok", "repeat", "duplicate", "malformed"]  # the logged reasons do not change
    assert grades == ["valid", "malformed", "malformed", "malformed"]
    np.testing.assert_allclose(rewards, [0.5 + 0.25 - 0.5 / 3, -1.0, -1.0, -1.0])
    assert metrics["reject/duplicate"] == 0.25 and metrics["reject/repeat"] == 0.25


@pytest.mark.parametrize("bad", ["valid", "degenerate", "broken", "garbage", ""])
def test_other_copy_grades_are_refused(bad):
    with pytest.raises(ValueError, match="proposer_copy_grade"):
        LoopConfig(proposer_copy_grade=bad).validate()
