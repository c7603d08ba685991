"""The tiny world: the embedded default in which co-evolution runs on a 2-core CPU with no
downloads.

* :mod:`.library` — primitives over ints, lists and strings; composed tasks (English
  description, reference solution, ground-truth asserts); the seeded train / held-out split by
  composition; :func:`recognize`, :func:`recognize_code` and :func:`check_proposed` (with
  :func:`heldout_pairs_of` when only ``heldout.jsonl`` is at hand) for Proposer tasks.
* :mod:`.sft_examples` — SFT examples for the four roles in the formats of :mod:`roles.prompts`.
* :mod:`.tokenizer` — a byte-level BPE tokenizer trained locally on the world's text.
* :mod:`.model` — a small ``LlamaForCausalLM`` from scratch.
* :mod:`.sft` — the supervised warm-up (the stand-in for pretraining).

Typical use (the lead's ``coevo demo``)::

    from coevo import tinyworld as tw
    world = tw.build_world(seed)
    tok = tw.train_tokenizer(world)
    model = tw.make_model(tok, size="small", seed=seed)
    stats = tw.sft_train(model, tok, world.train_tasks, steps=900, batch_size=8, lr=3e-3)

or all at once: ``model, tok, stats = tw.warm_start(world, ...)``.

Importing this package imports neither torch nor transformers; the functions that need them
import them when called.
"""

from __future__ import annotations

from .library import (
    ENTRY,
    PRIMITIVES,
    Primitive,
    World,
    build_world,
    check_proposed,
    describe,
    heldout_pairs_of,
    is_valid,
    make_task,
    primitives,
    recognize,
    recognize_code,
    reference_code,
    run_steps,
)

# Recommended warm-up (see ``warm_start``). Measured on the shared 2-core CPU (seed 0, 64 held-out
# tasks, 4 codes at T=0.8; small model, 1.92M parameters, batch 8, lr 3e-3): held-out code
# accuracy after 600 / 900 / 1200 steps = 21% / 34% / 59%, unit-test accuracy 15-22%. Small
# batches matter: 9600 examples as 600 x 16 gave 35%, as 1200 x 8 gave 59%. 900 steps is about
# 800k tokens, roughly 200-250 s at the ~3.5-4k tokens/s the model trains at on 2 idle cores.
DEFAULT_SIZE = "small"
DEFAULT_SFT_STEPS = 900
DEFAULT_BATCH_SIZE = 8
DEFAULT_LR = 3e-3


def train_tokenizer(source, vocab_size: int = 768, n_examples: int = 6000, seed: int = 0):
    """See :func:`coevo.tinyworld.tokenizer.train_tokenizer` (a World or an iterable of texts)."""
    from .tokenizer import train_tokenizer as _train

    return _train(source, vocab_size=vocab_size, n_examples=n_examples, seed=seed)


def make_model(tokenizer, size: str = DEFAULT_SIZE, seed: int = 0, max_positions: int = 512):
    from .model import make_model as _make

    return _make(tokenizer, size=size, seed=seed, max_positions=max_positions)


def sft_train(model, tokenizer, tasks, steps: int = DEFAULT_SFT_STEPS,
              batch_size: int = DEFAULT_BATCH_SIZE, lr: float = DEFAULT_LR, seed: int = 0,
              progress: bool = True, **kwargs):
    from .sft import sft_train as _sft

    return _sft(model, tokenizer, tasks, steps=steps, batch_size=batch_size, lr=lr, seed=seed,
                progress=progress, **kwargs)


def sample_examples(tasks, n: int, seed: int = 0, tokenizer=None, weights=None):
    from .sft_examples import sample_examples as _sample

    return _sample(tasks, n, seed=seed, tokenizer=tokenizer, weights=weights)


def warm_start(world: World, size: str = DEFAULT_SIZE, steps: int = DEFAULT_SFT_STEPS,
               batch_size: int = DEFAULT_BATCH_SIZE, lr: float = DEFAULT_LR, seed: int = 0,
               progress: bool = True, threads: int | None = None,
               time_budget_s: float | None = None):
    """Tokenizer + fresh model + SFT warm-up on ``world.train_tasks``.

    Returns ``(model, tokenizer, stats)`` with ``model`` in eval mode.
    """
    tok = train_tokenizer(world, seed=seed)
    model = make_model(tok, size=size, seed=seed)
    stats = sft_train(model, tok, world.train_tasks, steps=steps, batch_size=batch_size, lr=lr,
                      seed=seed, progress=progress, threads=threads, time_budget_s=time_budget_s)
    return model, tok, stats


__all__ = [
    "ENTRY", "PRIMITIVES", "Primitive", "World", "build_world", "describe", "is_valid",
    "make_task", "primitives", "recognize", "recognize_code", "reference_code", "check_proposed",
    "heldout_pairs_of", "run_steps", "train_tokenizer",
    "make_model", "sft_train", "sample_examples", "warm_start", "DEFAULT_SIZE",
    "DEFAULT_SFT_STEPS", "DEFAULT_BATCH_SIZE", "DEFAULT_LR",
]
