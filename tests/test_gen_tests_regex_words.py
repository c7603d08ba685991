"""gen-tests on a log parser (``LINE = re.compile(r"^(?P<ts>...) \\[(?P<level>[A-Z]+)\\] (?P<msg>.*)$")``,
``errors(text)`` keeping the ``ERROR`` lines of a text): strings drawn from the module's patterns
now also carry the module's own words in the groups that accept them (``[ERROR]``), a group that
matches anything gets a word where it was drawn empty, and a text parameter is also given several
such lines. Before, every drawn level was random (``[A]``), every message empty (cut by the code's
``line.strip()``, so no line parsed), and ``errors``/``count_levels`` were asserted on nothing but
``[]`` and ``{}``: mutation 0.68."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from coevo.cli import main
from coevo.testgen.inputs import _with_module_words

LOG = Path(__file__).parent / "fixtures" / "gentests_lead" / "logparse.py"
PAT = r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) \[(?P<level>[A-Z]+)\] (?P<msg>.*)$"


def test_the_modules_words_go_into_the_groups_that_accept_them():
    drawn = ["0000-00-00 00:00:00 [A] ", "4000-00-00 00:00:00 [QQ] x"]
    out = _with_module_words([PAT], drawn, ["ERROR", "warn", "ts"])
    assert out[0] == "0000-00-00 00:00:00 [ERROR] ERROR"  # (an empty message: a word; "warn" no level)
    assert "4000-00-00 00:00:00 [A] x" not in out and all(s.endswith(" x") for s in out[1:])  # (a message drawn: kept)
    assert _with_module_words([PAT], drawn, []) == ["0000-00-00 00:00:00 [A] hello world"]
    assert _with_module_words(["(unclosed"], drawn, ["ERROR"]) == []
    assert _with_module_words([r"\d+"], ["12"], ["ERROR"]) == []  # (no group)


def test_a_log_parsers_suite_asserts_error_lines(tmp_path):
    shutil.copy(LOG, tmp_path / "logparse.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "logparse.py"), "--out", str(out), "--time-budget", "8", "--quiet"]) == 0
    suite = (out / "test_logparse.py").read_text()
    asserts = [ast.unparse(n) for n in ast.walk(ast.parse(suite)) if isinstance(n, ast.Assert)]
    assert any("[ERROR]" in a for a in asserts), suite
    assert any("errors(" in a and "== []" not in a for a in asserts) or "result = errors(" in suite, suite
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:]
