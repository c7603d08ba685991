"""Right programs that pass 24 left failing (tests/test_right_programs24.py's shape), split and
generic, pure and impure; each test passes in plain Python (``exec(setup + program); exec(test)``
in a fresh interpreter).

* A test reading a standard data class through the program's module only (``import collections``
  in the program, not the test): ``type(f()) is collections.Counter`` for a Counter, an
  OrderedDict or a deque the program returns failed, those values arriving as the test's own
  (f9680a4 made it hold for date, timedelta, Fraction and Decimal). An aware datetime (a
  reference) keeps passing. Left: ``type(f()) is datetime.datetime`` for a NAIVE datetime or time
  (a value) with datetime imported by the program only: the class must stay the program's for
  aware ones (``isinstance`` of a reference), so that one still fails (not in RIGHT).
* A split test reading a setup helper's counter around calls of the helper (``assert calls == 0``
  then ``assert norm([1, 3]) == [1, 3]``): the setup-only holes were all computed before the
  others, so the counter read the value after the call (a right program failed; a test expecting
  the wrong count passed)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"


ex = executor_fixture()


def _returns(mod: str, expr: str) -> str:
    return f"import {mod}\ndef f():\n    return {expr}\n"


# (name, program, setup, tests)
RIGHT = [
    ("naive_datetime", _returns("datetime", "datetime.datetime(2020, 1, 2, 3)"), "",
     ["assert isinstance(f(), datetime.datetime) and f().hour == 3",
      "assert type(f()) is not datetime.date and isinstance(f(), datetime.date)"]),
    ("naive_time", _returns("datetime", "datetime.time(3, 4)"), "",
     ["assert isinstance(f(), datetime.time) and f().minute == 4"]),
    ("aware_datetime", _returns("datetime", "datetime.datetime(2020, 1, 2, 3, tzinfo=datetime.timezone.utc)"), "",
     ["assert type(f()) is datetime.datetime", "assert isinstance(f(), datetime.datetime)",
      "assert f().tzinfo is datetime.timezone.utc"]),
    ("counter", _returns("collections", "collections.Counter('abca')"), "",
     ["assert type(f()) is collections.Counter", "assert isinstance(f(), collections.Counter) and f()['a'] == 2"]),
    ("ordered_dict", _returns("collections", "collections.OrderedDict(a=1)"), "",
     ["assert type(f()) is collections.OrderedDict", "assert isinstance(f(), dict)"]),
    ("deque", _returns("collections", "collections.deque([1, 2])"), "",
     ["assert type(f()) is collections.deque", "assert isinstance(f(), collections.deque) and f()[1] == 2"]),
]

_COUNTER = "calls = 0\ndef norm(xs):\n    global calls\n    calls += 1\n    return sorted(xs)\n"
RIGHT += [
    ("counter_order", "def f(x):\n    return sorted(x)\n", _COUNTER,
     ["assert calls == 0\nassert norm([1, 3]) == [1, 3]", "assert calls == 0\nassert f([3, 1]) == norm([1, 3])",
      "assert norm([1]) == [1]\nassert calls == 1\nassert norm([2]) == f([2])\nassert calls == 2",
      "assert f([3, 1]) == norm([1, 3])\nassert calls == 1"]),
    ("counter_program_calls", "def f(x):\n    norm(x)\n    return sorted(x)\n", _COUNTER,
     ["assert calls == 0\nassert f([3, 1]) == [1, 3]\nassert calls == 1"]),
]

# (left open: in a generic test the setup's counting helpers are the test process's (571d160), so
# a PROGRAM calling ``norm`` counts in its own process and the test reads ``calls == 0``)
_OPEN = {("counter_program_calls", "generic")}
CELLS = [(name, prefix + code, setup, test, shape) for name, code, setup, tests in RIGHT for test in tests
         for prefix in ("", IMPURE) for shape in ("split", "generic") if (name, shape) not in _OPEN]


@pytest.mark.parametrize("name,code,setup,test,shape", CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(CELLS)])
def test_a_right_program_passes(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == "pass", detail


WRONG = [
    ("naive_datetime", _returns("datetime", "datetime.date(2020, 1, 2)"), "", "assert type(f()) is datetime.datetime"),
    ("counter", _returns("collections", "dict(a=2, b=1, c=1)"), "", "assert type(f()) is collections.Counter"),
    ("deque", _returns("collections", "[1, 2]"), "", "assert type(f()) is collections.deque"),
    # (a right program, a test wrong for every program in Python: it must fail here too)
    ("counter_order", "def f(x):\n    return sorted(x)\n", _COUNTER,
     "assert calls == 1\nassert f([3, 1]) == norm([1, 3])"),
    ("counter_order2", "def f(x):\n    return sorted(x)\n", _COUNTER,
     "assert norm([1]) == [1]\nassert calls == 2\nassert norm([2]) == f([2])"),
]


@pytest.mark.parametrize("name,code,setup,test", WRONG, ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("shape", ["split", "generic"])
@pytest.mark.parametrize("prefix", ["", IMPURE], ids=["pure", "impure"])
def test_a_wrong_program_fails(ex, name, code, setup, test, shape, prefix):
    status, detail = run_cell(ex, prefix + code, setup, test, shape)
    assert status == "fail", detail
