"""Right programs the sandbox failed where plain Python passes them (red-team pass 36), each with
wrong twins that must keep failing; every stated verdict is checked against plain Python
(``exec(program); exec(setup); exec(test)`` in one module) by
:func:`test_the_stated_verdicts_are_plain_pythons`, as tests/test_redteam34-36.py do.

1. A coroutine the program returns (``async def f``) given to the test's own ``asyncio.run``,
   ``await``-ed in the test's ``async def``, or gathered: an error every shape (the test's event
   loop stepped the reference as an iterator). It is now a coroutine of the test's
   (``inspect.iscoroutine``) that, awaited, runs the program's to its end in the program's process
   (a task of an event loop there: its own sleeps and tasks) in slices of at most 10 ms, the test's
   loop running its own tasks and timers between them (``asyncio.wait_for``'s timeout cancels it),
   its value or exception this one's; handed back to the program it is the program's own.
2. A standard exception class of a module the zygote did not preload (``sqlite3``, ``wave``,
   ``netrc``, ``lzma``...) raised by a right program was a stand-in since pass 35 (no snapshot of the
   module, whose dict is the program's to change), so ``pytest.raises(sqlite3.OperationalError)``
   was an error every shape: a standard module loaded later is recorded as its own code left it
   (:class:`matrix.sandbox.harness._LoadWatch`), and the class found there is the test's own
   (tests/test_redteam36.py holds classes planted after that).
3. An ``ExceptionGroup`` the program raises crossed as a plain ``Exception`` (its sub-exceptions
   were no plain data): ``except*`` and ``pytest.raises(ExceptionGroup)`` were errors; and a program's
   exception class with two builtin bases (``class E(ValueError, KeyError)``) stood in the test on
   the first alone, so ``except KeyError`` missed it."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

CO = "async def f():\n    return 5\n"
CS = ("import asyncio\nasync def f(x=1):\n    await asyncio.sleep(0.01)\n    return x * 2\n"
      "async def g(c):\n    return await c\ndef h(c):\n    return asyncio.run(c)\n")
SLOW = "import asyncio\nasync def f(t):\n    await asyncio.sleep(t)\n    return 5\n"
CR = "async def f():\n    raise ValueError('v')\n"
SWALLOW = ("import asyncio\nasync def f():\n    try:\n        await asyncio.sleep(10)\n"
           "    except asyncio.CancelledError:\n        return 'partial'\n")
COROUTINES = [
    ("run", CO, "", "import asyncio\nassert asyncio.run(f()) == 5", "pass", "pass"),
    ("run_wrong", CO, "", "import asyncio\nassert asyncio.run(f()) == 6", "fail", "fail"),
    ("sleeps", CS, "", "import asyncio\nassert asyncio.run(f(3)) == 6", "pass", "pass"),
    ("gathered", CS, "", "import asyncio\nasync def main():\n    return await asyncio.gather(f(1), f(2))\n"
     "assert asyncio.run(main()) == [2, 4]", "pass", "pass"),
    ("awaited_in_test", CS, "", "import asyncio\nasync def main():\n    x = await f(5)\n    return x + 1\n"
     "assert asyncio.run(main()) == 11", "pass", "pass"),
    ("is_coroutine", CS, "", "import asyncio, inspect\nc = f()\n"
     "assert inspect.iscoroutine(c) and asyncio.iscoroutine(c)\nassert asyncio.run(c) == 2", "pass", "pass"),
    ("not_awaited", CS, "", "import inspect\nassert inspect.iscoroutine(f())", "pass", "pass"),
    ("handed_back", CS, "", "import asyncio\nassert asyncio.run(g(f(4))) == 8 and h(f(2)) == 4", "pass", "pass"),
    ("raises", CR, "", "import asyncio, pytest\nwith pytest.raises(ValueError, match='v'):\n    asyncio.run(f())",
     "pass", "pass"),
    ("raises_other", CR, "", "import asyncio, pytest\nwith pytest.raises(KeyError):\n    asyncio.run(f())",
     "error", "error"),
    ("awaited_twice", CO, "", "import asyncio\nc = f()\nasyncio.run(c)\nasyncio.run(c)", "error", "error"),
    # (its time is the test's loop's too: a program sleeping past ``wait_for``'s timeout PASSED once run at once)
    ("past_the_timeout", SLOW, "", "import asyncio\nassert asyncio.run(asyncio.wait_for(f(3), 0.2)) == 5",
     "error", "error"),
    ("past_the_timeout_expected", SLOW, "", "import asyncio, pytest\nwith pytest.raises(asyncio.TimeoutError):\n"
     "    asyncio.run(asyncio.wait_for(f(3), 0.2))", "pass", "pass"),
    ("within_the_timeout", SLOW, "", "import asyncio\nassert asyncio.run(asyncio.wait_for(f(0), 3)) == 5",
     "pass", "pass"),
    # (review 36, H6: a coroutine that handles its cancellation and returns completes with that value)
    ("cancel_handled", SWALLOW, "", "import asyncio\nassert asyncio.run(asyncio.wait_for(f(), 0.2)) == 'partial'",
     "pass", "pass"),
    ("cancel_handled_timeout", SWALLOW, "", "import asyncio, pytest\nwith pytest.raises(asyncio.TimeoutError):\n"
     "    asyncio.run(asyncio.wait_for(f(), 0.2))", "error", "error"),
]

SQL = "import sqlite3\ndef f():\n    c = sqlite3.connect(':memory:')\n    c.execute('select * from nothing')\n"
STDLIB_ERRORS = [
    ("sqlite_error", SQL, "", "import sqlite3, pytest\nwith pytest.raises(sqlite3.OperationalError):\n    f()",
     "pass", "pass"),
    ("sqlite_error_base", SQL, "", "import sqlite3, pytest\nwith pytest.raises(sqlite3.DatabaseError):\n    f()",
     "pass", "pass"),
    ("sqlite_error_other", SQL, "", "import sqlite3, pytest\nwith pytest.raises(sqlite3.IntegrityError):\n    f()",
     "error", "error"),
    ("sqlite_error_caught", SQL, "", "import sqlite3\ntry:\n    f()\nexcept sqlite3.Error as e:\n"
     "    assert type(e) is sqlite3.OperationalError and 'nothing' in str(e)", "pass", "pass"),
    ("wave_error", "import wave\ndef f():\n    raise wave.Error('x')\n", "",
     "import wave, pytest\nwith pytest.raises(wave.Error):\n    f()", "pass", "pass"),
    ("netrc_error", "import netrc\ndef f():\n    raise netrc.NetrcParseError('x')\n", "",
     "import netrc, pytest\nwith pytest.raises(netrc.NetrcParseError):\n    f()", "pass", "pass"),
    ("lzma_error", "import lzma\ndef f():\n    return lzma.decompress(b'xx')\n", "",
     "import lzma, pytest\nwith pytest.raises(lzma.LZMAError):\n    f()", "pass", "pass"),
]

GROUP = "def f():\n    raise ExceptionGroup('g', [ValueError('v'), KeyError('k')])\n"
OWN_GROUP = ("class G(ExceptionGroup):\n    pass\ndef f():\n    raise G('g', [ValueError('v')])\n")
TWO_BASES = "class E(ValueError, KeyError):\n    pass\ndef f():\n    raise E('x')\n"
SHAPES = [
    ("group_star", GROUP, "", "try:\n    f()\nexcept* ValueError as g:\n    assert len(g.exceptions) == 1\n"
     "except* KeyError:\n    pass", "pass", "pass"),
    ("group_raises", GROUP, "", "import pytest\nwith pytest.raises(ExceptionGroup) as e:\n    f()\n"
     "assert len(e.value.exceptions) == 2 and e.value.message == 'g'\n"
     "assert isinstance(e.value.exceptions[1], KeyError) and e.value.exceptions[0].args == ('v',)", "pass", "pass"),
    ("group_wrong", GROUP, "", "import pytest\nwith pytest.raises(ExceptionGroup) as e:\n    f()\n"
     "assert len(e.value.exceptions) == 3", "fail", "fail"),
    ("group_not_caught", GROUP, "", "try:\n    f()\nexcept* TypeError:\n    pass", "error", "error"),
    ("own_group", OWN_GROUP, "", "try:\n    f()\nexcept G as g:\n    assert isinstance(g, ExceptionGroup) "
     "and g.exceptions[0].args == ('v',)", "pass", "pass"),
    ("two_bases_second", TWO_BASES, "", "try:\n    f()\nexcept KeyError:\n    pass", "pass", "pass"),
    ("two_bases_first", TWO_BASES, "", "import pytest\nwith pytest.raises(ValueError):\n    f()", "pass", "pass"),
    ("two_bases_other", TWO_BASES, "", "import pytest\nwith pytest.raises(TypeError):\n    f()", "error", "error"),
]

ALL = COROUTINES + STDLIB_ERRORS + SHAPES


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):  # (the same verdict as the pure program's)
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(COROUTINES), ids=setup_cell_ids(COROUTINES))
def test_a_returned_coroutine_runs_in_the_tests_event_loop(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(STDLIB_ERRORS),
                         ids=setup_cell_ids(STDLIB_ERRORS))
def test_a_standard_error_of_a_module_loaded_later_is_the_tests_own(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SHAPES), ids=setup_cell_ids(SHAPES))
def test_an_exception_group_or_one_of_two_bases_is_caught_as_in_python(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail
