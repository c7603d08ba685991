"""gen-tests on functions that write, append to or remove files (the lead's notes.py:
`save_scores(path, scores)` writes JSON, `append_line(path, line)`, `remove_empty(dirname)`;
CPython's shutil.move): the suite asserted what they returned, never what they did to the files
(`append_line('hello', 'hello')` with no assertion at all, `remove_empty('dirname') == ['b.txt']`
with b.txt never checked gone). The files a call creates, changes or removes in the working
directory are now observed in the sandbox and asserted after the call
(`pathlib.Path('hello').read_text() == ...`, `not pathlib.Path('dirname/b.txt').exists()`);
contents that differ between two runs (a time stamp) are not asserted; and what a probe's calls
left in the working directory is removed before the next probe (a written test starts in an empty
directory). Fixtures tests/fixtures/gentests26/."""

from pathlib import Path

import pytest
from test_gen_tests_realmodules7 import _gen, _pytest

from coevo.testgen import observe
from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.target import analyze
from matrix.engine import ExecConfig, Executor

FIX = Path(__file__).parent / "fixtures" / "gentests26"


def _runner(tmp_path_factory, name):
    d = tmp_path_factory.mktemp("files")
    d.chmod(0o755)
    (d / f"{name}.py").write_text((FIX / f"{name}.py").read_text())
    return d, analyze(d / f"{name}.py")


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    d, module = _runner(tmp_path_factory, "notes")
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        yield SandboxRunner(module, ex), module


def _files(outcome, step):
    return dict((p, d) for k, entries in outcome.get("files") or () if k == step for p, d in entries)


def test_what_a_call_does_to_files_is_observed_and_checked(notes):
    r, module = notes
    table = {0: Probe("save_scores", (Step("call", "save_scores", ("'s.json'", "{'a': 5, 'b': 0}"),
                                           unit="save_scores"),)),
             1: Probe("remove_empty", (Step("file", "dirname/a.txt", ("'hello\\n'",)),
                                       Step("file", "dirname/b.txt", ("''",)),
                                       Step("call", "remove_empty", ("'dirname'",), unit="remove_empty"))),
             2: Probe("append_line", (Step("file", "log", ("'one\\n'",)),
                                      Step("call", "append_line", ("'log'", "'two'"), unit="append_line")))}
    out, _ = r.probes(Variant("original", module.source), table, [list(table)], limit=2.0)

    assert _files(out[0], 0) == {"s.json": ["file", 16, b'{"a": 5, "b": 0}']}, out[0]
    cs = observe.checks(out[0])
    want = observe.Check(("file", 0, "s.json"), (("read_text",),), "eq", '{"a": 5, "b": 0}')
    assert want in cs, cs
    assert observe.passes(want, out[0])
    wrong = dict(out[0], files=[[0, [["s.json", ["file", 16, b'{"b": 0, "a": 5}']]]]])
    assert observe.breaks(cs, wrong)  # a mutant that writes other JSON is killed
    assert observe.breaks(cs, dict(out[0], files=[]))  # and one that writes nothing

    # what the test wrote itself (file steps) is not asserted; the removed file and a kept one are
    assert _files(out[1], 0) == {} and _files(out[1], 1) == {}, out[1]
    assert _files(out[1], 2) == {"dirname/b.txt": ["gone"], "dirname/a.txt": ["kept"]}, out[1]
    cs = observe.checks(out[1])
    gone = observe.Check(("file", 2, "dirname/b.txt"), (("exists",),), "is", False)
    kept = observe.Check(("file", 2, "dirname/a.txt"), (("exists",),), "is", True)
    assert gone in cs and kept in cs, cs
    assert observe.breaks(cs, dict(out[1], files=[]))  # b.txt left in place
    assert observe.breaks(cs, dict(out[1], files=[[2, [["dirname/a.txt", ["gone"]], ["dirname/b.txt", ["gone"]]]]]))
    assert not observe.breaks(cs, dict(out[1], files=[[2, [["dirname/b.txt", ["gone"]]]]]))

    # a file step's file the call appended to is asserted
    assert _files(out[2], 1) == {"log": ["file", 8, b"one\ntwo\n"]}, out[2]
    assert observe.Check(("file", 1, "log"), (("read_text",),), "eq", "one\ntwo\n") in observe.checks(out[2])


def test_files_a_probe_left_are_gone_before_the_next_probe(tmp_path_factory):
    """The code's files stayed in the cell's working directory: a later probe saw them (`add_line`
    counted the lines an earlier probe wrote), which the written test (an empty tmp_path) does not."""
    d, module = _runner(tmp_path_factory, "leftover")
    table = {0: Probe("listing", (Step("call", "listing", (), unit="listing"),)),
             1: Probe("add_line", (Step("call", "add_line", ("'n.txt'", "'a'"), unit="add_line"),)),
             2: Probe("add_line", (Step("call", "add_line", ("'n.txt'", "'b'"), unit="add_line"),)),
             3: Probe("listing", (Step("call", "listing", (), unit="listing"),))}
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        out, _ = SandboxRunner(module, ex).probes(Variant("original", module.source), table, [list(table)],
                                                  limit=2.0)
    assert out[1]["steps"][0][1] == ["v", 1], out[1]
    assert out[2]["steps"][0][1] == ["v", 1], out[2]
    assert out[3]["steps"][0][1] == out[0]["steps"][0][1], (out[0], out[3])
    assert (d / "leftover.py").read_text() == (FIX / "leftover.py").read_text()  # the module's own files stay


def test_file_contents_that_differ_between_runs_are_not_asserted(tmp_path_factory):
    d, module = _runner(tmp_path_factory, "stamp")
    table = {0: Probe("stamp", (Step("call", "stamp", ("'t.log'", "'go'"), unit="stamp"),))}
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        r = SandboxRunner(module, ex)
        first = r.probes(Variant("original", module.source), table, [[0]], limit=2.0)[0][0]
        second = r.probes(Variant("original", module.source), table, [[0]], limit=2.0)[0][0]
    assert first["files"] != second["files"], (first, second)
    cs = observe.checks(first)
    assert not observe.stable_pair(first, second)
    kept = observe.stable_checks(cs, first, second)
    assert kept is not None
    assert observe.Check(("ret", 0), (), "eq", 2) in kept, kept
    assert not any(c.path == (("read_text",),) for c in kept), kept
    assert observe.Check(("file", 0, "t.log"), (("is_file",),), "is", True) in kept, kept
    assert not observe.breaks(kept, second) and not observe.breaks(kept, first)


def test_the_suite_asserts_what_the_calls_did_to_files_and_passes(tmp_path):
    text, report = _gen(tmp_path, "notes", (FIX / "notes.py").read_text(), budget="12")
    assert ".read_text() == '{" in text, text  # save_scores' JSON
    assert "assert not pathlib.Path('" in text, text  # remove_empty's removed file
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr


def test_a_time_stamped_file_gives_no_flaky_assertion(tmp_path):
    text, _ = _gen(tmp_path, "stamp", (FIX / "stamp.py").read_text(), budget="12")
    assert "stamp(" in text and ".read_text()" not in text, text
    for _ in range(2):
        run = _pytest(tmp_path / "out")
        assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr


def test_a_call_that_writes_beside_the_code_is_not_asserted(tmp_path_factory):
    """The sandbox shows the code's directory read-only: a call writing there failed in the cell
    (`save_beside('x', 'hello') is False` was asserted) and wrote the user's files under pytest,
    where the test then failed (compileall's `compile_path()`: a new compileall.pyc in the project).
    Such a write is noted as the machine's, as a read of a file outside the project is."""
    d, module = _runner(tmp_path_factory, "beside")
    table = {0: Probe("save_beside", (Step("call", "save_beside", ("'x'", "'hello'"), unit="save_beside"),)),
             1: Probe("shout", (Step("call", "shout", ("'a'",), unit="shout"),))}
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(d),))) as ex:
        out, _ = SandboxRunner(module, ex).probes(Variant("original", module.source), table, [list(table)],
                                                  limit=2.0)
    assert out[0]["steps"][0][0] == "env", out[0]
    assert not observe.usable(out[0])
    assert out[1]["steps"][0][:2] == ["ok", ["v", "A"]], out[1]
    assert not (d / "x.txt").exists()


def test_the_suite_never_writes_beside_the_code(tmp_path):
    text, _ = _gen(tmp_path, "beside", (FIX / "beside.py").read_text(), budget="12")
    assert "shout(" in text and "save_beside(" not in text, text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    assert not list(tmp_path.glob("*.txt")), list(tmp_path.iterdir())
