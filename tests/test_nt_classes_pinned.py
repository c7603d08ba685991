"""A program's namedtuple class and its values meet as one class for the whole test (review 33 of
red-team pass 33): the decoder's cache of namedtuple classes is emptied past its bound, so a program
that first returned 20 big namedtuple classes (g) had its P's next value decoded to a new class, and
``g(); assert type(f()) is not P`` PASSED where Python fails. The test side now keeps the class of
each name and fields it has met for the whole test."""

import pytest
from sandbox_cells import plain_verdict_with_setup, run_cell

from matrix.engine import ExecConfig, Executor

PROGRAM = ("import os\nfrom collections import namedtuple\nP = namedtuple('P', 'x y')\n"
           "BIG = [namedtuple('B%d' % i, ['f%03d' % j + 'a' * 60 for j in range(250)]) for i in range(20)]\n"
           "def f():\n    return P(1, 2)\n\ndef g():\n    return BIG\n")


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=10.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("shape", ["generic", "split"])
@pytest.mark.parametrize("test", ["g()\nassert type(f()) is not P", "g()\nassert type(f()) is P",
                                  "assert type(f()) is not P"])
def test_a_flooded_class_cache_does_not_change_the_class_of_a_value(ex, shape, test):
    plain = plain_verdict_with_setup(PROGRAM, "", test, shape)
    st, detail = run_cell(ex, PROGRAM, "", test, shape)
    assert plain == ("fail" if "is not" in test else "pass")
    assert st == plain, detail
