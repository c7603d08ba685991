"""GRPO step speed: TRL's ``GRPOTrainer`` against ours (``training.PolicyTrainer``), same work, on CPU.

Both sides train copies of the same tiny model (a 2-layer Llama built here, byte-level BPE
tokenizer trained here; nothing is downloaded) and do, per **step** = one rollout batch:

1. generation: 8 prompts x G=8 completions with ``model.generate`` (same ``GenerationConfig``:
   sampling at temperature 1, top-k off, top-p 1, at most ``--max-new`` tokens), from left-padded
   prompts -- identical code path on both sides, so generation costs the same;
2. decoding and a fixed reward function on the completion text (count of "a" mod 3);
3. the policy update: GRPO+ loss (token-level "dapo" aggregation, clip 0.2 / 0.28, no KL, no
   entropy term, group-scaled advantages, std ddof=1 + 1e-4), two optimizer steps per rollout
   batch of 64 (TRL: micro-batches of 8, ``gradient_accumulation_steps=4``,
   ``steps_per_generation=8``; ours: ``micro_batch_size=8``, ``updates_per_batch=2``), AdamW lr
   1e-5, constant schedule, grad clip 1.0, dropout off, fp32, one torch thread. Truncated
   completions are kept in the loss on both sides (a random tiny model rarely emits EOS, so
   overlong filtering would leave nothing to train on). Old log-probs (the ratio's denominator):
   TRL runs a no-grad forward over the whole batch before the first optimizer step; ours over the
   second mini-batch only (the first takes them from its own forward) -- the same values.

Each framework runs ``--warmup`` steps, then ``--steps`` timed steps (ours in two halves, before
and after TRL, so a drifting machine load hits both alike); a step's time is wall-clock from the
end of the previous step to the end of this one (TRL: every second ``on_step_end``). ``speedup`` =
our median steps/s over TRL's. The JSON also gives each side's generation time (inside
``model.generate``), the rest (reward + update + framework overhead), the process CPU time per step
(``speedup_cpu_time``: less sensitive to other load on the machine) and the load average.

    python benchmarks/grpo_vs_trl.py                      # ~20 s on an idle 2-core CPU
    python benchmarks/grpo_vs_trl.py --steps 20 --hidden 128 --micro 32
"""

from __future__ import annotations

import argparse
import contextlib
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

PROMPTS = [
    "def add(a, b):\n    return a + b\n# a function that",
    "assert is_even(4) == True\nassert",
    "Write a function that returns the largest element of a list.",
    "for i in range(10):\n    if x[i] > 0:",
    "def reverse(s):\n    \"\"\"Return s reversed.\"\"\"\n",
    "print(sum(map(int, input().split())))",
    "### Task\nCount the vowels in a string.\n### Solution\n",
    "class Stack:\n    def push(self, x):",
]
CORPUS = PROMPTS + [
    "def is_even(n):\n    return n % 2 == 0\n", "assert add(1, 2) == 3\n", "return max(xs)\n",
    "a banana and an apple at a table", "while stack:\n    node = stack.pop()\n",
]


def reward_fn(completions, **kwargs):
    return [float(c.count("a") % 3) for c in completions]


# ------------------------------------------------------------------------------------ model
def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|pad|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 8, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|pad|>",
                                   padding_side="left")


def build_model(tok, hidden: int, layers: int, seed: int = 0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      tie_word_embeddings=True, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      bos_token_id=None)
    return LlamaForCausalLM(cfg)


class GenTimer:
    """Wraps ``model.generate``: adds up the time spent generating and the completion lengths
    (tokens up to and including EOS, or all new tokens when there is none)."""

    def __init__(self, model, eos_id: int, pad_id: int):
        self.seconds = 0.0
        self.lengths: list[float] = []
        inner = model.generate

        def generate(*a, **kw):
            t = time.perf_counter()
            try:
                out = inner(*a, **kw)
            finally:
                self.seconds += time.perf_counter() - t
            ids = kw.get("input_ids", a[0] if a else None)
            seqs = out.sequences if hasattr(out, "sequences") else out
            if ids is not None:
                n = []
                for row in seqs[:, ids.shape[1]:].tolist():
                    n.append(row.index(eos_id) + 1 if eos_id in row else sum(t != pad_id for t in row))
                self.lengths.append(sum(n) / max(len(n), 1))
            return out

        model.generate = generate


def generation_config(tok, args):
    from transformers import GenerationConfig

    return GenerationConfig(max_new_tokens=args.max_new, do_sample=True, pad_token_id=tok.pad_token_id,
                            eos_token_id=[tok.eos_token_id], temperature=1.0, top_p=1.0, top_k=0,
                            disable_compile=True)


# ------------------------------------------------------------------------------------ TRL
def run_trl(tok, args) -> dict:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer

    model = build_model(tok, args.hidden, args.layers)
    timer = GenTimer(model, tok.eos_token_id, tok.pad_token_id)
    total = args.warmup + args.steps
    stamps: list[tuple[float, float, float]] = []  # (wall, generation, cpu) at each optimizer step

    class Clock(TrainerCallback):
        def on_step_end(self, a, state, control, **kw):
            stamps.append((time.perf_counter(), timer.seconds, time.process_time()))

    data = Dataset.from_dict({"prompt": PROMPTS * (4 * total)})
    targs = TRLConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-bench-"), report_to="none", use_cpu=True, bf16=False, fp16=False,
        per_device_train_batch_size=args.micro, gradient_accumulation_steps=args.batch // 2 // args.micro,
        steps_per_generation=args.batch // args.micro,
        num_generations=args.G, max_completion_length=args.max_new, max_steps=2 * total,
        learning_rate=1e-5, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, max_grad_norm=1.0,
        loss_type="dapo", epsilon=0.2, epsilon_high=0.28, beta=0.0, scale_rewards="group",
        mask_truncated_completions=False, temperature=1.0, top_p=1.0, top_k=0, num_iterations=1,
        disable_dropout=True, save_strategy="no", logging_steps=10**9, disable_tqdm=True, shuffle_dataset=False,
        dataloader_num_workers=0, seed=0,
    )
    # logging_steps=10**9: no per-step logging (ours prints nothing either)
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):  # TRL prints its summary
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(model=model, reward_funcs=reward_fn, args=targs, train_dataset=data,
                              processing_class=tok, callbacks=[Clock()])
        start = (time.perf_counter(), timer.seconds, time.process_time())
        trainer.train()
    # one step = two optimizer steps (one generation)
    marks = [start] + stamps[1::2]
    steps = [tuple(b - a for a, b in zip(marks[i], marks[i + 1])) for i in range(len(marks) - 1)]
    timed = steps[args.warmup:]
    return _summary(timed, statistics.mean(timer.lengths[args.warmup:]))


# ------------------------------------------------------------------------------------ ours
def run_ours(tok, args, n_steps: int, warmup: int) -> dict:
    import torch

    from training.config import GRPOConfig
    from training.rollout import Rollout
    from training.trainer import PolicyTrainer

    model = build_model(tok, args.hidden, args.layers)
    timer = GenTimer(model, tok.eos_token_id, tok.pad_token_id)
    cfg = GRPOConfig(loss_type="grpo_plus", mask_truncated=False, lr=1e-5, updates_per_batch=2,
                     micro_batch_size=args.micro, grad_clip=1.0, weight_decay=0.0, lr_schedule="constant",
                     temperature=1.0, seed=0)
    trainer = PolicyTrainer(model, cfg, pad_token_id=tok.pad_token_id)
    gcfg = generation_config(tok, args)
    n_prompts = args.batch // args.G
    eos = tok.eos_token_id
    steps = []
    for s in range(warmup + n_steps):
        t0, g0, c0 = time.perf_counter(), timer.seconds, time.process_time()
        prompts = [PROMPTS[(s * n_prompts + i) % len(PROMPTS)] for i in range(n_prompts)]
        enc = tok(prompts, add_special_tokens=False)["input_ids"]
        ids = [p for p in enc for _ in range(args.G)]
        P = max(map(len, ids))
        x = torch.full((len(ids), P), tok.pad_token_id, dtype=torch.long)
        att = torch.zeros_like(x)
        for i, p in enumerate(ids):
            x[i, P - len(p):] = torch.tensor(p)
            att[i, P - len(p):] = 1
        model.eval()
        with torch.no_grad():
            out = model.generate(input_ids=x, attention_mask=att, generation_config=gcfg)
        comps = []
        for row in out[:, P:].tolist():
            comps.append(row[:row.index(eos) + 1] if eos in row else [t for t in row if t != tok.pad_token_id])
        texts = tok.batch_decode(comps, skip_special_tokens=True)
        rewards = reward_fn(texts)
        rollouts = [Rollout(p, c, [], r, f"prompt/{i // args.G}", "coder", truncated=eos not in c)
                    for i, (p, c, r) in enumerate(zip(ids, comps, rewards))]
        trainer.step(rollouts)
        steps.append((time.perf_counter() - t0, timer.seconds - g0, time.process_time() - c0))
    return {"steps": steps[warmup:], "lengths": timer.lengths[warmup:],
            "params": sum(p.numel() for p in model.parameters())}


def _summary(steps: list[tuple[float, float, float]], mean_len) -> dict:
    wall = [w for w, _, _ in steps]
    med = statistics.median(wall)
    return {"steps_per_s": 1.0 / med, "median_step_s": med, "mean_step_s": statistics.mean(wall),
            "generate_s": statistics.median([g for _, g, _ in steps]),
            "rest_s": statistics.median([w - g for w, g, _ in steps]),
            "cpu_s": statistics.median([c for _, _, c in steps]),
            "steps_timed": len(steps), "mean_completion_tokens": mean_len}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10, help="timed rollout batches per framework")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64, help="completions per rollout batch (prompts x G)")
    ap.add_argument("--micro", type=int, default=8, help="completions per forward/backward (micro-batch)")
    ap.add_argument("--G", type=int, default=8, help="completions per prompt (group size)")
    ap.add_argument("--max-new", type=int, default=32, help="max completion tokens")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (default 1: a tiny model gains nothing from more, and one thread keeps "
                         "the timing robust to other load on the machine; 0 = torch's default)")
    args = ap.parse_args(argv)
    if args.batch % args.G or (args.batch // 2) % args.G or (args.batch // 2) % args.micro:
        ap.error("--batch must be a multiple of 2 * G and of 2 * micro")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import transformers
    import trl

    transformers.logging.set_verbosity_error()
    tok = build_tokenizer()
    t0 = time.perf_counter()
    load_before = os.getloadavg()[0]
    # ours before and after TRL, so slow drifts of the machine's load hit both sides alike
    first = args.steps // 2
    a = run_ours(tok, args, first, args.warmup)
    trl_res = run_trl(tok, args)
    b = run_ours(tok, args, args.steps - first, args.warmup)
    ours = _summary(a["steps"] + b["steps"], statistics.mean(a["lengths"] + b["lengths"]))
    n_params = a["params"]
    line = {
        "benchmark": "grpo_vs_trl",
        "speedup": round(ours["steps_per_s"] / trl_res["steps_per_s"], 3),
        "ours_steps_per_s": round(ours["steps_per_s"], 3),
        "trl_steps_per_s": round(trl_res["steps_per_s"], 3),
        "measured": (f"median wall time of one rollout batch: model.generate of {args.batch // args.G} prompts x "
                     f"{args.G} completions (<= {args.max_new} new tokens, identical GenerationConfig), decode, "
                     f"reward, GRPO+ update with 2 optimizer steps in micro-batches of {args.micro}; "
                     f"{args.steps} timed after {args.warmup} warm-up batches, same process, CPU, fp32, "
                     f"{torch.get_num_threads()} thread(s)"),
        "ours": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in ours.items()},
        "trl": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in trl_res.items()},
        "speedup_cpu_time": round(trl_res["cpu_s"] / ours["cpu_s"], 3),
        "speedup_excluding_generation": round(trl_res["rest_s"] / ours["rest_s"], 3),
        "model": {"params": n_params, "hidden": args.hidden, "layers": args.layers, "vocab": len(tok)},
        "threads": torch.get_num_threads(),
        "load_avg": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
