"""Role prompts for the one shared model, and the target completions used for SFT.

Every role's *completion* format is the same whatever the prompt template; one parser
(:mod:`roles.parsing`) reads them all, and the ``render_*_completion`` functions below write them,
so supervised data and parsing cannot drift apart.

Prompt templates
================

``build_prompt`` uses the tokenizer's chat template when it has one (``tokenizer.chat_template``),
else the short *plain* template below (``template="plain"``/``"chat"`` forces one). Plain prompts
are a few ``<|marker|>`` lines; each marker starts a line, content follows on the next lines and
every prompt ends with ``<|answer|>`` and a newline::

    coder / tester                       fixer (RLEF-style, one <|code|>/<|feedback|> pair per turn)
    ---------------------------------    ---------------------------------------------------------
    <|role|>coder                        <|role|>fixer
    <|task|>                             <|task|>
    Return the sum of a and b.           Return the sum of a and b.
    <|entry|>add                         <|entry|>add
    <|answer|>                           <|code|>
                                         ```python
                                         def add(a, b):
                                             return a - b
                                         ```
                                         <|feedback|>
                                         failed: assert add(1, 2) == 3
                                         <|answer|>

    proposer
    ---------------------------------
    <|role|>proposer
    <|kind|>function
    <|example|>                          (optional, repeated: reference tasks, in the proposer's format)
    ### Solution
    ...
    <|answer|>

* ``<|entry|>NAME`` names the function of a ``function`` task; a ``stdio`` task has the line
  ``<|entry|>(stdin)`` instead (the program reads stdin and writes stdout).
* optional lines, present only when asked for: ``<|tests|>`` (example tests shown to the coder,
  one per line), ``<|count|>N`` (tester: how many tests to write).

Completion formats (all roles, all templates); the completion ends with the EOS token
========================================================================================

* **Coder** and **Fixer**: exactly one fenced code block::

      ```python
      def add(a, b):
          return a + b
      ```

* **Tester**, function task: one fenced block of ``assert`` lines, each calling the entry point::

      ```python
      assert add(1, 2) == 3
      assert add(-1, 1) == 0
      ```

  **Tester**, stdio task: one fenced ``json`` block with one ``{"input", "output"}`` object per
  line (strings; newlines escaped by JSON)::

      ```json
      {"input": "1 2\\n", "output": "3\\n"}
      ```

* **Proposer**: a new task. The *program* format (``describe=False``, the tiny world's: Absolute
  Zero's program + inputs) is only the ``### Solution`` and ``### Inputs`` sections; the loop
  derives the description (the tiny world reads the composition off the code; elsewhere the task
  shows some of its input/output pairs). The *task* format (``describe=True``) adds ``### Task``
  (a description) and ``### Function`` (function tasks only) in front. Inputs are one call
  expression per line (function tasks) or one JSON string per line (stdio tasks)::

      ### Task
      Return the product of a and b.
      ### Function
      mul
      ### Solution
      ```python
      def mul(a, b):
          return a * b
      ```
      ### Inputs
      ```
      mul(2, 3)
      mul(0, 5)
      ```

Tokenisation: prompts and completions are encoded separately (:func:`encode_prompt`,
:func:`encode_example`) and the EOS id appended to the completion; the generation engine encodes
prompts with the same :func:`encode_prompt`, so a model trained on ``encode_example`` sees at
sampling time exactly the token ids it was trained on. A chat-template prompt is encoded as the
template rendered it (``add_special_tokens=False``: the template writes the BOS it wants, as TRL,
vLLM's chat endpoint and ``apply_chat_template(tokenize=True)`` take it); a plain prompt gets the
special tokens the tokenizer puts in front of every text by default (the BOS of a Llama, Mistral
or Gemma tokenizer, which their base models were trained with and a server's ``/v1/completions``
adds too), never twice and never at the end. The tiny world's tokenizer adds none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from matrix.tasks import Task, Test

ROLES = ("coder", "tester", "fixer", "proposer")
TEMPLATES = ("plain", "chat")

STDIO_ENTRY = "(stdin)"
ANSWER = "<|answer|>"

SYSTEM_PROMPT = ("You are an expert Python programmer. Follow the requested output format "
                 "exactly and write nothing else.")


# --------------------------------------------------------------------------------------------
# completions (SFT targets; parsed back by roles.parsing)
# --------------------------------------------------------------------------------------------

def _fence(body: str, lang: str = "python") -> str:
    body = body.strip("\n")
    return f"```{lang}\n{body}\n```"


def render_code_completion(code: str) -> str:
    """Coder / Fixer target: one fenced python block (no EOS; see :func:`encode_example`)."""
    return _fence(code.rstrip())


def test_as_assert(test: Test) -> str:
    """An ``assert``-style line for an assert or call test."""
    if test.kind == "assert":
        return (test.test or "").strip()
    if test.kind == "call":
        return f"assert {test.call} == {test.expected}"
    raise ValueError("a stdio test has no assert form")


def render_tests_completion(tests: Sequence[Test]) -> str:
    """Tester target. Assert/call tests -> a python block of assert lines; stdio tests -> a json
    block of ``{"input", "output"}`` lines. A mixture is rendered as two blocks (not expected)."""
    asserts = [test_as_assert(t) for t in tests if t.kind != "stdio"]
    pairs = [json.dumps({"input": t.input, "output": t.output}, ensure_ascii=False)
             for t in tests if t.kind == "stdio"]
    blocks = []
    if asserts:
        blocks.append(_fence("\n".join(asserts)))
    if pairs:
        blocks.append(_fence("\n".join(pairs), "json"))
    if not blocks:
        blocks.append(_fence("", "python"))
    return "\n".join(blocks)


def render_task_completion(task: Task, inputs: Sequence[str] | None = None, *, describe: bool = True) -> str:
    """Proposer target: [the task's description and entry point,] first reference solution and inputs.

    ``inputs`` defaults to ``task.meta["inputs"]``; for a function task they are call expressions,
    for a stdio task stdin strings (rendered one JSON string per line). ``describe=False`` writes
    the program format (solution and inputs only).
    """
    if inputs is None:
        inputs = list(task.meta.get("inputs", []) or [])
    parts = []
    if describe:
        parts += ["### Task", task.prompt.strip()]
        if task.kind == "function" and task.entry_point:
            parts += ["### Function", task.entry_point]
    parts += ["### Solution", _fence(task.solutions[0].rstrip() if task.solutions else "")]
    if task.kind == "stdio":
        lines = [json.dumps(s, ensure_ascii=False) for s in inputs]
    else:
        lines = [s.strip() for s in inputs]
    parts += ["### Inputs", _fence("\n".join(lines), "")]
    return "\n".join(parts)


def text_prefix_ids(tokenizer) -> list[int]:
    """The special token ids ``tokenizer`` puts in front of a text by default (``[bos]`` for a
    Llama, Mistral or Gemma tokenizer; ``[]`` for most others, the tiny world's included)."""
    try:
        plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
        full = list(tokenizer("a")["input_ids"])
        special = {int(i) for i in (getattr(tokenizer, "all_special_ids", None) or [])}
    except Exception:  # noqa: BLE001 - a stand-in tokenizer that cannot do this adds nothing
        return []
    if not plain:
        return []
    for k in range(len(full) - len(plain) + 1):
        if full[k:k + len(plain)] == plain:
            prefix = [int(i) for i in full[:k]]
            return prefix if all(i in special for i in prefix) else []
    return []


def encode_prompt(tokenizer, prompt: str, prefix: Sequence[int] | None = None) -> list[int]:
    """Token ids of a rendered prompt (see the module doc, "Tokenisation"): a chat template's text
    as it is; a plain prompt with the tokenizer's own leading special tokens (``prefix``:
    :func:`text_prefix_ids`, computed here when ``None``), not doubled."""
    ids = [int(i) for i in tokenizer(prompt, add_special_tokens=False)["input_ids"]]
    if has_chat_template(tokenizer):
        return ids
    pre = list(text_prefix_ids(tokenizer) if prefix is None else prefix)
    if pre and ids[:len(pre)] != pre:
        ids = pre + ids
    return ids


def prompt_ids(tokenizer, prompt: str, prefix: Sequence[int], max_tokens: int | None) -> list[int]:
    """What a sampler feeds the model for ``prompt`` (both engines, in-process and vLLM):
    :func:`encode_prompt`, and a prompt past ``max_tokens`` cut from the left, keeping the
    tokenizer's leading special tokens (``prefix``, :func:`text_prefix_ids`)."""
    ids = encode_prompt(tokenizer, prompt, prefix)
    if max_tokens is not None and len(ids) > max_tokens:
        pre = list(prefix)
        keep = pre if ids[:len(pre)] == pre and len(pre) < max_tokens else []
        ids = keep + ids[len(ids) - (max_tokens - len(keep)):]
    return ids


def encode_example(tokenizer, prompt: str, completion: str) -> tuple[list[int], list[int]]:
    """Token ids of one SFT example: ``(prompt_ids, completion_ids + [eos])``.

    The prompt is encoded by :func:`encode_prompt`, exactly as the generation engine encodes it, and
    the completion apart from it without special tokens, so training and sampling agree on the
    prompt/completion boundary.
    """
    p = encode_prompt(tokenizer, prompt)
    c = tokenizer(completion, add_special_tokens=False)["input_ids"]
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError("the tokenizer has no eos token")
    return list(p), list(c) + [int(eos)]


# --------------------------------------------------------------------------------------------
# prompts
# --------------------------------------------------------------------------------------------

def has_chat_template(tokenizer) -> bool:
    return bool(tokenizer is not None and getattr(tokenizer, "chat_template", None))


def _entry_line(task: Task) -> str:
    if task.kind == "function" and task.entry_point:
        return task.entry_point
    return STDIO_ENTRY


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")


def _turns(code, feedback, history) -> list[tuple[str, str]]:
    """The fixer's attempts, oldest first: ``history`` pairs then the current (code, feedback)."""
    turns = [(str(c), str(f)) for c, f in (history or [])]
    if code is not None:
        turns.append((code, feedback or ""))
    return turns


def _plain(role: str, task: Task | None, *, turns, n_tests, tests, kind, references, describe) -> str:
    out = [f"<|role|>{role}"]
    if role == "proposer":
        out.append(f"<|kind|>{kind}")
        for ref in references:
            out += ["<|example|>", render_task_completion(ref, describe=describe)]
    else:
        assert task is not None
        out += ["<|task|>", task.prompt.strip(), f"<|entry|>{_entry_line(task)}"]
        if tests:
            out += ["<|tests|>"] + [t.display().strip() for t in tests]
        if role == "tester" and n_tests:
            out.append(f"<|count|>{int(n_tests)}")
        if role == "fixer":
            for c, f in turns:
                out += ["<|code|>", render_code_completion(c), "<|feedback|>", f.strip()]
    out.append(ANSWER)
    return "\n".join(out) + "\n"


_CODE_FORMAT = "Answer with exactly one ```python code block and nothing else."


def _task_text(task: Task) -> str:
    text = task.prompt.strip()
    if task.kind == "function" and task.entry_point:
        text += f"\n\nWrite the Python function `{task.entry_point}`."
    else:
        text += "\n\nWrite a complete Python program that reads standard input and writes " \
                "standard output."
    return text


def _tests_text(tests: Sequence[Test]) -> str:
    return "Examples:\n" + "\n".join(t.display().strip() for t in tests)


def _chat_messages(role: str, task: Task | None, *, turns, n_tests, tests, kind, references,
                   describe) -> list[dict]:
    msgs = [{"role": "system", "content": SYSTEM_PROMPT}]
    if role == "proposer":
        head = ("### Task\n<description>\n" + ("### Function\n<function name>\n" if kind == "function" else "")
                if describe else "")
        text = (f"Invent a new, self-contained {kind} programming task"
                + (" (a Python function)" if kind == "function" else
                   " (a program reading stdin and writing stdout)")
                + ", with a correct reference solution and a few test inputs. Answer in exactly "
                "this format:\n" + head
                + "### Solution\n```python\n<code>\n```\n### Inputs\n```\n"
                + ("<one call expression per line, e.g. f(1, 2)>" if kind == "function" else
                   "<one JSON string per line: the stdin of one run>")
                + "\n```")
        if references:
            text += ("\n\nExamples of the format (write a task different from all of them):\n\n"
                     + "\n\n".join(render_task_completion(r, describe=describe) for r in references))
        msgs.append({"role": "user", "content": text})
        return msgs
    assert task is not None
    text = _task_text(task)
    if tests:
        text += "\n\n" + _tests_text(tests)
    if role == "tester":
        n = f"{int(n_tests)} " if n_tests else ""
        if task.kind == "function" and task.entry_point:
            text += (f"\n\nDo not solve the task. Write {n}unit tests for `{task.entry_point}`: "
                     "one ```python code block holding only `assert` lines, one test per line, "
                     f"each calling `{task.entry_point}` and comparing with the expected value.")
        else:
            text += (f"\n\nDo not solve the task. Write {n}test cases: one ```json code block "
                     'with one object {"input": <stdin>, "output": <expected stdout>} per line.')
        msgs.append({"role": "user", "content": text})
        return msgs
    msgs.append({"role": "user", "content": text + "\n\n" + _CODE_FORMAT})
    if role == "fixer":
        for i, (c, f) in enumerate(turns):
            msgs.append({"role": "assistant", "content": render_code_completion(c)})
            last = i == len(turns) - 1
            msgs.append({"role": "user", "content": f"Your code is wrong.\n{f.strip()}\n\n"
                         + ("Fix the code. " + _CODE_FORMAT if last else "Try again.")})
    return msgs


def build_prompt(role: str, task: Task | None, tokenizer=None, *, code: str | None = None,
                 feedback: str | None = None, history: Sequence[tuple[str, str]] | None = None,
                 n_tests: int | None = None, tests: Sequence[Test] | None = None,
                 kind: str | None = None, template: str | None = None,
                 references: Sequence[Task] | None = None, describe: bool = True) -> str:
    """The prompt text for ``role`` on ``task``.

    * coder: ``task``; optional ``tests`` shown as examples.
    * tester: ``task``; optional ``n_tests`` (how many to write) and example ``tests``.
    * fixer: ``task``, the latest ``code`` and its ``feedback`` (see
      :func:`roles.feedback.format_feedback`); ``history`` holds earlier ``(code, feedback)``
      turns, oldest first (multi-turn repair).
    * proposer: ``task`` is an optional reference example (may be ``None``), ``references`` more
      of them (Absolute Zero shows several; ``task`` comes first); ``kind`` is the kind of task
      to invent (default: the first reference's kind, else ``"function"``); ``describe`` picks
      the task format (description included) or the program format (see the module doc).

    ``template``: ``"chat"`` (tokenizer's chat template), ``"plain"``, or ``None`` = chat when the
    tokenizer has a chat template, else plain.
    """
    _check_role(role)
    if role != "proposer" and task is None:
        raise ValueError(f"role {role!r} needs a task")
    if role == "fixer" and code is None and not history:
        raise ValueError("the fixer needs the code to repair")
    refs = ([task] if task is not None else []) + list(references or []) if role == "proposer" else []
    kind = kind or (refs[0].kind if refs else task.kind if task is not None else "function")
    if template is None:
        template = "chat" if has_chat_template(tokenizer) else "plain"
    if template not in TEMPLATES:
        raise ValueError(f"unknown template {template!r}; expected one of {TEMPLATES}")
    turns = _turns(code, feedback, history)
    ctx: dict[str, Any] = dict(turns=turns, n_tests=n_tests, tests=tests, kind=kind, references=refs,
                               describe=describe)
    if template == "plain":
        return _plain(role, task, **ctx)
    if not has_chat_template(tokenizer):
        raise ValueError("template='chat' needs a tokenizer with a chat template")
    msgs = _chat_messages(role, task, **ctx)
    try:
        text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    except Exception:  # some templates reject a system message: fold it into the first user turn
        msgs = [{"role": "user", "content": msgs[0]["content"] + "\n\n" + msgs[1]["content"]}] \
            + msgs[2:]
        text = tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    return str(text)
