"""gen-tests: parameter types on modules never tried before (session 24). CPython's getopt:
`getopt(args, shortopts)` got lists of ints for shortopts (`getopt(['--', 'ZXCS'], [-38, 1])`):
the name's plural guess won over what the function it is handed to does with it (two calls
down, `shortopts.startswith(':', i + 1)`). Fixtures in tests/fixtures/gentests25/."""

import tempfile
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests25"


def _specs(name: str) -> dict[str, dict[str, str]]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{name}_copy.py"
        path.write_text((FIX / f"{name}.py").read_text())
        module = analyze(path)
    gen = InputGenerator(module, seed=0)
    return {u.qualname: {p.name: str(s) for p, s in gen.specs(u)} for u in module.units}


def test_a_parameter_only_passed_on_takes_its_callees_type_over_its_names_guess():
    specs = _specs("opts")
    assert specs["wants_value"]["shortopts"] == "str", specs
    assert specs["take_shorts"]["shortopts"] == "str", specs  # one call down
    assert specs["parse"]["shortopts"] == "str", specs  # two calls down
    # what the body itself shows still decides: args is indexed and its items are strings
    assert specs["parse"]["args"] == "list[str]", specs
