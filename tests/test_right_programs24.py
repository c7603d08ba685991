"""Right programs around the setups red-team pass 24 changed keep passing, split and generic,
pure and impure (tests/test_right_programs23.py's shape): a setup's Fraction and Decimal data (now
the generic test's own, travelling to the program as values), a decimal context the setup sets,
and the setup's names read through ``from solution import ...`` / ``solution.name``."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"


ex = executor_fixture()


# (name, program, setup, tests): every test passes in plain Python (setup, then program, then test)
RIGHT = [
    ("fraction", "import fractions\ndef f(x):\n    return x * 2 if isinstance(x, fractions.Fraction) else "
     "fractions.Fraction(1, 3)\ndef g(v):\n    return sum(v)\n",
     "import fractions\nwant = fractions.Fraction(1, 3)\nxs = [fractions.Fraction(1, 2), fractions.Fraction(2, 3)]\n",
     ["assert f(want) == want * 2", "assert f(3) == want", "assert g(xs) == fractions.Fraction(7, 6)",
      "assert f(want).denominator == 3 and isinstance(want, fractions.Fraction)"]),
    ("decimal", "import decimal\ndef f(x):\n    return x + 1 if isinstance(x, decimal.Decimal) else "
     "decimal.Decimal('1.5')\n",
     "import decimal\nwant = decimal.Decimal('1.5')\n",
     ["assert f(want) == decimal.Decimal('2.5')", "assert f(3) == want", "assert str(f(want)) == '2.5'"]),
    ("decimal_ctx", "import decimal\ndef f(x):\n    return decimal.Decimal(1) / 3\n",
     "import decimal\ndecimal.getcontext().prec = 4\nwant = decimal.Decimal(1) / 3\n",
     ["assert f(3) == want", "assert str(want) == '0.3333'"]),
    # dates: a test's or a setup's date given to the program, and one the program returns
    # (every right program here was an error: "the program may not binop the test's objects")
    ("date_arg", "import datetime\ndef f(d):\n    return d + datetime.timedelta(days=1)\n", "",
     ["import datetime\nassert f(datetime.date(2020, 1, 31)) == datetime.date(2020, 2, 1)",
      "import datetime\nd = f(datetime.date(2020, 1, 31))\nassert type(d) is datetime.date and d.month == 2",
      "import datetime\nassert f(datetime.datetime(2020, 1, 31, 23, 59)) == datetime.datetime(2020, 2, 1, 23, 59)",
      "import datetime\nassert f(datetime.timedelta(hours=1)) == datetime.timedelta(days=1, seconds=3600)",
      "import datetime\nassert [f(x) for x in [datetime.date(2020, 12, 31)]] == [datetime.date(2021, 1, 1)]"]),
    ("date_setup", "import datetime\ndef f(d):\n    return d + datetime.timedelta(days=1)\n"
     "def g(t):\n    return t.replace(hour=t.hour + 1)\n",
     "import datetime\nday = datetime.date(2020, 1, 31)\nwant = datetime.date(2020, 2, 1)\n"
     "t = datetime.time(5, 30)\nwhen = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)\n",
     ["assert f(day) == want", "assert g(t) == datetime.time(6, 30) and f(day).day == 1",
      "assert f(when) == datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)",
      "assert f(when).tzinfo is datetime.timezone.utc"]),
    # setup-only holes that raise alone only where they read the program (a setup helper calling
    # the program's function), or that raise in the program's process too (caught by the test)
    ("helper_reads_program", "def f(x):\n    return [1, 2]\ndef base():\n    return [1]\n",
     "want = [1, 2]\ndef norm(xs):\n    return base() + xs\n",
     ["assert f(3) == norm([2])", "assert f(3) == want and norm([]) == [1]"]),
    ("raise_caught", "def f(x):\n    return x\n", "want = [1, 2, 3]\n",
     ["try:\n    want[7]\nexcept IndexError:\n    pass\nassert f(3) == 3",
      "assert f(want[0]) == 1 and len(want) == 3 or want[9]"]),
    ("from_solution", "def f(x):\n    return [1, 2, 3]\ndef g():\n    return 5\n", "want = [1, 2, 3]\nk = 2\n",
     ["from solution import want\nassert f(3) == want", "from solution import f, want, k\nassert f(k) == want",
      "import solution\nassert solution.f(1) == solution.want and solution.g() == 5"]),
]

CELLS = [(name, prefix + code, setup, test, shape) for name, code, setup, tests in RIGHT for test in tests
         for prefix in ("", IMPURE) for shape in ("split", "generic")]


# setup helpers keeping state in the setup's globals, read by a generic test as they change (split
# tests compute a setup-only hole before the holes that call the program, so a counter read after
# a call reads its old value there: pre-existing, left out)
LIVE = ("def f(x):\n    return sorted(x)\n",
        "import math\ncalls = 0\nseen = []\ndef norm(xs):\n    global calls\n    calls += 1\n    return sorted(xs)\n"
        "def note(x):\n    global last\n    last = math.floor(x)\n    seen.append(x)\n    return x\n"
        "def both(xs):\n    return norm(xs) + [calls]\n",
        ["assert f([3, 1]) == norm([1, 3])\nassert calls == 1\nassert norm([2]) == [2] and calls == 2",
         "assert both([2, 1]) == [1, 2, 1] and calls == 1", "assert f([2, 1]) == both([1, 2])[:2]",
         "note(2.5)\nassert last == 2 and seen == [2.5]\nassert f([note(1), 0]) == [0, 1] and last == 1"])
CELLS += [("live_helpers", prefix + LIVE[0], LIVE[1], test, "generic") for test in LIVE[2] for prefix in ("", IMPURE)]


@pytest.mark.parametrize("name,code,setup,test,shape", CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(CELLS)])
def test_a_right_program_around_a_setup_passes(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == "pass", detail


WRONG = [
    ("fraction", "import fractions\ndef f(x):\n    return fractions.Fraction(1, 4)\n",
     "import fractions\nwant = fractions.Fraction(1, 3)\n", "assert f(3) == want"),
    ("decimal", "import decimal\ndef f(x):\n    return decimal.Decimal('1.4')\n",
     "import decimal\nwant = decimal.Decimal('1.5')\n", "assert f(3) == want"),
    ("date", "import datetime\ndef f(d):\n    return d + datetime.timedelta(days=2)\n", "import datetime\n"
     "day = datetime.date(2020, 1, 31)\n", "assert f(day) == datetime.date(2020, 2, 1)"),
    ("from_solution", "def f(x):\n    return [9]\n", "want = [1, 2, 3]\n",
     "from solution import want\nassert f(3) == want"),
]


@pytest.mark.parametrize("name,code,setup,test", WRONG, ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("shape", ["split", "generic"])
@pytest.mark.parametrize("prefix", ["", IMPURE], ids=["pure", "impure"])
def test_a_wrong_program_around_a_setup_fails(ex, name, code, setup, test, shape, prefix):
    status, detail = run_cell(ex, prefix + code, setup, test, shape)
    assert status == "fail", detail
