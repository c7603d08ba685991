"""A class that holds a limited number of things (lru.py's LRUCache: `put` evicts past its
capacity): the sequences of method calls were random (2-4 calls) or each method twice, so no
test put more keys than the capacity, and eviction (`popitem(last=False)` -> `True`) survived,
its branch never taken (branches 0.875). Each method that takes values is now also called four
times with different ones, on the typical object and on one built small (capacity=1), then the
first value is read back (or a method without arguments, keys(), is called)."""

from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"


def test_a_cache_is_filled_past_its_capacity_and_the_first_key_read_back():
    module = analyze(FIX / "lru.py")
    gen = InputGenerator(module)
    found = []
    for p in gen.sequences("LRUCache"):
        puts = [s for s in p.steps if s.callee.endswith(".put")]
        if len({s.args[0] for s in puts}) >= 4 and p.steps[-1].callee.endswith((".get", ".keys")):
            found.append(p)
    assert any(p.steps[-1].callee.endswith(".get") and p.steps[-1].args[:1] == p.steps[1].args[:1] for p in found), \
        [[s.source() for s in p.steps] for p in gen.sequences("LRUCache")]
    assert any(p.steps[0].kwargs or p.steps[0].args for p in found)  # on a small one too (capacity=1)
