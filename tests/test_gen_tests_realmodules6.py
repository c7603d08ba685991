"""gen-tests on the shapes of a sixth set of published modules (CPython's textwrap, shlex, filecmp,
mimetypes, zipapp; jsonpointer, semver 2.13, tabulate from PyPI) and on what the fifth pass left
(CPython's netrc, graphlib, plistlib: files named by a path, containers of containers, round
trips). Modules are copied into tests/fixtures/gentests21/ and tests/fixtures/gentests22/ with
their licence notes; a test here holds the smallest excerpt that shows what went wrong, or runs
gen-tests once on a whole module (module-scoped, shared by the tests that read its suite)."""

import json
import subprocess
import sys
from pathlib import Path

from coevo.cli import main

FIX21 = Path(__file__).parent / "fixtures" / "gentests21"
FIX = Path(__file__).parent / "fixtures" / "gentests22"


def _generator(source: str, name: str):
    import tempfile

    from coevo.testgen.inputs import InputGenerator
    from coevo.testgen.target import analyze
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{name}.py"
        path.write_text(source)
        module = analyze(path)
    return module, InputGenerator(module, seed=0)


def _pool(module, gen, unit: str, param: str) -> list[str]:
    units = {u.qualname: u for u in module.units}
    spec = dict((p.name, s) for p, s in gen.specs(units[unit]))[param]
    return gen.pool(spec, gen._consts(units[unit]))


def test_a_dict_whose_values_are_unpacked_as_nodes_gets_graphs_with_edges_and_cycles():
    """CPython's graphlib: `TopologicalSorter(graph)` does `for node, predecessors in
    graph.items(): self.add(node, *predecessors)`; graph only ever got `{'a': 5, 'b': 0}` (TypeError:
    the values are not iterable), so no test sorted a graph with an edge or met a cycle (mutation
    0.29). A dict whose values the code iterates or unpacks gets dicts of lists of its own keys:
    chains, a cycle."""
    source = (FIX21 / "graphlib.py").read_text()
    module, gen = _generator(source, "graphlib_copy")
    env: dict = {}
    exec(compile(source, "graphlib_copy.py", "exec"), env)
    orders, cycles = [], 0
    for src in _pool(module, gen, "TopologicalSorter", "graph"):
        try:
            orders.append(tuple(env["TopologicalSorter"](eval(src, env)).static_order()))
        except env["CycleError"]:
            cycles += 1
        except (TypeError, AttributeError):
            pass
    assert cycles >= 1, orders
    assert any(len(o) >= 3 for o in orders), orders


def test_inverse_functions_found_by_name_are_chained_into_round_trips():
    """CPython's plistlib: `loads(value)` only ever got bytes that are no plist (`b'hello'`,
    the module's `b'bplist00'` alone): no test parsed a valid document (lines 34%), though the
    module writes them itself (`dumps`). Functions named as inverses (dumps/loads, encode/decode,
    format/parse, join/split, to_x/from_x...) are chained: `loads(dumps(x))`, a document the
    code accepts, and the test's assertion is that x comes back."""
    source = (FIX21 / "plistlib.py").read_text()
    module, gen = _generator(source, "plistlib_copy")
    env: dict = {}
    exec(compile(source, "plistlib_copy.py", "exec"), env)
    import ast
    back = []
    for probe in gen.round_trips():
        (step,) = probe.steps
        if step.callee != "loads":
            continue
        inner = ast.parse(step.args[0], mode="eval").body
        assert isinstance(inner, ast.Call) and ast.unparse(inner.func) == "dumps", step
        try:
            value = eval(step.source(), env)
        except Exception:  # noqa: BLE001 (what the code raises is a test too, not this one)
            continue
        back.append(value == eval(ast.unparse(inner.args[0]), env))
    assert any(back), gen.round_trips()
    # shlex: split(join(words)) gives the words back; semver 2.13: parse(format_version(...))
    source = (FIX / "shlex.py").read_text()
    module, gen = _generator(source, "shlex_copy")
    env = {}
    exec(compile(source, "shlex_copy.py", "exec"), env)
    words = []
    for probe in gen.round_trips():
        inner = ast.parse(probe.steps[0].args[0], mode="eval").body
        if probe.steps[0].callee == "split" and ast.unparse(inner.func) == "join":
            try:
                if eval(probe.steps[0].source(), env) == eval(ast.unparse(inner.args[0]), env):
                    words.append(ast.unparse(inner.args[0]))
            except (TypeError, ValueError):
                pass
    assert any(" " in w for w in words), words  # a word with a space in it survives the trip
    module, gen = _generator((FIX / "semver.py").read_text(), "semver_copy")
    assert any(p.source().startswith("parse(format_version(") for p in gen.round_trips()), gen.round_trips()


def _gen(tmp_path, name: str, source: str, budget: str = "12") -> tuple[str, dict]:
    (tmp_path / f"{name}.py").write_text(source)
    assert main(["gen-tests", str(tmp_path / f"{name}.py"), "--out", str(tmp_path / "out"),
                 "--time-budget", budget, "--quiet"]) == 0
    text = (tmp_path / "out" / f"test_{name}.py").read_text()
    report = json.loads((tmp_path / "out" / f"test_{name}.json").read_text())
    return text, report


def _pytest(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           str(out)], capture_output=True, text=True, cwd=out.parent, timeout=120)


PATHS = '''\
import os


class netrc:
    def __init__(self, file=None):
        if file is None:
            file = os.path.join(os.path.expanduser("~"), ".netrc")
        self.hosts = {}
        with open(file, encoding="utf-8") as fp:
            for line in fp:
                parts = line.split()
                if len(parts) >= 4 and parts[0] == "machine" and parts[2] == "login":
                    self.hosts[parts[1]] = parts[3]
                elif parts and not parts[0].startswith("#"):
                    raise ValueError(f"bad line {line!r}")

    def authenticators(self, host):
        return self.hosts.get(host)


def same_files(f1, f2, shallow=True):
    s1, s2 = os.stat(f1), os.stat(f2)
    if shallow and s1.st_size != s2.st_size:
        return False
    with open(f1, "rb") as a, open(f2, "rb") as b:
        return a.read() == b.read()
'''


def test_the_path_parameters_of_filecmp_and_netrc_get_files():
    """The real modules behind the excerpt below: filecmp's cmp(f1, f2) stats and opens both
    (through its helper _do_cmp), netrc's constructor opens `file` and its private _parse holds
    the words of the format (machine, login, password): a file of such lines is written first."""
    module, gen = _generator((FIX / "filecmp.py").read_text(), "filecmp_copy")
    units = {u.qualname: u for u in module.units}
    assert [p.name for p in gen.path_params(units["cmp"])] == ["f1", "f2"]
    probes = gen.file_probes(units["cmp"])
    assert all([s.kind for s in p.steps] == ["file", "file", "call"] for p in probes), probes
    assert any(p.steps[0].args == p.steps[1].args for p in probes), probes  # the same text
    assert any(p.steps[0].args != p.steps[1].args for p in probes), probes  # and another
    module, gen = _generator((FIX21 / "netrc.py").read_text(), "netrc_copy")
    units = {u.qualname: u for u in module.units}
    texts = [p.steps[0].args[0] for p in gen.file_probes(units["netrc"])]
    assert "'machine hello login abc account a\\n'" in texts, texts
    methods = gen.file_probes(units["netrc.authenticators"])
    assert any(p.steps[-1].source() == "netrc_obj.authenticators('hello')"
               and p.steps[0].args[0] == "'machine hello login abc account a\\n'" for p in methods), methods


def test_a_parameter_opened_as_a_path_gets_a_file_the_test_writes_first(tmp_path):
    """CPython's netrc (`netrc(file)`: `with open(file) as fp`) and filecmp (`cmp(f1, f2)`:
    `os.stat(f1)`, `open(f1, 'rb')`): a path parameter only got strings of the pool
    ('Cbc': FileNotFoundError), so the suites held error tests alone (netrc: 3 tests, lines 16%;
    filecmp: lines 43%). A parameter the code opens or stats as a path gets a file the test writes
    first (pathlib.Path('file.txt').write_text(...)) with text built from the module's own words,
    the same or another text for a second path."""
    text, report = _gen(tmp_path, "pathish", PATHS)
    assert "write_text(" in text, text
    import re
    assert re.search(r"\.authenticators\('\w+'\) == '\w+'", text), text  # a host read from the file
    assert re.search(r"assert same_files\('f1\.txt', 'f2\.txt'\) is True", text), text
    assert re.search(r"assert same_files\('f1\.txt', 'f2\.txt'\) is False", text), text
    run = _pytest(tmp_path / "out")
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout + run.stderr
    assert not list(tmp_path.glob("*.txt")), list(tmp_path.iterdir())  # written where each test runs


DEPRECATED = '''\
import warnings


def format_version(major, minor=0):
    warnings.warn("format_version is deprecated, use str()", DeprecationWarning, stacklevel=2)
    return f"{major}.{minor}"


def parse(version):
    warnings.warn("parse is deprecated, use Version.parse", DeprecationWarning, stacklevel=2)
    major, minor = version.split(".")
    return {"major": int(major), "minor": int(minor)}
'''


def test_a_call_that_warns_twice_is_asserted_by_the_category_alone(tmp_path):
    """semver 2.13's round trip `parse(format_version(5, 5, 5))`: both functions are deprecated,
    each with its own message; the test was `with pytest.warns(DeprecationWarning,
    match="Function 'semver.format_version' is deprecated...")` and pytest emitted the other
    warning again when the block closed (a warning in every run of the suite; an error under
    `filterwarnings = error`). Several warnings of one call: the category common to them, no
    message."""
    from coevo.testgen.execute import SandboxRunner, Variant
    from coevo.testgen.inputs import Probe, Step
    from coevo.testgen.observe import checks
    from coevo.testgen.target import analyze
    from matrix.engine import ExecConfig, Executor

    (tmp_path / "versions.py").write_text(DEPRECATED)
    tmp_path.chmod(0o755)
    module = analyze(tmp_path / "versions.py")
    table = {0: Probe("parse", (Step("call", "parse", ("format_version(5, 5)",), unit="parse"),)),
             1: Probe("parse", (Step("call", "parse", ("'5.5'",), unit="parse"),))}
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(tmp_path),))) as ex:
        out, _ = SandboxRunner(module, ex).probes(Variant("original", module.source), table,
                                                  [list(table)], cov=False, limit=2.0)
    (twice,) = [c for c in checks(out[0]) if c.op == "warns"]
    assert twice.value == (("builtins", "DeprecationWarning"), None), twice
    (once,) = [c for c in checks(out[1]) if c.op == "warns"]
    assert once.value == (("builtins", "DeprecationWarning"), "parse is deprecated, use Version.parse"), once


STATS = '''\
import os


def same_size(f1, f2):
    return os.stat(f1).st_size == os.path.getsize(f2)


def own_stat(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)
'''


def test_stat_of_a_descriptor_the_call_did_not_open_is_no_test(tmp_path):
    """filecmp's `cmp(f1, f2)` (`os.stat(f1)`, then `open(f1, 'rb')`) called with ints: in the
    sandbox `cmp(5, 5)` raised 'Bad file descriptor: 5' and was kept as a test; under pytest
    descriptor 5 is one of pytest's capture files: the call opened and closed it, and every later
    test of the suite failed (a gen-tests run on a filecmp excerpt kept 0 tests of 425). A stat of
    a descriptor the call did not open itself is the process's (as `open(5)` already was): no
    test. One it opened (os.open, then os.fstat) is still tested."""
    from coevo.testgen.execute import SandboxRunner, Variant
    from coevo.testgen.inputs import Probe, Step
    from coevo.testgen.target import analyze
    from matrix.engine import ExecConfig, Executor

    (tmp_path / "stats.py").write_text(STATS)
    tmp_path.chmod(0o755)
    module = analyze(tmp_path / "stats.py")
    table = {k: Probe("same_size", (Step("call", "same_size", (a, a), unit="same_size"),))
             for k, a in enumerate(["1", "5", "4", "True", "99"])}
    table[7] = Probe("own_stat", (Step("call", "own_stat", ("'out.txt'",), unit="own_stat"),))
    with Executor(ExecConfig(timeout=20, workers=1, import_paths=(str(tmp_path),))) as ex:
        out, _ = SandboxRunner(module, ex).probes(Variant("original", module.source), table,
                                                  [list(table)], cov=False, limit=2.0)
    for k in range(5):
        assert out[k]["steps"][0][0] == "stdin", (k, out[k])
    assert out[7]["steps"][0][0] == "ok", out[7]


def test_hypothesis_leaves_no_garbage_collector_callback_behind():
    """The inputs drawn by hypothesis: hypothesis registers a callback of the garbage collector
    (timing its collections) for the rest of the process. A SIGTERM arriving while a collection
    ran was raised inside that callback and ignored by Python ('Exception ignored in:
    gc_cumulative_time.<locals>.gc_callback'): gen-tests went on to the end and exited 0
    (tests/test_gen_tests_budget_stop.py's SIGTERM while exploring failed so, 3 times in 8 on a
    loaded machine). No callback of hypothesis is left in gc.callbacks after the draws."""
    import gc

    module, gen = _generator("def f(x: int, s: str) -> int:\n    return x + len(s)\n", "hyp")
    probes = gen.hypothesis(list(module.units), n=3)
    assert probes
    assert not [c for c in gc.callbacks if "hypothesis" in (getattr(c, "__module__", "") or "")], gc.callbacks


def test_a_later_slice_of_calls_is_cut_to_what_fits_in_the_share_left():
    """CPython's mimetypes (every MimeTypes() reads the system's mime.types): the explore phase
    ran 38 s of its ~25 s share, the run 65 s under the default --time-budget 60, because a slice
    of 120 calls started whatever its cost once a little of the share was left. After the first
    slice, a slice holds what the calls so far say fits in the share left (8 at least)."""
    import time
    from types import SimpleNamespace

    from coevo.testgen import module_suite

    b = module_suite._SuiteBuilder.__new__(module_suite._SuiteBuilder)
    b.clock = module_suite._Clock(20.0, None)
    b.table = {i: SimpleNamespace(unit="f") for i in range(1000)}
    b.hung = {}
    ran: list[int] = []

    def slow_slice(part):
        time.sleep(0.02 * len(part))  # (a call waits; no CPU is needed)
        ran.extend(part)
        return []

    b._run_slice = slow_slice
    b.run_batch(list(range(1000)), 0.15)  # the share ends 3 s in: the first slice of 120 takes 2.4 s
    assert 120 <= len(ran) < 240, len(ran)  # (a second slice of 120 ran to 4.8 s)
    # a later batch (the mutant phase's calls aimed at survivors) near the end of its share: the
    # calls so far say how many fit (it ran its first 120 whatever they cost)
    ran.clear()
    b.run_batch(list(range(1000)), 0.16)  # 0.2 s left at most
    assert 0 < len(ran) <= 10, len(ran)
