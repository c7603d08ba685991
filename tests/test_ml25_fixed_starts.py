"""The held-out Fixer on fixed starts (issue 20): the first evaluation of a run keeps its failing
programs (the starts of its repair episodes) in the run directory; every later evaluation repairs
those SAME programs again (``fix_fixed_starts``) beside ``fix_acc``, which repairs the current
Coder's own failing programs (harder after RL). Hand-worked on a canned two-role engine."""

import json

import pytest

import coevo.run_driver as P
from coevo.evaluate import FIXER_STARTS_FILE, EvalConfig, _evaluate, read_fixed_starts
from matrix.engine import ExecConfig, Executor
from matrix.errors import InputError
from matrix.tasks import Task
from roles.generation import Sample

TASK = Task.from_json({"task_id": "inc", "prompt": "Return x + 1.", "kind": "function", "entry_point": "f",
                       "solutions": ["def f(x):\n    return x + 1\n"],
                       "tests": [{"test": t} for t in ("assert f(1) == 2", "assert f(2) == 3", "assert f(0) == 1")]})
RIGHT = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return x if x else 1\n"  # right at 0 only: passes 1 test of 3
ZERO = "def f(x):\n    return 0\n"
HARD = "def f(x):\n    return x * 2\n"


def fenced(code):
    return "```python\n" + code + "```"


class Model:
    """A canned model: the Coder writes ``codes`` (sample i: codes[i]); the Fixer repairs a program
    (the latest one shown) when it is in ``repairs``, and otherwise writes it back unchanged."""

    def __init__(self, codes, repairs):
        self.codes, self.repairs = codes, repairs
        self.fixer_requests = 0

    def generate(self, reqs, progress=False, config=None):
        out = []
        for req in reqs:
            for i in range(req.n):
                if req.role == "coder":
                    text = fenced(self.codes[i])
                else:  # the fixer: its prompt ends with the program to repair and its feedback
                    self.fixer_requests += 1
                    latest = max((c for c in (WRONG, ZERO, HARD, RIGHT) if c in req.prompt), key=req.prompt.rfind)
                    text = fenced(RIGHT if latest in self.repairs else latest)
                out.append(Sample(req.role, req.task_id, None, None, None, text, False, index=i))
        return out


CFG = EvalConfig(n_codes=3, n_tests=0, fix_turns=2, fix_per_task=2, solve_starts=0, mutants=0)


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=2.0, workers=1)) as e:
        yield e


def evaluate(model, ex, starts=None, keep=False):
    return _evaluate(model, None, ex, [TASK], CFG, False, fixer_starts=starts, keep_starts=keep)


def test_first_evaluation_keeps_its_starts_and_later_ones_repair_them(ex, tmp_path):
    starts = tmp_path / FIXER_STARTS_FILE
    # step 0 (the SFT start): the Coder fails with samples 0 (WRONG) and 2 (ZERO); its Fixer repairs
    # WRONG at the first turn, never ZERO (2 turns): fix_acc 1/2, and on its own starts the same
    sft = Model([WRONG, RIGHT, ZERO], repairs={WRONG})
    out = evaluate(sft, ex, starts, keep=True)
    assert out["fix_acc"] == 0.5 and out["fix_fixed_starts"] == 0.5
    # no episode more than fix_acc's: 1 turn for WRONG + 2 for ZERO
    assert sft.fixer_requests == 3
    rows = [json.loads(x) for x in starts.read_text().splitlines()]
    assert [(r["task_id"], r["row"], r["code"]) for r in rows] == [("inc", 0, WRONG.strip()),
                                                                  ("inc", 2, ZERO.strip())]
    assert rows[0]["before"] == pytest.approx(1 / 3) and rows[1]["before"] == 0.0
    assert "f(1) == 2" in rows[0]["feedback"]
    kept = starts.read_bytes()

    # later (after RL): the Coder solves the easy task twice and leaves HARD, which its Fixer cannot
    # repair (fix_acc 0), though it now repairs both kept starts (fix_fixed_starts 1)
    rl = Model([RIGHT, RIGHT, HARD], repairs={WRONG, ZERO})
    out = evaluate(rl, ex, starts)
    assert out["fix_acc"] == 0.0 and out["fix_fixed_starts"] == 1.0
    assert rl.fixer_requests == 2 + 1 + 1  # HARD 2 turns; WRONG, ZERO 1 turn each
    assert starts.read_bytes() == kept  # read, never rewritten


def test_resumed_first_evaluation_uses_the_kept_starts_never_redrawn(ex, tmp_path):
    # a run killed after writing its starts and before logging step 0 evaluates step 0 again:
    # the kept file (here: only WRONG) is what it repairs, whatever the Coder samples now
    starts = tmp_path / FIXER_STARTS_FILE
    starts.write_text(json.dumps({"task_id": "inc", "row": 0, "code": WRONG, "feedback": "f(1) == 2 failed",
                                  "before": 1 / 3}) + "\n")
    kept = starts.read_bytes()
    out = evaluate(Model([ZERO, HARD, RIGHT], repairs={WRONG}), ex, starts, keep=True)
    assert out["fix_acc"] == 0.0 and out["fix_fixed_starts"] == 1.0
    assert starts.read_bytes() == kept


def test_no_figure_without_kept_starts(ex, tmp_path):
    # a later evaluation of a run whose first one kept nothing (older runs): no figure, no file
    starts = tmp_path / FIXER_STARTS_FILE
    out = evaluate(Model([WRONG, RIGHT, ZERO], repairs={WRONG}), ex, starts, keep=False)
    assert out["fix_acc"] == 0.5 and "fix_fixed_starts" not in out and not starts.exists()
    out = evaluate(Model([WRONG, RIGHT, ZERO], repairs={WRONG}), ex)
    assert "fix_fixed_starts" not in out


@pytest.mark.parametrize("line, where", [
    ('{"task_id": "nope", "row": 0, "code": "x", "feedback": "", "before": 0}', "field 'task_id': "),
    ('{"task_id": "inc", "row": 0, "feedback": "", "before": 0}', "field 'code': "),
    ('{"task_id": "inc", "row": "0", "code": "x", "feedback": "", "before": 0}', "field 'row': "),
    ('{"task_id": "inc", "row": 0, "code": "x", "feedback": "", "before": "high"}', "field 'before': "),
    ('{"task_id": "inc", ', ""),
])
def test_damaged_starts_file_is_one_line_error(tmp_path, line, where):
    starts = tmp_path / FIXER_STARTS_FILE
    good = json.dumps({"task_id": "inc", "row": 0, "code": WRONG, "feedback": "", "before": 0.0})
    starts.write_text(good + "\n" + line + "\n")
    with pytest.raises(InputError) as err:
        read_fixed_starts(starts, [TASK])
    assert str(err.value).startswith(f"{starts}:2: {where}")
    assert "\n" not in str(err.value)


def test_summary_and_report_show_the_fixed_starts_figure(tmp_path):
    evals = [{"step": 0, "code_acc": 0.25, "fix_acc": 0.5, "fix_fixed_starts": 0.5, "tasks": 6},
             {"step": 80, "code_acc": 0.5, "fix_acc": 0.25, "fix_fixed_starts": 0.75, "tasks": 6}]
    s = P.summarize(evals)
    assert s["before"]["fix_fixed_starts"] == 0.5 and s["after"]["fix_fixed_starts"] == 0.75
    lines = P.report_lines(tmp_path, evals)
    assert any(x.split() == ["fix_fixed_starts", "0.500", "0.750"] for x in lines)


@pytest.mark.timeout(300)
def test_a_run_keeps_its_first_evaluations_starts_and_a_resumed_run_reads_them(tmp_path, capsys):
    """`coevo train` on a model built here (it writes the add task's right and wrong programs):
    the first evaluation writes RUN_DIR/fixer_starts.jsonl (its failing programs); the run resumed
    for more steps leaves it byte for byte and reports fix_fixed_starts at every evaluation."""
    from tinymodel import ADD_GOOD_TESTS, ADD_RIGHT, ADD_TASK, build_add_model

    from coevo.cli import main

    model = build_add_model(tmp_path / "m")
    task = dict(ADD_TASK, tests=[{"test": t} for t in ADD_GOOD_TESTS], solutions=[ADD_RIGHT])
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(task) + "\n")
    run = tmp_path / "run"
    rc = main(["train", "--out", str(run), f"model.path={model}", f"data.train={tasks}", f"data.heldout={tasks}",
               "loop.steps=1", "loop.eval_every=1", "loop.tasks_per_step=1", "loop.n_codes=4", "loop.n_tests=2",
               "loop.roles=[coder,tester]", "loop.max_new_tokens=40", "eval.n_codes=8", "eval.n_tests=0",
               "eval.mutants=0", "eval.max_new_tokens=40", "execution.workers=1", "model.threads=1"])
    assert rc == 0, capsys.readouterr().err
    kept = (run / FIXER_STARTS_FILE).read_bytes()
    rows = [json.loads(x) for x in kept.decode().splitlines()]
    assert rows and all(r["task_id"] == "add" and r["code"] != ADD_RIGHT for r in rows)
    first = [json.loads(x) for x in (run / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in first] == [0, 1] and first[0]["fix_fixed_starts"] == first[0]["fix_acc"]
    cfg_file = run / "config.yaml"
    cfg_file.write_text(cfg_file.read_text().replace("  steps: 1\n", "  steps: 2\n"))
    assert main(["train", "--resume", str(run)]) == 0, capsys.readouterr().err
    assert (run / FIXER_STARTS_FILE).read_bytes() == kept
    evals = [json.loads(x) for x in (run / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evals] == [0, 1, 2] and all("fix_fixed_starts" in e for e in evals)
    assert "fix_fixed_starts" in capsys.readouterr().out


def test_the_demos_help_says_what_the_two_fixer_figures_measure():
    from coevo.commands.demo_cmd import DESCRIPTION

    text = " ".join(DESCRIPTION.split())
    assert "fix_fixed_starts repairs the first evaluation's failing programs again" in text
    assert f"DIR/{FIXER_STARTS_FILE}" in text
