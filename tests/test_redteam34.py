"""Red-team pass 34: verdicts that differed from plain Python (``exec(program); exec(setup);
exec(test)`` in one module, the generic shape's ``test_a()`` called after). Each cell states
plain Python's verdict for the split shape and for the generic one, and
:func:`test_the_stated_verdicts_are_plain_pythons` checks those statements against plain Python.

1. A standard-library exception class crosses to the test as the test's own class only where it
   *is* the class the zygote loaded (found at its module and name): a program's own ``class
   JSONDecodeError(Exception)`` with ``__module__ = 'json.decoder'`` (or ``'_csv'``,
   ``'decimal'``, ``'statistics'``...) was taken for the standard one by its name alone, so
   ``pytest.raises(json.JSONDecodeError)`` and ``except csv.Error`` PASSED every shape where Python
   errs (the class is no ``JSONDecodeError`` of the test's), also after the program planted its
   class in ``json.decoder``.
2. A bytes object (of 2 bytes or more: Python caches the shorter ones) that a returned value holds
   twice is one object in a generic test, as a str is since pass 33: ``b = bytes(range(10));
   return [b, b]`` then ``r[0] is not r[1]`` PASSED every shape.
3. A builtin function of ``math``, ``cmath`` or ``operator`` that the program returns, as the
   zygote loaded it, is the test's own (``f() is not math.sqrt`` PASSED every shape, ``f() is
   math.sqrt`` failed), as ``len`` is since pass 33: such a function computes from its arguments
   through their dunders, so the test's copy given a program object asks that object.
4. The ``random`` generator is one interpreter's: a call that seeds or draws from it moves the test's
   too, also where the test had not drawn or seeded before the call (``f()`` calling
   ``random.seed(0)``, then the test's ``x = random.random(); random.seed(0); assert x !=
   random.random()`` PASSED every shape: the program's process followed the generator for the
   test only once the test had moved it).
5. An exception the program returns (not raises) is, in the test, an exception of the test's own
   class for it, as a raised one is (the builtin class, the standard one, or the stand-in for the
   program's class), with its args, attributes, text and chain; handed back to the program it is
   the program's object again. It was a bare reference: ``return [ValueError('x')]`` then
   ``isinstance(r[0], ValueError)`` failed and ``not isinstance(...)`` PASSED every shape; ``raise
   f()`` was an error.
6. A program's exception class that defines ``args`` itself (a property) answers ``e.args`` with it
   in the test, as in Python, while ``str(e)`` still shows the arguments given: the test read the
   arguments given, so ``except ValueError as e: assert e.args == ('bad',)`` PASSED every shape
   where Python fails."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()


def _forged(name: str, module: str, base: str = "Exception") -> str:
    return f"class {name}({base}):\n    __module__ = {module!r}\ndef f():\n    raise {name}('x')\n"


RAISES = "import {m}, pytest\nwith pytest.raises({m}.{n}):\n    f()"
PLANTED = ("import json, json.decoder\nclass JSONDecodeError(ValueError):\n    __module__ = 'json.decoder'\n"
           "json.decoder.JSONDecodeError = JSONDecodeError\ndef f():\n    raise JSONDecodeError('x')\n")
EXCEPTIONS = [
    ("forged_json", _forged("JSONDecodeError", "json.decoder"), "", RAISES.format(m="json", n="JSONDecodeError"),
     "error", "error"),
    ("forged_json_value_error", _forged("JSONDecodeError", "json.decoder", "ValueError"), "",
     "import json\ntry:\n    f()\nexcept json.JSONDecodeError:\n    pass\nexcept ValueError:\n    assert False",
     "fail", "fail"),
    ("forged_csv", _forged("Error", "_csv"), "", RAISES.format(m="csv", n="Error"), "error", "error"),
    ("forged_decimal", _forged("InvalidOperation", "decimal"), "", RAISES.format(m="decimal", n="InvalidOperation"),
     "error", "error"),
    ("forged_statistics", _forged("StatisticsError", "statistics", "ValueError"), "",
     RAISES.format(m="statistics", n="StatisticsError"), "error", "error"),
    ("forged_subprocess", _forged("CalledProcessError", "subprocess"), "",
     RAISES.format(m="subprocess", n="CalledProcessError"), "error", "error"),
    ("planted_json", PLANTED, "", RAISES.format(m="json", n="JSONDecodeError"), "error", "error"),
    ("real_json", "import json\ndef f():\n    return json.loads('{')\n", "",
     RAISES.format(m="json", n="JSONDecodeError"), "pass", "pass"),
    ("real_csv", "import csv\ndef f():\n    raise csv.Error('x')\n", "", RAISES.format(m="csv", n="Error"),
     "pass", "pass"),
    ("real_decimal", "import decimal\ndef f():\n    return decimal.Decimal('x')\n", "",
     RAISES.format(m="decimal", n="InvalidOperation"), "pass", "pass"),
    ("real_toml", "import tomllib\ndef f():\n    return tomllib.loads('a = ')\n", "",
     RAISES.format(m="tomllib", n="TOMLDecodeError"), "pass", "pass"),
    ("real_expat", "import xml.etree.ElementTree as ET\ndef f():\n    return ET.fromstring('<a>')\n", "",
     "import xml.etree.ElementTree as ET, pytest\nwith pytest.raises(ET.ParseError):\n    f()", "pass", "pass"),
    ("real_statistics", "import statistics\ndef f():\n    return statistics.mean([])\n", "",
     RAISES.format(m="statistics", n="StatisticsError") + "\ntry:\n    f()\nexcept statistics.StatisticsError as e:\n"
     "    assert type(e) is statistics.StatisticsError and 'at least one' in str(e)", "pass", "pass"),
]

BY = ("def f():\n    b = bytes(range(10))\n    c = b'xy' * 4\n"
      "    return [b, b, {'k': (c, [c])}, bytes(range(10)), bytes([7]), bytes([7])]\n")
BYTES = [
    ("bytes_same", BY, "", "r = f()\nassert r[0] is r[1] and r[0] == bytes(range(10))", "pass", "pass"),
    ("bytes_same_not", BY, "", "r = f()\nassert r[0] is not r[1]", "fail", "fail"),
    ("bytes_nested", BY, "", "r = f()\nc = r[2]['k']\nassert c[0] is c[1][0] and c[0] == b'xyxyxyxy'", "pass", "pass"),
    ("bytes_other", BY, "", "r = f()\nassert r[3] is not r[0] and r[3] == r[0]", "pass", "pass"),
    ("bytes_short", BY, "", "r = f()\nassert r[4] is r[5] and r[4] == b'\\x07'", "pass", "pass"),
]

SQ = "import math\ndef f():\n    return math.sqrt\n"
OP = "import operator\ndef f():\n    return {'+': operator.add, '*': operator.mul}\n"
VA = ("import math, operator\nclass V:\n    def __init__(self, x):\n        self.x = x\n"
      "    def __add__(self, o):\n        return V(self.x + o.x)\n    def __float__(self):\n        return 16.0\n"
      "def f():\n    return [math.sqrt, operator.add]\ndef g():\n    return V(2)\n")
FUNCTIONS = [
    ("sqrt_is", SQ, "", "import math\nassert f() is math.sqrt and f()(4) == 2.0", "pass", "pass"),
    ("sqrt_is_not", SQ, "", "import math\nassert f() is not math.sqrt", "fail", "fail"),
    ("sqrt_programs_name", SQ, "", "assert f() is math.sqrt and f()(9) == 3.0", "pass", "pass"),
    ("operators_eq", OP, "",
     "import operator\nassert f() == {'+': operator.add, '*': operator.mul} and f()['*'](3, 4) == 12", "pass", "pass"),
    ("operators_ne", OP, "", "import operator\nassert f() != {'+': operator.add, '*': operator.mul}", "fail", "fail"),
    ("cmath_is_not", "import cmath\ndef f():\n    return cmath.phase\n", "",
     "import cmath\nassert f() is not cmath.phase", "fail", "fail"),
    ("given_program_objects", VA, "", "s, a = f()\nassert s(g()) == 4.0 and a(g(), g()).x == 4", "pass", "pass"),
]

RS = "import random\ndef f():\n    random.seed(0)\n    return 1\n"
RD = "import random\ndef f():\n    random.seed(9)\n    return [random.random() for _ in range(3)]\n"
DRAWN = ("import random\nxs = f()\nrandom.seed(9)\nys = [random.random() for _ in range(4)]\n"
         "assert xs == ys[:3]\nrandom.seed(9)\nf()\nassert random.random() == ys[3]")
FIRST = ("import random\nrandom.seed(3)\na = f()\nb = random.random()\nrandom.seed(3)\n"
         "assert [a, b] == [random.random(), random.random()]")
SEEDED = "import random\nf()\nx = random.random()\nrandom.seed(0)\nassert x {} random.random()"
RANDOM = [
    ("seeded_in_call", RS, "", SEEDED.format("=="), "pass", "pass"),
    ("seeded_in_call_not", RS, "", SEEDED.format("!="), "fail", "fail"),
    ("drawn_in_call", RD, "", DRAWN, "pass", "pass"),
    ("test_seeds_first", "import random\ndef f():\n    return random.random()\n", "", FIRST, "pass", "pass"),
]

EC = "class E(ValueError):\n    def __init__(self, m, code=0):\n        super().__init__(m)\n        self.code = code\n"
ERRS = ("def validate(xs):\n    return [ValueError(f'bad {x}') for x in xs if x < 0]\n"
        "def f():\n    return validate([1, -2, -3])\n")
JE = ("import json\ndef f():\n    try:\n        json.loads('{')\n"
      "    except json.JSONDecodeError as e:\n        return e\n")
CAUSE = ("def f():\n    try:\n        raise KeyError('a')\n    except KeyError as k:\n        e = ValueError('b')\n"
         "        e.__cause__ = k\n        return e\n")
EXCEPTION_VALUES = [
    ("in_list", "def f():\n    return [ValueError('x')]\n", "",
     "r = f()\nassert type(r[0]) is ValueError and r[0].args == ('x',) and isinstance(r[0], Exception)",
     "pass", "pass"),
    ("in_list_not", "def f():\n    return [ValueError('x')]\n", "", "r = f()\nassert not isinstance(r[0], ValueError)",
     "fail", "fail"),
    ("alone", "def f():\n    return KeyError('k')\n", "",
     "e = f()\nassert isinstance(e, KeyError) and str(e) == \"'k'\"", "pass", "pass"),
    ("raised_by_the_test", "def f():\n    return KeyError('k')\n", "",
     "import pytest\nwith pytest.raises(KeyError):\n    raise f()", "pass", "pass"),
    ("own_class", EC + "def f():\n    return E('bad', 3)\n", "",
     "e = f()\nassert isinstance(e, E) and isinstance(e, ValueError) and e.code == 3 and str(e) == 'bad'",
     "pass", "pass"),
    ("own_class_not", EC + "def f():\n    return E('bad', 3)\n", "", "e = f()\nassert not isinstance(e, ValueError)",
     "fail", "fail"),
    ("handed_back", "ERR = ValueError('x')\ndef f():\n    return ERR\ndef g(e):\n    return e is ERR\n", "",
     "assert g(f()) and f() is f()", "pass", "pass"),
    ("standard_class", JE, "", "import json\ne = f()\nassert isinstance(e, json.JSONDecodeError) and e.pos == 1",
     "pass", "pass"),
    ("errors_list", ERRS, "",
     "errs = f()\nassert len(errs) == 2 and all(isinstance(e, ValueError) for e in errs) and str(errs[1]) == 'bad -3'",
     "pass", "pass"),
    ("cause", CAUSE, "", "e = f()\nassert isinstance(e.__cause__, KeyError)", "pass", "pass"),
]

AP = "class E(ValueError):\n    @property\n    def args(self):\n        return ('other',)\n"
OWN_ARGS = [
    ("own_args_raised", AP + "def f():\n    raise E('bad')\n", "",
     "try:\n    f()\nexcept ValueError as e:\n    assert e.args == ('bad',)", "fail", "fail"),
    ("own_args_raised_read", AP + "def f():\n    raise E('bad')\n", "",
     "try:\n    f()\nexcept ValueError as e:\n    assert e.args == ('other',) and str(e) == 'bad'", "pass", "pass"),
    ("own_args_returned", AP + "def f():\n    return E('bad')\n", "",
     "e = f()\nassert e.args == ('other',) and str(e) == 'bad' and repr(e) == \"E('bad')\"", "pass", "pass"),
]

ALL = EXCEPTIONS + BYTES + FUNCTIONS + RANDOM + EXCEPTION_VALUES + OWN_ARGS


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):  # (the same verdict as the pure program's)
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(EXCEPTIONS), ids=setup_cell_ids(EXCEPTIONS))
def test_a_standard_exception_class_is_the_tests_only_where_it_is_the_standard_one(ex, name, code, setup, test, shape,
                                                                                   want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(BYTES), ids=setup_cell_ids(BYTES))
def test_bytes_met_twice_is_one_object(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(FUNCTIONS), ids=setup_cell_ids(FUNCTIONS))
def test_a_math_or_operator_function_returned_is_the_tests_own(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(RANDOM), ids=setup_cell_ids(RANDOM))
def test_a_call_moving_the_generator_moves_the_tests(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(EXCEPTION_VALUES),
                         ids=setup_cell_ids(EXCEPTION_VALUES))
def test_an_exception_returned_is_the_tests_exception(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(OWN_ARGS), ids=setup_cell_ids(OWN_ARGS))
def test_an_exception_class_defining_args_answers_e_args(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail
