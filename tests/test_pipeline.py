"""End to end: `coevo train` on the smoke config, killed with SIGKILL mid-run, resumed."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def coevo(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "coevo", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def steps_logged(run: Path) -> list[int]:
    path = run / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["step"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_train_smoke_killed_and_resumed(tmp_path):
    run = tmp_path / "run"
    proc = coevo("train", "--config", "smoke", "--out", str(run),
                 start_new_session=True)
    deadline = time.time() + 420  # the 400-step warm-up took 51 s on a busy machine (load 10)
    while time.time() < deadline and proc.poll() is None and not steps_logged(run):
        time.sleep(0.2)
    assert proc.poll() is None, proc.stdout.read()
    assert steps_logged(run) == [1]
    os.killpg(proc.pid, signal.SIGKILL)  # the whole process group, executor included
    proc.wait()
    again = coevo("train", "--resume", str(run))
    out, _ = again.communicate(timeout=300)
    assert again.returncode == 0, out
    assert steps_logged(run) == [1, 2, 3]  # every step exactly once
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    rec = recs[-1]
    assert "eval/code_acc" in rec and "loss" in rec
    # a learning signal: some reward group had variance, so the update moved the model
    assert any(r["loss"] != 0 for r in recs)
    assert min(r[k] for r in recs for k in r if k.startswith("frac_zero_std/")) < 1
    # the run ends by saying where things are, and what it reached
    assert f"model:   {run / 'model'}" in out and "code_acc" in out and "Traceback" not in out
    evals = [json.loads(x) for x in (run / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evals] == [0, 3]
    assert (run / "curves.png").stat().st_size > 1000
    from transformers import AutoModelForCausalLM, AutoTokenizer

    AutoModelForCausalLM.from_pretrained(run / "model")
    AutoTokenizer.from_pretrained(run / "model")
    assert len((run / "heldout.jsonl").read_text().splitlines()) == 6
    # a finished run refuses a second start, with a one-line error
    again = coevo("train", "--config", "smoke", "--out", str(run))
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 2 and "already holds a run" in out and "Traceback" not in out
    # and resuming it says it is finished, without loading it again
    again = coevo("train", "--resume", str(run))
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 0 and "the run is finished (3/3 steps)" in out


def test_train_rejects_bad_config_one_line(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("loop:\n  steps: 2\n  tasks_per_stp: 3\n")
    proc = coevo("train", "--config", str(cfg), "--out", str(tmp_path / "r"))
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip() == (f"coevo train: error: {cfg}:3: field 'loop.tasks_per_stp': unknown key; "
                           "did you mean 'tasks_per_step'?")
    assert not (tmp_path / "r" / "config.yaml").exists()
