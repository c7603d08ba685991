"""Rollout tokens/s and training-step MFU: coevo (own engine, vLLM backend) vs TRL's GRPOTrainer
(HF generate, vLLM colocate), same model, same prompts, same GPU, same run. One JSON line.

The model is Qwen2-shaped with random weights, created and saved locally (throughput does not
need trained weights; nothing is downloaded): ``--size 0.5b`` / ``1.5b`` are Qwen2.5-0.5B / 1.5B's
shapes (hidden, layers, heads, KV heads, MLP width, 151,936-token vocabulary, tied embeddings),
``tiny`` a scaled-down one for CPU. The tokenizer is a byte-level BPE trained here on a few code
lines. The saved config has no EOS token and every side forces exactly ``--completion-len``
tokens (coevo's engines: no stop token; TRL: ``min_new_tokens`` / vLLM ``min_tokens``), so all
sides decode the same number of tokens.

``coevo_hf_dynamic_cache`` is coevo's own engine with ``transformers``' growing cache instead of
its preallocated one (``GenerationEngine.static_cache = False``, :mod:`roles.kv_decode`): the
ratio ``rollout_speedup_static_vs_dynamic_cache`` is what the preallocated cache buys.
``coevo_hf_shared_prompts`` trains with ``train.share_prompts: true`` (a group's prompt runs once per
micro-batch; the default shares on the CPU only): ``update_speedup_shared_prompts_vs_default`` is what
sharing buys the update on this device (< 1 on a GPU: it costs).

Per framework, one **rollout batch** = ``--prompts`` prompts x ``--G`` completions:

* **rollout tokens/s (per GPU)** = completion tokens generated / wall time of generation (coevo:
  ``engine.generate``; TRL: its ``_generate_single_turn``, which includes its weight sync to vLLM,
  as coevo's vLLM ``generate`` includes its own);
* **training-step MFU** = 6 x parameters x (prompt + completion tokens of the batch) / (wall time
  of the update part of the step) / peak FLOP/s. The numerator is the same for every side: one
  forward and backward of every token (attention-score FLOPs left out, so it is a lower bound);
  extra forwards a framework runs (old log-probs) count as its overhead. The update part: coevo's
  ``PolicyTrainer.step``; TRL's optimizer steps of the batch minus its generation time. Both do 2
  optimizer steps per batch in micro-batches of ``--micro`` (GRPO+ / TRL ``dapo`` loss, clip
  0.2/0.28, no KL, truncated completions kept in the loss: every completion is cut at the length
  limit here). Peak: ``--peak-tflops``, else the dense bf16 figure of a known GPU (H100/H200 SXM
  989, H100 PCIe 756, A100 312), else (CPU) a float32 matmul measured on this machine, named as
  such in the JSON.

Rows whose backend cannot run say why (``"available": false``): the vLLM rows need the ``vllm``
package (``pip install "coevo[vllm]"``) and CUDA. The vLLM rows (coevo's and TRL's) have NOT been
run by this project yet: no GPU was available when they were written.

    python benchmarks/gpu_throughput.py --device cpu                    # tiny model, ~15 s on 2 cores
    python benchmarks/gpu_throughput.py --size 0.5b --prompts 16 --G 8 --prompt-len 256 --completion-len 1024
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHAPES = {  # Qwen2.5's published configs (hidden, layers, heads, kv heads, MLP width)
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, vocab_size=None),
    "0.5b": dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                 intermediate_size=4864, vocab_size=151936),
    "1.5b": dict(hidden_size=1536, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                 intermediate_size=8960, vocab_size=151936),
}
PEAK_BF16_TFLOPS = (("H200", 989.4), ("H100 PCIe", 756.0), ("H100", 989.4), ("A100", 312.0))
CODE = [
    "def add(a, b):\n    return a + b\n", "assert is_even(4) == True\n", "for i in range(10):\n    if x[i] > 0:\n",
    "def reverse(s):\n    \"\"\"Return s reversed.\"\"\"\n    return s[::-1]\n",
    "print(sum(map(int, input().split())))\n",
    "class Stack:\n    def push(self, x):\n        self.items.append(x)\n", "while stack:\n    node = stack.pop()\n",
    "Write a function that returns the largest element of a list.\n", "a banana and an apple at a table\n",
]


def reward_fn(completions, **kwargs):
    return [float(c.count("a") % 3) for c in completions]


# ------------------------------------------------------------------------------------ setup
def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=["<|endoftext|>", "<|pad|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CODE * 8, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|pad|>",
                                   padding_side="left")


def save_model(tok, size: str, out: Path, dtype) -> int:
    """A random Qwen2 model of ``size``'s shape saved to ``out`` (with the tokenizer); returns its
    parameter count. No EOS in its config: completions run to the length limit."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    shape = dict(SHAPES[size])
    shape["vocab_size"] = shape["vocab_size"] or len(tok)
    cfg = Qwen2Config(**shape, max_position_embeddings=32768, rope_theta=1e6, tie_word_embeddings=True,
                      eos_token_id=None, bos_token_id=None, pad_token_id=tok.pad_token_id, use_sliding_window=False)
    torch.manual_seed(0)
    with torch.device("cpu"):
        model = Qwen2ForCausalLM(cfg).to(dtype)
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    n = sum(p.numel() for p in model.parameters())
    del model
    return n


def prompts_of(tok, n: int, length: int) -> list[str]:
    """``n`` distinct prompts of about ``length`` tokens each (code lines, rotated)."""
    out = []
    for i in range(n):
        text, k = f"# task {i}\n", i
        while len(tok(text, add_special_tokens=False)["input_ids"]) < length:
            text += CODE[k % len(CODE)]
            k += 1
        ids = tok(text, add_special_tokens=False)["input_ids"][:length]
        out.append(tok.decode(ids))
    return out


def load_policy(model_dir: Path, device: str):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device)


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def free(device: str) -> None:
    import torch

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def peak_tflops(args) -> tuple[float, str]:
    import torch

    if args.peak_tflops:
        return args.peak_tflops, "--peak-tflops"
    if args.device.startswith("cuda"):
        name = torch.cuda.get_device_name()
        for key, v in PEAK_BF16_TFLOPS:
            if key in name:
                return v, f"dense bf16 spec of {name}"
        raise SystemExit(f"unknown GPU {name!r}: pass --peak-tflops")
    n = 512
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.5:
        a @ b
        reps += 1
    dt = time.perf_counter() - t0
    return 2 * n**3 * reps / dt / 1e12, (f"float32 {n}x{n} matmul measured on this CPU "
                                         f"({torch.get_num_threads()} threads)")


def unavailable(reason: str) -> dict:
    return {"available": False, "reason": reason}


def vllm_missing(args) -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (pip install 'coevo[vllm]')"
    if not args.device.startswith("cuda"):
        return "vllm needs CUDA"
    return None


# ------------------------------------------------------------------------------------ coevo
def run_coevo(args, tok, model_dir: Path, prompts: list[str], n_params: int, backend: str) -> dict:
    from roles.generation import GenerationConfig, GenerationEngine, GenRequest
    from training.config import GRPOConfig
    from training.rollout import Rollout
    from training.trainer import PolicyTrainer

    model = load_policy(model_dir, args.device)
    cfg = GRPOConfig(loss_type="grpo_plus", mask_truncated=False, lr=1e-6, updates_per_batch=2,
                     micro_batch_size=args.micro, grad_clip=1.0, temperature=1.0, seed=0,
                     bf16=args.device.startswith("cuda"), gradient_checkpointing=args.gradient_checkpointing,
                     is_correction="token_truncate" if backend == "vllm" else "none",
                     share_prompts=True if backend == "hf_shared_prompts" else None)  # None: the default
    trainer = PolicyTrainer(model, cfg, pad_token_id=tok.pad_token_id)
    gcfg = GenerationConfig(temperature=1.0, top_p=1.0, max_new_tokens=args.completion_len, seed=0,
                            batch_size=len(prompts) * args.G)
    if backend == "vllm":
        from roles.vllm_engine import VLLMConfig, VLLMEngine

        engine = VLLMEngine(model_dir, tok, gcfg, VLLMConfig(gpu_memory_utilization=args.vllm_memory,
                                                             sleep_level=args.vllm_sleep_level), policy=trainer)
        engine.eos_ids = set()  # no stop token: every completion has exactly --completion-len tokens
    else:
        engine = GenerationEngine(model, tok, gcfg)
        engine.eos_ids = {-1}  # no token stops a sample: exactly --completion-len tokens
        engine.static_cache = backend != "hf_dynamic_cache"
    reqs = [GenRequest("coder", f"p{i}", p, n=args.G) for i, p in enumerate(prompts)]
    gen_s, gen_tok, train_s, train_tokens, lengths, syncs = [], [], [], [], [], []
    for b in range(args.warmup + args.batches):
        sync(args.device)
        t0 = time.perf_counter()
        with trainer.generation_context():
            samples = engine.generate(reqs, config=gcfg)
        sync(args.device)
        t1 = time.perf_counter()
        texts = [s.text for s in samples]
        rewards = reward_fn(texts)
        rollouts = [Rollout(s.prompt_ids, s.completion_ids, s.logprobs, r, f"p/{s.task_id}", "coder", s.truncated)
                    for s, r in zip(samples, rewards)]
        sync(args.device)
        t2 = time.perf_counter()
        m = trainer.step(rollouts)
        sync(args.device)
        t3 = time.perf_counter()
        if b >= args.warmup:
            gen_s.append(t1 - t0)
            gen_tok.append(sum(len(s.completion_ids) for s in samples))
            train_s.append(t3 - t2)
            train_tokens.append(sum(r.n_tokens for r in rollouts))
            lengths += [len(s.completion_ids) for s in samples]
            if "weight_sync_s" in engine.stats:
                syncs.append(engine.stats["weight_sync_s"])
    res = summarize(args, gen_s, gen_tok, train_s, train_tokens, lengths, n_params)
    res["logprob_diff"] = m.get("logprob_diff")
    if backend == "vllm":
        res["weight_sync_s"] = statistics.median(syncs) if syncs else None
        res.update({k: m[k] for k in m if k.startswith(("mismatch/", "is/"))})
        engine.close()
    del trainer, model, engine
    free(args.device)
    return res


# ------------------------------------------------------------------------------------ TRL
def run_trl(args, tok, model_dir: Path, prompts: list[str], n_params: int, backend: str) -> dict:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer

    model = load_policy(model_dir, args.device)
    stamps: list[tuple[float, float]] = []
    gen = {"s": 0.0, "tokens": []}
    cuda = args.device.startswith("cuda")

    class Clock(TrainerCallback):
        def on_step_end(self, a, state, control, **kw):
            sync(args.device)
            stamps.append((time.perf_counter(), gen["s"]))

    batch = len(prompts) * args.G
    total = args.warmup + args.batches
    data = Dataset.from_dict({"prompt": prompts * (2 * total)})
    extra = {"min_tokens": args.completion_len} if backend == "vllm" else {"min_new_tokens": args.completion_len}
    vllm_kw = dict(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=args.vllm_memory,
                   vllm_enable_sleep_mode=args.vllm_sleep_level > 0) if backend == "vllm" else {}
    targs = TRLConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-gpu-bench-"), report_to="none", use_cpu=not cuda, bf16=cuda,
        fp16=False, per_device_train_batch_size=args.micro, gradient_accumulation_steps=batch // 2 // args.micro,
        steps_per_generation=batch // args.micro, num_generations=args.G, max_completion_length=args.completion_len,
        max_steps=2 * total, learning_rate=1e-6, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        max_grad_norm=1.0, loss_type="dapo", epsilon=0.2, epsilon_high=0.28, beta=0.0, scale_rewards="group",
        mask_truncated_completions=False, temperature=1.0, top_p=1.0, top_k=0, num_iterations=1,
        disable_dropout=True, save_strategy="no", logging_steps=10**9, disable_tqdm=True, shuffle_dataset=False,
        dataloader_num_workers=0, seed=0, generation_kwargs=extra, **vllm_kw,
        **({"gradient_checkpointing": True} if args.gradient_checkpointing else {}))
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=targs, train_dataset=data,
                              processing_class=tok, callbacks=[Clock()])
        inner = trainer._generate_single_turn

        def timed(*a, **kw):
            sync(args.device)
            t = time.perf_counter()
            out = inner(*a, **kw)
            sync(args.device)
            gen["s"] += time.perf_counter() - t
            gen["tokens"].append([len(c) for c in out[0]])
            return out

        trainer._generate_single_turn = timed
        sync(args.device)
        start = (time.perf_counter(), 0.0)
        trainer.train()
    marks = [start] + stamps[1::2]  # one rollout batch = two optimizer steps
    gen_s, train_s = [], []
    for i in range(len(marks) - 1):
        wall = marks[i + 1][0] - marks[i][0]
        g = marks[i + 1][1] - marks[i][1]
        gen_s.append(g)
        train_s.append(wall - g)
    lengths_per_batch = gen["tokens"]
    timed_batches = range(args.warmup, min(total, len(gen_s)))
    lengths = [n for b in timed_batches for n in lengths_per_batch[b]]
    gen_tok = [sum(lengths_per_batch[b]) for b in timed_batches]
    p_tokens = sum(len(tok(p, add_special_tokens=False)["input_ids"]) for p in prompts) * args.G
    train_tokens = [p_tokens + t for t in gen_tok]
    res = summarize(args, [gen_s[b] for b in timed_batches], gen_tok, [train_s[b] for b in timed_batches],
                    train_tokens, lengths, n_params)
    del trainer, model
    free(args.device)
    return res


# ------------------------------------------------------------------------------------ figures
def summarize(args, gen_s, gen_tok, train_s, train_tokens, lengths, n_params) -> dict:
    peak = args.peak[0]
    flops = [6.0 * n_params * t for t in train_tokens]
    mfu = [f / s / (peak * 1e12) for f, s in zip(flops, train_s)]
    return {
        "available": True,
        "rollout_tokens_per_s_per_gpu": sum(gen_tok) / sum(gen_s),
        "rollout_s": statistics.median(gen_s),
        "train_step_s": statistics.median(train_s),
        "train_tflops": statistics.median([f / s / 1e12 for f, s in zip(flops, train_s)]),
        "mfu": statistics.median(mfu),
        "completion_tokens": {"min": min(lengths), "max": max(lengths)},
        "batches_timed": len(gen_s),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--size", choices=sorted(SHAPES), default=None, help="model shape (default: 0.5b on CUDA, "
                    "tiny on CPU)")
    ap.add_argument("--prompts", type=int, default=None, help="prompts per rollout batch (default 16; CPU 4)")
    ap.add_argument("--G", type=int, default=None, help="completions per prompt (default 8; CPU 4)")
    ap.add_argument("--prompt-len", type=int, default=None, help="prompt tokens (default 256; CPU 32)")
    ap.add_argument("--completion-len", type=int, default=None, help="completion tokens (default 1024; CPU 32)")
    ap.add_argument("--micro", type=int, default=None, help="sequences per forward/backward (default 8; CPU 4)")
    ap.add_argument("--batches", type=int, default=3, help="timed rollout batches per framework")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--vllm-memory", type=float, default=0.3, help="vLLM's share of GPU memory (both frameworks)")
    ap.add_argument("--vllm-sleep-level", type=int, default=2, choices=(0, 1, 2))
    ap.add_argument("--peak-tflops", type=float, default=None, help="peak FLOP/s of one device, in TFLOP/s")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (0 = torch's default)")
    ap.add_argument("--only", default="coevo_hf,coevo_hf_dynamic_cache,coevo_hf_shared_prompts,coevo_vllm,trl_hf,"
                                      "trl_vllm",
                    help="rows to run (comma list)")
    args = ap.parse_args(argv)
    # stdout carries the JSON line only: libraries that print (DeepSpeed's accelerator notice, TRL's
    # summary) write to stderr, also through handlers they create at import
    with contextlib.redirect_stdout(sys.stderr):
        line = measure(args, ap)
    print(json.dumps(line))
    return 0


def measure(args, ap) -> dict:
    import torch

    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    cpu = not args.device.startswith("cuda")
    dflt = dict(size="tiny", prompts=4, G=4, prompt_len=32, completion_len=32, micro=4) if cpu else \
        dict(size="0.5b", prompts=16, G=8, prompt_len=256, completion_len=1024, micro=8)
    for k, v in dflt.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if (args.prompts * args.G) % (2 * args.micro):
        ap.error("--prompts x --G must be a multiple of 2 x --micro")
    if args.threads:
        torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import transformers
    import trl

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    args.peak = peak_tflops(args)
    tok = build_tokenizer()
    t0 = time.perf_counter()
    load_before = os.getloadavg()[0]
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="coevo-gpu-bench-") as tmp:
        model_dir = Path(tmp) / "model"
        n_params = save_model(tok, args.size, model_dir, torch.float32 if cpu else torch.bfloat16)
        prompts = prompts_of(tok, args.prompts, args.prompt_len)
        why = vllm_missing(args)
        wanted = args.only.split(",")
        for name, fn, backend in (("coevo_hf", run_coevo, "hf"),
                                  ("coevo_hf_dynamic_cache", run_coevo, "hf_dynamic_cache"),
                                  ("coevo_hf_shared_prompts", run_coevo, "hf_shared_prompts"),
                                  ("coevo_vllm", run_coevo, "vllm"),
                                  ("trl_hf", run_trl, "hf"), ("trl_vllm", run_trl, "vllm")):
            if name not in wanted:
                rows[name] = unavailable("not requested (--only)")
            elif backend == "vllm" and why:
                rows[name] = unavailable(why)
            else:
                rows[name] = fn(args, tok, model_dir, prompts, n_params, backend)

    def ratio(a, b, key):
        if rows[a].get("available") and rows[b].get("available"):
            return round(rows[a][key] / rows[b][key], 3)
        return None

    line = {
        "benchmark": "gpu_throughput",
        "device": torch.cuda.get_device_name() if not cpu else "cpu",
        "model": {"shape": f"Qwen2 {args.size}", "params": n_params, "random_weights": True},
        "work": {"prompts": args.prompts, "G": args.G, "prompt_tokens": args.prompt_len,
                 "completion_tokens": args.completion_len, "micro_batch": args.micro,
                 "optimizer_steps_per_batch": 2, "precision": "fp32" if cpu else "bf16 autocast, fp32 weights",
                 "gradient_checkpointing": args.gradient_checkpointing},
        "peak_tflops": round(args.peak[0], 3), "peak_source": args.peak[1],
        "rollout_speedup_coevo_vllm_vs_trl_vllm": ratio("coevo_vllm", "trl_vllm", "rollout_tokens_per_s_per_gpu"),
        "rollout_speedup_coevo_hf_vs_trl_hf": ratio("coevo_hf", "trl_hf", "rollout_tokens_per_s_per_gpu"),
        "rollout_speedup_static_vs_dynamic_cache": ratio("coevo_hf", "coevo_hf_dynamic_cache",
                                                         "rollout_tokens_per_s_per_gpu"),
        "update_speedup_shared_prompts_vs_default": ratio("coevo_hf", "coevo_hf_shared_prompts", "train_step_s"),
        **{name: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
           for name, row in rows.items()},
        "threads": torch.get_num_threads(),
        "load_avg": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__,
                     "vllm": _version("vllm")},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return line


def _version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


if __name__ == "__main__":
    sys.exit(main())
