"""gen-tests' verdicts on a mutant's outcome (gentests34). fontTools/misc/fixedTools.py: a mutant
returned an int past float's range where the suite asserts `pytest.approx(...)`, and gen-tests
stopped with a traceback (OverflowError: int too large to convert to float, exit 1)."""

from coevo.testgen.observe import _approx_equal


def test_an_int_past_float_s_range_is_not_approximately_a_float():
    assert _approx_equal(1.5, 10 ** 400) is False
    assert _approx_equal(10 ** 400, 1.5) is False
    assert _approx_equal([1.5, 2.0], [1.5, 10 ** 400]) is False
    assert _approx_equal({"a": 1.5}, {"a": -(10 ** 400)}) is False


def test_equal_big_ints_are_approximately_equal_as_pytest_approx_says():
    assert _approx_equal(10 ** 400, 10 ** 400) is True
    assert _approx_equal([10 ** 400, 2.0], [10 ** 400, 2.0]) is True
    assert _approx_equal(1.5, 1.5 + 1e-9) is True
