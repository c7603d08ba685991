"""Supervised examples for all four roles, built from tiny-world tasks.

Prompts come from :func:`roles.prompts.build_prompt` and targets from the ``render_*_completion``
functions, so the warm-up teaches exactly the formats the co-evolution loop samples and parses.

* coder: task -> reference code (sometimes with two example tests shown);
* tester: task -> ground-truth asserts on *freshly drawn* inputs (3-6 tests; the ``<|count|>``
  line present half of the time), so the tester learns the semantics rather than one test list;
* fixer: task + a buggy variant (one step replaced, dropped or swapped, or the reducer changed)
  + its execution feedback on the task's tests (:func:`roles.feedback.summarize_feedback`) ->
  the reference code;
* proposer: 1-3 other training tasks as references (Absolute Zero's prompt) -> a task in the
  *program format* of :func:`roles.prompts.render_task_completion` (solution and fresh inputs; the
  loop derives the description from the code). Nearly always (``p_novel``) the target is a *novel*
  composition: one that is not a training task but whose adjacent pairs all occur in training
  tasks (so it never touches a held-out pair). Self-play rejects duplicates of known tasks, so a
  Proposer that only learned to recite training tasks would never propose a valid one. The novel
  target is a *variant of one of the references* (one edit away, behaving differently) whenever
  one exists, so that the prompt determines most of the program (see :func:`proposer_example`).

Every example is a plain ``(role, prompt, completion)`` triple of strings; no tokenizer needed
(the prompts use the plain template, which is what a tokenizer without a chat template gets).

Tasks from outside the tiny world (no ``meta["steps"]``) still give coder examples (from their
reference solution), tester examples (a sample of their own tests) and proposer examples (when
``meta["inputs"]`` exists); they give no fixer examples.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matrix.tasks import Task
from roles.feedback import summarize_feedback
from roles.prompts import (
    build_prompt,
    render_code_completion,
    render_task_completion,
    render_tests_completion,
)

from .library import (
    MAX_PROPOSED_DEPTH,
    PRIMITIVES,
    call,
    is_degenerate,
    is_valid,
    literal,
    make_task,
    make_tests,
    pairs_of,
    pick_inputs,
    primitives,
    random_input,
    random_steps,
    recognize_code,
    reference_code,
    run_steps,
)
from .proposals import behaviour

ROLE_WEIGHTS = {"coder": 0.3, "tester": 0.45, "fixer": 0.15, "proposer": 0.1}


@dataclass
class Example:
    role: str
    prompt: str
    completion: str
    task_id: str = ""


@dataclass
class _Cell:  # what roles.feedback reads from an executed cell
    status: str
    value: Any = None
    error: str | None = None


def _steps(task: Task) -> tuple[str, ...] | None:
    """The task's composition, or ``None`` for a task from outside the tiny world."""
    steps = (task.meta or {}).get("steps")
    return tuple(steps) if steps and is_valid(steps) else None


def coder_example(task: Task, rng: random.Random, tokenizer=None,
                  p_tests: float = 0.2) -> Example | None:
    if not task.solutions:
        return None
    tests = None
    if rng.random() < p_tests and len(task.tests) >= 2:
        tests = rng.sample(task.tests, 2)
    prompt = build_prompt("coder", task, tokenizer, tests=tests)
    return Example("coder", prompt, render_code_completion(task.solutions[0]), task.task_id)


def tester_example(task: Task, rng: random.Random, tokenizer=None) -> Example | None:
    steps = _steps(task)
    k = rng.choice([3, 4, 5, 5, 6])
    if steps is not None:
        tests = make_tests(steps, pick_inputs(steps, rng, k, simple=True))
    else:  # a task from elsewhere: a sample of its own ground-truth tests
        if not task.tests:
            return None
        tests = rng.sample(task.tests, min(k, len(task.tests)))
    n = len(tests) if rng.random() < 0.5 else None
    prompt = build_prompt("tester", task, tokenizer, n_tests=n)
    return Example("tester", prompt, render_tests_completion(tests), task.task_id)


def mutate(steps: Sequence[str], rng: random.Random) -> tuple[str, ...] | None:
    """A plausible bug: one primitive replaced by another of the same family and kind, one step
    dropped, two adjacent steps swapped, or a reducer removed/added. ``None`` if none applies."""
    steps = list(steps)
    fam = PRIMITIVES[steps[0]].family
    for _ in range(20):
        op = rng.choice(["replace", "replace", "drop", "swap", "reducer"])
        new = list(steps)
        if op == "replace":
            i = rng.randrange(len(new))
            kind = PRIMITIVES[new[i]].kind
            new[i] = rng.choice([p.name for p in primitives(fam, kind) if p.name != new[i]])
        elif op == "drop" and len(new) > 1:
            del new[rng.randrange(len(new))]
        elif op == "swap" and len(new) > 1:
            i = rng.randrange(len(new) - 1)
            new[i], new[i + 1] = new[i + 1], new[i]
        elif op == "reducer":
            reducers = [p.name for p in primitives(fam, "reduce")]
            if not reducers:
                continue
            if PRIMITIVES[new[-1]].kind == "reduce":
                if len(new) == 1:
                    continue
                new = new[:-1]
            elif len(new) < 3:
                new.append(rng.choice(reducers))
            else:
                new[-1] = rng.choice(reducers)
        else:
            continue
        if tuple(new) != tuple(steps) and is_valid(new):
            return tuple(new)
    return None


def _failing_variant(task: Task, rng: random.Random, max_failures: int,
                     avoid: tuple[str, ...] | None = None) -> tuple[str, str] | None:
    """``(buggy code, its feedback on the task's tests)`` for a mutation that fails a test."""
    steps = _steps(task)
    if steps is None or not task.meta.get("inputs"):
        return None
    inputs = [_arg(c) for c in task.meta["inputs"]]
    for _ in range(10):
        bug = mutate(steps, rng)
        if bug is None:
            return None
        if bug == avoid:
            continue
        cells = []
        for x in inputs:
            got, want = run_steps(bug, x), run_steps(steps, x)
            ok = literal(got) == literal(want)
            cells.append(_Cell("pass" if ok else "fail", got))  # raw value, as the engine reports
        if all(c.status == "pass" for c in cells):
            continue
        return reference_code(bug), summarize_feedback(task.tests, cells, max_failures=max_failures)
    return None


def fixer_example(task: Task, rng: random.Random, tokenizer=None, max_failures: int = 1,
                  p_history: float = 0.3) -> Example | None:
    """A repair example, or ``None`` when no mutation of the task fails one of its tests. With
    probability ``p_history`` the prompt holds an earlier failed attempt too (multi-turn repair)."""
    cur = _failing_variant(task, rng, max_failures)
    if cur is None:
        return None
    history = []
    if rng.random() < p_history:
        prev = _failing_variant(task, rng, max_failures, avoid=recognize_code(cur[0]))
        if prev is not None and prev[0] != cur[0]:
            history.append(prev)
    prompt = build_prompt("fixer", task, tokenizer, code=cur[0], feedback=cur[1], history=history)
    return Example("fixer", prompt, render_code_completion(task.solutions[0]), task.task_id)


def _arg(call_src: str) -> Any:
    import ast

    node = ast.parse(call_src, mode="eval").body
    assert isinstance(node, ast.Call) and len(node.args) == 1
    return ast.literal_eval(node.args[0])


class NovelCompositions:
    """Draws compositions that are not among ``tasks`` (neither as steps nor as behaviour) but
    only chain pairs seen in them. ``grow``: the share of Proposer targets drawn one step longer
    than a reference (:func:`variant_of`)."""

    def __init__(self, tasks: Sequence[Task], grow: float = 0.0):
        self.grow = grow
        known = [s for s in (_steps(t) for t in tasks) if s is not None]
        self.known = set(known)
        self.pairs = {p for s in known for p in pairs_of(s)}
        self._known_behaviour: set[tuple[str, str]] | None = None  # computed on first use

    def admits(self, steps: Sequence[str]) -> bool:
        """``steps`` is a novel composition: several steps, unknown, only known pairs, not
        degenerate, and not behaving like a known task on self-play's probe inputs (self-play
        refuses those as duplicates, so a target like that would teach the Proposer to copy)."""
        steps = tuple(steps)
        if not (len(steps) > 1 and steps not in self.known and all(p in self.pairs for p in pairs_of(steps))
                and not is_degenerate(steps)):
            return False
        if self._known_behaviour is None:
            self._known_behaviour = {behaviour(s) for s in self.known}
        return behaviour(steps) not in self._known_behaviour

    def __call__(self, rng: random.Random, tries: int = 50) -> tuple[str, ...] | None:
        for _ in range(tries):
            steps = random_steps(rng)
            if self.admits(steps):
                return steps
        return None


def grow(steps: Sequence[str], rng: random.Random) -> tuple[str, ...] | None:
    """``steps`` with one more step (a primitive of its family inserted before any reducer, never
    next to itself), up to :data:`~coevo.tinyworld.library.MAX_PROPOSED_DEPTH` steps (the rule for
    proposed tasks); ``None`` if none applies."""
    steps = tuple(steps)
    if len(steps) >= MAX_PROPOSED_DEPTH:
        return None
    fam = PRIMITIVES[steps[0]].family
    end = len(steps) - (PRIMITIVES[steps[-1]].kind == "reduce")
    names = [p.name for p in primitives(fam, "step")]
    for _ in range(20):
        i = rng.randrange(end + 1)
        new = steps[:i] + (rng.choice(names),) + steps[i:]
        if is_valid(new, strict=False) and all(a != b for a, b in zip(new, new[1:])):
            return new
    return None


def variant_of(refs: Sequence[Task], rng: random.Random, novel: NovelCompositions,
               tries: int = 40) -> tuple[str, ...] | None:
    """A novel composition (see :class:`NovelCompositions`) one edit away from one of ``refs``,
    else ``None``: with probability ``novel.grow`` one step longer (:func:`grow`), otherwise a
    :func:`mutate` edit (a step replaced, dropped, swapped, or the reducer changed)."""
    bases = [s for s in (_steps(r) for r in refs) if s is not None]
    for _ in range(tries if bases else 0):
        base = rng.choice(bases)
        # (no draw when grow is 0: the default warm-up's example stream stays as it was)
        steps = grow(base, rng) if novel.grow and rng.random() < novel.grow else mutate(base, rng)
        if steps is not None and novel.admits(steps) and not _same_behaviour(steps, base):
            return steps
    return None


def _same_behaviour(a: Sequence[str], b: Sequence[str], probes: int = 12) -> bool:
    """``a`` and ``b`` agree on fixed random probe inputs (e.g. two commuting steps swapped)."""
    fam = PRIMITIVES[a[0]].family
    if PRIMITIVES[b[0]].family != fam:
        return False
    rng = random.Random(" ".join(a) + "|" + " ".join(b))
    return all(literal(run_steps(a, x)) == literal(run_steps(b, x))
               for x in (random_input(fam, rng) for _ in range(probes)))


def proposer_example(task: Task, rng: random.Random, tokenizer=None,
                     examples: Sequence[Task] = (), max_refs: int = 3,
                     novel: NovelCompositions | None = None, p_novel: float = 0.95,
                     p_variant: float = 1.0) -> Example | None:
    """A Proposer example: 1-``max_refs`` reference tasks -> a task in the program format.

    With probability ``p_novel`` the target is a novel composition; of those, a share
    ``p_variant`` is a *variant of a reference* (one edit away from one of the prompt's references,
    when one is novel), the rest drawn at random. A target that the prompt does not determine at
    all (a random composition) teaches the shared model to write programs regardless of its
    context, which is what the Coder must not do: with random targets the SFT start's held-out
    code accuracy fell from ~0.4 (no Proposer examples) to 0.19 (seed 0). A variant keeps the
    target new (Self-play refuses copies) while tied to what the prompt shows.
    """
    refs = []
    if examples and max_refs:
        k = rng.randint(1, max_refs)
        pool = [e for e in examples if e.task_id != task.task_id]
        refs = rng.sample(pool, min(k, len(pool)))
    steps = _steps(task)
    if steps is not None:
        fresh = None
        if novel is not None and rng.random() < p_novel:
            if refs and rng.random() < p_variant:
                fresh = variant_of(refs, rng, novel)
            if fresh is None:
                fresh = novel(rng)
        if fresh is not None:
            task = make_task(fresh, seed=rng.getrandbits(32), strict=False)
            steps = fresh
        inputs = [call(x) for x in pick_inputs(steps, rng, rng.choice([3, 4, 5]))]
    else:
        inputs = list((task.meta or {}).get("inputs") or [])
        if not task.solutions or not inputs:
            return None
    prompt = build_prompt("proposer", None, tokenizer, references=refs, kind=task.kind, describe=False)
    return Example("proposer", prompt, render_task_completion(task, inputs, describe=False), task.task_id)


def make_example(role: str, task: Task, rng: random.Random, tokenizer=None,
                 pool: Sequence[Task] = (), novel: NovelCompositions | None = None) -> Example | None:
    if role == "coder":
        return coder_example(task, rng, tokenizer)
    if role == "tester":
        return tester_example(task, rng, tokenizer)
    if role == "fixer":
        return fixer_example(task, rng, tokenizer)
    if role == "proposer":
        return proposer_example(task, rng, tokenizer, examples=pool, novel=novel)
    raise ValueError(f"unknown role {role!r}")


def sample_examples(tasks: Sequence[Task], n: int, seed: int = 0, tokenizer=None,
                    weights: dict[str, float] | None = None, proposer_grow: float = 0.0) -> list[Example]:
    """``n`` examples over ``tasks`` with roles drawn by ``weights`` (default
    :data:`ROLE_WEIGHTS`); deterministic given ``seed``. ``proposer_grow``: see
    :class:`NovelCompositions`."""
    weights = dict(weights or ROLE_WEIGHTS)
    roles = [r for r, w in weights.items() if w > 0]
    ws = [weights[r] for r in roles]
    rng = random.Random(seed)
    out: list[Example] = []
    tasks = list(tasks)
    if not tasks:
        raise ValueError("no tasks to build examples from")
    novel = NovelCompositions(tasks, grow=proposer_grow) if "proposer" in roles else None
    misses = 0
    while len(out) < n:
        role = rng.choices(roles, weights=ws)[0]
        ex = make_example(role, rng.choice(tasks), rng, tokenizer, pool=tasks, novel=novel)
        if ex is not None:
            out.append(ex)
            misses = 0
        else:
            misses += 1
            if misses > 1000:
                raise ValueError("these tasks yield no examples (no reference solutions or tests?)")
    return out
