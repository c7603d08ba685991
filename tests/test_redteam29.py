"""Red-team pass 29 (trust28's list R1..R19, /work/s29/R28.md): verdicts that differed from plain
Python (``exec(program); exec(setup); exec(test)`` in one interpreter, the generic shape's
``test_a()`` called after). Each cell states plain Python's verdict for the split shape and for
the generic one (``def test_a():`` makes the test's bindings its locals), and
:func:`test_the_stated_verdicts_are_plain_pythons` checks those statements against plain Python
itself, so that no cell asserts what Python would not do.

1. A test that rebinds a function of the program's (``def helper``, ``helper = Mock()``,
   ``globals()['helper'] = ...``) or sets ``solution.K = 5`` rebinds it for the program's
   functions too, as in one namespace (R4, R14: ``solution.K = 5; assert f() == 2`` and
   ``def helper(x): return 0`` then ``assert f(2) == 4`` passed a wrong program). Data the test
   binds itself (``K = 5``) stays the test's alone, as tests/test_redteam18.py requires (a
   program would read the test's ``expected``)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

K = "K = 1\ndef f():\n    return K * 2\n"
H = "def helper(x):\n    return x * 2\ndef f(x):\n    return helper(x)\n"

# (name, code, setup, test, plain verdict split, plain verdict generic)
REBIND = [
    ("mod_right", K, "", "import solution\nsolution.K = 5\nassert f() == 10", "pass", "pass"),
    ("mod_wrong", K, "", "import solution\nsolution.K = 5\nassert f() == 2", "fail", "fail"),
    ("def_right", H, "", "def helper(x):\n    return 0\nassert f(2) == 0", "pass", "fail"),
    ("def_wrong", H, "", "def helper(x):\n    return 0\nassert f(2) == 4", "fail", "pass"),
    ("glob_right", H, "", "globals()['helper'] = lambda x: 0\nassert f(2) == 0", "pass", "pass"),
    ("glob_wrong", H, "", "globals()['helper'] = lambda x: 0\nassert f(2) == 4", "fail", "fail"),
    ("lambda_right", H, "", "helper = lambda x: 0\nassert f(2) == 0", "pass", "fail"),
    ("lambda_wrong", H, "", "helper = lambda x: 0\nassert f(2) == 4", "fail", "pass"),
    ("class_right", "class V:\n    n = 1\ndef f():\n    return V().n\n", "",
     "class V:\n    n = 2\nassert f() == 2", "pass", "fail"),
    ("mock_right", H, "", "from unittest import mock\nhelper = mock.Mock(return_value=7)\nassert f(2) == 7\n"
     "helper.assert_called_once_with(2)", "pass", "fail"),
    ("del_right", H, "", "import solution\ndel solution.helper\ntry:\n    f(2)\n    assert False\n"
     "except NameError:\n    pass", "pass", "pass"),
]

CAL = "import calendar\ncalendar.setfirstweekday(6)\ndef f(y, m):\n    return calendar.monthcalendar(y, m)\n"
DEC = "import decimal\ndecimal.getcontext().prec = 4\ndef f():\n    return decimal.Decimal(1)\n"
RND = "import random\nrandom.seed(7)\ndef f():\n    return 1\n"
LOADED = [
    ("cal_right", CAL, "", "import calendar\nassert calendar.firstweekday() == 6", "pass", "pass"),
    ("cal_wrong", CAL, "", "import calendar\nassert calendar.firstweekday() == 0", "fail", "fail"),
    ("cal_month", CAL, "", "import calendar\nassert f(2024, 1) == calendar.monthcalendar(2024, 1)", "pass", "pass"),
    ("dec_right", DEC, "", "assert str(f() / 3) == '0.3333'", "pass", "pass"),
    ("dec_wrong", DEC, "", "assert str(f() / 3) == '0.3333333333333333333333333333'", "fail", "fail"),
    ("dec_prec", DEC, "", "import decimal\nassert decimal.getcontext().prec == 4", "pass", "pass"),
    ("dec_own", DEC, "", "from decimal import Decimal\nassert str(Decimal(2) / 3) == '0.6667'", "pass", "pass"),
    ("dec_eq", DEC, "", "from decimal import Decimal\nassert f() == Decimal(1) and f() + 1 == 2", "pass", "pass"),
    ("rnd_right", RND, "", "import random\nx = random.random()\nrandom.seed(7)\nassert x == random.random()",
     "pass", "pass"),
    ("rnd_wrong", RND, "", "import random\nx = random.random()\nrandom.seed(7)\nassert x != random.random()",
     "fail", "fail"),
]

IADD = "class I(int):\n    def __add__(self, o):\n        return I(int(self) * 10 + o)\ndef f():\n    return I(1)\n"
SMUL = ("class S(str):\n    def __mul__(self, n):\n        return 'x'\n    def __len__(self):\n        return 9\n"
        "def f():\n    return S('ab')\n")
FNEG = "class F(float):\n    def __neg__(self):\n        return 5.0\ndef f():\n    return F(1.5)\n"
PLAIN_I = "class J(int):\n    def double(self):\n        return J(self * 2)\ndef f():\n    return J(3)\n"
SUBCLASS = [
    ("iadd_right", IADD, "", "assert f() + 2 == 12", "pass", "pass"),
    ("iadd_wrong", IADD, "", "assert f() + 2 == 3", "fail", "fail"),
    ("iadd_eq", IADD, "", "assert f() == 1 and isinstance(f(), int) and [f()] == [1]", "pass", "pass"),
    ("smul_right", SMUL, "", "assert f() * 2 == 'x' and len(f()) == 9", "pass", "pass"),
    ("smul_wrong", SMUL, "", "assert f() * 2 == 'abab'", "fail", "fail"),
    ("slen_wrong", SMUL, "", "assert len(f()) == 2", "fail", "fail"),
    ("fneg_wrong", FNEG, "", "assert -f() == -1.5", "fail", "fail"),
    ("plain_sub", PLAIN_I, "", "assert f() + 1 == 4 and f().double() == 6 and str(f()) == '3'", "pass", "pass"),
]

SETUP_P = ("class P:\n    def __init__(self, x):\n        self.x = x\n    def __eq__(self, o):\n"
           "        return isinstance(o, P) and o.x == self.x\n    def __hash__(self):\n        return hash(self.x)\n")
OWN_C = ("from collections import deque\nclass C:\n    def __init__(self, v):\n        self.v = v\n"
         "    def __eq__(self, o):\n        return isinstance(o, C) and o.v == self.v\n    def __hash__(self):\n"
         "        return hash(self.v)\ndef f(v):\n    return C(v)\ndef g(v):\n    return deque([C(v)])\n"
         "def h(v):\n    return {C(v)}\ndef k(v):\n    return frozenset({C(v)})\n")
SETS = [
    ("set_made", "def f(xs):\n    return {P(x) for x in xs}\n", SETUP_P, "assert f([1, 1]) == {P(1)}", "pass", "pass"),
    ("set_made_rev", "def f(xs):\n    return {P(x) for x in xs}\n", SETUP_P, "assert {P(1)} == f([1, 1])",
     "pass", "pass"),
    ("set_made_wrong", "def f(xs):\n    return {P(x) for x in xs}\n", SETUP_P, "assert f([1, 2]) == {P(1)}",
     "fail", "fail"),
    ("set_given", "def f(ps):\n    return set(ps)\n", SETUP_P, "assert f([P(1), P(1)]) == {P(1)}", "pass", "pass"),
    ("set_own", OWN_C, "", "assert h(1) == {f(1)} and k(1) == frozenset({f(1)})", "pass", "pass"),
    ("set_own_ne", OWN_C, "", "assert h(1) != {f(1)}", "fail", "fail"),
    ("deque_own", OWN_C, "", "assert g(1) == deque([f(1)])", "pass", "pass"),
    ("deque_own_ne", OWN_C, "", "assert g(1) != deque([f(1)])", "fail", "fail"),
    ("deque_other", OWN_C, "", "assert g(1) != deque([f(2)])", "pass", "pass"),
]

KEYS = "def f(d):\n    return d.keys()\n"
ITEMS = "def f(d):\n    return d.items()\n"
VIEWS = [
    ("keys_live", KEYS, "", "d = {'a': 1}\nk = f(d)\nd['b'] = 2\nassert len(k) == 2 and 'b' in k", "pass", "pass"),
    ("keys_copy", KEYS, "", "d = {'a': 1}\nk = f(d)\nd['b'] = 2\nassert len(k) == 1", "fail", "fail"),
    ("items_live", ITEMS, "", "d = {'a': 1}\nv = f(d)\nd['a'] = 5\nassert list(v) == [('a', 5)]", "pass", "pass"),
    ("keys_eq", KEYS, "", "assert f({'a': 1}) == {'a'} and list(f({'b': 2, 'a': 1})) == ['b', 'a']", "pass", "pass"),
    ("keys_own", "def f():\n    return {'x': 1}.keys()\n", "", "assert f() == {'x'}", "pass", "pass"),
]

EXC_T = "try:\n    f()\nexcept {} as e:\n    assert {}\nelse:\n    assert False"
FNF = "def f():\n    raise FileNotFoundError(2, 'nope', 'x.txt')\n"
OPEN = "def f():\n    open('missing-r29.txt')\n"
EXIT = "import sys\ndef f():\n    sys.exit(3)\n"
CHAIN = "def f():\n    try:\n        1 / 0\n    except ZeroDivisionError as z:\n        raise ValueError('v') from z\n"
CONTEXT = "def f():\n    try:\n        {}['k']\n    except KeyError:\n        raise ValueError('v')\n"
NOTES = "def f():\n    e = ValueError('x')\n    e.add_note('n')\n    raise e\n"
EXCEPTIONS = [
    ("oserror_filename", FNF, "", EXC_T.format("OSError", "e.filename == 'x.txt' and e.errno == 2"), "pass", "pass"),
    ("oserror_wrong", FNF, "", EXC_T.format("OSError", "e.filename is None"), "fail", "fail"),
    ("open_filename", OPEN, "", EXC_T.format("FileNotFoundError", "e.filename == 'missing-r29.txt'"),
     "pass", "pass"),
    ("exit_code", EXIT, "", EXC_T.format("SystemExit", "e.code == 3"), "pass", "pass"),
    ("exit_code_wrong", EXIT, "", EXC_T.format("SystemExit", "e.code == '3'"), "fail", "fail"),
    ("cause", CHAIN, "", EXC_T.format("ValueError", "isinstance(e.__cause__, ZeroDivisionError)"), "pass", "pass"),
    ("cause_wrong", CHAIN, "", EXC_T.format("ValueError", "e.__cause__ is None"), "fail", "fail"),
    ("context", CONTEXT, "", EXC_T.format("ValueError", "isinstance(e.__context__, KeyError) and "
                                                       "e.__cause__ is None"), "pass", "pass"),
    ("notes", NOTES, "", EXC_T.format("ValueError", "e.__notes__ == ['n']"), "pass", "pass"),
]

SINGLE = [
    ("ellipsis", "def f():\n    return ...\n", "", "assert f() is Ellipsis and [f()] == [...]", "pass", "pass"),
    ("ellipsis_wrong", "def f():\n    return ...\n", "", "assert f() is not Ellipsis", "fail", "fail"),
    ("notimpl", "def f():\n    return NotImplemented\n", "", "assert f() is NotImplemented", "pass", "pass"),
    ("slice", "def f():\n    return slice(1, 3)\n", "", "assert [0, 1, 2, 3][f()] == [1, 2] and f() == slice(1, 3)",
     "pass", "pass"),
    ("slice_wrong", "def f():\n    return slice(1, 3)\n", "", "assert [0, 1, 2, 3][f()] == [1, 2, 3]", "fail", "fail"),
]

ALL = REBIND + LOADED + SUBCLASS + SETS + VIEWS + EXCEPTIONS + SINGLE


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(REBIND), ids=setup_cell_ids(REBIND))
def test_a_global_the_test_rebinds_is_rebound_for_the_program(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(LOADED), ids=setup_cell_ids(LOADED))
def test_the_test_sees_the_state_the_programs_load_left(ex, name, code, setup, test, shape, want):
    """R2, R16: the calendar's first weekday, the decimal context and the random generator as the
    program's load left them are the test's (one interpreter): ``getcontext().prec = 4`` at load
    and ``assert str(f() / 3) == '0.3333333333333333333333333333'`` PASSED a wrong program."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SUBCLASS), ids=setup_cell_ids(SUBCLASS))
def test_a_builtin_subclass_with_its_own_operators_is_judged_by_them(ex, name, code, setup, test, shape, want):
    """R10: an int/str/float subclass of the program's whose class defines operators of its own
    reached a split test's parent as its plain value: ``f() + 2 == 3`` PASSED a wrong program
    (``I.__add__`` gives 12)."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SETS), ids=setup_cell_ids(SETS))
def test_a_set_or_deque_of_program_objects_compares_with_the_tests(ex, name, code, setup, test, shape, want):
    """R9: a set, frozenset or deque of the program's objects compared with one the test builds of
    such objects: the test's container reached the program's ``==`` as a reference, equal to no
    set (right programs failed) and ``g(1) != deque([f(1)])`` PASSED a wrong test."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(VIEWS), ids=setup_cell_ids(VIEWS))
def test_a_view_of_the_tests_dict_is_live(ex, name, code, setup, test, shape, want):
    """R11: ``d.keys()`` of the test's dict returned by the program crossed as a copy: the test's
    later ``d['b'] = 2`` did not show in it, and ``assert len(k) == 1`` PASSED a wrong test."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(EXCEPTIONS), ids=setup_cell_ids(EXCEPTIONS))
def test_an_exception_keeps_its_filename_code_chain_and_notes(ex, name, code, setup, test, shape, want):
    """R19, R5: a builtin exception crossing to the test was rebuilt from its arguments only: an
    OSError lost its ``filename``, ``sys.exit(3)``'s code became ``'3'``, and ``__cause__``,
    ``__context__`` and ``__notes__`` were gone."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SINGLE), ids=setup_cell_ids(SINGLE))
def test_ellipsis_notimplemented_and_slices_cross_as_themselves(ex, name, code, setup, test, shape, want):
    """R12: ``return ...`` / ``NotImplemented`` were references (``f() is Ellipsis`` false) and a
    slice was a reference no list could be indexed with (an ERROR)."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail
