"""Red-team pass 24 on the matrix's verdicts: what pass 23 left of a program choosing what the
task's setup computes for the test. A program reaching the sandbox's harness through
``sys.modules`` wraps ``run_setup`` so that its process binds ``want`` to the value its wrong ``f``
returns; each cell here passed on 9fb6117 (the setup's value read from the program's process)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, HARNESS, executor_fixture, run_cell

pytestmark = FORK_ONLY

_RUN_SETUP = (HARNESS + "_run = H.run_setup\n"
              "def _fake(co, ns, keep=None):\n    bound = _run(co, ns, keep)\n"
              "    if 'want' in bound:\n        bound['want'] = WANT\n        ns['want'] = WANT\n    return bound\n"
              "H.run_setup = _fake\ndef f(x):\n    return WANT\n")


ex = executor_fixture()


# (name, program, setup, test, shapes)
ATTACKS = [
    # a generic test's setup data of the standard library's number classes (not plain data to
    # pass 23: the program process's)
    ("fraction", "import fractions\nWANT = fractions.Fraction(9)\n" + _RUN_SETUP,
     "import fractions\nwant = fractions.Fraction(1, 3)\n", "assert f(3) == want", ["generic"]),
    ("fraction_list", "import fractions\nWANT = [fractions.Fraction(9)]\n" + _RUN_SETUP,
     "import fractions\nwant = [fractions.Fraction(1, 3)]\n", "assert f(3) == want", ["generic"]),
    ("decimal", "import decimal\nWANT = decimal.Decimal('9')\n" + _RUN_SETUP,
     "import decimal\nwant = decimal.Decimal('1.5')\n", "assert f(3) == want", ["generic"]),
    # dates (they travelled as references: the program process's, split and generic)
    ("date", "import datetime\nWANT = datetime.date(1999, 1, 1)\n" + _RUN_SETUP,
     "import datetime\nwant = datetime.date(2020, 1, 31)\n", "assert f(3) == want", ["split", "generic"]),
    ("datetime", "import datetime\nWANT = datetime.datetime(1999, 1, 1)\n" + _RUN_SETUP,
     "import datetime\nwant = datetime.datetime(2020, 1, 31, 5)\n", "assert f(3) == want", ["split", "generic"]),
    ("timedelta", "import datetime\nWANT = [datetime.timedelta(9)]\n" + _RUN_SETUP,
     "import datetime\nwant = [datetime.timedelta(days=1, seconds=5)]\n", "assert f(3) == want", ["split", "generic"]),
    # a split test's setup-only hole that raises when the setup runs alone (the test is an error
    # for every program): the program process sent a value for it instead of the raise
    ("raises_alone", HARNESS + "_sv = H._setup_values\n"
     "def _fake(exprs, ns, pinned, bound):\n    return {1: H._G['encode']([9], True)}\n"
     "H._setup_values = _fake\ndef f(x):\n    return [9]\n",
     "want = [1, 2, 3]\n", "assert f(3) == want[7]", ["split"]),
    ("raises_alone_key", "WANT = {'a': [9]}\n" + _RUN_SETUP.replace("return WANT", "return [9]"),
     "want = {'b': 1}\n", "assert f(3) == want['a']", ["split"]),
    # a generic test's setup helper that rebinds a global of the setup's (its call counter): it
    # and its state were the program process's, where the program replaced the setup's builtins
    ("helper_global", HARNESS + "H._G['genuine']['sorted'] = lambda *a, **k: [9]\ndef f(x):\n    return [9]\n",
     "calls = 0\ndef norm(xs):\n    global calls\n    calls += 1\n    return sorted(xs)\n",
     "assert f(3) == norm([3, 1, 2])", ["generic"]),
    # the setup's names read through the program's module, as test files import a solution
    ("from_solution", "WANT = [9]\n" + _RUN_SETUP, "want = [1, 2, 3]\n",
     "from solution import want\nassert f(3) == want", ["split", "generic"]),
    ("import_solution", "WANT = [9]\n" + _RUN_SETUP, "want = [1, 2, 3]\n",
     "import solution\nassert f(3) == solution.want", ["split", "generic"]),
]

CELLS = [(name, code, setup, test, shape) for name, code, setup, test, shapes in ATTACKS for shape in shapes]


@pytest.mark.parametrize("name,code,setup,test,shape", CELLS, ids=[f"{c[0]}-{c[4]}" for c in CELLS])
def test_a_program_does_not_choose_the_setups_values(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status in ("fail", "error"), detail
