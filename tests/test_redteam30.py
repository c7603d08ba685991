"""Red-team pass 30: verdicts that differed from plain Python (``exec(program); exec(setup);
exec(test)`` in one interpreter, the generic shape's ``test_a()`` called after), most of them
forged passes. Each cell states plain Python's verdict for the split shape and for the generic
one, and :func:`test_the_stated_verdicts_are_plain_pythons` checks those statements against
plain Python itself.

1. A bounded deque (``deque(maxlen=1)``) crossed as an unbounded one: ``d.append(2)`` kept the
   first item, and ``assert list(d) == [1, 2]`` PASSED a program whose deque drops it.
2. A list, dict, tuple or set subclass of the program's with a ``__contains__`` of its own
   reached a split test's parent as its plain value: ``assert 2 not in f()`` PASSED where the
   class says every item is in it.
3. A split test handing a setup's list to the program and reading it again with no call of the
   program's (``f(DATA)`` then ``assert len(DATA) == 1``) read it as it was before the call: a
   program growing its input PASSED a test checking that it does not.
4. The decimal context, the calendar's first weekday, the environment or ``sys.argv`` that a
   call (not the load) moved stayed the program process's: ``assert str(Decimal(2) / 3) ==
   '0.666...67'`` after ``f()`` set ``prec = 3`` PASSED, and ``'X' not in os.environ`` after
   ``f()`` set it.
5. An exception class whose metaclass's ``__mro__`` property claimed ``ValueError`` crossed as
   one: ``except ValueError`` caught it (Python does not: an error).
6. An int, str or tuple subclass (or IntEnum) of the program's with a ``__bool__`` or ``__len__`` of its own
   reached a split test's parent with its value's truth: ``assert f()`` PASSED where the class
   says False; one with a ``__hash__`` of its own with its value's hash: ``assert f() in {1}``
   PASSED where the class hashes it elsewhere.
7. A function of the test's rebinding a function of the program's with ``global helper; helper =
   ...`` (``STORE_GLOBAL`` writes the namespace itself, past test_redteam29's R4 forwarding): the
   program's ``f`` still called its own helper, and ``assert f(2) == 4`` PASSED.
8. A Counter, OrderedDict or defaultdict subclass of the program's with special methods of its
   own (``__missing__``, ``__contains__``, ``__len__``) reached a split test's parent as the
   standard class's value: ``x = f(); assert x['zz'] == 0`` PASSED where its ``__missing__``
   says 5."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

DQ = "from collections import deque\ndef f():\n    return deque([1], maxlen={})\n"
DEQUES = [
    ("bounded_append", DQ.format(1), "", "d = f()\nd.append(2)\nassert list(d) == [1, 2]", "fail", "fail"),
    ("bounded_append_right", DQ.format(1), "", "d = f()\nd.append(2)\nassert list(d) == [2]", "pass", "pass"),
    ("bounded_maxlen", DQ.format(3), "", "from collections import deque\n"
     "assert f().maxlen == 3 and f() == deque([1]) and type(f()) is deque", "pass", "pass"),
    ("bounded_maxlen_wrong", DQ.format(3), "", "assert f().maxlen is None", "fail", "fail"),
    ("given_bounded", "def f(d):\n    d.append(2)\n    return list(d)\n", "",
     "from collections import deque\nassert f(deque([1], maxlen=1)) == [2]", "pass", "pass"),
]

CONTAINS = "class {0}({0_base}):\n    def __contains__(self, o):\n        return True\ndef f():\n    return {1}\n"


def _contains(cls, base, value):
    return CONTAINS.replace("{0_base}", base).replace("{0}", cls).replace("{1}", value)


SUBCLASS = [
    ("list_contains", _contains("L", "list", "L([1])"), "", "assert 2 not in f()", "fail", "fail"),
    ("list_contains_right", _contains("L", "list", "L([1])"), "", "assert 2 in f() and f() == [1]", "pass", "pass"),
    ("dict_contains", _contains("D", "dict", "D(a=1)"), "", "assert 'b' not in f()", "fail", "fail"),
    ("tuple_contains", _contains("T", "tuple", "T((1,))"), "", "assert 2 not in f()", "fail", "fail"),
    ("set_contains", _contains("S", "set", "S({1})"), "", "assert 2 not in f()", "fail", "fail"),
    ("list_plain_sub", "class Stack(list):\n    def push(self, x):\n        self.append(x)\ndef f():\n"
     "    s = Stack()\n    s.push(1)\n    return s\n", "", "assert f() == [1] and 1 in f() and len(f()) == 1",
     "pass", "pass"),
]

GROW = "def f(d):\n    d.append(5)\n    return 0\n"
SETUP_ARGS = [
    ("grown_len", GROW, "DATA = [1]", "f(DATA)\nassert len(DATA) == 1", "fail", "fail"),
    ("grown_len_right", GROW, "DATA = [1]", "f(DATA)\nassert len(DATA) == 2", "pass", "pass"),
    ("grown_item", GROW, "DATA = [1]", "assert f(DATA) == 0 and DATA[-1] == 1", "fail", "fail"),
    ("sorted_again", "def f(d):\n    d.sort()\n    return 0\n", "DATA = [3, 1]",
     "assert f(DATA) == 0\nassert sorted(DATA) == DATA", "pass", "pass"),
    ("method_grown", "def f(d):\n    return 0\n", "DATA = [1]", "DATA.append(5)\nassert len(DATA) == 1",
     "fail", "fail"),
    ("method_grown_right", "def f(d):\n    return 0\n", "DATA = [1]", "DATA.append(5)\nassert len(DATA) == 2",
     "pass", "pass"),
    ("unchanged", "def f(d):\n    return sorted(d)\n", "DATA = [3, 1]",
     "assert f(DATA) == [1, 3]\nassert DATA == [3, 1]", "pass", "pass"),
]

DEC = "import decimal\ndef f():\n    decimal.getcontext().prec = 3\n    return decimal.Decimal(1)\n"
CAL = "import calendar\ndef f():\n    calendar.setfirstweekday(6)\n    return 0\n"
LOCAL = ("import decimal\ndef f():\n    with decimal.localcontext() as c:\n        c.prec = 3\n"
         "        return +decimal.Decimal(1)\n")
ENV = "import sys, os\ndef f():\n    os.environ['XR30'] = '1'\n    return 0\n"
MOVED = [
    ("dec_wrong", DEC, "", "from decimal import Decimal\nx = f()\nassert str(Decimal(2) / 3) == "
     "'0.6666666666666666666666666667'", "fail", "fail"),
    ("dec_right", DEC, "", "from decimal import Decimal\nx = f()\nassert str(Decimal(2) / 3) == '0.667'",
     "pass", "pass"),
    ("dec_value", DEC, "", "assert str(f() / 3) == '0.333'", "pass", "pass"),
    ("dec_value_wrong", DEC, "", "assert str(f() / 3) == '0.3333333333333333333333333333'", "fail", "fail"),
    ("dec_local", LOCAL, "", "from decimal import Decimal\nx = f()\nassert str(Decimal(2) / 3) == "
     "'0.6666666666666666666666666667'", "pass", "pass"),
    ("cal_wrong", CAL, "", "import calendar\nf()\nassert calendar.firstweekday() == 0", "fail", "fail"),
    ("cal_right", CAL, "", "import calendar\nf()\nassert calendar.firstweekday() == 6", "pass", "pass"),
    ("cal_month", CAL, "", "import calendar\nf()\nassert calendar.monthcalendar(2024, 1)[0][0] == 0", "pass", "pass"),
    ("env_wrong", ENV, "", "import os\nf()\nassert 'XR30' not in os.environ", "fail", "fail"),
    ("env_right", ENV, "", "import os\nf()\nassert os.environ['XR30'] == '1' and os.getenv('XR30') == '1'",
     "pass", "pass"),
    ("env_removed", "import sys, os\nos.environ['YR30'] = '2'\ndef f():\n    del os.environ['YR30']\n"
     "    return 0\n", "", "import os\nf()\nassert 'YR30' not in os.environ", "pass", "pass"),
    ("argv_wrong", "import sys\ndef f():\n    sys.argv.append('x')\n    return 0\n", "",
     "import sys\nf()\nassert 'x' not in sys.argv", "fail", "fail"),
]

MRO = ("class M(type):\n    @property\n    def __mro__(cls):\n"
       "        return (cls, ValueError, Exception, BaseException, object)\n"
       "class E(Exception, metaclass=M):\n    pass\ndef f():\n    raise E('x')\n")
CATCH = "try:\n    f()\nexcept {} as e:\n    pass\nelse:\n    assert False"
FAKE_MRO = [
    ("caught_as_claimed", MRO, "", CATCH.format("ValueError"), "error", "error"),
    ("raises_as_claimed", MRO, "", "import pytest\nwith pytest.raises(ValueError):\n    f()", "error", "error"),
    ("caught_as_itself", MRO, "", "try:\n    f()\nexcept Exception as e:\n    assert not isinstance(e, ValueError)\n"
     "else:\n    assert False", "pass", "pass"),
]

TRUTH = [
    ("int_bool", "class I(int):\n    def __bool__(self):\n        return False\ndef f():\n    return I(5)\n", "",
     "assert f() == 5 and f()", "fail", "fail"),
    ("int_bool_right", "class I(int):\n    def __bool__(self):\n        return False\ndef f():\n    return I(5)\n",
     "", "assert f() == 5 and not f()", "pass", "pass"),
    ("str_len", "class S(str):\n    def __len__(self):\n        return 0\ndef f():\n    return S('ab')\n", "",
     "assert f()", "fail", "fail"),
    ("tuple_len", "class T(tuple):\n    def __len__(self):\n        return 0\ndef f():\n    return T((1,))\n", "",
     "assert f()", "fail", "fail"),
]

EB = ("from enum import IntEnum\nclass C(IntEnum):\n    A = 1\n    def __bool__(self):\n        return False\n"
      "def f():\n    return C.A\n")
IH = "class I(int):\n    def __hash__(self):\n        return 99\ndef f():\n    return I(1)\n"
TRUTH += [
    ("int_hash_in", IH, "", "assert f() in {1}", "fail", "fail"),
    ("int_hash_key", IH, "", "assert {1: 'x'}[f()] == 'x'", "error", "error"),
    ("int_hash_set", IH, "", "assert {f()} == {1}", "fail", "fail"),
    ("int_hash_right", IH, "", "assert f() == 1 and hash(f()) == 99 and f() not in {1}", "pass", "pass"),
    ("enum_bool", EB, "", "assert f()", "fail", "fail"),
    ("enum_bool_right", EB, "", "assert not f() and f() == 1", "pass", "pass"),
    ("set_of_own_hash", IH + "def g():\n    return {I(1)}\n", "", "assert g() != {1} and len(g()) == 1",
     "pass", "pass"),
    ("key_own_hash", IH + "def g():\n    return {I(1): 'a'}\n", "", "assert g() != {1: 'a'}", "pass", "pass"),
    ("str_hash_in", "class S(str):\n    def __hash__(self):\n        return 99\ndef f():\n    return S('a')\n", "",
     "assert f() in {'a': 1}", "fail", "fail"),
]

CM = ("from collections import Counter\nclass C(Counter):\n    def __missing__(self, k):\n        return 5\n"
      "def f():\n    return C('aab')\n")
OD = ("from collections import OrderedDict\nclass O(OrderedDict):\n    def __contains__(self, k):\n"
      "        return True\ndef f():\n    return O(a=1)\n")
CL = ("from collections import Counter\nclass C(Counter):\n    def __len__(self):\n        return 0\n"
      "def f():\n    return C('aab')\n")
STD_SUBCLASS = [
    ("counter_missing", CM, "", "x = f()\nassert x['zz'] == 0", "fail", "fail"),
    ("counter_missing_right", CM, "", "x = f()\nassert x['zz'] == 5 and x == {'a': 2, 'b': 1}", "pass", "pass"),
    ("odict_contains", OD, "", "x = f()\nassert 'z' not in x", "fail", "fail"),
    ("dd_missing", "from collections import defaultdict\nclass D(defaultdict):\n    def __missing__(self, k):\n"
     "        return 7\ndef f():\n    return D(int, a=1)\n", "", "x = f()\nassert x['q'] == 0", "fail", "fail"),
    ("counter_len", CL, "", "assert f()", "fail", "fail"),
    ("counter_len_bound", CL, "", "x = f()\nassert len(x) == 2", "fail", "fail"),
    ("counter_plain_sub", "from collections import Counter\nclass C(Counter):\n    def top(self):\n"
     "        return self.most_common(1)\ndef f():\n    return C('aab')\n", "",
     "x = f()\nassert x == {'a': 2, 'b': 1} and x['zz'] == 0 and f().top() == [('a', 2)]", "pass", "pass"),
]

H = "def helper(x):\n    return x * 2\ndef f(x):\n    return helper(x)\n"
GLOBAL_IN = "def swap():\n    global helper\n    helper = lambda x: 0\nswap()\n"
GLOBALS = [
    ("global_wrong", H, "", GLOBAL_IN + "assert f(2) == 4", "fail", "fail"),
    ("global_right", H, "", GLOBAL_IN + "assert f(2) == 0", "pass", "pass"),
    ("global_def", H, "", "def swap():\n    global helper\n    def helper(x):\n        return 1\nswap()\n"
     "assert f(2) == 1", "pass", "pass"),
    ("global_data", "K = 1\ndef f():\n    return K\n", "", "def put():\n    global K\n    K = 5\nput()\n"
     "assert K == 5 and f() == 1", "fail", "fail"),
]

DD = "from collections import defaultdict\ndef f():\n    return defaultdict(lambda: 0, a=1)\n"
FACTORIES = [
    ("own_factory_keyerror", DD, "", "d = f()\ntry:\n    d['zz']\n    assert False\nexcept KeyError:\n    pass",
     "fail", "fail"),
    ("own_factory_eq", DD, "", "assert f() == {'a': 1} and f() != {'a': 2} and [f()] == [{'a': 1}]", "pass", "pass"),
    ("own_factory_type", DD, "", "from collections import defaultdict\n"
     "assert type(f()) is defaultdict and isinstance(f(), dict) and len(f()) == 1", "pass", "pass"),
    ("list_factory", "from collections import defaultdict\ndef f():\n    d = defaultdict(list)\n"
     "    d['a'].append(1)\n    return d\n", "", "assert f() == {'a': [1]} and f()['b'] == []", "pass", "pass"),
]

ALL = DEQUES + SUBCLASS + SETUP_ARGS + MOVED + FAKE_MRO + TRUTH + GLOBALS + STD_SUBCLASS + FACTORIES


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(DEQUES), ids=setup_cell_ids(DEQUES))
def test_a_bounded_deque_keeps_its_bound(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SUBCLASS), ids=setup_cell_ids(SUBCLASS))
def test_a_container_subclass_with_its_own_contains_is_judged_by_it(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(SETUP_ARGS), ids=setup_cell_ids(SETUP_ARGS))
def test_a_setup_value_the_program_changed_is_read_as_changed(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(MOVED), ids=setup_cell_ids(MOVED))
def test_state_a_call_moves_is_the_tests_too(ex, name, code, setup, test, shape, want):
    """The decimal context or the calendar's first weekday that a call of the program's sets
    (not its load: test_redteam29's R2/R16) is the test's after the call, as in one interpreter."""
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(FAKE_MRO), ids=setup_cell_ids(FAKE_MRO))
def test_an_exception_class_is_what_its_own_mro_says(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(TRUTH), ids=setup_cell_ids(TRUTH))
def test_a_builtin_subclass_with_its_own_truth_is_judged_by_it(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail



@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(GLOBALS), ids=setup_cell_ids(GLOBALS))
def test_a_function_of_the_tests_rebinding_a_program_global(ex, name, code, setup, test, shape, want):
    """``global helper; helper = ...`` in a function of the test's (``STORE_GLOBAL`` writes the
    namespace itself, past test_redteam29's R4 forwarding): the program's ``f`` calls the new
    helper, as in one namespace. Data stays the test's (``global K; K = 5``: test_redteam18)."""
    status, detail = run_cell(ex, code, setup, test, shape)
    if want == "pass" or name != "global_data":
        assert status == want, detail
    else:  # (the program reads its own K = 1, never the test's data: stricter than Python)
        assert status == "pass", detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(STD_SUBCLASS), ids=setup_cell_ids(STD_SUBCLASS))
def test_a_standard_dict_subclass_with_its_own_operators_is_judged_by_them(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(FACTORIES), ids=setup_cell_ids(FACTORIES))
def test_a_default_factory_of_the_programs_is_no_keyerror(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    if want == "pass":
        assert status == "pass", detail
    else:  # (an error: the factory's value is not followed)
        assert status != "pass", detail
