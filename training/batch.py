"""Padding rollouts into model inputs, and planning micro-batches.

Layout of one micro-batch of b rollouts (P = longest prompt, C = longest completion)::

    input_ids       [b, P + C]   prompt left-padded to P, completion right-padded to C
    attention_mask  [b, P + C]   1 on real tokens
    position_ids    [b, P + C]   cumsum(attention_mask) - 1, clamped at 0: every prompt starts at 0,
                                 as in the generation engine, whatever the padding
    completion_ids  [b, C]
    loss_mask       [b, C]       1 on completion tokens (the loss is only on them)

All completions start at column P, so the logits of the last ``C + 1`` positions score them
(``logits_to_keep``): position P - 1 + t predicts completion token t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from training.rollout import Rollout


@dataclass
class MicroBatch:
    idx: list[int]  # indices into the local rollout list
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    completion_ids: torch.Tensor
    loss_mask: torch.Tensor  # float32
    adv: torch.Tensor  # float32 [b]
    sampler_logp: torch.Tensor  # float32 [b, C] (0 where not available)
    has_sampler: torch.Tensor  # bool [b]
    n_tokens: int  # loss tokens
    n_seq_tokens: int  # all real tokens (prompt + completion)
    dummy: bool = False  # keeps collective calls aligned across ranks; contributes nothing
    cache: dict = field(default_factory=dict)  # old / ref log-probs

    @property
    def completion_len(self) -> int:
        return int(self.completion_ids.shape[1])


def plan_micro_batches(idx: Sequence[int], lengths: Sequence[int], micro_batch_size: int,
                       max_tokens: int | None = None) -> list[list[int]]:
    """Split ``idx`` into micro-batches of similar lengths (longest first): at most
    ``micro_batch_size`` rows and, if given, at most ``max_tokens`` padded tokens each (a single
    longer sequence still gets its own micro-batch)."""
    order = sorted(idx, key=lambda i: (-lengths[i], i))
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        width = lengths[cur[0]] if cur else lengths[i]  # sorted: the first row is the widest
        if cur and (len(cur) >= micro_batch_size or (max_tokens and (len(cur) + 1) * width > max_tokens)):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def collate(rollouts: Sequence[Rollout], idx: Sequence[int], adv: Sequence[float] | np.ndarray, pad_id: int,
            device: torch.device | str = "cpu") -> MicroBatch:
    rows = [rollouts[i] for i in idx]
    b = len(rows)
    P = max(len(r.prompt_ids) for r in rows)
    C = max(max(len(r.completion_ids) for r in rows), 1)
    ids = torch.full((b, P + C), pad_id, dtype=torch.long)
    att = torch.zeros((b, P + C), dtype=torch.long)
    comp = torch.full((b, C), pad_id, dtype=torch.long)
    lm = torch.zeros((b, C), dtype=torch.float32)
    slp = torch.zeros((b, C), dtype=torch.float32)
    has = torch.zeros(b, dtype=torch.bool)
    n_tok = n_seq = 0
    for k, r in enumerate(rows):
        p, c = len(r.prompt_ids), len(r.completion_ids)
        ids[k, P - p:P] = torch.tensor(r.prompt_ids, dtype=torch.long)
        att[k, P - p:P + c] = 1
        if c:
            ct = torch.tensor(r.completion_ids, dtype=torch.long)
            ids[k, P:P + c] = ct
            comp[k, :c] = ct
            lm[k, :c] = 1.0
            if r.logprobs:
                slp[k, :c] = torch.tensor(r.logprobs, dtype=torch.float32)
                has[k] = True
        n_tok += c
        n_seq += p + c
    pos = (att.cumsum(-1) - 1).clamp(min=0)
    advt = torch.tensor([float(adv[i]) for i in idx], dtype=torch.float32)
    dev = torch.device(device)
    return MicroBatch(list(idx), ids.to(dev), att.to(dev), pos.to(dev), comp.to(dev), lm.to(dev), advt.to(dev),
                      slp.to(dev), has.to(dev), n_tok, n_seq)


def dummy_batch(pad_id: int, device: torch.device | str = "cpu") -> MicroBatch:
    """A one-token micro-batch that only exists so every rank runs the same number of passes."""
    dev = torch.device(device)
    one = torch.ones((1, 2), dtype=torch.long, device=dev)
    ids = torch.full((1, 2), pad_id, dtype=torch.long, device=dev)
    return MicroBatch([], ids, one, torch.tensor([[0, 1]], device=dev), ids[:, 1:], torch.zeros((1, 1), device=dev),
                      torch.zeros(1, device=dev), torch.zeros((1, 1), device=dev),
                      torch.zeros(1, dtype=torch.bool, device=dev), 0, 0, dummy=True)
