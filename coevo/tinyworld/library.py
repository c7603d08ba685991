"""The tiny world's task library: small Python primitives over ints, lists and strings, composed
into pipeline tasks with English descriptions, reference solutions and ground-truth tests.

A task is a *composition*: a sequence of 1-3 primitives of one *family* (``list``, ``str`` or
``int``), zero or more ``step`` primitives (same type in and out) optionally followed by one
``reduce`` primitive (list -> int, str -> int). Description and code are written step by step in
one regular style, so a tiny model can learn the phrase -> line mapping and compose it::

    Write a function f(xs) that keeps the even numbers, then doubles each element, then returns the sum.

    def f(xs):
        xs = [x for x in xs if x % 2 == 0]
        xs = [x * 2 for x in xs]
        return sum(xs)

Ground truth comes from the primitives' Python implementations (trusted code, evaluated here
without any sandbox); the tests check that the rendered reference agrees with them.

Train / held-out split *by composition*: a seeded fraction of the ordered pairs of adjacent
primitives is held out. A held-out task contains at least one held-out adjacent pair; a training
task contains none. Every primitive appears in training (all depth-1 tasks are training tasks),
so held-out tasks test composing known pieces in new ways. Everything is deterministic given the
seed (no use of ``hash()``; per-task randomness is derived with SHA-256).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from matrix.tasks import Task, Test

ENTRY = "f"

# ----------------------------------------------------------------------------------- primitives


@dataclass(frozen=True)
class Primitive:
    name: str  # unique, e.g. "list.double"
    family: str  # "list" | "str" | "int"
    kind: str  # "step" (same type in and out) | "reduce" (ends the pipeline)
    phrase: str  # English, e.g. "doubles each element"
    code: str  # one line, e.g. "xs = [x * 2 for x in xs]" or "return sum(xs)"
    fn: Callable[[Any], Any]


VAR = {"list": "xs", "str": "s", "int": "n"}
ENDING = {"list": ("returns the list", "return xs"), "str": ("returns the string", "return s"),
          "int": ("returns the number", "return n")}
FAMILIES = ("list", "str", "int")

VOWELS = "aeiouAEIOU"


def _first(xs):
    return xs[0] if xs else 0


def _last(xs):
    return xs[-1] if xs else 0


_PRIMS: list[Primitive] = [
    # ---- lists of ints: steps
    Primitive("list.double", "list", "step", "doubles each element",
              "xs = [x * 2 for x in xs]", lambda xs: [x * 2 for x in xs]),
    Primitive("list.add_one", "list", "step", "adds one to each element",
              "xs = [x + 1 for x in xs]", lambda xs: [x + 1 for x in xs]),
    Primitive("list.sub_one", "list", "step", "subtracts one from each element",
              "xs = [x - 1 for x in xs]", lambda xs: [x - 1 for x in xs]),
    Primitive("list.square", "list", "step", "squares each element",
              "xs = [x * x for x in xs]", lambda xs: [x * x for x in xs]),
    Primitive("list.negate", "list", "step", "negates each element",
              "xs = [-x for x in xs]", lambda xs: [-x for x in xs]),
    Primitive("list.abs", "list", "step", "takes the absolute value of each element",
              "xs = [abs(x) for x in xs]", lambda xs: [abs(x) for x in xs]),
    Primitive("list.keep_even", "list", "step", "keeps the even numbers",
              "xs = [x for x in xs if x % 2 == 0]", lambda xs: [x for x in xs if x % 2 == 0]),
    Primitive("list.keep_odd", "list", "step", "keeps the odd numbers",
              "xs = [x for x in xs if x % 2 == 1]", lambda xs: [x for x in xs if x % 2 == 1]),
    Primitive("list.drop_negative", "list", "step", "removes the negative numbers",
              "xs = [x for x in xs if x >= 0]", lambda xs: [x for x in xs if x >= 0]),
    Primitive("list.keep_big", "list", "step", "keeps the numbers greater than 3",
              "xs = [x for x in xs if x > 3]", lambda xs: [x for x in xs if x > 3]),
    Primitive("list.reverse", "list", "step", "reverses the list",
              "xs = xs[::-1]", lambda xs: xs[::-1]),
    Primitive("list.sort", "list", "step", "sorts the list",
              "xs = sorted(xs)", lambda xs: sorted(xs)),
    Primitive("list.sort_desc", "list", "step", "sorts the list in descending order",
              "xs = sorted(xs, reverse=True)", lambda xs: sorted(xs, reverse=True)),
    Primitive("list.drop_first", "list", "step", "drops the first element",
              "xs = xs[1:]", lambda xs: xs[1:]),
    Primitive("list.take_three", "list", "step", "keeps the first three elements",
              "xs = xs[:3]", lambda xs: xs[:3]),
    # ---- lists of ints: reducers
    Primitive("list.sum", "list", "reduce", "returns the sum",
              "return sum(xs)", lambda xs: sum(xs)),
    Primitive("list.len", "list", "reduce", "returns the length",
              "return len(xs)", lambda xs: len(xs)),
    Primitive("list.max", "list", "reduce", "returns the largest element or 0 if empty",
              "return max(xs, default=0)", lambda xs: max(xs, default=0)),
    Primitive("list.min", "list", "reduce", "returns the smallest element or 0 if empty",
              "return min(xs, default=0)", lambda xs: min(xs, default=0)),
    Primitive("list.first", "list", "reduce", "returns the first element or 0 if empty",
              "return xs[0] if xs else 0", _first),
    Primitive("list.last", "list", "reduce", "returns the last element or 0 if empty",
              "return xs[-1] if xs else 0", _last),
    # ---- strings: steps
    Primitive("str.upper", "str", "step", "converts it to uppercase",
              "s = s.upper()", lambda s: s.upper()),
    Primitive("str.reverse", "str", "step", "reverses the string",
              "s = s[::-1]", lambda s: s[::-1]),
    Primitive("str.drop_vowels", "str", "step", "removes the vowels",
              's = "".join(c for c in s if c not in "aeiouAEIOU")',
              lambda s: "".join(c for c in s if c not in VOWELS)),
    Primitive("str.drop_spaces", "str", "step", "removes the spaces",
              's = s.replace(" ", "")', lambda s: s.replace(" ", "")),
    Primitive("str.double_chars", "str", "step", "doubles each character",
              's = "".join(c * 2 for c in s)', lambda s: "".join(c * 2 for c in s)),
    Primitive("str.take_three", "str", "step", "keeps the first three characters",
              "s = s[:3]", lambda s: s[:3]),
    Primitive("str.drop_first", "str", "step", "drops the first character",
              "s = s[1:]", lambda s: s[1:]),
    Primitive("str.sort", "str", "step", "sorts the characters",
              's = "".join(sorted(s))', lambda s: "".join(sorted(s))),
    Primitive("str.a_to_o", "str", "step", "replaces each a with o",
              's = s.replace("a", "o")', lambda s: s.replace("a", "o")),
    Primitive("str.exclaim", "str", "step", "adds an exclamation mark at the end",
              's = s + "!"', lambda s: s + "!"),
    # ---- strings: reducers
    Primitive("str.len", "str", "reduce", "returns the length",
              "return len(s)", lambda s: len(s)),
    Primitive("str.count_vowels", "str", "reduce", "returns the number of vowels",
              'return sum(1 for c in s if c in "aeiouAEIOU")', lambda s: sum(1 for c in s if c in VOWELS)),
    Primitive("str.count_words", "str", "reduce", "returns the number of words",
              "return len(s.split())", lambda s: len(s.split())),
    # ---- ints
    Primitive("int.add_three", "int", "step", "adds three",
              "n = n + 3", lambda n: n + 3),
    Primitive("int.sub_two", "int", "step", "subtracts two",
              "n = n - 2", lambda n: n - 2),
    Primitive("int.double", "int", "step", "doubles it",
              "n = n * 2", lambda n: n * 2),
    Primitive("int.square", "int", "step", "squares it",
              "n = n * n", lambda n: n * n),
    Primitive("int.negate", "int", "step", "negates it",
              "n = -n", lambda n: -n),
    Primitive("int.abs", "int", "step", "takes the absolute value",
              "n = abs(n)", lambda n: abs(n)),
    Primitive("int.halve", "int", "step", "halves it rounding down",
              "n = n // 2", lambda n: n // 2),
    Primitive("int.mod_ten", "int", "step", "takes the remainder modulo 10",
              "n = n % 10", lambda n: n % 10),
]

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _PRIMS}
assert len(PRIMITIVES) == len(_PRIMS)
for _p in _PRIMS:  # descriptions are parsed back by splitting on ", then "
    assert ", then " not in _p.phrase and not _p.phrase.endswith(".")


def primitives(family: str | None = None, kind: str | None = None) -> list[Primitive]:
    return [p for p in _PRIMS if (family is None or p.family == family)
            and (kind is None or p.kind == kind)]


# ----------------------------------------------------------------------------------- compositions

Steps = tuple[str, ...]


def family_of(steps: Sequence[str]) -> str:
    return PRIMITIVES[steps[0]].family


MAX_PROPOSED_DEPTH = 4


def is_valid(steps: Sequence[str], strict: bool = True) -> bool:
    """A well-typed composition: 1-3 primitives of one family, at most one reducer, last, no
    primitive twice in a row. ``strict=False`` is the rule for proposed tasks: up to
    :data:`MAX_PROPOSED_DEPTH` primitives, repeats allowed (still well typed)."""
    if not 1 <= len(steps) <= (3 if strict else MAX_PROPOSED_DEPTH) or any(s not in PRIMITIVES for s in steps):
        return False
    fam = PRIMITIVES[steps[0]].family
    if any(PRIMITIVES[s].family != fam for s in steps):
        return False
    if any(PRIMITIVES[s].kind == "reduce" for s in steps[:-1]):
        return False
    return not strict or all(a != b for a, b in zip(steps, steps[1:]))  # no immediate repeats


def pairs_of(steps: Sequence[str]) -> list[tuple[str, str]]:
    return list(zip(steps, steps[1:]))


def all_pairs() -> list[tuple[str, str]]:
    """Every ordered adjacent pair that can occur in a valid composition."""
    out = []
    for a in _PRIMS:
        if a.kind != "step":
            continue
        for b in _PRIMS:
            if b.family == a.family and b.name != a.name:
                out.append((a.name, b.name))
    return out


def run_steps(steps: Sequence[str], value: Any) -> Any:
    for s in steps:
        value = PRIMITIVES[s].fn(value)
    return value


def describe(steps: Sequence[str]) -> str:
    """The English task description."""
    fam = family_of(steps)
    phrases = [PRIMITIVES[s].phrase for s in steps]
    if PRIMITIVES[steps[-1]].kind != "reduce":
        phrases.append(ENDING[fam][0])
    return f"Write a function {ENTRY}({VAR[fam]}) that " + ", then ".join(phrases) + "."


def reference_code(steps: Sequence[str]) -> str:
    """The reference solution, one line per primitive."""
    fam = family_of(steps)
    lines = [f"def {ENTRY}({VAR[fam]}):"] + ["    " + PRIMITIVES[s].code for s in steps]
    if PRIMITIVES[steps[-1]].kind != "reduce":
        lines.append("    " + ENDING[fam][1])
    return "\n".join(lines) + "\n"


_DESC = re.compile(r"^Write a function " + ENTRY + r"\((xs|s|n)\) that (.+)\.$")
_BY_PHRASE: dict[tuple[str, str], str] = {(p.family, p.phrase): p.name for p in _PRIMS}


_FAMILY_OF_VAR = {v: k for k, v in VAR.items()}


def _lookup(fam: str, pieces: Sequence[str], table: dict[tuple[str, str], str],
            strict: bool = True) -> Steps | None:
    """The valid composition whose steps are ``pieces`` (phrases or code lines) of family ``fam``
    according to ``table``, else ``None``."""
    steps = []
    for piece in pieces:
        name = table.get((fam, piece))
        if name is None:
            return None
        steps.append(name)
    steps_t = tuple(steps)
    return steps_t if steps_t and is_valid(steps_t, strict) else None


def recognize(description: str, strict: bool = True) -> Steps | None:
    """The composition a description names, or ``None`` if it is not a world description
    (``strict=False``: the looser rule for proposed tasks, see :func:`is_valid`)."""
    m = _DESC.match(description.strip())
    if not m:
        return None
    fam = _FAMILY_OF_VAR[m.group(1)]
    parts = m.group(2).split(", then ")
    if parts and parts[-1] == ENDING[fam][0]:
        parts = parts[:-1]
        if parts and PRIMITIVES[_BY_PHRASE.get((fam, parts[-1]), "list.sum")].kind == "reduce":
            return None  # "returns the sum, then returns the list"
    steps = _lookup(fam, parts, _BY_PHRASE, strict)
    if steps is None or describe(steps) != description.strip():
        return None
    return steps


# ----------------------------------------------------------------------------------- inputs & tests


def literal(v: Any) -> str:
    """A Python literal; strings use double quotes (as the reference code does)."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    return repr(v)


_LETTERS = "abcdeinorstu"
_SMALL_INTS = list(range(-3, 8))


def random_input(family: str, rng: random.Random, simple: bool = False) -> Any:
    """A small random input of the family's type (short, so a tiny model can reason about it);
    ``simple`` draws shorter lists and strings (the tester's warm-up targets)."""
    if family == "list":
        n = rng.choice([0, 1, 1, 2, 2, 3] if simple else [0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5])
        return [rng.choice(_SMALL_INTS) for _ in range(n)]
    if family == "str":
        words = rng.choice([0, 1, 1, 1, 2] if simple else [0, 1, 1, 2, 2, 2, 3])
        longest = 3 if simple else 4
        return " ".join("".join(rng.choice(_LETTERS) for _ in range(rng.randint(1, longest)))
                        for _ in range(words))
    return rng.randint(-6, 12)


def input_size(x: Any) -> int:
    return abs(x) if isinstance(x, int) else len(x)


def call(family_value: Any) -> str:
    return f"{ENTRY}({literal(family_value)})"


def pick_inputs(steps: Sequence[str], rng: random.Random, n: int, pool: int = 24,
                simple: bool = False) -> list[Any]:
    """``n`` distinct inputs, preferring distinct outputs (so the tests discriminate), at most
    one empty input. ``simple``: shorter inputs (see :func:`random_input`), sorted by size."""
    fam = family_of(steps)
    cands: list[Any] = []
    seen: set[str] = set()
    for _ in range(pool * 3):
        x = random_input(fam, rng, simple)
        k = literal(x)
        if k not in seen:
            seen.add(k)
            cands.append(x)
        if len(cands) >= pool:
            break
    chosen: list[Any] = []
    outs: set[str] = set()
    empty_used = False
    for x in cands:  # first pass: new outputs only
        if len(chosen) >= n:
            break
        is_empty = fam != "int" and len(x) == 0
        o = literal(run_steps(steps, x))
        if o in outs or (is_empty and empty_used):
            continue
        chosen.append(x)
        outs.add(o)
        empty_used |= is_empty
    for x in cands:  # second pass: fill up
        if len(chosen) >= n:
            break
        if any(literal(x) == literal(c) for c in chosen):
            continue
        is_empty = fam != "int" and len(x) == 0
        if is_empty and empty_used:
            continue
        chosen.append(x)
        empty_used |= is_empty
    if simple:
        chosen.sort(key=input_size)
    return chosen


def make_tests(steps: Sequence[str], inputs: Iterable[Any]) -> list[Test]:
    return [Test.assertion(f"assert {call(x)} == {literal(run_steps(steps, x))}") for x in inputs]


def _rng(*parts: Any) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def task_id_of(steps: Sequence[str]) -> str:
    return "tiny/" + "+".join(steps)


def make_task(steps: Sequence[str], seed: int = 0, n_tests: int = 5, split: str | None = None,
              strict: bool = True) -> Task:
    """The world task for ``steps``: description, reference, ``n_tests`` GT assert tests (inputs
    drawn deterministically from ``seed`` and the composition) and ``meta``:
    ``steps``, ``family``, ``depth``, ``inputs`` (the tests' call expressions) and ``split``.
    ``strict=False``: the rule for proposed tasks (:func:`is_valid`), e.g. four steps."""
    steps = tuple(steps)
    if not is_valid(steps, strict=strict):
        raise ValueError(f"not a valid composition: {steps}")
    rng = _rng("tests", seed, *steps)
    inputs = pick_inputs(steps, rng, n_tests)
    meta: dict[str, Any] = {"steps": list(steps), "family": family_of(steps), "depth": len(steps),
                            "inputs": [call(x) for x in inputs], "world": "tiny"}
    if split is not None:
        meta["split"] = split
    return Task(task_id=task_id_of(steps), prompt=describe(steps), kind="function",
                entry_point=ENTRY, tests=make_tests(steps, inputs),
                solutions=[reference_code(steps)], meta=meta)


def is_degenerate(steps: Sequence[str], probes: int = 40) -> bool:
    """True when the composition's output barely depends on its input (fewer than 3 distinct
    outputs on random probes), e.g. "keeps the even numbers, then keeps the odd numbers"."""
    rng = _rng("degenerate", *steps)
    fam = family_of(steps)
    outs = {literal(run_steps(steps, random_input(fam, rng))) for _ in range(probes)}
    return len(outs) < 3


# ----------------------------------------------------------------------------------- proposals

_BY_CODE: dict[tuple[str, str], str] = {(p.family, p.code): p.name for p in _PRIMS}
_DEF = re.compile(r"^def " + ENTRY + r"\((xs|s|n)\):$")


def recognize_code(code: str, strict: bool = True) -> Steps | None:
    """The composition a solution spells out in the world's exact line style, else ``None``
    (``strict=False``: the looser rule for proposed tasks, see :func:`is_valid`)."""
    lines = [ln.rstrip() for ln in code.strip("\n").split("\n") if ln.strip()]
    if not lines:
        return None
    m = _DEF.match(lines[0])
    if not m:
        return None
    fam = _FAMILY_OF_VAR[m.group(1)]
    body = [ln.strip() for ln in lines[1:]]
    if any(not ln.startswith("    ") for ln in lines[1:]):
        return None
    if body and body[-1] == ENDING[fam][1]:
        body = body[:-1]
        if body and body[-1].startswith("return "):
            return None
    steps = _lookup(fam, body, _BY_CODE, strict)
    if steps is None or reference_code(steps).strip() != code.strip():
        return None
    return steps


def heldout_pairs_of(tasks: Iterable[Task]) -> frozenset[tuple[str, str]]:
    """The held-out pairs recorded in held-out tasks' ``meta["heldout_pairs"]`` (e.g. tasks read
    back from ``heldout.jsonl``, when the World object is not at hand)."""
    out = set()
    for t in tasks:
        for a, b in (t.meta or {}).get("heldout_pairs", []) or []:
            out.add((str(a), str(b)))
    return frozenset(out)


def check_proposed(task: Task, heldout_pairs: Iterable[tuple[str, str]]) -> tuple[bool, str]:
    """Whether a Proposer's task lives in the *training* part of the world.

    ``(True, "")`` when its description names a valid composition, its entry point is ``f``, its
    solution (if written in the world's line style) spells out the same composition, and neither
    contains a held-out adjacent pair; otherwise ``(False, reason)``. Rejecting held-out
    compositions keeps the held-out evaluation clean under self-play. The loop should still
    validate the proposed solution and inputs by execution.
    """
    held = set(heldout_pairs)
    steps = recognize(task.prompt)
    if steps is None:
        return False, "description is not a tiny-world description"
    if task.entry_point != ENTRY:
        return False, f"entry point must be {ENTRY}"
    code_steps = recognize_code(task.solutions[0]) if task.solutions else None
    for s in (steps, code_steps):
        if s is not None and any(p in held for p in pairs_of(s)):
            return False, "composition is held out"
    if code_steps is not None and code_steps != steps:
        return False, "solution does not match the description"
    return True, ""


# ----------------------------------------------------------------------------------- the world


@dataclass
class World:
    """A seeded tiny world: the held-out pairs, the training and held-out tasks."""
    seed: int
    heldout_pairs: frozenset[tuple[str, str]]
    train_tasks: list[Task] = field(default_factory=list)
    heldout_tasks: list[Task] = field(default_factory=list)

    # -- the split
    def split_of(self, steps: Sequence[str]) -> str:
        """``"heldout"`` if the composition contains a held-out adjacent pair, else ``"train"``."""
        return "heldout" if any(p in self.heldout_pairs for p in pairs_of(steps)) else "train"

    def recognize(self, description: str) -> Steps | None:
        return recognize(description)

    def check_proposed(self, task: Task) -> tuple[bool, str]:
        """:func:`check_proposed` against this world's held-out pairs."""
        return check_proposed(task, self.heldout_pairs)


def random_steps(rng: random.Random, max_depth: int = 3) -> Steps:
    fam = rng.choices(FAMILIES, weights=[0.5, 0.3, 0.2])[0]
    depth = rng.choices([1, 2, 3][:max_depth], weights=[0.2, 0.4, 0.4][:max_depth])[0]
    steps_p = primitives(fam, "step")
    red_p = primitives(fam, "reduce")
    while True:
        seq = [rng.choice(steps_p).name for _ in range(depth)]
        if red_p and rng.random() < 0.5:
            seq[-1] = rng.choice(red_p).name
        if is_valid(seq):
            return tuple(seq)


def build_world(seed: int = 0, n_train: int = 800, n_heldout: int = 64,
                heldout_fraction: float = 0.12, n_tests: int = 5) -> World:
    """The seeded world.

    * ``heldout_fraction`` of all ordered adjacent pairs are held out (per family, seeded), but
      never so many that a primitive loses all its training pairs.
    * Training tasks: every depth-1 composition, then random depth-2/3 compositions without a
      held-out pair, up to ``n_train`` tasks in total.
    * Held-out tasks: ``n_heldout`` compositions of depth 2-3 with at least one held-out pair, about
      half of depth 2 (families in proportion to their held-out pairs: mostly lists).
    * Degenerate compositions (output nearly constant) are excluded everywhere.
    * Both lists are in a seeded random order, so any prefix is a fair sample.
    """
    rng = _rng("world", seed)
    pairs = all_pairs()
    rng.shuffle(pairs)
    k = int(round(heldout_fraction * len(pairs)))
    held: set[tuple[str, str]] = set()
    out_deg: dict[str, int] = {}
    in_deg: dict[str, int] = {}
    for a, b in pairs:  # count each primitive's pairs so no primitive loses most of them
        out_deg[a] = out_deg.get(a, 0) + 1
        in_deg[b] = in_deg.get(b, 0) + 1
    for a, b in pairs:
        if len(held) >= k:
            break
        if out_deg[a] <= 3 or in_deg[b] <= 3 or is_degenerate((a, b)):
            continue
        held.add((a, b))
        out_deg[a] -= 1
        in_deg[b] -= 1
    world = World(seed=seed, heldout_pairs=frozenset(held))

    # held-out tasks
    heldout: dict[Steps, Task] = {}
    held_sorted = sorted(held)
    target_d2 = n_heldout // 2
    d2 = list(held_sorted)
    rng.shuffle(d2)
    for p in d2:
        if len([s for s in heldout if len(s) == 2]) >= target_d2:
            break
        if not is_degenerate(p):
            heldout[p] = None  # type: ignore[assignment]
    tries = 0
    while len(heldout) < n_heldout and tries < 100_000:
        tries += 1
        a, b = rng.choice(held_sorted)
        fam = PRIMITIVES[a].family
        if PRIMITIVES[b].kind == "reduce":
            c = rng.choice(primitives(fam, "step")).name
            steps = (c, a, b)
        else:
            c = rng.choice(primitives(fam)).name
            steps = (a, b, c) if rng.random() < 0.5 else (rng.choice(primitives(fam, "step")).name, a, b)
        if steps in heldout or not is_valid(steps) or is_degenerate(steps):
            continue
        heldout[steps] = None  # type: ignore[assignment]
    for steps in heldout:
        task = make_task(steps, seed=seed, n_tests=n_tests, split="heldout")
        task.meta["heldout_pairs"] = [list(p) for p in pairs_of(steps) if p in held]
        heldout[steps] = task
    world.heldout_tasks = sorted(heldout.values(), key=lambda t: t.task_id)
    rng.shuffle(world.heldout_tasks)

    # training tasks
    train: dict[Steps, None] = {}
    for p in _PRIMS:
        if not is_degenerate((p.name,)):
            train[(p.name,)] = None
    tries = 0
    while len(train) < n_train and tries < 200_000:
        tries += 1
        steps = random_steps(rng)
        if len(steps) == 1 or steps in train or world.split_of(steps) != "train":
            continue
        if is_degenerate(steps):
            continue
        train[steps] = None
    world.train_tasks = [make_task(s, seed=seed, n_tests=n_tests, split="train") for s in train]
    rng.shuffle(world.train_tasks)
    return world
