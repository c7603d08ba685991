"""Padding rollouts into model inputs, and planning micro-batches.

Layout of one micro-batch of b rollouts (L = longest prompt + completion, C = longest completion)::

    input_ids       [b, L]       each row's prompt then its completion, right-padded to L
    attention_mask  [b, L]       1 on real tokens
    position_ids    [b, L]       0, 1, 2, ...: every prompt starts at 0, as in the generation engine
    completion_ids  [b, C]
    loss_mask       [b, C]       1 on completion tokens (the loss is only on them)
    score_pos       [b, C]       where, among the last ``keep`` positions, the logits that score
                                 completion token t sit (position len(prompt) - 1 + t)

No row is padded on the left: a left pad is a query position that may attend to no key at all, and
CUDA's attention kernels answer such a row with NaN (transformers >= 5 no longer unmasks it); the
NaN stays out of the loss but its backward (0 x NaN) made every gradient NaN. A right pad attends
to the real tokens before it. Only the logits of the last ``keep`` positions are computed
(``logits_to_keep``): from the shortest prompt's last token on.

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
    prompt_ids: torch.Tensor  # [u, P] each distinct prompt once, right-padded (no left pads: see above)
    prompt_mask: torch.Tensor  # [u, P]
    prompt_pos: torch.Tensor  # [u, P]
    row_prompt: torch.Tensor  # long [b]: the prompt of each row (index into the u prompts)
    keep: int  # logits kept of the prompts' forward: the last ``keep`` positions
    last_pos: torch.Tensor  # long [u]: each prompt's last token among those ``keep`` positions
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
    score_pos: torch.Tensor | None = None  # long [b, C] (see the layout above); None: the last C + 1 positions
    score_start: int | None = None  # every row's prompt equally long: its logits are kept[:, start:start + C]
    keep: int = 0  # logits_to_keep for the forward (0: every position)

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
    plen = [len(r.prompt_ids) for r in rows]
    clen = [len(r.completion_ids) for r in rows]
    C = max(max(clen), 1)
    L = max(max(p + c for p, c in zip(plen, clen)), 1)
    ids = torch.full((b, L), pad_id, dtype=torch.long)
    att = torch.zeros((b, L), dtype=torch.long)
    comp = torch.full((b, C), pad_id, dtype=torch.long)
    lm = torch.zeros((b, C), dtype=torch.float32)
    slp = torch.zeros((b, C), dtype=torch.float32)
    has = torch.zeros(b, dtype=torch.bool)
    n_tok = n_seq = 0
    for k, r in enumerate(rows):
        p, c = plen[k], clen[k]
        ids[k, :p] = torch.tensor(r.prompt_ids, dtype=torch.long)
        att[k, :max(p + c, 1)] = 1  # a row with no token at all attends to its first (pad) position
        if c:
            ct = torch.tensor(r.completion_ids, dtype=torch.long)
            ids[k, p:p + c] = ct
            comp[k, :c] = ct
            lm[k, :c] = 1.0
            if r.logprobs:
                slp[k, :c] = torch.tensor(r.logprobs, dtype=torch.float32)
                has[k] = True
        n_tok += c
        n_seq += p + c
    pos = torch.arange(L, dtype=torch.long).expand(b, L).contiguous()
    first = max(min(plen) - 1, 0)  # the first position that scores a completion token
    keep = L - first
    score = (torch.tensor(plen, dtype=torch.long)[:, None] - 1 + torch.arange(C, dtype=torch.long)[None, :])
    score = score.clamp(0, L - 1) - first  # positions past a row's end score nothing (loss mask 0)
    advt = torch.tensor([float(adv[i]) for i in idx], dtype=torch.float32)
    dev = torch.device(device)
    shared = _shared_prompts(rows, C, dev) if share_prompts else None
    temps = None
    if any(r.temperature is not None for r in rows):
        temps = torch.tensor([float(r.temperature) if r.temperature is not None else 0.0 for r in rows],
                             dtype=torch.float32).to(dev)
    return MicroBatch(list(idx), ids.to(dev), att.to(dev), pos.to(dev), comp.to(dev), lm.to(dev), advt.to(dev),
                      slp.to(dev), has.to(dev), n_tok, n_seq, shared=shared, temperature=temps,
                      score_pos=score.to(dev), keep=keep,
                      score_start=0 if len(set(plen)) == 1 and plen[0] > 0 else None)


def _shared_prompts(rows: Sequence[Rollout], C: int, dev: torch.device) -> SharedPrompts | None:
    """The distinct prompts of ``rows`` (None when every row has its own: nothing to share)."""
    k, row_prompt = distinct_prompts(rows)  # a row carrying each distinct prompt; each row's prompt
    if len(k) == len(rows):
        return None
    plen = [len(rows[i].prompt_ids) for i in k]
    P = max(max(plen), 1)
    u = len(k)
    pids = torch.zeros((u, P), dtype=torch.long)
    patt = torch.zeros((u, P), dtype=torch.long)
    for n, i in enumerate(k):
        p = plen[n]
        pids[n, :p] = torch.tensor(rows[i].prompt_ids, dtype=torch.long)
        patt[n, :max(p, 1)] = 1
    first = max(min(plen) - 1, 0)
    last = torch.tensor([max(p - 1, 0) - first for p in plen], dtype=torch.long)
    lens = torch.tensor([len(r.prompt_ids) for r in rows], dtype=torch.long)
    cmask = torch.zeros((len(rows), C), dtype=torch.long)
    for n, r in enumerate(rows):
        cmask[n, :len(r.completion_ids)] = 1
    comp_pos = lens[:, None] + torch.arange(C, dtype=torch.long)[None, :]
    ppos = torch.arange(P, dtype=torch.long).expand(u, P).contiguous()
    return SharedPrompts(pids.to(dev), patt.to(dev), ppos.to(dev),
                         torch.tensor(row_prompt, dtype=torch.long, device=dev), P - first, last.to(dev),
                         cmask.to(dev), comp_pos.to(dev))


def dummy_batch(pad_id: int, device: torch.device | str = "cpu") -> MicroBatch:
    """A one-token micro-batch that only exists so every rank runs the same number of passes."""
    dev = torch.device(device)
    one = torch.ones((1, 2), dtype=torch.long, device=dev)
    ids = torch.full((1, 2), pad_id, dtype=torch.long, device=dev)
    return MicroBatch([], ids, one, torch.tensor([[0, 1]], device=dev), ids[:, 1:], torch.zeros((1, 1), device=dev),
                      torch.zeros(1, device=dev), torch.zeros((1, 1), device=dev),
                      torch.zeros(1, dtype=torch.bool, device=dev), 0, 0, dummy=True)
