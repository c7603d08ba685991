"""Admission of Proposer tasks in the tiny world (before they are validated by execution).

The Proposer writes the tiny world's *program format*: a solution in the world's line style plus
inputs (see :mod:`roles.prompts`). :class:`ProposalGuard` reads the composition off the code
(:func:`~coevo.tinyworld.library.recognize_code`), writes its English description
(:func:`~coevo.tinyworld.library.describe`, so a proposed task reads exactly like a dataset task),
and refuses, with a reason code of :data:`coevo.selfplay.REJECT_REASONS`:

* ``not_world``: code that is not a world composition (no description can be derived), or a
  given description that names another composition than the code. Proposals follow the looser
  rule of :func:`~coevo.tinyworld.library.is_valid` (``strict=False``): up to four primitives,
  repeats allowed ("halves it, then halves it" is a fine task, though no dataset task has it);
* ``heldout``: a composition with a held-out adjacent pair;
* ``constant``: a degenerate composition (output barely depends on the input);
* ``identity``: a composition that returns its input unchanged on every probe;
* ``duplicate``: a composition that behaves exactly like a known task (a seed task or an
  accepted proposal; :meth:`ProposalGuard.remember` adds one), e.g. "sorts the list, then
  doubles each element" for a known "doubles each element, then sorts the list";
* ``heldout`` again: one that behaves exactly like a held-out task (and like no known task) on
  the probe inputs (self-play must never train on the held-out evaluation).

Behaviour is compared on fixed probe inputs per family, computed in-process with the world's own
trusted primitives (never the proposed code, which only ever runs in the sandbox).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from matrix.tasks import Task

from .library import (
    describe,
    family_of,
    is_degenerate,
    literal,
    pairs_of,
    random_input,
    recognize,
    recognize_code,
    run_steps,
)

PROBES = 40


def _probes(family: str) -> list:
    rng = random.Random(f"probe-{family}")
    return [random_input(family, rng) for _ in range(PROBES)]


_PROBES = {fam: _probes(fam) for fam in ("list", "str", "int")}


def behaviour(steps) -> tuple[str, str]:
    """The composition's family and its outputs on the family's probe inputs."""
    fam = family_of(steps)
    return fam, "|".join(literal(run_steps(steps, x)) for x in _PROBES[fam])


def _identity(fam: str) -> tuple[str, str]:
    return fam, "|".join(literal(x) for x in _PROBES[fam])


class ProposalGuard:
    """``guard(task) -> (ok, reason)``: the tiny world's admission check for a proposed task
    (see the module doc). On success it sets ``task.prompt`` to the derived description (when
    the proposal has none) and ``task.meta["steps"]``."""

    def __init__(self, heldout_pairs: Iterable[tuple[str, str]], heldout_tasks: Iterable[Task] = (),
                 known_tasks: Iterable[Task] = ()):
        self.heldout_pairs = frozenset(heldout_pairs)
        self.heldout_behaviour = {behaviour(s) for s in (_steps_of(t) for t in heldout_tasks) if s}
        self.known_behaviour: set[tuple[str, str]] = set()
        for t in known_tasks:
            self.remember(t)

    def remember(self, task: Task) -> None:
        """Count ``task`` as known: later proposals behaving like it are duplicates."""
        steps = _steps_of(task)
        if steps:
            self.known_behaviour.add(behaviour(steps))

    def __call__(self, task: Task) -> tuple[bool, str]:
        steps = recognize_code(task.solutions[0], strict=False) if task.solutions else None
        if steps is None:
            return False, "not_world"
        if task.prompt.strip() and recognize(task.prompt, strict=False) != steps:
            return False, "not_world"
        if task.entry_point != "f":
            return False, "not_world"
        if any(p in self.heldout_pairs for p in pairs_of(steps)):
            return False, "heldout"
        if is_degenerate(steps):
            return False, "constant"
        b = behaviour(steps)
        if b == _identity(b[0]):
            return False, "identity"
        if b in self.known_behaviour:  # before the held-out behaviours: a known task already shows it
            return False, "duplicate"
        if b in self.heldout_behaviour:
            return False, "heldout"
        if not task.prompt.strip():
            task.prompt = describe(steps)
        task.meta["steps"] = list(steps)
        task.meta["world"] = "tiny"
        return True, ""


def _steps_of(task: Task):
    steps = (task.meta or {}).get("steps")
    if steps:
        return tuple(steps)
    return recognize_code(task.solutions[0], strict=False) if task.solutions else None
