"""gen-tests on code taking a callable hinted with its arguments (``retry(func: Callable[[], T],
attempts=3)``): the callables given take that many arguments (``lambda: 5``, ``lambda: 1 / 0``, and
two-argument ones for ``Callable[[int, int], int]``). Before, every callable took one argument
(``lambda x: x``), so each ``retry`` call raised TypeError inside the code and the suite asserted
``missing 1 required positional argument: 'x'``, never what retry returns."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from coevo.cli import main
from coevo.testgen.specs import Spec, from_annotation

RETRY = Path(__file__).parent / "fixtures" / "gentests_lead" / "retry.py"


def _hint(src: str):
    return from_annotation(ast.parse(src, mode="eval").body)


def test_a_callables_hint_says_how_many_arguments():
    assert _hint("Callable[[], T]") == Spec("callable", (0,))
    assert _hint("Callable[[int, int], int]") == Spec("callable", (2,))
    assert _hint("Callable[[int], int]") == Spec("callable")  # (one: the pool as before)
    assert _hint("Callable[..., int]") == Spec("callable")
    assert _hint("Callable") == Spec("callable")


def test_retry_is_called_with_callables_of_no_argument(tmp_path):
    shutil.copy(RETRY, tmp_path / "retry.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "retry.py"), "--out", str(out), "--time-budget", "8", "--quiet"]) == 0
    suite = (out / "test_retry.py").read_text()
    assert "missing 1 required positional argument" not in suite
    calls = [ast.unparse(n) for n in ast.walk(ast.parse(suite)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "retry"]
    assert calls and all("lambda x" not in c for c in calls), calls
    asserts = [ast.unparse(n) for n in ast.walk(ast.parse(suite)) if isinstance(n, ast.Assert)]
    assert any(a.startswith("assert retry(") for a in asserts), asserts  # (what it returns, asserted)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:]
