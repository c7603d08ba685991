import pytest

from coevo.selfplay import (
    GRADE,
    REJECT_REASONS,
    fingerprint,
    static_violations,
    structure_fingerprint,
    task_fingerprints,
    validate_proposals,
)
from matrix.engine import ExecConfig, Executor
from matrix.rewards import PROPOSAL_GRADES
from matrix.tasks import Task


@pytest.fixture(scope="module")
def executor():
    with Executor(ExecConfig(timeout=2.0, workers=2)) as ex:
        yield ex


def proposal(code, inputs, prompt="Return double x.", entry="f"):
    return Task("p", prompt, "function", entry, solutions=[code], meta={"inputs": inputs})


def test_static_violations():
    assert static_violations("def f(x):\n    return x * 2\n") == []
    assert "os" in static_violations("import os\ndef f(x):\n    return os.getpid()\n")
    assert "random" in static_violations("from random import randint\ndef f(x):\n    return randint(0, x)\n")
    assert "open" in static_violations("def f(x):\n    return open('/etc/passwd').read()\n")
    assert "__class__" in static_violations("def f(x):\n    return ().__class__\n")
    assert static_violations("def f(:\n") == ["syntax"]


def test_fingerprint_ignores_formatting():
    assert fingerprint("def f(x):\n    return x+1\n") == fingerprint("def f( x ):\n\n    return (x + 1)\n")
    assert fingerprint("Return  double X.") == fingerprint("return double x.")


def test_structure_fingerprint_sees_through_renaming_but_not_behaviour():
    seed = "def f(xs):\n    xs = [x * 2 for x in xs]\n    return sum(xs)\n"
    renamed = ('def g(values):\n    """Doubles, then sums."""\n    values = [v * 2 for v in values]  # twice\n'
               "    return sum(values)\n")
    assert structure_fingerprint(seed) == structure_fingerprint(renamed)
    assert structure_fingerprint(seed) != structure_fingerprint(seed.replace("sum", "len"))  # free names stay
    assert structure_fingerprint(seed) != structure_fingerprint(seed.replace("* 2", "* 3"))
    other_var = "def f(xs):\n    ys = [x * 2 for x in xs]\n    return sum(ys)\n"  # another program text,
    assert structure_fingerprint(seed) != structure_fingerprint(other_var)  # though the same function
    assert structure_fingerprint("def f(:") == fingerprint("def f(:")  # unparseable: plain fingerprint
    t = Task("t", "", "function", "f", solutions=[seed])
    assert task_fingerprints(t) == {structure_fingerprint(seed)}  # an empty description is no fingerprint


def test_validation_verdicts(executor):
    good = proposal("def f(x):\n    return x * 2\n", ["f(1)", "f(2)", "f(2)", "f(5)"])
    crash = proposal("def f(x):\n    return 1 // (x - 2)\n", ["f(1)", "f(2)"], prompt="Crash.")
    const = proposal("def f(x):\n    return 7\n", ["f(1)", "f(2)"], prompt="Seven.")
    few = proposal("def f(x):\n    return -x\n", ["f(1)"], prompt="Negate.")
    nondet = proposal("def f(x):\n    return len(str(set(['a', 'b', 'c', 'd', 'e'])).split(',')[0]) + "
                      "id(object()) % 7 * 0 + hash(str(x)) % 2\n", ["f(1)", "f(2)"], prompt="Nd.")
    forbidden = proposal("import time\ndef f(x):\n    return time.time()\n", ["f(1)", "f(2)"], prompt="T.")
    copy = proposal("def g(y):\n    return y*2\n", ["f(1)", "f(3)"], prompt="Another doubling.")
    objs = proposal("def f(x):\n    return object()\n", ["f(1)", "f(2)"], prompt="Obj.")
    verdicts = validate_proposals([good, crash, const, few, nondet, forbidden, copy, objs], executor, set())
    reasons = [v.reason for v in verdicts]
    assert reasons == ["ok", "ref_error", "constant", "few_inputs", "forbidden", "forbidden", "repeat",
                       "ref_error"], reasons
    assert verdicts[0].valid and verdicts[0].grade == "valid"
    task = verdicts[0].task
    assert task.meta["inputs"] == ["f(1)", "f(2)", "f(5)"]  # duplicates dropped
    assert [(t.call, t.expected) for t in task.tests] == [("f(1)", "2"), ("f(2)", "4"), ("f(5)", "10")]
    assert verdicts[5].detail == "time"
    # a copy of another proposal of the batch costs as much as a broken task (grade "copy")
    assert [v.grade for v in verdicts[1:]] == ["broken", "degenerate", "broken", "broken", "broken",
                                               "copy", "broken"]
    assert not any(v.valid for v in verdicts[1:])


def test_known_tasks_are_duplicates_even_renamed(executor):
    code = "def f(x):\n    return x + 3\n"
    known = task_fingerprints(Task("k", "Add three to x.", "function", "f", solutions=[code]))
    renamed = proposal("def plus(n):\n    return n + 3\n", ["plus(1)", "plus(2)"], prompt="", entry="plus")
    same_words = proposal("def f(x):\n    return x + 4\n", ["f(1)", "f(2)"], prompt="add THREE to x.")
    verdicts = validate_proposals([renamed, same_words], executor, known)
    assert [(v.valid, v.reason) for v in verdicts] == [(False, "duplicate"), (False, "duplicate")]
    assert [v.grade for v in verdicts] == ["copy", "copy"]


def test_identity_functions_earn_nothing(executor):
    ident = proposal("def f(xs):\n    return list(xs)\n", ["f([1, 2])", "f([3])"], prompt="Copy.")
    second = proposal("def f(a, b):\n    return b if a or True else a\n", ["f(1, 2)", "f(3, 4)"], prompt="B.")
    echo = Task("e", "Echo.", "stdio", None, solutions=["print(input())"], meta={"inputs": ["a\n", "b\n"]})
    not_ident = proposal("def f(xs):\n    return xs[::-1]\n", ["f([1, 2])", "f([3])"], prompt="Rev.")
    verdicts = validate_proposals([ident, second, echo, not_ident], executor, set())
    assert [v.reason for v in verdicts] == ["identity", "identity", "identity", "ok"]


def test_batch_copies_share_the_first_verdict(executor):
    broken = "def f(x):\n    return 1 // 0\n"
    ps = [proposal(broken, ["f(1)", "f(2)"], prompt=""),
          proposal(broken.replace("x", "y"), ["f(3)", "f(4)"], prompt=""),
          proposal("def f(x):\n    return x - 1\n", ["f(1)", "f(2)"], prompt=""),
          proposal("def f(z):\n    return z - 1\n", ["f(5)", "f(6)"], prompt="")]
    verdicts = validate_proposals(ps, executor, set())
    assert [v.reason for v in verdicts] == ["ref_error", "ref_error", "ok", "repeat"]


def test_a_task_without_description_shows_its_first_examples(executor):
    (v,) = validate_proposals([proposal("def f(x):\n    return x * x\n", ["f(2)", "f(3)", "f(4)"], prompt="")],
                              executor, set())
    assert v.valid
    assert v.task.prompt == "Write a function f consistent with these examples:\nf(2) == 4\nf(3) == 9"
    assert len(v.task.tests) == 3  # the shown examples and a hidden one


def test_a_reference_that_hangs_is_a_timeout():
    with Executor(ExecConfig(timeout=0.5, workers=1)) as ex:
        (v,) = validate_proposals([proposal("def f(x):\n    while True:\n        pass\n", ["f(1)", "f(2)"])],
                                  ex, set())
    assert not v.valid and v.reason == "ref_timeout" and v.grade == "broken"


def test_every_reason_has_a_grade():
    assert set(GRADE) == set(REJECT_REASONS)
    assert set(GRADE.values()) <= set(PROPOSAL_GRADES) - {"valid"}


def test_run_report_sums_the_metrics_log(tmp_path):
    import json

    from coevo.rollouts import proposal_metrics
    from coevo.selfplay import run_report

    steps = [["malformed"] * 4, ["ok", "duplicate", "malformed", "malformed"], ["ok", "ok", "heldout", "ok"]]
    with open(tmp_path / "metrics.jsonl", "w") as f:
        for i, reasons in enumerate(steps, 1):
            rec = {"step": i, **proposal_metrics(reasons, []), "curriculum/proposed": float(i),
                   "curriculum/drawn_proposed": 1.0}
            f.write(json.dumps(rec) + "\n")
    r = run_report(tmp_path, last=2)
    assert r["steps"] == 3 and r["proposals"] == 12 and r["accepted"] == 4
    assert r["valid_frac"] == round(4 / 12, 3) and r["valid_frac_last_2"] == 0.5
    assert r["proposed_in_curriculum"] == 3 and r["drawn_proposed"] == 3
    assert r["reject"]["malformed"] == 0.5 and r["reject"]["heldout"] == round(1 / 12, 3)
    assert run_report(tmp_path)["valid_frac_last_20"] == round(4 / 12, 3)  # fewer steps than asked: all
