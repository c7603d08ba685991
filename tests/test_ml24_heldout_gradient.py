"""Self-play (issue 18): a proposal that writes a held-out composition gets no gradient at all.

s22 (017f81e) graded such a proposal like a copy (-0.5) instead of a degenerate new task (-0.25),
because above the copies it had a positive advantage and RL raised the share of held-out proposals
from 7% to 12%. As a copy it still has a positive advantage in a batch of worse proposals (a batch
of one held-out proposal and three malformed ones: mean -0.875, its advantage +0.375), and a lower
grade (-1) would push the shared weights *away* from the held-out evaluation's programs: either
way the held-out tasks' programs take part in training. Its reward is NaN now: the trainer drops
the sample from its group's statistics and from the loss (training.rollout: NaN = no reward).
"""

import math
from types import SimpleNamespace

import numpy as np

from coevo.loop import LoopConfig
from coevo.rollouts import proposer_rollouts
from coevo.selfplay import GRADE


def _proposals(reasons):
    samples = [SimpleNamespace(text=f"p{i}", role="proposer", task_id="*") for i in range(len(reasons))]
    return {"samples": samples, "reasons": list(reasons), "keys": [None] * len(reasons), "tasks": {},
            "solve_requests": [], "grades": ["valid" if r == "ok" else GRADE[r] for r in reasons]}


def test_a_heldout_proposal_has_no_reward_and_leaves_the_groups_statistics():
    cfg = LoopConfig(roles=["coder", "proposer"])
    score = proposer_rollouts(_proposals(["heldout", "malformed", "malformed", "duplicate"]), [], [], [], cfg)
    rewards = [s.reward for s in score.rollouts]
    assert len(rewards) == 4
    # hand-worked: held out -> no reward; malformed -1, copy -0.5 (before: -0.5 for the held-out one,
    # advantage +0.25 against the batch mean -0.75)
    assert math.isnan(rewards[0])
    assert rewards[1:] == [-1.0, -1.0, -0.5]
    finite = np.array(rewards[1:])
    assert finite.mean() == -2.5 / 3  # the group's mean is over the three others only
    # the step's figures still count it as a refusal
    assert score.metrics["reject/heldout"] == 0.25


def test_a_batch_of_heldout_proposals_only_trains_nothing():
    cfg = LoopConfig(roles=["coder", "proposer"])
    score = proposer_rollouts(_proposals(["heldout", "heldout"]), [], [], [], cfg)
    assert all(math.isnan(s.reward) for s in score.rollouts)


def test_the_trainer_drops_a_nan_reward_from_the_group_and_the_loss():
    from training.advantages import compute_advantages

    a = compute_advantages(np.array([math.nan, -1.0, -1.0, -0.5]), ["proposer/batch"] * 4, scale="none")
    assert not a.keep[0] and a.keep[1:].all()
    assert a.adv[0] == 0.0 or math.isnan(a.adv[0])
    np.testing.assert_allclose(a.adv[1:], [-1 / 6, -1 / 6, 1 / 3])
