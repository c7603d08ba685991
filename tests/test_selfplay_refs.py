"""The Proposer's references drawn from accepted proposals (loop.proposer_refs_proposed).

Late in a default demo most proposals are duplicates: the warm-up taught the Proposer to write a
task one edit away from a reference, and one edit away from a two-step dataset task is most often
another dataset task. References drawn from accepted proposals (three or four steps) move the
variants to where the known tasks are few."""

import numpy as np
import pytest

from coevo.curriculum import Curriculum
from coevo.loop import CoEvolution, LoopConfig, draw_references
from matrix.tasks import Task


def test_share_zero_draws_from_the_whole_pool_as_before():
    pool = ["a", "b", "c", "d", "e"]
    flags = [False, False, True, False, True]
    old = [pool[int(i)] for i in np.random.default_rng(3).choice(5, size=2, replace=False)]
    assert draw_references(pool, flags, 2, 0.0, np.random.default_rng(3)) == old


def test_share_one_draws_every_reference_from_the_proposals():
    pool = ["a", "b", "c", "d"]
    flags = [False, False, True, True]
    for seed in range(5):
        assert sorted(draw_references(pool, flags, 2, 1.0, np.random.default_rng(seed))) == ["c", "d"]


def test_too_few_proposals_are_filled_from_the_rest_and_none_falls_back_to_the_pool():
    pool = ["a", "b", "c", "d"]
    refs = draw_references(pool, [False, False, True, False], 3, 1.0, np.random.default_rng(0))
    assert len(refs) == 3 == len(set(refs)) and "c" in refs
    refs = draw_references(pool, [False] * 4, 2, 1.0, np.random.default_rng(0))
    assert len(refs) == 2 == len(set(refs)) and set(refs) <= set(pool)
    assert draw_references(pool, [True] * 4, 9, 0.5, np.random.default_rng(0)).__len__() == 4
    assert draw_references([], [], 2, 0.5, np.random.default_rng(0)) == []


def test_a_share_between_draws_each_reference_from_the_proposals_with_that_probability():
    pool = [f"s{i}" for i in range(50)] + [f"p{i}" for i in range(50)]
    flags = [False] * 50 + [True] * 50
    counts = {0: 0, 1: 0, 2: 0}
    for seed in range(40):
        refs = draw_references(pool, flags, 2, 0.5, np.random.default_rng(seed))
        counts[sum(r.startswith("p") for r in refs)] += 1
    assert all(counts[c] > 0 for c in counts)  # binomial(2, 0.5): 0, 1 and 2 proposals all occur


def _loop(share):
    from coevo.tinyworld import library as lib
    from coevo.tinyworld.proposals import ProposalGuard

    seeds = [lib.make_task(s) for s in [("list.double", "list.sort"), ("str.upper", "str.reverse"),
                                         ("int.square", "int.negate")]]
    loop = CoEvolution(LoopConfig(proposer_refs=2, proposer_refs_proposed=share), None, tokenizer=None,
                       trainer=None, executor=None, curriculum=Curriculum.from_tasks(seeds), examples=[],
                       proposal_check=ProposalGuard(frozenset()))
    proposals = [("list.negate", "list.reverse", "list.sort"), ("list.double", "list.negate", "list.sum")]
    for i, steps in enumerate(proposals):
        loop.curriculum.add(Task(f"proposed-{i}", lib.describe(steps), "function", "f",
                                 solutions=[lib.reference_code(steps)], meta={"steps": list(steps)}), proposed=True)
    return loop


def test_proposer_prompt_shows_the_accepted_proposals_at_share_one():
    for seed in range(3):
        req = _loop(1.0).proposer_request(np.random.default_rng(seed), 8)
        # the two proposals' own lines (no seed task reverses a list or returns a sum)
        assert "xs = xs[::-1]" in req.prompt and "return sum(xs)" in req.prompt
        assert req.prompt.count("<|example|>") == 2


def test_the_share_must_be_a_probability():
    with pytest.raises(ValueError, match="^proposer_refs_proposed: must be in"):
        LoopConfig(proposer_refs_proposed=1.5).validate()
    with pytest.raises(ValueError, match="^proposer_refs_proposed: must be in"):
        LoopConfig(proposer_refs_proposed=-0.1).validate()
