"""The SFT warm-up (the stand-in for pretraining): all four roles on the world's training tasks.

* Examples are drawn fresh every step from :mod:`coevo.tinyworld.sft_examples` (new test inputs each
  time, so the tester cannot just memorise one list per task), tokenised with
  :func:`roles.prompts.encode_example` (exactly what the generation engine feeds the model).
* Loss only on completion tokens (the EOS included), mean over the batch's completion tokens.
* Batches: draw ``bucket`` batches' worth of examples, sort by length, cut into batches and shuffle
  their order (little padding without packing unrelated examples together).
* AdamW (betas 0.9/0.95, weight decay 0.01 outside norms and embeddings), linear warm-up then
  cosine decay to 10%; grad-norm clip 1.0. The schedule's progress is ``step / steps``, or
  ``elapsed / time_budget_s`` when that is larger and at least 10% of the budget has passed, so a
  wall-clock budget still ends the run with a decayed learning rate while a run that keeps within
  its budget does not depend on the clock (the same seed gives the same model).
"""

from __future__ import annotations

import contextlib
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matrix.tasks import Task
from roles.prompts import encode_example

from .sft_examples import ROLE_WEIGHTS, Example, sample_examples


@dataclass
class SFTStats:
    steps: int = 0
    seconds: float = 0.0
    examples: int = 0
    tokens: int = 0  # real (non-pad) tokens processed
    completion_tokens: int = 0
    losses: list[float] = field(default_factory=list)  # per step
    lrs: list[float] = field(default_factory=list)
    first_loss: float = float("nan")
    final_loss: float = float("nan")  # mean of the last 10% of steps
    stopped_by_time: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "seconds": round(self.seconds, 2), "examples": self.examples,
                "tokens": self.tokens, "completion_tokens": self.completion_tokens,
                "first_loss": self.first_loss, "final_loss": self.final_loss,
                "tokens_per_s": round(self.tokens / max(self.seconds, 1e-9), 1),
                "stopped_by_time": self.stopped_by_time}


def encode(tokenizer, examples: Sequence[Example], max_len: int = 512) -> list[tuple[list[int], list[int]]]:
    out = []
    for e in examples:
        p, c = encode_example(tokenizer, e.prompt, e.completion)
        if len(p) + len(c) > max_len:  # keep the completion whole; cut the prompt's head
            keep = max_len - len(c)
            if keep < 8:
                continue
            p = p[-keep:]
        out.append((p, c))
    return out


def collate(pairs: Sequence[tuple[list[int], list[int]]], pad_id: int):
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` (-100 outside completions)."""
    import torch

    n = max(len(p) + len(c) for p, c in pairs)
    ids = torch.full((len(pairs), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(pairs), n), dtype=torch.long)
    labels = torch.full((len(pairs), n), -100, dtype=torch.long)
    for i, (p, c) in enumerate(pairs):
        seq = p + c
        ids[i, : len(seq)] = torch.tensor(seq)
        mask[i, : len(seq)] = 1
        labels[i, len(p): len(seq)] = torch.tensor(c)
    return ids, mask, labels


def _param_groups(model, weight_decay: float):
    decay, no_decay = [], []
    seen = set()
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        (no_decay if p.ndim < 2 or "embed" in name or "norm" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


@contextlib.contextmanager
def _torch_threads(n: int | None):
    """``torch.set_num_threads(n)`` inside the block (nothing if ``n`` is falsy), restored after."""
    import torch

    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


TIME_GATE = 0.1  # the wall-clock budget may steer the schedule only after this fraction of it


def lr_factor(progress: float, warmup: float = 0.05, floor: float = 0.1) -> float:
    if progress < warmup:
        return max(progress / warmup, 0.01)
    t = min(1.0, (progress - warmup) / max(1e-9, 1 - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t))


def sft_train(model, tokenizer, tasks: Sequence[Task], steps: int = 600, batch_size: int = 32,
              lr: float = 3e-3, seed: int = 0, progress: bool = True, threads: int | None = None,
              time_budget_s: float | None = None, weights: dict[str, float] | None = None,
              bucket: int = 16, weight_decay: float = 0.01, max_len: int = 512,
              log_every: int = 25, callback=None, say=None, proposer_grow: float = 0.0) -> SFTStats:
    """Supervised warm-up of ``model`` on ``tasks`` (all roles, by ``weights``). Returns stats.

    ``threads`` sets ``torch.set_num_threads`` for the warm-up (restored after);
    ``time_budget_s`` stops early (the schedule is stretched to end in time, see the module doc);
    ``callback(step, loss, lr)`` is called every step; ``progress`` prints a line every
    ``log_every`` steps to stderr, with the ETA; without it, ``say`` (where given) gets a status line
    for the first and last step and one at most every 30 s (stderr a log file: the warm-up's minutes
    were silent). ``proposer_grow``: the share of Proposer targets one step longer than a
    reference (:class:`~coevo.tinyworld.sft_examples.NovelCompositions`).
    """
    import torch

    from training.metrics_file import StepStatus, duration

    status = StepStatus(steps, keys=("loss",)) if say is not None and not progress else None

    with _torch_threads(threads):
        torch.manual_seed(seed)
        rng = random.Random(seed)
        model.train()
        opt = torch.optim.AdamW(_param_groups(model, weight_decay), lr=lr, betas=(0.9, 0.95), eps=1e-8)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        weights = dict(weights or ROLE_WEIGHTS)
        stats = SFTStats()
        queue: list[list[tuple[list[int], list[int]]]] = []
        t0 = time.perf_counter()
        chunk_seed = rng.getrandbits(32)
        for step in range(steps):
            if not queue:
                exs = sample_examples(tasks, batch_size * bucket, seed=chunk_seed, weights=weights,
                                      proposer_grow=proposer_grow)
                chunk_seed = rng.getrandbits(32)
                enc = sorted(encode(tokenizer, exs, max_len), key=lambda pc: len(pc[0]) + len(pc[1]))
                queue = [enc[i: i + batch_size] for i in range(0, len(enc), batch_size)]
                rng.shuffle(queue)
            batch = queue.pop()
            elapsed = time.perf_counter() - t0
            prog = step / steps
            if time_budget_s and elapsed >= TIME_GATE * time_budget_s:
                # behind the budget's pace: stretch the schedule to end in time. Never in the first
                # 10% of the budget, where start-up costs and a busy machine would let the clock set
                # the warm-up's learning rate (the same command then gave different models); a run
                # that finishes within its budget is steered by the step count alone
                prog = max(prog, elapsed / time_budget_s)
            cur_lr = lr * lr_factor(prog)
            for g in opt.param_groups:
                g["lr"] = cur_lr
            ids, mask, labels = collate(batch, pad)
            out = model(input_ids=ids, attention_mask=mask)
            logits = out.logits[:, :-1].float()
            tgt = labels[:, 1:]
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                                     tgt.reshape(-1), ignore_index=-100)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            lv = float(loss.detach())
            stats.steps += 1
            stats.examples += len(batch)
            stats.tokens += int(mask.sum())
            stats.completion_tokens += int((tgt != -100).sum())
            stats.losses.append(lv)
            stats.lrs.append(cur_lr)
            if callback is not None:
                callback(step, lv, cur_lr)
            elapsed = time.perf_counter() - t0
            if progress and (step % log_every == 0 or step == steps - 1):
                tps = stats.tokens / max(elapsed, 1e-9)
                eta = elapsed / (step + 1) * (steps - step - 1)
                if time_budget_s:
                    eta = min(eta, max(0.0, time_budget_s - elapsed))
                print(f"[sft] step {step + 1}/{steps} loss {lv:.3f} lr {cur_lr:.2e} "
                      f"{elapsed:.0f}s {tps:.0f} tok/s, ETA {duration(eta)}", file=sys.stderr, flush=True)
            line = status.after(step + 1, {"loss": lv}) if status is not None else None
            if line:
                say("SFT warm-up: " + line)
            if time_budget_s and elapsed >= time_budget_s:
                stats.stopped_by_time = True
                break
        opt.zero_grad(set_to_none=True)  # hand the model on without the last step's gradients
        stats.seconds = time.perf_counter() - t0
        if stats.losses:
            stats.first_loss = stats.losses[0]
            k = max(1, len(stats.losses) // 10)
            stats.final_loss = sum(stats.losses[-k:]) / k
        model.eval()
        return stats
