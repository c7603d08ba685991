"""A user's own model directory, in the shapes users bring (red-team pass 14d).

Each model is a tiny random one built here (no hub): a Llama whose tokenizer puts a BOS in front
of every text (as Llama/Mistral/Gemma tokenizers do), tokenizers without an EOS or a pad token,
a directory without tokenizer files, a config.json that is not JSON.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tinymodel import CORPUS, EOS, build_tiny_model

from matrix.errors import InputError
from matrix.tasks import Task
from roles import prompts
from roles.model_io import load_model
from roles.prompts import build_prompt, encode_example

TASK = Task("t1", "Return the sum of a and b.", "function", "add")


def _bos_llama(out: Path) -> Path:
    """A tiny Llama whose tokenizer adds ``<s>`` in front of a text by default, no chat template,
    no pad token (a Llama base model's shape)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 0)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=256, bos_token_id=0, eos_token_id=1))
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def bos_model(tmp_path_factory):
    return _bos_llama(tmp_path_factory.mktemp("bos") / "llama")


def _without_eos(src: Path, dst: Path, *, keep_model_eos: bool) -> Path:
    """A copy of ``src`` whose tokenizer names no EOS (and no pad); with ``keep_model_eos`` the
    model's generation_config.json still does."""
    from transformers import AutoTokenizer

    shutil.copytree(src, dst)
    tok = AutoTokenizer.from_pretrained(str(src))
    tok.eos_token = None
    tok.pad_token = None
    tok.save_pretrained(str(dst))
    if not keep_model_eos:
        for name in ("generation_config.json", "config.json"):
            data = json.loads((dst / name).read_text())
            data["eos_token_id"] = None
            data.pop("pad_token_id", None)
            (dst / name).write_text(json.dumps(data))
    return dst


# ------------------------------------------------------------------ BOS of a plain prompt


def test_a_plain_prompt_starts_with_the_bos_the_tokenizer_adds(bos_model):
    """A Llama-style tokenizer puts <s> in front of every text; a model trained so expects it (TRL's
    GRPOTrainer drops it, huggingface/trl#3520; a server's /v1/completions keeps it). The plain
    prompt coevo samples from carries it once, and the SFT encoding agrees with the sampler's."""
    from roles.generation import GenerationConfig, GenerationEngine

    model, tok = load_model(bos_model, device="cpu")
    prompt = build_prompt("coder", TASK, tok)
    assert not tok.chat_template
    ids = prompts.encode_prompt(tok, prompt)
    assert ids[0] == tok.bos_token_id and ids[1] != tok.bos_token_id
    assert ids == tok(prompt)["input_ids"]  # what the tokenizer itself makes of the text
    assert GenerationEngine(model, tok, GenerationConfig()).encode(prompt) == ids
    p, c = encode_example(tok, prompt, "```python\nreturn 1\n```")
    assert p == ids and c[-1] == tok.eos_token_id and tok.bos_token_id not in c
    # a text already starting with the BOS does not get a second one
    assert prompts.encode_prompt(tok, "<s>" + prompt) == ids


def test_the_vllm_engine_encodes_a_prompt_as_the_in_process_engine_does(bos_model):
    """The vLLM backend (GPU training) encoded prompts with add_special_tokens=False: a Llama-style
    model sampled there without the <s> it samples with in-process and is trained with. Both engines
    encode through one function, the BOS kept when a long prompt is cut from the left."""
    from roles.generation import GenerationConfig, GenerationEngine
    from roles.vllm_engine import VLLMEngine

    model, tok = load_model(bos_model, device="cpu")
    prompt = build_prompt("coder", TASK, tok)
    for limit in (None, 8):
        cfg = GenerationConfig(max_prompt_tokens=limit)
        vllm = object.__new__(VLLMEngine)  # the encoding alone: no vLLM, no GPU
        vllm.tokenizer, vllm.config = tok, cfg
        want = GenerationEngine(model, tok, cfg).encode(prompt)
        assert vllm.encode(prompt) == want and want[0] == tok.bos_token_id
        assert limit is None or len(want) == limit


def test_a_chat_template_decides_the_special_tokens_itself(bos_model):
    """With a chat template the rendered text is taken as it is (the template writes the BOS it
    wants: TRL, vLLM's chat endpoint and apply_chat_template(tokenize=True) all do so)."""
    _, tok = load_model(bos_model, device="cpu")
    tok.chat_template = ("{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}A:{% endif %}")
    text = build_prompt("coder", TASK, tok)
    assert prompts.encode_prompt(tok, text) == tok(text, add_special_tokens=False)["input_ids"]


def test_a_tokenizer_adding_nothing_encodes_as_before():
    """The tiny world's and the tests' tokenizers add no special token: their ids do not change."""
    from tinymodel import build_tokenizer

    tok = build_tokenizer()
    text = build_prompt("coder", TASK, tok)
    assert prompts.encode_prompt(tok, text) == tok(text, add_special_tokens=False)["input_ids"]


# ------------------------------------------------------------------ EOS and pad


def test_a_model_dir_naming_no_eos_anywhere_is_a_one_line_error(bos_model, tmp_path):
    path = _without_eos(bos_model, tmp_path / "noeos", keep_model_eos=False)
    with pytest.raises(InputError) as err:
        load_model(path, device="cpu")
    msg = str(err.value)
    assert str(path) in msg and "eos_token" in msg and "\n" not in msg


def test_the_cli_says_so_in_one_line_without_a_traceback(bos_model, tmp_path, capsys):
    from coevo.cli import main

    path = _without_eos(bos_model, tmp_path / "noeos", keep_model_eos=False)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK.to_json()) + "\n")
    rc = main(["solve", "--model", str(path), "--tasks", str(tasks), "--out", str(tmp_path / "o.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert err.strip().count("\n") == 0 and "eos_token" in err and str(path) in err


def test_a_tokenizer_without_eos_uses_the_models_eos_and_gets_a_pad(bos_model, tmp_path):
    """The tokenizer names no EOS, the model's generation_config.json does: sampling stops there,
    and the trainer gets a pad id (it crashed on int(None) at the start of coevo train)."""
    from roles.generation import GenerationConfig, GenerationEngine
    from training.config import GRPOConfig
    from training.trainer import PolicyTrainer

    path = _without_eos(bos_model, tmp_path / "tok-noeos", keep_model_eos=True)
    model, tok = load_model(path, device="cpu")
    assert tok.pad_token_id is not None
    assert GenerationEngine(model, tok, GenerationConfig()).eos_ids == {1}
    PolicyTrainer(model, GRPOConfig(), pad_token_id=tok.pad_token_id)


def test_a_tokenizer_without_pad_pads_with_eos(bos_model):
    _, tok = load_model(bos_model, device="cpu")
    assert tok.pad_token_id == tok.eos_token_id and tok.padding_side == "left"


# ------------------------------------------------------------------ other broken directories


def test_a_dir_without_tokenizer_files_says_which_files(tmp_path):
    path = Path(build_tiny_model(tmp_path / "m", hidden_size=16, layers=1))
    for f in path.glob("tokenizer*"):
        f.unlink()
    (path / "special_tokens_map.json").unlink(missing_ok=True)
    with pytest.raises(InputError) as err:
        load_model(path, device="cpu")
    msg = str(err.value)
    assert str(path) in msg and "tokenizer.json" in msg and not msg.rstrip().endswith(":")


def test_a_config_json_that_is_not_json_is_named(tmp_path):
    path = Path(build_tiny_model(tmp_path / "m", hidden_size=16, layers=1))
    (path / "config.json").write_text("{not json")
    with pytest.raises(InputError) as err:
        load_model(path, device="cpu")
    msg = str(err.value)
    assert "config.json" in msg and "JSON" in msg and "tokenizer" not in msg


def test_eos_of_the_tests_tiny_model_is_unchanged(tmp_path):
    path = build_tiny_model(tmp_path / "m", hidden_size=16, layers=1)
    _, tok = load_model(path, device="cpu")
    assert tok.eos_token == EOS and tok.pad_token == "<|pad|>"


# ------------------------------------------------------------------ coevo train on an own model


def test_step_status_lines_where_no_progress_bar_is_drawn():
    """stderr not a terminal (a log file, nohup, CI): no bar, so a status line says the run is
    alive: the first and the last step, and a step at most every 30 s in between."""
    from coevo.run_driver import STATUS_EVAL_KEYS, STATUS_KEYS
    from training.metrics_file import StepStatus

    now = [100.0]
    status = StepStatus(total=10, first=3, keys=STATUS_KEYS, eval_keys=STATUS_EVAL_KEYS, every_s=30.0,
                        clock=lambda: now[0])
    said = {}
    for step in range(3, 11):
        now[0] += 12.0
        said[step] = status.after(step, {"reward/coder": 0.25, "loss": 0.0123, "eval/code_acc": 0.5}
                                  if step == 10 else {"reward/coder": 0.25, "loss": 0.0123})
    assert [s for s, line in said.items() if line] == [3, 6, 9, 10]
    assert said[3] == "step 3/10 (first step 12.0 s): reward/coder 0.25, loss 0.0123"
    assert said[10].startswith("step 10/10 (12.0 s/step, ETA 0s)") and "held-out code_acc 0.500" in said[10]


def test_coevo_train_on_an_own_model_logs_steps_and_exports_a_model_that_reloads(tmp_path, capsys):
    """`coevo train model.path=DIR data.train=FILE` on a model built here: exit 0, one metrics line
    per step, status lines on a stderr that is no terminal, and RUN_DIR/model loads with
    transformers and with coevo (and keeps the user's tokenizer's special tokens)."""
    from tinymodel import ADD_GOOD_TESTS, ADD_RIGHT, ADD_TASK, build_add_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coevo.cli import main

    model = build_add_model(tmp_path / "m")
    task = dict(ADD_TASK, tests=[{"test": t} for t in ADD_GOOD_TESTS], solutions=[ADD_RIGHT])
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(task) + "\n")
    run = tmp_path / "run"
    rc = main(["train", "--out", str(run), f"model.path={model}", f"data.train={tasks}", "loop.steps=2",
               "loop.tasks_per_step=1", "loop.n_codes=4", "loop.n_tests=2", "loop.roles=[coder,tester]",
               "loop.max_new_tokens=40", "loop.save_every=1", "execution.workers=1", "model.threads=1"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "[coevo] step 1/2 (" in err and "[coevo] step 2/2 (" in err and "Traceback" not in err
    steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]
    assert f"model:   {run / 'model'}" in out
    reloaded = AutoModelForCausalLM.from_pretrained(str(run / "model"))
    assert type(reloaded).__name__ == "LlamaForCausalLM"
    tok = AutoTokenizer.from_pretrained(str(run / "model"))
    assert tok.eos_token == EOS and tok.pad_token == "<|pad|>"
    again, tok2 = load_model(run / "model", device="cpu")
    assert tok2.eos_token_id == tok.eos_token_id
    # a run without held-out tasks resumes (its empty held-out file was refused: "no tasks in file")
    cfg_file = run / "config.yaml"
    text = cfg_file.read_text()
    assert "  steps: 2\n" in text
    cfg_file.write_text(text.replace("  steps: 2\n", "  steps: 3\n"))
    rc = main(["train", "--resume", str(run)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]


def test_a_prompt_longer_than_the_models_context_is_named_once(tmp_path, caplog):
    """A GPT-2-shaped model (learned positions, 48 of them) and a prompt past them: the sample is
    empty (truncated) as before, and a warning says so once per engine (it was silent: a small
    model's Proposer never wrote anything)."""
    import logging

    import torch
    from tinymodel import build_tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    from roles.generation import GenerationConfig, GenerationEngine, GenRequest

    tok = build_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=48,
                                       eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id))
    eng = GenerationEngine(model, tok, GenerationConfig(max_new_tokens=8))
    short = build_prompt("coder", TASK, tok)
    long = build_prompt("proposer", None, tok, references=[TASK] * 6)
    assert len(eng.encode(short)) < 48 <= len(eng.encode(long))
    with caplog.at_level(logging.WARNING, logger="coevo"):
        out = eng.generate([GenRequest("coder", "t1", short, n=2), GenRequest("proposer", "p", long, n=3)])
        eng.generate([GenRequest("proposer", "p", long, n=1)])
    assert out[2].completion_ids == [] and out[2].truncated and len(out[0].completion_ids) >= 1
    warned = [r.getMessage() for r in caplog.records if "context" in r.getMessage()]
    assert len(warned) == 1, warned
    assert "proposer" in warned[0] and "48" in warned[0] and "3 of 5" in warned[0]
    # the summary line does not count them as stopped by --max-new-tokens (nor advise raising it)
    eng.generate([GenRequest("proposer", "p", long, n=3)])
    assert eng.stats["truncated"] == 0


def test_a_pad_token_added_without_resizing_the_embeddings_pads_with_eos(tmp_path, caplog):
    """tokenizer.add_special_tokens({'pad_token': '[PAD]'}) without model.resize_token_embeddings: the
    pad id is past the embeddings, and left-padding a batch ended coevo solve with 'IndexError: index
    out of range in self'. Padding is masked, so coevo pads with the EOS and says so."""
    import logging

    from transformers import AutoTokenizer

    from roles.generation import GenerationConfig, GenerationEngine, GenRequest

    path = Path(build_tiny_model(tmp_path / "m", hidden_size=16, layers=1))
    tok = AutoTokenizer.from_pretrained(str(path))
    tok.pad_token = None
    tok.add_special_tokens({"pad_token": "[PAD]"})
    tok.save_pretrained(str(path))
    with caplog.at_level(logging.WARNING, logger="coevo"):
        model, tok = load_model(path, device="cpu")
    n = model.get_input_embeddings().num_embeddings
    assert tok.pad_token_id == tok.eos_token_id < n
    assert any("[PAD]" in r.getMessage() and "resize_token_embeddings" in r.getMessage() for r in caplog.records)
    out = GenerationEngine(model, tok, GenerationConfig(max_new_tokens=4)).generate(
        [GenRequest("coder", "t1", build_prompt("coder", TASK, tok), n=1), GenRequest("coder", "t2", "x", n=1)])
    assert len(out) == 2


def test_an_eos_past_the_embeddings_is_a_one_line_error(tmp_path):
    from transformers import AutoTokenizer

    path = Path(build_tiny_model(tmp_path / "m", hidden_size=16, layers=1))
    for name in ("generation_config.json", "config.json"):
        data = json.loads((path / name).read_text())
        data["eos_token_id"] = None
        (path / name).write_text(json.dumps(data))
    tok = AutoTokenizer.from_pretrained(str(path))
    tok.add_special_tokens({"eos_token": "<|new_end|>"})
    tok.save_pretrained(str(path))
    with pytest.raises(InputError) as err:
        load_model(path, device="cpu")
    assert "eos_token" in str(err.value) and "resize_token_embeddings" in str(err.value)


def test_a_run_of_an_own_model_names_it_in_init_instead_of_copying_it(tmp_path):
    """RUN_DIR/init held a full copy of the user's model (a 7B model: 15 GB more per run): it now
    names the model's directory and its files; a resumed run loads the model from there, and
    refuses, in one line, a model that changed or went away since the run began."""
    import torch
    from tinymodel import ADD_GOOD_TESTS, ADD_RIGHT, ADD_TASK, build_add_model

    from coevo.run_driver import SOURCE_FILE, load_run_config, prepare_start

    model_dir = Path(build_add_model(tmp_path / "m"))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(dict(ADD_TASK, tests=[{"test": t} for t in ADD_GOOD_TESTS],
                                     solutions=[ADD_RIGHT])) + "\n")
    cfg = load_run_config(None, [f"model.path={model_dir}", f"data.train={tasks}", "model.device=cpu"])
    run = tmp_path / "run"
    first, _, train, _ = prepare_start(cfg, run, progress=False)
    init = run / "init"
    assert (init / SOURCE_FILE).is_file() and (init / "train.jsonl").is_file()
    assert not list(init.glob("*.safetensors")) and not (init / "config.json").exists()
    again, tok, train2, _ = prepare_start(cfg, run, progress=False)  # as a resumed run does
    assert [t.task_id for t in train2] == [t.task_id for t in train] and tok.eos_token == EOS
    for a, b in zip(first.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)
    st = (model_dir / "config.json").stat()
    os.utime(model_dir / "config.json", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(InputError, match=r"config\.json\): resuming would continue another model") as e:
        prepare_start(cfg, run, progress=False)
    assert str(init / SOURCE_FILE) in str(e.value) and "\n" not in str(e.value)
    shutil.rmtree(model_dir)
    with pytest.raises(InputError, match="which is gone"):
        prepare_start(cfg, run, progress=False)


def test_a_base_model_whose_tokenizer_ships_a_chat_template_can_take_the_plain_format(bos_model, tmp_path, capsys):
    """Base models often carry their instruct sibling's chat template (Qwen2.5-Coder base): auto
    uses it; model.prompt=plain / --prompt plain writes coevo's plain prompt instead; chat on a
    tokenizer without a template is a one-line error."""
    from transformers import AutoTokenizer

    from coevo.cli import main
    from coevo.run_driver import load_run_config

    templated = tmp_path / "templated"
    shutil.copytree(bos_model, templated)
    tok = AutoTokenizer.from_pretrained(str(templated))
    tok.chat_template = "{% for m in messages %}<|user|>{{ m['content'] }}\n{% endfor %}<|assistant|>"
    tok.save_pretrained(str(templated))
    _, auto = load_model(templated, device="cpu")
    assert build_prompt("coder", TASK, auto).startswith("<|user|>")
    _, plain = load_model(templated, device="cpu", prompt="plain")
    assert build_prompt("coder", TASK, plain) == build_prompt("coder", TASK, None) and "<|user|>" not in \
        build_prompt("coder", TASK, plain)
    with pytest.raises(InputError, match="has no chat template") as e:
        load_model(bos_model, device="cpu", prompt="chat")
    assert e.value.field == "prompt"
    assert load_run_config(None, ["model.prompt=plain"], check=False).model.prompt == "plain"
    with pytest.raises(InputError, match="field 'model.prompt': must be auto, chat or plain"):
        load_run_config(None, ["model.prompt=base"], check=False)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK.to_json()) + "\n")
    rc = main(["solve", "--model", str(templated), "--prompt", "plain", "--tasks", str(tasks), "--out",
               str(tmp_path / "codes.jsonl"), "--n-codes", "1", "--n-tests", "0", "--max-new-tokens", "4",
               "--device", "cpu"])
    assert rc == 0, capsys.readouterr().err
