"""Loading a causal LM and its tokenizer from a local directory (never from a hub at run time)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from matrix.errors import InputError


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype(dtype, device: str):
    import torch

    if dtype is None or dtype == "auto":
        if str(device).startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if isinstance(dtype, str):
        table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                 "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
        if dtype not in table:
            raise InputError(f"unknown dtype {dtype!r}; expected one of {sorted(table)}",
                             field="dtype")
        return table[dtype]
    return dtype


# first line of a chat template that renders coevo's plain prompt format (the tiny world's
# coevo.tinyworld.tokenizer.PLAIN_CHAT_TEMPLATE): a user message is one plain prompt, verbatim
PLAIN_TEMPLATE_MARK = "{#- coevo: plain prompt format -#}"


def is_plain_chat_template(template) -> bool:
    """True when ``template`` (a tokenizer's ``chat_template``) renders coevo's plain format."""
    return isinstance(template, str) and template.lstrip().startswith(PLAIN_TEMPLATE_MARK)


def check_device(name: str) -> None:
    """``ValueError`` unless ``name`` is a torch device this machine has (auto, cpu, cuda,
    cuda:N, mps)."""
    if name in ("auto", "cpu"):
        return
    m = re.fullmatch(r"cuda(?::(\d+))?", name)
    if m is None and name != "mps":
        raise ValueError(f"{name!r} is not a device; use auto, cpu, cuda or cuda:N")
    import torch

    if name == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError("'mps': this machine has no MPS device; use cpu or auto")
        return
    if not torch.cuda.is_available():
        raise ValueError(f"{name!r}: no CUDA device is available to this torch ({torch.__version__}); "
                         "use cpu or auto")
    if m.group(1) is not None and int(m.group(1)) >= torch.cuda.device_count():
        raise ValueError(f"{name!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")


def load_model(path: str | os.PathLike, device: str | None = None, dtype=None):
    """``(model, tokenizer)`` from a local ``save_pretrained`` directory, in eval mode.

    Raises :class:`InputError` when ``path`` is missing or holds no model. The tokenizer gets a
    pad token (EOS when it has none) and left padding; a plain-format chat template
    (:data:`coevo.tinyworld.tokenizer.PLAIN_CHAT_TEMPLATE`, for serving) is dropped, so the roles
    build the same plain prompts as before it was added.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such model directory", file=str(path))
    if not p.is_dir() or not (p / "config.json").is_file():
        raise InputError("not a model directory (no config.json; expected a save_pretrained "
                         "directory)", file=str(path))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    device = device or default_device()
    try:
        check_device(device)
    except ValueError as exc:
        raise InputError(str(exc), field="device") from None
    try:
        tok = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    except Exception as exc:
        raise InputError(f"cannot load the tokenizer ({type(exc).__name__}: {exc})".split("\n")[0],
                         file=str(path)) from None
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a "Loading weights" bar per load is noise in our output
    try:
        model = AutoModelForCausalLM.from_pretrained(str(p), local_files_only=True,
                                                     dtype=_dtype(dtype, device))
    except Exception as exc:
        raise InputError(f"cannot load the model ({type(exc).__name__}: {exc})".split("\n")[0],
                         file=str(path)) from None
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    if is_plain_chat_template(getattr(tok, "chat_template", None)):
        # the plain-format template (written for serving) only passes plain prompts through: the
        # roles render those prompts themselves, so this process uses the plain template
        tok.chat_template = None
    model.to(device)
    model.eval()
    return model, tok
