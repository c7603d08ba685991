"""A user's own model directory that transformers cannot load as a causal LM (robust36): each stops
with one line saying what is wrong in the user's terms, naming the file and field, never a pointer
to a report nobody sees ("For details look at the above report!"), never a question on stdin.

* config.json whose vocab_size (or other size) disagrees with the weights (a config.json copied from
  another model): the tensor and both shapes;
* a model type that needs the repository's own Python code (auto_map, trust_remote_code): said so,
  and transformers' interactive "Do you wish to run the custom code? [y/N]" never asked;
* an encoder-decoder or encoder model (T5): not a causal LM.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tinymodel import build_tiny_model

from coevo.cli import main
from matrix.errors import InputError
from roles.model_io import load_model


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return Path(build_tiny_model(tmp_path_factory.mktemp("own36") / "base", layers=1, hidden_size=16))


def edited(base: Path, tmp_path: Path, **fields) -> Path:
    d = tmp_path / "m"
    shutil.copytree(base, d)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(fields)
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_a_config_whose_sizes_disagree_with_the_weights_names_the_tensor(base, tmp_path):
    d = edited(base, tmp_path, vocab_size=1000)
    with pytest.raises(InputError) as err:
        load_model(d, device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and "above report" not in msg
    assert "config.json" in msg and "embed_tokens.weight" in msg and "1000" in msg


def test_a_model_that_needs_its_own_code_says_so_and_asks_nothing(base, tmp_path, monkeypatch):
    d = edited(base, tmp_path, model_type="mycustom", architectures=["MyModel"],
               auto_map={"AutoConfig": "configuration_my.MyConfig", "AutoModelForCausalLM": "modeling_my.MyModel"})

    def no_questions(*a, **k):
        raise AssertionError("asked on stdin")
    monkeypatch.setattr("builtins.input", no_questions)
    with pytest.raises(InputError) as err:
        load_model(d, device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and "mycustom" in msg and "own Python code" in msg and "config.json" in msg


def test_an_encoder_decoder_model_is_no_causal_lm(tmp_path, capsys):
    from tinymodel import build_tokenizer
    from transformers import T5Config, T5ForConditionalGeneration

    tok = build_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8,
                   decoder_start_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                   pad_token_id=tok.pad_token_id)
    d = tmp_path / "t5"
    T5ForConditionalGeneration(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "add", "prompt": "Return a + b.", "kind": "function",
                                 "entry_point": "add"}) + "\n")
    out = tmp_path / "codes.jsonl"
    capsys.readouterr()  # (the saving's progress bars)
    rc = main(["solve", "--model", str(d), "--tasks", str(tasks), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err and not out.exists()
    assert "t5" in err and "causal" in err and "config.json" in err
