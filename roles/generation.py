"""The roles' generation interface, and batched sampling from any ``transformers`` causal LM
with the sampler's own log-probs.

The interface
=============

Everything that samples for the roles (:mod:`roles.pools`, :mod:`coevo.evaluate`, the
co-evolution loop) talks to a :class:`Generator`: ``generate(requests, progress, config)`` takes
:class:`GenRequest` s (role, task, prompt, ``n``) and returns ``n`` :class:`Sample` s per request,
in request order. Two kinds of backend implement it:

* **token-level** (``token_level = True``): :class:`GenerationEngine` here (and an in-process
  vLLM engine may be another); samples carry ``prompt_ids``, ``completion_ids`` and the per-token
  ``logprobs`` of the distribution actually sampled from. Training needs these.
* **text-only** (``token_level = False``): :class:`roles.api_client.ApiGenerator`, a model served
  over an OpenAI-compatible HTTP API. Its samples carry the text and ``truncated`` only;
  ``prompt_ids``, ``completion_ids`` and ``logprobs`` are ``None`` (never made-up numbers), so any
  attempt to train on them fails loudly.

Prompts: ``GenRequest.prompt`` is the rendered prompt text (with the model's tokenizer for an
in-process model; the plain format without one); ``GenRequest.messages`` optionally carries the
same prompt as chat messages, for backends that let a server apply the model's own chat template
(:func:`roles.requests.role_request` builds both). Parsing and selection only read ``Sample.text``,
so they do not care which backend wrote it.

The in-process engine
=====================

:class:`GenerationEngine` runs its own decoding loop over the model's KV cache (no
``model.generate``): prompts are left-padded with an attention mask and explicit position ids,
requests of different roles mix freely in one call (prefilled longest prompt first, a prompt never
padded to more than twice its length: :func:`length_chunks`; with :mod:`roles.kv_decode` the chunks
then decode together as lanes of one batch, up to ``batch_size`` rows: :func:`decode_groups`), sequences stop at EOS or
``max_new_tokens``, and finished rows are dropped from the batch (and the cache, where it supports
``batch_select_indices``; otherwise they ride along and their outputs are ignored). Rows that
share a prompt (a request's ``n`` samples) prefill it once (``share_prefill``). For Llama-shaped
models (``llama``, ``qwen2``) the decode steps after the prefill run over a KV cache preallocated for
the whole call (:mod:`roles.kv_decode`, ``static_cache``) instead of ``transformers``' cache, which
copies itself on every step; the same logits up to rounding, and the same samples.

Log-probs. ``Sample.logprobs[i]`` is the log-probability of ``completion_ids[i]`` under the
distribution actually sampled from: softmax(logits / temperature), restricted to the top-p nucleus
and renormalised. :func:`logprobs_from_logits` computes the same quantity from teacher-forced
logits, so a trainer can recompute them (same temperature/top_p) and get ratio 1 before an
update. ``temperature == 0`` is greedy decoding; its policy is deterministic and every log-prob is
0.

Randomness. Each sample draws its uniforms from its own counter-based stream (numpy Philox) keyed
by ``(seed, hash(prompt), occurrence of that prompt in the call, sample index)``, and picks a token
by inverse-CDF on the sorted distribution. So a call is reproducible for a given seed, identical
requests in one call still get different samples, and a prompt's samples do not depend on which
other prompts share its batch, the batch size or the request order, up to floating-point
differences in the model's logits between batch shapes (padding changes reduction order; with
float32 on CPU this flips a token only when a uniform lands within ~1e-6 of a CDF boundary).

The EOS token that ends a sample is part of ``completion_ids`` (with its log-prob): stopping is a
decision the policy is trained on. ``truncated`` is True when a sample hit ``max_new_tokens`` (or
the model's context length) without EOS.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from roles import kv_decode
from roles.model_io import stop_ids

_PHILOX_SALT = 0x636F65766F  # "coevo"


@dataclass
class GenerationConfig:
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 256
    seed: int = 0
    batch_size: int = 128  # sequences decoded together (prompts of similar length prefill together)
    max_prompt_tokens: int | None = None  # longer prompts are cut from the left (None: no limit)

    def __post_init__(self):
        if self.temperature < 0:
            raise ValueError("temperature: must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p: must be in (0, 1]")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens: must be >= 1")
        if self.batch_size < 1:
            raise ValueError("batch_size: must be >= 1")


@dataclass
class GenRequest:
    role: str
    task_id: str
    prompt: str  # the rendered prompt text
    n: int = 1
    meta: dict[str, Any] = field(default_factory=dict)
    # the same prompt as chat messages ({"role", "content"} dicts), for backends that send chat
    # messages to a server applying the model's own template; None: such backends refuse the request
    messages: list[dict[str, str]] | None = None


@dataclass
class Sample:
    role: str
    task_id: str
    # token ids and log-probs: None from a text-only backend (Generator.token_level False)
    prompt_ids: list[int] | None
    completion_ids: list[int] | None
    logprobs: list[float] | None  # one per completion token, under the sampling distribution
    text: str  # the decoded completion without special tokens
    truncated: bool  # stopped by the length limit, not by EOS
    meta: dict[str, Any] = field(default_factory=dict)
    index: int = 0  # which of the request's n samples

    @property
    def completion_mask(self) -> list[int]:
        """1 for each completion token (all real tokens; padding appears only in batches)."""
        if self.completion_ids is None:
            raise ValueError("a text-only sample has no tokens (it came from a served model)")
        return [1] * len(self.completion_ids)

    @property
    def finished(self) -> bool:
        return not self.truncated


@runtime_checkable
class Generator(Protocol):
    """What the roles need from a model: ``n`` completions per request.

    * ``generate(requests, progress=False, config=None)`` returns ``sum(r.n)`` samples, all of
      request 0 first, ``Sample.index`` = 0..n-1 within a request. ``config`` overrides the
      backend's default :class:`GenerationConfig` for this call: ``temperature`` (0 = greedy),
      ``top_p``, ``max_new_tokens`` and ``seed`` are honoured by every backend; ``batch_size`` and
      ``max_prompt_tokens`` are hints a backend may ignore. ``progress`` allows a progress bar on
      stderr (a backend shows one only on a terminal). Failures raise; a backend never returns
      fewer samples than asked.
    * ``token_level``: True when samples carry ``prompt_ids``, ``completion_ids`` and per-token
      ``logprobs`` under the sampling distribution (what training needs); False for text-only
      backends, whose samples hold ``None`` there.
    * ``stats``: numbers about the last ``generate`` call (``samples``, ``completion_tokens``,
      ``seconds``, ``tokens_per_s``; a served backend adds ``requests``, ``cache_hits``,
      ``prompt_tokens``, ...); :func:`stats_line` formats them.
    """

    token_level: bool
    stats: dict[str, float]

    def generate(self, requests: Sequence[GenRequest], progress: bool = False,
                 config: GenerationConfig | None = None) -> list[Sample]: ...


def stats_line(stats: dict[str, float]) -> str:
    """One human line about a generator's last call (token counts, speed, requests, cache)."""
    none = int(stats.get("past_context", 0))  # (a served model's: the prompt filled its context)
    parts = [f"sampled {int(stats.get('samples', 0)) - none} completions"
             + (f" ({none} more got none: their prompt filled the model's context)" if none else "")]
    if "requests" in stats:
        parts.append(f"{int(stats['requests'])} requests"
                     + (f" ({int(stats['retries'])} retried)" if stats.get("retries") else "")
                     + f", {int(stats.get('cache_hits', 0))} answers from the cache")
        used = int(stats.get("prompt_tokens", 0)), int(stats.get("completion_tokens", 0))
        parts.append(f"tokens used: {used[0]} prompt + {used[1]} completion"
                     + (" (the server reported none)" if stats.get("requests") and not any(used) else ""))
        if stats.get("n_ignored"):
            parts.append("the server ignored n: repeated requests instead")
    else:
        parts.append(f"{stats.get('tokens_per_s', 0.0):.0f} tokens/s")
    cut, n = int(stats.get("truncated", 0)), int(stats.get("samples", 0))
    if cut:
        limit = f" ({int(stats['max_new_tokens'])} new tokens)" if stats.get("max_new_tokens") else ""
        parts.append(f"{cut} of {n} stopped at the length limit{limit}"
                     + (": raise --max-new-tokens (a program or test cut off does not run; a reasoning model "
                        "thinks for thousands of tokens)" if cut >= 0.2 * max(n, 1) else ""))
    return "; ".join(parts)


class SamplingStatus:
    """Status lines for sampling where no progress bar is drawn (stderr a log file, ``nohup``, CI):
    after an update, at most every ``every_s`` seconds, ``sampling: 480/2000 samples (12.3 samples/s,
    ETA 2m04s)`` goes to ``say``; none for work shorter than ``every_s`` and none at the end (the
    generator's stats line follows). Paced by :class:`training.metrics_file.RateMeter`."""

    def __init__(self, total: int, say, *, every_s: float = 30.0, clock=time.monotonic, label: str = "sampling"):
        from training.metrics_file import RateMeter  # (no torch at import)

        self.meter = RateMeter(total, every_s=every_s, clock=clock)
        self.say, self.label = say, label

    def update(self, n: int) -> None:
        m = self.meter
        if m.update(n):
            self.say(f"{self.label}: {m.done}/{m.total} samples ({m.rate:.3g} samples/s, ETA {m.eta()})")


# --------------------------------------------------------------------------------------------
# the sampling distribution
# --------------------------------------------------------------------------------------------

def _sorted_policy(logits: torch.Tensor, temperature: float, top_p: float):
    """(sorted probs renormalised over the nucleus, sort indices) for logits [..., V]."""
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    sp, si = torch.sort(probs, dim=-1, descending=True, stable=True)
    if top_p < 1.0:
        before = torch.cumsum(sp, dim=-1) - sp  # mass strictly before each token
        sp = sp.masked_fill(before >= top_p, 0.0)  # keeps the first token always
        sp = sp / sp.sum(dim=-1, keepdim=True)
    return sp, si


def logprobs_from_logits(logits: torch.Tensor, tokens: torch.Tensor, temperature: float = 1.0,
                         top_p: float = 1.0) -> torch.Tensor:
    """Log-probs of ``tokens`` [...] under the sampling policy given ``logits`` [..., V].

    Tokens outside the top-p nucleus get ``-inf``; ``temperature == 0`` (greedy) gives 0 for the
    argmax token and ``-inf`` elsewhere.
    """
    if temperature == 0:
        best = logits.argmax(dim=-1)
        zero = torch.zeros(tokens.shape, dtype=torch.float32, device=logits.device)
        return torch.where(best == tokens, zero, torch.full_like(zero, float("-inf")))
    if top_p >= 1.0:
        lp = torch.log_softmax(logits.float() / temperature, dim=-1)
        return lp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    sp, si = _sorted_policy(logits, temperature, top_p)
    p = torch.zeros_like(sp).scatter_(-1, si, sp)
    return torch.log(p.gather(-1, tokens.unsqueeze(-1)).squeeze(-1))


def _sample(logits: torch.Tensor, u: torch.Tensor, temperature: float, top_p: float):
    """Tokens [B] and their log-probs [B] from logits [B, V] and uniforms u [B] in [0, 1)."""
    if temperature == 0:
        tok = logits.argmax(dim=-1)
        return tok, torch.zeros(tok.shape, dtype=torch.float32, device=logits.device)
    sp, si = _sorted_policy(logits, temperature, top_p)
    cdf = torch.cumsum(sp, dim=-1)
    pos = torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(-1), right=True).squeeze(-1)
    nonzero = (sp > 0).sum(dim=-1) - 1  # the kept tokens are a prefix of the sorted order
    pos = torch.minimum(pos, nonzero)
    tok = si.gather(-1, pos.unsqueeze(-1)).squeeze(-1)
    lp = torch.log(sp.gather(-1, pos.unsqueeze(-1)).squeeze(-1))
    return tok, lp


def _stream_key(seed: int, prompt: str, occurrence: int, index: int) -> list[int]:
    h = hashlib.blake2b(prompt.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return [int(seed) & 0xFFFFFFFFFFFFFFFF, _PHILOX_SALT, int.from_bytes(h[:8], "little"),
            int.from_bytes(h[8:], "little"), occurrence, index]


def _uniforms(key: list[int], n: int) -> np.ndarray:
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(key))).random(n)


# --------------------------------------------------------------------------------------------
# the engine
# --------------------------------------------------------------------------------------------

def _eos_ids(model, tokenizer) -> set[int]:
    gc = getattr(model, "generation_config", None)
    return stop_ids(tokenizer, getattr(gc, "eos_token_id", None) if gc is not None else None)


def _context_length(model) -> int | None:
    cfg = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        v = getattr(cfg, name, None)
        if isinstance(v, int) and v > 0:
            return v
    return None


@dataclass
class _Row:
    req: int
    index: int
    prompt_ids: list[int]
    key: list[int]


class GenerationEngine:
    """Sample completions for many prompts at once (see the module doc); a token-level
    :class:`Generator`."""

    token_level = True

    def __init__(self, model, tokenizer, config: GenerationConfig | None = None):
        self.model = model
        self.tokenizer = tokenizer
        self.config = config or GenerationConfig()
        self.eos_ids = _eos_ids(model, tokenizer)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else min(self.eos_ids)
        self.context_length = _context_length(model)
        self.stats: dict[str, float] = {}
        try:
            params = inspect.signature(model.forward).parameters
        except (TypeError, ValueError):
            params = {}
        self._keeps_logits = "logits_to_keep" in params
        # transformers >= 5.24 names the KV cache `cache` (argument and output); `past_key_values`
        # before (still accepted there with a FutureWarning, to be removed in 5.40)
        self._cache_name = "cache" if "cache" in params else "past_key_values"
        self.share_prefill = True  # rows with one prompt share its prefill (False: each row runs it)
        # decode steps over a preallocated KV cache where the model is Llama-shaped
        # (roles.kv_decode; False: every step through the model call and its growing cache)
        self.static_cache = True
        self._prefix: list[int] | None = None  # the tokenizer's leading special tokens (encode)
        self._warned_context = False  # prompts past the context were named once (_warn_past_context)
        # where no progress bar is drawn, status lines (SamplingStatus) go here (None: nowhere)
        self.say = None
        self.status_every_s = 30.0

    @property
    def device(self) -> torch.device:
        try:
            return next(self.model.parameters()).device
        except StopIteration:
            return torch.device("cpu")

    def encode(self, prompt: str) -> list[int]:
        """The prompt's token ids (:func:`roles.prompts.encode_prompt`: a plain prompt starts with the
        BOS its tokenizer adds to every text); a prompt past ``max_prompt_tokens`` is cut from the
        left, keeping that BOS."""
        from roles.prompts import prompt_ids, text_prefix_ids

        if self._prefix is None:
            self._prefix = text_prefix_ids(self.tokenizer)
        return prompt_ids(self.tokenizer, prompt, self._prefix, self.config.max_prompt_tokens)

    def generate(self, requests: Sequence[GenRequest], progress: bool = False,
                 config: GenerationConfig | None = None) -> list[Sample]:
        """``n`` samples per request, in request order (all samples of request 0 first)."""
        cfg = config or self.config
        rows: list[_Row] = []
        seen: dict[str, int] = {}
        encoded: dict[str, list[int]] = {}
        for r, req in enumerate(requests):
            if req.n < 0:
                raise ValueError(f"request {r}: n must be >= 0")
            if req.prompt not in encoded:
                encoded[req.prompt] = self.encode(req.prompt)
                if not encoded[req.prompt]:
                    raise ValueError(f"request {r}: empty prompt")
            occ = seen.get(req.prompt, 0)
            seen[req.prompt] = occ + 1
            for j in range(req.n):
                rows.append(_Row(r, j, encoded[req.prompt], _stream_key(cfg.seed, req.prompt, occ, j)))
        self._warn_past_context(requests, rows)
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i].prompt_ids))
        results: list[tuple[list[int], list[float], bool] | None] = [None] * len(rows)
        bar = None
        status = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=len(rows), desc="sampling", unit="sample", leave=False)
        elif self.say is not None:
            status = SamplingStatus(len(rows), self.say, every_s=self.status_every_s)
        t0 = time.perf_counter()
        n_tokens = 0
        was_training = self.model.training
        self.model.eval()
        try:
            chunks = [[order[i] for i in c] for c in length_chunks([len(rows[i].prompt_ids) for i in order],
                                                                   cfg.batch_size)]
            lanes = self._lanes()
            for group in decode_groups([len(c) for c in chunks], cfg.batch_size if lanes else 1):
                part = [chunks[j] for j in group]
                outs = self._decode([[rows[i] for i in c] for c in part], cfg, lanes)
                for i, out in zip([i for c in part for i in c], outs):
                    results[i] = out
                    n_tokens += len(out[0])
                if bar is not None:
                    bar.update(sum(len(c) for c in part))
                if status is not None:
                    status.update(sum(len(c) for c in part))
        finally:
            if was_training:
                self.model.train()
            if bar is not None:
                bar.close()
        dt = time.perf_counter() - t0
        self.stats = {"samples": len(rows), "completion_tokens": n_tokens, "seconds": dt,
                      "tokens_per_s": n_tokens / dt if dt > 0 else 0.0,
                      # stopped by --max-new-tokens (a prompt that filled the context is named apart)
                      "truncated": sum(1 for r in results
                                       if r is not None and r[2] and len(r[0]) >= cfg.max_new_tokens),
                      "max_new_tokens": cfg.max_new_tokens}
        samples = []
        for row, res in zip(rows, results):
            assert res is not None
            ids, lps, trunc = res
            req = requests[row.req]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            samples.append(Sample(req.role, req.task_id, list(row.prompt_ids), ids, lps, text,
                                  trunc, dict(req.meta), row.index))
        return samples

    def _warn_past_context(self, requests: Sequence[GenRequest], rows: list[_Row]) -> None:
        """Say once per engine (``coevo`` logger) that prompts reach the model's context length:
        their samples are empty (and truncated), which nothing else shows."""
        ctx = self.context_length
        if ctx is None or self._warned_context:
            return
        over = [r for r in rows if len(r.prompt_ids) >= ctx]
        if not over:
            return
        self._warned_context = True
        roles = sorted({requests[r.req].role for r in over})
        longest = max(len(r.prompt_ids) for r in over)
        logging.getLogger("coevo").warning(
            f"warning: {len(over)} of {len(rows)} samples have a prompt ({', '.join(roles)}; up to {longest} "
            f"tokens) that fills the model's context of {ctx} positions: they get no completion (said once)")

    def _prefill(self, rows: list[_Row]):
        """Run the prompts of ``rows`` (left-padded): ``(cache, attention mask, last logits [B, V],
        next positions [B, 1])``."""
        dev = self.device
        B = len(rows)
        lens = [len(r.prompt_ids) for r in rows]
        L = max(lens)
        ids = torch.full((B, L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((B, L), dtype=torch.long)
        for b, r in enumerate(rows):
            ids[b, L - lens[b]:] = torch.tensor(r.prompt_ids, dtype=torch.long)
            mask[b, L - lens[b]:] = 1
        ids, mask = ids.to(dev), mask.to(dev)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        extra = {"logits_to_keep": 1} if self._keeps_logits else {}
        # rows that repeat a prompt (n samples of one request) share its prefill: each distinct
        # prompt runs once and its cache rows and last logits are copied to the rows carrying it
        first: dict[tuple[int, ...], int] = {}
        row_prompt = [first.setdefault(tuple(r.prompt_ids), len(first)) for r in rows]
        share = self.share_prefill and len(first) < B
        if share:
            k = torch.tensor([row_prompt.index(j) for j in range(len(first))], device=dev)
            out = self.model(input_ids=ids[k], attention_mask=mask[k], position_ids=pos[k], use_cache=True,
                             **extra)
        else:
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                             **extra)
        cache = out[self._cache_name]
        logits = out.logits[:, -1, :]
        if share:
            expand = torch.tensor(row_prompt, device=dev)
            if not hasattr(cache, "batch_select_indices"):  # a cache that cannot copy rows: run every row
                self.share_prefill = False
                out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                                 **extra)
                cache, logits = out[self._cache_name], out.logits[:, -1, :]
            else:
                cache.batch_select_indices(expand)
                logits = logits[expand]
        return cache, mask, logits, pos[:, -1:] + 1

    def _limits(self, rows: list[_Row], cfg: GenerationConfig) -> list[int]:
        return [cfg.max_new_tokens if self.context_length is None
                else max(0, min(cfg.max_new_tokens, self.context_length - len(r.prompt_ids))) for r in rows]

    def _lanes(self) -> bool:
        """Whether decode steps run over :mod:`roles.kv_decode`'s caches (and so can join lanes)."""
        return self.static_cache and kv_decode.supports(self.model)

    @torch.inference_mode()
    def _decode(self, chunks: list[list[_Row]], cfg: GenerationConfig, lanes: bool):
        """Sample the rows of ``chunks`` (each prefilled apart); with ``lanes`` (:meth:`_lanes`) all
        chunks decode as one batch (:class:`~roles.kv_decode.DecoderLanes`), else one chunk only."""
        dev = self.device
        rows = [r for c in chunks for r in c]
        B = len(rows)
        limits = self._limits(rows, cfg)
        T = max(limits) if limits else 0
        out_ids: list[list[int]] = [[] for _ in range(B)]
        out_lps: list[list[float]] = [[] for _ in range(B)]
        done = [limits[b] == 0 for b in range(B)]
        truncated = list(done)
        if T == 0:
            return [(o, p, t) for o, p, t in zip(out_ids, out_lps, truncated)]
        u_all = torch.from_numpy(np.stack([_uniforms(r.key, T) for r in rows])).to(
            dev, torch.float32)
        active = torch.arange(B, device=dev)  # batch row -> original row
        act = list(range(B))
        eos = torch.tensor(sorted(self.eos_ids), device=dev)
        lim = torch.tensor(limits, device=dev)
        decoder: kv_decode.StaticKVDecoder | kv_decode.DecoderLanes | None = None
        if lanes:
            decoders, all_logits, all_pos = [], [], []
            start = 0
            for c in chunks:
                cache, mask, lg, nxt = self._prefill(c)
                decoders.append(kv_decode.StaticKVDecoder(self.model, cache, mask,
                                                          max(limits[start:start + len(c)])))
                all_logits.append(lg)
                all_pos.append(nxt)
                start += len(c)
            decoder = decoders[0] if len(decoders) == 1 else kv_decode.DecoderLanes(decoders)
            logits, next_pos = torch.cat(all_logits), torch.cat(all_pos)
            cache = None
        else:
            if len(chunks) != 1:
                raise ValueError("_decode: several chunks need kv_decode's lanes")
            cache, mask, logits, next_pos = self._prefill(rows)
        for t in range(T):
            tok, lp = _sample(logits, u_all[active, t], cfg.temperature, cfg.top_p)
            is_eos = torch.isin(tok, eos)
            stop = is_eos | (lim[active] <= t + 1)
            tok_l, lp_l, stop_l, eos_l = (tok.tolist(), lp.tolist(), stop.tolist(), is_eos.tolist())
            keep = []
            for k, b in enumerate(act):
                if done[b]:  # finished earlier, kept in a cache that cannot drop rows
                    continue
                out_ids[b].append(tok_l[k])
                out_lps[b].append(lp_l[k])
                if stop_l[k]:
                    done[b] = True
                    truncated[b] = not eos_l[k]
                else:
                    keep.append(k)
            if not keep:
                break
            if len(keep) < len(act) and (decoder is not None or hasattr(cache, "batch_select_indices")):
                idx = torch.tensor(keep, device=dev)  # drop finished rows from batch and cache
                if decoder is not None:
                    decoder.select(idx)
                else:
                    cache.batch_select_indices(idx)
                    mask = mask[idx]
                next_pos, tok = next_pos[idx], tok[idx]
                active = active[idx]
                act = [act[k] for k in keep]
            if decoder is not None:
                logits = decoder.step(tok, next_pos)
            else:
                mask = torch.cat([mask, mask.new_ones((len(act), 1))], dim=1)
                out = self.model(input_ids=tok.unsqueeze(-1), attention_mask=mask,
                                 position_ids=next_pos, use_cache=True, **{self._cache_name: cache})
                cache = out[self._cache_name]
                logits = out.logits[:, -1, :]
            next_pos = next_pos + 1
        return [(o, p, t) for o, p, t in zip(out_ids, out_lps, truncated)]


# --------------------------------------------------------------------------------------------
# helpers for consumers
# --------------------------------------------------------------------------------------------

PAD_RATIO = 2  # a batch never pads a prompt to more than this many times its own length


def length_chunks(lengths: Sequence[int], batch_size: int, ratio: float = PAD_RATIO) -> list[list[int]]:
    """Batches of positions into ``lengths`` (sorted longest first): at most ``batch_size`` each,
    and a new batch starts where a prompt is shorter than the batch's longest by more than
    ``ratio``. Left padding makes every row of a batch pay the longest prompt's prefill and
    attention: eight Proposer prompts of ~400 tokens in one batch with 56 Coder prompts of ~40
    made that batch cost 3-4x what the two cost apart (measured on the tiny world)."""
    chunks: list[list[int]] = []
    for i, n in enumerate(lengths):
        if (not chunks or len(chunks[-1]) >= batch_size
                or n * ratio < lengths[chunks[-1][0]]):
            chunks.append([])
        chunks[-1].append(i)
    return chunks


def decode_groups(sizes: Sequence[int], batch_size: int) -> list[list[int]]:
    """Consecutive chunks (by their row counts ``sizes``) gathered into groups that decode as one
    batch, at most ``batch_size`` rows each (a chunk alone may reach it): each chunk is prefilled
    on its own and decodes as a lane of :class:`roles.kv_decode.DecoderLanes`. Decoding them
    together runs one step loop instead of one per chunk: the tiny world's Proposer (8 rows of
    ~320 prompt tokens), Coder and Tester rows (96 of ~40) took 370 decode steps a call in three
    loops, 160 in one, each step of a small batch costing most of what a large one does."""
    groups: list[list[int]] = []
    total = 0
    for j, n in enumerate(sizes):
        if not groups or total + n > batch_size:
            groups.append([])
            total = 0
        groups[-1].append(j)
        total += n
    return groups


def _need_tokens(samples: Sequence[Sample]) -> None:
    if any(s.prompt_ids is None or s.completion_ids is None or s.logprobs is None for s in samples):
        raise ValueError("text-only samples (from a served model) carry no token ids or log-probs; "
                         "training needs a token-level generator")


def collate_samples(samples: Sequence[Sample], pad_id: int, device=None) -> dict[str, torch.Tensor]:
    """Right-padded prompt+completion batch: ``input_ids``, ``attention_mask``, ``position_ids``,
    ``completion_mask`` (1 on completion tokens) and ``logprobs`` (the sampler's, aligned with the
    token they score: position i holds the log-prob of ``input_ids[:, i]``; 0 elsewhere)."""
    _need_tokens(samples)
    n = max((len(s.prompt_ids) + len(s.completion_ids) for s in samples), default=0)
    B = len(samples)
    ids = torch.full((B, n), pad_id, dtype=torch.long)
    att = torch.zeros((B, n), dtype=torch.long)
    cm = torch.zeros((B, n), dtype=torch.float32)
    lp = torch.zeros((B, n), dtype=torch.float32)
    for b, s in enumerate(samples):
        p, c = len(s.prompt_ids), len(s.completion_ids)
        ids[b, :p + c] = torch.tensor(s.prompt_ids + s.completion_ids, dtype=torch.long)
        att[b, :p + c] = 1
        cm[b, p:p + c] = 1
        lp[b, p:p + c] = torch.tensor(s.logprobs, dtype=torch.float32)
    pos = (att.cumsum(-1) - 1).clamp(min=0)
    out = {"input_ids": ids, "attention_mask": att, "position_ids": pos, "completion_mask": cm,
           "logprobs": lp}
    if device is not None:
        out = {k: v.to(device) for k, v in out.items()}
    return out


def teacher_forced_logprobs(model, samples: Sequence[Sample], pad_id: int, temperature: float = 1.0,
                            top_p: float = 1.0) -> list[list[float]]:
    """Recompute each sample's completion log-probs with one forward pass (for checks/training)."""
    dev = next(model.parameters()).device
    batch = collate_samples(samples, pad_id, dev)
    with torch.inference_mode():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       position_ids=batch["position_ids"]).logits
        lp = logprobs_from_logits(logits[:, :-1], batch["input_ids"][:, 1:], temperature, top_p)
    out = []
    for b, s in enumerate(samples):
        p, c = len(s.prompt_ids), len(s.completion_ids)
        out.append(lp[b, p - 1:p - 1 + c].float().cpu().tolist())
    return out
