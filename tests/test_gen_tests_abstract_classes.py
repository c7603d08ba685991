"""gen-tests on a module whose functions take its abstract class (``shapes: list[Shape]``,
``class Shape(ABC)`` with ``Circle(Shape)`` and ``Rectangle(Shape)``): the arguments are instances
of the concrete subclasses, and the methods the abstract class defines (``Shape.describe``) are
called on one. Before, every such list held ``Shape()`` (a TypeError when built), so
``total_area`` and ``largest`` were only ever called on ``[]`` and on ints, and ``describe`` never."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from coevo.cli import main
from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

SHAPES = Path(__file__).parent / "fixtures" / "gentests_lead" / "shapes.py"


def test_an_abstract_class_is_built_from_its_subclasses():
    gen = InputGenerator(analyze(SHAPES.resolve()))
    unit = next(u for u in gen.module.units if u.qualname == "total_area")
    lists = [c["shapes"] for c in gen._choices(unit)]
    assert not any("Shape(" in x for x in lists), lists
    assert any("Circle(" in x for x in lists) and any("Rectangle(" in x for x in lists), lists


def test_the_suite_calls_them_on_concrete_shapes(tmp_path):
    shutil.copy(SHAPES, tmp_path / "shapes.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "shapes.py"), "--out", str(out), "--time-budget", "8", "--quiet"]) == 0
    suite = (out / "test_shapes.py").read_text()
    calls = [ast.unparse(n) for n in ast.walk(ast.parse(suite)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in ("total_area", "largest")]
    assert any("Circle(" in c or "Rectangle(" in c for c in calls), calls
    assert ".describe()" in suite
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:]
