"""Which codes fields are chat answers (coevo/commands/codes_input.py), pinned on inputs that
exercise every branch of the cheap checks (issue 23: the checks skip lines and texts that cannot
match, so these answers must stay exactly what the full scans give)."""

from __future__ import annotations

import re

import pytest

from coevo.commands import codes_input as ci

Q3 = '"' * 3
S3 = "'" * 3

CHAT = [
    "Here is the code:\n```python\ndef f(x):\n    return x\n```\n",
    "def f(x):\n    return x\n  ~~~\n",
    "[PYTHON]\ndef f(x):\n    return x\n[/PYTHON]\n",
    "def f(x):\n    return x\n[PYTHON]  \n",
    "<THINK>hmm</THINK>\ndef f(x):\n    return x\n",
    "def f(x):\n    return x\n<|begin_of_thought|>\n",
    "\u25c1think\u25b7 x\ndef f(x):\n    return x\n",
    "def f(x):\n    return x\n</Reasoning>\n",
    "def f(x):\n    return x\n\nThis function returns its argument.\n",
    f"def f(x):\n    {Q3}doc{Q3}\n    return x\nThis function returns x.\n",
    f"def f(x):\n    {S3}doc\nstill doc{S3}\n    return x\nThat is all there is to it.\n",
    "def f(x):\n    return x\n**Note:** it returns x\n",
    "def f(x):\n    return x\n- it returns x\n",
    "def f(x):\n    return x\n1. it returns x\n",
    "Answer:\ndef f(x):\n    return x\n",
    "This is how you do it\ndef f(x):\n    return x\n",
    "def f(x):\n    return x\rThis function returns its argument.\n",
    "def f(x):\n    return x\x0bThis function returns its argument.\n",
    "def f(x):\n    return x\u2028This function returns its argument.\n",
]

NOT_CHAT = [
    "def f(x):\n    return x\n",
    "",
    "\n\n   \n",
    f"def f(x):\n    {Q3}\nThis function returns x.\nIt is a docstring.\n    {Q3}\n    return x\n",
    f"def f(x):\n    {S3}\nThis is prose {Q3} inside\nmore prose here\n    {S3}\n    return x\n",
    f"X = {Q3}a{Q3} + {Q3}\nWords at column zero here.\n{Q3}\n",
    "def f(x):\n    return x\nprint(f(1), f(2))\n",
    "x = 1\nif x:\n    y = 2\nelse:\n    y = 3\n",
    "def f(x):\n    return x\nnot (x\n",
    "s = '```'\n",
    "s = 'a < b'\n",
    "def f(x):\n  return x\n",
    "import math\nfrom os import path\nassert f(1) == 1\n",
]


def _slow_outside_strings(lines, start=0):
    open_quote = ""
    for i, ln in enumerate(lines):
        if not open_quote and i >= start:
            yield i, ln
        for m in re.finditer(r'"""|\'\'\'', ln):
            if not open_quote:
                open_quote = m.group()
            elif m.group() == open_quote:
                open_quote = ""


@pytest.mark.parametrize("text", CHAT)
def test_chat_answers_are_chat_answers(text):
    assert ci._chat_answer(text) is True


@pytest.mark.parametrize("text", NOT_CHAT)
def test_plain_code_is_not_a_chat_answer(text):
    assert ci._chat_answer(text) is False


@pytest.mark.parametrize("text", CHAT + NOT_CHAT + [
    f"a\n{Q3}\nb\n{Q3}{S3}\nc\n{S3}\nd\n", f"{S3}{Q3}{S3}\nx\n", f"{Q3} {S3} {Q3}\ny\n{S3}\nz\n",
    f'{Q3}""{Q3}\nw\n', f"{Q3}{Q3}{Q3}\nv\n{Q3}\nu\n"])
def test_lines_outside_strings_are_those_of_the_full_scan(text):
    lines = text.splitlines()
    for start in (0, 1):
        assert list(ci._outside_strings(lines, start)) == list(_slow_outside_strings(lines, start))
