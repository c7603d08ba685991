"""An INI reader (inifile.py): `parse_ini(text)` keeps lines only under a `[section]` header
(`line.startswith('[') and line.endswith(']')`), and `dump_ini(sections: dict)` reads
`sec.values.items()` of Section objects. No drawn text had a header line (every key = value
line raised 'value outside a section'), and `sections` was a dict of ints (`dump_ini({'a': 5})`:
AttributeError), because `.values` read as a dict's method made `sec` a dict. Texts of a
function that splits lines now include the line shapes its body tests (a header, a comment),
an attribute read but not called counts as the object's own, and a bare `dict` whose values
are read as the module's objects holds them (mutation 0.59 -> 0.77 in one run each)."""

import ast
import importlib.util
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.specs import Spec
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"


def pool_of(name):
    module = analyze(FIX / "inifile.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == name)
    (p, spec), *_ = gen.specs(unit)
    return spec, gen._pool_for(p, spec, gen._consts(unit), 0, unit)


def test_a_text_split_into_lines_is_drawn_with_the_header_lines_the_body_tests():
    spec = importlib.util.spec_from_file_location("inifile29", FIX / "inifile.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _, pool = pool_of("parse_ini")
    parsed = []
    for src in pool:
        try:
            got = mod.parse_ini(ast.literal_eval(src))
        except (ValueError, TypeError):
            continue
        if any(sec.values for sec in got.values()):
            parsed.append(src)
    assert parsed, pool


def test_a_dict_of_the_module_objects_read_by_attribute_holds_them():
    spec, pool = pool_of("dump_ini")
    assert spec == Spec("dict", (Spec("str"), Spec("instance", ("Section",)))), spec
    assert any("Section(" in v for v in pool), pool
