"""What a served model is sent: the tiny world's plain-format chat template renders exactly the plain
prompt (token for token) for every role, survives save/load for serving, and is dropped again by
roles.model_io.load_model (the roles keep building plain prompts in process); role_request carries
the same prompt text as build_prompt plus the chat messages; the in-process engine is a
token-level Generator."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from tinymodel import ADD_TASK, build_tokenizer, tiny_model_path  # noqa: E402

from coevo.tinyworld.tokenizer import PLAIN_CHAT_TEMPLATE, add_plain_chat_template  # noqa: E402
from matrix.tasks import Task, Test  # noqa: E402
from roles.generation import Generator  # noqa: E402
from roles.model_io import is_plain_chat_template, load_model  # noqa: E402
from roles.prompts import build_prompt  # noqa: E402
from roles.requests import chat_messages, role_request  # noqa: E402

ADD = Task.from_json(ADD_TASK)
STDIO = Task("echo", "Print the input line twice.", "stdio", None)

PROMPTS = [
    ("coder", ADD, {}),
    ("coder", ADD, {"tests": [Test.assertion("assert add(1, 1) == 2")]}),
    ("tester", ADD, {"n_tests": 3}),
    ("tester", STDIO, {}),
    ("fixer", ADD, {"code": "def add(a, b):\n    return a - b", "feedback": "failed: assert add(1, 2) == 3",
                    "history": [("def add(a, b):\n    pass", "returned None")]}),
    ("proposer", ADD, {}),
    ("proposer", None, {"kind": "stdio"}),
]


@pytest.fixture(scope="module")
def plain_tok():
    tok = build_tokenizer()
    tok.chat_template = PLAIN_CHAT_TEMPLATE
    return tok


@pytest.mark.parametrize("role, task, kw", PROMPTS)
def test_plain_chat_template_renders_exactly_the_plain_prompt(plain_tok, role, task, kw):
    plain = build_prompt(role, task, None, **kw)
    assert plain.startswith(f"<|role|>{role}\n")
    for messages in ([{"role": "user", "content": plain}],
                     [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": plain}],
                     [{"role": "user", "content": [{"type": "text", "text": plain[:7]},
                                                   {"type": "text", "text": plain[7:]}]}]):
        text = plain_tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        assert text == plain
        ids = plain_tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
        assert list(ids) == plain_tok(plain, add_special_tokens=False)["input_ids"]


def test_assistant_turns_end_with_eos_as_in_training(plain_tok):
    plain = build_prompt("coder", ADD, None)
    text = plain_tok.apply_chat_template([{"role": "user", "content": plain},
                                          {"role": "assistant", "content": "```python\nx\n```"}],
                                         tokenize=False)
    assert text == plain + "```python\nx\n```" + plain_tok.eos_token


def test_saved_for_serving_and_dropped_again_in_process(tmp_path):
    import shutil

    from transformers import AutoTokenizer

    model = tmp_path / "m"
    shutil.copytree(tiny_model_path(), model)
    add_plain_chat_template(model)
    assert not list(model.glob(".tok-*"))  # the temporary directory is gone
    served = AutoTokenizer.from_pretrained(model)  # what a server loads
    assert is_plain_chat_template(served.chat_template)
    plain = build_prompt("tester", ADD, None, n_tests=2)
    assert served.apply_chat_template([{"role": "user", "content": plain}], tokenize=False,
                                      add_generation_prompt=True) == plain
    _, tok = load_model(model, device="cpu")  # what coevo loads in process
    assert tok.chat_template is None
    assert build_prompt("coder", ADD, tok) == build_prompt("coder", ADD, None)
    assert not is_plain_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    assert not is_plain_chat_template(None)


@pytest.mark.parametrize("role, task, kw", PROMPTS)
def test_role_request_carries_the_prompt_and_the_chat_messages(role, task, kw):
    req = role_request(role, task, 3, meta={"k": 1}, **kw)
    assert req.prompt == build_prompt(role, task, None, **kw)
    assert req.messages == chat_messages(role, task, **kw)
    assert req.messages[0]["role"] == "system" and req.messages[-1]["role"] == "user"
    assert req.n == 3 and req.meta == {"k": 1} and req.role == role
    assert req.task_id == (task.task_id if task is not None else "*")


def test_chat_messages_are_what_build_prompt_hands_a_chat_template():
    from tinymodel import CHAT_TEMPLATE

    chat_tok = build_tokenizer(CHAT_TEMPLATE)
    for role, task, kw in PROMPTS:
        rendered = chat_tok.apply_chat_template(chat_messages(role, task, **kw), tokenize=False,
                                                add_generation_prompt=True)
        assert rendered == build_prompt(role, task, chat_tok, **kw)


def test_in_process_engine_is_a_token_level_generator():
    from roles.generation import GenerationEngine

    model, tok = load_model(tiny_model_path(), device="cpu")
    engine = GenerationEngine(model, tok)
    assert isinstance(engine, Generator) and engine.token_level is True
