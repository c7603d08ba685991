"""How one co-evolution step turns a matrix into per-sample rewards (labelled and label-free)."""

from types import SimpleNamespace

import numpy as np
import pytest

from coevo.curriculum import Curriculum
from coevo.loop import CoEvolution, LoopConfig
from matrix.tasks import Task, Test


def sample(role, text=""):
    return SimpleNamespace(role=role, text=text, prompt_ids=[1], completion_ids=[2], logprobs=[0.0],
                           truncated=False)


def make_loop(**cfg):
    loop = CoEvolution.__new__(CoEvolution)  # no model needed to score a matrix
    loop.cfg = LoopConfig(roles=["coder", "tester"], **cfg)
    loop._observed, loop._new_tasks = [], []
    return loop


def layout(n_codes, suites, rejected=None):
    return {"coder": [sample("coder") for _ in range(n_codes)], "codes": ["def f(): pass"] * n_codes,
            "tester": [sample("tester") for _ in suites], "suites": suites,
            "rejected": rejected or [0] * len(suites),
            "gen_tests": [t for s in suites for t in s]}


T = Test.assertion


def test_labelled_rewards_follow_cure():
    task = Task("t", "p", tests=[T("assert f() == 1"), T("assert f() == 2")], solutions=["ref"])
    # 3 codes: code 0 correct, codes 1-2 wrong; tester sample A writes a test that rejects both wrong
    # codes, sample B a wrong test (the correct code fails it, both wrong codes pass), C nothing parseable
    suites = [[T("assert f() != 3")], [T("assert True or f()")], []]
    gt = np.array([[1, 1], [1, 0], [0, 0]], bool)
    gen = np.array([[1, 0], [0, 1], [0, 1]], bool)
    passed = np.vstack([np.hstack([gt, gen]), [[1, 1, 1, 0]]])  # + reference row
    metrics = {}
    cure = make_loop(tester_accuracy_weight=0.0, tester_aggregate="mean")
    out = cure._score_task(task, layout(3, suites), passed, None, [], metrics)
    coder = [x.reward for x in out if x.group == "coder/t"]
    tester = [x.reward for x in out if x.group == "tester/t"]
    assert coder == [1.0, 0.0, 0.0]
    assert tester == [1.0, -1.0, -1.0]  # rejects 2/2 wrong codes; lets 2/2 through; unparseable = minimum
    assert metrics["train/code_acc"] == pytest.approx(1 / 3)
    assert metrics["train/test_acc"] == pytest.approx(0.5)  # the reference passes A's test, not B's
    # the default adds +-0.5 for a right/wrong test and sums over the suite; B also had two
    # rejected candidates (e.g. unparseable asserts), each scoring the minimum -1.5
    metrics = {}
    out = make_loop()._score_task(task, layout(3, suites, [0, 2, 0]), passed, None, [], metrics)
    assert [x.reward for x in out if x.group == "tester/t"] == [1.5, -1.5 - 3.0, -1.5]
    assert metrics["train/test_acc"] == pytest.approx((1 + 0 / 3) / 2)


def test_no_correct_code_means_no_tester_reward():
    task = Task("t", "p", tests=[T("assert f() == 1")])
    passed = np.array([[0, 1], [0, 0]], bool)
    out = make_loop()._score_task(task, layout(2, [[T("assert f()")]]), passed, None, [], {})
    assert np.isnan([x.reward for x in out if x.group == "tester/t"]).all()


def test_reference_anchors_the_tester_reward_when_no_sample_is_correct():
    task = Task("t", "p", tests=[T("assert f() == 1")], solutions=["ref"])
    suites = [[T("assert f() == 1")], [T("assert f() == 2")], [T("assert f() == 5")]]
    # two wrong codes; the reference passes test A only; wrong code 1 passes test B
    gen = np.array([[0, 0, 0], [0, 1, 0]], bool)
    passed = np.vstack([np.hstack([np.zeros((2, 1), bool), gen]), [[1, 1, 0, 0]]])
    out = make_loop(tester_accuracy_weight=0.0)._score_task(task, layout(2, suites), passed, None, [], {})
    tester = [x.reward for x in out if x.group == "tester/t"]
    # A: correct (the reference passes), rejects both wrong codes -> 1; B: wrong, one wrong code
    # passes -> -1/2; C: wrong but rejects everything -> 0 under CURE ...
    assert tester == [1.0, -0.5, 0.0]
    out = make_loop()._score_task(task, layout(2, suites), passed, None, [], {})
    # ... and -0.5 with the default correctness term
    assert [x.reward for x in out if x.group == "tester/t"] == [1.5, -1.0, -0.5]
    off = make_loop(anchor_reference=False)._score_task(task, layout(2, suites), passed, None, [], {})
    assert np.isnan([x.reward for x in off if x.group == "tester/t"]).all()


def test_label_free_uses_bidirectional_scores():
    task = Task("t", "p", tests=[T("assert f() == 1")])
    suites = [[T("assert f(1)")], [T("assert f(2)")], [T("assert f(3)")]]
    # three codes agree on tests 0 and 1; code 2 passes only test 2
    gen = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], bool)
    gt = np.zeros((3, 1), bool)  # ignored in label-free mode
    out = make_loop(label_free=True)._score_task(task, layout(3, suites), np.hstack([gt, gen]), None, [], {})
    coder = [x.reward for x in out if x.group == "coder/t"]
    tester = [x.reward for x in out if x.group == "tester/t"]
    assert coder[0] == coder[1] > coder[2]
    assert tester[0] == tester[1] > tester[2]
    assert all(-1 <= r <= 1 for r in tester)


def test_curriculum_observations_are_applied_after_the_step():
    loop = make_loop()
    loop.curriculum = Curriculum.from_tasks([Task("t", "p")])
    loop._observed = [("t", 4, 1)]
    loop._sync_curriculum()
    assert loop.curriculum.stats["t"].rate == 0.25


def test_requested_test_count_counts_missing_and_extra_tests_as_rejected():
    task = Task("t", "p", entry_point="f", tests=[T("assert f() == 1")])
    texts = ["```python\nassert f() == 1\n```",  # one of three: two missing
             "```python\n" + "\n".join(f"assert f() == {i}" for i in range(5)) + "\n```",  # two extra
             "```python\nassert f() == 1\nassert f() == 2\nassert f(\n```"]  # two + one broken
    lay = make_loop(tests_per_sample=3)._layout(task, [], [sample("tester", x) for x in texts])
    assert [len(s) for s in lay["suites"]] == [1, 3, 2]
    assert lay["rejected"] == [2, 2, 1]
    free = make_loop()._layout(task, [], [sample("tester", x) for x in texts])
    assert [len(s) for s in free["suites"]] == [1, 5, 2] and free["rejected"] == [0, 0, 0]


def test_new_proposed_tasks_keep_their_first_observation():
    loop = make_loop()
    loop.curriculum = Curriculum.from_tasks([Task("t", "p")])
    loop._new_tasks = [Task("proposed-1", "q", solutions=["def f(): return 1"])]
    loop._observed = [("proposed-1", 4, 1)]  # the solver samples of the step that proposed it
    loop._sync_curriculum()
    assert loop.curriculum.stats["proposed-1"].proposed and loop.curriculum.stats["proposed-1"].rate == 0.25


def test_proposal_metrics_stack_to_one():
    from coevo.loop import proposal_metrics
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
    loop = make_loop(n_solves=2, repetition_penalty=0.5)
    loop.cfg.roles = ["coder", "proposer"]
    loop.tokenizer = None
    loop.curriculum = Curriculum.from_tasks([seed])
    loop.known_fingerprints, loop._known_ids = set(), set()
    loop.proposal_check = ProposalGuard(frozenset())
    loop._remember(seed)
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        loop.executor = ex
        info = loop._validate_proposals([sample("proposer", t) for t in texts])
        assert info["reasons"] == ["ok", "repeat", "duplicate", "malformed"]
        assert info["grades"] == ["valid", "copy", "copy", "malformed"]
        (i, req), = info["solve_requests"]
        assert i == 0 and req.n == 2 and "adds one to each element" in req.prompt
        solves = [sample("coder", "```python\n" + new + "```"),
                  sample("coder", "```python\ndef f(xs):\n    return 0\n```")]
        metrics = {}
        jobs = loop._solver_jobs(info, solves)
        out = loop._score_proposals(info, jobs, solves, ex.run_matrices(jobs), metrics)
    rewards = {x.group: [] for x in out}
    for x in out:
        rewards[x.group].append(x.reward)
    # learnability 1 - 0.5 plus the valid bonus 0.25, less 0.5 * (1 other of 3 with the same program) / 3;
    # the repeat and the renamed seed task are copies (-0.5, as much as a broken task)
    np.testing.assert_allclose(rewards["proposer/batch"], [0.5 + 0.25 - 0.5 / 3, -0.5, -0.5, -1.0])
    assert rewards["coder/" + info["tasks"][0].task_id] == [1.0, 0.0]  # the solver samples train the Coder
    assert metrics["proposer/valid_frac"] == 0.25 and metrics["reject/repeat"] == 0.25
    loop._sync_curriculum()
    added = loop.curriculum.stats[info["tasks"][0].task_id]
    assert added.proposed and added.rate == 0.5


def test_seed_buffer_fills_the_curriculum_once_before_rl():
    """Absolute Zero's seed buffer: proposals drawn before step 1 are validated and solved, the
    valid ones join the curriculum with their observation, nothing is trained, and the flag that
    says so is part of the curriculum's checkpointed state."""
    from coevo.tinyworld import library as lib
    from coevo.tinyworld.proposals import ProposalGuard
    from matrix.engine import ExecConfig, Executor
    from roles.generation import GenerationConfig

    new = lib.reference_code(("list.negate", "list.max"))
    text = "### Solution\n```python\n" + new + "```\n### Inputs\n```\nf([1, 2])\nf([-5])\n```"

    class Engine:
        config = GenerationConfig()

        def generate(self, reqs, config=None):
            out = []
            for r in reqs:
                body = text if r.role == "proposer" else "```python\n" + new + "```"
                out += [SimpleNamespace(role=r.role, text=body if i else "garbage", meta=dict(r.meta),
                                        prompt_ids=[1], completion_ids=[2], logprobs=[0.0], truncated=False)
                        for i in range(r.n)]
            return out

    seed = lib.make_task(("list.double", "list.sum"))
    loop = make_loop(n_solves=2, seed_proposals=3)
    loop.cfg.roles = ["coder", "proposer"]
    loop.tokenizer, loop.engine, loop.examples, loop.trainer = None, Engine(), [], None
    loop.curriculum = Curriculum.from_tasks([seed])
    loop.known_fingerprints, loop._known_ids = set(), set()
    loop.proposal_check = ProposalGuard(frozenset())
    loop._learn_curriculum()
    with Executor(ExecConfig(timeout=2.0, workers=1)) as ex:
        loop.executor = ex
        m = loop.seed_buffer(3, step=1)
    assert m == {"seed/proposals": 3.0, "seed/accepted": 1.0}  # garbage, the task, then its repeat
    (pid,) = [k for k, s in loop.curriculum.stats.items() if s.proposed]
    assert loop.curriculum.stats[pid].rate == 0.5 and loop.curriculum.seeded  # 1 of 2 solver samples
    assert loop._observed == [] and loop._new_tasks == []
    assert loop.curriculum.state_dict()["seeded"] is True


def test_proposer_prompt_shows_references_from_the_curriculum_pool():
    from coevo.tinyworld import library as lib

    tasks = [lib.make_task(s) for s in [("list.double",), ("list.sum",), ("str.upper",), ("int.square",)]]
    loop = make_loop(proposer_refs=3)
    loop.tokenizer, loop.examples = None, []
    loop.curriculum = Curriculum.from_tasks(tasks[:1])
    proposed = Task("proposed-x", "Write a function f(xs) that negates each element, then returns the list.",
                    "function", "f", solutions=[lib.reference_code(("list.negate",))],
                    meta={"inputs": ["f([1])", "f([2])"]})
    loop.curriculum.add(proposed, proposed=True)
    req = loop._proposer_request(np.random.default_rng(0), 8)
    assert req.n == 8 and req.role == "proposer" and req.prompt.count("<|example|>") == 2  # the pool has 2
    assert "xs = [-x for x in xs]" in req.prompt and "### Task" not in req.prompt  # program format
    loop.curriculum = Curriculum.from_tasks(tasks)
    req = loop._proposer_request(np.random.default_rng(0), 8)
    assert req.prompt.count("<|example|>") == 3


@pytest.mark.parametrize("field", ["proposer_valid_bonus", "repetition_penalty"])
def test_proposer_reward_weights_must_not_be_negative(field):
    LoopConfig(**{field: 0.0}).validate()
    with pytest.raises(ValueError, match=f"^{field}: must be >= 0"):
        LoopConfig(**{field: -0.1}).validate()
