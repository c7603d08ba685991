"""The store guard's list of shared objects holds them alive (CI failure of stop 54).

The guard takes an object whose ``id`` was an object's that existed at ``harness.prepare`` for a
shared one. An object alive at ``prepare`` that died afterwards freed its address, and a program's
own object made there (same size: CPython reuses the block at once) tripped the guard: a right,
pure program ended ``ABNORMAL`` "store into a shared object" in about one run in twenty of
tests/test_speed25_rows.py. The list now keeps those objects, so no address in it is ever reused."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
from matrix.sandbox import harness, purity
class A:
    def __init__(self, x):
        self.x = x
before = [A(i) for i in range(50)]
harness.prepare()
shared = {id(a) for a in before}
del before  # dies after prepare: its addresses are free for new objects of the same size
tripped = []
guard = purity.make_store_guard(harness._G["shared_ids"], tripped)
made = [A(i) for i in range(200)]
reused = sum(id(a) in shared for a in made)
wrong = 0
for a in made:
    try:
        guard(a)
    except purity.StoreIntoShared:
        wrong += 1
print(reused, wrong, len(tripped))
"""


def test_an_object_made_after_prepare_is_never_taken_for_a_shared_one():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    reused, wrong, tripped = map(int, proc.stdout.split())
    assert (reused, wrong, tripped) == (0, 0, 0)


def test_an_object_alive_at_prepare_still_trips_the_guard():
    script = SCRIPT.replace("del before", "keep = before[0]; del before").replace(
        "made = [A(i) for i in range(200)]", "made = [keep]")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "1", "1"]
