"""Generation requests for the roles: the prompt text and the same prompt as chat messages.

:func:`role_request` renders a role's prompt (:func:`roles.prompts.build_prompt`) for any
:class:`roles.generation.Generator`: ``prompt`` is the text an in-process model sees (its
tokenizer's chat template when it has one, else the plain format; the plain format when
``tokenizer`` is None, as for a served model), and ``messages`` holds the chat messages that
``build_prompt`` would hand to a chat template, so that a server can apply the served model's own
template to them (:mod:`roles.api_client`, ``--api-prompt chat``).
"""

from __future__ import annotations

import copy
from typing import Any

from matrix.tasks import Task
from roles.generation import GenRequest
from roles.prompts import build_prompt


class _MessageRecorder:
    """Stands in for a tokenizer with a chat template: records the messages it is asked to
    render, so the chat messages come from ``build_prompt`` itself and cannot drift from it."""

    chat_template = "recorder"

    def __init__(self):
        self.messages: list[dict[str, str]] | None = None

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True, **_):
        self.messages = copy.deepcopy(list(messages))
        return ""


def chat_messages(role: str, task: Task | None, **prompt_kw: Any) -> list[dict[str, str]]:
    """The chat messages (system, user, ...) of ``role``'s prompt on ``task``; the keywords are
    :func:`roles.prompts.build_prompt`'s (``code``, ``feedback``, ``history``, ``n_tests``,
    ``tests``, ``kind``)."""
    rec = _MessageRecorder()
    build_prompt(role, task, rec, template="chat", **prompt_kw)
    assert rec.messages is not None
    return rec.messages


def role_request(role: str, task: Task | None, n: int, *, tokenizer=None, task_id: str | None = None,
                 meta: dict | None = None, **prompt_kw: Any) -> GenRequest:
    """A :class:`GenRequest` for ``n`` samples of ``role`` on ``task`` (``task_id`` defaults to
    the task's, ``"*"`` without one), carrying both the prompt text (rendered with ``tokenizer``;
    plain format when it is None) and the chat messages."""
    tid = task_id if task_id is not None else (task.task_id if task is not None else "*")
    return GenRequest(role, tid, build_prompt(role, task, tokenizer, **prompt_kw), n=n,
                      meta=dict(meta or {}), messages=chat_messages(role, task, **prompt_kw))
