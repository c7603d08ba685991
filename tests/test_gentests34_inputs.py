"""gen-tests' input drawing (gentests34, test first)."""

from pathlib import Path

from gentests_specs import drawn_pool as _pool

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests34"



def test_a_value_whose_items_are_made_into_single_bytes_is_bytes():
    """hexits.py (as quopri's unhex(s)): `for c in s: c = bytes((c,))` makes each item, an int,
    into one byte, so s is bytes; it drew lists (of ints, or of texts: TypeError), and the
    comparisons with b'0' ... b'F' were never reached with digits."""
    for qual, param in (("unhex", "s"), ("codes", "data")):
        pool = _pool(FIX / "hexits.py", qual, param)
        assert pool and type(pool[0]) is bytes, (qual, pool[:6])
        assert sum(type(v) is bytes for v in pool[:8]) >= 4, (qual, pool[:8])


def test_an_argument_that_stands_for_the_standard_input_is_given_in_the_typical_call():
    """lexer34.py (as shlex's shlex(instream=None)): left to its default, the object reads the
    standard input, which no test has; every method test built Words() and read nothing. The
    typical call now gives such an argument (`if instream is not None: ... else: sys.stdin`,
    `stream or sys.stdin`) a drawn value."""
    module = analyze(FIX / "lexer34.py")
    gen = InputGenerator(module)
    units = {u.qualname: u for u in module.units}
    assert "instream" in gen._choices(units["Words"])[0]
    assert "stream" in gen._choices(units["first_line"])[0]
    probe = gen.initial(units["Words.next_word"])[0]
    assert probe.steps[0].args or probe.steps[0].kwargs, probe.steps[0]
