"""The run directory's life: nothing is left by a start that fails (so the corrected command works),
bad devices / paths stop before any work with one line and exit 2, a finished run says so, `coevo
train` ends with its figures, and `coevo demo --out EXISTING` never mixes settings. The heavy
part (`execute`) is replaced by stubs where the test is about the lifecycle around it."""

import json
from pathlib import Path

import pytest

import coevo.run_driver as P
from coevo.cli import main
from coevo.yaml_config import save_config
from matrix.errors import InputError

EVALS = [{"step": 0, "code_acc": 0.25, "test_acc": 0.5, "bon_acc": 0.25, "fix_acc": 0.0, "tasks": 6},
         {"step": 3, "code_acc": 0.5, "test_acc": 0.75, "bon_acc": 0.5, "fix_acc": 0.25, "tasks": 6}]


def one_error_line(capsys, command: str) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"coevo {command}: error: "), err
    return err


@pytest.fixture
def no_work(monkeypatch):
    """`execute` replaced: records its calls, writes what a run writes, returns the evaluations."""
    calls = []

    def fake_execute(cfg, run, *, progress=True):
        calls.append((cfg, Path(run)))
        (run / "eval.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVALS))
        return {"run": {"end_step": cfg.loop.steps}, "evals": EVALS}

    monkeypatch.setattr(P, "execute", fake_execute)
    return calls


@pytest.mark.parametrize("override, message", [
    ("model.path={missing}", "field 'model.path': "),
    ("data.train={missing}", "field 'data.train': no such file or directory"),
    ("train.deepspeed={missing}", "field 'train.deepspeed': no such DeepSpeed config file"),
    ("model.device=gpu", "field 'model.device': 'gpu' is not a device"),
    # a served model the evaluation uses is asked before any work (port 9: nothing listens)
    ("eval.api.base_url=http://127.0.0.1:9/v1", "field 'eval.api.base_url': nothing answers at "
                                               "http://127.0.0.1:9/v1 (ConnectError"),
])
def test_bad_start_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch, override, message):
    def boom(*a, **k):
        raise AssertionError("no work may start before the config is checked")

    monkeypatch.setattr(P, "execute", boom)
    run = tmp_path / "run"
    rc = main(["train", "--out", str(run), override.format(missing=tmp_path / "missing")])
    assert rc == 2 and message in one_error_line(capsys, "train")
    assert not run.exists()


def test_cuda_on_a_machine_without_it_is_refused_before_work(tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(P, "execute", lambda *a, **k: pytest.fail("work started"))
    assert main(["train", "--out", str(tmp_path / "r"), "model.device=cuda"]) == 2
    assert "field 'model.device': 'cuda': no CUDA device is available" in one_error_line(capsys, "train")
    assert not (tmp_path / "r").exists()


def test_a_start_failing_inside_the_run_is_cleaned_up_and_the_fix_works(tmp_path, capsys, monkeypatch, no_work):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task_id": "a", "prompt": "p"\n')  # malformed: found only when the run loads it
    real = P.execute

    def load_then_fail(cfg, run, *, progress=True):
        (run / "init.tmp").mkdir()  # what a half-done start leaves
        P.load_task_files(cfg)
        return real(cfg, run, progress=progress)

    monkeypatch.setattr(P, "execute", load_then_fail)
    run = tmp_path / "run"
    assert main(["train", "--out", str(run), f"data.train={tasks}"]) == 2
    assert "tasks.jsonl:1" in one_error_line(capsys, "train")
    assert not run.exists()  # no config.yaml to block the corrected command
    monkeypatch.setattr(P, "execute", real)
    assert main(["train", "--out", str(run)]) == 0  # the corrected command (stubbed work) runs
    assert (run / "config.yaml").exists() and len(no_work) == 1


def test_a_failed_start_keeps_what_was_there_and_what_is_worth_resuming(tmp_path, monkeypatch):
    run = tmp_path / "run"
    (run / "init").mkdir(parents=True)  # a copied SFT start (the demo's ablation recipe)
    (run / "init" / "config.json").write_text("{}")

    def fail(cfg, run, *, progress=True):
        (run / "scratch").write_text("x")
        raise RuntimeError("boom")

    monkeypatch.setattr(P, "execute", fail)
    with pytest.raises(RuntimeError):
        P.start_run(run, None, [])
    assert sorted(p.name for p in run.iterdir()) == ["init"]

    def fail_after_a_step(cfg, run, *, progress=True):
        (run / "metrics.jsonl").write_text('{"step": 1}\n')
        raise RuntimeError("boom")

    monkeypatch.setattr(P, "execute", fail_after_a_step)
    with pytest.raises(RuntimeError):
        P.start_run(run, None, [])
    assert (run / "config.yaml").exists()  # resumable: kept


def test_train_ends_with_figures_and_paths(tmp_path, capsys, no_work):
    run = tmp_path / "run"
    assert main(["train", "--out", str(run), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # --quiet: nothing but results
    lines = out.splitlines()
    assert lines[0].split() == ["held-out", "(6", "tasks)", "step", "0", "step", "3"]
    assert lines[1].split() == ["code_acc", "0.250", "0.500"]
    assert f"model:   {run / 'model'}" in lines and f"curves:  {run / 'curves.png'}" in lines


def _finished_run(run: Path, steps: int = 3) -> None:
    cfg = P.load_run_config(None, [f"loop.steps={steps}"])
    save_config(cfg, run / "config.yaml")
    (run / "model").mkdir()
    (run / "model" / "config.json").write_text("{}")
    ck = run / "checkpoints" / f"step-{steps:08d}"
    ck.mkdir(parents=True)
    (ck / "meta.json").write_text(json.dumps({"step": steps}))
    (run / "checkpoints" / "latest").write_text(ck.name + "\n")
    (run / "eval.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVALS))
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "loss": 0.1 * s}) + "\n"
                                               for s in range(1, steps + 1)))


def test_resuming_a_finished_run_says_so_without_loading_it(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    _finished_run(run)
    monkeypatch.setattr(P, "execute", lambda *a, **k: pytest.fail("a finished run was loaded again"))
    assert main(["train", "--resume", str(run)]) == 0
    out, err = capsys.readouterr()
    assert "the run is finished (3/3 steps); nothing to do" in err
    assert "code_acc" in out and str(run / "model") in out
    assert (run / "curves.png").exists()  # drawn if it was missing


def test_demo_on_an_existing_dir_refuses_other_settings(tmp_path, capsys, no_work):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--roles", "coder", "--quiet"]) == 0
    saved = (out / "config.yaml").read_text()
    capsys.readouterr()
    for extra in (["--roles", "coder,tester"], ["loop.steps=5"], ["--roles", "coder", "loop.seed=1"]):
        assert main(["demo", "--out", str(out), *extra]) == 2
        err = one_error_line(capsys, "demo")
        assert "already holds a demo started with other settings" in err and "--out" in err
        assert (out / "config.yaml").read_text() == saved
    assert len(no_work) == 1


def test_demo_resumes_as_started_and_labels_with_the_runs_roles(tmp_path, capsys, no_work):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--roles", "coder", "--quiet"]) == 0
    for again in ([], ["--roles", "coder"]):  # the same settings, or none: resume
        assert main(["demo", "--out", str(out), *again]) == 0
        assert "resuming the demo" in capsys.readouterr().err
        assert json.loads((out / "summary.json").read_text())["roles"] == ["coder"]
    assert len(no_work) == 3


@pytest.mark.parametrize("argv", [["train", "--out", "-"], ["demo", "--out", "-"],
                                  ["data", "tinyworld", "--out", "-"]])
def test_out_dash_for_a_directory_is_refused(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "'-' (stdout) cannot hold" in one_error_line(capsys, argv[0])
    assert not (tmp_path / "-").exists()


def test_vllm_backend_without_vllm_or_cuda_is_refused_before_work(tmp_path, capsys, monkeypatch):
    import importlib.util

    import torch

    if importlib.util.find_spec("vllm") is not None and torch.cuda.is_available():
        pytest.skip("vLLM and CUDA are both here")
    monkeypatch.setattr(P, "execute", lambda *a, **k: pytest.fail("work started"))
    assert main(["train", "--out", str(tmp_path / "r"), "rollout.backend=vllm"]) == 2
    assert "<overrides>: field 'rollout.backend': " in one_error_line(capsys, "train")
    assert not (tmp_path / "r").exists()


def test_every_command_that_loads_a_model_refuses_a_missing_device(tmp_path, capsys, monkeypatch):
    import torch

    from roles.model_io import load_model

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")  # a model directory (never loaded: the device is checked first)
    with pytest.raises(InputError, match="field 'device': 'cuda': no CUDA device is available"):
        load_model(model, device="cuda")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task_id": "a", "prompt": "Write f.", "entry_point": "f"}\n')
    assert main(["solve", "--model", str(model), "--tasks", str(tasks), "--out", str(tmp_path / "o.jsonl"),
                 "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("coevo solve: error: ") and "no CUDA device is available" in err[-1], err
    assert not any("Traceback" in line for line in err)
    assert not (tmp_path / "o.jsonl").exists()


def test_a_tiny_world_run_starts_and_resumes_in_one_dtype():
    # a fresh tiny-world model is built in float32; its resume must not reload it as "auto"
    # (bf16 on a GPU), or plain AdamW would go on updating bf16 weights
    from coevo.run_driver import start_dtype
    from coevo.settings import CoevoConfig

    cfg = CoevoConfig()
    assert start_dtype(cfg) == "float32"
    cfg.model.dtype = "bfloat16"
    assert start_dtype(cfg) == "bfloat16"
    cfg.model.path, cfg.model.dtype = "/models/some-model", "auto"
    assert start_dtype(cfg) == "auto"  # a loaded model: bf16 on a GPU, float32 on the CPU, both times


@pytest.mark.parametrize("overrides, own", [
    ([], True),
    (["loop.update=per_role"], False),
    (["loop.top_p=0.9"], False),
    (["vllm"], False),
])
def test_own_sampler_only_where_every_rollout_comes_from_the_current_weights(overrides, own):
    cfg = P.load_run_config(None, [o for o in overrides if o != "vllm"])
    if "vllm" in overrides:  # set by hand: loading the setting checks that vLLM is installed
        cfg.rollout.backend = "vllm"
    assert P.own_sampler(cfg) is own


def test_the_trainer_takes_its_lengths_and_schedule_from_the_loop():
    """Dr. GRPO's constant L (aggregation constant_norm) was each batch's longest completion when
    train.max_completion_length was unset, so the loss scale moved from step to step: the run sets
    it to the sampling limit (loop.max_new_tokens), as Dr. GRPO's paper and TRL do."""
    cfg = P.load_run_config(None, ["train.loss_type=dr_grpo", "loop.max_new_tokens=96", "loop.steps=7",
                                   "loop.temperature=0.8"])
    t = P.trainer_config(cfg)
    assert t.max_completion_length == 96 and t.total_steps == 7 and t.temperature == 0.8
    set_by_user = P.load_run_config(None, ["train.loss_type=dr_grpo", "train.max_completion_length=200"])
    assert P.trainer_config(set_by_user).max_completion_length == 200


def test_a_served_model_that_answers_passes_the_start_check():
    """Any HTTP answer counts (a server without GET /models answers 404): only silence stops a run."""
    import http.server
    import threading

    class NoModels(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NoModels)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        cfg = P.load_run_config(None, [f"eval.api.base_url={base}", "eval.api.model=m"])
        assert cfg.eval.api.base_url == base
    finally:
        server.shutdown()
        server.server_close()
