"""Methods probed on objects that differ in the fields they read (members.py).

`Member.is_adult` is `self.age >= 18` and `discount()` reads `self.tier` and `self.age >= 65`;
the objects their calls ran on varied only in the first constructor argument (the name), so
18 -> 19, 65 -> 64 and the tier table's values survived. A method's calls now also run on objects
built with each drawn value of each constructor argument the method reads back (`self.age`), in
turn; and a dataclass's text field that `__post_init__` checks against a module table
(`self.tier not in TIERS`) draws that table's texts first, as an unhinted one does."""

import ast
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests30"


def _ctor_values(qualname, field):
    module = analyze(FIX / "members.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == qualname)
    seen = set()
    for p in gen.initial(unit):
        ctor = p.steps[0]
        kw = dict(ctor.kwargs)
        order = ["name", "email", "age", "tier", "tags"]
        for i, a in enumerate(ctor.args):
            kw.setdefault(order[i], a)
        if field in kw:
            seen.add(ast.literal_eval(kw[field]))
    return seen


def test_a_property_runs_on_objects_with_each_value_of_the_field_it_reads():
    assert {17, 18} <= _ctor_values("Member.is_adult", "age")


def test_a_method_runs_on_objects_with_each_value_of_the_fields_it_reads():
    assert {64, 65} <= _ctor_values("Member.discount", "age")
    assert {"silver", "gold"} <= _ctor_values("Member.discount", "tier")
