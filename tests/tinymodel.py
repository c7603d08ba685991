"""A tiny random causal LM, built and saved by the tests themselves (no hub, no downloads).

``build_tiny_model(dir)`` trains a byte-level BPE tokenizer on a few code strings (well under a
second), wraps it as a ``PreTrainedTokenizerFast`` with ``<|endoftext|>`` as EOS and ``<|pad|>`` as
pad, builds a 2-layer ``LlamaForCausalLM`` with random weights and ``save_pretrained``s both into
``dir``. ``tiny_model_path()`` returns one such model per test process (cached in a temporary
directory removed at exit); ``tiny_model_path(chat=True)`` one whose tokenizer has a chat template.

The model writes garbage, which is the point: everything downstream must cope with it.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

EOS = "<|endoftext|>"
PAD = "<|pad|>"

CORPUS = [
    "def add(a, b):\n    return a + b\n",
    "def is_even(n):\n    return n % 2 == 0\n",
    "assert add(1, 2) == 3\nassert is_even(4) == True\n",
    "```python\nprint(sum(map(int, input().split())))\n```\n",
    '{"input": "1 2\\n", "output": "3\\n"}\n',
    "<|role|>coder\n<|task|>\nReturn the sum.\n<|entry|>add\n<|answer|>\n",
    "### Task\n### Function\n### Solution\n### Inputs\n",
    "for i in range(10):\n    if x[i] > 0:\n        s += x[i]\n",
]

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def build_tokenizer(chat_template: str | None = None, vocab_size: int = 400):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD,
                                   padding_side="left")
    if chat_template:
        fast.chat_template = chat_template
    return fast


def build_tiny_model(out_dir: str | Path, *, chat_template: str | None = None, seed: int = 0,
                     hidden_size: int = 32, layers: int = 2, max_positions: int = 512) -> str:
    """Build and save a tiny random Llama model plus tokenizer into ``out_dir``; returns it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = build_tokenizer(chat_template)
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=hidden_size,
                      intermediate_size=2 * hidden_size, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=max_positions, tie_word_embeddings=True,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      bos_token_id=None)
    model = LlamaForCausalLM(cfg)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


_CACHE: dict[bool, str] = {}
_ROOT: list[str] = []


def _root() -> Path:
    """This process's temporary directory of built models (removed at exit)."""
    if not _ROOT:
        _ROOT.append(tempfile.mkdtemp(prefix="coevo-tiny-"))
        atexit.register(shutil.rmtree, _ROOT[0], True)
    return Path(_ROOT[0])


def tiny_model_path(chat: bool = False) -> str:
    """A tiny model directory shared by the tests of this process (built on first use)."""
    if chat not in _CACHE:
        _root()
        name = "chat" if chat else "plain"
        _CACHE[chat] = build_tiny_model(Path(_ROOT[0]) / name,
                                        chat_template=CHAT_TEMPLATE if chat else None)
    return _CACHE[chat]


def build_memorizing_model(out_dir: str | Path, examples: list[tuple[str, str]], *,
                           steps: int = 200, hidden_size: int = 64, seed: int = 0,
                           target_loss: float = 0.02, lr: float = 1e-2) -> str:
    """A tiny model trained (a few seconds on CPU) to continue each prompt with its completion.

    ``examples`` are ``(prompt, completion)`` text pairs, encoded exactly as the generation engine
    does (:func:`roles.prompts.encode_example`). Repeating a prompt with different completions
    teaches a mixture (e.g. 3 right programs and 1 wrong one sample about 3:1 at temperature 1).
    Training stops once the mean loss drops below ``target_loss`` (it cannot for a mixture; then
    after ``steps`` steps).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from roles.prompts import encode_example

    path = build_tiny_model(out_dir, seed=seed, hidden_size=hidden_size)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    pairs = [encode_example(tok, p, c) for p, c in examples]
    n, width = len(pairs), max(len(a) + len(b) for a, b in pairs)
    ids = torch.full((n, width), tok.pad_token_id)
    labels = torch.full((n, width), -100)
    att = torch.zeros((n, width), dtype=torch.long)
    for i, (a, b) in enumerate(pairs):
        ids[i, :len(a) + len(b)] = torch.tensor(a + b)
        labels[i, len(a):len(a) + len(b)] = torch.tensor(b)
        att[i, :len(a) + len(b)] = 1
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=att, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < target_loss:
            break
    model.eval()
    model.save_pretrained(path)
    return path


# the `add` task and a model taught to answer it with an even mix of right and wrong programs, and
# with right tests plus one wrong test: only the generated tests can tell the programs apart
ADD_TASK = {"task_id": "add", "prompt": "Return the sum of a and b.", "kind": "function",
            "entry_point": "add"}
ADD_RIGHT = "def add(a, b):\n    return a + b"
ADD_WRONG = "def add(a, b):\n    return a - b"
ADD_GOOD_TESTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(0, 5) == 5"]
ADD_BAD_TEST = "assert add(1, 1) == 3"


_ADD: list[str] = []


def build_add_model(out_dir: str | Path) -> str:
    """A tiny model taught (a few seconds) to answer the plain Coder/Tester prompts of ``ADD_TASK``,
    copied into ``out_dir`` (a copy of its own: a test may change or delete it). It is taught once
    per test process: five test modules use it, and each teaching took 3-8 s on a busy CPU."""
    if not _ADD:
        _ADD.append(_teach_add_model(_root() / "add"))
    shutil.copytree(_ADD[0], out_dir, dirs_exist_ok=True)
    return str(Path(out_dir))


def _teach_add_model(out_dir: str | Path) -> str:
    from matrix.tasks import Task, Test
    from roles.prompts import build_prompt, render_code_completion, render_tests_completion

    task = Task.from_json(ADD_TASK)
    coder, tester = build_prompt("coder", task, None), build_prompt("tester", task, None)
    ex = [(coder, render_code_completion(ADD_RIGHT))] * 2 + [(coder, render_code_completion(ADD_WRONG))] * 2
    ex += [(tester, render_tests_completion([Test.assertion(t) for t in ADD_GOOD_TESTS[:2]]))] * 2
    ex += [(tester, render_tests_completion([Test.assertion(ADD_GOOD_TESTS[2])])),
           (tester, render_tests_completion([Test.assertion(ADD_BAD_TEST)]))]
    return build_memorizing_model(out_dir, ex)
