"""The Fixer (issue 20) is trained on the repair episodes that the held-out evaluation measures.

Found on the demo of 5b3cecf (/work/s22/demo_base, held-out Fixer 0.254 -> 0.181 after RL): with
``fixer_reward: gain`` (the default then) the loop played ONE repair turn (``fixer/turns`` 1.0 in
every step) while ``coevo eval`` plays ``eval.fix_turns`` = 2. On the same broken programs (3
sampling seeds, /work/s23/ml24/REPORT.md) the trained model's first turn was as good or better than
the SFT start's, but its second turn (a prompt holding the first attempt and its feedback, never
in an RL batch) solved 29 of 562 against 55 of 570. The default is RLEF's episode now: every turn
is a rollout with the episode's reward.
"""

from types import SimpleNamespace

from coevo.evaluate import EvalConfig
from coevo.loop import LoopConfig
from coevo.repair import Attempt, Episode
from coevo.rollouts import fixer_rollouts
from matrix.tasks import Task, Test

TASK = Task(task_id="inc", prompt="Add one.", entry_point="f", tests=[Test("assert f(1) == 2")],
            solutions=["def f(x):\n    return x + 1\n"])


def test_the_default_loop_trains_as_many_repair_turns_as_the_evaluation_measures():
    assert LoopConfig().fixer_turns == EvalConfig().fix_turns == 2
    assert LoopConfig(fixer_reward="gain").fixer_turns == 1  # the single-turn option stays
    assert LoopConfig(fix_turns=3).fixer_turns == 3


def test_the_default_fixer_reward_trains_the_second_turn():
    def attempt(solved):
        return Attempt(sample=SimpleNamespace(role="fixer"), code="def f(x):\n    return x\n", valid=True,
                       public_pass=solved, solved=solved, pass_frac=float(solved), feedback="fb")

    failed = Episode(TASK, "def f(x):\n    return x\n", "fb", 0.0, 2, group="fixer/inc/0", key="fixer/inc/0#0")
    failed.attempts = [attempt(False), attempt(False)]
    second = Episode(TASK, "def f(x):\n    return x\n", "fb", 0.0, 2, group="fixer/inc/0", key="fixer/inc/0#1")
    second.attempts = [attempt(False), attempt(True)]
    out, metrics = fixer_rollouts([failed, second], LoopConfig())
    # hand-worked (RLEF): every turn is a rollout with its episode's reward: -1 failed, +1 solved at turn 2;
    # before (gain): the first attempts only, [0.0, 0.0]: no signal, the turn that solved never trained
    assert [(x.episode, x.reward) for x in out] == [("fixer/inc/0#0", -1.0)] * 2 + [("fixer/inc/0#1", 1.0)] * 2
    assert metrics["fixer/turns"] == 2.0 and metrics["train/fix_acc"] == 0.5
