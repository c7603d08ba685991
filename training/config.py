"""``GRPOConfig``: loss, advantage and update settings of :class:`training.trainer.PolicyTrainer`.

``loss_type`` picks a preset; every field left at ``None`` takes the preset's value, and a field
set explicitly always wins (``GRPOConfig(loss_type="dapo", dynamic_sampling=False)`` is DAPO
without dynamic sampling). :meth:`GRPOConfig.resolved` returns the config with the preset applied.

=============  =============  ====================  ===============  ==============  ================
loss_type      scale_rewards  aggregation           eps_low/high     mask_truncated  dynamic_sampling
=============  =============  ====================  ===============  ==============  ================
grpo_plus      group          token_mean            0.2 / 0.28       True            False
grpo           group          seq_mean_token_mean   0.2 / 0.2        False           False
dr_grpo        none           constant_norm         0.2 / 0.2        False           False
dapo           group          token_mean            0.2 / 0.28       True            True
=============  =============  ====================  ===============  ==============  ================

All presets: no KL (``beta=0``; ``beta>0`` adds a k3 KL to a frozen reference copy) and no
entropy term. GRPO+ (DeepCoder) is the default.

Fields
------
* ``scale_rewards``: ``group`` divides ``reward - group mean`` by the group's std (ddof=1, plus
  ``adv_eps``), ``batch`` by the std of the batch's rewards of the sample's role (a joint batch
  mixes roles whose rewards live on different scales), ``none`` not at all (Dr. GRPO).
* ``aggregation``: ``token_mean`` = sum of token losses / tokens in the mini-batch (DAPO, GRPO+);
  ``seq_mean_token_mean`` = mean over sequences of each sequence's token mean (GRPO);
  ``constant_norm`` = sum of token losses / (sequences x ``max_completion_length``) (Dr. GRPO; when
  ``max_completion_length`` is None the longest completion of the rollout batch is used).
* ``mask_truncated``: overlong filtering (see :mod:`training.trainer`).
* ``dynamic_sampling``: DAPO's filter: groups whose rewards are all equal (or that have fewer than 2
  rewards) are removed from the batch before the update, so their tokens do not dilute the loss
  normaliser. The trainer does not re-sample; a loop that wants full batches over-samples prompts
  (:func:`training.advantages.informative_groups` tells which groups survive).
* ``updates_per_batch``: optimizer steps per rollout batch: the batch is shuffled (seeded) and
  split into this many mini-batches, one optimizer step each (DeepCoder: 2). ``epochs`` repeats
  that pass. ``micro_batch_size`` (and ``max_tokens_per_micro_batch``) bound each forward/backward;
  gradients of a mini-batch's micro-batches are accumulated.
* ``share_prompts`` (default ``None``: on where the model is on the CPU, off on a GPU): a GRPO
  group repeats its prompt G times; micro-batches keep a prompt's rows together, the prompt runs
  once (keys and values cached, with gradients) and each row's completion runs after it. Same
  log-probs and gradients as running every row whole (up to float rounding), fewer tokens through
  the model: on the tiny world's rollout batches ~10,600
  prompt tokens are ~2,000 distinct. Off for models without ``logits_to_keep``/``position_ids``/a
  KV cache argument, with ``gradient_checkpointing`` (which turns the cache off in training) and
  under DeepSpeed ZeRO-3 (a shared micro-batch calls the model twice, and ZeRO-3's parameter
  gathers need the same calls on every rank). A shared micro-batch makes two model calls instead of
  one, so with prompts much shorter than the completions it can cost more than it saves:
  ``benchmarks/grpo_vs_trl.py`` (prompts of a few tokens, 32-token completions, a 0.1M model) spends
  0.26-0.27 s a step outside generation with it and 0.18-0.22 s without; set it false there. On
  an H100 it costs more than it saves even with long prompts: ``benchmarks/gpu_throughput.py``
  (Qwen2.5-0.5B shape, 16 prompts x 8, 256 + 256 tokens, bf16) updates in 2.90 s shared against
  1.53 s unshared (a GPU is not bound by the prompt's FLOPs at these sizes, and the shared path's
  second call, cache copies and masked attention cost more), hence the default.
* ``old_logprobs``: where the ratio's denominator comes from. ``recompute``: the trainer's own
  log-probs before the first optimizer step of the batch (mini-batch 0 takes them from its first
  forward, detached; the others get one no-grad forward), so the first update has ratio exactly 1
  and the sampler/trainer numerical mismatch never enters the loss; the sampler's log-probs are
  kept for the ``logprob_diff`` diagnostic. ``sampler``: the rollouts' log-probs (no extra
  forward; the ratio then also carries the sampler/trainer mismatch). ``auto`` (default):
  ``sampler`` where the two are the same numbers up to rounding, i.e. the trainer was told that
  its rollouts are sampled from its own weights (``PolicyTrainer(own_sampler=True)``: ``coevo
  train`` with the in-process sampler, ``top_p`` 1 and the joint update) and it computes in
  float32 on one process with dropout off, without DeepSpeed or a sampler correction;
  ``recompute`` otherwise. In the tiny world the two
  differ by 1.8e-7 on average (``logprob_diff``) and ``sampler`` saves the no-grad forward of
  half the samples (about a fifth of the update's time).
* ``importance_sampling_level``: ``token`` (default) = one ratio per token; ``sequence`` = GSPO's
  sequence ratio, the geometric mean of the sequence's token ratios, clipped with
  ``eps_low``/``eps_high`` (GSPO uses 3e-4 / 4e-4 and ``seq_mean_token_mean``); see
  :mod:`training.losses`.
* ``is_correction``: sampler correction for rollouts whose log-probs come from another engine
  (vLLM): ``none`` (default), ``token_truncate`` (TRL's ``vllm_importance_sampling_correction``
  with ``token_truncate``: per-token ratio trainer/sampler, capped at ``is_clip_max``),
  ``token_mask``, ``sequence_truncate``, ``sequence_mask``. The trainer's old log-probs are the
  numerator, so it needs ``old_logprobs: recompute``; rollouts without sampler log-probs get
  weight 1. Adds the ``mismatch/*`` and ``is/*`` metrics (see :mod:`training.trainer`).
  ``is_clip_max`` (2.0) / ``is_clip_min`` (none): the bounds C_max / C_min.
* ``temperature``: the training forward divides logits by it (set it to the sampling
  temperature); top-p is not applied in training.
* ``lr_schedule``/``warmup_steps``/``total_steps`` count calls to ``PolicyTrainer.step`` (rollout
  batches); the rate is constant within one call.
* ``role_weights``: multiplies the advantages (hence the loss) of a role's samples; missing roles
  weigh 1; weight 0 removes the role's samples from the loss.
* ``deepspeed``: a DeepSpeed config (path to JSON, or a dict); ``None`` = plain PyTorch (data
  parallel via all-reduce when ``torch.distributed`` is initialised).
* ``bf16``: ``auto`` = bf16 on CUDA devices that support it, fp32 elsewhere.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

LOSS_TYPES = ("grpo_plus", "grpo", "dr_grpo", "dapo")
SCALE_REWARDS = ("group", "batch", "none")
AGGREGATIONS = ("token_mean", "seq_mean_token_mean", "constant_norm")
LR_SCHEDULES = ("constant", "cosine", "linear")
OLD_LOGPROBS = ("auto", "recompute", "sampler")
IS_LEVELS = ("token", "sequence")
IS_CORRECTIONS = ("none", "token_truncate", "token_mask", "sequence_truncate", "sequence_mask")

PRESETS: dict[str, dict[str, Any]] = {
    "grpo_plus": dict(scale_rewards="group", aggregation="token_mean", eps_low=0.2, eps_high=0.28,
                      mask_truncated=True, dynamic_sampling=False),
    "grpo": dict(scale_rewards="group", aggregation="seq_mean_token_mean", eps_low=0.2, eps_high=0.2,
                 mask_truncated=False, dynamic_sampling=False),
    "dr_grpo": dict(scale_rewards="none", aggregation="constant_norm", eps_low=0.2, eps_high=0.2,
                    mask_truncated=False, dynamic_sampling=False),
    "dapo": dict(scale_rewards="group", aggregation="token_mean", eps_low=0.2, eps_high=0.28,
                 mask_truncated=True, dynamic_sampling=True),
}


@dataclass
class GRPOConfig:
    loss_type: str = "grpo_plus"  # preset: grpo_plus | grpo | dr_grpo | dapo (fills the fields left null below)
    # -- preset-controlled (None = take the preset's value)
    eps_low: float | None = None  # lower clip of the ratio, 1 - eps_low (preset: 0.2)
    eps_high: float | None = None  # upper clip, 1 + eps_high (clip-higher; grpo_plus/dapo: 0.28)
    scale_rewards: str | None = None  # advantage scaling: group (std of the group) | batch | none (Dr. GRPO)
    aggregation: str | None = None  # token_mean | seq_mean_token_mean | constant_norm
    mask_truncated: bool | None = None  # overlong filtering: a truncated sample's tokens leave the loss
    dynamic_sampling: bool | None = None  # DAPO: drop groups whose rewards are all equal
    # -- loss
    beta: float = 0.0  # KL to a frozen reference (k3 estimator); > 0 keeps a reference copy
    max_completion_length: int | None = None  # constant_norm's L (None: longest in the batch)
    adv_eps: float = 1e-4  # added to the std when scaling advantages
    temperature: float = 1.0  # the training forward divides logits by it (set to loop.temperature)
    # multiplies a role's advantages; missing = 1, 0 = left out (role_weights.fixer=1.5 changes one)
    role_weights: dict[str, float] = field(default_factory=dict)
    old_logprobs: str = "auto"  # ratio denominator: auto | recompute (trainer, before the first step) | sampler
    importance_sampling_level: str = "token"  # token | sequence (GSPO)
    is_correction: str = "none"  # sampler correction: none | token_truncate | token_mask | sequence_*
    is_clip_max: float | None = 2.0  # C_max of the sampler correction (None: no upper bound)
    is_clip_min: float | None = None  # C_min (None: no lower bound)
    # -- update
    updates_per_batch: int = 2  # optimizer steps per rollout batch (its mini-batches; DeepCoder: 2)
    epochs: int = 1  # passes over the rollout batch
    micro_batch_size: int = 8  # sequences per forward/backward (gradients accumulate over a mini-batch)
    max_tokens_per_micro_batch: int | None = None  # also bound a micro-batch by tokens
    share_prompts: bool | None = None  # a repeated prompt runs once per micro-batch (None: on CPU only)
    lr: float = 1e-6  # AdamW learning rate (the tiny world uses 1e-4)
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])  # AdamW betas
    adam_eps: float = 1e-8  # AdamW epsilon
    weight_decay: float = 0.0  # AdamW weight decay
    grad_clip: float | None = 1.0  # None or 0: no clipping
    warmup_steps: int = 0  # linear warm-up, in trainer steps (rollout batches)
    lr_schedule: str = "constant"  # constant | cosine | linear
    min_lr_ratio: float = 0.0  # cosine/linear decay to lr * min_lr_ratio
    total_steps: int | None = None  # schedule length in trainer steps (null: loop.steps)
    # -- engine
    # DeepSpeed config (JSON path, relative to the config file); null = plain PyTorch
    deepspeed: str | dict | None = None
    bf16: bool | str = "auto"  # bf16 autocast: auto (CUDA devices that support it) | true | false
    gradient_checkpointing: bool = False  # recompute activations in the backward (less memory)
    disable_dropout: bool = True  # dropout off in the policy (its log-probs must match the sampler's)
    peak_tflops: float | None = None  # per device; reported MFU needs it
    seed: int = 0  # mini-batch shuffling

    # ------------------------------------------------------------------ presets
    def resolved(self) -> GRPOConfig:
        """A copy with every ``None`` preset field filled from ``PRESETS[loss_type]``."""
        if self.loss_type not in PRESETS:
            raise ValueError(f"loss_type: must be one of {list(LOSS_TYPES)}, got {self.loss_type!r}")
        preset = PRESETS[self.loss_type]
        changes = {k: v for k, v in preset.items() if getattr(self, k) is None}
        return dataclasses.replace(self, **changes)

    def validate(self) -> None:
        """Raise ``ValueError("field: message")`` for the first invalid field."""
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type: must be one of {list(LOSS_TYPES)}, got {self.loss_type!r}")
        c = self.resolved()
        _in(c, "scale_rewards", SCALE_REWARDS)
        _in(c, "aggregation", AGGREGATIONS)
        _in(c, "lr_schedule", LR_SCHEDULES)
        _in(c, "old_logprobs", OLD_LOGPROBS)
        _in(c, "importance_sampling_level", IS_LEVELS)
        _in(c, "is_correction", IS_CORRECTIONS)
        if c.is_correction != "none":
            if c.old_logprobs == "sampler":
                raise ValueError("is_correction: needs old_logprobs='recompute' (with 'sampler' the ratio already "
                                 "carries the sampler/trainer mismatch)")
            for name in ("is_clip_max", "is_clip_min"):
                v = getattr(c, name)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0
                                      or not math.isfinite(v)):
                    raise ValueError(f"{name}: must be a finite number > 0 or null")
            if c.is_clip_max is None and c.is_clip_min is None:
                raise ValueError("is_clip_max: set is_clip_max and/or is_clip_min for the sampler correction")
            if c.is_clip_max is not None and c.is_clip_min is not None and not c.is_clip_min < c.is_clip_max:
                raise ValueError("is_clip_min: must be < is_clip_max")
        if not 0 <= c.eps_low < 1:  # type: ignore[operator]  # resolved: every preset sets it
            raise ValueError("eps_low: must be in [0, 1)")
        if not c.eps_high >= 0:  # type: ignore[operator]  # resolved: every preset sets it
            raise ValueError("eps_high: must be >= 0")
        _nonneg(c, "beta")
        _nonneg(c, "weight_decay")
        _nonneg(c, "lr")
        _nonneg(c, "warmup_steps")
        if not (isinstance(c.adv_eps, (int, float)) and c.adv_eps > 0):
            raise ValueError("adv_eps: must be > 0")
        if not (isinstance(c.temperature, (int, float)) and c.temperature > 0):
            raise ValueError("temperature: must be > 0 (the training forward divides logits by it)")
        for name in ("updates_per_batch", "epochs", "micro_batch_size"):
            v = getattr(c, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: must be an integer >= 1")
        for name in ("max_tokens_per_micro_batch", "max_completion_length", "total_steps"):
            v = getattr(c, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"{name}: must be an integer >= 1 or null")
        if c.grad_clip is not None and not c.grad_clip >= 0:
            raise ValueError("grad_clip: must be >= 0 or null")
        if len(c.betas) != 2 or not all(0 <= b < 1 for b in c.betas):
            raise ValueError("betas: must be two numbers in [0, 1)")
        if not c.adam_eps > 0:
            raise ValueError("adam_eps: must be > 0")
        if not 0 <= c.min_lr_ratio <= 1:
            raise ValueError("min_lr_ratio: must be in [0, 1]")
        if c.lr_schedule != "constant" and c.total_steps is None:
            raise ValueError(f"total_steps: required by lr_schedule={c.lr_schedule!r}")
        for role, w in c.role_weights.items():
            if not isinstance(w, (int, float)) or isinstance(w, bool) or not math.isfinite(w) or w < 0:
                raise ValueError(f"role_weights: weight of {role!r} must be a finite number >= 0")
        if c.bf16 not in (True, False, "auto"):
            raise ValueError(f"bf16: must be true, false or 'auto', got {c.bf16!r}")
        if c.deepspeed is not None and not isinstance(c.deepspeed, (str, dict)):
            raise ValueError("deepspeed: must be a path to a DeepSpeed JSON config, a mapping, or null")
        if c.peak_tflops is not None and not c.peak_tflops > 0:
            raise ValueError("peak_tflops: must be > 0 or null")

    # ------------------------------------------------------------------ helpers
    @property
    def optimizer_steps_per_batch(self) -> int:
        return self.updates_per_batch * self.epochs

    def role_weight(self, role: str) -> float:
        return float(self.role_weights.get(role, 1.0))

    def lr_at(self, step: int) -> float:
        """Learning rate for the ``step``-th call to ``PolicyTrainer.step`` (0-based)."""
        base = float(self.lr)
        if self.warmup_steps and step < self.warmup_steps:
            return base * (step + 1) / self.warmup_steps
        if self.lr_schedule == "constant" or not self.total_steps:
            return base
        span = max(1, self.total_steps - self.warmup_steps)
        t = min(1.0, max(0.0, (step - self.warmup_steps) / span))
        floor = base * self.min_lr_ratio
        if self.lr_schedule == "linear":
            return floor + (base - floor) * (1.0 - t)
        return floor + (base - floor) * 0.5 * (1.0 + math.cos(math.pi * t))


def _in(c, name, choices):
    if getattr(c, name) not in choices:
        raise ValueError(f"{name}: must be one of {list(choices)}, got {getattr(c, name)!r}")


def _nonneg(c, name):
    v = getattr(c, name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
        raise ValueError(f"{name}: must be a number >= 0")
