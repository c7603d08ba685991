"""A user's own model directory, second pass (session 19): the path forms users type and the
directories users point at that are not a plain ``save_pretrained`` directory.

* ``--model ~/models/x`` quoted, or in a config file: the ``~`` is the user's home (it was taken
  literally: "no such model directory");
* a directory a ``coevo train`` run wrote: the run itself, its ``checkpoints`` folder, one
  ``checkpoints/step-N`` or its ``model`` folder (which holds weights only: the run's tokenizer is
  in ``init``, or in the user's model directory ``init/source.json`` names);
* a chat template that cannot render any prompt (a syntax error, a ``raise_exception`` for every
  input): one line naming the file and the field, not a Jinja traceback from the first prompt;
* a PEFT adapter directory: one line saying to merge it.

Each model is a tiny random one built here (no hub).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tinymodel import build_tiny_model

from matrix.errors import InputError
from roles.model_io import load_model, resolve_model_dir


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return Path(build_tiny_model(tmp_path_factory.mktemp("own2") / "base", layers=1, hidden_size=16))


def _fake_run(root: Path, base: Path, *, steps=(1, 2), export: bool = False, source: bool = True) -> Path:
    """The layout ``coevo train`` writes for a run started from the user's model ``base``:
    ``init/source.json`` naming it, ``checkpoints/step-N/model`` with weights and configs only,
    ``checkpoints/latest`` naming the newest step, ``model`` once the run has finished."""
    run = root / "run"
    (run / "init").mkdir(parents=True)
    if source:
        (run / "init" / "source.json").write_text(json.dumps({"path": str(base), "files": {}}))
    for s in steps:
        d = run / "checkpoints" / f"step-{s:08d}" / "model"
        d.mkdir(parents=True)
        for name in ("config.json", "generation_config.json", "model.safetensors"):
            shutil.copy(base / name, d / name)
        (d.parent / "meta.json").write_text(json.dumps({"step": s}))
    (run / "checkpoints" / "latest").write_text(f"step-{max(steps):08d}\n")
    (run / "config.yaml").write_text("loop:\n  steps: 2\n")
    if export:
        shutil.copytree(base, run / "model")
    return run


# ------------------------------------------------------------------ path forms


def test_a_model_path_with_a_tilde_is_the_users_home(base, tmp_path, monkeypatch):
    """`--model "~/models/x"` (quoted, or `--model=~/x`, or model.path in a config file: no shell
    expands it) was 'no such model directory'."""
    monkeypatch.setenv("HOME", str(tmp_path))
    shutil.copytree(base, tmp_path / "mine")
    model, tok = load_model("~/mine/", device="cpu")
    assert tok.eos_token_id is not None and model.config.model_type == "llama"


# ------------------------------------------------------------------ a run's directories


def test_a_checkpoint_of_a_run_loads_with_the_runs_tokenizer(base, tmp_path):
    """RUN/checkpoints/step-N/model holds no tokenizer files: it was 'no tokenizer files ...'; the
    step directory, the checkpoints folder and the run itself were 'not a model directory'."""
    run = _fake_run(tmp_path, base)
    step2 = run / "checkpoints" / "step-00000002"
    for given in (step2 / "model", step2, run / "checkpoints", run):
        weights, tokenizer = resolve_model_dir(given)
        assert weights == step2 / "model", given  # the newest checkpoint (no export yet)
        assert tokenizer == base, given
    model, tok = load_model(run / "checkpoints" / "step-00000001", device="cpu")
    assert tok.eos_token == "<|endoftext|>" and tok.padding_side == "left"
    assert model.config.model_type == "llama"


def test_a_finished_run_loads_its_exported_model(base, tmp_path):
    run = _fake_run(tmp_path, base, export=True)
    assert resolve_model_dir(run) == (run / "model", run / "model")


def test_a_tiny_world_run_takes_the_tokenizer_saved_in_init(base, tmp_path):
    run = _fake_run(tmp_path, base, source=False)
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(base / name, run / "init" / name)
    assert resolve_model_dir(run / "checkpoints")[1] == run / "init"


def test_a_run_without_checkpoints_or_a_checkpoint_without_a_model_says_so(base, tmp_path):
    run = _fake_run(tmp_path, base, steps=(1,))
    shutil.rmtree(run / "checkpoints" / "step-00000001" / "model")
    with pytest.raises(InputError) as err:
        load_model(run, device="cpu")
    assert "step-00000001" in str(err.value) and "\n" not in str(err.value)
    shutil.rmtree(run / "checkpoints")
    with pytest.raises(InputError) as err:
        load_model(run, device="cpu")
    assert "no checkpoint" in str(err.value) and str(run) in str(err.value)


def test_the_cli_solves_with_a_checkpoint_directory(base, tmp_path, capsys):
    from coevo.cli import main

    run = _fake_run(tmp_path, base)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "add", "prompt": "Return the sum of a and b.", "kind": "function",
                                 "entry_point": "add"}) + "\n")
    out = tmp_path / "codes.jsonl"
    rc = main(["solve", "--model", str(run / "checkpoints"), "--tasks", str(tasks), "--out", str(out),
               "--n-codes", "1", "--n-tests", "1", "--max-new-tokens", "4", "--consensus-inputs", "0", "-q"])
    assert rc == 0, capsys.readouterr().err
    assert json.loads(out.read_text().splitlines()[0])["task_id"] == "add"


# ------------------------------------------------------------------ what is not a whole model


def test_a_peft_adapter_directory_says_to_merge_it(tmp_path):
    d = tmp_path / "lora"
    d.mkdir()
    (d / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "base_model_name_or_path": "x"}))
    with pytest.raises(InputError) as err:
        load_model(d, device="cpu")
    msg = str(err.value)
    assert "adapter" in msg and "merge_and_unload" in msg and "\n" not in msg


@pytest.mark.parametrize("template", ["{% for m in messages %}{{ m['content'] }", "{{ raise_exception('nope') }}"],
                         ids=["syntax-error", "always-raises"])
def test_a_chat_template_that_renders_nothing_is_one_line_naming_it(base, tmp_path, template):
    """A template with a syntax error, or one raising for every prompt, ended `coevo solve` with a
    63-line Jinja traceback at the first prompt."""
    d = tmp_path / "m"
    shutil.copytree(base, d)
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["chat_template"] = template
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError) as err:
        load_model(d, device="cpu")
    msg = str(err.value)
    assert msg.startswith(f"{d / 'tokenizer_config.json'}: field 'chat_template': ") and "\n" not in msg
    assert "--prompt plain" in msg
    # the plain format does not need the template
    load_model(d, device="cpu", prompt="plain")


def test_a_template_refusing_only_the_system_message_still_loads(base, tmp_path):
    """(Gemma's): the roles fold the system message into the first user turn."""
    d = tmp_path / "m"
    shutil.copytree(base, d)
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["chat_template"] = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role "
                            "not supported') }}{% endif %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}")
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    _, tok = load_model(d, device="cpu")
    assert tok.chat_template


# ------------------------------------------------------------------ a hub name, a file


def _hub_cache(root: Path, base: Path, repo: str) -> Path:
    """The layout `huggingface-cli download REPO` leaves in the hub cache (refs/main -> a snapshot)."""
    d = root / f"models--{repo.replace('/', '--')}"
    snap = d / "snapshots" / ("0" * 40)
    shutil.copytree(base, snap)
    (d / "refs").mkdir()
    (d / "refs" / "main").write_text("0" * 40)
    return snap


def test_a_hub_name_already_in_the_local_hub_cache_loads_from_there(base, tmp_path, monkeypatch):
    """`--model Qwen/Qwen2.5-Coder-1.5B-Instruct` after `huggingface-cli download` of it was 'no such
    model directory'; nothing is downloaded, the cached snapshot is used."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.chdir(tmp_path)
    snap = _hub_cache(tmp_path / "hub", base, "someorg/tiny-coder")
    assert resolve_model_dir("someorg/tiny-coder") == (snap, snap)
    model, tok = load_model("someorg/tiny-coder", device="cpu")
    assert tok.eos_token == "<|endoftext|>"
    with pytest.raises(InputError) as err:  # not in the cache: one line saying how to get it
        load_model("someorg/other-model", device="cpu")
    msg = str(err.value)
    assert "no such model directory" in msg and "nothing is downloaded" in msg and "\n" not in msg


def test_a_file_inside_a_model_directory_or_a_gguf_file(base, tmp_path):
    assert resolve_model_dir(base / "config.json") == (base, base)
    assert resolve_model_dir(base / "model.safetensors") == (base, base)
    gguf = tmp_path / "qwen2.5-coder-7b-q4_k_m.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(InputError) as err:
        load_model(gguf, device="cpu")
    msg = str(err.value)
    assert "GGUF" in msg and "--api-base" in msg and "\n" not in msg


def test_a_sentencepiece_tokenizer_without_its_packages_says_which_to_install(base, tmp_path, monkeypatch):
    """tokenizer.model alone (a Llama-2/Mistral/CodeLlama export without tokenizer.json): it said
    '`tiktoken` is required to read a `tiktoken` file', which it is not."""
    import roles.model_io as mio

    d = tmp_path / "spm"
    shutil.copytree(base, d)
    (d / "tokenizer.json").unlink()
    (d / "tokenizer.model").write_bytes(b"\n\x0e\n\x05<unk>\x15\x00\x00\x00\x00\x18\x02")
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["tokenizer_class"] = "LlamaTokenizer"
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    monkeypatch.setattr(mio, "_missing_packages", lambda *names: list(names))
    with pytest.raises(InputError) as err:
        load_model(d, device="cpu")
    msg = str(err.value)
    assert "pip install sentencepiece protobuf" in msg and "tokenizer.model" in msg and "\n" not in msg


def test_an_unknown_dtype_is_named_as_the_field_it_is(base):
    """It came wrapped as 'DIR: cannot load the model (InputError: field 'dtype': ...)'."""
    with pytest.raises(InputError) as err:
        load_model(base, device="cpu", dtype="int8")
    assert str(err.value).startswith("field 'dtype': unknown dtype 'int8'"), str(err.value)
