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
