"""Writes to absolute /tmp paths (gentests27). The cell's working directory was the sandbox's
private /tmp itself, so a call writing ``/tmp/x`` looked like one writing ``x`` where it runs: the
written test asserted ``pathlib.Path('x').read_text()``, which fails under pytest (the file is in
the machine's /tmp, the test runs in its tmp_path), and verification ran such calls for real,
writing into the user's /tmp, before dropping them."""
from pathlib import Path

from test_gen_tests_realmodules7 import _gen, _pytest

from coevo.testgen import observe
from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.target import analyze
from matrix.engine import ExecConfig, Executor

FIX = Path(__file__).parent / "fixtures" / "gentests27"


def test_a_call_writing_an_absolute_tmp_path_is_not_asserted(tmp_path_factory):
    d = tmp_path_factory.mktemp("abs")
    d.chmod(0o755)
    (d / "tmpnotes.py").write_text((FIX / "tmpnotes.py").read_text())
    module = analyze(d / "tmpnotes.py")
    table = {0: Probe("save_note", (Step("call", "save_note", ("'x'", "'hello'"), unit="save_note"),)),
             1: Probe("save_here", (Step("call", "save_here", ("'y'", "'hi'"), unit="save_here"),))}
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        out, _ = SandboxRunner(module, ex).probes(Variant("original", module.source), table, [list(table)],
                                                  limit=2.0)
    # was ['ok', ['v', 5]] with files [['x', ['file', 5, b'hello']]]
    assert out[0]["steps"][0][0] == "env", out[0]
    assert not observe.usable(out[0])
    # a write where the call runs, by its absolute path, is still observed
    assert out[1]["steps"][0][:2] == ["ok", ["v", 2]], out[1]
    assert out[1]["files"] == [[0, [["y", ["file", 2, b"hi"]]]]], out[1]


def test_the_suite_of_a_module_writing_to_tmp_passes_with_nothing_dropped(tmp_path):
    text, report = _gen(tmp_path, "tmpnotes", (FIX / "tmpnotes.py").read_text(), budget="12")
    assert "dropped" not in report["verification"], report["verification"]
    assert "save_here(" in text and ".read_text() ==" in text, text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
