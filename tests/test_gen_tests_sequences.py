"""gen-tests' method sequences on a stateful class: a later call takes the value an earlier call
gave a parameter of the same name (the key put in is the key taken out), so the path where
`remove(name)` finds what `add(name)` stored is reached and asserted."""

import os
import re
import shutil
import subprocess
import sys

from gentests_specs import FIXTURES, fixture_module

from coevo.cli import main


def _adds_then_removes_the_same(probe) -> bool:
    calls = [s for s in probe.steps if s.kind == "call"]
    return any(a.callee.endswith(".add") and b.callee.endswith(".remove") and a.args and a.args[:1] == b.args[:1]
               for a, b in zip(calls, calls[1:]))


def test_a_pair_of_methods_sharing_a_parameter_name_is_also_tried_with_one_value():
    _, gen = fixture_module("gentests_lead", "inventory")
    seqs = gen.sequences("Inventory")
    assert any(_adds_then_removes_the_same(p) for p in seqs), [p.source() for p in seqs]


def test_the_suite_of_a_stateful_class_asserts_a_remove_that_finds_its_item(tmp_path):
    shutil.copy(FIXTURES / "gentests_lead" / "inventory.py", tmp_path / "inventory.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "inventory.py"), "--out", str(out), "--time-budget", "12",
                 "--quiet"]) == 0
    text = (out / "test_inventory.py").read_text()
    # a test where remove finds the item add stored: same name, and no KeyError expected of it
    tests = re.split(r"\n(?=def test_)", text)
    # (any name the test added: `add('a'); add('hello'); remove('hello') == 0` finds its item too)
    found = [t for t in tests if "KeyError" not in t
             and any(f".remove({name}" in t for name in re.findall(r"\.add\(('[^']*')", t))]
    assert found, text
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:]


def test_a_function_reading_a_table_gets_a_file_with_its_columns(tmp_path):
    """`summarize(path)` reads a CSV and sums row["amount"] by row["region"]: the files the tests
    wrote held the module's words as lines ('region hello'), never a header with its column
    names, so no test reached a summary (every call raised KeyError or returned {})."""
    _, gen = fixture_module("gentests_lead", "sales")
    unit = next(u for u in gen.module.units if u.name == "summarize")
    texts = [s.args[0] for p in gen.file_probes(unit) for s in p.steps if s.kind == "file"]
    assert any("region,amount" in t or "amount,region" in t for t in texts), texts
    shutil.copy(FIXTURES / "gentests_lead" / "sales.py", tmp_path / "sales.py")
    out = tmp_path / "tests"
    assert main(["gen-tests", str(tmp_path / "sales.py"), "--out", str(out), "--time-budget", "12", "--quiet"]) == 0
    text = (out / "test_sales.py").read_text()
    assert re.search(r"assert summarize\([^)]*\) == \{\s*'", text), text
