"""The tiny world: library, split, examples (no torch needed here)."""

from __future__ import annotations

import json
import random

import pytest

from coevo import tinyworld as tw
from coevo.tinyworld import library as lib
from coevo.tinyworld import sft_examples as exm
from matrix.tasks import Task
from roles.parsing import parse_code, parse_task, parse_tests


def _passes(code: str, test_src: str) -> bool:
    """In-process check of trusted reference code (the world's own solutions) only."""
    env: dict = {}
    exec(code, env)  # noqa: S102 - our own reference code
    try:
        exec(test_src, env)  # noqa: S102
    except AssertionError:
        return False
    return True


@pytest.fixture(scope="module")
def world():
    return tw.build_world(0, n_train=300, n_heldout=40)


def _dump(w: lib.World) -> str:
    return json.dumps([t.to_json() for t in w.train_tasks + w.heldout_tasks], sort_keys=True)


def test_primitive_library_shape():
    fams = {p.family for p in lib.PRIMITIVES.values()}
    assert fams == {"list", "str", "int"}
    assert 25 <= len(lib.PRIMITIVES) <= 45
    for p in lib.PRIMITIVES.values():
        assert p.kind in ("step", "reduce")
        assert (p.kind == "reduce") == p.code.startswith("return ")


def test_world_is_deterministic(world):
    again = tw.build_world(0, n_train=300, n_heldout=40)
    assert _dump(world) == _dump(again)
    assert world.heldout_pairs == again.heldout_pairs
    other = tw.build_world(1, n_train=300, n_heldout=40)
    assert _dump(other) != _dump(world)


def test_sizes_and_ids(world):
    assert len(world.train_tasks) == 300
    assert len(world.heldout_tasks) == 40
    ids = [t.task_id for t in world.train_tasks + world.heldout_tasks]
    assert len(ids) == len(set(ids))


def test_split_is_by_composition(world):
    train = {tuple(t.meta["steps"]) for t in world.train_tasks}
    held = {tuple(t.meta["steps"]) for t in world.heldout_tasks}
    assert not train & held
    train_pairs = {p for s in train for p in lib.pairs_of(s)}
    assert not train_pairs & world.heldout_pairs  # no held-out pair is ever seen in training
    for s in held:
        assert any(p in world.heldout_pairs for p in lib.pairs_of(s))
        assert world.split_of(s) == "heldout"
        assert 2 <= len(s) <= 3
    for t in world.train_tasks:
        assert t.meta["split"] == "train"
    for t in world.heldout_tasks:
        assert t.meta["split"] == "heldout"
    # every primitive appears in training; every primitive of a held-out task too
    used = {name for s in train for name in s}
    assert used == set(lib.PRIMITIVES)


def test_every_reference_passes_its_tests(world):
    for t in world.train_tasks + world.heldout_tasks:
        assert t.kind == "function" and t.entry_point == "f"
        assert 4 <= len(t.tests) <= 6
        assert len(t.solutions) == 1
        for test in t.tests:
            assert test.kind == "assert"
            assert _passes(t.solutions[0], test.test), (t.task_id, test.test)
        # the tests discriminate: not all expected values equal
        outs = {test.test.split(" == ", 1)[1] for test in t.tests}
        assert len(outs) >= 2, t.task_id


def test_reference_code_matches_python_semantics():
    rng = random.Random(3)
    for name in lib.PRIMITIVES:
        steps = (name,)
        env: dict = {}
        exec(lib.reference_code(steps), env)  # noqa: S102
        for _ in range(30):
            x = lib.random_input(lib.family_of(steps), rng)
            assert env["f"](x) == lib.run_steps(steps, x), (name, x)


def test_task_roundtrips_through_the_tasks_contract(world):
    for t in world.heldout_tasks[:5]:
        back = Task.from_json(json.loads(json.dumps(t.to_json())))
        assert back == t


def test_describe_recognize_roundtrip(world):
    for t in world.train_tasks + world.heldout_tasks:
        steps = tuple(t.meta["steps"])
        assert lib.recognize(t.prompt) == steps
    assert lib.recognize("Write a function f(xs) that sorts the list.") is None
    assert lib.recognize("Return the sum of a and b.") is None
    assert lib.recognize("Write a function f(xs) that returns the sum, then returns the list.") is None


def test_recognize_code(world):
    for t in world.train_tasks + world.heldout_tasks:
        assert lib.recognize_code(t.solutions[0]) == tuple(t.meta["steps"])
    assert lib.recognize_code("def f(xs):\n    return sorted(xs)\n") is None
    assert lib.recognize_code("def f(xs):\n    return sum(xs)\n    return xs\n") is None
    assert lib.recognize_code("def g(xs):\n    return sum(xs)\n") is None


def test_check_proposed(world):
    ok, why = world.check_proposed(world.train_tasks[50])
    assert ok, why
    ok, why = world.check_proposed(world.heldout_tasks[0])
    assert not ok and "held out" in why
    bad = Task("x", "Return the sum of a and b.", entry_point="add", solutions=["def add(a, b): ..."])
    assert not world.check_proposed(bad)[0]
    # a training description with a held-out solution is rejected too
    t, h = world.train_tasks[60], world.heldout_tasks[0]
    sneaky = Task("x", t.prompt, entry_point="f", solutions=h.solutions)
    assert not world.check_proposed(sneaky)[0]
    mismatch = Task("x", t.prompt, entry_point="f", solutions=world.train_tasks[61].solutions)
    assert world.check_proposed(mismatch) == (False, "solution does not match the description")
    # the held-out pairs survive a round trip through heldout.jsonl (meta)
    pairs = lib.heldout_pairs_of(Task.from_json(json.loads(json.dumps(x.to_json())))
                                 for x in world.heldout_tasks)
    assert pairs and pairs <= world.heldout_pairs
    for x in world.heldout_tasks:
        assert not lib.check_proposed(x, pairs)[0]


def test_examples_parse_back(world):
    rng = random.Random(0)
    for t in world.train_tasks[:60]:
        ex = exm.coder_example(t, rng)
        assert ex.prompt.endswith("<|answer|>\n")
        pc = parse_code(ex.completion, "f")
        assert pc.ok and pc.code.strip() == t.solutions[0].strip()

        ex = exm.tester_example(t, rng)
        pt = parse_tests(ex.completion, t)
        assert pt.ok and 3 <= len(pt.tests) <= 6
        for test in pt.tests:
            assert _passes(t.solutions[0], test.test)

        ex = exm.proposer_example(t, rng, examples=world.train_tasks)
        pk = parse_task(ex.completion, "function")
        assert pk.ok, pk.error
        assert pk.task.prompt == "" and lib.recognize_code(pk.task.solutions[0]) == tuple(t.meta["steps"])
        assert pk.inputs and all(s.startswith("f(") for s in pk.inputs)

        ex = exm.fixer_example(t, rng)
        if ex is not None:
            assert "<|code|>" in ex.prompt and "<|feedback|>" in ex.prompt
            assert "failed: assert f(" in ex.prompt
            assert parse_code(ex.completion, "f").code.strip() == t.solutions[0].strip()


def test_proposer_targets_are_novel_training_world_compositions(world):
    novel = exm.NovelCompositions(world.train_tasks)
    known = {tuple(t.meta["steps"]) for t in world.train_tasks}
    rng = random.Random(3)
    drawn = [novel(rng) for _ in range(200)]
    assert all(s is not None for s in drawn)
    assert len(set(drawn)) > 120  # varied, not a handful recited (148 distinct with seed 3)
    for steps in drawn:
        assert steps not in known and world.split_of(steps) == "train" and not lib.is_degenerate(steps)
    t = world.train_tasks[0]
    exs = [exm.proposer_example(t, rng, examples=world.train_tasks, novel=novel) for _ in range(50)]
    targets = [lib.recognize_code(parse_task(e.completion, "function").task.solutions[0], strict=False) for e in exs]
    assert sum(s not in known for s in targets) >= 40  # nearly always novel (p_novel = 0.95)
    # the program format: no description in the target, 1-3 references in the prompt
    assert all("### Task" not in e.completion and 1 <= e.prompt.count("<|example|>") <= 3 for e in exs)


def test_proposer_targets_are_variants_of_a_reference(world):
    """A novel target is one edit away from one of the prompt's references (the prompt determines
    it in part) and behaves differently from that reference; with p_variant=0 it is drawn at random."""
    novel = exm.NovelCompositions(world.train_tasks)
    known = {tuple(t.meta["steps"]) for t in world.train_tasks}
    by_code = {t.solutions[0].strip(): tuple(t.meta["steps"]) for t in world.train_tasks}

    def edits(a, b):  # one mutate() edit apart: a step replaced, dropped or added, two adjacent swapped
        a, b = tuple(a), tuple(b)
        if len(a) == len(b):
            diff = [i for i in range(len(a)) if a[i] != b[i]]
            return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                      and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]]))
        short, long_ = sorted((a, b), key=len)
        return len(long_) == len(short) + 1 and any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))

    rng = random.Random(5)
    t = world.train_tasks[0]
    n_variant = 0
    for _ in range(60):
        e = exm.proposer_example(t, rng, examples=world.train_tasks, novel=novel, p_novel=1.0)
        target = lib.recognize_code(parse_task(e.completion, "function").task.solutions[0], strict=False)
        refs = [by_code[b.split("```")[0].strip()] for b in e.prompt.split("```python\n")[1:]]
        assert target not in known
        if any(edits(target, r) and not exm._same_behaviour(target, r) for r in refs):
            n_variant += 1
    assert n_variant >= 50  # nearly always a variant (a few fall back to a random novel composition)
    rng = random.Random(5)
    far = 0
    for _ in range(60):
        e = exm.proposer_example(t, rng, examples=world.train_tasks, novel=novel, p_novel=1.0, p_variant=0.0)
        target = lib.recognize_code(parse_task(e.completion, "function").task.solutions[0], strict=False)
        refs = [by_code[b.split("```")[0].strip()] for b in e.prompt.split("```python\n")[1:]]
        far += not any(edits(target, r) for r in refs)
    assert far >= 40  # random targets are mostly unrelated to the references


def test_proposer_targets_pass_self_plays_duplicate_check(world):
    """No SFT target behaves like a training task: self-play refuses those as duplicates, and
    before this check about half of the variant targets were such copies (e.g. two commuting
    steps in the other order, or a step whose effect the next one erases)."""
    from coevo.tinyworld.proposals import ProposalGuard

    novel = exm.NovelCompositions(world.train_tasks)
    guard = ProposalGuard(world.heldout_pairs, (), world.train_tasks)
    rng = random.Random(7)
    reasons = []
    for i in range(150):
        refs = rng.sample(world.train_tasks, rng.randint(1, 3))
        steps = exm.variant_of(refs, rng, novel) or novel(rng)
        task = Task(f"p{i}", "", entry_point="f", solutions=[lib.reference_code(steps)])
        reasons.append(guard(task)[1])
    assert reasons.count("duplicate") == 0 and reasons.count("") == len(reasons)


def test_variant_of_refuses_behavioural_copies(world):
    novel = exm.NovelCompositions(world.train_tasks)
    # two commuting steps: the swapped order behaves the same, so it never comes back
    ref = lib.make_task(("int.add_three", "int.sub_two"), seed=0)
    assert exm._same_behaviour(("int.sub_two", "int.add_three"), ("int.add_three", "int.sub_two"))
    rng = random.Random(0)
    drawn = {exm.variant_of([ref], rng, novel) for _ in range(30)}
    assert ("int.sub_two", "int.add_three") not in drawn
    assert all(v is None or not exm._same_behaviour(v, ref.meta["steps"]) for v in drawn)
    assert exm.variant_of([], random.Random(0), novel) is None


def test_mutations_are_valid_and_different():
    rng = random.Random(1)
    for name in lib.PRIMITIVES:
        for steps in [(name,), ("list.double", "list.sort", "list.sum")]:
            bug = exm.mutate(steps, rng)
            assert bug is None or (bug != tuple(steps) and lib.is_valid(bug))


def test_sample_examples_is_deterministic_and_mixed(world):
    a = exm.sample_examples(world.train_tasks, 80, seed=5)
    b = exm.sample_examples(world.train_tasks, 80, seed=5)
    assert [(e.role, e.prompt, e.completion) for e in a] == [(e.role, e.prompt, e.completion) for e in b]
    assert {e.role for e in a} == {"coder", "tester", "fixer", "proposer"}


def test_examples_from_tasks_outside_the_world():
    from matrix.tasks import Test

    add = Task("ext/add", "Return the sum of a and b.", entry_point="add",
               tests=[Test.assertion(f"assert add({i}, 1) == {i + 1}") for i in range(4)],
               solutions=["def add(a, b):\n    return a + b\n"], meta={"inputs": ["add(1, 2)"]})
    echo = Task("ext/echo", "Print the input.", kind="stdio", tests=[Test.stdio("x\n", "x\n")],
                solutions=["print(input())\n"])
    exs = exm.sample_examples([add, echo], 60, seed=0)
    roles = {e.role for e in exs}
    assert {"coder", "tester", "proposer"} <= roles and "fixer" not in roles
    for e in exs:
        if e.role == "tester" and e.task_id == "ext/add":
            assert parse_tests(e.completion, add).ok
    with pytest.raises(ValueError):
        exm.sample_examples([Task("ext/x", "Nothing.")], 3)


def test_grow_adds_one_step_before_any_reducer():
    rng = random.Random(0)
    for steps in [("list.double",), ("int.add_three", "int.sub_two"), ("list.square", "list.sum")]:
        for _ in range(20):
            new = exm.grow(steps, rng)
            assert new is not None and len(new) == len(steps) + 1
            assert lib.is_valid(new, strict=False) and all(a != b for a, b in zip(new, new[1:]))
            assert any(new[:i] + new[i + 1:] == steps for i in range(len(new)))  # one step inserted
            if lib.PRIMITIVES[steps[-1]].kind == "reduce":
                assert new[-1] == steps[-1]
    four = next(t.meta["steps"] for t in lib.build_world(0).train_tasks if len(t.meta["steps"]) == 3)
    longest = exm.grow(tuple(four), rng)
    assert longest is not None and exm.grow(longest, rng) is None  # at most MAX_PROPOSED_DEPTH steps


def test_proposer_grow_draws_longer_novel_targets_and_zero_keeps_the_warm_up(world):
    """tiny.proposer_grow: with 0 (the default) no Proposer target is longer than three steps;
    with 0.5 about a third of the targets have four steps, and none is a duplicate self-play
    would refuse."""
    from coevo.tinyworld.proposals import ProposalGuard

    def targets(grow):
        exs = exm.sample_examples(world.train_tasks, 400, seed=3, weights={"proposer": 1.0}, proposer_grow=grow)
        return exs, [lib.recognize_code(parse_task(e.completion, "function").task.solutions[0], strict=False)
                     for e in exs]

    _, t0 = targets(0.0)
    assert max(len(s) for s in t0) <= 3
    _, t5 = targets(0.5)
    four = [s for s in t5 if len(s) == 4]
    assert len(four) >= 80, len(four)
    guard = ProposalGuard(world.heldout_pairs, (), world.train_tasks)
    for i, steps in enumerate(four[:60]):
        task = Task(f"p{i}", "", entry_point="f", solutions=[lib.reference_code(steps)])
        assert guard(task) == (True, ""), (steps, guard(task))


def test_proposer_grow_is_checked_with_the_config():
    from coevo.settings import CoevoConfig
    from coevo.yaml_config import load_config

    assert load_config(CoevoConfig, None, ["tiny.proposer_grow=0.5"]).tiny.proposer_grow == 0.5
    with pytest.raises(Exception, match=r"field 'tiny.proposer_grow': must be in \[0, 1\]"):
        load_config(CoevoConfig, None, ["tiny.proposer_grow=1.5"])
