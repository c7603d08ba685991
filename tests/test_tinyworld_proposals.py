"""The tiny world's admission check for proposed tasks (coevo.tinyworld.proposals)."""

import pytest

from coevo.tinyworld import library as lib
from coevo.tinyworld.proposals import ProposalGuard
from matrix.tasks import Task


@pytest.fixture(scope="module")
def world():
    return lib.build_world(seed=0, n_train=200, n_heldout=16)


def proposed(code, prompt=""):
    return Task("p", prompt, "function", "f", solutions=[code], meta={"inputs": ["f([1])", "f([2, 3])"]})


def fresh_train_steps(world, avoid):
    for a, b in lib.all_pairs():
        steps = (a, b)
        if (lib.is_valid(steps) and world.split_of(steps) == "train" and steps not in avoid
                and not lib.is_degenerate(steps) and lib.family_of(steps) == "list"):
            return steps
    raise AssertionError("no fresh composition")


def test_a_new_training_world_composition_is_admitted_and_described(world):
    guard = ProposalGuard(world.heldout_pairs, world.heldout_tasks, world.train_tasks)
    known = {tuple(t.meta["steps"]) for t in world.train_tasks}
    steps = fresh_train_steps(world, known)
    task = proposed(lib.reference_code(steps))
    assert guard(task) == (True, "")
    assert task.prompt == lib.describe(steps) and task.meta["steps"] == list(steps)


def test_attacks_are_refused_with_their_reason(world):
    guard = ProposalGuard(world.heldout_pairs, world.heldout_tasks, world.train_tasks)
    seed = world.train_tasks[0]
    held = world.heldout_tasks[0]
    cases = {
        # a seed task copied as is, and one that only differs in description wording
        "duplicate": proposed(seed.solutions[0]),
        # a held-out composition (the evaluation must stay unseen)
        "heldout": proposed(held.solutions[0]),
        # code outside the world's line style: no description can be derived
        "not_world": proposed("def f(xs):\n    return [x * 3 for x in xs]\n"),
        # n * 2 // 2 == n: an identity function dressed as two steps
        "identity": Task("p", "", "function", "f", solutions=[lib.reference_code(("int.double", "int.halve"))]),
        # keeps the even numbers, then the odd ones: always []
        "constant": proposed(lib.reference_code(("list.keep_even", "list.keep_odd"))),
    }
    for reason, task in cases.items():
        assert guard(task) == (False, reason), reason
    # a description that names another composition than the code
    steps = fresh_train_steps(world, {tuple(t.meta["steps"]) for t in world.train_tasks})
    lying = proposed(lib.reference_code(steps), prompt=seed.prompt)
    assert guard(lying) == (False, "not_world")


def test_behavioural_copies_are_duplicates(world):
    known = lib.make_task(("list.double", "list.sort"))
    guard = ProposalGuard(frozenset(), (), [known])
    swapped = proposed(lib.reference_code(("list.sort", "list.double")))  # same function, other order
    assert guard(swapped) == (False, "duplicate")
    # an accepted proposal is remembered: the next copy is a duplicate
    new = proposed(lib.reference_code(("list.add_one", "list.sum")))
    assert guard(new) == (True, "")
    guard.remember(new)
    assert guard(proposed(lib.reference_code(("list.add_one", "list.sum")))) == (False, "duplicate")


def test_behaviour_equal_to_a_heldout_task_is_heldout():
    held = lib.make_task(("list.double", "list.sort"))
    guard = ProposalGuard(frozenset(), [held])
    assert guard(proposed(lib.reference_code(("list.sort", "list.double")))) == (False, "heldout")


def test_proposals_may_repeat_a_step_and_go_one_deeper():
    guard = ProposalGuard(frozenset())
    halve_twice = proposed(lib.reference_code(("int.halve", "int.halve")))  # no dataset task has a repeat
    assert guard(halve_twice) == (True, "")
    assert halve_twice.prompt == ("Write a function f(n) that halves it rounding down, then halves it rounding "
                                  "down, then returns the number.")
    four = ("list.add_one", "list.double", "list.reverse", "list.sum")
    assert guard(proposed(lib.reference_code(four))) == (True, "")
    five = four[:3] + ("list.sort", "list.sum")
    assert guard(proposed(lib.reference_code(five))) == (False, "not_world")
    assert lib.recognize_code(lib.reference_code(four)) is None  # the dataset's rule stays strict
