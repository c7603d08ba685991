"""gen-tests on functions that write to a file object they are handed (CPython's quopri:
`encode(input, output, quotetabs)`; gentests24's report: "file-object round trips"): the suite
called them with io.StringIO / io.BytesIO but asserted nothing of what they wrote (quopri: 28
tests, its encode/decode only in pytest.raises). What a call writes to an in-memory stream
argument is now asserted: `outfile.getvalue() == '...'`. Fixture tests/fixtures/gentests25/."""

from pathlib import Path

import pytest
from test_gen_tests_realmodules7 import _gen, _pytest

from coevo.testgen import observe
from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.target import analyze
from matrix.engine import ExecConfig, Executor

FIX = Path(__file__).parent / "fixtures" / "gentests25"


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    d = tmp_path_factory.mktemp("streams")
    d.chmod(0o755)
    (d / "recode.py").write_text((FIX / "recode.py").read_text())
    module = analyze(d / "recode.py")
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        yield SandboxRunner(module, ex), module


def test_what_a_call_writes_to_a_stream_argument_is_observed_and_checked(runner):
    r, module = runner
    table = {0: Probe("shout_lines", (Step("call", "shout_lines", ("StringIO('a\\nb\\n')", "StringIO()"),
                                           unit="shout_lines"),)),
             1: Probe("escape", (Step("call", "escape", ("BytesIO(b'x;y')", "BytesIO(b'')"), unit="escape"),))}
    out, _ = r.probes(Variant("original", module.source), table, [list(table)], limit=2.0)
    step = out[0]["steps"][0]
    assert step[0] == "ok" and step[1] == ["v", 2], step
    changed = dict((j, d) for j, d in step[3])
    assert list(changed) == [1], step  # the input was read, not changed; the output was written
    checks = observe.checks(out[0])
    want = observe.Check(("arg", 0, 1), (("getvalue",),), "eq", "A\nB\n")
    assert want in checks, checks
    assert observe.passes(want, out[0])
    assert not observe.passes(observe.Check(("arg", 0, 1), (("getvalue",),), "eq", "a\nb\n"), out[0])
    checks = observe.checks(out[1])
    assert observe.Check(("arg", 0, 1), (("getvalue",),), "eq", b"x=3By") in checks, checks


def test_the_suite_asserts_what_was_written_and_passes(tmp_path):
    text, _ = _gen(tmp_path, "recode", (FIX / "recode.py").read_text(), budget="12")
    assert ".getvalue() == " in text, text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr


def test_a_stream_the_code_writes_to_starts_empty(tmp_path):
    """An output stream got the input streams' texts (`output = BytesIO(b'hello\\nworld\\n')`:
    the writes overwrote its start, `b'=3Blo\\nworld\\n'`); a parameter the code writes to gets an
    empty stream first, so what the call wrote is the whole of it."""
    from coevo.testgen.inputs import InputGenerator
    path = tmp_path / "recode.py"
    path.write_text((FIX / "recode.py").read_text())
    module = analyze(path)
    gen = InputGenerator(module, seed=0)
    units = {u.qualname: u for u in module.units}
    calls = {p.steps[-1].source() for name in ("shout_lines", "escape") for p in gen.initial(units[name])}
    assert any(c.startswith("shout_lines(") and c.endswith(", StringIO())") for c in calls), calls
    assert any(c.startswith("escape(") and ", BytesIO()" in c for c in calls), calls
    # the stream it reads keeps texts to read
    assert any(c.startswith(("escape(StringIO('hello", "escape(BytesIO(b'hello")) for c in calls), calls
