"""Red-team pass 26: a value whose parts are one object crossed as independent copies, so a wrong
program passed tests that mutate its result (split and generic, pure and impure). Each test here
FAILS in plain Python (``exec(setup + program); exec(test)`` in a fresh interpreter) and must fail
in the sandbox too.

* Aliasing inside a returned value (trust25's open forgery): ``[[0] * n] * n`` (every row one
  list) passed ``g = f(3); g[0][0] = 1; assert g == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]`` and
  ``assert g[0] is not g[1]``: the wire sent each row as its own copy. Also a tuple of one list
  twice, a list of one set twice, two levels of sharing.
* A value the program changes after returning it (a mutable default argument): ``a = f(1); b =
  f(2); assert a == [1]`` with ``def f(x, acc=[])`` passed as a split test: the first call's value
  was sent as it was when it returned, not as it is when the test reads it. The harness now
  encodes each earlier hole's container again after the last hole and, where one changed, the
  cell runs again as a generic test.
* The same for the task's setup data: with setup ``data = [3, 1, 2]``, ``def f(xs): xs.sort();
  return xs`` passed ``assert f(data) == [1, 2, 3]`` then ``assert data == [3, 1, 2]`` as a split
  test: a hole reading only the setup is computed before any hole calls the program (red-team pass
  20), so it read the list as it was before the program sorted it."""

from __future__ import annotations

import pytest
from sandbox_cells import FORK_ONLY, executor_fixture, run_cell

pytestmark = FORK_ONLY

IMPURE = "import os\n"

ex = executor_fixture()

ROWS = "def f(n):\n    return [[0] * n] * n\n"
ACC = "def f(x, acc=[]):\n    acc.append(x)\n    return acc\n"

# (name, program, test)
WRONG = [
    ("rows_mutated", ROWS, "g = f(3)\ng[0][0] = 1\nassert g == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]"),
    ("rows_other_row", ROWS, "g = f(3)\ng[0][0] = 1\nassert g[1][0] == 0"),
    ("rows_identity", ROWS, "g = f(2)\nassert g[0] is not g[1]"),
    ("tuple_of_one_list", "def f(n):\n    r = [0] * n\n    return (r, r)\n",
     "t = f(2)\nt[0][0] = 1\nassert t[1] == [0, 0]"),
    ("list_of_one_set", "def f():\n    s = {1}\n    return [s, s]\n", "x = f()\nx[0].add(2)\nassert x[1] == {1}"),
    ("dict_of_one_list", "def f():\n    x = []\n    return {'a': x, 'b': x}\n",
     "d = f()\nd['a'].append(1)\nassert d['b'] == []"),
    ("two_levels", "def f():\n    a = [0]\n    b = [a, a]\n    return [b, b]\n",
     "x = f()\nx[0][0][0] = 1\nassert x[1][1] == [0]"),
    ("default_argument_later_call", ACC, "a = f(1)\nb = f(2)\nassert a == [1]"),
    ("default_argument_both_holes", ACC, "a = f(1)\nb = f(2)\nassert a == [1] and b == [1, 2]"),
]

CELLS = [(name, prefix + code, test, shape) for name, code, test in WRONG for prefix in ("", IMPURE)
         for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,test,shape", CELLS, ids=[f"{c[0]}-{i}-{c[3]}" for i, c in enumerate(CELLS)])
def test_a_shared_part_of_a_value_is_one_object(ex, name, code, test, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == "fail", detail


SORT = "def f(xs):\n    xs.sort()\n    return xs\n"
SETUP_CELLS = [(name, prefix + SORT, "data = [3, 1, 2]\n", test, shape)
               for name, test in [("setup_data_sorted_after", "assert f(data) == [1, 2, 3]\nassert data == [3, 1, 2]"),
                                  ("setup_data_one_assert", "assert f(data) == [1, 2, 3] and data == [3, 1, 2]")]
               for prefix in ("", IMPURE) for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,setup,test,shape", SETUP_CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(SETUP_CELLS)])
def test_the_setups_data_the_program_changed_is_read_as_changed(ex, name, code, setup, test, shape):
    status, detail = run_cell(ex, code, setup, test, shape)
    assert status == "fail", detail


# -- the wire form itself (no sandbox)

def test_a_shared_row_decodes_to_one_object_and_still_equals_distinct_rows():
    from matrix import plain
    from matrix.sandbox.encoding import dumps, make_encoder

    enc = make_encoder()
    row = [0, 0]
    g = plain.decode(dumps(enc([row, row])))
    assert g == [[0, 0], [0, 0]] and g[0] is g[1]
    assert dumps(enc([[0, 0], [0, 0]])) == b"[[0,0],[0,0]]"  # (no sharing: the form as before)
    x = {1}
    d = plain.decode(dumps(enc({"a": (x, [x]), "b": x})))
    assert d["a"][0] is d["a"][1][0] is d["b"]


def test_a_small_text_holding_a_huge_shared_value_is_too_costly():
    from matrix import plain
    from matrix.sandbox.encoding import dumps, make_encoder

    v: list = [0]
    for _ in range(60):  # (2**60 items when walked; the text is ~60 references long)
        v = [v, v]
    with pytest.raises(plain.TooCostly):
        plain.decode(dumps(make_encoder()(v)))


def test_a_cells_claim_cannot_reach_another_cells_shared_value():
    from matrix.sandbox.records import CellRecord, Frame, Outcome
    from matrix.verdicts import decode_claims

    kind = bytes([int(Frame.VALUES)])
    first = CellRecord(0, Outcome.CLAIM, 0, 0.0, kind + b'[[{"S":[0,[1]]}],[]]')
    second = CellRecord(1, Outcome.CLAIM, 0, 0.0, kind + b'[[{"A":0}],[]]')
    out = decode_claims([first, second])
    assert out[0] == [[[1]], []]
    assert isinstance(out[1], ValueError)
    plain_one = CellRecord(2, Outcome.CLAIM, 0, 0.0, kind + b'[[[2]],[]]')
    shared = CellRecord(3, Outcome.CLAIM, 0, 0.0, kind + b'[[[{"S":[0,[1]]},{"A":0}]],[]]')
    out = decode_claims([plain_one, shared, plain_one])
    assert out[0] == out[2] == [[[2]], []] and out[1] == [[[[1], [1]]], []]
    assert out[1][0][0][0] is out[1][0][0][1]


# (a later call raising after the claim: the claim reads the changed value as plain Python does; plain
# gives ``fail`` for the first test and ``error`` for the second, a split test gave the other way round)
RAISING = "def f(x, acc=[]):\n    if x == 3:\n        raise ValueError(x)\n    acc.append(x)\n    return acc\n"
RAISE_CELLS = [(name, prefix + RAISING, test, want, shape)
               for name, test, want in [("claim_then_raise_wrong", "a = f(1)\nb = f(2)\nassert a == [1]\nf(3)", "fail"),
                                        ("claim_then_raise_right", "a = f(1)\nb = f(2)\nassert a == [1, 2]\nf(3)",
                                         "error")]
               for prefix in ("", IMPURE) for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,test,want,shape", RAISE_CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(RAISE_CELLS)])
def test_a_claim_before_a_raise_reads_the_changed_value(ex, name, code, test, want, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == want, detail


# (the same before a hang: plain Python times out on the first test, fails the second; a pure program's
# runner sends the values before the hang, which a split test read as they were returned)
HANGING = "def f(x, acc=[]):\n    while x == 3:\n        pass\n    acc.append(x)\n    return acc\n"
HANG_CELLS = [(name, HANGING, test, want, shape)
              for name, test, want in [("claim_then_hang_right", "a = f(1)\nb = f(2)\nassert a == [1, 2]\nf(3)",
                                        "timeout"),
                                       ("claim_then_hang_wrong", "a = f(1)\nb = f(2)\nassert a == [1]\nf(3)", "fail")]
              for shape in ("split", "generic")]


@pytest.mark.parametrize("name,code,test,want,shape", HANG_CELLS,
                         ids=[f"{c[0]}-{i}-{c[4]}" for i, c in enumerate(HANG_CELLS)])
def test_a_claim_before_a_hang_reads_the_changed_value(ex, name, code, test, want, shape):
    status, detail = run_cell(ex, code, "", test, shape)
    assert status == want, detail
