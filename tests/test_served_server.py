"""`coevo solve` and `coevo eval` end to end through a real OpenAI-compatible server:
`transformers serve` (the `serving` extra) on 127.0.0.1, serving a tiny model that the test builds
and saves (tests/tinymodel.py's `add` model, taught to answer the `add` task with an even mix of
right and wrong programs, plus right tests and one wrong test).

The saved model gets the tiny world's plain-format chat template (so the chat endpoint sees the
plain prompt token for token) and ``do_sample: true`` in its generation config (`transformers
serve` samples only when the model's generation config says so). `transformers serve` ignores
``n``, so these runs also exercise the client's fallback to repeated requests.

The server is started once per test process (bounded: it must be up, with the model loaded,
within 90 s) and stopped at exit. Every test that needs it is in this file (`coevo gen-tests
--api-base` in both its modes at the end, once tests/test_gen_tests_model.py and
tests/test_served_gen_tests.py): under `pytest -n 2 --dist loadfile` those files ran in the other
process too, which started a second server (about 25 s under load).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

START_TIMEOUT_S = 90.0
_SERVER: dict = {}


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own process group: the server and nothing else
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def served_add_model() -> tuple[str, str]:
    """``(base_url, model_dir)`` of `transformers serve` serving the taught `add` model (started on
    first use, stopped at exit). The server starts while the model is being built (both take
    seconds), and loads the model on a first request."""
    if "base" in _SERVER:
        if _SERVER["proc"].poll() is not None:
            pytest.fail("the transformers server died:\n" + _log_tail())
        return _SERVER["base"], _SERVER["model"]
    from tinymodel import build_add_model
    from transformers import GenerationConfig

    from coevo.tinyworld.tokenizer import add_plain_chat_template

    root = Path(tempfile.mkdtemp(prefix="coevo-served-"))
    atexit.register(shutil.rmtree, root, True)
    port = _free_port()
    log = open(root / "server.log", "wb")
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE",
               TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", "--host",
                             "127.0.0.1", "--port", str(port), "--device", "cpu", "--model-timeout", "3600"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True)
    atexit.register(_stop, proc)
    _SERVER.update(proc=proc, log=root / "server.log")
    deadline = time.monotonic() + START_TIMEOUT_S
    model = build_add_model(root / "add")
    add_plain_chat_template(model)
    gc = GenerationConfig.from_pretrained(model)
    gc.do_sample = True
    gc.save_pretrained(model)
    base = f"http://127.0.0.1:{port}/v1"
    while not _answers(f"http://127.0.0.1:{port}/health"):
        if proc.poll() is not None:
            pytest.fail("transformers serve exited during start:\n" + _log_tail())
        if time.monotonic() > deadline:
            _stop(proc)
            pytest.fail(f"transformers serve did not answer within {START_TIMEOUT_S:.0f} s:\n" + _log_tail())
        time.sleep(0.25)
    # the first request loads the model
    body = json.dumps({"model": model, "prompt": "<|role|>coder\n", "max_tokens": 1}).encode()
    req = urllib.request.Request(base + "/completions", data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=max(5.0, deadline - time.monotonic())) as r:
            assert r.status == 200
    except OSError as exc:
        _stop(proc)
        pytest.fail(f"transformers serve could not load the model ({exc}):\n" + _log_tail())
    _SERVER.update(base=base, model=model)
    return base, model


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _log_tail() -> str:
    try:
        return _SERVER["log"].read_text(errors="replace")[-3000:]
    except (KeyError, OSError):
        return "(no log)"


def add_tasks_file(path: Path) -> str:
    from tinymodel import ADD_GOOD_TESTS, ADD_RIGHT, ADD_TASK

    task = dict(ADD_TASK, tests=[{"test": t} for t in ADD_GOOD_TESTS], solutions=[ADD_RIGHT])
    path.write_text(json.dumps(task) + "\n")
    return str(path)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _details(path: Path) -> dict:
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    return row


@pytest.mark.timeout(240)
def test_greedy_answers_through_the_server_are_the_in_process_ones(tmp_path, monkeypatch, capsys):
    from coevo.cli import main

    base, model = served_add_model()
    monkeypatch.setenv("COEVO_API_CACHE", str(tmp_path / "cache"))
    tasks = add_tasks_file(tmp_path / "tasks.jsonl")
    common = ["--tasks", tasks, "--n-codes", "2", "--n-tests", "2", "--temperature", "0",
              "--max-new-tokens", "48", "--consensus-inputs", "0", "--quiet"]
    runs = {"in-process": ["--model", model],
            "chat endpoint, plain prompt": ["--api-base", base, "--api-model", model, "--api-prompt", "plain"],
            "completions endpoint": ["--api-base", base, "--api-model", model, "--api-endpoint", "completions"]}
    got = {}
    for name, argv in runs.items():
        out = tmp_path / f"{len(got)}.jsonl"
        rc = main(["solve", "--out", str(out), "--details", str(tmp_path / f"d{len(got)}.jsonl")] + argv + common)
        assert rc == 0, (name, capsys.readouterr().err)
        got[name] = _details(tmp_path / f"d{len(got)}.jsonl")
    ref = got["in-process"]
    assert ref["codes"] and ref["tests"]  # the taught model answers in format
    for name, d in got.items():
        # the same prompt token ids reach the model through the plain-format chat template and
        # through /v1/completions, so greedy decoding writes the same programs and tests
        assert (d["codes"], d["tests"]) == (ref["codes"], ref["tests"]), name


@pytest.mark.timeout(240)
def test_solve_and_eval_sample_through_the_server_and_rerun_from_the_cache(tmp_path, monkeypatch, capsys):
    from tinymodel import ADD_BAD_TEST, ADD_GOOD_TESTS, ADD_RIGHT

    from coevo.cli import main

    base, model = served_add_model()
    monkeypatch.setenv("COEVO_API_CACHE", str(tmp_path / "cache"))
    tasks = add_tasks_file(tmp_path / "tasks.jsonl")
    served = ["--api-base", base, "--api-model", model, "--api-prompt", "plain", "--api-concurrency", "1",
              "--tasks", tasks, "--temperature", "1.0", "--top-p", "1.0", "--max-new-tokens", "48",
              "--consensus-inputs", "0"]
    solve = ["solve", "--out", str(tmp_path / "codes.jsonl"), "--details", str(tmp_path / "d.jsonl"),
             "--n-codes", "6", "--n-tests", "4"] + served
    assert main(solve) == 0
    err = capsys.readouterr().err
    assert "the server ignored n: repeated requests instead" in err and "10 requests" in err
    used = re.search(r"tokens used: (\d+) prompt \+ (\d+) completion", err)
    assert used and int(used.group(1)) > 0 and int(used.group(2)) > 0  # the server's usage, summed
    d = _details(tmp_path / "d.jsonl")
    assert ADD_RIGHT in d["codes"] and d["code"] == ADD_RIGHT  # selection found the right program
    assert d["n_code_samples"] == 6 and d["n_test_samples"] == 4
    def right(test: str) -> bool:  # `assert add(a, b) == c` with a + b == c
        m = re.fullmatch(r"assert add\((-?\d+), *(-?\d+)\) *== *(-?\d+)", test.strip())
        return m is not None and int(m[1]) + int(m[2]) == int(m[3])

    assert right(ADD_GOOD_TESTS[0]) and not right(ADD_BAD_TEST)
    # a wrong test is scored as wrong: the taught ADD_BAD_TEST, or another one the tiny model
    # samples at temperature 1 (which ones depends on the CPU's floating-point kernels)
    for t, score in zip(d["tests"], d["test_scores"]):
        assert (score < 0.5) == (not right(t["test"])), (t["test"], score)
    # the same command again: every answer from the cache, nothing sent
    assert main(solve) == 0
    err = capsys.readouterr().err
    assert "0 requests, 10 answers from the cache" in err
    assert _details(tmp_path / "d.jsonl") == d
    # coevo eval samples through the server too (another seed: new requests)
    report = tmp_path / "report.json"
    assert main(["eval", "--out", str(report), "--n-codes", "6", "--n-tests", "2", "--seed", "1",
                 "--k", "1", "--mutants", "0", "--no-consensus", "--quiet"] + served[:-2]) == 0
    rep = json.loads(report.read_text())
    assert rep["sampling"]["backend"] == "served" and rep["sampling"]["stats"]["requests"] == 8
    (row,) = rep["per_task"]
    assert rep["n_codes"] == 6 and rep["pass_at_k"]["1"] == pytest.approx(row["n_correct"] / 6, abs=1e-5)
    assert row["n_correct"] > 0 and rep["best_of_n"]["coevo"] == 1.0


# ---------------------------------------------------------------- coevo gen-tests --api-base (last: the
# path-mode test sets torch to one thread for the rest of this module)

BUGGY = '''def add(a, b):
    """Return the sum of a and b."""
    return a - b


def double(x):
    return 2 * x
'''


def _gen_tests_takes_api_base() -> bool:
    from coevo.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions:  # the subcommands
        sub = action.choices.get("gen-tests")
        if sub is not None:
            return any("--api-base" in a.option_strings for a in sub._actions)
    return False


@pytest.mark.skipif(not _gen_tests_takes_api_base(), reason="coevo gen-tests does not accept --api-base yet")
@pytest.mark.timeout(240)
def test_gen_tests_through_the_server_keeps_the_right_tests(tmp_path, monkeypatch, capsys):
    import torch
    from tinymodel import ADD_BAD_TEST, ADD_GOOD_TESTS

    from coevo.cli import main

    base, model = served_add_model()
    monkeypatch.setenv("COEVO_API_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "suite"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rc = main(["gen-tests", "--api-base", base, "--api-model", model, "--api-prompt", "plain",
                   "--api-concurrency", "1", "--tasks", add_tasks_file(tmp_path / "tasks.jsonl"),
                   "--out", str(out), "--n-codes", "6", "--n-tests", "4", "--temperature", "1.0",
                   "--top-p", "1.0", "--max-new-tokens", "48", "--consensus-inputs", "0",
                   "--min-score", "0.5"])  # six samples of a toy model: the right tests score ~0.6
    finally:
        torch.set_num_threads(threads)
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "requests" in err and "tokens used" in err  # the served backend's summary line
    kept = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()]
    assert kept and all(r["test"] in ADD_GOOD_TESTS and r["score"] >= 0.5 for r in kept)
    assert ADD_BAD_TEST not in (out / "test_add.py").read_text()


@pytest.mark.usefixtures("one_torch_thread")
def test_path_mode_samples_from_a_served_model(tmp_path, monkeypatch):
    """`--api-base`: the same model side through an OpenAI-compatible server (the one
    above); its answers to these prompts are garbage, and the run
    still writes a passing suite and says what the model gave."""
    from coevo.cli import main

    base, model = served_add_model()
    monkeypatch.setenv("COEVO_API_CACHE", str(tmp_path / "cache"))
    mod = tmp_path / "calc.py"
    mod.write_text(BUGGY)
    report = tmp_path / "report.json"
    rc = main(["gen-tests", str(mod), "--api-base", base, "--api-model", model, "--api-prompt", "plain",
               "--api-concurrency", "1", "--out", str(tmp_path / "out"), "--time-budget", "6", "--n-codes", "2",
               "--n-tests", "2", "--max-new-tokens", "24", "--quiet", "--report", str(report)])
    assert rc == 0
    rep = json.loads(report.read_text())["modules"][0]
    assert rep["model"]["code_samples"] == 4 and rep["model"]["test_samples"] == 4  # 2 functions x 2
    assert rep["tests_kept"] >= 1 and (tmp_path / "out" / "test_calc.py").exists()
