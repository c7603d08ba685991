"""Shared by the gen-tests type tests: the parameter specs gen-tests draws for a fixture module
(analysed from a copy, as a user's module would be)."""

import ast
import tempfile
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_module(folder: str, name: str, copy_name: str | None = None):
    """tests/fixtures/FOLDER/NAME.py analysed from a copy (named COPY_NAME, default NAME_copy.py)
    and its input generator (seed 0)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / (copy_name or f"{name}_copy.py")
        path.write_text((FIXTURES / folder / f"{name}.py").read_text())
        module = analyze(path)
    return module, InputGenerator(module, seed=0)


def fixture_specs(folder: str, name: str) -> dict[str, dict[str, str]]:
    """``{qualname: {parameter: spec}}`` of tests/fixtures/FOLDER/NAME.py."""
    module, gen = fixture_module(folder, name)
    return {u.qualname: {p.name: str(s) for p, s in gen.specs(u)} for u in module.units}


def drawn_pool(path, qualname: str, param: str) -> list:
    """The values gen-tests draws for parameter PARAM of unit QUALNAME of the module at PATH
    (analysed in place), as Python values."""
    module = analyze(path)
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == qualname)
    q, spec = next((q, s) for q, s in gen.specs(unit) if q.name == param)
    return [ast.literal_eval(x) for x in gen._pool_for(q, spec, gen._consts(unit), 0, unit)]
