"""A small Llama-style causal LM created from scratch (seeded), sized for a 2-core CPU."""

from __future__ import annotations

from dataclasses import dataclass

from coevo.tinyworld import DEFAULT_SIZE

# name -> (hidden, intermediate, layers, heads, kv_heads)
SIZES: dict[str, tuple[int, int, int, int, int]] = {
    "nano": (64, 192, 2, 4, 4),  # tests
    "tiny": (128, 384, 4, 4, 4),
    "small": (192, 512, 4, 4, 4),
    "base": (256, 704, 6, 8, 8),
}


@dataclass
class ModelSpec:
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    max_positions: int = 512


def spec_for(size: str | ModelSpec, max_positions: int = 512) -> ModelSpec:
    if isinstance(size, ModelSpec):
        return size
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; expected one of {sorted(SIZES)}")
    h, i, n, a, kv = SIZES[size]
    return ModelSpec(h, i, n, a, kv, max_positions)


def make_model(tokenizer, size: str | ModelSpec = DEFAULT_SIZE, seed: int = 0,
               max_positions: int = 512):
    """A freshly initialised ``LlamaForCausalLM`` for ``tokenizer`` (tied embeddings, fp32).

    The initialisation is deterministic given ``seed`` (the global torch RNG is re-seeded here).
    The result saves with ``save_pretrained`` and loads with ``AutoModelForCausalLM.from_pretrained``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    spec = spec_for(size, max_positions)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=spec.hidden, intermediate_size=spec.intermediate,
        num_hidden_layers=spec.layers, num_attention_heads=spec.heads,
        num_key_value_heads=spec.kv_heads, max_position_embeddings=spec.max_positions,
        rope_theta=10000.0, tie_word_embeddings=True, initializer_range=0.02,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model


def count_params(model) -> int:
    """Distinct parameters (tied weights counted once)."""
    seen = set()
    n = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n
