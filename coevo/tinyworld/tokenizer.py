"""A small byte-level BPE tokenizer trained locally on the tiny world's text.

* Byte-level (GPT-2 style) so any text round-trips exactly; digits are split into single digits
  (arithmetic is easier to learn digit by digit).
* Special tokens ``<|bos|>``, ``<|eos|>``, ``<|pad|>``; the roles' ``<|marker|>`` lines (found in the
  corpus, plus the known ones) are single, non-special added tokens, so they cost one token each
  and survive ``decode(..., skip_special_tokens=True)``.
* No chat template on the tokenizer the tiny world trains with: the roles use their plain prompt
  template. :data:`PLAIN_CHAT_TEMPLATE` is a chat template that renders exactly that plain prompt
  format (each user message is a plain prompt, passed through verbatim), so a model trained on it
  also works through a server's chat endpoint: :func:`add_plain_chat_template` writes it into a
  saved model directory (``roles.model_io.load_model`` drops it again, since the roles render the
  plain prompt themselves).
* Wrapped as :class:`transformers.PreTrainedTokenizerFast` (left padding, for batched
  generation); ``save_pretrained`` / ``from_pretrained`` round-trip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from roles.model_io import PLAIN_TEMPLATE_MARK

BOS = "<|bos|>"
EOS = "<|eos|>"
PAD = "<|pad|>"
MARKERS = ("<|role|>", "<|task|>", "<|entry|>", "<|answer|>", "<|code|>", "<|feedback|>",
           "<|tests|>", "<|count|>", "<|kind|>", "<|example|>")
_MARKER = re.compile(r"<\|[a-z_]+\|>")

# The plain prompt format as a chat template. A user message holds one whole plain prompt
# (roles.prompts, template "plain": it already ends with "<|answer|>" and a newline) and is
# rendered verbatim; an assistant message is a completion followed by EOS, as in training; system
# messages are dropped (the format has no place for them) and the generation prompt adds nothing.
# Content given as a list of text parts (OpenAI style) is joined. The first line marks the
# template so that coevo can recognise it (roles.model_io.is_plain_chat_template).
PLAIN_CHAT_TEMPLATE = (
    PLAIN_TEMPLATE_MARK + "\n"
    "{%- for message in messages -%}"
    "{%- if message['content'] is string -%}{%- set text = message['content'] -%}"
    "{%- else -%}{%- set text = message['content'] | map(attribute='text') | join('') -%}{%- endif -%}"
    "{%- if message['role'] == 'user' -%}{{ text }}"
    "{%- elif message['role'] == 'assistant' -%}{{ text }}{{ eos_token }}"
    "{%- endif -%}"
    "{%- endfor -%}"
)


def train_bpe(texts: Iterable[str], vocab_size: int = 768, min_frequency: int = 2,
              model_max_length: int = 1024):
    """Train the BPE tokenizer on ``texts``; returns a ``PreTrainedTokenizerFast``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = list(texts)
    markers = set(MARKERS)
    for t in texts:
        markers.update(_MARKER.findall(t))
    markers -= {BOS, EOS, PAD}
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    # markers are added before training so the BPE never sees them split
    tok.add_special_tokens([BOS, EOS, PAD])
    tok.add_tokens([AddedToken(m, special=False, normalized=False) for m in sorted(markers)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[BOS, EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS,
                                   pad_token=PAD, padding_side="left",
                                   model_max_length=model_max_length,
                                   clean_up_tokenization_spaces=False)
    return fast


def world_corpus(tasks, n_examples: int = 6000, seed: int = 0) -> list[str]:
    """Text for the tokenizer: role examples (prompt + completion) over ``tasks``."""
    from .sft_examples import sample_examples

    exs = sample_examples(tasks, n_examples, seed=seed)
    return [e.prompt + e.completion for e in exs]


def train_tokenizer(source, vocab_size: int = 768, n_examples: int = 6000, seed: int = 0,
                    min_frequency: int = 2):
    """The tiny world's tokenizer.

    ``source`` is a :class:`~coevo.tinyworld.library.World` (trained on role examples over its
    *training* tasks only, ``n_examples`` of them drawn with ``seed``) or an iterable of texts
    (e.g. :func:`world_corpus`). About a second either way.
    """
    if hasattr(source, "train_tasks"):
        source = world_corpus(source.train_tasks, n_examples, seed)
    return train_bpe(source, vocab_size=vocab_size, min_frequency=min_frequency)


def add_plain_chat_template(model_dir) -> None:
    """Give the tokenizer saved in ``model_dir`` the plain-format chat template (for serving).

    After this, a server that applies the tokenizer's chat template (``transformers serve``,
    ``vllm serve``) turns a chat request whose user message is a plain prompt into exactly the
    token ids the model was trained on; ``coevo solve --api-prompt plain`` sends such requests.
    Written atomically through ``save_pretrained`` into a temporary directory.
    """
    import os
    import shutil
    import tempfile
    from pathlib import Path

    from transformers import AutoTokenizer

    path = Path(model_dir)
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    tok.chat_template = PLAIN_CHAT_TEMPLATE
    tmp = Path(tempfile.mkdtemp(prefix=".tok-", dir=path))
    try:
        written = tok.save_pretrained(str(tmp))
        for f in written:
            f = Path(f)
            if f.parent == tmp and f.is_file():
                os.replace(f, path / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
