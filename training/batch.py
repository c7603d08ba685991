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

A GRPO group is G completions of one prompt, so most rows of a micro-batch repeat a prompt that
others in it also carry. With ``share_prompts`` a micro-batch whose rows repeat prompts also
gets :class:`SharedPrompts`: each distinct prompt once, so the trainer runs the prompts once (keys
and values cached, with gradients) and every row's completion after its prompt's cache. The
log-probs and gradients are those of the full layout (the prompt's tokens see only the prompt, by
causality); what changes is the work: the demo's rollout batch holds ~10,600 prompt tokens of
which ~2,000 are distinct, against ~7,800 completion tokens. ``plan_micro_batches`` keeps the rows
of one prompt together when given ``prompt_keys``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from training.rollout import Rollout


@dataclass
class SharedPrompts:
    """The distinct prompts of a micro-batch and where each row's completion goes after them."""
    prompt_ids: torch.Tensor  # [u, P] each distinct prompt once, left-padded
    prompt_mask: torch.Tensor  # [u, P]
    prompt_pos: torch.Tensor  # [u, P]
    row_prompt: torch.Tensor  # long [b]: the prompt of each row (index into the u prompts)
    completion_mask: torch.Tensor  # long [b, C] 1 on completion tokens
    completion_pos: torch.Tensor  # long [b, C] position of each completion token (its prompt's length + t)


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
    temperature: torch.Tensor | None = None  # float32 [b]: rows drawn at their own temperature (0: the trainer's)
    shared: SharedPrompts | None = None  # set when rows repeat prompts and sharing is on

    @property
    def completion_len(self) -> int:
        return int(self.completion_ids.shape[1])


def plan_micro_batches(idx: Sequence[int], lengths: Sequence[int], micro_batch_size: int,
                       max_tokens: int | None = None,
                       prompt_keys: Sequence[tuple[int, int]] | None = None) -> list[list[int]]:
    """Split ``idx`` into micro-batches of similar lengths (longest first): at most
    ``micro_batch_size`` rows and, if given, at most ``max_tokens`` padded tokens each (a single
    longer sequence still gets its own micro-batch). With ``prompt_keys`` (per rollout: prompt
    length, prompt id) rows are ordered by prompt (longest first), then by length, so the rows
    of one prompt sit together and can share its forward."""
    if prompt_keys is None:
        order = sorted(idx, key=lambda i: (-lengths[i], i))
    else:
        order = sorted(idx, key=lambda i: (-prompt_keys[i][0], prompt_keys[i][1], -lengths[i], i))
    out: list[list[int]] = []
    cur: list[int] = []
    width = 0
    for i in order:
        if cur and (len(cur) >= micro_batch_size
                    or (max_tokens and (len(cur) + 1) * max(width, lengths[i]) > max_tokens)):
            out.append(cur)
            cur = []
        width = max(width, lengths[i]) if cur else lengths[i]
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def distinct_prompts(rollouts: Sequence[Rollout]) -> tuple[list[int], list[int]]:
    """``(the first rollout carrying each distinct prompt, each rollout's prompt id)``: ids number
    the distinct prompts in order of first appearance."""
    first: dict[tuple[int, ...], int] = {}
    rows: list[int] = []
    ids = [first.setdefault(tuple(r.prompt_ids), len(first)) for r in rollouts]
    for i, j in enumerate(ids):
        if j == len(rows):
            rows.append(i)
    return rows, ids


def prompt_keys(rollouts: Sequence[Rollout]) -> list[tuple[int, int]]:
    """(prompt length, prompt id) per rollout: equal ids for equal prompts (``plan_micro_batches``)."""
    return [(len(r.prompt_ids), j) for r, j in zip(rollouts, distinct_prompts(rollouts)[1])]


def collate(rollouts: Sequence[Rollout], idx: Sequence[int], adv: Sequence[float] | np.ndarray, pad_id: int,
            device: torch.device | str = "cpu", share_prompts: bool = False) -> MicroBatch:
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
    shared = _shared_prompts(rows, P, ids, att, pos, dev) if share_prompts else None
    temps = None
    if any(r.temperature is not None for r in rows):
        temps = torch.tensor([float(r.temperature) if r.temperature is not None else 0.0 for r in rows],
                             dtype=torch.float32).to(dev)
    return MicroBatch(list(idx), ids.to(dev), att.to(dev), pos.to(dev), comp.to(dev), lm.to(dev), advt.to(dev),
                      slp.to(dev), has.to(dev), n_tok, n_seq, shared=shared, temperature=temps)


def _shared_prompts(rows: Sequence[Rollout], P: int, ids: torch.Tensor, att: torch.Tensor, pos: torch.Tensor,
                    dev: torch.device) -> SharedPrompts | None:
    """The distinct prompts of ``rows`` (None when every row has its own: nothing to share)."""
    k, row_prompt = distinct_prompts(rows)  # a row carrying each distinct prompt; each row's prompt
    if len(k) == len(rows):
        return None
    lens = torch.tensor([len(r.prompt_ids) for r in rows], dtype=torch.long)
    C = ids.shape[1] - P
    comp_mask = att[:, P:]
    comp_pos = lens[:, None] + torch.arange(C, dtype=torch.long)[None, :]
    return SharedPrompts(ids[k, :P].to(dev), att[k, :P].to(dev), pos[k, :P].to(dev),
                         torch.tensor(row_prompt, dtype=torch.long, device=dev), comp_mask.to(dev),
                         comp_pos.to(dev))


def dummy_batch(pad_id: int, device: torch.device | str = "cpu") -> MicroBatch:
    """A one-token micro-batch that only exists so every rank runs the same number of passes."""
    dev = torch.device(device)
    one = torch.ones((1, 2), dtype=torch.long, device=dev)
    ids = torch.full((1, 2), pad_id, dtype=torch.long, device=dev)
    return MicroBatch([], ids, one, torch.tensor([[0, 1]], device=dev), ids[:, 1:], torch.zeros((1, 1), device=dev),
                      torch.zeros(1, device=dev), torch.zeros((1, 1), device=dev),
                      torch.zeros(1, dtype=torch.bool, device=dev), 0, 0, dummy=True)
