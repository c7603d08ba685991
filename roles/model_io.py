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


def _missing_packages(*names: str) -> list[str]:
    """Those of the pip packages ``names`` this Python cannot import (protobuf imports as google.protobuf)."""
    import importlib.util

    def found(name: str) -> bool:
        try:
            return importlib.util.find_spec("google.protobuf" if name == "protobuf" else name) is not None
        except (ImportError, ValueError):
            return False

    return [n for n in names if not found(n)]


def _has_tokenizer(d: Path) -> bool:
    return any((d / name).is_file() for name in _TOKENIZER_FILES)


_STEP = re.compile(r"step-(\d+)\Z")


def _latest_step(checkpoints: Path) -> Path:
    """The checkpoint ``checkpoints/latest`` names (a ``coevo train`` run's), else the highest
    ``step-N``; InputError naming the folder when it holds none."""
    try:
        name = (checkpoints / "latest").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        name = ""
    if _STEP.match(name) and (checkpoints / name).is_dir():
        return checkpoints / name
    steps = sorted((int(m.group(1)), d) for d in checkpoints.iterdir()
                   if d.is_dir() and (m := _STEP.match(d.name)))
    if not steps:
        raise InputError("no checkpoint here (no step-N folder): the run saved none yet", file=str(checkpoints))
    return steps[-1][1]


def _run_tokenizer(run: Path) -> Path | None:
    """Where a ``coevo train`` run's tokenizer is: ``init`` (the tiny world's start, saved whole),
    the user's model directory ``init/source.json`` names, or the exported ``model``."""
    import json

    places = [run / "init"]
    try:
        rec = json.loads((run / "init" / "source.json").read_text(encoding="utf-8"))
        if isinstance(rec, dict) and isinstance(rec.get("path"), str):
            places.append(Path(rec["path"]).expanduser())
    except (OSError, ValueError):
        pass
    places.append(run / "model")
    return next((d for d in places if d.is_dir() and _has_tokenizer(d)), None)


_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+\Z")


def _hub_snapshot(name: str) -> Path | None:
    """The local hub cache's snapshot of the repository ``name`` (``org/model``, as
    ``huggingface-cli download`` left it), or None; nothing is downloaded."""
    if not _REPO_ID.match(name) or ".." in name:
        return None
    env = os.environ
    cache = env.get("HF_HUB_CACHE") or (str(Path(env["HF_HOME"]) / "hub") if env.get("HF_HOME") else None)
    try:
        from huggingface_hub import snapshot_download

        found = snapshot_download(name, local_files_only=True, cache_dir=cache)
    except Exception:  # noqa: BLE001 - not cached (or no huggingface_hub): not a model we have
        return None
    found_path = Path(str(found))
    return found_path if (found_path / "config.json").is_file() else None


def resolve_model_dir(path: str | os.PathLike) -> tuple[Path, Path]:
    """``(weights directory, tokenizer directory)`` for what a user gives as a model: a
    ``save_pretrained`` directory (both the same; ``~`` expanded), a file in one (its directory), a
    hub name (``org/model``) the local hub cache holds (its snapshot; nothing is downloaded; a GGUF
    file or a name not cached is one line saying what to do), or a directory a ``coevo train``
    run wrote: the run (its exported ``model``, else its newest checkpoint), its ``checkpoints``
    folder (the newest), a ``checkpoints/step-N`` folder or its ``model`` (weights only: the
    tokenizer is the run's, :func:`_run_tokenizer`). InputError (one line naming the path) when
    it is none of these."""
    p = Path(os.path.expanduser(os.fspath(path)))
    if not p.exists():
        cached = _hub_snapshot(os.fspath(path))
        if cached is None:
            hint = (" (a hub name: nothing is downloaded; get it once with huggingface-cli download "
                    f"{os.fspath(path)}, or give a local save_pretrained directory)"
                    if _REPO_ID.match(os.fspath(path)) else "")
            raise InputError("no such model directory" + hint, file=str(path))
        p = cached
    if p.is_file():
        if p.suffix.lower() == ".gguf":
            raise InputError("a GGUF file (llama.cpp, Ollama): coevo runs transformers models in process; serve "
                             "this one (llama-server -m FILE, or Ollama) and give --api-base URL --api-model NAME",
                             file=str(path))
        if (p.parent / "config.json").is_file():  # a file of the model directory: the directory
            p = p.parent
    if p.is_dir() and not (p / "config.json").is_file():
        if (p / "adapter_config.json").is_file():
            raise InputError("a PEFT adapter (adapter_config.json), not a whole model: merge it into its base "
                             "model and save that (PeftModel.from_pretrained(base, DIR).merge_and_unload()"
                             ".save_pretrained(OUT), and the tokenizer), then give OUT", file=str(path))
        if (p / "model" / "config.json").is_file():  # a finished run (its export), or a checkpoint step
            p = p / "model"
        elif (p / "init").is_dir() and ((p / "checkpoints").is_dir() or (p / "config.yaml").is_file()):
            # a coevo train run still going, or stopped before its export: its newest checkpoint
            if not (p / "checkpoints").is_dir():
                raise InputError("a coevo train run with no checkpoint yet (no checkpoints/step-N) and no "
                                 "exported model (model/)", file=str(path))
            p = _latest_step(p / "checkpoints") / "model"
        elif (p / "latest").is_file() or any(_STEP.match(d.name) for d in p.iterdir() if d.is_dir()):
            p = _latest_step(p) / "model"
        if not (p / "config.json").is_file() and _STEP.match(p.parent.name):
            raise InputError("this checkpoint holds no model (no model/config.json): give another step",
                             file=str(p.parent))
    if not p.is_dir() or not (p / "config.json").is_file():
        raise InputError("not a model directory (no config.json; expected a save_pretrained "
                         "directory)", file=str(path))
    tokenizer = p
    if not _has_tokenizer(p) and _STEP.match(p.parent.name) and p.parent.parent.name == "checkpoints":
        tokenizer = _run_tokenizer(p.parent.parent.parent) or p
    return p, tokenizer


def _check_chat_template(tok, tok_dir: Path) -> None:
    """InputError (one line naming the file and ``chat_template``) when the tokenizer's chat
    template renders no prompt of the roles' shape: neither a system and a user message nor the
    two folded into one user message (what :func:`roles.prompts.build_prompt` tries). A template
    with a syntax error, or raising for every input, ended the first prompt with a Jinja
    traceback."""
    probes = ([{"role": "system", "content": "You are a coder."}, {"role": "user", "content": "Write add(a, b)."}],
              [{"role": "user", "content": "You are a coder.\n\nWrite add(a, b)."}])
    error: Exception | None = None
    for msgs in probes:
        try:
            tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
            return
        except Exception as exc:  # noqa: BLE001 - a template's own errors are of any type
            error = error or exc
    where = next((tok_dir / f for f in ("chat_template.jinja", "chat_template.json") if (tok_dir / f).is_file()),
                 tok_dir / "tokenizer_config.json")
    raise InputError(f"the chat template renders no prompt ({type(error).__name__}: {_one_line(str(error), 160)}); "
                     "fix it, or use coevo's plain prompt format (--prompt plain, model.prompt=plain)",
                     file=str(where), field="chat_template")


PROMPT_FORMATS = ("auto", "chat", "plain")


def _checkpoint_shapes(p: Path) -> dict[str, list[int]]:
    """The tensor shapes the ``*.safetensors`` files of ``p`` hold (their headers only); {} where
    there are none or they cannot be read."""
    import json
    import struct

    shapes: dict[str, list[int]] = {}
    for f in sorted(p.glob("*.safetensors")):
        try:
            with open(f, "rb") as fh:
                size = struct.unpack("<Q", fh.read(8))[0]
                header = json.loads(fh.read(min(size, 100 << 20)))
        except (OSError, ValueError, struct.error):
            continue
        if isinstance(header, dict):
            shapes.update({k: v["shape"] for k, v in header.items()
                           if isinstance(v, dict) and isinstance(v.get("shape"), list)})
    return shapes


def _load_error(p: Path, config: dict, exc: Exception) -> tuple[str | None, str] | None:
    """``(field, message)`` in the user's terms for a model transformers cannot load as a causal LM:
    weights of other sizes than config.json says, a model type needing its own code, one that is no
    causal LM; None for other errors."""
    text = str(exc)
    kind = config.get("model_type")
    if "custom code" in text or "trust_remote_code" in text:
        return ("model_type", f"{kind!r} needs the model's own Python code (auto_map in config.json, "
                              "trust_remote_code), which coevo does not run: use a model type transformers "
                              "supports itself")
    if "Unrecognized configuration class" in text and "AutoModelForCausalLM" in text:
        return ("model_type", f"{kind!r} is no causal LM (transformers' AutoModelForCausalLM has no "
                              "class for it: an encoder-decoder or encoder model?); coevo samples and trains "
                              "decoder-only models")
    if "mismatched_sizes" in text or "size mismatch" in text:
        shapes = _checkpoint_shapes(p)
        rows = [(k, v) for k, v in shapes.items() if k.endswith(("embed_tokens.weight", "wte.weight",
                                                                     "word_embeddings.weight", "embed_in.weight"))]
        vocab = config.get("vocab_size")
        if rows and isinstance(vocab, int) and rows[0][1] and rows[0][1][0] != vocab:
            k, v = rows[0]
            return ("vocab_size", f"{vocab}, but the weights' {k} has shape {v} ({v[0]} tokens): "
                                  "a config.json from another model? save_pretrained the model again")
        return (None, "the weights' tensor shapes differ from what config.json describes (a config.json "
                               "from another model?): save_pretrained the model again")
    return None


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
    p, tok_dir = resolve_model_dir(path)
    if p != Path(os.path.expanduser(os.fspath(path))):
        logging.getLogger("coevo").info(f"{path}: loading the model in {p}"
                                        + (f" with the tokenizer in {tok_dir}" if tok_dir != p else ""))
    config = _json_object(p / "config.json") or {}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    device = device or default_device()
    try:
        check_device(device)
    except ValueError as exc:
        raise InputError(str(exc), field="device") from None
    if not _has_tokenizer(tok_dir):
        raise InputError("no tokenizer files (tokenizer.json, tokenizer.model, vocab.json + merges.txt, "
                         "tokenizer_config.json): save the tokenizer into the model directory "
                         "(tokenizer.save_pretrained(DIR))", file=str(path))
    try:
        tok = AutoTokenizer.from_pretrained(str(tok_dir), local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        known = _load_error(p, config, exc)
        if known is not None and known[0] == "model_type":
            raise InputError(known[1], file=str(p / "config.json"), field=known[0]) from None
        missing = _missing_packages("sentencepiece", "protobuf")
        hint = (f"; tokenizer.model is a SentencePiece model and there is no tokenizer.json: reading it needs "
                f"pip install {' '.join(missing)}" if missing and (tok_dir / "tokenizer.model").is_file()
                and not (tok_dir / "tokenizer.json").is_file() else "")
        raise InputError(f"cannot load the tokenizer ({type(exc).__name__}: {_one_line(str(exc))}){hint}",
                         file=str(path if tok_dir == p else tok_dir)) from None
    model_eos = _model_eos_ids(p, config)
    if tok.eos_token_id is None and not model_eos:
        raise InputError("no EOS token: neither the tokenizer (eos_token in tokenizer_config.json) nor "
                         "the model (eos_token_id in generation_config.json or config.json) names one, "
                         "so no sample could end; set one and save_pretrained again",
                         file=str(path), field="eos_token")
    torch_dtype = _dtype(dtype, device)  # (an unknown name is the field's error, not the model's)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a "Loading weights" bar per load is noise in our output
    try:
        # (trust_remote_code=False: a model needing its own code is an error at once, where transformers
        # asked "Do you wish to run the custom code? [y/N]" on stdin and waited)
        model = AutoModelForCausalLM.from_pretrained(str(p), local_files_only=True, dtype=torch_dtype,
                                                     trust_remote_code=False)
    except Exception as exc:
        known = _load_error(p, config, exc)
        if known is not None:
            raise InputError(known[1], file=str(p / "config.json"), field=known[0]) from None
        raise InputError(_one_line(f"cannot load the model ({type(exc).__name__}: {str(exc).split(chr(10))[0]})"),
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
    if getattr(tok, "chat_template", None):
        _check_chat_template(tok, tok_dir)
    model.to(device)
    model.eval()
    return model, tok
