"""The sandbox side of gen-tests (coevo.testgen.harness through coevo.testgen.execute): outcomes as
plain data, a hang or a crash costs only its own probe, coverage per probe, pytest in fresh
processes (or one cell per run where the sandbox refuses new processes)."""

import pytest

from coevo.testgen.execute import SandboxRunner, Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.target import analyze
from matrix.engine import ExecConfig, Executor

SOURCE = '''import os

class Box:
    def __init__(self, size=2):
        self.size = size
        self.items = []

    def put(self, x):
        if len(self.items) >= self.size:
            raise OverflowError("full")
        self.items.append(x)
        return len(self.items)

    def __len__(self):
        return len(self.items)


def shout(text):
    print(text.upper())
    return len(text)


def fill(xs):
    xs.append(1)


def hang(n):
    while True:
        n += 1


def die(code):
    os._exit(code)


def sign(x):
    if x < 0:
        return -1
    return 1
'''


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    d = tmp_path_factory.mktemp("harness")
    d.chmod(0o755)
    (d / "boxes.py").write_text(SOURCE)
    module = analyze(d / "boxes.py")
    with Executor(ExecConfig(timeout=20, workers=2, import_paths=(str(d),))) as ex:
        yield SandboxRunner(module, ex), module


def call(fn, *args, unit=None):
    return Step("call", fn, tuple(args), unit=unit or fn)


def test_outcomes_hangs_and_crashes(runner):
    r, module = runner
    table = {
        0: Probe("Box", (Step("call", "Box", ("1",), bind="box", unit="Box"), call("box.put", "'a'"),
                         call("box.put", "'b'"))),
        1: Probe("shout", (call("shout", "'hi'"),)),
        2: Probe("fill", (call("fill", "[3]"),)),
        3: Probe("hang", (call("hang", "0"),)),
        4: Probe("die", (call("die", "3"),)),
        5: Probe("sign", (call("sign", "-5"),)),
    }
    out, arcs = r.probes(Variant("original", module.source), table, [list(table)], cov=True, limit=0.3)
    box = out[0]
    assert box["steps"][0][:2] == ["ok", ["bound", box["steps"][0][1][1]]] and box["steps"][1][1] == ["v", 1]
    assert box["steps"][0][1][1][2]["items"] == ["v", []]  # the object as built
    assert box["steps"][2][0] == "raise" and box["steps"][2][1][0][0] == ["builtins", "OverflowError"]
    assert box["steps"][2][1][1] == "full"
    state = box["state"]["box"]
    assert state[0] == "obj" and state[2]["items"] == ["v", ["a"]] and state[3]["len"] == 1
    assert out[1]["steps"][0][:3] == ["ok", ["v", 2], "HI\n"]
    assert out[2]["steps"][0][3] == [[0, ["v", [3, 1]]]]  # the argument changed in place
    assert out[3]["steps"][0] == ["timeout"]  # the batch went on after the hang
    assert out[4].get("crash")  # os._exit ended its cell: only that probe is lost
    assert out[5]["steps"][0][1] == ["v", -1]
    sign_line = SOURCE.splitlines().index("def sign(x):") + 1
    assert (sign_line + 1, sign_line + 2) in arcs[5] and (sign_line + 1, sign_line + 3) not in arcs[5]


def test_coverage_of_one_probe_is_its_own(runner):
    """Coverage contexts are looked up exactly: probe 1 is not probe 10 or 21."""
    r, module = runner
    table = {pid: Probe("sign", (call("sign", str(-pid)),)) for pid in range(30)}
    table[1] = Probe("sign", (call("sign", "1"),))
    _, arcs = r.probes(Variant("original", module.source), table, [list(table)], cov=True, limit=0.3)
    line = SOURCE.splitlines().index("def sign(x):") + 1
    assert (line + 1, line + 3) in arcs[1] and (line + 1, line + 2) not in arcs[1]
    assert (line + 1, line + 2) in arcs[10] and (line + 1, line + 3) not in arcs[10]


def test_inspect_and_load_errors(runner):
    r, module = runner
    info, why, docs = r.inspect(doctest_runs=1)
    assert docs == [{"load": None, "examples": []}]
    assert info is not None and info["load"] is None, why
    assert len(info["statements"]) > 10 and len(info["branches"]) == 4
    broken = SandboxRunner(type(module)(**{**module.__dict__, "source": "raise RuntimeError('nope')\n"}),
                           r.executor)
    info, _, _ = broken.inspect()
    assert info["load"][0][0] == ["builtins", "RuntimeError"] and info["load"][1] == "nope"


def test_pytest_twice_in_fresh_processes_and_in_cells(runner):
    r, module = runner
    files = {"test_boxes_gen.py": "from boxes import sign\n\n\ndef test_sign():\n    assert sign(-2) == -1\n\n\n"
                                  "def test_wrong():\n    assert sign(2) == 2\n"}
    res = r.pytest(files, [(1, False), (2, True)], [str(module.root)])
    assert res["mode"] == "subprocess" and len(res["runs"]) == 2
    for run in res["runs"]:
        assert run["test_boxes_gen.py::test_sign"] == "passed"
        assert run["test_boxes_gen.py::test_wrong"] == "failure"
    job = {"op": "pytest", "files": files, "runs": [[1, True]], "paths": [str(module.root)], "inprocess": True,
           "name": module.name, "file": str(module.path), "source": "", "timeout": 60}
    cell = r.run_jobs([job], long=True)[0]
    assert cell.status == "pass", cell
    assert cell.value["runs"][0]["test_boxes_gen.py::test_sign"] == "passed"


WARNS = '''

def old(x):
    import warnings
    warnings.warn("old is deprecated", DeprecationWarning)
    return x


def forever():
    try:
        while True:
            yield 1
    finally:
        raise ValueError("closing")
'''


def test_calls_that_warn_are_marked(runner):
    """A project with `filterwarnings = error` fails the tests of calls that warn (or leave an
    exception Python cannot raise: a generator closed unfinished); the outcome says so, so that
    one failing verification drops them all (each would cost a round)."""
    r, module = runner
    table = {0: Probe("old", (call("old", "1"),)), 1: Probe("forever", (call("forever"),)),
             2: Probe("sign", (call("sign", "1"),))}
    out, _ = r.probes(Variant("warns", module.source + WARNS), table, [list(table)], cov=True, limit=1.0)
    assert out[0]["warned"] == ["DeprecationWarning"] and out[0]["steps"][0][1] == ["v", 1]
    assert out[1]["warned"] == ["unraisable"] and out[1]["steps"][0][1][2] == "more"
    assert "warned" not in out[2]


def test_what_the_sandbox_shows_from_the_machine_has_one_source():
    """The harness tells a call reading the machine's files (an environment read: no test) from
    one reading what the sandbox binds read-only; that list is the sandbox's own
    (matrix/sandbox/namespace.py), not a copy that could drift from it."""
    import ast
    import inspect

    import coevo.testgen.harness as harness
    from matrix.sandbox import namespace

    line = next(x for x in harness.SOURCE.splitlines() if x.startswith("_CV_SHOWN = "))
    shown = ast.literal_eval(line.split(" = ", 1)[1].replace(") + (", ", "))
    assert set(shown) == set(namespace.SYSTEM_BINDS) | set(namespace.HOST_ETC_FILES) | {
        "/dev/null", "/dev/zero", "/dev/full"}
    # the harness's file spells none of the sandbox's binds itself
    assert "/libx32" not in inspect.getsource(harness) and "/etc/nsswitch.conf" not in inspect.getsource(harness)
    assert "/libx32" in inspect.getsource(namespace.step_binds) or "SYSTEM_BINDS" in inspect.getsource(
        namespace.step_binds)
