"""Decode steps of a Llama-family causal LM over a KV cache held in preallocated tensors.

``transformers``' ``DynamicCache`` grows every layer's keys and values with ``torch.cat`` on each
decode step, so step ``t`` copies the whole cache so far: at 32 rows and ~100 cached positions that
copy was half of a decode step's CPU time on the tiny world's model, and its share grows with the
sequence. :class:`StaticKVDecoder` takes the cache that the prompt's prefill (a normal model call)
built, copies it once into tensors sized for every position the call can reach, and then runs each
decode step through the model's own modules (embedding, norms, projections, rotary embedding, MLP,
head), writing the new key and value in place and attending with ``scaled_dot_product_attention``
over the filled part. Same modules and the same attention kernel as the model's ``sdpa`` path, so
the logits match the plain model call up to rounding (checked in ``tests/test_generation.py``).

Only models whose decoder layer is exactly Llama's are taken (:func:`supports`): ``llama`` and
``qwen2`` (without a sliding window) model types, no per-head query/key norms, no partitioned
(ZeRO-3) parameters, not spread over devices by ``device_map``; anything else decodes through the
model call as before.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb  # Qwen2's is the same

SUPPORTED_MODEL_TYPES = ("llama", "qwen2")
_SDPA_GQA = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")  # torch >= 2.5
_SUPPORTED_CLASSES = ("LlamaForCausalLM", "Qwen2ForCausalLM")


def supports(model) -> bool:
    """True when :class:`StaticKVDecoder` computes the same step as ``model(...)``."""
    cfg = getattr(model, "config", None)
    if type(model).__name__ not in _SUPPORTED_CLASSES or getattr(cfg, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    if getattr(cfg, "use_sliding_window", False) or getattr(cfg, "attn_logit_softcapping", None):
        return False
    if len(set((getattr(model, "hf_device_map", None) or {}).values())) > 1:
        return False  # layers spread over devices by accelerate's hooks, which only the model call runs
    inner = getattr(model, "model", None)
    if inner is None or not all(hasattr(inner, a) for a in ("embed_tokens", "layers", "norm", "rotary_emb")):
        return False
    for layer in inner.layers:
        attn = getattr(layer, "self_attn", None)
        if attn is None or hasattr(attn, "q_norm") or not hasattr(attn, "scaling"):
            return False
    # ZeRO-3 partitions parameters and gathers them in hooks around the model's own call
    return not any(hasattr(p, "ds_id") for p in model.parameters())


def _cache_tensors(cache, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    if hasattr(cache, "layers"):  # transformers >= 4.56
        return cache.layers[layer].keys, cache.layers[layer].values
    return cache.key_cache[layer], cache.value_cache[layer]


class StaticKVDecoder:
    """The decode loop's model after the prefill (see the module doc).

    ``cache``: the prefill's cache, ``attention_mask``: its ``[B, L]`` mask (left padding),
    ``max_new_tokens``: how many decode steps may follow. :meth:`step` takes one token per row and
    its position and returns the next logits ``[B, vocab]``; :meth:`select` keeps the given rows.
    """

    def __init__(self, model, cache, attention_mask: torch.Tensor, max_new_tokens: int):
        self.model = model
        self.inner = model.model
        self.layers = list(self.inner.layers)
        keys0, _ = _cache_tensors(cache, 0)
        B, kv_heads, L, head_dim = keys0.shape
        size = (len(self.layers), B, kv_heads, L + max_new_tokens, head_dim)
        self.keys = keys0.new_empty(size)
        self.values = keys0.new_empty(size)
        for i in range(len(self.layers)):
            k, v = _cache_tensors(cache, i)
            self.keys[i, :, :, :L] = k
            self.values[i, :, :, :L] = v
        self.mask = torch.zeros((B, L + max_new_tokens), dtype=torch.bool, device=keys0.device)
        self.mask[:, :L] = attention_mask.to(torch.bool)
        self.length = L  # filled positions
        self.padded = not bool(self.mask[:, :L].all())  # no padding: attention without a mask
        self.heads = model.config.num_attention_heads
        self.kv_heads = kv_heads
        self.head_dim = head_dim

    def select(self, rows: torch.Tensor) -> None:
        """Keep ``rows`` (ascending indices), in that order: their filled positions move to the
        front of the same buffers (a copy of what is filled, not of the whole allocation)."""
        n, b = self.length, int(rows.numel())
        self.keys[:, :b, :, :n] = self.keys[:, rows, :, :n]  # the right side is gathered first
        self.values[:, :b, :, :n] = self.values[:, rows, :, :n]
        self.keys, self.values = self.keys[:, :b], self.values[:, :b]
        self.mask = self.mask[rows]
        self.padded = not bool(self.mask[:, :self.length].all())

    def step(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``[B]``, ``positions`` ``[B, 1]`` -> logits ``[B, vocab]``."""
        n = self.length
        if n >= self.keys.shape[3]:
            raise RuntimeError("StaticKVDecoder: more decode steps than it was sized for")
        B = tokens.shape[0]
        self.mask[:, n] = True
        x = self.inner.embed_tokens(tokens[:, None])
        cos, sin = self.inner.rotary_emb(x, positions)
        # without padding no mask is needed (a single query attends to every cached position), and
        # SDPA can then use its fused kernels with grouped-query attention (enable_gqa) on a GPU
        attend = self.mask[:, None, None, :n + 1] if self.padded else None
        rep = self.heads // self.kv_heads
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = attn.q_proj(h).view(B, 1, self.heads, self.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(B, 1, self.kv_heads, self.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(B, 1, self.kv_heads, self.head_dim).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            self.keys[i, :, :, n] = k[:, :, 0]
            self.values[i, :, :, n] = v[:, :, 0]
            keys, values = self.keys[i, :, :, :n + 1], self.values[i, :, :, :n + 1]
            if rep > 1 and (attend is not None or not _SDPA_GQA):  # each query head's key/value head
                keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)
            gqa = {"enable_gqa": True} if rep > 1 and attend is None and _SDPA_GQA else {}
            o = F.scaled_dot_product_attention(q, keys, values, attn_mask=attend, scale=attn.scaling, **gqa)
            x = x + attn.o_proj(o.transpose(1, 2).reshape(B, 1, self.heads * self.head_dim))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        self.length = n + 1
        return self.model.lm_head(self.inner.norm(x))[:, -1]

