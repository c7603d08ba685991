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

:class:`DecoderLanes` decodes several such decoders as one batch: prompts of very different
lengths are prefilled apart (no row pays a long prompt's padding) and then step together, the
projections, MLP and head once over all rows and the attention per lane over its own cache; on a
CPU a small batch's step costs most of what a large one does (the weights are read either way),
so one loop of 160 steps beats three loops of 370 between them.

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

    @property
    def rows(self) -> int:
        return int(self.mask.shape[0])

    def step(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``[B]``, ``positions`` ``[B, 1]`` -> logits ``[B, vocab]``."""
        return _decode_step(self.model, [self], tokens, positions)

    # one lane's part of a decode step (see _decode_step)
    def _open(self) -> torch.Tensor | None:
        n = self.length
        if n >= self.keys.shape[3]:
            raise RuntimeError("StaticKVDecoder: more decode steps than it was sized for")
        self.mask[:, n] = True
        # without padding no mask is needed (a single query attends to every cached position), and
        # SDPA can then use its fused kernels with grouped-query attention (enable_gqa) on a GPU
        return self.mask[:, None, None, :n + 1] if self.padded else None

    def _attend(self, i: int, q, k, v, attend, scaling: float) -> torch.Tensor:
        n = self.length
        self.keys[i, :, :, n] = k[:, :, 0]
        self.values[i, :, :, n] = v[:, :, 0]
        keys, values = self.keys[i, :, :, :n + 1], self.values[i, :, :, :n + 1]
        rep = self.heads // self.kv_heads
        if rep > 1 and (attend is not None or not _SDPA_GQA):  # each query head's key/value head
            keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)
        gqa = {"enable_gqa": True} if rep > 1 and attend is None and _SDPA_GQA else {}
        return F.scaled_dot_product_attention(q, keys, values, attn_mask=attend, scale=scaling, **gqa)


class DecoderLanes:
    """Several :class:`StaticKVDecoder` s of one model (prompts prefilled apart, e.g. of very
    different lengths) decoded as one batch: each step runs the embedding, projections, MLP and
    head once over all their rows (the weights are read once per step, which is what a small
    batch's step costs on a CPU) and the attention per lane, over that lane's own cache, so a
    short prompt's rows never attend over a long one's padding. Rows are in lane order;
    :meth:`select` keeps rows across lanes and drops the lanes left empty."""

    def __init__(self, lanes: list[StaticKVDecoder]):
        if not lanes or any(d.model is not lanes[0].model for d in lanes):
            raise ValueError("DecoderLanes: needs one or more decoders of one model")
        self.model = lanes[0].model
        self.lanes = list(lanes)

    @property
    def rows(self) -> int:
        return sum(d.rows for d in self.lanes)

    def select(self, rows: torch.Tensor) -> None:
        """Keep ``rows`` (ascending indices into the current batch, lanes in order)."""
        kept, start = [], 0
        for d in self.lanes:
            b = d.rows
            mine = rows[(rows >= start) & (rows < start + b)] - start
            start += b
            if mine.numel() == 0:
                continue
            if mine.numel() < b:
                d.select(mine)
            kept.append(d)
        self.lanes = kept

    def step(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``[B]``, ``positions`` ``[B, 1]`` (all lanes' rows, in lane order) -> logits."""
        return _decode_step(self.model, self.lanes, tokens, positions)


def _decode_step(model, lanes: list[StaticKVDecoder], tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    inner = model.model
    B = tokens.shape[0]
    first = lanes[0]
    heads, kv_heads, head_dim = first.heads, first.kv_heads, first.head_dim
    masks = [d._open() for d in lanes]
    spans, start = [], 0
    for d in lanes:
        spans.append((start, start + d.rows))
        start += d.rows
    if start != B:
        raise ValueError(f"decode step: {B} tokens for {start} rows")
    x = inner.embed_tokens(tokens[:, None])
    cos, sin = inner.rotary_emb(x, positions)
    for i, layer in enumerate(first.layers):
        attn = layer.self_attn
        h = layer.input_layernorm(x)
        q = attn.q_proj(h).view(B, 1, heads, head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(B, 1, kv_heads, head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(B, 1, kv_heads, head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if len(lanes) == 1:
            o = first._attend(i, q, k, v, masks[0], attn.scaling)
        else:
            o = torch.cat([d._attend(i, q[a:b], k[a:b], v[a:b], m, attn.scaling)
                           for d, m, (a, b) in zip(lanes, masks, spans)])
        x = x + attn.o_proj(o.transpose(1, 2).reshape(B, 1, heads * head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    for d in lanes:
        d.length += 1
    return model.lm_head(inner.norm(x))[:, -1]
