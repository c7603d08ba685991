"""Two-process data parallelism on CPU (gloo): DeepSpeed ZeRO-2, ZeRO-3 and plain all-reduce.

One spawn of two ranks (the imports dominate the cost, so the three scenarios share it) trains the
same tiny model on one rollout batch for two steps per scenario, checkpointing after the first.
Per scenario both ranks must end with identical weights, equal to one process training on the
whole batch, and (DeepSpeed) a fresh engine restored from the checkpoint must repeat the second
step exactly.

* ``zero2``: DeepSpeed ZeRO-2, the same rollouts on both ranks (each trains a shard of every
  mini-batch), two mini-batches (optimizer steps) per batch;
* ``zero3_local``: ZeRO-3, each rank brings its own rollouts; rank 1 holds every truncated sample,
  so it has fewer micro-batches and runs empty passes to keep ZeRO-3's all-gathers aligned;
* ``plain_local``: no DeepSpeed, gradients averaged by one all-reduce per optimizer step.
"""

import datetime
import os
import sys
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_trainer import flat, make_rollouts, tiny_model  # noqa: E402

from training.config import GRPOConfig  # noqa: E402
from training.trainer import PolicyTrainer  # noqa: E402

CFG = dict(lr=1e-3, micro_batch_size=3, updates_per_batch=2, adam_eps=1e-4)
# name -> (DeepSpeed config, local rollouts)
SCENARIOS = {
    "zero2": (str(ROOT / "configs" / "ds_zero2.json"), False),
    "zero3_local": (str(ROOT / "configs" / "ds_zero3.json"), True),
    "plain_local": (None, True),
}


def _rollouts():
    return make_rollouts(seed=21, n_groups=5, G=4, roles=("coder", "tester"), truncate_last=True)


def _cfg(ds_config, local):
    # local shuffles differ from the single-process one: compare with one mini-batch there
    return dict(CFG, deepspeed=ds_config, updates_per_batch=1 if local else CFG["updates_per_batch"])


def _weights(tr):
    with tr.generation_context():  # gathers ZeRO-3 partitions
        return flat(tr.model)


def _scenario(rank, world, out_dir: Path, ds_config, local):
    from training import checkpoint as ckpt

    rs = _rollouts()
    if local:  # each rank brings its own rollouts (groups split across ranks on purpose)
        rs = rs[rank::world]
    cfg = GRPOConfig(**_cfg(ds_config, local))
    model = tiny_model()
    for p in model.parameters():  # stale gradients (a warm-up's last backward) must not leak in
        p.grad = torch.ones_like(p)
    tr = PolicyTrainer(model, cfg, pad_token_id=0)
    run_dir = out_dir / "run"
    ms = [tr.step(rs, local=local)]
    ckpt.save_checkpoint(run_dir, 1, trainer=tr)  # collective
    ms.append(tr.step(rs, local=local))
    out = {"weights": _weights(tr), "metrics": ms, "zero_stage": tr.zero_stage}
    if ds_config:  # resume from the checkpoint into a fresh engine: the same second step
        tr2 = PolicyTrainer(tiny_model(seed=5), cfg, pad_token_id=0)
        ckpt.restore_checkpoint(ckpt.load_latest(run_dir), trainer=tr2)
        tr2.step(rs, local=local)
        out["resumed"] = _weights(tr2)
    return out


def _worker(rank, world, port, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
    try:
        for name, (ds_config, local) in SCENARIOS.items():
            d = Path(out_dir) / name
            if rank == 0:
                d.mkdir(parents=True, exist_ok=True)
            dist.barrier()
            # an exception ends this rank; mp.spawn then stops the other one and raises it here
            torch.save(_scenario(rank, world, d, ds_config, local), d / f"rank{rank}.pt")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip the interpreter teardown of torch/transformers (seconds on a small CPU)


@pytest.fixture(scope="module")
def spawned(tmp_path_factory):
    from training.distributed import free_port

    out = tmp_path_factory.mktemp("dp")
    mp.spawn(_worker, args=(2, free_port(), str(out)), nprocs=2, join=True)
    return out


def _single(local):
    tr = PolicyTrainer(tiny_model(), GRPOConfig(**_cfg(None, local)), pad_token_id=0)
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ms = [tr.step(_rollouts()) for _ in range(2)]
    finally:
        torch.set_num_threads(n)
    return flat(tr.model), ms


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_two_process_data_parallel_equals_single_process(spawned, name):
    ds_config, local = SCENARIOS[name]
    results = [torch.load(spawned / name / f"rank{r}.pt", weights_only=False) for r in range(2)]
    assert results[0]["zero_stage"] == {"zero2": 2, "zero3_local": 3, "plain_local": 0}[name]
    single_w, single_m = _single(local)
    w0, w1 = results[0]["weights"], results[1]["weights"]
    assert torch.equal(w0, w1), "ranks diverged"
    torch.testing.assert_close(w0, single_w, atol=2e-6, rtol=0)
    for md, ms in zip(results[0]["metrics"], single_m):
        assert md["loss"] == pytest.approx(ms["loss"], rel=1e-4, abs=1e-6)
        assert md["tokens"] == ms["tokens"]
        assert md["samples_in_loss"] == ms["samples_in_loss"]
        assert md["optimizer_steps"] == ms["optimizer_steps"]
    # the checkpoint's model export is a full save_pretrained model (gathered under ZeRO-3)
    from transformers import AutoModelForCausalLM

    from training import checkpoint as ckpt

    info = ckpt.load_latest(spawned / name / "run")
    assert info.step == 1 and info.meta["world_size"] == 2
    exported = flat(AutoModelForCausalLM.from_pretrained(info.path / "model"))
    assert exported.shape == w0.shape and torch.isfinite(exported).all()
    if ds_config:
        for r in results:
            torch.testing.assert_close(r["resumed"], w0, atol=1e-6, rtol=0)
