"""gen-tests on a public class whose constructor, comparisons and methods come from a private base
class of the same module (packaging's ``Version(_BaseVersion)``), checking its text against a
class-level compiled pattern (``self._regex.fullmatch(text)``, the pattern a verbose one built from
a class-level string through a helper). Before: ``Release()`` was called with no argument (the
constructor is the base's), ``<``/``<=``/``==`` and ``bumped`` ran on no instance (the private base
gets no tests of its own), and the texts drawn for ``text`` matched nothing, so every instance
raised ValueError."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

from coevo.cli import main
from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

RELEASES = Path(__file__).parent / "fixtures" / "gentests_lead" / "releases.py"
PATTERN = re.compile(r"\s*v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?\s*", re.IGNORECASE)


def test_the_public_class_inherits_the_private_bases_constructor_operators_and_methods():
    m = analyze(RELEASES.resolve())
    assert [c.name for c in m.classes] == ["Release"]
    rel = m.class_named("Release")
    assert [p.name for p in rel.init.params] == ["text"] and rel.init.qualname == "Release"
    assert {"__lt__", "__le__", "__eq__", "__str__"} <= set(rel.dunders)
    methods = {u.qualname: u.owner for u in rel.methods}
    assert methods == {"Release.is_stable": "Release", "Release.bumped": "Release"}
    # what the class defines itself is not taken from the base twice
    assert rel.dunders.count("__str__") == 1


def test_texts_are_drawn_from_a_class_level_pattern_read_through_self():
    m = analyze(RELEASES.resolve())
    gen = InputGenerator(m, seed=0)
    texts = [eval(c["text"]) for c in gen._choices(m.class_named("Release").init)[:6] if "text" in c]
    assert any(PATTERN.fullmatch(t) for t in texts), texts
    probes = [p.steps[-1].source() for p in gen.protocol_probes("Release")]
    assert any(e.startswith("release < Release(") for e in probes), probes


def test_the_suite_compares_releases_and_calls_the_inherited_method(tmp_path):
    shutil.copy(RELEASES, tmp_path / "releases.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "releases.py"), "--out", str(out), "--time-budget", "8",
                 "--quiet"]) == 0
    suite = (out / "test_releases.py").read_text()
    built = re.findall(r"Release\('([^']*)'\)", suite)
    assert any(PATTERN.fullmatch(t) for t in built), built
    assert re.search(r"release (<|<=|==) Release\(", suite), suite
    assert ".bumped(" in suite
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stdout[-2000:]


def _classes(tmp_path, source: str):
    (tmp_path / "m.py").write_text(source)
    m = analyze(tmp_path / "m.py")
    return m, {c.name: c for c in m.classes}


def test_what_is_inherited_follows_pythons_method_resolution_order(tmp_path):
    # review 33: depth first gave D _A's constructor and method; Python's C3 order is D, _B, _C, _A
    m, c = _classes(tmp_path, (
        "class _A:\n    def __init__(self, a):\n        self.a = a\n    def m(self, x):\n        return x\n"
        "class _B(_A):\n    pass\n"
        "class _C(_A):\n    def __init__(self, a, b, c):\n        self.a = a\n"
        "    def m(self, x, y):\n        return x + y\n"
        "class D(_B, _C):\n    pass\n"))
    assert m.mros["D"] == ["D", "_B", "_C", "_A"]
    d = c["D"]
    assert [p.name for p in d.init.params] == ["a", "b", "c"]
    assert [[p.name for p in u.params] for u in d.methods if u.name == "m"] == [["x", "y"]]
    # the order is Python's own
    ns: dict = {}
    exec((tmp_path / "m.py").read_text(), ns)
    assert [k.__name__ for k in ns["D"].__mro__[:-1]] == m.mros["D"]


def test_a_tested_base_hides_what_it_overrides_and_a_dataclass_base_gives_its_fields(tmp_path):
    _, c = _classes(tmp_path, (
        "from dataclasses import dataclass\n"
        "class _A:\n    def m(self, x):\n        return x\n    def n(self, x):\n        return x\n"
        "class B(_A):\n    def m(self, x, y, z):\n        return x\n"
        "    if True:\n        def n(self, x, y):\n            return x\n"
        "class C(B):\n    pass\n"
        "@dataclass\nclass _P:\n    x: int\n    y: int = 0\n"
        "class Q(_P):\n    def total(self):\n        return self.x + self.y\n"))
    assert [[p.name for p in u.params] for u in c["C"].methods if u.name == "m"] == []  # B's, tested on B
    assert [u.qualname for u in c["B"].methods if u.name == "n"] == []  # B's own n (under an if) hides _A's
    assert [p.name for p in c["Q"].init.params] == ["x", "y"]


def test_only_bare_names_of_the_modules_classes_are_its_bases(tmp_path):
    _, c = _classes(tmp_path, (
        "import helpers\n"
        "class _Base:\n    def __init__(self, a, b, c):\n        self.a = a\n    def secret(self):\n        return 1\n"
        "class Enc(helpers._Base):\n    def encode(self, s):\n        return s\n"))
    assert c["Enc"].init.params == [] and [u.name for u in c["Enc"].methods] == ["encode"]


def test_pattern_texts_are_folded_as_python_reads_the_module(tmp_path):
    from coevo.testgen.inputs import _compiled_patterns

    src = ('import re\nPAT = "a+"\n'
           'class A:\n    R = re.compile(PAT)\n'
           'PAT = "b+"\n'
           'N = len("xyz")\nS = re.compile(N)\n'
           'BIG = ' + " + ".join(['"a"'] * 400) + '\nT = re.compile(BIG)\n'
           'W = "(" * 9000\nU = re.compile(W + W)\n')
    tree = __import__("ast").parse(src)
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(250 + len(__import__("inspect").stack()))  # 400 terms: too deep to fold here
    try:
        got = _compiled_patterns(tree, in_classes=True)
    finally:
        sys.setrecursionlimit(limit)
    assert got["A.R"].pattern == "a+"  # the string as it was when the class body ran
    assert "S" not in got and "U" not in got  # len() is no pattern helper; no text past the bound
    assert set(got) == {"A.R"}  # a sum too deep to fold is skipped, never an error


def test_a_count_repeating_bytes_is_an_int_as_one_repeating_a_text_is(tmp_path):
    # review 33, item 7: 6056ebb's bytes rule scored `b"\0" * k` as bytes ({'bytes': 6, 'int': 0.5})
    from coevo.testgen.inputs import InputGenerator

    m, _ = _classes(tmp_path, 'def pad(k):\n    return b"\\0" * k\n\n\ndef dash(k):\n    return "-" * k\n\n\n'
                              'def join(s):\n    return s + b"\\0"\n')
    gen = InputGenerator(m, seed=0)
    kinds = {u.name: gen.specs(u)[0][1].kind for u in m.functions}
    assert kinds["pad"] == kinds["dash"] == "int" and kinds["join"] == "bytes", kinds
