"""Building a run from a :class:`~coevo.settings.CoevoConfig` and driving it to the end.

``start_run`` / ``resume_run`` (``coevo train``) and ``coevo demo`` share :func:`execute`:

1. **tasks**: ``data.train`` / ``data.heldout`` files (any format :mod:`coevo.data` reads), or the
   tiny world (``coevo.tinyworld``) when ``data.train`` is empty;
2. **model**: ``model.path`` (a local ``save_pretrained`` directory), or the tiny world's model:
   tokenizer trained locally, Llama-style model from scratch, SFT warm-up. The starting point is
   saved once to ``RUN_DIR/init`` (atomically), so a resumed run never repeats the warm-up; a
   model of the user's is not copied there (a 7B model would be 15 GB more per run): ``init``
   names its directory and what its files were (:data:`SOURCE_FILE`), and a resumed run loads it
   from there, refusing it if it has changed;
3. **the loop**: :class:`coevo.loop.CoEvolution` stepped over a :class:`training.runner.ResumableRun`
   (atomic checkpoints of model + optimizer + RNG + curriculum + step, ``metrics.jsonl`` with
   each step exactly once, progress bar with ETA). Held-out evaluation runs before the first step
   (``eval.jsonl``, step 0) and every ``loop.eval_every`` steps; its figures are logged in that
   step's metrics line as ``eval/*``;
4. **export**: ``RUN_DIR/model`` (``save_pretrained`` + tokenizer), ``RUN_DIR/heldout.jsonl``
   (tasks contract) and ``RUN_DIR/curves.png``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

from coevo.settings import CoevoConfig
from coevo.yaml_config import load_config, save_config
from matrix.errors import InputError
from matrix.jsonl import append_jsonl, read_jsonl, write_jsonl_atomic
from matrix.tasks import Task, load_tasks
from roles.model_io import check_device
from training.plot import CURVES_FILE

EVAL_FILE = "eval.jsonl"
CONFIG_FILE = "config.yaml"
MODEL_DIR = "model"
# config fields that name files: relative ones resolve against the config file (coevo.yaml_config)
PATH_FIELDS = ("model.path", "data.train", "data.heldout", "train.deepspeed")
# what a failed start may leave behind: anything worth resuming (the SFT start, a step, an evaluation)
_DURABLE = ("init", "checkpoints", "metrics.jsonl", EVAL_FILE)
SOURCE_FILE = "source.json"  # RUN_DIR/init/source.json: the user's model a run started from

log = logging.getLogger("coevo")


def _say(msg: str) -> None:
    """A status line on stderr (``[coevo] ...``; the CLI drops them with ``--quiet``)."""
    log.info(msg)


# ----------------------------------------------------------------------------- entry points

def load_run_config(config: str | Path | None, overrides: list[str] | None = None, *,
                    check: bool = True) -> CoevoConfig:
    """The run configuration from a config file (a path or a shipped name) and overrides. With
    ``check``, everything a run needs before it can start is validated here, before any work: the
    device exists, the model directory, task files and DeepSpeed JSON are there (errors name the
    config file, line and field)."""
    checks = {"model.device": check_device, "model.path": _check_model_dir, "data.train": _check_exists,
              "data.heldout": _check_exists, "train.deepspeed": _check_deepspeed_json,
              "rollout.backend": _check_rollout_backend, "eval.api.base_url": _check_api_server} if check else None
    cfg = load_config(CoevoConfig, config, overrides, paths=PATH_FIELDS, checks=checks)
    if check and cfg.eval.api.base_url:
        _check_api_key_env(cfg.eval.api.key_env)
    return cfg


def _check_exists(path: str) -> None:
    if not Path(path).exists():
        raise ValueError(f"no such file or directory: {path}")


def _check_model_dir(path: str) -> None:
    """What ``load_model`` takes (:func:`roles.model_io.resolve_model_dir`): a save_pretrained
    directory, or a directory an earlier ``coevo train`` run wrote (the run, its checkpoints)."""
    try:
        resolve_start_source(path)
    except InputError as exc:
        raise ValueError(f"{path}: {exc.message}; nothing is downloaded from a hub") from None


def resolve_start_source(path: str) -> Path:
    """The weights directory a run given ``model.path`` starts from (what ``init/source.json``
    records, so that a resume checks those files)."""
    from roles.model_io import resolve_model_dir

    return resolve_model_dir(path)[0]


def _check_deepspeed_json(path: str) -> None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no such DeepSpeed config file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a DeepSpeed JSON config ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a DeepSpeed JSON config (not a JSON object)")


def _check_api_server(base_url: str) -> None:
    """A served model the evaluation uses must answer before any work starts (the run failed at
    its first evaluation, after setup and the tiny world's SFT, leaving a run directory behind)."""
    if not base_url:
        return
    from roles.api_client import unreachable

    why = unreachable(base_url)
    if why is not None:
        raise ValueError(f"nothing answers at {base_url} ({why}): start the server first, or leave "
                         "eval.api.base_url empty")


def _check_api_key_env(name: str) -> None:
    """A key variable the evaluation's served model is to use must be set before any work starts (its
    value is never shown); only where a served model is named (eval.api.base_url)."""
    from roles.api_config import key_env_unset

    if key_env_unset(name):
        raise InputError(f"the environment variable {name} (named as the API key) is not set or empty",
                         field="eval.api.key_env")


def _check_rollout_backend(backend: str) -> None:
    if backend == "vllm":
        from roles.vllm_engine import require_vllm

        try:
            require_vllm()
        except InputError as exc:
            raise ValueError(exc.message) from None


def _is_main_process() -> bool:
    """Rank 0 of a launcher's ranks (``deepspeed``, ``torchrun`` set RANK), or a single process."""
    return os.environ.get("RANK", "0") == "0"


def start_run(run_dir: str | Path, config_path: str | None, overrides: list[str], *, progress: bool = True) -> dict:
    """A new run in ``run_dir``. The config is validated before anything is written; a start that
    fails before producing anything worth resuming (see ``_DURABLE``) removes what it wrote, so
    the corrected command works as it is."""
    cfg = load_run_config(config_path, overrides)
    run = Path(run_dir)
    if run.exists() and not run.is_dir():
        raise InputError("is not a directory", file=str(run))
    main = _is_main_process()
    if main and (run / CONFIG_FILE).exists():
        raise InputError("already holds a run; continue it with --resume or choose another --out",
                         file=str(run))
    before = set(os.listdir(run)) if run.is_dir() else None
    if main:
        save_config(cfg, run / CONFIG_FILE)
    try:
        result = execute(cfg, run, progress=progress)
    except BaseException:
        if main:
            _undo_failed_start(run, before)
        raise
    return {**result, "config": cfg}


def _undo_failed_start(run: Path, before: set[str] | None) -> None:
    """Remove what a failed start wrote into ``run`` unless it made something worth resuming."""
    try:
        new = set(os.listdir(run)) - (before or set())
    except OSError:
        return
    if any(name in new for name in _DURABLE):
        return
    for name in new:
        path = run / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if before is None:
        try:
            run.rmdir()
        except OSError:
            pass


def resume_run(run_dir: str | Path, *, progress: bool = True) -> dict:
    """Continue the run in ``run_dir``; a finished run is not loaded again (``result["finished"]``)."""
    run = Path(run_dir)
    if not (run / CONFIG_FILE).exists():
        raise InputError("is not a run directory (no config.yaml)", file=str(run))
    cfg = load_run_config(run / CONFIG_FILE)
    done = finished_steps(run, cfg)
    if done is not None:
        _say(f"{run}: the run is finished ({done}/{cfg.loop.steps} steps); nothing to do")
        if not (run / CURVES_FILE).exists():
            _draw_curves(run, read_evals(run))
        return {"run": None, "evals": read_evals(run), "config": cfg, "finished": True}
    return {**execute(cfg, run, progress=progress), "config": cfg}


def finished_steps(run: Path, cfg: CoevoConfig) -> int | None:
    """The last step of a finished run (its final checkpoint is in and the model exported), else None."""
    from training.checkpoint import load_latest

    if not (run / MODEL_DIR / "config.json").is_file():
        return None
    try:
        info = load_latest(run)
    except FileNotFoundError:
        return None
    return info.step if info is not None and info.step >= cfg.loop.steps else None


# ----------------------------------------------------------------------------- building blocks

def configure_torch(cfg: CoevoConfig) -> None:
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # save_pretrained's shard bars would drown our progress bar
    if not torch.cuda.is_available():
        # DeepSpeed (which accelerate imports inside save_pretrained) otherwise guesses the
        # accelerator and announces on stdout that it chose the CPU, on every run
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    threads = cfg.model.threads
    if not cfg.model.path and cfg.tiny.threads:  # the tiny world's model
        threads = cfg.tiny.threads
    if threads:
        torch.set_num_threads(threads)


def device_of(cfg: CoevoConfig) -> str:
    import torch

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cfg.model.device != "auto":
        return cfg.model.device
    return f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"


def init_distributed(cfg: CoevoConfig) -> None:
    """Join the process group when started by a launcher (``deepspeed``, ``torchrun``): one rank
    per device; each rank samples its share of every step's tasks (see :mod:`coevo.loop`)."""
    import torch

    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or torch.distributed.is_initialized():
        return
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if cfg.train.deepspeed is not None:
        from training.distributed import init_deepspeed_distributed

        init_deepspeed_distributed()
    else:
        torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo")


def load_task_files(cfg: CoevoConfig) -> tuple[list[Task], list[Task]]:
    from coevo.data import load_any

    limit = cfg.data.limit or None
    train = load_any(cfg.data.train, cfg.data.format, limit=limit)
    heldout = load_any(cfg.data.heldout, cfg.data.format, limit=limit) if cfg.data.heldout else []
    return train, heldout


def prepare_start(cfg: CoevoConfig, run: Path, *, progress: bool) -> tuple[object, object, list[Task], list[Task]]:
    """(model, tokenizer, train tasks, held-out tasks) for a new or resumed run."""
    from roles.model_io import load_model

    init = run / "init"
    device = device_of(cfg)
    if (init / "config.json").exists() or (init / SOURCE_FILE).exists():  # resumed run (or demo re-run)
        model, tok = load_model(start_model_dir(init), device=device, dtype=start_dtype(cfg),
                                prompt=cfg.model.prompt if cfg.model.path else "auto")
        train = load_tasks(init / "train.jsonl")
        held = init / "heldout.jsonl"  # (a run without held-out tasks has none, or an empty file)
        heldout = load_tasks(held) if held.exists() and held.stat().st_size else []
        return model, tok, train, heldout
    if cfg.data.train:
        train, heldout = load_task_files(cfg)
    else:
        from coevo.tinyworld.library import build_world

        world = build_world(seed=cfg.tiny.seed, n_train=cfg.tiny.n_train, n_heldout=cfg.tiny.n_heldout)
        train, heldout = world.train_tasks, world.heldout_tasks
    if cfg.model.path:
        model, tok = load_model(cfg.model.path, device=device, dtype=cfg.model.dtype, prompt=cfg.model.prompt)
    else:
        model, tok = tiny_world_model(cfg, train, progress=progress)
        import torch

        model.to(device, getattr(torch, start_dtype(cfg)))  # never "auto" for the tiny world
    from training import distributed as D

    if D.is_main():
        source = resolve_start_source(cfg.model.path) if cfg.model.path else None
        _save_start(init, model, tok, train, heldout, source=source)
    D.barrier()
    return model, tok, train, heldout


def _model_files(model_dir: Path) -> dict[str, list[int]]:
    """``{file name: [size, mtime_ns]}`` of a model directory's files (what a resumed run checks)."""
    out = {}
    for f in sorted(model_dir.iterdir()):
        if f.is_file():
            st = f.stat()
            out[f.name] = [st.st_size, st.st_mtime_ns]
    return out


def start_model_dir(init: Path) -> Path:
    """The directory a run's starting model loads from: ``init`` itself (the tiny world's model,
    saved there), or the user's model directory ``init/source.json`` names, as it was when the run
    began (InputError, one line, where it is gone or its files changed: the run would resume from
    another model than it started from)."""
    source = init / SOURCE_FILE
    if not source.exists():
        return init
    try:
        rec = json.loads(source.read_text(encoding="utf-8"))
        path, files = Path(rec["path"]), rec["files"]
        if not isinstance(files, dict):
            raise TypeError("files")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not a starting-model record ({type(exc).__name__}: {exc})", file=str(source)) from None
    if not path.is_dir():
        raise InputError(f"the run started from the model in {path}, which is gone: put it back (or edit "
                         "\"path\" here to a copy of it)", file=str(source), field="path")
    now = _model_files(path)
    changed = sorted(n for n in set(files) | set(now) if files.get(n) != now.get(n))
    if changed:
        raise InputError(f"the run started from the model in {path}, whose files changed since "
                         f"({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''}): resuming would "
                         "continue another model; put the original back or start a new run",
                         file=str(source), field="files")
    return path


def trainer_config(cfg: CoevoConfig):
    """``cfg.train`` completed from the loop: the trainer's forward uses the sampling temperature,
    its LR schedule counts its step() calls, and Dr. GRPO's constant L (``constant_norm``) is the
    sampling length limit (left unset it was each batch's longest completion, a different
    constant every step)."""
    import dataclasses

    calls_per_step = len(cfg.loop.roles) if cfg.loop.update == "per_role" else 1
    return dataclasses.replace(
        cfg.train, temperature=cfg.loop.temperature,
        total_steps=cfg.train.total_steps or cfg.loop.steps * calls_per_step,
        max_completion_length=cfg.train.max_completion_length or cfg.loop.max_new_tokens)


def start_dtype(cfg: CoevoConfig) -> str:
    """The weights' dtype of a run's starting model, the same for a new run and a resumed one: the
    tiny world's model is built in float32, so ``auto`` (bf16 on a GPU for a loaded model) means
    float32 for it; a resumed tiny-world run on a GPU would otherwise come back in bf16."""
    return "float32" if cfg.model.dtype == "auto" and not cfg.model.path else cfg.model.dtype


def tiny_world_model(cfg: CoevoConfig, train: list[Task], *, progress: bool):
    """The tiny world's tokenizer and model, after the SFT warm-up on the training tasks."""
    from coevo.tinyworld.model import count_params, make_model
    from coevo.tinyworld.sft import sft_train
    from coevo.tinyworld.tokenizer import train_tokenizer, world_corpus

    t0 = time.perf_counter()
    tok = train_tokenizer(world_corpus(train, seed=cfg.tiny.seed), vocab_size=cfg.tiny.vocab_size)
    model = make_model(tok, cfg.tiny.size, seed=cfg.tiny.seed)
    _say(f"tiny world: {len(train)} training tasks, tokenizer {len(tok)} tokens, "
         f"model {count_params(model) / 1e6:.2f}M parameters ({time.perf_counter() - t0:.0f}s)")
    if cfg.tiny.sft_steps:
        stats = sft_train(model, tok, train, steps=cfg.tiny.sft_steps, batch_size=cfg.tiny.sft_batch_size,
                          lr=cfg.tiny.sft_lr, seed=cfg.tiny.seed, progress=progress,
                          time_budget_s=cfg.tiny.sft_time_budget_s or None, say=_say,
                          proposer_grow=cfg.tiny.proposer_grow)
        _say(f"SFT warm-up: {stats.steps} steps in {stats.seconds:.0f}s, loss {stats.first_loss:.2f} -> "
             f"{stats.final_loss:.2f}")
    return model, tok


def _save_start(init: Path, model, tok, train: list[Task], heldout: list[Task], source: Path | None = None) -> None:
    """``RUN_DIR/init``, atomically: the tasks, and the starting model (the tiny world's, saved), or
    for a model of the user's (``source``) a record of its directory and files."""
    from training.checkpoint import apply_umask

    tmp = init.with_name(init.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if source is None:
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
    else:
        rec = {"path": str(source.resolve()), "files": _model_files(source)}
        (tmp / SOURCE_FILE).write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    write_jsonl_atomic(tmp / "train.jsonl", (t.to_json() for t in train))
    write_jsonl_atomic(tmp / "heldout.jsonl", (t.to_json() for t in heldout))
    apply_umask(tmp)  # safetensors writes 0600
    shutil.rmtree(init, ignore_errors=True)
    os.replace(tmp, init)


def make_executor(cfg: CoevoConfig):
    from matrix.engine import ExecConfig, Executor

    ex = cfg.execution
    return Executor(ExecConfig(timeout=ex.timeout, memory_mb=ex.memory_mb, workers=ex.workers or (os.cpu_count() or 1),
                               isolation=ex.isolation))


# ----------------------------------------------------------------------------- the run

def execute(cfg: CoevoConfig, run: Path, *, progress: bool = True) -> dict:
    """Run (or continue) the training in ``run``; a damaged checkpoint is a one-line error."""
    from training.checkpoint import CheckpointError

    try:
        return _execute(cfg, run, progress=progress)
    except CheckpointError as exc:
        raise InputError(str(exc)) from None


def _execute(cfg: CoevoConfig, run: Path, *, progress: bool = True) -> dict:
    from coevo.curriculum import Curriculum
    from coevo.evaluate import FIXER_STARTS_FILE, evaluate
    from coevo.loop import CoEvolution, sampling_config
    from roles.generation import GenerationEngine
    from training import distributed as D
    from training.runner import ResumableRun
    from training.trainer import PolicyTrainer

    configure_torch(cfg)
    if cfg.rollout.backend == "vllm":  # fail fast (one line), before any warm-up, without vLLM or CUDA
        from roles.vllm_engine import require_vllm

        require_vllm()
    init_distributed(cfg)
    model, tok, train, heldout = prepare_start(cfg, run, progress=progress)
    trainer = PolicyTrainer(model, trainer_config(cfg), pad_token_id=tok.pad_token_id, own_sampler=own_sampler(cfg))
    curriculum = Curriculum.from_tasks(train, cfg.curriculum)
    executor = make_executor(cfg)
    try:
        _say(f"sandbox isolation: {executor.isolation}")
        if cfg.train.old_logprobs == "auto":
            _say(f"old log-probs (train.old_logprobs auto): {trainer.cfg.old_logprobs}")
        if cfg.rollout.backend == "vllm":  # colocated vLLM samples the rollouts, fed the trainer's weights
            from roles.vllm_engine import VLLMEngine

            engine = VLLMEngine.colocated(start_model_dir(run / "init"), tok, trainer, cfg.rollout.vllm,
                                          sampling_config(cfg.loop))
        else:
            engine = GenerationEngine(trainer.model, tok, sampling_config(cfg.loop))
        loop = CoEvolution(cfg.loop, engine, tok, trainer, executor, curriculum, examples=train,
                           proposal_check=_tiny_world_guard(cfg, heldout))
        eval_log = run / EVAL_FILE
        done_evals = {rec["step"] for rec in read_evals(run)}

        def run_eval(step: int) -> dict:
            if not heldout:
                return {}
            t0 = time.perf_counter()
            with trainer.generation_context(gather=True):  # the held-out evaluation samples with the HF model
                # fix_fixed_starts: step 0 keeps its repair starts in the run (atomically, before its
                # record is logged); later evaluations, and a resumed step 0, repair those same programs
                res = evaluate(trainer.model, tok, executor, heldout, cfg.eval, fixer_starts=run / FIXER_STARTS_FILE,
                               keep_starts=step == 0 and D.is_main())
            res["seconds"] = time.perf_counter() - t0
            if step not in done_evals and D.is_main():
                append_jsonl(eval_log, {"step": step, **res})
                done_evals.add(step)
            return res

        if 0 not in done_evals and heldout and cfg.loop.eval_every:
            n_eval = min(len(heldout), cfg.eval.max_tasks) if cfg.eval.max_tasks else len(heldout)
            _say(f"evaluating the starting model on {n_eval} held-out tasks")
            before = run_eval(0)
            _say("before RL: " + _fmt(before))

        # the training loop: resume from the latest checkpoint, then step, evaluate, log, checkpoint
        with ResumableRun(run, cfg.loop.steps, trainer=trainer, state={"curriculum": curriculum},
                          save_every=cfg.loop.save_every, keep=cfg.loop.keep_checkpoints, resume=True,
                          progress=progress, progress_keys=STATUS_KEYS, say=_say, eval_keys=STATUS_EVAL_KEYS,
                          run_info={"config": str(run / "config.yaml"), "isolation": executor.isolation}) as resumable:
            for step in resumable.steps():
                metrics = loop.step(step)
                if cfg.loop.eval_every and heldout and (step % cfg.loop.eval_every == 0 or step == cfg.loop.steps):
                    metrics.update({f"eval/{k}": v for k, v in run_eval(step).items() if not isinstance(v, dict)})
                resumable.log(step, metrics)
                resumable.save_if_due(step)
        info = resumable.info
    finally:
        executor.close()
    export(trainer, tok, run, heldout)
    evals = read_evals(run)
    if D.is_main():
        _draw_curves(run, evals)
    return {"run": info, "evals": evals}


STATUS_KEYS = ("reward/coder", "reward/tester", "loss")  # shown beside the progress bar or in status lines
STATUS_EVAL_KEYS = ("eval/code_acc", "eval/test_acc")  # and, after a held-out evaluation, in status lines


def own_sampler(cfg: CoevoConfig) -> bool:
    """Whether every rollout the trainer sees was sampled from its own current weights by the
    in-process engine without top-p (so ``train.old_logprobs: auto`` may use the rollouts'
    log-probs): not with vLLM, and not with ``loop.update: per_role``, where each role's update
    starts from weights the earlier roles' updates have moved."""
    return cfg.rollout.backend != "vllm" and cfg.loop.top_p >= 1.0 and cfg.loop.update == "joint"


def _draw_curves(run: Path, evals: list[dict]) -> None:
    from training.plot import plot_metrics

    try:
        plot_metrics(run, run / CURVES_FILE, extra={"eval": evals})
    except Exception as exc:  # a plot must never lose a finished run
        _say(f"could not draw curves: {exc}")


def read_evals(run: Path) -> list[dict]:
    """The run's held-out evaluations (``RUN_DIR/eval.jsonl``), oldest first; ``[]`` if none."""
    log = Path(run) / EVAL_FILE
    return [rec for _, rec in read_jsonl(log)] if log.exists() else []


def _tiny_world_guard(cfg: CoevoConfig, heldout: list[Task]):
    """In the tiny world, proposals must be training-world compositions (no held-out pair, no
    behavioural copy of a held-out or known task); the guard derives their description."""
    if cfg.data.train:
        return None
    from coevo.tinyworld.library import heldout_pairs_of
    from coevo.tinyworld.proposals import ProposalGuard

    return ProposalGuard(heldout_pairs_of(heldout), heldout)


def export(trainer, tok, run: Path, heldout: list[Task]) -> None:
    """``RUN_DIR/model`` (weights + tokenizer) and ``RUN_DIR/heldout.jsonl``; collective under
    ZeRO-3, files written by rank 0 only."""
    from training import distributed as D
    from training.checkpoint import apply_umask

    tmp = run / ".model.tmp"
    if D.is_main():
        shutil.rmtree(tmp, ignore_errors=True)
    D.barrier()
    trainer.export(tmp)  # collective
    if not D.is_main():
        return
    tok.save_pretrained(tmp)
    apply_umask(tmp)  # safetensors writes 0600
    shutil.rmtree(run / MODEL_DIR, ignore_errors=True)
    os.replace(tmp, run / MODEL_DIR)
    write_jsonl_atomic(run / "heldout.jsonl", (t.to_json() for t in heldout))


def _fmt(res: dict) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in res.items() if isinstance(v, float) and k != "seconds")


def summarize(evals: list[dict]) -> dict:
    first, last = evals[0], evals[-1]
    solve = sorted({k for e in (first, last) for k in e if k.startswith("solve_1at")})  # RLEF's 1@K
    keys = ("code_acc", "test_acc", "test_kill", "bon_acc", "fix_acc", "fix_fixed_starts", *solve, "select_score",
            "select_ece", "select_ece_cv", "test_score_ece", "test_score_ece_cv")
    return {"before": {k: first[k] for k in keys if k in first},
            "after": {k: last[k] for k in keys if k in last},
            "before_step": first["step"], "after_step": last["step"]}




def report_lines(run: Path, evals: list[dict]) -> list[str]:
    """What a finished run tells its user: the held-out figures before RL and at the end, and
    where the model, the curves and the metrics are."""
    lines = []
    if evals:
        s = summarize(evals)
        n = evals[-1].get("tasks")
        head = f"held-out{f' ({n} tasks)' if isinstance(n, int) else ''}"
        lines.append(f"{head:<24}{'step ' + str(s['before_step']):>10}{'step ' + str(s['after_step']):>10}")
        for k, before in s["before"].items():
            lines.append(f"  {k:<22}{before:>10.3f}{s['after'].get(k, float('nan')):>10.3f}")
    else:
        lines.append("no held-out evaluation was recorded (no held-out tasks, or loop.eval_every=0)")
    lines.append(f"model:   {run / MODEL_DIR}")
    lines.append(f"curves:  {run / CURVES_FILE}")
    lines.append(f"metrics: {run / 'metrics.jsonl'}")
    return lines
