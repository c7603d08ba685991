"""A module where only some functions write outside the working directory (mixedlog.py's
`save_system`: open('/etc/' + name, 'w')): those calls get no test (what they do is the
machine's: root writes /etc, anyone else gets PermissionError), and that was said nowhere: the
suite of the other functions was written and save_system was silently missing from it. A
warning now names it, on stderr and in the report, as the all-writers case's error does
(tests/test_gentests28_outside.py)."""

import json
import shutil
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "gentests29"


def test_a_function_left_out_for_writing_outside_is_named_in_one_warning(tmp_path, capsys):
    from coevo.cli import main

    shutil.copy2(FIX / "mixedlog.py", tmp_path / "mixedlog.py")
    rc = main(["gen-tests", str(tmp_path / "mixedlog.py"), "--out", str(tmp_path / "out"),
               "--time-budget", "15", "--quiet", "--report", str(tmp_path / "report.json")])
    err = capsys.readouterr().err
    assert rc == 0, err
    suite = (tmp_path / "out" / "test_mixedlog.py").read_text()
    assert "word_count(" in suite and "shout(" in suite
    assert "save_system(" not in suite
    lines = [ln for ln in err.splitlines() if "save_system" in ln]
    assert len(lines) == 1, err
    assert "outside the working directory" in lines[0] and "/etc" in lines[0], lines
    assert "word_count" not in lines[0] and "shout" not in lines[0], lines
    report = json.loads((tmp_path / "report.json").read_text())
    warnings = report["modules"][0].get("warnings", [])
    assert any("save_system" in w for w in warnings), report["modules"][0]
