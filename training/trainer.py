"""``PolicyTrainer``: the GRPO-family policy update over a batch of :class:`~training.rollout.Rollout`.

One call to :meth:`PolicyTrainer.step` does, for a batch of rollouts:

1. **Advantages** over the whole batch (all ranks' rollouts): :mod:`training.advantages` with the
   config's ``scale_rewards`` (``batch``: the std of the batch's rewards of the sample's role, so
   that roles with rewards on other scales do not shrink each other's advantages), per-role
   weights multiplied in; the turns of a multi-turn episode
   (same ``group`` and ``episode``) count once in their group and share the episode's advantage.
2. **Selection** of the samples that enter the loss: finite reward, kept by dynamic sampling (if
   on), role weight > 0, at least one completion token, and, with overlong filtering
   (``mask_truncated``), not truncated. Samples of zero-variance groups stay in (advantage 0:
   no policy gradient, but their tokens count in the token-mean denominator and the KL term)
   unless dynamic sampling drops them. Without a KL term (``beta`` 0 or no reference model) a
   sample whose advantage is exactly 0 adds exactly nothing to the gradient: it keeps its place
   in its mini-batch and its tokens in the denominator, but runs no forward or backward pass
   (``samples_no_pass``; in the tiny world about a sixth of the samples, a sixth of the update's
   time). The clip, ratio and sampler-mismatch statistics are then over the samples that ran.

   *Overlong filtering, precisely*: a truncated sample's reward still counts in its group's mean
   and std, in the zero-variance test and in the reward metrics (``reward/<role>``); so it shifts
   the other samples' advantages exactly as an untruncated sample with that reward would. None of
   its tokens enters the loss, the loss denominator (token count, sequence count), the clip/ratio/KL
   statistics or the forward passes. It is counted in ``samples_truncated``.
3. **Mini-batches**: the selected samples are shuffled (seeded by ``(seed, step)``) and split into
   ``updates_per_batch`` mini-batches; each is one optimizer step, repeated for ``epochs``. A
   mini-batch is cut into micro-batches of similar length (``micro_batch_size`` rows,
   ``max_tokens_per_micro_batch`` padded tokens) whose gradients are accumulated; the loss of each
   micro-batch is divided by the denominator of the whole mini-batch (over all ranks), so the
   accumulated gradient equals that of the mini-batch loss at once.
4. **Old log-probs** (the ratio's denominator), per ``old_logprobs`` (``auto`` resolves to one of
   the two below when the trainer is built; see :class:`~training.config.GRPOConfig`): ``recompute`` uses
   the trainer's own log-probs before the batch's first optimizer step: mini-batch 0 takes them
   from its first forward (detached, so its first ratio is exactly 1), the other mini-batches
   get one no-grad forward before any update (with the same micro-batch shapes as their later
   training forward). The sampler's log-probs serve the ``logprob_diff`` diagnostic (mean absolute
   difference sampler vs trainer). ``sampler`` uses the rollouts' log-probs directly.
5. **Update**: AdamW with the learning rate of this step (``lr_at``), gradient clipping to
   ``grad_clip``; through a DeepSpeed engine when ``config.deepspeed`` is set.

Data parallelism. With ``torch.distributed`` initialised (``torchrun``/``deepspeed`` launchers, or
by hand), ``step(rollouts)`` expects the *same* rollout list on every rank and gives each rank a
shard of every mini-batch (a digest of the batch is compared across ranks: a mismatch is a
``ValueError``); ``step(rollouts, local=True)`` takes each rank's own rollouts and
gathers only their (reward, group, role, truncated) to compute advantages over the union. Every
rank runs the same number of forward/backward passes (short ranks run empty "dummy" passes), and
the loss is scaled so that the averaged gradient equals the single-process gradient of the whole
mini-batch. Without DeepSpeed, gradients are averaged with one all-reduce per optimizer step.

DeepSpeed. ``config.deepspeed`` names a JSON config (``configs/ds_zero2.json``,
``configs/ds_zero3.json``) or is a dict. The trainer owns micro-batching, accumulation boundaries,
loss scaling and the learning rate, so it sets ``train_micro_batch_size_per_gpu``,
``gradient_accumulation_steps`` (1: boundaries are set per mini-batch), ``train_batch_size`` and,
where ``"auto"``, ``gradient_clipping`` and ``bf16.enabled``; a ``scheduler`` section is an error;
without an ``optimizer`` section it passes its own ``torch.optim.AdamW``. On CPU the engine runs on
gloo (see :mod:`training.distributed`). :meth:`generation_context` gathers ZeRO-3 weights for
sampling; :meth:`export` consolidates them for ``save_pretrained``.

Metrics returned by :meth:`step` (floats): ``loss`` (mean mini-batch loss), ``clip_frac``,
``clip_frac/low``, ``clip_frac/high``, ``ratio_mean``, ``ratio_max``, ``kl`` (when ``beta > 0``),
``grad_norm`` (mean pre-clip norm), ``lr``, ``optimizer_steps``, ``optimizer_steps_skipped_nonfinite``
(steps whose gradient held NaN/inf, left out instead of poisoning the weights), ``tokens`` (loss tokens),
``samples_in_loss``, ``samples_truncated``, ``samples_no_reward``, ``groups``,
``groups_zero_std``, ``groups_dropped`` (no sample left: all NaN, or removed by dynamic sampling),
``tokens_per_s`` (prompt + completion tokens through forward/backward per second, this device),
``time/update_s``, ``time/prepare_s``, ``logprob_diff``, ``mfu`` (with ``peak_tflops``) and per role
``reward/<role>``, ``reward_std/<role>`` (all finite rewards, truncated included),
``samples/<role>``, ``adv_abs/<role>`` (mean |advantage| in the loss), ``frac_zero_std/<role>``.

Sampler correction (``is_correction`` other than ``none``; for rollouts sampled by another engine,
e.g. vLLM): when a micro-batch's old log-probs are known (before the batch's first optimizer
step, see 4.), :func:`training.losses.sampler_importance_weights` turns old vs sampler log-probs
into capped weights that multiply every token's loss for all the batch's optimizer steps. Rows
without sampler log-probs get weight 1. Extra metrics (over loss tokens with sampler log-probs, all
ranks): ``mismatch/logprob_diff_max`` (max |trainer - sampler|; the mean is ``logprob_diff``),
``mismatch/kl`` (mean k3 estimate of KL(sampler || trainer)), ``is/ratio_mean``,
``is/ratio_min``, ``is/ratio_max`` (the weights after capping, per token or per sequence) and
``is/outside_frac`` (share of tokens or sequences whose ratio was capped or masked). With the
option off the metrics are exactly those above.

GSPO (``importance_sampling_level: sequence``): the ratio is per sequence (see
:mod:`training.losses`); clip and ratio statistics then count a sequence's ratio on each of its
tokens.

Precision and devices. The model stays where it is (``model.to(device)`` before building the
trainer). With ``bf16`` (``auto``: CUDA with bf16 support) the forward runs under bf16 autocast
with fp32 weights, or, with DeepSpeed, in DeepSpeed's bf16 mode (bf16 weights, fp32 master copy).
Log-probs are always computed in float32 from the logits. Dropout is disabled at construction
(``disable_dropout``) so forwards are deterministic and the first ratio is exactly 1. bf16
autocast also runs on CPU (``bf16: true``; ``auto`` turns it on for CUDA only), and so does
``gradient_checkpointing`` (the model's ``gradient_checkpointing_enable``); ZeRO-2/3 and bf16 on
CUDA are written for, but not tested by, the CPU test suite.

Rollout engines with their own copy of the weights (:mod:`roles.vllm_engine`) read the policy
through :meth:`iter_full_parameters` (under ZeRO-3 one gathered parameter at a time) and compare
:attr:`weights_version` (bumped by every optimizer step and checkpoint load) with the version they
hold; :attr:`gather_for_generation` = False stops :meth:`generation_context` from gathering ZeRO-3
weights for sampling that such an engine does not need.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import inspect
import json
import math
import time
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training import distributed as D
from training.advantages import compute_advantages
from training.batch import MicroBatch, collate, dummy_batch, plan_micro_batches, prompt_keys
from training.config import GRPOConfig
from training.losses import (
    loss_denominator,
    policy_loss,
    row_temperatures,
    sampler_importance_weights,
    token_logprobs,
)
from training.rollout import Rollout, check_rollouts

# stats accumulated over micro-batches, summed over ranks
_SUM_KEYS = ("loss", "tok", "clip_low", "clip_high", "ratio_sum", "kl_sum", "diff_sum", "diff_n",
             "train_tokens", "aux_tokens", "samples", "no_pass")
# sampler-correction stats (only with is_correction): summed, and extremes
_IS_SUM_KEYS = ("n", "diff_sum", "k3_sum", "units", "w_sum", "outside")
_IS_MAX_KEYS = ("diff_max", "w_max")


class PolicyTrainer:
    """GRPO+ (and GRPO / Dr. GRPO / DAPO) updates of a causal LM; see the module doc."""

    def __init__(self, model, config: GRPOConfig, pad_token_id: int, ref_model=None, own_sampler: bool = False):
        """``own_sampler``: the rollouts will be sampled from this trainer's own weights, in this
        process, without top-p (``old_logprobs: auto`` may then use their log-probs)."""
        config.validate()
        self.config = config
        self.cfg = config.resolved()
        self.pad_token_id = int(pad_token_id)
        self.step_count = 0  # calls to step() done
        self.optimizer_steps = 0
        self.nonfinite_skips = 0  # optimizer steps left out: their gradient held NaN/inf
        self.weights_version = 0  # changes whenever the weights do (optimizer step, checkpoint load)
        self.gather_for_generation = True  # generation_context gathers ZeRO-3 weights (HF sampling)
        cfg = self.cfg
        if cfg.disable_dropout:
            _disable_dropout(model)
        if cfg.gradient_checkpointing:
            enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
            enable()
            if hasattr(model, "config"):
                model.config.use_cache = False
        dev = _param_device(model)
        if dev.type == "cuda" and dev.index is not None:
            torch.cuda.set_device(dev)  # collectives (nccl) and object gathers use the current device
        self.bf16 = bool(cfg.bf16 is True or (cfg.bf16 == "auto" and dev.type == "cuda"
                                              and torch.cuda.is_bf16_supported()))
        self.ref_model = None
        if cfg.beta > 0:
            self.ref_model = ref_model if ref_model is not None else copy.deepcopy(model)
            self.ref_model.eval()
            for p in self.ref_model.parameters():
                p.requires_grad_(False)
        elif ref_model is not None:
            self.ref_model = ref_model
        self.engine = None
        self.ds_config: dict | None = None
        # gradients left on the model (e.g. by a warm-up's last backward) would add into the first
        # update, which accumulates into .grad and zeroes it only after each step (DeepSpeed's
        # gradient hooks accumulate into them as well)
        model.zero_grad(set_to_none=True)
        if cfg.deepspeed is not None:
            self._init_deepspeed(model)
        else:
            self._model = model
            params = [p for p in model.parameters() if p.requires_grad]
            low = sorted({str(p.dtype).removeprefix("torch.") for p in params
                          if p.dtype in (torch.bfloat16, torch.float16)})
            if low:
                warnings.warn(f"training {'/'.join(low)} weights with plain AdamW: updates smaller than the weights' "
                              f"rounding step (lr {cfg.lr:g}) are lost; load the model in float32 "
                              "(model.dtype: float32; bf16: true still computes in bf16) or use DeepSpeed",
                              stacklevel=2)
            self.optimizer = torch.optim.AdamW(params, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.adam_eps,  # type: ignore[arg-type]  # two floats
                                               weight_decay=cfg.weight_decay,
                                               **({"fused": True} if dev.type == "cuda" else {}))
        if self.ref_model is not None:
            self.ref_model.to(self.device)
            if self.engine is not None and self.bf16:
                self.ref_model.to(torch.bfloat16)
        if cfg.old_logprobs == "auto":
            self.cfg = cfg = dataclasses.replace(
                cfg, old_logprobs="sampler" if own_sampler and self._computes_like_sampler() else "recompute")
        fwd = self.model.forward
        try:
            fwd_params = set(inspect.signature(fwd).parameters)
        except (TypeError, ValueError):
            fwd_params = set()
        self._keeps_logits = "logits_to_keep" in fwd_params
        self._takes_positions = "position_ids" in fwd_params
        # transformers >= 5.24 names the KV cache `cache`, `past_key_values` before
        self._cache_name = "cache" if "cache" in fwd_params else "past_key_values"
        # a prompt shared by rows of a micro-batch runs once (its keys and values cached); needs a
        # model that takes positions and a cache, and no activation checkpointing (which turns the
        # cache off in training). Not under ZeRO-3: a shared micro-batch calls the model twice, an
        # unshared one once, and ZeRO-3's parameter gathers need the same calls on every rank
        share = cfg.share_prompts if cfg.share_prompts is not None else self.device.type == "cpu"
        self._share_prompts = bool(share and self._keeps_logits and self._takes_positions
                                   and self._cache_name in fwd_params and not cfg.gradient_checkpointing
                                   and self.zero_stage != 3)
        self._n_params = sum(p.numel() for p in self.model.parameters())
        self.last_metrics: dict[str, float] = {}

    def _computes_like_sampler(self) -> bool:
        """True when the trainer's log-probs are the sampler's up to rounding (float32 weights, no
        bf16 autocast, dropout off as in the sampler's eval mode, no DeepSpeed, one process, no
        sampler correction): see ``old_logprobs``."""
        cfg = self.cfg
        return (not self.bf16 and self.engine is None and D.world_size() == 1 and cfg.is_correction == "none"
                and bool(cfg.disable_dropout) and all(p.dtype == torch.float32 for p in self._model.parameters()))

    # ------------------------------------------------------------------ engine
    def _init_deepspeed(self, model) -> None:
        import deepspeed

        cfg = self.cfg
        ds: Any = cfg.deepspeed
        if isinstance(ds, str):
            path = Path(ds)
            if not path.exists():
                raise ValueError(f"deepspeed: no such DeepSpeed config file: {ds}")
            ds = json.loads(path.read_text(encoding="utf-8"))
        ds = copy.deepcopy(ds)
        D.init_deepspeed_distributed()
        world = D.world_size()
        # the trainer owns micro-batching, accumulation boundaries, loss scaling and the LR schedule
        ds["train_micro_batch_size_per_gpu"] = cfg.micro_batch_size
        ds["gradient_accumulation_steps"] = 1
        ds["train_batch_size"] = cfg.micro_batch_size * world
        if ds.get("gradient_clipping", "auto") == "auto":
            ds["gradient_clipping"] = float(cfg.grad_clip or 0.0)
        if "scheduler" in ds:
            raise ValueError("deepspeed: remove the 'scheduler' section; the trainer sets the learning rate "
                             "(lr, warmup_steps, lr_schedule)")
        if ds.get("fp16", {}).get("enabled") in (True, "auto"):
            raise ValueError("deepspeed: fp16 is not supported; use bf16")
        ds.pop("fp16", None)
        bf = ds.setdefault("bf16", {})
        if bf.get("enabled", "auto") == "auto":
            bf["enabled"] = self.bf16
        elif bool(bf["enabled"]) != self.bf16 and self.config.bf16 != "auto":
            raise ValueError(f"deepspeed: bf16.enabled={bf['enabled']} contradicts bf16={self.config.bf16}")
        self.bf16 = bool(bf["enabled"])
        _resolve_autos(ds)
        ds.setdefault("steps_per_print", 10**9)
        ds.setdefault("wall_clock_breakdown", False)
        optimizer = None
        if "optimizer" not in ds:
            params = [p for p in model.parameters() if p.requires_grad]
            optimizer = torch.optim.AdamW(params, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.adam_eps,  # type: ignore[arg-type]  # two floats
                                          weight_decay=cfg.weight_decay)
        engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds,
                                                 model_parameters=None if optimizer is not None else
                                                 [p for p in model.parameters() if p.requires_grad])
        self.engine = engine
        self.optimizer = opt
        self.ds_config = ds
        self._model = engine.module

    @property
    def model(self):
        """The unwrapped HF model (for generation and ``save_pretrained``)."""
        return self._model

    @property
    def device(self) -> torch.device:
        if self.engine is not None:
            return torch.device(self.engine.device)
        return _param_device(self._model)

    @property
    def zero_stage(self) -> int:
        if self.engine is None:
            return 0
        return int(self.engine.zero_optimization_stage())

    def generation_context(self, gather: bool | None = None):
        """Context for sampling with :attr:`model`: under ZeRO-3 gathers the full weights (unless
        ``gather`` is False, or it is None and :attr:`gather_for_generation` is False); with
        ``bf16`` on CUDA and float32 weights (no DeepSpeed), samples under bf16 autocast like the
        training forward."""
        if gather is None:
            gather = self.gather_for_generation
        stack = contextlib.ExitStack()
        if gather and self.zero_stage == 3:
            import deepspeed

            stack.enter_context(deepspeed.zero.GatheredParameters(list(self._model.parameters()), modifier_rank=None))
        if self.bf16 and self.engine is None and self.device.type == "cuda":
            stack.enter_context(torch.autocast(device_type="cuda", dtype=torch.bfloat16))
        return stack

    def iter_full_parameters(self):
        """``(name, tensor)`` for every parameter of :attr:`model`, full-size, in
        ``named_parameters`` order (tied weights once), for pushing into a rollout engine.

        Under ZeRO-3 each parameter is gathered on its own (peak memory: one parameter) and the
        tensor is only valid until the next item is requested: copy it or load it at once. The
        gathers are collective: every rank must run the whole iteration. Other engines yield the
        live parameters (no copy).
        """
        if self.zero_stage == 3:
            import deepspeed

            for name, p in self._model.named_parameters():
                with deepspeed.zero.GatheredParameters([p], modifier_rank=None):
                    yield name, p.data
        else:
            for name, p in self._model.named_parameters():
                yield name, p.data

    # ------------------------------------------------------------------ the update
    def step(self, rollouts: Sequence[Rollout], *, local: bool = False) -> dict[str, float]:
        """One policy update over ``rollouts``; returns metrics (see the module doc)."""
        t0 = time.perf_counter()
        cfg = self.cfg
        vocab = getattr(getattr(self._model, "config", None), "vocab_size", None)
        check_rollouts(rollouts, vocab, need_logprobs=cfg.old_logprobs == "sampler")
        W, R = D.world_size(), D.rank()
        rollouts = list(rollouts)

        # ---- 1. advantages over the global batch
        meta = [(float("nan") if r.reward is None else float(r.reward), r.group, r.role, bool(r.truncated),
                 len(r.completion_ids), r.episode) for r in rollouts]
        offset = 0
        if local and W > 1:
            parts = D.all_gather_object(meta)
            offset = sum(len(p) for p in parts[:R])
            gmeta = [m for p in parts for m in p]
        else:
            gmeta = meta
            if W > 1:  # shard mode needs the same batch everywhere: compare a digest
                digest = hashlib.sha256(repr([(m, r.prompt_ids, r.completion_ids) for m, r in zip(meta, rollouts)])
                                        .encode()).hexdigest()
                if len(set(D.all_gather_object(digest))) > 1:
                    raise ValueError("rollouts: differ between ranks; pass local=True when each rank brings its "
                                     "own rollouts")
        rewards = np.array([m[0] for m in gmeta], dtype=np.float64)
        groups = [m[1] for m in gmeta]
        roles = [m[2] for m in gmeta]
        trunc = np.array([m[3] for m in gmeta], dtype=bool)
        clen = np.array([m[4] for m in gmeta], dtype=np.int64)
        A = compute_advantages(rewards, groups, scale=cfg.scale_rewards,  # type: ignore[arg-type]  # preset-filled
                               eps=cfg.adv_eps,
                               drop_zero_variance=bool(cfg.dynamic_sampling), episodes=[m[5] for m in gmeta],
                               strata=roles)  # scale_rewards 'batch': the std of each role's rewards
        weight = np.array([cfg.role_weight(r) for r in roles], dtype=np.float64)
        adv = A.adv * weight
        masked_trunc = trunc & bool(cfg.mask_truncated)
        train = A.keep & (weight > 0) & (clen > 0) & ~masked_trunc

        # ---- 2. mini-batches: lists of *local* indices
        M = cfg.updates_per_batch
        rng = np.random.default_rng([cfg.seed, self.step_count, R if local else 0])
        if local or W == 1:
            mine = np.flatnonzero(train[offset:offset + len(rollouts)])
            minis = [list(map(int, x)) for x in np.array_split(rng.permutation(mine), M)]
            local_adv = adv[offset:offset + len(rollouts)]
        else:
            glob = rng.permutation(np.flatnonzero(train))
            minis = [list(map(int, x[R::W])) for x in np.array_split(glob, M)]
            local_adv = adv
        lengths = [r.n_tokens for r in rollouts]
        keys = prompt_keys(rollouts) if self._share_prompts else None
        # an advantage of exactly 0 without a KL term: no gradient, so no pass (module doc, 2.);
        # a mini-batch of nothing else still runs, so that its optimizer step sees zero gradients
        no_pass = self._no_pass(local_adv)
        passes = [[i for i in mb if not no_pass[i]] or mb for mb in minis]
        plans = [plan_micro_batches(mb, lengths, cfg.micro_batch_size, cfg.max_tokens_per_micro_batch, keys)
                 for mb in passes]
        # global counts per mini-batch: tokens, sequences; micro-batch counts (max over ranks)
        counts = torch.tensor([[sum(len(rollouts[i].completion_ids) for i in mb), len(mb)] for mb in minis],
                              dtype=torch.float64)
        counts = D.all_reduce(counts)
        n_micro = D.all_reduce(torch.tensor([len(p) for p in plans], dtype=torch.int64), "max").tolist()
        L = cfg.max_completion_length
        if L is None and cfg.aggregation == "constant_norm":
            L = int(clen.max()) if len(clen) else 1
        denoms = [loss_denominator(cfg.aggregation, counts[j, 0].item(), counts[j, 1].item(), L)  # type: ignore[arg-type]
                  for j in range(M)]
        dev = self.device
        micro: list[list[MicroBatch]] = []
        for j in range(M):
            mbs = [collate(rollouts, p, local_adv, self.pad_token_id, dev, self._share_prompts) for p in plans[j]]
            mbs += [dummy_batch(self.pad_token_id, dev) for _ in range(n_micro[j] - len(mbs))]
            micro.append(mbs)

        lr = cfg.lr_at(self.step_count)
        self._set_lr(lr)
        acc: defaultdict[str, float] = defaultdict(float)
        acc["no_pass"] = float(sum(len(mb) - len(p) for mb, p in zip(minis, passes)))
        ratio_max = 1.0
        grad_norms: list[float] = []
        skips0 = self.nonfinite_skips
        was_training = self._model.training
        self._model.train()
        t_prep = time.perf_counter()
        try:
            # ---- 3. old log-probs of mini-batches 1.. before any update; reference log-probs
            need_old = cfg.old_logprobs == "recompute" and cfg.optimizer_steps_per_batch > 1
            if need_old:
                with torch.no_grad():
                    for j in range(1, M):
                        for mb in micro[j]:
                            lp = self._logprobs(mb)
                            if not mb.dummy:
                                mb.cache["old"] = lp
                                self._diag(mb, lp, acc)
                                acc["aux_tokens"] += mb.n_seq_tokens
            if self.ref_model is not None and cfg.beta > 0:
                with torch.no_grad():
                    for mbs in micro:
                        for mb in mbs:
                            if not mb.dummy:
                                mb.cache["ref"] = self._logprobs(mb, model=self.ref_model)
                                acc["aux_tokens"] += mb.n_seq_tokens
            # ---- 4. optimizer steps
            for epoch in range(cfg.epochs):
                for j in range(M):
                    if counts[j, 0].item() == 0:
                        continue  # nothing to learn from in this mini-batch on any rank
                    for k, mb in enumerate(micro[j]):
                        if self.engine is not None:  # reduce/step only after the last micro-batch
                            self.engine.set_gradient_accumulation_boundary(k == len(micro[j]) - 1)
                        rmax = self._micro_step(mb, denoms[j], W, L, acc, first=(epoch == 0 and j == 0))
                        ratio_max = max(ratio_max, rmax)
                    grad_norms.append(self._optimizer_step())
                    self.optimizer_steps += 1
                    self.weights_version += 1
        finally:
            if not was_training:
                self._model.eval()
        t_end = time.perf_counter()
        self.step_count += 1

        # ---- 5. metrics
        vec = torch.tensor([acc[k] for k in _SUM_KEYS], dtype=torch.float64)
        vec = D.all_reduce(vec)
        s = dict(zip(_SUM_KEYS, vec.tolist()))
        ratio_max = float(D.all_reduce(torch.tensor([ratio_max], dtype=torch.float64), "max")[0])
        n_opt = len(grad_norms)
        tok = max(s["tok"], 1.0)
        elapsed = t_end - t0
        m: dict[str, float] = {
            "loss": s["loss"] / max(n_opt, 1),
            "clip_frac": (s["clip_low"] + s["clip_high"]) / tok,
            "clip_frac/low": s["clip_low"] / tok,
            "clip_frac/high": s["clip_high"] / tok,
            "ratio_mean": s["ratio_sum"] / tok,
            "ratio_max": ratio_max,
            "grad_norm": _finite_mean(grad_norms),
            "lr": lr,
            "optimizer_steps": float(n_opt),
            "optimizer_steps_skipped_nonfinite": float(self.nonfinite_skips - skips0),
            "tokens": float(counts[:, 0].sum()),
            "samples_in_loss": float(train.sum()),
            "samples_no_pass": s["no_pass"],
            "samples_truncated": float(trunc.sum()),
            "samples_no_reward": float((~np.isfinite(rewards)).sum()),
            "groups": float(A.n_groups),
            "groups_zero_std": float(A.n_zero_variance),
            "groups_dropped": float(A.n_dropped),
            "tokens_per_s": acc["train_tokens"] / elapsed if elapsed > 0 else 0.0,
            "time/update_s": elapsed,
            "time/prepare_s": t_prep - t0,
        }
        if cfg.beta > 0:
            m["kl"] = s["kl_sum"] / tok
        if s["diff_n"] > 0:
            m["logprob_diff"] = s["diff_sum"] / s["diff_n"]
        if cfg.peak_tflops and elapsed > 0:
            flops = 6.0 * self._n_params * acc["train_tokens"] + 2.0 * self._n_params * acc["aux_tokens"]
            m["mfu"] = flops / elapsed / (cfg.peak_tflops * 1e12)
        if cfg.is_correction != "none":
            m.update(self._is_metrics(acc))
        m.update(_role_metrics(A, rewards, roles, adv, train))
        self.last_metrics = m
        return m

    @staticmethod
    def _is_metrics(acc) -> dict[str, float]:
        """The sampler-correction metrics over all ranks (see the module doc)."""
        sums = D.all_reduce(torch.tensor([acc["is_" + k] for k in _IS_SUM_KEYS], dtype=torch.float64))
        s = dict(zip(_IS_SUM_KEYS, sums.tolist()))
        ext = torch.tensor([acc.get("is_diff_max", -math.inf), acc.get("is_w_max", -math.inf),
                            -acc.get("is_w_min", math.inf)], dtype=torch.float64)
        diff_max, w_max, neg_w_min = D.all_reduce(ext, "max").tolist()
        if s["n"] <= 0:  # no rollout brought sampler log-probs
            return {}
        units = max(s["units"], 1.0)
        return {"mismatch/logprob_diff_max": diff_max, "mismatch/kl": s["k3_sum"] / s["n"],
                "is/ratio_mean": s["w_sum"] / units, "is/ratio_min": -neg_w_min, "is/ratio_max": w_max,
                "is/outside_frac": s["outside"] / units}

    # ------------------------------------------------------------------ pieces
    def _no_pass(self, adv: np.ndarray) -> np.ndarray:
        """Per sample: True where its loss term has no gradient (advantage exactly 0 and no KL
        term), so its forward and backward passes can be left out."""
        if self.cfg.beta > 0 and self.ref_model is not None:
            return np.zeros(len(adv), dtype=bool)
        return np.asarray(adv) == 0

    def _forward(self, model, mb: MicroBatch):
        """Logits [b, C, V] that score the completion tokens (position t predicts token t)."""
        C = mb.completion_len
        ctx = (torch.autocast(device_type=mb.input_ids.device.type, dtype=torch.bfloat16)
               if self.bf16 and self.engine is None else contextlib.nullcontext())
        if mb.shared is not None and self._share_prompts:
            with ctx:
                return self._shared_forward(model, mb, C)
        kw = {"input_ids": mb.input_ids, "attention_mask": mb.attention_mask, "use_cache": False}
        if self._takes_positions:
            kw["position_ids"] = mb.position_ids
        keep = mb.keep if mb.score_pos is not None else C + 1
        if self._keeps_logits and keep:
            kw["logits_to_keep"] = keep
        with ctx:
            logits = model(**kw).logits
        if keep:
            logits = logits[:, -keep:, :]
        if mb.score_pos is None:  # completions end every row (the dummy micro-batch)
            return logits[:, :-1, :]
        if mb.score_start is not None:  # prompts equally long: a plain slice (no copy)
            return logits[:, mb.score_start:mb.score_start + C, :]
        return _score_logits(logits, mb.score_pos)

    def _shared_forward(self, model, mb: MicroBatch, C: int):
        """The same logits, each distinct prompt run once: its last position scores completion
        token 0 of every row that carries it; its keys and values (cached, with gradients, copied
        to those rows) serve the completions' forward, whose positions 0..C-2 score tokens 1..C-1."""
        sh = mb.shared
        assert sh is not None
        out = model(input_ids=sh.prompt_ids, attention_mask=sh.prompt_mask, position_ids=sh.prompt_pos,
                    use_cache=True, logits_to_keep=sh.keep)
        kept = out.logits[:, -sh.keep:, :]
        first = _score_logits(kept, sh.last_pos[:, None])[sh.row_prompt]  # each prompt's last token
        if C == 1:
            return first
        cache = out[self._cache_name]
        cache.batch_select_indices(sh.row_prompt)
        att = torch.cat([sh.prompt_mask[sh.row_prompt], sh.completion_mask[:, :C - 1]], dim=1)
        rest = model(input_ids=mb.completion_ids[:, :C - 1], attention_mask=att,
                     position_ids=sh.completion_pos[:, :C - 1], use_cache=True,
                     **{self._cache_name: cache}).logits
        return torch.cat([first, rest], dim=1)

    def _logprobs(self, mb: MicroBatch, model=None) -> torch.Tensor:
        if model is None:
            model = self.engine if self.engine is not None else self._model
        logits = self._forward(model, mb)
        return token_logprobs(logits, mb.completion_ids, row_temperatures(self.cfg.temperature, mb.temperature))

    def _diag(self, mb: MicroBatch, lp: torch.Tensor, acc) -> None:
        """Sampler vs trainer log-prob difference on loss tokens of rows with sampler log-probs;
        with the sampler correction on, also this micro-batch's importance weights (``lp`` are its
        old log-probs: the correction holds for all optimizer steps of the batch)."""
        if bool(mb.has_sampler.any()):
            m = mb.loss_mask * mb.has_sampler[:, None].float()
            diff = ((lp.detach() - mb.sampler_logp).abs() * m).sum()
            acc["diff_sum"] += float(diff)
            acc["diff_n"] += float(m.sum())
            cfg = self.cfg
            if cfg.is_correction != "none":
                w, st = sampler_importance_weights(lp, mb.sampler_logp, mb.loss_mask, cfg.is_correction,
                                                   cfg.is_clip_max, cfg.is_clip_min, mb.has_sampler)
                mb.cache["is"] = w
                for k in _IS_SUM_KEYS:
                    acc["is_" + k] += st[k]
                for k in _IS_MAX_KEYS:
                    acc["is_" + k] = max(acc.get("is_" + k, -math.inf), st[k])
                acc["is_w_min"] = min(acc.get("is_w_min", math.inf), st["w_min"])

    def _micro_step(self, mb: MicroBatch, denom: float, W: int, L, acc, first: bool) -> float:
        cfg = self.cfg
        model = self.engine if self.engine is not None else self._model
        if mb.dummy:
            logits = self._forward(model, mb)
            loss = logits.sum() * 0.0
            self._backward(loss)
            return 1.0
        new = token_logprobs(self._forward(model, mb), mb.completion_ids,
                             row_temperatures(cfg.temperature, mb.temperature))
        if cfg.old_logprobs == "sampler":
            old = mb.sampler_logp
            if first:
                self._diag(mb, new, acc)
        else:
            if "old" not in mb.cache:  # mini-batch 0 before the first update: ratio 1
                mb.cache["old"] = new.detach()
                self._diag(mb, new, acc)
            old = mb.cache["old"]
        loss, st = policy_loss(new, old, mb.adv, mb.loss_mask, cfg, mb.cache.get("ref"), denominator=denom,
                               max_len=L, is_weights=mb.cache.get("is"))
        # gradients are averaged over ranks: scale so the average is the global mini-batch gradient
        self._backward(loss * W if W > 1 else loss)
        n = st["n_tokens"]
        acc["loss"] += float(loss.detach())
        acc["tok"] += n
        acc["clip_low"] += st["clip_frac_low"] * n
        acc["clip_high"] += st["clip_frac_high"] * n
        acc["ratio_sum"] += st["ratio_mean"] * n
        acc["kl_sum"] += st["kl"] * n
        acc["train_tokens"] += mb.n_seq_tokens
        return st["ratio_max"]

    def _backward(self, loss: torch.Tensor) -> None:
        if self.engine is not None:
            self.engine.backward(loss, scale_wrt_gas=False)
        else:
            loss.backward()

    def _optimizer_step(self) -> float:
        cfg = self.cfg
        if self.engine is not None:
            self.engine.step()
            gn = self.engine.get_global_grad_norm()
            return float(gn) if gn is not None else 0.0
        params = [p for p in self._model.parameters() if p.requires_grad]
        if D.world_size() > 1:
            _allreduce_mean_grads(params)
        max_norm = float(cfg.grad_clip) if cfg.grad_clip else float("inf")
        gn = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
        if math.isfinite(gn):
            self.optimizer.step()
        else:  # a NaN/inf gradient would make every weight NaN: the step is skipped (and counted)
            self.nonfinite_skips += 1
        self.optimizer.zero_grad(set_to_none=True)
        return gn

    def _set_lr(self, lr: float) -> None:
        for g in self.optimizer.param_groups:
            g["lr"] = lr

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """Optimizer state and counters (per rank under ZeRO; use :meth:`save_checkpoint` for files)."""
        return {"step": self.step_count, "optimizer_steps": self.optimizer_steps,
                "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.weights_version += 1  # a checkpoint's weights are loaded with it (load_checkpoint)
        self.step_count = int(state["step"])
        self.optimizer_steps = int(state.get("optimizer_steps", 0))
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        self._set_lr(self.cfg.lr_at(self.step_count))

    def export(self, out_dir: str | Path) -> None:
        """``save_pretrained`` of the current weights (rank 0 writes; collective under ZeRO-3)."""
        out = Path(out_dir)
        if self.zero_stage == 3:
            sd = self.engine._zero3_consolidated_16bit_state_dict()  # type: ignore[attr-defined]  # ZeRO-3: an engine
            if D.is_main():
                self._model.save_pretrained(out, state_dict=sd, safe_serialization=True)
        elif D.is_main():
            self._model.save_pretrained(out, safe_serialization=True)
        D.barrier()

    def save_checkpoint(self, ckpt_dir: str | Path) -> None:
        """Model (``model/``, ``save_pretrained``), optimizer and counters; collective across ranks."""
        d = Path(ckpt_dir)
        counters = {"step": self.step_count, "optimizer_steps": self.optimizer_steps}
        if self.engine is not None:
            self.engine.save_checkpoint(str(d / "deepspeed"), tag="state", client_state=counters,
                                        save_latest=False)
            if D.is_main():
                torch.save(counters, d / "trainer.pt")
        elif D.is_main():
            torch.save(self.state_dict(), d / "trainer.pt")
        self.export(d / "model")

    def load_checkpoint(self, ckpt_dir: str | Path) -> None:
        d = Path(ckpt_dir)
        if self.engine is not None:
            self.engine.load_checkpoint(str(d / "deepspeed"), tag="state", load_optimizer_states=True,
                                        load_lr_scheduler_states=False, load_module_strict=True)
            state = torch.load(d / "trainer.pt", map_location="cpu", weights_only=True)
        else:
            load_weights(self._model, d / "model")
            state = torch.load(d / "trainer.pt", map_location="cpu", weights_only=True)
        self.load_state_dict(state)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def load_weights(model, model_dir: str | Path) -> None:
    """Load a ``save_pretrained`` directory into an existing model (same class), in place."""
    first = next(iter(model.parameters()))
    fresh = type(model).from_pretrained(str(model_dir), dtype=first.dtype)
    missing, unexpected = model.load_state_dict(fresh.state_dict(), strict=False)
    if unexpected or missing:
        raise ValueError(f"{model_dir}: weights do not match the model (missing {missing[:3]}, "
                         f"unexpected {unexpected[:3]})")
    del fresh


def _param_device(model) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        return torch.device("cpu")


def _disable_dropout(model) -> None:
    for mod in model.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
        if isinstance(getattr(mod, "attention_dropout", None), float):
            mod.attention_dropout = 0.0


def _allreduce_mean_grads(params) -> None:
    import torch.distributed as dist

    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    by_dtype: dict = defaultdict(list)
    for p in params:
        by_dtype[p.grad.dtype].append(p.grad)
    W = D.world_size()
    for grads in by_dtype.values():
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= W
        pos = 0
        for g in grads:
            n = g.numel()
            g.copy_(flat[pos:pos + n].view_as(g))
            pos += n


def _resolve_autos(d: dict) -> None:
    """Drop remaining ``"auto"`` values (DeepSpeed then uses its defaults)."""
    for k in list(d):
        v = d[k]
        if v == "auto":
            del d[k]
        elif isinstance(v, dict):
            _resolve_autos(v)


def _role_metrics(A, rewards: np.ndarray, roles: list[str], adv: np.ndarray, train: np.ndarray) -> dict:
    out: dict[str, float] = {}
    roles_a = np.array(roles, dtype=object)
    finite = np.isfinite(rewards)
    for role in sorted(set(roles)):
        sel = roles_a == role
        rf = rewards[sel & finite]
        if len(rf):
            out[f"reward/{role}"] = float(rf.mean())
            out[f"reward_std/{role}"] = float(rf.std())
        t = sel & train
        out[f"samples/{role}"] = float(t.sum())
        if t.any():
            out[f"adv_abs/{role}"] = float(np.abs(adv[t]).mean())
        gsel = np.unique(A.group_index[sel])
        if len(gsel):
            out[f"frac_zero_std/{role}"] = float(A.zero_variance[gsel].mean())
    return {k: v for k, v in out.items() if math.isfinite(v)}


def _score_logits(logits: torch.Tensor, score_pos: torch.Tensor) -> torch.Tensor:
    """``logits`` [b, K, V] picked at ``score_pos`` [b, C] -> [b, C, V]."""
    return logits.gather(1, score_pos[:, :, None].expand(-1, -1, logits.shape[-1]))


def _finite_mean(values: list[float]) -> float:
    """The mean of the finite ``values`` (0.0 for none given, NaN when none is finite)."""
    if not values:
        return 0.0
    ok = [v for v in values if math.isfinite(v)]
    return float(np.mean(ok)) if ok else float("nan")
