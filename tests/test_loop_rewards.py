"""How one co-evolution step turns matrices into rewarded rollouts (coevo.rollouts: labelled and
label-free Coder/Tester rewards, proposals, their metrics) and how the loop feeds the curriculum,
all through public functions and methods."""

from types import SimpleNamespace

import numpy as np
import pytest

from coevo.curriculum import Curriculum
from coevo.loop import CoEvolution, LoopConfig
from coevo.rollouts import ParsedSamples, parse_samples, proposal_metrics, proposer_rollouts, score_task, solver_jobs
from matrix.tasks import Task, Test


def sample(role, text=""):
    return SimpleNamespace(role=role, text=text, prompt_ids=[1], completion_ids=[2], logprobs=[0.0],
                           truncated=False)


def cfg(**kw):
    return LoopConfig(roles=["coder", "tester"], **kw)


def layout(n_codes, suites, rejected=None):
    return ParsedSamples([sample("coder") for _ in range(n_codes)], [sample("tester") for _ in suites],
                         ["def f(): pass"] * n_codes, suites, rejected or [0] * len(suites))


def rewards(score, role):
    return [x.reward for x in score.rollouts if x.group.startswith(role + "/")]


def make_loop(config, engine=None, **kw):
    """A loop with no model: the parts a test needs, the rest None."""
    from coevo.tinyworld.proposals import ProposalGuard

    parts = dict(tokenizer=None, trainer=None, executor=None, curriculum=Curriculum.from_tasks([]), examples=[],
                 proposal_check=ProposalGuard(frozenset()))
    parts.update(kw)
    return CoEvolution(config, engine, **parts)


T = Test.assertion


def test_labelled_rewards_follow_cure():
    task = Task("t", "p", tests=[T("assert f() == 1"), T("assert f() == 2")], solutions=["ref"])
    # 3 codes: code 0 correct, codes 1-2 wrong; tester sample A writes a test that rejects both wrong
    # codes, sample B a wrong test (the correct code fails it, both wrong codes pass), C nothing parseable
    suites = [[T("assert f() != 3")], [T("assert True or f()")], []]
    gt = np.array([[1, 1], [1, 0], [0, 0]], bool)
    gen = np.array([[1, 0], [0, 1], [0, 1]], bool)
    passed = np.vstack([np.hstack([gt, gen]), [[1, 1, 1, 0]]])  # + reference row
    out = score_task(task, layout(3, suites), passed, cfg(tester_accuracy_weight=0.0, tester_aggregate="mean"))
    assert {x.group for x in out.rollouts} == {"coder/t", "tester/t"}
    assert rewards(out, "coder") == [1.0, 0.0, 0.0]
    # rejects 2/2 wrong codes; lets 2/2 through; unparseable = minimum
    assert rewards(out, "tester") == [1.0, -1.0, -1.0]
    assert out.code_acc == pytest.approx(1 / 3) and out.observation == ("t", 3, 1)
    assert out.test_accs == [1.0, 0.0]  # the reference passes A's test, not B's; C wrote nothing
    assert out.broken == []  # the Fixer is not trained here
    # the default adds +-0.5 for a right/wrong test and sums over the suite; B also had two
    # rejected candidates (e.g. unparseable asserts), each scoring the minimum -1.5
    out = score_task(task, layout(3, suites, [0, 2, 0]), passed, cfg())
    assert rewards(out, "tester") == [1.5, -1.5 - 3.0, -1.5]
    assert out.test_accs == [1.0, 0.0]
    # with the Fixer trained, the first failing program goes to it (fix_codes=1)
    out = score_task(task, layout(3, suites), passed, LoopConfig(roles=["coder", "fixer"]))
    assert out.broken == [1]
    two = LoopConfig(roles=["coder", "fixer"], fix_codes=2)
    assert score_task(task, layout(3, suites), passed, two).broken == [1, 2]


def test_no_correct_code_means_no_tester_reward():
    task = Task("t", "p", tests=[T("assert f() == 1")])
    passed = np.array([[0, 1], [0, 0]], bool)
    out = score_task(task, layout(2, [[T("assert f()")]]), passed, cfg())
    assert np.isnan(rewards(out, "tester")).all() and out.test_accs == []


def test_reference_anchors_the_tester_reward_when_no_sample_is_correct():
    task = Task("t", "p", tests=[T("assert f() == 1")], solutions=["ref"])
    suites = [[T("assert f() == 1")], [T("assert f() == 2")], [T("assert f() == 5")]]
    # two wrong codes; the reference passes test A only; wrong code 1 passes test B
    gen = np.array([[0, 0, 0], [0, 1, 0]], bool)
    passed = np.vstack([np.hstack([np.zeros((2, 1), bool), gen]), [[1, 1, 0, 0]]])
    out = score_task(task, layout(2, suites), passed, cfg(tester_accuracy_weight=0.0))
    # A: correct (the reference passes), rejects both wrong codes -> 1; B: wrong, one wrong code
    # passes -> -1/2; C: wrong but rejects everything -> 0 under CURE ...
    assert rewards(out, "tester") == [1.0, -0.5, 0.0]
    out = score_task(task, layout(2, suites), passed, cfg())
    # ... and -0.5 with the default correctness term
    assert rewards(out, "tester") == [1.5, -1.0, -0.5]
    off = score_task(task, layout(2, suites), passed, cfg(anchor_reference=False))
    assert np.isnan(rewards(off, "tester")).all()


def test_label_free_uses_bidirectional_scores():
    task = Task("t", "p", tests=[T("assert f() == 1")])
    suites = [[T("assert f(1)")], [T("assert f(2)")], [T("assert f(3)")]]
    # three codes agree on tests 0 and 1; code 2 passes only test 2
    gen = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], bool)
    gt = np.zeros((3, 1), bool)  # ignored in label-free mode
    out = score_task(task, layout(3, suites), np.hstack([gt, gen]), cfg(label_free=True))
    coder, tester = rewards(out, "coder"), rewards(out, "tester")
    assert coder[0] == coder[1] > coder[2]
    assert tester[0] == tester[1] > tester[2]
    assert all(-1 <= r <= 1 for r in tester)


def test_curriculum_applies_a_steps_observations():
    cur = Curriculum.from_tasks([Task("t", "p")])
    cur.apply([("t", 4, 1)], [])
    assert cur.stats["t"].rate == 0.25 and cur.stats["t"].attempts == 4


def test_requested_test_count_counts_missing_and_extra_tests_as_rejected():
    task = Task("t", "p", entry_point="f", tests=[T("assert f() == 1")])
    texts = ["```python\nassert f() == 1\n```",  # one of three: two missing
             "```python\n" + "\n".join(f"assert f() == {i}" for i in range(5)) + "\n```",  # two extra
             "```python\nassert f() == 1\nassert f() == 2\nassert f(\n```"]  # two + one broken
    lay = parse_samples(task, [], [sample("tester", x) for x in texts], tests_per_sample=3)
    assert [len(s) for s in lay.suites] == [1, 3, 2]
    assert lay.rejected == [2, 2, 1] and len(lay.gen_tests) == 6
    free = parse_samples(task, [], [sample("tester", x) for x in texts])
    assert [len(s) for s in free.suites] == [1, 5, 2] and free.rejected == [0, 0, 0]


def test_unparseable_coder_samples_are_empty_rows():
    task = Task("t", "p", entry_point="f")
    coder = [sample("coder", "```python\ndef f():\n    return 1\n```"), sample("coder", "no code")]
    lay = parse_samples(task, coder, [])
    assert lay.codes[0].startswith("def f()") and lay.codes[1] == ""


def test_new_proposed_tasks_keep_their_first_observation():
    cur = Curriculum.from_tasks([Task("t", "p")])
    # the solver samples of the step that proposed it
    cur.apply([("proposed-1", 4, 1)], [Task("proposed-1", "q", solutions=["def f(): return 1"])])
    assert cur.stats["proposed-1"].proposed and cur.stats["proposed-1"].rate == 0.25


def test_proposal_metrics_stack_to_one():
    from coevo.selfplay import REJECT_REASONS

    m = proposal_metrics(["ok", "malformed", "duplicate", "ok"], [0.5, 1.0])
    assert set(REJECT_REASONS) <= {k.split("/")[1] for k in m if k.startswith("reject/")}
    assert m["reject/malformed"] == m["reject/duplicate"] == 0.25 and m["reject/heldout"] == 0.0
    assert sum(v for k, v in m.items() if k.startswith("reject/")) + m["proposer/valid_frac"] == 1.0
    assert m["proposer/accepted"] == 2 and m["proposer/solve_rate"] == 0.75 and m["proposer/learnable_frac"] == 0.5


def test_proposals_are_judged_solved_and_rewarded_in_one_step():
    """Four proposals of one batch: a new composition, the same one again, a seed task with new
    inputs (a collusion attempt) and garbage; the new task is solved by 1 of 2 solver samples."""
    from coevo.tinyworld import library as lib
    from coevo.tinyworld.proposals import ProposalGuard
    from matrix.engine import ExecConfig, Executor

    seed = lib.make_task(("list.double", "list.sum"))
    new = lib.reference_code(("list.add_one", "list.max"))
    fmt = "### Solution\n```python\n{}```\n### Inputs\n```\nf([1, 2])\nf([5])\nf([-3, 0])\n```"
    texts = [fmt.format(new), fmt.format(new), fmt.format(seed.solutions[0]), "### Sol"]
    config = LoopConfig(roles=["coder", "proposer"], n_solves=2, repetition_penalty=0.5)
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        loop = make_loop(config, executor=ex, curriculum=Curriculum.from_tasks([seed]),
                         proposal_check=ProposalGuard(frozenset()))
        info = loop.validate_proposals([sample("proposer", t) for t in texts])
        assert info["reasons"] == ["ok", "repeat", "duplicate", "malformed"]
        assert info["grades"] == ["valid", "copy", "copy", "malformed"]
        (i, req), = info["solve_requests"]
        assert i == 0 and req.n == 2 and "adds one to each element" in req.prompt
        solves = [sample("coder", "```python\n" + new + "```"),
                  sample("coder", "```python\ndef f(xs):\n    return 0\n```")]
        jobs = solver_jobs(info, solves)
        scored = proposer_rollouts(info, jobs, solves, ex.run_matrices(jobs), config)
    rewards = {x.group: [] for x in scored.rollouts}
    for x in scored.rollouts:
        rewards[x.group].append(x.reward)
    # learnability 1 - 0.5 plus the valid bonus 0.25, less 0.5 * (1 other of 3 with the same program) / 3;
    # the repeat and the renamed seed task are copies (-0.5, as much as a broken task)
    np.testing.assert_allclose(rewards["proposer/batch"], [0.5 + 0.25 - 0.5 / 3, -0.5, -0.5, -1.0])
    assert rewards["coder/" + info["tasks"][0].task_id] == [1.0, 0.0]  # the solver samples train the Coder
    assert scored.metrics["proposer/valid_frac"] == 0.25 and scored.metrics["reject/repeat"] == 0.25
    assert scored.new_tasks == [info["tasks"][0]]
    assert scored.observations == [(info["tasks"][0].task_id, 2, 1)]
    loop.curriculum.apply(scored.observations, scored.new_tasks)
    added = loop.curriculum.stats[info["tasks"][0].task_id]
    assert added.proposed and added.rate == 0.5


def test_seed_buffer_fills_the_curriculum_once_before_rl():
    """Absolute Zero's seed buffer: proposals drawn before step 1 are validated and solved, the
    valid ones join the curriculum with their observation, nothing is trained, and the flag that
    says so is part of the curriculum's checkpointed state."""
    from coevo.tinyworld import library as lib
    from coevo.tinyworld.proposals import ProposalGuard
    from matrix.engine import ExecConfig, Executor
    new = lib.reference_code(("list.negate", "list.max"))
    text = "### Solution\n```python\n" + new + "```\n### Inputs\n```\nf([1, 2])\nf([-5])\n```"

    class Engine:
        def generate(self, reqs, config=None):
            out = []
            for r in reqs:
                body = text if r.role == "proposer" else "```python\n" + new + "```"
                out += [SimpleNamespace(role=r.role, text=body if i else "garbage", meta=dict(r.meta),
                                        prompt_ids=[1], completion_ids=[2], logprobs=[0.0], truncated=False)
                        for i in range(r.n)]
            return out

    seed = lib.make_task(("list.double", "list.sum"))
    config = LoopConfig(roles=["coder", "proposer"], n_solves=2, seed_proposals=3)
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        loop = make_loop(config, Engine(), executor=ex, curriculum=Curriculum.from_tasks([seed]),
                         proposal_check=ProposalGuard(frozenset()))
        m = loop.seed_buffer(3, step=1)
    assert m == {"seed/proposals": 3.0, "seed/accepted": 1.0}  # garbage, the task, then its repeat
    (pid,) = [k for k, s in loop.curriculum.stats.items() if s.proposed]
    assert loop.curriculum.stats[pid].rate == 0.5 and loop.curriculum.seeded  # 1 of 2 solver samples
    assert loop.curriculum.state_dict()["seeded"] is True


def test_proposer_prompt_shows_references_from_the_curriculum_pool():
    from coevo.tinyworld import library as lib

    tasks = [lib.make_task(s) for s in [("list.double",), ("list.sum",), ("str.upper",), ("int.square",)]]
    loop = make_loop(LoopConfig(proposer_refs=3), curriculum=Curriculum.from_tasks(tasks[:1]))
    proposed = Task("proposed-x", "Write a function f(xs) that negates each element, then returns the list.",
                    "function", "f", solutions=[lib.reference_code(("list.negate",))],
                    meta={"inputs": ["f([1])", "f([2])"]})
    loop.curriculum.add(proposed, proposed=True)
    req = loop.proposer_request(np.random.default_rng(0), 8)
    assert req.n == 8 and req.role == "proposer" and req.prompt.count("<|example|>") == 2  # the pool has 2
    assert "xs = [-x for x in xs]" in req.prompt and "### Task" not in req.prompt  # program format
    loop.curriculum = Curriculum.from_tasks(tasks)
    req = loop.proposer_request(np.random.default_rng(0), 8)
    assert req.prompt.count("<|example|>") == 3


@pytest.mark.parametrize("field", ["proposer_valid_bonus", "repetition_penalty"])
def test_proposer_reward_weights_must_not_be_negative(field):
    LoopConfig(**{field: 0.0}).validate()
    with pytest.raises(ValueError, match=f"^{field}: must be >= 0"):
        LoopConfig(**{field: -0.1}).validate()


def test_the_proposer_samples_at_its_own_temperature_and_trains_at_it():
    # loop.proposer_temperature: the Proposer's requests go to the sampler with their own
    # temperature (the other roles' with loop.temperature), and their rollouts carry it to the trainer
    calls = []

    class Engine:
        def generate(self, reqs, config=None):
            calls.append(([r.role for r in reqs], config.temperature))
            return [SimpleNamespace(role=r.role, text="x", meta=dict(r.meta), prompt_ids=[1], completion_ids=[2],
                                    logprobs=[0.0], truncated=False) for r in reqs for _ in range(r.n)]

    from coevo.loop import sampling_config
    from roles.generation import GenRequest

    reqs = [GenRequest("coder", "t", "p", n=2), GenRequest("proposer", "*", "q", n=3)]
    loop = make_loop(LoopConfig(proposer_temperature=0.7), Engine())
    out = loop._generate_by_role(reqs, sampling_config(loop.cfg))
    assert calls == [(["coder"], 1.0), (["proposer"], 0.7)]
    assert [s.role for s in out] == ["coder"] * 2 + ["proposer"] * 3
    assert loop._role_temperature("proposer") == 0.7 and loop._role_temperature("coder") is None
    calls.clear()
    loop = make_loop(LoopConfig(), Engine())  # by default one call, one temperature
    loop._generate_by_role(reqs, sampling_config(loop.cfg))
    assert calls == [(["coder", "proposer"], 1.0)] and loop._role_temperature("proposer") is None
    with pytest.raises(ValueError, match="^proposer_temperature: must be > 0"):
        LoopConfig(proposer_temperature=0.0).validate()
