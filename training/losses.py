"""Clipped policy-gradient losses (pure torch).

Per completion token t of sequence b, with ratio ``rho = exp(new_logp - old_logp)`` and the
sequence's advantage ``A_b``::

    l_bt = -min(rho * A_b, clip(rho, 1 - eps_low, 1 + eps_high) * A_b)  [+ beta * kl_bt]
    kl_bt = exp(ref - new) - (ref - new) - 1                               (k3, >= 0)

The log-ratio ``new - old`` is clamped to [-20, 20] before ``exp`` (verl's ``compute_policy_loss``):
past ~88.7 ``exp`` overflows float32, and where the clip removes the gradient (A > 0 above
1 + eps_high) the unclipped branch's ``0 * inf`` made it NaN. Ratios inside e^+-20 are untouched;
beyond, the ratio has no gradient (for A < 0 a cap at e^20, far above verl's dual clip at 3).

The loss aggregates ``l`` over the tokens where ``mask`` is 1::

    token_mean            sum_bt l_bt / N_tokens
    seq_mean_token_mean   sum_b (sum_t l_bt / n_b) / N_seqs
    constant_norm         sum_bt l_bt / (N_seqs * L)

With gradient accumulation and data parallelism the denominators are those of the whole
mini-batch (all micro-batches, all ranks): pass them as ``denominator`` (see
:func:`loss_denominator`); by default they come from the tensors given. ``N_seqs`` counts the
sequences with at least one loss token.

Statistics (over masked tokens): ``clip_frac_low`` = fraction with rho < 1 - eps_low and A < 0,
``clip_frac_high`` = rho > 1 + eps_high and A > 0 (the tokens whose gradient the clip removes),
``ratio_mean``, ``ratio_max``, ``kl`` (mean k3), ``n_tokens``.

Sequence-level ratio (GSPO, ``importance_sampling_level: sequence``). Instead of one ratio per
token, each sequence b gets the geometric mean of its token ratios over its loss tokens::

    s_b = exp( sum_t mask_bt (new_bt - old_bt) / n_b )

which replaces ``rho`` for every token of b (clip, min, statistics alike). Its gradient is
``s_b / n_b * sum_t grad new_bt`` where unclipped: GSPO's. GSPO's paper clips it with a much
tighter range (eps 3e-4 / 4e-4) than the token ratio; set ``eps_low`` / ``eps_high`` accordingly.

Sampler correction (truncated importance sampling). When the sampler (e.g. vLLM in bf16) and the
trainer do not give the same log-probs, the samples come from pi_sampler, not from pi_old, and
the surrogate is re-weighted by ``w = pi_old / pi_sampler`` per completion token, with no gradient
(:func:`sampler_importance_weights`)::

    token_truncate      w_bt = clamp(exp(old_bt - smp_bt), C_min, C_max)
    token_mask          w_bt = exp(old_bt - smp_bt) if inside [C_min, C_max] else 0
    sequence_truncate   w_b  = clamp(exp(sum_t mask_bt (old_bt - smp_bt)), C_min, C_max), on every token
    sequence_mask       w_b  = exp(sum_t ...) if inside [C_min, C_max] else 0

(a missing bound is no bound). ``l_bt`` above is multiplied by ``w_bt`` before the KL term is
added, as TRL's ``vllm_importance_sampling_correction`` does.
"""

from __future__ import annotations

import math

import torch

from training.config import AGGREGATIONS, IS_CORRECTIONS, IS_LEVELS

LOG_RATIO_CAP = 20.0  # |new - old| (or GSPO's mean of it) is clamped to this before exp()


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor, temperature: float | torch.Tensor = 1.0,
                   chunk_bytes: int = 1 << 28) -> torch.Tensor:
    """log softmax(logits / temperature)[tokens] in float32; logits [B, T, V], tokens [B, T];
    ``temperature`` a number, or a float32 tensor [B] of one per row (each row scored at the
    temperature it was sampled at).

    Rows are processed in chunks of about ``chunk_bytes`` of float32 logits (``torch.split``, whose
    backward concatenates instead of zero-filling), which bounds the float32 copy for bf16 logits.
    """
    if logits.dim() == 2:
        if isinstance(temperature, torch.Tensor):
            temperature = temperature.reshape(1)
        return token_logprobs(logits[None], tokens[None], temperature, chunk_bytes)[0]
    B, T, V = logits.shape
    per_row = max(1, T * V * 4)
    rows = max(1, chunk_bytes // per_row)

    def one(x: torch.Tensor, t: torch.Tensor, temp) -> torch.Tensor:
        x = x.float()
        if isinstance(temp, torch.Tensor):
            x = x / temp.to(x.device, torch.float32)[:, None, None]
        elif temp != 1.0:
            x = x / temp
        return torch.log_softmax(x, dim=-1).gather(-1, t.unsqueeze(-1)).squeeze(-1)

    if rows >= B:
        return one(logits, tokens, temperature)
    temps = torch.split(temperature, rows) if isinstance(temperature, torch.Tensor) else [temperature] * B
    return torch.cat([one(x, t, tp) for x, t, tp in zip(torch.split(logits, rows), torch.split(tokens, rows), temps)])


def row_temperatures(default: float, rows: torch.Tensor | None) -> float | torch.Tensor:
    """The temperature of each row: ``rows`` where set (> 0), else ``default``; the number itself
    when no row has its own."""
    if rows is None:
        return default
    return torch.where(rows > 0, rows, torch.full_like(rows, float(default)))


def loss_denominator(aggregation: str, n_tokens: float, n_seqs: float, max_len: float | None) -> float:
    """The loss divisor of a whole mini-batch (token counts of the masked tokens)."""
    if aggregation == "token_mean":
        return max(float(n_tokens), 1.0)
    if aggregation == "seq_mean_token_mean":
        return max(float(n_seqs), 1.0)
    if aggregation == "constant_norm":
        if not max_len:
            raise ValueError("constant_norm needs max_len")
        return max(float(n_seqs), 1.0) * float(max_len)
    raise ValueError(f"aggregation: must be one of {list(AGGREGATIONS)}, got {aggregation!r}")


def policy_loss(new_logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, mask: torch.Tensor, cfg,
                ref_logp: torch.Tensor | None = None, *, denominator: float | None = None,
                max_len: int | None = None, is_weights: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, dict[str, float]]:
    """The clipped surrogate loss of one (micro-)batch and its statistics.

    ``new_logp``, ``old_logp``, ``mask``, ``ref_logp``: [B, T]; ``adv``: [B] (or [B, T]);
    ``cfg``: anything with ``eps_low``, ``eps_high``, ``beta``, ``aggregation`` and
    ``max_completion_length`` (a resolved :class:`~training.config.GRPOConfig`), and optionally
    ``importance_sampling_level`` (``token``, the default, or ``sequence``: GSPO's ratio).
    ``denominator``: the divisor of the whole mini-batch; ``None`` = this batch's own.
    ``max_len``: constant_norm's L when ``cfg.max_completion_length`` is None (default: T).
    ``is_weights``: [B, T] sampler-correction weights (:func:`sampler_importance_weights`;
    no gradient), multiplying each token's surrogate loss; ``None`` = no correction.
    """
    mask = mask.to(new_logp.dtype)
    if adv.dim() == 1:
        adv = adv[:, None]
    adv = adv.to(new_logp.dtype)
    log_ratio = new_logp - old_logp.detach()
    # masked (padding) positions may hold anything, including -inf: keep them out of exp()
    log_ratio = torch.where(mask > 0, log_ratio, torch.zeros_like(log_ratio))
    level = getattr(cfg, "importance_sampling_level", "token") or "token"
    if level == "sequence":  # GSPO: the geometric mean of the sequence's token ratios, on every token
        seq = log_ratio.sum(-1) / mask.sum(-1).clamp(min=1.0)
        log_ratio = seq[:, None].expand_as(log_ratio)
    elif level != "token":
        raise ValueError(f"importance_sampling_level: must be one of {list(IS_LEVELS)}, got {level!r}")
    # exp() overflows float32 past ~88.7, and the clipped branch's 0 * inf gradient is NaN: cap the
    # log-ratio at +-20 as verl does (beyond it the ratio carries no gradient)
    log_ratio = log_ratio.clamp(-LOG_RATIO_CAP, LOG_RATIO_CAP)
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1.0 - cfg.eps_low, 1.0 + cfg.eps_high)
    per_token = -torch.minimum(ratio * adv, clipped * adv)
    if is_weights is not None:
        per_token = per_token * is_weights.detach().to(per_token.dtype)
    kl = None
    if cfg.beta and ref_logp is not None:
        d = torch.where(mask > 0, ref_logp.detach() - new_logp, torch.zeros_like(new_logp))
        kl = torch.exp(d) - d - 1.0
        per_token = per_token + cfg.beta * kl
    agg = cfg.aggregation
    n_tok = mask.sum()
    lens = mask.sum(-1)
    if agg == "seq_mean_token_mean":
        weights = mask / lens.clamp(min=1.0)[:, None]
    else:
        weights = mask
    L = cfg.max_completion_length or max_len or new_logp.shape[-1]
    if denominator is None:
        denominator = loss_denominator(agg, float(n_tok), float((lens > 0).sum()), L)
    loss = (per_token * weights).sum() / denominator

    with torch.no_grad():
        m = mask > 0
        low = ((ratio < 1.0 - cfg.eps_low) & (adv < 0) & m).sum()
        high = ((ratio > 1.0 + cfg.eps_high) & (adv > 0) & m).sum()
        rmax = (torch.where(m, ratio, torch.full_like(ratio, float("-inf"))).max() if m.numel()
                else ratio.new_tensor(1.0))
        kl_sum = (kl * mask).sum() if kl is not None else n_tok.new_zeros(())
        vals = torch.stack([n_tok, low.to(n_tok.dtype), high.to(n_tok.dtype), (ratio * mask).sum(),
                            rmax.to(n_tok.dtype), kl_sum]).tolist()  # one device sync
    n = max(vals[0], 1.0)
    stats = {"n_tokens": vals[0], "clip_frac_low": vals[1] / n, "clip_frac_high": vals[2] / n,
             "clip_frac": (vals[1] + vals[2]) / n, "ratio_mean": vals[3] / n,
             "ratio_max": vals[4] if vals[0] > 0 else 1.0, "kl": vals[5] / n}
    return loss, stats


def sampler_importance_weights(trainer_logp: torch.Tensor, sampler_logp: torch.Tensor, mask: torch.Tensor,
                               mode: str, clip_max: float | None = 2.0, clip_min: float | None = None,
                               has_sampler: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Sampler-correction weights ``w = pi_trainer / pi_sampler`` (see the module doc) and statistics.

    ``trainer_logp`` (the trainer's log-probs of the sampled tokens before the update, i.e. the
    old log-probs), ``sampler_logp``, ``mask``: [B, T]; ``has_sampler``: [B] bool, rows whose
    sampler log-probs are known (default: all); other rows, and padding, get weight 1.
    ``mode``: one of ``IS_CORRECTIONS`` other than ``none``; ``clip_max`` / ``clip_min``:
    C_max / C_min (``None``: no bound; at least one must be given).

    Returns ``(w [B, T] float32 without gradient, stats)``; stats are sums and extremes so that
    micro-batches and ranks can be combined: ``n`` (tokens with a sampler log-prob),
    ``diff_sum`` / ``diff_max`` (|trainer - sampler|), ``k3_sum`` (k3 estimate of
    KL(sampler || trainer) per token: ``exp(d) - d - 1`` with ``d = trainer - sampler``),
    ``units`` (tokens, or sequences in the sequence modes), ``w_sum`` / ``w_min`` / ``w_max`` (of
    the weights of those units) and ``outside`` (units whose raw ratio was outside
    [C_min, C_max], i.e. truncated or masked).
    """
    if mode not in IS_CORRECTIONS or mode == "none":
        raise ValueError(f"mode: must be one of {list(IS_CORRECTIONS[1:])}, got {mode!r}")
    if clip_max is None and clip_min is None:
        raise ValueError("clip_max: at least one of clip_max / clip_min is needed")
    with torch.no_grad():
        m = mask > 0
        if has_sampler is not None:
            m = m & has_sampler.to(torch.bool)[:, None]
        mf = m.to(torch.float32)
        d = torch.where(m, trainer_logp.detach().float() - sampler_logp.detach().float(),
                        torch.zeros_like(mf))
        hi = math.inf if clip_max is None else float(clip_max)
        lo = -math.inf if clip_min is None else float(clip_min)
        if mode.startswith("sequence"):
            raw = torch.exp(d.sum(-1))  # [B]: product of the token ratios
            unit_mask = m.any(-1)
        else:
            raw = torch.exp(d)
            unit_mask = m
        outside = (raw < lo) | (raw > hi)
        if mode.endswith("truncate"):
            w = raw.clamp(min=None if clip_min is None else lo, max=None if clip_max is None else hi)
        else:
            w = torch.where(outside, torch.zeros_like(raw), raw)
        w = torch.where(unit_mask, w, torch.ones_like(w))
        if mode.startswith("sequence"):
            w = w[:, None].expand_as(d)
            units_w = w[:, 0][unit_mask]
        else:
            units_w = w[unit_mask]
        n = mf.sum()
        k3 = (torch.exp(d) - d - 1.0).clamp(min=0.0) * mf  # >= 0; float rounding of tiny d may not be
        absd = d.abs()
        vals = torch.stack([n, absd.sum(), absd.max() if absd.numel() else n.new_zeros(()), k3.sum(),
                            n.new_tensor(float(units_w.numel())), units_w.sum(),
                            units_w.min() if units_w.numel() else n.new_tensor(math.inf),
                            units_w.max() if units_w.numel() else n.new_tensor(-math.inf),
                            (outside & unit_mask).sum().to(n.dtype)]).tolist()
    keys = ("n", "diff_sum", "diff_max", "k3_sum", "units", "w_sum", "w_min", "w_max", "outside")
    return w.contiguous(), dict(zip(keys, vals))
