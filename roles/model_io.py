"""Loading a causal LM and its tokenizer from a local directory (never from a hub at run time)."""

from __future__ import annotations

import logging
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


# files one of which a saved tokenizer has (fast, sentencepiece, byte-level BPE, WordPiece, tiktoken)
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "vocab.json", "vocab.txt",
                    "tokenizer_config.json")


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _json_object(path: Path) -> dict | None:
    """The JSON object in ``path``; ``None`` if there is no such file. :class:`InputError` naming the
    file when it is not a JSON object."""
    import json

    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not valid JSON ({_one_line(exc, 120)})", file=str(path)) from None
    if not isinstance(data, dict):
        raise InputError("not a JSON object", file=str(path))
    return data


def token_ids(value) -> list[int]:
    """A config's token id field (``eos_token_id``: an int, a list of them, or null) as a list."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []


def stop_ids(tokenizer, model_eos) -> set[int]:
    """The ids a sample ends at: the tokenizer's EOS and the model's ``eos_token_id``
    (``generation_config``: an int or a list). ValueError when there is none."""
    ids = set(token_ids(model_eos))
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    if not ids:
        raise ValueError("neither the tokenizer nor the model defines an EOS token")
    return ids


def _model_eos_ids(p: Path, config: dict) -> list[int]:
    """The EOS ids the model's own files name: ``generation_config.json``'s ``eos_token_id`` (what
    ``transformers`` generation stops at), else ``config.json``'s, from which it is derived."""
    gen = _json_object(p / "generation_config.json")
    if gen is not None and gen.get("eos_token_id") is not None:
        return token_ids(gen.get("eos_token_id"))
    return token_ids(config.get("eos_token_id"))


def _embedding_rows(model) -> int | None:
    """How many token ids the model can embed (``None``: not known)."""
    try:
        n = model.get_input_embeddings().num_embeddings
    except Exception:  # noqa: BLE001 - a model without the usual accessor: not checked
        return None
    return int(n) if isinstance(n, int) and n > 0 else None


PROMPT_FORMATS = ("auto", "chat", "plain")


def load_model(path: str | os.PathLike, device: str | None = None, dtype=None, prompt: str = "auto"):
    """``(model, tokenizer)`` from a local ``save_pretrained`` directory, in eval mode.

    Raises :class:`InputError` (one line naming the file or field) when ``path`` is missing, holds
    no model, its ``config.json`` is not JSON, it has no tokenizer files, or neither the tokenizer
    nor the model names an EOS token the model can embed (no sample could end). A tokenizer without
    an EOS takes the first of the model's (``generation_config.json``); one without a pad token, or
    whose pad id is past the model's embeddings (added without ``resize_token_embeddings``; said in
    a warning), pads with the EOS (as TRL does); padding is on the left. A plain-format chat template
    (:data:`coevo.tinyworld.tokenizer.PLAIN_CHAT_TEMPLATE`, for serving) is dropped, so the roles
    build the same plain prompts as before it was added. ``prompt``: how the roles' prompts are
    written: ``auto`` (the tokenizer's chat template when it has one, else coevo's plain format),
    ``plain`` (the plain format even where the tokenizer ships a chat template: a base model whose
    tokenizer carries its instruct sibling's template), ``chat`` (the template; an error when the
    tokenizer has none).
    """
    if prompt not in PROMPT_FORMATS:
        raise InputError(f"{prompt!r} is not a prompt format; expected one of {', '.join(PROMPT_FORMATS)}",
                         field="prompt")
    p = Path(path)
    if not p.exists():
        raise InputError("no such model directory", file=str(path))
    if not p.is_dir() or not (p / "config.json").is_file():
        raise InputError("not a model directory (no config.json; expected a save_pretrained "
                         "directory)", file=str(path))
    config = _json_object(p / "config.json") or {}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    device = device or default_device()
    try:
        check_device(device)
    except ValueError as exc:
        raise InputError(str(exc), field="device") from None
    if not any((p / name).is_file() for name in _TOKENIZER_FILES):
        raise InputError("no tokenizer files (tokenizer.json, tokenizer.model, vocab.json + merges.txt, "
                         "tokenizer_config.json): save the tokenizer into the model directory "
                         "(tokenizer.save_pretrained(DIR))", file=str(path))
    try:
        tok = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    except Exception as exc:
        raise InputError(f"cannot load the tokenizer ({type(exc).__name__}: {_one_line(exc)})",
                         file=str(path)) from None
    model_eos = _model_eos_ids(p, config)
    if tok.eos_token_id is None and not model_eos:
        raise InputError("no EOS token: neither the tokenizer (eos_token in tokenizer_config.json) nor "
                         "the model (eos_token_id in generation_config.json or config.json) names one, "
                         "so no sample could end; set one and save_pretrained again",
                         file=str(path), field="eos_token")
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
    rows = _embedding_rows(model)
    if rows is not None and tok.eos_token_id is not None and tok.eos_token_id >= rows \
            and not any(i < rows for i in model_eos):
        raise InputError(f"the EOS {tok.eos_token!r} has id {tok.eos_token_id}, past the model's {rows} "
                         "embeddings (a token added without model.resize_token_embeddings?): no sample could "
                         "end", file=str(path), field="eos_token")
    if tok.eos_token_id is None:  # the model's EOS (a sample ends there: roles.generation)
        name = tok.convert_ids_to_tokens(model_eos[0]) if 0 <= model_eos[0] < len(tok) else None
        if name is None:
            raise InputError(f"the model's EOS id {model_eos[0]} is not in the tokenizer's vocabulary "
                             f"({len(tok)} tokens), and the tokenizer names no eos_token",
                             file=str(path), field="eos_token")
        tok.eos_token = name
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    elif rows is not None and tok.pad_token_id >= rows and tok.eos_token_id is not None and tok.eos_token_id < rows:
        # padding is masked: any id the model can embed does; this one it cannot (IndexError)
        logging.getLogger("coevo").warning(
            f"warning: {path}: the pad token {tok.pad_token!r} has id {tok.pad_token_id}, past the model's "
            f"{rows} embeddings (added without model.resize_token_embeddings?): padding with the EOS "
            f"{tok.eos_token!r} instead")
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    if is_plain_chat_template(getattr(tok, "chat_template", None)) or prompt == "plain":
        # the plain-format template (written for serving) only passes plain prompts through: the
        # roles render those prompts themselves, so this process uses the plain template; and
        # the user may ask for the plain format where the tokenizer ships a chat template
        tok.chat_template = None
    elif prompt == "chat" and not getattr(tok, "chat_template", None):
        raise InputError("the tokenizer has no chat template (chat_template in tokenizer_config.json): "
                         "use the plain prompt format (auto or plain)", file=str(path), field="prompt")
    model.to(device)
    model.eval()
    return model, tok
