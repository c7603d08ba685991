"""gen-tests on a module whose parameters take a class the module imports from its own project
(``from .money import Money`` / ``price: Money``): the arguments are built from that class. Before,
only the module's own classes built arguments, and ``Cart.add(sku, qty, price)`` got ``Cart()``
as its price (the one class of the module with a ``currency`` attribute): every written ``add``
raised AttributeError, asserted as the code's behaviour."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from coevo.cli import main
from coevo.testgen.inputs import project_classes
from coevo.testgen.target import ModuleInfo

SHOP = Path(__file__).parent / "fixtures" / "gentests_lead" / "shop"


def _module(root: Path, rel: str, name: str, source: str) -> ModuleInfo:
    return ModuleInfo(path=root / rel, name=name, root=root, source=source, tree=ast.parse(source),
                      functions=[], classes=[])


def test_classes_imported_from_the_project_are_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("class Inner:\n    pass\n")
    (pkg / "money.py").write_text("class Money:\n    def __init__(self, cents):\n        self.cents = cents\n"
                                  "def helper():\n    pass\n")
    src = ("from .money import Money\nfrom .money import helper\nfrom pkg.money import Money as M\n"
           "from .sub import Inner\nfrom collections import OrderedDict\nfrom .missing import Gone\n"
           "from . import money\n")
    found = project_classes(_module(tmp_path, "pkg/cart.py", "pkg.cart", src))
    assert set(found) == {"Money", "M", "Inner"}
    assert found["M"].name == "Money" and found["Inner"].name == "Inner"
    # from the package's own __init__: `.` is the package itself
    found = project_classes(_module(tmp_path, "pkg/__init__.py", "pkg", "from .money import Money\n"))
    assert set(found) == {"Money"}
    # past the top of the project: nothing
    assert project_classes(_module(tmp_path, "pkg/cart.py", "pkg.cart", "from ...x import Y\n")) == {}


def test_a_parameter_of_an_imported_class_gets_that_class(tmp_path):
    shutil.copytree(SHOP, tmp_path / "shop")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "shop" / "cart.py"), "--out", str(out), "--time-budget", "8",
                 "--quiet"]) == 0
    suite = (out / "test_shop_cart.py").read_text()
    calls = [n for n in ast.walk(ast.parse(suite)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "add"]
    assert calls, suite
    prices = [ast.unparse(c.args[2]) for c in calls if len(c.args) == 3]
    assert prices and all(p.startswith("Money(") for p in prices), prices
    assert "has no attribute" not in suite
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:]
