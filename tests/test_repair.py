"""Multi-turn repair (RLEF): the episode reward, episode advantages, and the episodes themselves."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coevo.repair import Episode, public_columns, run_episodes, start_episodes, valid_program
from matrix.rewards import repair_episode_rewards
from matrix.tasks import Task, Test
from training.advantages import compute_advantages

EPS = 1e-4

# ----------------------------------------------------------------------------- the episode reward


def test_episode_reward_hand_worked():
    r = repair_episode_rewards([True, False, True, False], [0, 0, 1, 2])
    np.testing.assert_allclose(r, [1.0, -1.0, 0.8, -1.4])
    r = repair_episode_rewards([True], [1], success=2.0, failure=0.0, invalid_penalty=0.5)
    np.testing.assert_allclose(r, [1.5])
    assert np.isnan(repair_episode_rewards([True, False], [math.nan, 0])).tolist() == [True, False]
    with pytest.raises(ValueError, match="invalid_turns"):
        repair_episode_rewards([True], [-1])
    with pytest.raises(ValueError, match="invalid_penalty"):
        repair_episode_rewards([True], [0], invalid_penalty=-0.1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=1, max_size=20), st.floats(0, 1))
def test_episode_reward_orders_episodes(eps, pen):
    solved, bad = zip(*eps)
    r = repair_episode_rewards(solved, bad, invalid_penalty=pen)
    for (s1, b1), r1 in zip(eps, r):
        for (s2, b2), r2 in zip(eps, r):
            if s1 and not s2 and b1 <= b2:
                assert r1 > r2  # solving beats failing at no more invalid turns
            if s1 == s2 and b1 < b2:
                assert r1 >= r2 and (pen < 1e-3 or r1 > r2)  # fewer invalid turns, more reward


# ----------------------------------------------------------------------------- episode advantages


def test_episode_advantages_hand_worked():
    # group g: episode x solved in 1 turn (+1), episode y failed over 3 turns (-1), episode z solved
    # in 2 turns (+1). Per episode: mean 1/3, std (ddof=1) sqrt(4/3), each turn gets its episode's.
    r = [1, -1, -1, -1, 1, 1]
    g = ["g"] * 6
    e = ["x", "y", "y", "y", "z", "z"]
    a = compute_advantages(r, g, episodes=e)
    s = math.sqrt(4 / 3)
    up, down = (2 / 3) / (s + EPS), (-4 / 3) / (s + EPS)
    np.testing.assert_allclose(a.adv, [up, down, down, down, up, up])
    assert a.group_mean[0] == pytest.approx(1 / 3)  # per sample it would be 0: long failures weigh once
    assert a.keep.all()


def test_episode_advantages_refuse_turns_with_different_rewards():
    with pytest.raises(ValueError, match="one reward"):
        compute_advantages([1.0, 0.0], ["g", "g"], episodes=["x", "x"])


def test_same_episode_key_in_two_groups_is_two_episodes():
    a = compute_advantages([1.0, 0.0, 1.0, 0.0], ["g", "g", "h", "h"], episodes=["x", "y", "x", "y"])
    b = compute_advantages([1.0, 0.0, 1.0, 0.0], ["g", "g", "h", "h"])
    np.testing.assert_allclose(a.adv, b.adv)


episode_batches = st.lists(st.tuples(st.sampled_from("gh"), st.integers(1, 3), st.sampled_from([-1.0, 0.0, 1.0, 0.8])),
                           min_size=1, max_size=10)


def _expand(batch):
    """Per-turn rewards, groups and episode keys of a batch of (group, turns, reward) episodes."""
    r, g, e = [], [], []
    for k, (grp, turns, rew) in enumerate(batch):
        r += [rew] * turns
        g += [grp] * turns
        e += [f"e{k}"] * turns
    return r, g, e


@settings(max_examples=60, deadline=None)
@given(episode_batches, st.sampled_from(["group", "batch", "none"]), st.booleans())
def test_episode_advantages_count_each_episode_once(batch, scale, drop):
    r, g, e = _expand(batch)
    a = compute_advantages(r, g, episodes=e, scale=scale, drop_zero_variance=drop)
    one = compute_advantages([x[2] for x in batch], [x[0] for x in batch], scale=scale, drop_zero_variance=drop)
    # every turn carries its episode's advantage, as if the episode were one sample
    turn_episode = [int(k[1:]) for k in e]
    np.testing.assert_allclose(a.adv, one.adv[turn_episode])
    np.testing.assert_array_equal(a.keep, one.keep[turn_episode])
    # keys None are single samples: the per-sample computation
    np.testing.assert_allclose(compute_advantages(r, g, episodes=[None] * len(r), scale=scale).adv,
                               compute_advantages(r, g, scale=scale).adv)


def test_trainer_passes_episodes_to_the_advantages():
    pytest.importorskip("torch")
    from test_trainer import run  # (tests/ is on sys.path under pytest, as for sandbox_cells)

    from training.rollout import Rollout

    good = [Rollout([3, 4], [5, 6], [-4.0, -4.0], 1.0, "fixer/t/0", "fixer", episode="a"),
            Rollout([3, 4, 9], [7], [-4.0], 1.0, "fixer/t/0", "fixer", episode="a"),
            Rollout([3, 4], [8], [-4.0], -1.0, "fixer/t/0", "fixer", episode="b")]
    _, ms = run(good)
    assert ms[0]  # one step over an episode of two turns and one of one
    bad = [good[0], Rollout([3, 4, 9], [7], [-4.0], -1.0, "fixer/t/0", "fixer", episode="a"), good[2]]
    with pytest.raises(ValueError, match="one reward"):
        run(bad)


# ----------------------------------------------------------------------------- episodes


TASK = Task("inc", "Return x plus one.", entry_point="f",
            tests=[Test.assertion("assert f(1) == 2"), Test.assertion("assert f(5) == 6"),
                   Test.assertion("assert f(-3) == -2")])
WRONG = "def f(x):\n    return x\n"
HALF = "def f(x):\n    return 2 if x == 1 else x\n"  # passes the first test only
RIGHT = "def f(x):\n    return x + 1\n"


class ScriptedEngine:
    """Answers each episode's turns from a script: {episode key: [completion text per turn]}."""

    def __init__(self, script):
        self.script = script
        self.requests = []

    def generate(self, reqs, config=None):
        out = []
        for q in reqs:
            self.requests.append(q)
            turn = sum(r.meta["episode"] == q.meta["episode"] for r in self.requests) - 1
            text = self.script[q.meta["episode"]][turn]
            out.append(SimpleNamespace(role="fixer", text=text, prompt_ids=[1], completion_ids=[2], logprobs=[0.0],
                                       truncated=False, meta=q.meta))
        return out


@pytest.fixture(scope="module")
def ex():
    from matrix.engine import ExecConfig, Executor

    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


def fenced(code):
    return "```python\n" + code + "```"


def test_episodes_stop_on_public_pass_and_judge_on_every_test(ex):
    start = ex.run_matrix(TASK, [WRONG], list(TASK.tests))
    from coevo.repair import public_feedback

    fb = public_feedback(TASK, start, 0, public=1)
    assert "f(1) == 2" in fb  # feedback names the failing public test only
    eps = start_episodes(TASK, WRONG, fb, 0.0, 4, max_turns=3, public=1, group="fixer/inc/0")
    assert [e.key for e in eps] == [f"fixer/inc/0#{j}" for j in range(4)]
    engine = ScriptedEngine({
        eps[0].key: [fenced(RIGHT)],  # solved at once
        eps[1].key: [fenced(HALF)],  # passes the public test, fails a hidden one: stops unsolved
        eps[2].key: ["no code here", fenced(WRONG), fenced(RIGHT)],  # an invalid turn, then solved
        eps[3].key: [fenced(WRONG)] * 3,  # never repaired: all 3 turns
    })
    run_episodes(eps, engine, ex)
    assert [len(e.attempts) for e in eps] == [1, 1, 3, 3]
    assert [e.solved for e in eps] == [True, False, True, False]
    assert [e.invalid_turns for e in eps] == [0, 0, 1, 0]
    assert eps[1].attempts[0].public_pass and eps[1].attempts[0].pass_frac == pytest.approx(1 / 3)
    r = repair_episode_rewards([e.solved for e in eps], [e.invalid_turns for e in eps])
    np.testing.assert_allclose(r, [1.0, -1.0, 0.8, -1.0])
    # the third turn's prompt shows the start and both earlier attempts with their feedback (the
    # model's turns are completions; feedback reaches the model only as prompt text)
    third = [q for q in engine.requests if q.meta["episode"] == eps[2].key][2]
    assert third.prompt.count("f(1) == 2") >= 2 and "return x\n" in third.prompt


def test_helpers():
    assert public_columns(TASK, 0) == [0, 1, 2] and public_columns(TASK, 2) == [0, 1]
    assert public_columns(TASK, 9) == [0, 1, 2]
    assert valid_program(RIGHT) and not valid_program("") and not valid_program("def f(:\n")
    e = Episode(TASK, WRONG, "fb", 0.0, max_turns=2)
    assert not e.done and not e.solved and e.turns() == [(WRONG, "fb")]


def test_eval_repair_figures_fix_acc_and_1_at_k(ex):
    from coevo.evaluate import EvalConfig, _repair_figures

    codes = [WRONG, RIGHT, HALF]
    res = ex.run_matrix(TASK, codes, list(TASK.tests))
    passed = np.asarray(res.passed, dtype=bool)
    broken = [(TASK, i, codes[i], passed[i], res) for i in (0, 2)]  # the failing programs
    starts = [(TASK, i, codes[i], passed[i], res) for i in (0, 1)]  # the first two Coder samples
    engine = ScriptedEngine({"inc#0": [fenced(WRONG), fenced(RIGHT)], "inc#2": [fenced(WRONG)] * 2})
    out = _repair_figures(engine, ex, None, broken, starts, EvalConfig(fix_turns=2))
    # program 0 is repaired at its second Fixer turn, program 2 never; program 0 is repaired once
    # for both figures (3 requests for it would mean a second episode)
    assert out == {"fix_acc": 0.5, "solve_1at1": 0.5, "solve_1at3": 1.0}
    assert sum(q.meta["episode"] == "inc#0" for q in engine.requests) == 2


def test_episodes_become_rollouts():
    from coevo.loop import LoopConfig
    from coevo.repair import Attempt
    from coevo.rollouts import fixer_rollouts

    def attempt(valid, solved, frac=0.0):
        return Attempt(sample=SimpleNamespace(role="fixer"), code="x" if valid else "", valid=valid,
                       public_pass=solved, solved=solved, pass_frac=frac, feedback="fb")

    def episodes():
        a = Episode(TASK, WRONG, "fb", 1 / 3, 2, group="fixer/inc/0", key="fixer/inc/0#0")
        a.attempts = [attempt(False, False), attempt(True, True, 1.0)]
        b = Episode(TASK, WRONG, "fb", 1 / 3, 2, group="fixer/inc/0", key="fixer/inc/0#1")
        b.attempts = [attempt(True, False, 2 / 3), attempt(True, False, 0.0)]
        return [a, b]

    out, metrics = fixer_rollouts(episodes(), LoopConfig(roles=["fixer"], fixer_reward="episode"))
    # RLEF: every turn, the episode's reward: a solved with one invalid turn 1 - 0.2, b failed -1
    assert [(x.episode, x.reward) for x in out] == [("fixer/inc/0#0", 0.8)] * 2 + [("fixer/inc/0#1", -1.0)] * 2
    assert metrics["train/fix_acc"] == 0.5 and metrics["fixer/solved_first_turn"] == 0.0
    assert metrics["fixer/invalid_turn_frac"] == 0.25
    out, _ = fixer_rollouts(episodes(), LoopConfig(roles=["fixer"], fixer_reward="gain"))
    # the single-turn gain reward on the first attempts: 0 - 1/3 and 2/3 - 1/3, no episode keys
    assert [x.episode for x in out] == [None, None]
    np.testing.assert_allclose([x.reward for x in out], [-1 / 3, 1 / 3])
    with pytest.raises(ValueError, match="fixer_reward"):
        LoopConfig(fixer_reward="bonus").validate()
    with pytest.raises(ValueError, match="fix_turns"):
        LoopConfig(fix_turns=0).validate()


def test_repair_turns_continue_while_any_rank_has_an_open_episode(monkeypatch):
    """Under ZeRO-3 entering the generation context is collective: a rank whose episodes are done
    keeps taking turns (generating nothing) while another rank's are still open."""
    from coevo import loop as L
    from training import distributed as D

    assert L._any_rank(True) and not L._any_rank(False)  # one process: the flag itself
    monkeypatch.setattr(D, "world_size", lambda: 2)
    monkeypatch.setattr(D, "all_gather_object", lambda flag: [flag, True])  # the other rank still open
    assert L._any_rank(False)
    monkeypatch.setattr(D, "all_gather_object", lambda flag: [flag, False])
    assert not L._any_rank(False) and L._any_rank(True)
