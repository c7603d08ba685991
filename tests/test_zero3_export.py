"""ZeRO-3 on CPU (one gloo rank in a spawned process, parameters partitioned):
``PolicyTrainer.iter_full_parameters`` gathers one parameter at a time into full tensors equal to
the whole gathered model, on every rank, and ``generation_context(gather=False)`` leaves the
partitions alone (what a rollout engine with its own weights, such as vLLM, relies on)."""

import datetime
import json
import os
import sys
from pathlib import Path

import torch
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _worker(rank, world, port, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    import torch.distributed as dist
    from test_trainer import flat, make_rollouts, tiny_model

    from training.config import GRPOConfig
    from training.trainer import PolicyTrainer

    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
    try:
        ds = json.loads((ROOT / "configs" / "ds_zero3.json").read_text())
        ds["zero_optimization"]["stage3_param_persistence_threshold"] = 0  # partition even tiny parameters
        cfg = GRPOConfig(lr=1e-3, micro_batch_size=4, adam_eps=1e-4, deepspeed=ds)
        tr = PolicyTrainer(tiny_model(), cfg, pad_token_id=0)
        tr.step(make_rollouts(seed=2, reward_levels=3))
        with tr.generation_context(gather=False):
            partitioned = sum(p.data.numel() for p in tr.model.parameters())
        pieces = [(name, t.detach().clone()) for name, t in tr.iter_full_parameters()]
        with tr.generation_context():
            whole = flat(tr.model)
            names = [n for n, _ in tr.model.named_parameters()]
        torch.save({"pieces": pieces, "whole": whole, "names": names, "partitioned": partitioned,
                    "stage": tr.zero_stage, "version": tr.weights_version}, Path(out_dir) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def test_zero3_parameters_are_gathered_one_at_a_time(tmp_path):
    from test_trainer import tiny_model

    from training.distributed import free_port

    mp.spawn(_worker, args=(1, free_port(), str(tmp_path)), nprocs=1, join=True)
    n_full = sum(p.numel() for p in tiny_model().parameters())
    for rank in range(1):
        r = torch.load(tmp_path / f"rank{rank}.pt", weights_only=False)
        assert r["stage"] == 3 and r["version"] == 2
        assert r["partitioned"] < n_full  # outside a gather the parameters are partitioned
        assert [n for n, _ in r["pieces"]] == r["names"]
        assert torch.equal(torch.cat([t.reshape(-1).float() for _, t in r["pieces"]]), r["whole"].float())
        assert r["whole"].numel() == n_full
