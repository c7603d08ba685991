"""The suite: a small subset of candidate tests that kills the most mutants and covers the most
branches and lines (greedy set cover, then a pass that drops tests whose every contribution
another kept test also makes).

Pure functions over sets; the pipeline builds the sets from the kill matrix and coverage arcs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Candidate", "greedy_suite", "goals", "WEIGHTS"]

WEIGHTS = {"kill": 4.0, "branch": 2.0, "line": 1.0, "behaviour": 0.5}


@dataclass
class Candidate:
    pid: int
    kills: frozenset = frozenset()  # mutant indices the test kills
    branches: frozenset = frozenset()  # branch arcs it covers
    lines: frozenset = frozenset()  # lines it covers
    behaviours: frozenset = frozenset()  # (unit, outcome kind) pairs, e.g. ("mean", "ValueError")
    cost: float = 1.0  # size of the written test (shorter wins ties)
    bonus: float = 0.0  # docstring examples and explicit raises come first among equals
    extra: dict = field(default_factory=dict)


def goals(c: Candidate) -> set:
    """Everything a test brings to the suite: kills, branches, lines, behaviours (tagged)."""
    return ({("k", x) for x in c.kills} | {("b", x) for x in c.branches} | {("l", x) for x in c.lines}
            | {("h", x) for x in c.behaviours})


def _gain(c: Candidate, covered: set) -> float:
    w = WEIGHTS
    return (w["kill"] * sum(1 for x in c.kills if ("k", x) not in covered)
            + w["branch"] * sum(1 for x in c.branches if ("b", x) not in covered)
            + w["line"] * sum(1 for x in c.lines if ("l", x) not in covered)
            + w["behaviour"] * sum(1 for x in c.behaviours if ("h", x) not in covered))


def greedy_suite(cands: list[Candidate], max_tests: int | None = None) -> list[Candidate]:
    """Candidates in the order chosen; each adds a kill, a branch, a line or a behaviour that the
    earlier ones lack, and none is redundant with the rest at the end. Lazy greedy: a gain only
    shrinks as the suite grows, so a candidate whose recomputed gain still tops the queue is the
    best one."""
    import heapq

    covered: set = set()
    chosen: list[Candidate] = []
    heap = []
    for c in cands:
        g = _gain(c, covered)
        if g > 0:
            heap.append((-(g + c.bonus), c.cost, c.pid, id(c), c))
    heapq.heapify(heap)
    while heap and (max_tests is None or len(chosen) < max_tests):
        _, cost, npid, cid, c = heapq.heappop(heap)
        g = _gain(c, covered)
        if g <= 0:
            continue
        key = (-(g + c.bonus), cost, npid, cid)
        if heap and key > heap[0][:4]:
            heapq.heappush(heap, (*key, c))
            continue
        chosen.append(c)
        covered |= goals(c)
    # drop a test whose goals the others all reach (latest first: early picks are the broad ones)
    for c in list(reversed(chosen)):
        others: set = set()
        for o in chosen:
            if o is not c:
                others |= goals(o)
        if goals(c) <= others:
            chosen.remove(c)
    return chosen
