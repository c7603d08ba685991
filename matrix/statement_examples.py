"""Worked examples in a task's statement, as tests.

A statement that shows ``f(x)`` and its value is a specification, not a guess: of all the tests a
selection sees, these are the ones the task's author wrote. :func:`prompt_examples` reads them in
their common forms:

* doctest: ``>>> f(2, [1, 3])`` followed by the expected value on the next line(s) (the expression
  may wrap the call, e.g. ``>>> round(f(x), 2)``);
* inline: ``f(2, [1, 3]) == 5``, with ``==>``, ``=>``, ``->``, ``➞``, ``→``, ``returns``,
  ``should return`` or ``should be`` between the call and the value (not a bare ``=``: statements
  use it to define things, ``tri(1) = 3``); ``true`` / ``false`` / ``null`` read as Python's;
* ``Input: <arguments>`` followed by ``Output: <value>`` (``name = value`` arguments in order).

Only calls of the task's entry point whose arguments and value are Python literals count; anything
else (prose around a call, a bare ``f(abc)``, values that are not literals, arithmetic after the
value) is skipped rather than guessed. Each example becomes an assert test; a float value compares
within ``1e-6`` (relative). For stdin/stdout statements the sample blocks count (``Input`` /
``Output`` headers after an ``Example(s)`` heading, or ``Sample Input 1`` style headers).

Statements can be wrong too (HumanEval/47's docstring gives ``median([-10, 4, 6, 1000, 10, 20])``
as 15.0): selection trusts examples more than generated tests, not blindly.
"""

from __future__ import annotations

import ast
import re

import numpy as np

from matrix.tasks import Test

__all__ = ["prompt_examples", "split_examples", "task_examples"]

_SEPARATOR = re.compile(r"\s*(==>|=>|->|➞|→|==|should\s+return|should\s+be|returns)\s*")
_MAX_EXPR = 600
_MAX_LINE = 4096  # characters of a doctest line read for an example
_MAX_TRIES = 32  # trailing comments tried off a doctest line (a '#' may sit inside a string)
_MAX_PROMPT = 1 << 16  # characters of a statement read for examples (a hostile prompt costs no more)
_WORDS = {"true": "True", "false": "False", "null": "None", "none": "None"}
_INPUT = re.compile(r"^\s*(?:Input|input)\s*:\s*(.+?)\s*$")
_OUTPUT = re.compile(r"^\s*(?:Output|output)\s*:\s*(.+?)\s*$")


def task_examples(task) -> list[Test]:
    """The worked examples of a :class:`matrix.tasks.Task`'s statement (:func:`prompt_examples`)."""
    return prompt_examples(getattr(task, "prompt", None), getattr(task, "entry_point", None),
                           kind=getattr(task, "kind", "function"))


def split_examples(passed, n_codes: int, n_tests: int) -> tuple[np.ndarray, np.ndarray]:
    """A matrix run over ``tests + examples`` (the engine's ``passed``, flat or nested), split into
    ``(codes x tests, codes x examples)``."""
    full = np.asarray(passed, dtype=bool).reshape(n_codes, -1)
    return full[:, :n_tests], full[:, n_tests:]


def prompt_examples(prompt: str | None, entry_point: str | None, limit: int = 16,
                    kind: str = "function") -> list[Test]:
    """The examples in ``prompt``, in order, no repeats, at most ``limit``: for a function task,
    calls of ``entry_point`` as assert tests; for a stdio task (``kind="stdio"``), sample
    input / output blocks as stdio tests."""
    if kind == "stdio":
        return _stdio_examples(prompt or "", limit)
    if not prompt or not entry_point or not entry_point.isidentifier():
        return []
    found: dict[str | None, Test] = {}  # keyed by Test.test (always set on these assert tests)
    lines = prompt[:_MAX_PROMPT].splitlines()
    doctest_lines = set()
    for i, line in enumerate(lines):  # doctest form
        stripped = line.strip()
        if not stripped.startswith(">>>"):
            continue
        doctest_lines.add(i)
        expr = _expression(stripped[3:], entry_point)
        if expr is None:
            continue
        want = []
        for nxt in lines[i + 1:]:
            s = nxt.strip()
            if not s or s.startswith(">>>") or s.startswith('"""') or s.startswith("'''"):
                break
            want.append(s)
        test = _test(expr, " ".join(want))
        if test is not None:
            found.setdefault(test.test, test)
    for i, line in enumerate(lines):  # inline form
        if i in doctest_lines or len(line) > _MAX_LINE:
            continue
        for n, m in enumerate(re.finditer(rf"(?<![\w.]){re.escape(entry_point)}\s*\(", line)):
            if n >= _MAX_TRIES:
                break
            if line[:m.start()].rstrip().endswith("def"):
                continue
            call = _call_at(line, m.start(), entry_point)
            if call is None:
                continue
            sep = _SEPARATOR.match(line, m.start() + len(call))
            if sep is None:
                continue
            test = _test(call, _literal_prefix(line[sep.end():]))
            if test is not None:
                found.setdefault(test.test, test)
    for i, line in enumerate(lines):  # "Input: ..." then "Output: ..." (arguments in order)
        inp = _INPUT.match(line)
        outs = [o for o in map(_OUTPUT.match, lines[i + 1:i + 3]) if o is not None]
        if inp is None or not outs:
            continue
        out = outs[0]
        call = _positional_call(entry_point, inp.group(1))
        if call is not None:
            test = _test(call, _literal_prefix(out.group(1)))
            if test is not None:
                found.setdefault(test.test, test)
    return list(found.values())[:limit]


def _positional_call(entry: str, args: str) -> str | None:
    """``entry(args)`` with literal arguments, ``name = value`` pairs turned positional in order."""
    try:
        node = ast.parse(f"{entry}({args.rstrip(' ,;.')})", mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or not _literal_args(node):
        return None
    parts = [*node.args, *(k.value for k in node.keywords)]
    return f"{entry}({', '.join(ast.unparse(a) for a in parts)})"


def _expression(text: str, entry: str) -> str | None:
    """The doctest line's expression (a trailing comment dropped) if it calls ``entry`` with
    literal arguments."""
    text = text.strip()
    if len(text) > _MAX_LINE:  # no worked example is that long; each try parses the line again
        return None
    ends = [len(text)] + [i for i in range(len(text) - 1, 0, -1) if text[i] == "#"][:_MAX_TRIES]
    for end in ends:
        src = text[:end].strip()
        try:
            tree = ast.parse(src, mode="eval")
        except (SyntaxError, ValueError):
            continue
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == entry]
        ok = calls and all(_literal_args(c) for c in calls)
        return ast.unparse(tree.body) if ok else None  # unparsed: a trailing comment dropped
    return None


def _call_at(line: str, start: int, entry: str) -> str | None:
    """The shortest ``entry(...)`` call starting at ``start`` that parses, with literal arguments."""
    for end in range(start + len(entry) + 1, min(len(line), start + _MAX_EXPR) + 1):
        if line[end - 1] != ")":
            continue
        src = line[start:end]
        try:
            node = ast.parse(src, mode="eval").body
        except (SyntaxError, ValueError):
            continue
        if isinstance(node, ast.Call) and _literal_args(node):
            return src
        return None
    return None


def _literal_args(call: ast.Call) -> bool:
    try:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            ast.literal_eval(arg)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return all(k.arg is not None for k in call.keywords) and not any(
        isinstance(a, ast.Starred) for a in call.args)


def _literal_prefix(text: str) -> str:
    """The longest prefix of ``text`` that is a Python literal and ends the statement (what follows
    is nothing, punctuation or prose: ``19 - 5 - 6 = 8`` is arithmetic, not the value 19), or
    ``""``."""
    text = text.strip()[:_MAX_EXPR]
    word = re.match(r"(true|false|null|none)\b", text)
    if word and _ends(text[word.end():]):
        return word.group(1)
    for end in range(len(text), 0, -1):
        if text[end - 1] in " \t.,;:" or not _ends(text[end:]):
            continue
        try:
            ast.literal_eval(text[:end])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        return text[:end]
    return ""


def _ends(rest: str) -> bool:
    """Whether ``rest`` (what follows a value) leaves the value whole."""
    if not rest:
        return True
    if rest[0] not in " \t.,;:#":
        return False
    rest = rest.lstrip(" \t.,;:")
    return not rest or rest[0].isalpha() or rest[0] in "#("


def _test(expr: str, value_src: str) -> Test | None:
    value_src = _WORDS.get(value_src.strip(), value_src)
    if not value_src:
        return None
    try:
        value = ast.literal_eval(value_src)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None  # 1e999 reads as inf, which no assert can spell
        return Test.assertion(f"assert abs(({expr}) - ({value!r})) <= 1e-6 * max(1.0, abs({value!r}))")
    return Test.assertion(f"assert {expr} == {value!r}")


_EXAMPLE_HEAD = re.compile(r"^\s*(?:examples?|samples?)\b[^a-z]*$", re.I)
_SAMPLE_IN = re.compile(r"^\s*(?:(sample|example)\s+)?input\s*#?\s*\d*\s*:?\s*$", re.I)
_SAMPLE_OUT = re.compile(r"^\s*(?:(sample|example)\s+)?output\s*#?\s*\d*\s*:?\s*$", re.I)
_SECTION = re.compile(r"^\s*(?:notes?|explanation|examples?|samples?|constraints|input|output)\b.*$", re.I)


def _stdio_examples(text: str, limit: int) -> list[Test]:
    """Sample blocks of a stdin/stdout statement: an ``Input`` header line (``Sample Input 1``,
    ``Example input:``...; a bare ``Input`` only after an ``Example(s)`` / ``Sample(s)`` heading,
    since it also heads the input-format section), its lines up to an ``Output`` header, then the
    output's lines up to a blank line or the next header."""
    lines = text.splitlines()
    found: dict[tuple[str | None, str | None], Test] = {}  # keyed by (input, output), set on stdio tests
    in_examples = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _EXAMPLE_HEAD.match(line):
            in_examples = True
        head = _SAMPLE_IN.match(line)
        if head is None or not (in_examples or head.group(1)):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and j - i <= 200 and not _SAMPLE_OUT.match(lines[j]):
            j += 1
        if j >= len(lines) or not _SAMPLE_OUT.match(lines[j]):
            break
        given = _trim(lines[i + 1:j])
        k = j + 1
        while k < len(lines) and not lines[k].strip():
            k += 1  # blank lines between the header and the output
        out = []
        while k < len(lines) and lines[k].strip() and not _SECTION.match(lines[k]):
            out.append(lines[k])
            k += 1
        if given and out:
            test = Test.stdio("\n".join(given) + "\n", "\n".join(x.rstrip() for x in out) + "\n")
            found.setdefault((test.input, test.output), test)
        i = k
    return list(found.values())[:limit]


def _trim(block: list[str]) -> list[str]:
    """Leading and trailing blank lines dropped, line ends stripped."""
    block = [x.rstrip() for x in block]
    while block and not block[0]:
        block.pop(0)
    while block and not block[-1]:
        block.pop()
    return block
