"""Self-play (issue 18): what a proposal refused as held out earns.

Found on the demo of 5b3cecf (/work/s22/demo_base): over its 80 steps 8.9% of the proposals were
refused as ``heldout`` (a composition with a held-out adjacent pair, or behaving like a held-out
task), graded ``degenerate`` (-0.25), while a copy of a known task earned -0.5 and garbage -1. In
the Proposer's GRPO group (mean reward about -0.3 in that run) a proposal that writes a held-out
evaluation task had a positive advantage: the shared model was pushed, a little, towards the
held-out tasks' programs.
"""

import math

from coevo.selfplay import GRADE
from matrix.rewards import proposer_batch_rewards

NAN = math.nan


def test_a_heldout_proposal_earns_no_more_than_a_copy_of_a_known_task():
    reasons = ["heldout", "duplicate", "malformed", "malformed"]
    rewards = proposer_batch_rewards([NAN] * 4, [GRADE[r] for r in reasons])
    # hand-worked: copy -0.5, malformed -1; before: heldout "degenerate" -0.25 (above the copy)
    assert list(rewards) == [-0.5, -0.5, -1.0, -1.0]
    # the group's mean is -0.75 either way; the held-out proposal's advantage is the copy's, not more
    adv = rewards - rewards.mean()
    assert adv[0] == adv[1] == 0.25


def test_a_heldout_proposal_is_below_every_valid_one_and_every_degenerate_new_task():
    reasons = ["heldout", "constant", "identity", "ok"]
    grades = ["valid" if r == "ok" else GRADE[r] for r in reasons]
    rewards = proposer_batch_rewards([NAN, NAN, NAN, 1.0], grades, valid_bonus=0.25)
    assert list(rewards) == [-0.5, -0.25, -0.25, 0.25]
