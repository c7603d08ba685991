"""Small ``torch.distributed`` helpers that also work when nothing is initialised (one process).

DeepSpeed on CPU. ``deepspeed.init_distributed`` JIT-compiles a shared-memory all-reduce extension
(``deepspeed_shm_comm``, ~90 s on first use) that only serves inference all-reduce; on the CPU
accelerator :func:`init_deepspeed_distributed` marks it unavailable so the plain gloo backend is used
and nothing is compiled (set ``COEVO_DS_SHM=1`` to keep it).
"""

from __future__ import annotations

import os
import socket
import warnings

import torch
import torch.distributed as dist


def initialized() -> bool:
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if initialized() else 0


def world_size() -> int:
    return dist.get_world_size() if initialized() else 1


def is_main() -> bool:
    return rank() == 0


def barrier() -> None:
    if initialized() and world_size() > 1:
        dist.barrier()


def _device_for(t: torch.Tensor) -> torch.Tensor:
    # gloo reduces CPU tensors, nccl CUDA tensors
    if initialized() and dist.get_backend() == "nccl" and t.device.type != "cuda":
        return t.cuda()
    if initialized() and dist.get_backend() == "gloo" and t.device.type != "cpu":
        return t.cpu()
    return t


def all_reduce(t: torch.Tensor, op: str = "sum") -> torch.Tensor:
    """Reduced copy of ``t`` over all ranks (``t`` itself when running alone)."""
    if not initialized() or world_size() == 1:
        return t
    x = _device_for(t.detach().clone())
    dist.all_reduce(x, op={"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[op])
    return x.to(t.device)


def all_gather_object(obj) -> list:
    if not initialized() or world_size() == 1:
        return [obj]
    out: list = [None] * world_size()
    dist.all_gather_object(out, obj)
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def single_process_env() -> None:
    """Fill the rendezvous variables for a one-process group (when no launcher set them)."""
    if "WORLD_SIZE" not in os.environ and "RANK" not in os.environ:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(free_port()))
        os.environ["RANK"] = "0"
        os.environ["LOCAL_RANK"] = "0"
        os.environ["WORLD_SIZE"] = "1"


def init_deepspeed_distributed() -> None:
    """``deepspeed.init_distributed`` with gloo on CPU and nccl on GPUs (reuses an existing group)."""
    import deepspeed
    from deepspeed.accelerator import get_accelerator

    # DeepSpeed 0.19 calls torch.distributed functions that torch 2.13 deprecates, once per bucket
    warnings.filterwarnings("ignore", message=r"`torch\.distributed\.\w+` is deprecated", category=FutureWarning)
    on_cpu = get_accelerator().device_name() == "cpu"
    if on_cpu and os.environ.get("COEVO_DS_SHM") != "1":
        import deepspeed.ops

        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    if not initialized():
        single_process_env()
    deepspeed.init_distributed(dist_backend="gloo" if on_cpu else get_accelerator().communication_backend_name())
