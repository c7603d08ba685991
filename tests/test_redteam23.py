"""Red-team pass 23 on the matrix's verdicts: a program must not choose what the task's setup
computes for the test. A task's setup (MBPP's ``test_setup_code``) ran in the program's process,
after the program: a program reaching the sandbox's harness through ``sys.modules`` rewired what
computes or sends the setup's values (``_G['encode']``, ``run_setup``, the builtins and standard
modules the setup reads, the result channel), so ``want`` read what the program wanted and
``assert f(3) == want`` passed a wrong ``f``. Each forgery here passed on 4369a55 (split tests,
and generic ones where the setup's values came from the program's process)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, HARNESS, executor_fixture, run_cell

pytestmark = FORK_ONLY



ex = executor_fixture()


# (name, program, setup, tests, shapes): a wrong program (f returns [9] or 9) and a setup whose
# value it makes the test read
ATTACKS = [
    # the harness's encoder, wrapped: the setup-only holes are encoded in the program's process
    ("encode", HARNESS + "_enc = H._G['encode']\n"
     "def _lie(v, *a, **k):\n    return _enc([9] if v == [1, 2, 3] else v, *a, **k)\n"
     "H._G['encode'] = _lie\ndef f(x):\n    return [9]\n",
     "want = [1, 2, 3]\n", ["assert f(3) == want", "assert f(3) == sorted(want)"], ["split"]),
    # run_setup wrapped at the program's load: the bound `want` is [9]
    ("run_setup", HARNESS + "_run = H.run_setup\n"
     "def _fake(co, ns, keep=None):\n    bound = _run(co, ns, keep)\n"
     "    if 'want' in bound:\n        bound['want'] = [9]\n    return bound\n"
     "H.run_setup = _fake\ndef f(x):\n    return [9]\n",
     "want = [1, 2, 3]\n", ["assert f(3) == want"], ["split", "generic"]),
    # the genuine builtins the setup computes with, replaced in the harness's table
    ("builtins", HARNESS + "H._G['genuine']['sorted'] = lambda *a, **k: [9]\ndef f(x):\n    return [9]\n",
     "want = sorted([3, 1, 2])\n", ["assert f(3) == want"], ["split", "generic"]),
    # a standard module the setup imports, changed together with the harness's record of it
    ("module", HARNESS + "m, d = H._G['stdlib_dicts']['math']\n_fake = lambda x: 9\n"
     "m.floor = _fake\nd['floor'] = _fake\ndef f(x):\n    return 9\n",
     "import math\nwant = math.floor(2.5)\n", ["assert f(3) == want"], ["split", "generic"]),
    # the result channel: the values frame rewritten as it is sent (hole 1 is `want`)
    ("channel", HARNESS + "_sj = H._Channel.send_json\n"
     "def _send(self, kind, obj, secs=0.0):\n"
     "    try:\n        obj[0][1] = obj[0][0]\n    except Exception:\n        pass\n"
     "    return _sj(self, kind, obj, secs)\n"
     "H._Channel.send_json = _send\ndef f(x):\n    return [9]\n",
     "want = [1, 2, 3]\n", ["assert f(3) == want"], ["split"]),
    # a setup helper: its result computed in the program's process with the program's sorted
    ("helper", HARNESS + "H._G['genuine']['sorted'] = lambda *a, **k: [9]\ndef f(x):\n    return [9]\n",
     "def norm(xs):\n    return sorted(xs)\n", ["assert f(3) == norm([3, 1, 2])"], ["split", "generic"]),
]

_RUN_SETUP = (HARNESS + "_run = H.run_setup\n"
              "def _fake(co, ns, keep=None):\n    bound = _run(co, ns, keep)\n"
              "    if 'want' in bound:\n        bound['want'] = WANT\n    return bound\n"
              "H.run_setup = _fake\ndef f(x):\n    return WANT\n")
# the same wrapping, where the setup is not pure (it reads the environment or writes a file: it
# does not run in the test's process) or binds data of a standard class (no plain data)
ATTACKS += [
    ("impure_setup", "WANT = [9]\n" + _RUN_SETUP, "import os\nwant = [1, 2, 3]\n", ["assert f(3) == want"],
     ["split", "generic"]),
    ("file_setup", "WANT = [9]\n" + _RUN_SETUP,
     "with open('w.txt', 'w') as fh:\n    fh.write('1')\nwant = [1, 2, 3]\n", ["assert f(3) == want"],
     ["split", "generic"]),
    ("counter", "import collections\nWANT = collections.Counter('z')\n" + _RUN_SETUP,
     "import collections\nwant = collections.Counter('aab')\n", ["assert f(3) == want"], ["split", "generic"]),
    ("fraction", "import fractions\nWANT = fractions.Fraction(9)\n" + _RUN_SETUP,
     "import fractions\nwant = [fractions.Fraction(1, 3)]\n", ["assert f(3) == want"], ["split"]),
]

# the values frame's body in a shape the worker's replacement of the setup's values did not read
# (68c62e5): the values as a tagged tuple
_FRAME = (HARNESS + "_sj = H._Channel.send_json\n"
          "def _send(self, kind, obj, secs=0.0):\n"
          "    if int(kind) == int(H.Frame.VALUES) and type(obj) is list and len(obj) == 2:\n"
          "        BODY\n"
          "    return _sj(self, kind, obj, secs)\n"
          "H._Channel.send_json = _send\ndef f(x):\n    return [9]\n")
ATTACKS += [
    ("tuple_body",
     _FRAME.replace("BODY", "return _sj(self, kind, [{'t': [obj[0][0], obj[0][0]]}, obj[1]], secs)"),
     "want = [1, 2, 3]\n", ["assert f(3) == want"], ["split"]),
]

# a setup that needs the program's definitions after binding its data: the data, bound before and
# never named again, is computed without the program
ATTACKS += [
    ("needs_program", "WANT = [9]\n" + _RUN_SETUP.replace("def f(x):", "class Node:\n    def __init__(self, v):\n"
                                                         "        self.v = v\ndef f(x):"),
     "want = [1, 2, 3]\nroot = Node(1)\n", ["assert f(3) == want"], ["split", "generic"]),
]

CELLS = [(name, code, setup, test, shape) for name, code, setup, tests, shapes in ATTACKS
         for test in tests for shape in shapes]


@pytest.mark.parametrize("name,code,setup,test,shape", CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(CELLS)])
def test_a_program_does_not_choose_what_the_tasks_setup_computes(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status in ("fail", "error"), detail
