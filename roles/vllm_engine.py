"""Rollouts sampled by vLLM, colocated with the trainer on the same GPU(s).

:class:`VLLMEngine` has the shape of :class:`roles.generation.GenerationEngine`:
``generate(requests, progress=False, config=None) -> list[Sample]`` with the same
:class:`~roles.generation.GenRequest` and :class:`~roles.generation.Sample` types, prompts encoded
the same way (no special tokens, cut from the left to ``max_prompt_tokens``), the EOS token that
ends a sample kept in ``completion_ids``, ``truncated`` when the length limit (or the context)
stopped it, and ``Sample.logprobs`` filled from vLLM's log-probs of the sampled tokens under the
distribution it sampled from (``logprobs_mode="processed_logprobs"``: after temperature and top-p,
renormalised over the nucleus, as :func:`roles.generation.logprobs_from_logits` defines them).
Those are the sampler's log-probs that the trainer's sampler correction
(``train.is_correction``, :func:`training.losses.sampler_importance_weights`) compares with its
own; a sample for which vLLM returned no (or a NaN) log-prob for some token gets ``logprobs=[]``
and weight 1.

Around each ``generate`` the engine does what colocated RL trainers (TRL's ``vllm_mode=colocate``,
verl's hybrid engine) do, with vLLM's documented ``LLM`` methods:

1. **wake** the weights (``LLM.wake_up(tags=["weights"])``) when sleep mode is on;
2. **push the policy's weights** when they changed since the last push
   (``policy.weights_version``, bumped by every optimizer step of
   :class:`training.trainer.PolicyTrainer`): ``policy.iter_full_parameters()`` yields each
   parameter full-size (under ZeRO-3 gathered one at a time, a collective every rank runs) and
   each goes into vLLM's model with ``load_weights([(name, tensor)])``, the model's own loader
   that maps Hugging Face names onto vLLM's fused layers. The engine starts with
   ``load_format="dummy"`` and gets its first weights this way, so it never reads the checkpoint;
3. **reset the prefix cache** (``LLM.reset_prefix_cache()``): cached KV blocks were computed by
   the old weights;
4. wake the KV cache, generate, and **sleep** again (``LLM.sleep(level)``: level 1 offloads the
   weights to CPU memory, level 2 frees them and they are pushed again before the next rollout),
   so the optimizer step has the GPU memory back.

Under data parallelism every rank holds its own engine (tensor parallel size 1) on its own GPU
and samples its own share of the step's tasks (``distributed_executor_backend="external_launcher"``
when ``WORLD_SIZE > 1``, as TRL's colocate mode does).

Reproducibility: with ``per_request_seed`` each request gets its own seed derived from
``(seed, prompt, occurrence)`` (vLLM then samples it with its own generator: slower); otherwise
the engine's seed (``GenerationConfig.seed`` + rank) drives one stream, and samples depend on the
batch. vLLM's bf16 kernels do not reproduce the trainer's log-probs bit for bit: use
``train.is_correction`` (the ``mismatch/*`` metrics show by how much they differ).

STATUS: written against vLLM's documented API (``LLM``, ``SamplingParams``, sleep mode,
``reset_prefix_cache``, the model's ``load_weights``) and never run in this project's test suite,
which has no GPU and does not install vLLM. Only the pure helpers (:func:`request_seed`,
:func:`sampled_logprobs`, :func:`samples_from_outputs`, :func:`token_limits`) are tested, on CPU.
Whether the engine runs end to end, its throughput and its log-prob mismatch are unverified
until measured on a GPU (``benchmarks/gpu_throughput.py``).
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matrix.errors import InputError

if TYPE_CHECKING:  # roles.generation imports torch; this module must not (coevo.settings imports it)
    from roles.generation import GenerationConfig, GenRequest, Sample

SLEEP_LEVELS = (0, 1, 2)


@dataclass
class VLLMConfig:
    """Settings of the colocated vLLM engine (``rollout.vllm`` in a run's config)."""

    gpu_memory_utilization: float = 0.3  # share of the GPU's memory for vLLM's weights and KV cache
    sleep_level: int = 2  # between rollouts: 0 = stay awake, 1 = weights to CPU, 2 = free them (re-pushed)
    max_model_len: int = 0  # context length of the KV cache (0 = the model's own)
    max_num_seqs: int = 256  # sequences decoded together
    max_num_batched_tokens: int = 0  # tokens per scheduler step (0 = vLLM's default)
    enforce_eager: bool = False  # no CUDA graphs (starts faster, decodes slower)
    enable_prefix_caching: bool = True  # the G samples of a prompt share its KV blocks
    dtype: str = "bfloat16"  # vLLM's compute dtype
    per_request_seed: bool = False  # reproducible samples per prompt (slower sampling)

    def validate(self):
        if not 0 < self.gpu_memory_utilization < 1:
            raise ValueError("gpu_memory_utilization: must be in (0, 1)")
        if self.sleep_level not in SLEEP_LEVELS:
            raise ValueError(f"sleep_level: must be one of {list(SLEEP_LEVELS)}")
        for name in ("max_model_len", "max_num_batched_tokens"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0 (0 = vLLM's default)")
        if self.max_num_seqs < 1:
            raise ValueError("max_num_seqs: must be >= 1")
        if self.dtype not in ("bfloat16", "float16", "float32", "auto"):
            raise ValueError("dtype: must be bfloat16, float16, float32 or auto")


def require_vllm() -> None:
    """Raise :class:`InputError` (one line on the CLI) unless vLLM and a CUDA GPU are there."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise InputError("vLLM is not installed: pip install 'coevo[vllm]' (CUDA only), or set rollout.backend=hf",
                         field="rollout.backend")
    import torch

    if not torch.cuda.is_available():
        raise InputError("vllm needs a CUDA GPU; set rollout.backend=hf on this machine", field="rollout.backend")


# --------------------------------------------------------------------------------------------
# pure helpers (tested on CPU)
# --------------------------------------------------------------------------------------------

def request_seed(seed: int, prompt: str, occurrence: int) -> int:
    """A 63-bit seed for one request, from the run's seed, the prompt and how many identical
    prompts came before it in the call (so identical requests still differ)."""
    h = hashlib.blake2b(f"{int(seed)}\x00{occurrence}\x00".encode() + prompt.encode("utf-8", "surrogatepass"),
                        digest_size=8).digest()
    return int.from_bytes(h, "little") >> 1


def token_limits(prompt_lens: Sequence[int], max_new_tokens: int, context_length: int | None) -> list[int]:
    """Completion-token budget per prompt: ``max_new_tokens``, cut so that prompt + completion fit
    the context (0: no room at all; such a request is answered with empty truncated samples)."""
    if context_length is None:
        return [int(max_new_tokens)] * len(prompt_lens)
    return [max(0, min(int(max_new_tokens), int(context_length) - int(p))) for p in prompt_lens]


def sampled_logprobs(token_ids: Sequence[int], logprobs: Any) -> list[float]:
    """The log-prob of each sampled token from vLLM's per-position log-prob entries.

    ``logprobs[i]`` maps token ids to objects with a ``logprob`` attribute (vLLM's ``Logprob``) or
    to floats; the sampled token is always among them when ``SamplingParams.logprobs >= 0``.
    Returns ``[]`` when the entries are missing, too few, lack the sampled token, or hold a value
    that is not finite (the trainer then treats the sample as having no sampler log-probs).
    """
    if logprobs is None or len(logprobs) < len(token_ids):
        return []
    out: list[float] = []
    for i, tok in enumerate(token_ids):
        entry = logprobs[i]
        if entry is None:
            return []
        item = entry.get(int(tok)) if hasattr(entry, "get") else None
        if item is None:
            return []
        v = float(getattr(item, "logprob", item))
        if not math.isfinite(v):
            return []
        out.append(v)
    return out


def samples_from_outputs(requests: Sequence[GenRequest], prompt_ids: Sequence[list[int]],
                         outputs: Sequence[Any], decode: Callable[[list[int]], str], *, greedy: bool = False
                         ) -> list[Sample]:
    """:class:`Sample` objects, in request order (all samples of request 0 first), from vLLM's
    ``RequestOutput`` list (one per request, in the same order; each with ``outputs``: its
    ``CompletionOutput`` objects with ``index``, ``token_ids``, ``logprobs`` and
    ``finish_reason``). ``None`` in place of an output means "not sent" (``n == 0``, or no room
    left in the context): the request gets ``n`` empty truncated samples. ``greedy``: temperature 0, whose policy is
    deterministic: every log-prob is 0, as in :class:`roles.generation.GenerationEngine`.
    """
    from roles.generation import Sample

    if len(outputs) != len(requests) or len(prompt_ids) != len(requests):
        raise ValueError(f"{len(outputs)} outputs and {len(prompt_ids)} prompts for {len(requests)} requests")
    samples: list[Sample] = []
    for req, ids, out in zip(requests, prompt_ids, outputs):
        if out is None:
            samples += [Sample(req.role, req.task_id, list(ids), [], [], "", True, dict(req.meta), j)
                        for j in range(req.n)]
            continue
        comps = sorted(out.outputs, key=lambda c: c.index)
        if len(comps) != req.n:
            raise ValueError(f"request {req.task_id}/{req.role}: {len(comps)} completions for n={req.n}")
        for j, c in enumerate(comps):
            toks = [int(t) for t in c.token_ids]
            lps = [0.0] * len(toks) if greedy else sampled_logprobs(toks, c.logprobs)
            samples.append(Sample(req.role, req.task_id, list(ids), toks, lps, decode(toks),
                                  c.finish_reason == "length" or c.finish_reason is None, dict(req.meta), j))
    return samples


# --------------------------------------------------------------------------------------------
# the engine (needs vLLM and CUDA; not run by the test suite)
# --------------------------------------------------------------------------------------------

class VLLMEngine:
    """Colocated vLLM rollouts with weight pushes from the trainer (see the module doc).

    ``model_dir``: a ``save_pretrained`` directory of the policy's architecture (``RUN_DIR/init``);
    with a ``policy`` only its config is read (``load_format="dummy"``), the weights come from
    the policy before the first rollout. ``tokenizer``: the run's tokenizer (prompts are encoded
    and completions decoded by it; vLLM gets token ids only). ``policy``: anything with
    ``weights_version`` and ``iter_full_parameters()`` (:class:`training.trainer.PolicyTrainer`);
    ``None`` = serve the checkpoint's own weights.
    """

    def __init__(self, model_dir: str | Path, tokenizer, config: GenerationConfig | None = None,
                 settings: VLLMConfig | None = None, *, policy=None):
        require_vllm()
        from vllm import LLM

        from roles.generation import GenerationConfig

        self.tokenizer = tokenizer
        self.config = config or GenerationConfig()
        self.settings = settings or VLLMConfig()
        self.settings.validate()
        self.policy = policy
        self.eos_ids = _eos_ids(tokenizer, model_dir)
        self.stats: dict[str, float] = {}
        self._prefix: list[int] | None = None  # the tokenizer's leading special tokens (encode)
        self._synced_version: int | None = None  # weights_version the engine holds (None: none yet)
        self._awake = {"weights": True, "kv_cache": True}  # what sleep mode has not released
        self._weights_gone = policy is not None  # dummy weights until the first push
        s = self.settings
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        # the engine core in this process: the model object is reachable for load_weights
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        kw: dict[str, Any] = dict(
            model=str(model_dir), skip_tokenizer_init=True, dtype=s.dtype, seed=int(self.config.seed) + rank,
            gpu_memory_utilization=s.gpu_memory_utilization, enable_sleep_mode=s.sleep_level > 0,
            max_num_seqs=s.max_num_seqs, enforce_eager=s.enforce_eager,
            enable_prefix_caching=s.enable_prefix_caching, logprobs_mode="processed_logprobs",
            tensor_parallel_size=1)
        if policy is not None:
            kw["load_format"] = "dummy"
        if s.max_model_len:
            kw["max_model_len"] = s.max_model_len
        if s.max_num_batched_tokens:
            kw["max_num_batched_tokens"] = s.max_num_batched_tokens
        if world > 1:
            kw["distributed_executor_backend"] = "external_launcher"
        self.llm = LLM(**kw)
        self.context_length = int(self.llm.llm_engine.model_config.max_model_len)
        if s.sleep_level:
            self.sleep()

    @classmethod
    def colocated(cls, model_dir: str | Path, tokenizer, trainer, settings: VLLMConfig | None = None,
                  config: GenerationConfig | None = None) -> VLLMEngine:
        """An engine fed by ``trainer`` (a :class:`~training.trainer.PolicyTrainer`); the trainer
        then stops gathering ZeRO-3 weights for the loop's sampling (vLLM has its own copy)."""
        engine = cls(model_dir, tokenizer, config, settings, policy=trainer)
        trainer.gather_for_generation = False
        return engine

    # ------------------------------------------------------------------ memory
    def sleep(self, level: int | None = None) -> None:
        """Release GPU memory between rollouts (``LLM.sleep``): level 1 offloads the weights to CPU
        memory, level 2 frees them (they are pushed again before the next rollout); both drop the
        KV cache."""
        level = self.settings.sleep_level if level is None else level
        if not level or not any(self._awake.values()):
            return
        self.llm.sleep(level=level)
        self._awake = {"weights": False, "kv_cache": False}
        if level == 2:
            self._weights_gone = True

    def wake_up(self, tags: list[str] | None = None) -> None:
        """``LLM.wake_up`` of what sleeps among ``tags`` (``None``: everything). Wake
        ``["weights"]`` before pushing weights and ``["kv_cache"]`` after, so that both never hold
        memory while the weights are copied."""
        todo = [t for t in (tags or list(self._awake)) if not self._awake[t]]
        if not todo:
            return
        import torch

        torch.cuda.empty_cache()  # the trainer's freed blocks back to the device for vLLM's pool
        self.llm.wake_up(tags=todo)
        for t in todo:
            self._awake[t] = True

    def reset_prefix_cache(self) -> None:
        self.llm.reset_prefix_cache()

    # ------------------------------------------------------------------ weights
    def load_weights(self, named_tensors: Iterable[tuple[str, Any]]) -> int:
        """Load ``(name, tensor)`` pairs (Hugging Face names) into vLLM's model, one at a time;
        returns how many. The engine must be awake (at least its weights)."""
        load = self._model_loader()
        n = 0
        for name, tensor in named_tensors:
            load([(name, tensor)])
            n += 1
        return n

    def sync_weights(self, force: bool = False) -> bool:
        """Push the policy's weights when they changed (or ``force``); returns whether it pushed.
        Collective under ZeRO-3: every rank must call it (``generate`` does)."""
        if self.policy is None:
            return False
        version = int(self.policy.weights_version)
        if not force and not self._weights_gone and version == self._synced_version:
            return False
        self.wake_up(tags=["weights"])
        t0 = time.perf_counter()
        self.load_weights(self.policy.iter_full_parameters())
        self.reset_prefix_cache()
        self._synced_version = version
        self._weights_gone = False
        self.stats["weight_sync_s"] = time.perf_counter() - t0
        return True

    def _model_loader(self):
        # the in-process engine (VLLM_ENABLE_V1_MULTIPROCESSING=0 or the external launcher): the
        # driver worker's model, as TRL's colocate mode reaches it; else LLM.apply_model, which
        # runs the function on the model inside each worker
        try:
            model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
            return model.load_weights
        except AttributeError:
            return lambda batch: self.llm.apply_model(lambda m: m.load_weights(batch))

    # ------------------------------------------------------------------ sampling
    def encode(self, prompt: str) -> list[int]:
        """As the in-process engine encodes it (:func:`roles.prompts.prompt_ids`): a plain prompt
        with the BOS its tokenizer adds, cut from the left past ``max_prompt_tokens``."""
        from roles.prompts import prompt_ids, text_prefix_ids

        prefix = getattr(self, "_prefix", None)
        if prefix is None:
            prefix = self._prefix = text_prefix_ids(self.tokenizer)
        return prompt_ids(self.tokenizer, prompt, prefix, self.config.max_prompt_tokens)

    def generate(self, requests: Sequence[GenRequest], progress: bool = False,
                 config: GenerationConfig | None = None) -> list[Sample]:
        """``n`` samples per request, in request order (all samples of request 0 first)."""
        from vllm import SamplingParams

        cfg = config or self.config
        encoded: dict[str, list[int]] = {}
        seen: dict[str, int] = {}
        prompt_ids, seeds = [], []
        for r, req in enumerate(requests):
            if req.n < 0:
                raise ValueError(f"request {r}: n must be >= 0")
            if req.prompt not in encoded:
                encoded[req.prompt] = self.encode(req.prompt)
                if not encoded[req.prompt]:
                    raise ValueError(f"request {r}: empty prompt")
            occ = seen.get(req.prompt, 0)
            seen[req.prompt] = occ + 1
            prompt_ids.append(encoded[req.prompt])
            seeds.append(request_seed(cfg.seed, req.prompt, occ))
        limits = token_limits([len(p) for p in prompt_ids], cfg.max_new_tokens, self.context_length)
        greedy = cfg.temperature == 0
        send = [i for i, req in enumerate(requests) if req.n > 0 and limits[i] > 0]
        params = [SamplingParams(n=requests[i].n, temperature=cfg.temperature, top_p=cfg.top_p,
                                 max_tokens=limits[i], logprobs=None if greedy else 0,
                                 stop_token_ids=sorted(self.eos_ids), detokenize=False,
                                 seed=seeds[i] if self.settings.per_request_seed else None)
                  for i in send]
        t0 = time.perf_counter()
        self.wake_up(tags=["weights"])  # level 1: the weights come back from CPU memory
        self.sync_weights()  # level 2, or an optimizer step since the last push: the policy's weights
        self.wake_up(tags=["kv_cache"])
        try:
            outs = self.llm.generate([{"prompt_token_ids": prompt_ids[i]} for i in send], sampling_params=params,
                                     use_tqdm=progress) if send else []
        finally:
            self.sleep()
        dt = time.perf_counter() - t0
        by_req: list[Any] = [None] * len(requests)
        for i, o in zip(send, outs):
            by_req[i] = o
        samples = samples_from_outputs(requests, prompt_ids, by_req,
                                       lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True),
                                       greedy=greedy)
        n_tok = sum(len(s.completion_ids) for s in samples)
        self.stats.update({"samples": len(samples), "completion_tokens": n_tok, "seconds": dt,
                           "tokens_per_s": n_tok / dt if dt > 0 else 0.0,
                           "truncated": sum(1 for s in samples if s.truncated), "max_new_tokens": cfg.max_new_tokens})
        return samples

    def close(self) -> None:
        """Free the engine and its GPU memory."""
        import torch

        self.llm = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _eos_ids(tokenizer, model_dir) -> set[int]:
    from transformers import GenerationConfig as HFGenerationConfig

    from roles.model_io import stop_ids

    try:
        e = HFGenerationConfig.from_pretrained(str(model_dir)).eos_token_id
    except (OSError, ValueError):
        e = None
    return stop_ids(tokenizer, e)
