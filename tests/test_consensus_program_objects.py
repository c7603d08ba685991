"""Output consensus and program objects (trust33's finding, red-team pass 33): a call returning a
program object (a ``Point``) comes back as a ``NonPlain`` with no digest; its key was
``repr(NonPlain)``, ``"<non-plain Point>"``, the same for every Point, so a wrong ``move`` returning
``Point(0, 0)`` agreed with the right one returning ``Point(1, 2)`` in ``coevo select``'s consensus.
Nothing here can tell two such objects apart, so the cell is an abstention (no agreement either
way), as an error is."""

from matrix.inputs import output_key, output_keys
from matrix.sandbox.encoding import NonPlain


def test_a_program_object_is_an_abstention_not_an_agreement():
    right, wrong = NonPlain("Point", True), NonPlain("Point", True)
    keys = output_keys([[("ok", right), ("ok", 3)], [("ok", wrong), ("ok", 3)]])
    assert keys[0][0] is None and keys[1][0] is None
    assert keys[0][1] == keys[1][1] == "3"  # plain values still agree
    # inside a container too: [Point, 1] says nothing either
    assert output_key("ok", [NonPlain("Point"), 1]) is None
    assert output_key("ok", {"a": (1, NonPlain("Point"))}) is None


def test_a_large_value_dropped_for_its_size_keeps_its_digest():
    big = NonPlain("list", True, key="abc123")
    assert output_key("ok", big) == "<digest abc123>"
    assert output_key("ok", [big, 2]) == "[<digest abc123>,2]"
    assert output_key("error", 3) is None


def test_a_large_value_holding_a_program_object_has_no_digest():
    from matrix.inputs import value_key

    assert value_key([1] * 10 + [NonPlain("Point")]) is None
    assert value_key([1] * 10) == value_key([1.0] * 10)
