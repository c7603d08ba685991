"""Red-team pass 36: forged verdicts and false fails around the exceptions a program returns, each
row checked against plain Python (``exec(program); exec(setup); exec(test)`` in one module, as
tests/test_redteam34-35.py do) by :func:`test_the_stated_verdicts_are_plain_pythons`.

1. (review 34, H1) An exception the program returns reached the test as a copy made when it crossed
   (pass 34, so that it is a real exception of the test's class for ``isinstance``, ``raise`` and
   ``except``): a change the program made to it later (``e.code += 1``, ``e.args = ...``, a note, a
   cause, an ``args`` property or ``__str__`` over state that moved, ``del e.code``) was not seen by the
   test, one the test made (``e.code = 7``) did not reach the program, and its ``__traceback__`` was
   None, so a test asserting the old state PASSED every shape where Python fails. The copy now
   follows the program's object: what either side changes is the other's before the other runs
   again; a program class's methods and properties it does not carry are asked of the program's
   object (they were AttributeErrors).
2. A standard module loaded after the zygote is recorded as its own code left it, so that a right
   program's ``sqlite3.OperationalError`` is the test's own (tests/test_right_programs36.py); a
   class the program makes with that module's name, before or after loading it, or plants in a
   submodule the test does not read (``sqlite3.dbapi2``), stays a stand-in.
3. An exception a call of the program's raises was a copy made as it was raised: a program raising
   one exception object it changes at each call (``_err.code = c; raise _err``) PASSED
   ``a.value.code == 1`` after ``f(2)`` and ``a.value is not b.value`` every shape. The first 32 a
   test catches follow the program's objects as returned ones do (one object for one raised twice).
4. (review 36, H2) Past the 256 followed ones, a returned exception crossed as a plain reference, no
   exception of its class (``isinstance(e, ValueError)`` false for the 257th of 300 ValueErrors): it
   is again a copy made as it crossed, the test's own exception of its class (not followed: a change
   the program makes to it later is not seen, as in pass 34)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

E = ("class E(Exception):\n    pass\n_e = E('x')\n_e.code = 0\ndef f():\n    return _e\n"
     "def bump():\n    _e.code += 1\ndef code():\n    return _e.code\ndef g(e):\n    return e.code\n"
     "def drop():\n    del _e.code\ndef add():\n    _e.add_note('n')\ndef chain():\n    _e.__cause__ = KeyError('k')\n"
     "def items():\n    return _e.items\ndef grow():\n    _e.items.append(1)\n")
REBIND = ("ITEMS = []\nclass E(Exception):\n    pass\n_e = E('x')\n_e.items = ITEMS\ndef f():\n    return _e\n"
          "def items():\n    return ITEMS\ndef its():\n    return _e.items\ndef rebind():\n    _e.items = [9]\n")
V = ("_e = ValueError('x')\ndef f():\n    return _e\ndef setargs():\n    _e.args = ('y',)\n"
     "def args():\n    return _e.args\n")
TB = ("import json\ndef f():\n    try:\n        json.loads('{')\n    except json.JSONDecodeError as e:\n"
      "        return e\n")
NEW = "def f():\n    return KeyError('k')\n"
P = ("n = [0]\nclass E(Exception):\n    @property\n    def args(self):\n        return (n[0],)\n_e = E()\n"
     "def f():\n    return _e\ndef bump():\n    n[0] += 1\n")
S = ("class E(Exception):\n    def __str__(self):\n        return f'code {self.code}'\n"
     "    def describe(self):\n        return 'd' + str(self.code)\n    @property\n    def twice(self):\n"
     "        return self.code * 2\n_e = E('x')\n_e.code = 0\ndef f():\n    return _e\ndef bump():\n    _e.code += 1\n")
SET = ("class E(Exception):\n    def __setattr__(self, k, v):\n        super().__setattr__(k, v * 2)\n"
       "_e = E('x')\ndef f():\n    return _e\n")
MANY = ("class E(Exception):\n    pass\n_es = [E(i) for i in range(300)]\nfor _x in _es:\n    _x.code = 0\n"
        "def f():\n    return _es\ndef bump():\n    for x in _es:\n        x.code += 1\n")
HTTP = ("class HTTPError(OSError):\n    @property\n    def status(self):\n        return self.errno\n"
        "_e = HTTPError(404, 'not found')\n_e.hits = 0\ndef last_error():\n    return _e\n"
        "def count():\n    _e.hits += 1\n    return _e.hits\n")
OWNSET_OS = ("class E(OSError):\n    def __setattr__(self, k, v):\n        super().__setattr__(k, v)\n"
             "_e = E(2, 'nf')\n_e.code = 0\ndef f():\n    return _e\n"
             "def bump():\n    _e.code += 1\n    return _e.code\n")
LIVE = [
    ("prog_changes_attr", E, "", "e = f()\nbump()\nassert e.code == 0", "fail", "fail"),
    ("prog_changes_attr_seen", E, "", "e = f()\nbump()\nassert e.code == 1 and isinstance(e, E) and e is f()",
     "pass", "pass"),
    ("test_changes_attr", E, "", "e = f()\ne.code = 7\nassert code() != 7", "fail", "fail"),
    ("test_changes_attr_seen", E, "", "e = f()\ne.code = 7\nassert code() == 7", "pass", "pass"),
    ("handed_back_changed", E, "", "e = f()\ne.code = 7\nassert g(e) == 0", "fail", "fail"),
    ("prog_deletes_attr", E, "", "e = f()\ndrop()\nassert e.code == 0", "error", "error"),
    ("prog_adds_note", E, "", "e = f()\nadd()\nassert not hasattr(e, '__notes__')", "fail", "fail"),
    ("prog_adds_note_seen", E, "", "e = f()\nadd()\nassert e.__notes__ == ['n']", "pass", "pass"),
    ("prog_sets_cause", E, "", "e = f()\nchain()\nassert e.__cause__ is None", "fail", "fail"),
    ("prog_sets_cause_seen", E, "", "e = f()\nchain()\nassert isinstance(e.__cause__, KeyError)", "pass", "pass"),
    ("prog_grows_attr", E + "_e.items = []\n", "", "e = f()\ngrow()\nassert e.items == []", "fail", "fail"),
    ("test_grows_attr", E + "_e.items = []\n", "", "e = f()\ne.items.append(2)\nassert items() == []",
     "fail", "fail"),
    ("prog_sets_args", V, "", "e = f()\nsetargs()\nassert e.args == ('x',)", "fail", "fail"),
    ("prog_sets_args_seen", V, "", "e = f()\nsetargs()\nassert e.args == ('y',) and str(e) == 'y'", "pass", "pass"),
    ("prog_rebinds_attr", REBIND, "", "e = f()\nx = e.items\nrebind()\nassert x == [9]", "fail", "fail"),
    ("prog_rebinds_attr_seen", REBIND, "", "e = f()\nx = e.items\nrebind()\nassert x == [] and e.items == [9]",
     "pass", "pass"),
    ("test_rebinds_attr", REBIND, "", "e = f()\ne.items = [5]\nassert items() == [5]", "fail", "fail"),
    ("test_rebinds_attr_seen", REBIND, "", "e = f()\ne.items = [5]\nassert items() == [] and its() == [5]",
     "pass", "pass"),
    ("test_sets_args", V, "", "e = f()\ne.args = ('z',)\nassert args() != ('z',)", "fail", "fail"),
    ("traceback_none", TB, "", "assert f().__traceback__ is None", "fail", "fail"),
    ("traceback_some", TB, "", "assert f().__traceback__ is not None", "pass", "pass"),
    ("never_raised_no_traceback", NEW, "", "assert f().__traceback__ is None", "pass", "pass"),
    ("args_property_moves", P, "", "e = f()\nbump()\nassert e.args == (0,)", "fail", "fail"),
    ("args_property_moves_seen", P, "", "e = f()\nbump()\nassert e.args == (1,)", "pass", "pass"),
    ("str_moves", S, "", "e = f()\nbump()\nassert str(e) == 'code 0'", "fail", "fail"),
    ("str_moves_seen", S, "", "e = f()\nbump()\nassert str(e) == 'code 1'", "pass", "pass"),
    ("own_method", S, "", "assert f().describe() == 'd0'", "pass", "pass"),
    ("own_property", S, "", "e = f()\nbump()\nassert e.twice == 2", "pass", "pass"),
    ("own_method_missing", S, "", "assert f().nothing() == 1", "error", "error"),
    ("own_setattr", SET, "", "e = f()\ne.code = 7\nassert e.code == 7", "fail", "fail"),
    ("own_setattr_seen", SET, "", "e = f()\ne.code = 7\nassert e.code == 14", "pass", "pass"),
    ("read_only_args", P, "", "e = f()\ne.args = (5,)", "error", "error"),
    ("raised_again", E, "", "e = f()\nbump()\ntry:\n    raise e\nexcept E as x:\n    assert x.code == 1 and x is e",
     "pass", "pass"),
    ("many_last", MANY, "", "es = f()\nbump()\nassert es[255].code == 0", "fail", "fail"),
    ("many_first", MANY, "", "es = f()\nbump()\nassert es[0].code == 0", "fail", "fail"),
    ("many_first_seen", MANY, "", "es = f()\nbump()\nassert es[0].code == 1 and isinstance(es[0], E)", "pass", "pass"),
    # (review 36, H4: a slot of a builtin base set as the program's reply is read went through the class's own
    # way of setting attributes, a request of its own that took the reply: the next call returned None)
    ("slot_base_property", HTTP, "", "e = last_error()\nassert e.status == 404\nassert count() == 1\n"
     "assert count() == 2 and e.errno == 404", "pass", "pass"),
    ("slot_base_setattr", OWNSET_OS, "", "e = f()\nassert bump() == 1 and e.code == 1 and e.errno == 2",
     "pass", "pass"),
    ("slot_base_property_wrong", HTTP, "", "e = last_error()\nassert count() == 1\nassert count() == 1",
     "fail", "fail"),
    # (review 36, H2: past the cap of followed exceptions one is still an exception of its class)
    ("many_last_is_one", MANY, "", "import pytest\nes = f()\nassert isinstance(es[-1], E) and es[-1].args == (299,)\n"
     "with pytest.raises(E):\n    raise es[-1]", "pass", "pass"),
    ("many_builtin", "def f():\n    return [ValueError(i) for i in range(300)]\n", "",
     "es = f()\nassert all(isinstance(e, ValueError) for e in es) and es[-1].args == (299,)", "pass", "pass"),
    ("many_builtin_wrong", "def f():\n    return [ValueError(i) for i in range(300)]\n", "",
     "es = f()\nassert isinstance(es[-1], KeyError)", "fail", "fail"),
]

PLANTED_DBAPI2 = ("import sqlite3, sqlite3.dbapi2\nclass OperationalError(Exception):\n"
                  "    __module__ = 'sqlite3.dbapi2'\nsqlite3.dbapi2.OperationalError = OperationalError\n"
                  "def f():\n    raise OperationalError('x')\n")
NAMED_WAVE = "class Error(Exception):\n    __module__ = 'wave'\n{imp}def f():\n    raise Error('x')\n"
LATE = [
    ("planted_in_submodule", PLANTED_DBAPI2, "",
     "import sqlite3, pytest\nwith pytest.raises(sqlite3.OperationalError):\n    f()", "error", "error"),
    ("named_unloaded", NAMED_WAVE.format(imp=""), "", "import wave, pytest\nwith pytest.raises(wave.Error):\n    f()",
     "error", "error"),
    ("named_loaded_after", NAMED_WAVE.format(imp="import wave\n"), "",
     "import wave, pytest\nwith pytest.raises(wave.Error):\n    f()", "error", "error"),
    ("named_loaded_before", "import wave\n" + NAMED_WAVE.format(imp=""), "",
     "import wave\ntry:\n    f()\nexcept wave.Error:\n    pass\nexcept Exception:\n    assert False", "fail", "fail"),
]

RAISES = ("class E(Exception):\n    pass\n_e = E('x')\n_e.code = 0\ndef f(c=0):\n    _e.code = c\n    raise _e\n"
          "def bump():\n    _e.code += 1\ndef code():\n    return _e.code\n")
CAUGHT = "try:\n    f()\nexcept E as e:\n    err = e\n"
TWO = "import pytest\nwith pytest.raises(E) as a:\n    f(1)\nwith pytest.raises(E) as b:\n    f(2)\n"
RAISED = [
    ("raised_changed_after", RAISES, "", CAUGHT + "bump()\nassert err.code == 0", "fail", "fail"),
    ("raised_changed_after_seen", RAISES, "", CAUGHT + "bump()\nassert err.code == 1", "pass", "pass"),
    ("raised_twice", RAISES, "", TWO + "assert a.value.code == 1", "fail", "fail"),
    ("raised_twice_not_one", RAISES, "", TWO + "assert a.value is not b.value", "fail", "fail"),
    ("raised_twice_seen", RAISES, "", TWO + "assert a.value is b.value and a.value.code == 2", "pass", "pass"),
    ("raised_test_sets", RAISES, "", CAUGHT + "err.code = 9\nassert code() == 9", "pass", "pass"),
    ("raised_in_a_loop", "def f(x):\n    raise ValueError(x)\n", "",
     "import pytest\nfor i in range(100):\n    with pytest.raises(ValueError, match=str(i)):\n        f(i)",
     "pass", "pass"),
]

ALL = LIVE + LATE + RAISED


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):  # (the same verdict as the pure program's)
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(LIVE), ids=setup_cell_ids(LIVE))
def test_a_returned_exception_follows_the_programs_object(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(LATE), ids=setup_cell_ids(LATE))
def test_a_class_named_like_a_late_standard_one_is_no_standard_class(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(RAISED), ids=setup_cell_ids(RAISED))
def test_a_raised_exception_follows_the_programs_object(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail
