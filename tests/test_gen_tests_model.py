"""`coevo gen-tests PATH --model M`: the Tester's tests and the Coder's implementations join the
matrix; implementations that agree with each other and not with the code make a suspect."""

import json

import pytest
from tinymodel import ADD_RIGHT, build_memorizing_model

from coevo.cli import main
from coevo.testgen.model import task_for
from coevo.testgen.target import resolve
from matrix.tasks import Test
from roles.prompts import build_prompt, render_code_completion, render_tests_completion

BUGGY = '''def add(a, b):
    """Return the sum of a and b."""
    return a - b


def double(x):
    return 2 * x
'''


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_consensus_of_implementations_flags_the_planted_bug(tmp_path):
    mod = tmp_path / "calc.py"
    mod.write_text(BUGGY)
    (m,) = resolve(str(mod))
    add = next(u for u in m.functions if u.name == "add")
    task = task_for(add, m.name)
    assert task.entry_point == "add" and task.prompt.startswith("Return the sum of a and b.")
    assert "def add(a, b):" in task.prompt
    coder, tester = build_prompt("coder", task, None), build_prompt("tester", task, None)
    model = build_memorizing_model(tmp_path / "model", [
        (coder, render_code_completion(ADD_RIGHT))] * 3 + [
        (tester, render_tests_completion([Test.assertion("assert add(20, 22) == 42")]))] * 2)
    out, report = tmp_path / "out", tmp_path / "report.json"
    rc = main(["gen-tests", str(mod), "--model", model, "--out", str(out), "--time-budget", "8",
               "--n-codes", "3", "--n-tests", "2", "--max-new-tokens", "40", "--temperature", "0",
               "--quiet", "--report", str(report)])
    assert rc == 0
    rep = json.loads(report.read_text())["modules"][0]
    assert rep["model"]["implementations"] >= 1 and rep["model"]["probes_from_tests"] >= 1
    sus = [s for s in rep["suspects"] if s["source"] == "consensus"]
    assert sus, rep["suspects"]
    by_input = {s["input"]: s for s in sus}
    assert "add(20, 22)" in by_input  # the Tester's input, judged by the consensus
    assert by_input["add(20, 22)"]["code_returns"] == "-2" and "42" in by_input["add(20, 22)"]["evidence"]
    text = (out / "test_calc.py").read_text()
    assert "add(20, 22)" not in text  # a suspect is never asserted as the truth
    for s in sus:
        assert s["input"] not in text


# `--api-base` (path mode through a served model): tests/test_served_server.py, where the server that
# test starts is started once per process for every test that uses it.
