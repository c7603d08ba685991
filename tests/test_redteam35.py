"""Red-team pass 35: false fails of right programs (plain Python passes, the sandbox failed), each
with hostile twins that must keep plain Python's verdict. Each cell states plain Python's
verdict for the split shape and for the generic one, and
:func:`test_the_stated_verdicts_are_plain_pythons` checks those statements against plain Python
(``exec(program); exec(setup); exec(test)`` in one module, as tests/test_redteam34.py does).

1. A ``uuid.UUID`` the program returns equals what its value equals: ``f() == uuid.UUID(int=5)``
   and ``f() in {uuid.UUID(int=5)}`` FAILED every shape (the test saw a reference it could not
   compare). Where the test runs remote it stays the program's object, flagged plain (review 34,
   M1: sent as a value, a UUID whose slot the program rewrote after returning it kept its old
   value), so ``type(f()) is uuid.UUID`` and ``f().is_safe is uuid.SafeUUID.safe`` are still
   False (left); in the parent it is a value. Only an object whose class is the
   ``uuid.UUID`` the sandbox loaded before the program ran, holding an int of 128 bits and a
   ``SafeUUID`` member, is such a value: a program's subclass (a lying ``__eq__``), its own class
   named ``UUID`` with ``__module__ = 'uuid'``, and a UUID whose slots the program set to
   something else stay the program's objects (a subclass's always-true ``==`` keeps the
   always-equal rule of tests/test_always_equal29.py: not a row here).
2. An ``array.array`` the program returns equals what its items as they are now equal, as a list
   subclass's object does: ``f() == array.array('i', [1, 2, 3])`` FAILED every shape. It stays the
   program's object (a test that appends to it changes the program's), so ``type(f()) is
   array.array`` is still False (left); a program's subclass of ``array.array`` is not such a value.
3. A standard exception class is the test's standard one only where the zygote's snapshot of its
   module holds it (none for a module loaded later, whose dict is the program's to change; the
   zygote now preloads csv, pickle, queue, tomllib...): a program that imports csv and then plants
   its own ``class Error(Exception)`` with ``__module__ = '_csv'`` at ``_csv.Error`` PASSED
   ``pytest.raises(csv.Error)`` every shape (review 34, H2)."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, plain_verdict_with_setup, run_cell, setup_cell_ids, setup_cells

pytestmark = FORK_ONLY

ex = executor_fixture()

U5 = "import uuid\ndef f():\n    return uuid.UUID(int=5)\n"
LYING = ("import uuid\nclass U(uuid.UUID):\n    def __eq__(self, other):\n        return True\n"
         "    __hash__ = uuid.UUID.__hash__\ndef f():\n    return U(int=1)\n")
NAMED = ("import uuid\nclass UUID:\n    __module__ = 'uuid'\n    __qualname__ = 'UUID'\n    int = 5\n"
         "    def __eq__(self, other):\n        return True\n"
         "    __hash__ = object.__hash__\ndef f():\n    return UUID()\n")
SET_SLOT = ("import uuid\ndef f():\n    u = uuid.UUID(int=5)\n    object.__setattr__(u, 'int', {v})\n    return u\n")
MUTATED = ("import uuid\n_u = uuid.UUID(int=5)\ndef f():\n    return _u\n"
           "def mutate():\n    object.__setattr__(_u, 'int', 7)\n")
UUIDS = [
    ("uuid_eq", U5, "", "import uuid\nassert f() == uuid.UUID(int=5)", "pass", "pass"),
    ("uuid_eq_wrong", "import uuid\ndef f():\n    return uuid.UUID(int=6)\n", "",
     "import uuid\nassert f() == uuid.UUID(int=5)", "fail", "fail"),
    ("uuid_in_set", U5, "", "import uuid\nassert f() in {uuid.UUID(int=5)} and hash(f()) == hash(uuid.UUID(int=5))",
     "pass", "pass"),
    ("uuid_text", U5, "", "import uuid\nassert str(f()) == '00000000-0000-0000-0000-000000000005' and f().int == 5\n"
     "assert repr(f()) == \"UUID('00000000-0000-0000-0000-000000000005')\" and f().version is None", "pass", "pass"),
    ("uuid_list_sorted", "import uuid\ndef f():\n    return sorted([uuid.UUID(int=3), uuid.UUID(int=1)])\n", "",
     "import uuid\nassert f() == [uuid.UUID(int=1), uuid.UUID(int=3)]", "pass", "pass"),
    ("uuid_parsed", "import uuid\ndef f(s):\n    return uuid.UUID(s)\n", "",
     "import uuid\nu = f('12345678-1234-5678-1234-567812345678')\n"
     "assert u == uuid.UUID('12345678123456781234567812345678')\n"
     "assert u.hex == '12345678123456781234567812345678'", "pass", "pass"),
    ("uuid_unknown_safe", U5, "", "import uuid\nassert f().is_safe is uuid.SafeUUID.safe", "fail", "fail"),
    ("uuid_twice_one_object", "import uuid\ndef f():\n    u = uuid.UUID(int=5)\n    return [u, u]\n", "",
     "r = f()\nassert r[0] is r[1]", "pass", "pass"),
    ("uuid_twice_two_objects", "import uuid\ndef f():\n    return [uuid.UUID(int=5), uuid.UUID(int=5)]\n", "",
     "r = f()\nassert r[0] is not r[1] and r[0] == r[1]", "pass", "pass"),
    ("uuid_given_back", "import uuid\ndef f():\n    return uuid.UUID(int=5)\ndef g(u):\n    return u.int + 1\n", "",
     "assert g(f()) == 6", "pass", "pass"),
    ("uuid_given_to_program", "import uuid\ndef g(u):\n    return type(u) is uuid.UUID and u.int\n", "",
     "import uuid\nassert g(uuid.UUID(int=5)) == 5", "pass", "pass"),
    ("uuid_slot_set_int", SET_SLOT.format(v="7"), "", "import uuid\nassert f() == uuid.UUID(int=7) and f().int == 7",
     "pass", "pass"),
    # (review 34, M1: the program rewrites its UUID's slot after returning it)
    ("uuid_mutated_after", MUTATED, "", "u = f()\nmutate()\nassert u.int == 5", "fail", "fail"),
    ("uuid_mutated_after_eq", MUTATED, "", "import uuid\nu = f()\nmutate()\nassert u == uuid.UUID(int=5)",
     "fail", "fail"),
    ("uuid_mutated_after_new", MUTATED, "", "import uuid\nu = f()\nmutate()\nassert u == uuid.UUID(int=7)",
     "pass", "pass"),
    # hostile twins: the program's objects, answering as in Python
    ("lying_subclass_type", LYING, "", "import uuid\nassert type(f()) is uuid.UUID", "fail", "fail"),
    ("lying_subclass_int", LYING, "", "assert f().int == 5", "fail", "fail"),
    ("named_uuid_type", NAMED, "", "import uuid\nassert type(f()) is uuid.UUID", "fail", "fail"),
    ("named_uuid_isinstance", NAMED, "", "import uuid\nassert isinstance(f(), uuid.UUID)", "fail", "fail"),
    ("named_uuid_not_isinstance", NAMED, "", "import uuid\nassert not isinstance(f(), uuid.UUID)", "pass", "pass"),
    ("slot_set_str", SET_SLOT.format(v="'x'"), "", "assert f().int == 'x'", "pass", "pass"),
    ("slot_set_huge", SET_SLOT.format(v="1 << 200"), "", "assert f().int == 1 << 200", "pass", "pass"),
]

A123 = "import array\ndef f():\n    return array.array('i', [1, 2, 3])\n"
STATE = ("import array\nSTATE = array.array('i', [1, 2, 3])\ndef f():\n    return STATE\n"
         "def n():\n    return len(STATE)\n")
SUB = ("import array\nclass A(array.array):\n    def tolist(self):\n        return [1, 2, 3]\n"
       "def f():\n    return A('i', [7])\n")
ARRAYS = [
    ("array_eq", A123, "", "import array\nassert f() == array.array('i', [1, 2, 3])", "pass", "pass"),
    ("array_eq_other_code", A123, "", "import array\nassert f() == array.array('l', [1, 2, 3])", "pass", "pass"),
    ("array_eq_wrong", A123, "", "import array\nassert f() == array.array('i', [1, 2, 4])", "fail", "fail"),
    ("array_ne", A123, "", "import array\nassert f() != array.array('i', [1, 2, 3])", "fail", "fail"),
    ("array_ne_wrong", A123, "", "import array\nassert f() != array.array('i', [1, 2, 4])", "pass", "pass"),
    ("array_floats", "import array\ndef f():\n    return [array.array('d', [1.5, float('inf')])]\n", "",
     "import array\nassert f() == [array.array('d', [1.5, float('inf')])]", "pass", "pass"),
    ("array_tolist", A123, "", "assert f().tolist() == [1, 2, 3] and len(f()) == 3 and f()[1] == 2", "pass", "pass"),
    ("array_state", STATE, "", "a = f()\na.append(4)\nassert n() == 4 and a == f()", "pass", "pass"),
    ("array_given_back", STATE, "", "assert f() is f()", "pass", "pass"),
    ("array_subclass_tolist", SUB, "", "import array\nassert f() == array.array('i', [1, 2, 3])", "fail", "fail"),
]



def _planted(imports: str, module: str, name: str) -> str:
    return (f"import {imports}\nclass {name}(Exception):\n    __module__ = {module!r}\n{module}.{name} = {name}\n"
            f"def f():\n    raise {name}('x')\n")


PLANTED = [
    ("planted_csv", _planted("csv, _csv", "_csv", "Error"), "",
     "import csv, pytest\nwith pytest.raises(csv.Error):\n    f()", "error", "error"),
    ("planted_pickle", _planted("pickle, _pickle", "_pickle", "UnpicklingError"), "",
     "import pickle, pytest\nwith pytest.raises(pickle.UnpicklingError):\n    f()", "error", "error"),
    ("planted_queue", _planted("queue, _queue", "_queue", "Empty"), "",
     "import queue, pytest\nwith pytest.raises(queue.Empty):\n    f()", "error", "error"),
    ("real_pickle", "import pickle\ndef f():\n    return pickle.loads(b'x')\n", "",
     "import pickle, pytest\nwith pytest.raises(pickle.UnpicklingError):\n    f()", "pass", "pass"),
    ("real_queue", "import queue\ndef f():\n    return queue.Queue().get_nowait()\n", "",
     "import queue, pytest\nwith pytest.raises(queue.Empty):\n    f()", "pass", "pass"),
]

ALL = UUIDS + ARRAYS + PLANTED


def test_the_stated_verdicts_are_plain_pythons():
    for name, code, setup, test, shape, want in setup_cells(ALL):
        if code.startswith("import os"):  # (the same verdict as the pure program's)
            continue
        assert plain_verdict_with_setup(code, setup, test, shape) == want, (name, shape)


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(UUIDS), ids=setup_cell_ids(UUIDS))
def test_a_uuid_returned_is_a_value(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(ARRAYS), ids=setup_cell_ids(ARRAYS))
def test_an_array_returned_equals_its_items(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail


@pytest.mark.parametrize("name,code,setup,test,shape,want", setup_cells(PLANTED), ids=setup_cell_ids(PLANTED))
def test_a_class_planted_in_a_module_loaded_later_is_no_standard_class(ex, name, code, setup, test, shape, want):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == want, detail
