"""gen-tests' shortening of the chosen calls (arguments that change nothing left out) does not
depend on how much of its share of --time-budget is left when it starts: under load (load average
5-9) the phases before it end late, and `Delta(dt1=31, dt2=2, years=29, days=97, leapdays=3,
month=42)` was written with its 6 keyword arguments where 2 do the same
(test_gen_tests_realmodules2.py::test_arguments_that_change_nothing_are_left_out_of_the_written_calls)."""

import ast
import shutil
from pathlib import Path

from coevo.testgen import module_suite

FIX = Path(__file__).parent / "fixtures" / "gentests"


def test_calls_are_shortened_even_when_the_shortening_share_is_spent(tmp_path, monkeypatch):
    from coevo.cli import main

    # the shortening phase's share ends where it starts (as after a mutants phase that overran
    # under load): its first round still runs to its end
    monkeypatch.setattr(module_suite, "SHORTEN", 0.0)
    shutil.copy2(FIX / "deltas.py", tmp_path / "deltas.py")
    assert main(["gen-tests", str(tmp_path / "deltas.py"), "--out", str(tmp_path / "out"),
                 "--time-budget", "40", "--max-mutants", "80", "--quiet"]) == 0
    tree = ast.parse((tmp_path / "out" / "test_deltas.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") in ("Delta", "span")]
    assert len(calls) >= 4
    for call in calls:
        kw = {k.arg for k in call.keywords}
        assert "label" not in kw and "unit" not in kw, ast.unparse(call)  # span never reads them
        given = {k.arg for k in call.keywords if not (isinstance(k.value, ast.Constant) and k.value.value is None)}
        if call.func.id == "Delta" and {"dt1", "dt2"} <= given:  # the rest is ignored then
            assert len(call.args) + len(kw) == 2, ast.unparse(call)
        # (dt2=None is no dt2: Delta(dt1=-21, dt2=None, months=-3812, ...) keeps dt1, the one
        # argument that kills `dt1 is not None and dt2 is not None` -> `or`)
