"""``kill -9`` at the worst moments, then resume: every step logged exactly once, same final weights.

A subprocess runs a resumable loop (:func:`training.runner.run_loop`) over a tiny model whose
rollouts are drawn from the global python/numpy/torch RNGs (so the RNG checkpointing matters) and
which keeps a little "curriculum" state. It SIGKILLs itself in the middle of writing a checkpoint,
then after a checkpoint folder is in place but before the ``latest`` pointer moved; then the
parent kills it from outside at a random moment (mostly inside a step, past the last checkpoint).
The finished run must match an uninterrupted one (run in this process) step by step and bitwise.

Each run is a process of its own, forked from a "zygote" process that imported torch and
transformers once (and ran nothing else): four fresh interpreters spent 3-7 s each on those imports.
"""

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
TOTAL = 9

SCRIPT = r'''
import os, random, signal, sys
import numpy as np
import torch

torch.set_num_threads(1)
run_dir, total, kill = sys.argv[1], int(sys.argv[2]), sys.argv[3]
what, _, at = kill.partition(":")
at = int(at) if at else -1

from transformers import LlamaConfig, LlamaForCausalLM

from training import checkpoint as ckpt
from training.config import GRPOConfig
from training.rollout import Rollout
from training.runner import run_loop
from training.trainer import PolicyTrainer

random.seed(1); np.random.seed(1); torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=128))
trainer = PolicyTrainer(model, GRPOConfig(lr=1e-2, micro_batch_size=4, adam_eps=1e-4), pad_token_id=0)


class Curriculum:
    def __init__(self):
        self.solved = {}

    def state_dict(self):
        return {"solved": dict(self.solved)}

    def load_state_dict(self, s):
        self.solved = dict(s["solved"])


cur = Curriculum()
now = {"step": 0}


def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def step_fn(step):
    now["step"] = step
    if what == "step" and step == at:
        die()
    if what == "sleep":
        import time; time.sleep(0.3)
    rollouts = []
    for t in range(3):
        task = f"t{random.randrange(5)}"
        prompt = torch.randint(2, 64, (int(np.random.randint(2, 6)),)).tolist()
        for k in range(4):
            comp = torch.randint(2, 64, (int(np.random.randint(1, 8)),)).tolist()
            rollouts.append(Rollout(prompt, comp, [], float(np.random.randint(0, 2)), f"coder/{task}.{t}", "coder"))
    m = trainer.step(rollouts)
    cur.solved[f"s{step}"] = sum(r.reward for r in rollouts)
    m["curriculum"] = float(sum(cur.solved.values()))
    return m


if what == "save":
    real_save = trainer.save_checkpoint

    def save(d):
        real_save(d)
        if now["step"] == at:
            die()  # half-written checkpoint: still in .tmp-step-*

    trainer.save_checkpoint = save
if what == "pointer":
    real_pointer = ckpt.write_text_atomic

    def pointer(path, text):
        if text.strip() == ckpt.step_name(at):
            die()  # the folder is renamed into place, the pointer still names the previous one
        real_pointer(path, text)

    ckpt.write_text_atomic = pointer
run_loop(run_dir, total, step_fn, trainer=trainer, state={"curriculum": cur}, save_every=2, keep=2,
         progress=False)
torch.save(torch.cat([p.detach().reshape(-1) for p in trainer.model.parameters()]),
           os.path.join(run_dir, "final.pt"))
'''


# Imports the modules once, then per line of stdin (``[script, run_dir, total, kill, log]``) forks a
# child that runs ``script`` as __main__ with that argv, its stdout and stderr in ``log``; says
# {"pid": ...} when the child started and {"status": ...} (as Popen.returncode) when it ended.
ZYGOTE = r'''
import json, os, runpy, sys, traceback
import numpy, torch, transformers  # noqa: F401
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: F401
from training import checkpoint, config, rollout, runner, trainer  # noqa: F401

for line in sys.stdin:
    argv = json.loads(line)
    log = argv.pop()
    pid = os.fork()
    if pid == 0:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        code = 0
        try:
            sys.argv = argv
            runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
'''


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Run:
    """One run of the script, a child of the zygote: ``pid``, ``poll()``, ``wait()``, ``log()``."""

    def __init__(self, zygote, pid, log):
        self.zygote, self.pid, self.log_path, self.returncode = zygote, pid, log, None

    def poll(self):
        if self.returncode is None:
            try:
                self.returncode = self.zygote.lines.get_nowait()["status"]
            except queue.Empty:
                pass
        return self.returncode

    def wait(self, timeout):
        if self.returncode is None:
            self.returncode = self.zygote.lines.get(timeout=timeout)["status"]
        return self.returncode

    def log(self):
        return Path(self.log_path).read_text(errors="replace")


class Zygote:
    def __init__(self, script, tmp):
        self.script, self.tmp, self.n = script, tmp, 0
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=_env())
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def start(self, run_dir, kill):
        self.n += 1
        log = self.tmp / f"run{self.n}.log"
        self.proc.stdin.write(json.dumps([str(self.script), str(run_dir), str(TOTAL), kill, str(log)]) + "\n")
        self.proc.stdin.flush()
        return Run(self, self.lines.get(timeout=120)["pid"], log)

    def close(self):  # its runs have ended: nothing of the zygote's own is left to finish
        self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


def _run(zygote, run_dir, kill="none"):
    run = zygote.start(run_dir, kill)
    run.wait(timeout=300)
    return run


def _steps(run_dir):
    return [json.loads(line)["step"] for line in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()]


def _records(run_dir):
    return {json.loads(x)["step"]: json.loads(x) for x in (Path(run_dir) / "metrics.jsonl").read_text().splitlines()}


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    p = tmp_path_factory.mktemp("kill") / "loop.py"
    p.write_text(SCRIPT)
    return p


@pytest.fixture(scope="module")
def zygote(script, tmp_path_factory):
    z = Zygote(script, tmp_path_factory.mktemp("logs"))
    yield z
    z.close()


@pytest.fixture(scope="module")
def reference(script, tmp_path_factory):
    """The uninterrupted run, in this process (saves a interpreter start; same kernels, 1 thread)."""
    import runpy

    run_dir = tmp_path_factory.mktemp("ref")
    argv, threads = sys.argv, torch.get_num_threads()
    sys.argv = [str(script), str(run_dir), str(TOTAL), "none"]
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
        torch.set_num_threads(threads)
    return run_dir


def _check_same_as_reference(run_dir, reference):
    assert _steps(run_dir) == list(range(1, TOTAL + 1))
    torch.testing.assert_close(torch.load(Path(run_dir) / "final.pt"), torch.load(reference / "final.pt"),
                               atol=0, rtol=0)
    ours, ref = _records(run_dir), _records(reference)
    for s in range(1, TOTAL + 1):  # same values, step by step: the resumed steps replayed the same work
        for k in ("loss", "curriculum", "grad_norm", "reward/coder", "tokens"):
            assert ours[s][k] == ref[s][k], (s, k)
    names = sorted(p.name for p in (Path(run_dir) / "checkpoints").iterdir())
    assert names == ["latest", f"step-{TOTAL - 1:08d}", f"step-{TOTAL:08d}"]


def test_kill9_at_the_worst_moments_then_resume(zygote, reference, tmp_path):
    run_dir = tmp_path / "run"
    # 1. killed while writing checkpoint 4: steps 1-4 logged, latest is 2 -> lines 3, 4 are dropped and rerun
    p = _run(zygote, run_dir, "save:4")
    assert p.returncode == -signal.SIGKILL, p.log()[-3000:]
    assert _steps(run_dir) == [1, 2, 3, 4]
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "step-00000002"
    assert (run_dir / "checkpoints" / ".tmp-step-00000004").exists()
    # 2. resumes at 3, killed after checkpoint 6 is in place but before the pointer moved
    p = _run(zygote, run_dir, "pointer:6")
    assert p.returncode == -signal.SIGKILL, p.log()[-3000:]
    assert _steps(run_dir) == [1, 2, 3, 4, 5, 6]
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "step-00000004"
    assert (run_dir / "checkpoints" / "step-00000006").exists()
    # 3. resumes at 5 (step 5's and 6's lines dropped), killed from outside at a random moment after step 6 is logged
    launched = time.time()
    proc = zygote.start(run_dir, "sleep")
    metrics = run_dir / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:  # wait for the *new* line of step 6
        lines = metrics.read_text().splitlines()
        try:
            last = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            last = {}
        if last.get("step") == 6 and last.get("time", 0) > launched:
            break
        time.sleep(0.02)
    time.sleep(random.uniform(0.0, 0.6))  # inside step 7 or 8, or while checkpoint 8 is written
    assert proc.poll() is None, proc.log()[-3000:]  # still running: the pid is still its own
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    assert 6 <= len(_steps(run_dir)) < TOTAL
    # 4. resumes and finishes
    p = _run(zygote, run_dir)
    assert p.returncode == 0, p.log()[-3000:]
    _check_same_as_reference(run_dir, reference)
