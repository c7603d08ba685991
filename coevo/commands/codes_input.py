"""Reading a codes file for `coevo matrix`, `coevo select` and `coevo eval --codes`.

A ``code`` field that is valid Python runs as written, and so does one that is plain code that
does not compile (a program cut off mid-line is a ``syntax_error``, as in any harness). A field
that is a chat model's answer (a fenced ```python block, or code after a line of prose) is read
the way coevo reads the answers its own models give (:func:`roles.parsing.parse_code` with the
task's entry point: blocks joined where the one defining it uses the others' helpers, the last
definition preferred; without fences, the text from the first code-looking line, less the trailing
prose), so that `coevo eval --codes` and `coevo eval --api-base` score the same answers alike.
``--raw-code`` turns this off: every field runs as written (a markdown answer is then a
``syntax_error``).
"""

from __future__ import annotations

import re

RAW_CODE_HELP = ("run every codes row's \"code\" as written (default: a field that is not valid Python "
                 "but a chat answer, with its code in a ```python block or between lines of prose, "
                 "runs that code, as for `coevo eval --api-base`)")


def add_raw_code_argument(parser) -> None:
    parser.add_argument("--raw-code", action="store_true", help=RAW_CODE_HELP)


def _compiles(code: str) -> bool:
    try:
        compile(code, "<solution>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


_CODE_WORDS = re.compile(r"(?:def|class|import|from|if|elif|else|for|while|try|except|finally|with|return|"
                         r"async|await|lambda|print|assert|raise|global|nonlocal|del|pass|yield)\b")


def _chat_answer(code: str) -> bool:
    """Markdown (a line opening a ``` fence) or a first line of prose: not a program that merely
    fails to compile. Cheap: most fields are plain code and are never compiled here."""
    if re.search(r"^[ \t]*```", code, re.M):
        return True
    first = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    if not first or first[0] in "\"'#@([{" or _CODE_WORDS.match(first) or "=" in first.split(" ", 2)[1:2]:
        return False
    try:
        compile(first, "<line>", "exec", dont_inherit=True)
        return False  # a line of code
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return " " in first  # words


def extracted_code(code: str, entry_point: str | None) -> str | None:
    """The code to run in place of the field ``code``, or None to run the field as written
    (it compiles, or no code is found in it)."""
    if not _chat_answer(code) or _compiles(code):
        return None
    from roles.parsing import parse_code

    got = parse_code(code, entry_point)
    if not got.ok or not got.code or got.code == code:
        return None
    return got.code


def load_candidate_codes(path, tasks, raw: bool = False) -> tuple[dict[str, list[str]], int]:
    """``(task_id -> [code, ...], how many fields were read as chat answers)`` of the codes file
    at ``path`` (:func:`matrix.tasks.load_codes`: rows keep their order and index)."""
    from matrix.tasks import load_codes

    codes = load_codes(path, [t.task_id for t in tasks])
    if raw:
        return codes, 0
    entry = {t.task_id: t.entry_point for t in tasks}
    n = 0
    for tid, rows in codes.items():
        for i, code in enumerate(rows):
            got = extracted_code(code, entry.get(tid))
            if got is not None:
                rows[i] = got
                n += 1
    return codes, n


def extracted_note(n: int) -> str:
    """The summary line's words for ``n`` fields read as chat answers ("" for none)."""
    if not n:
        return ""
    return (f"; {n} code{'s' if n != 1 else ''} extracted from chat answers (markdown or prose; "
            f"--raw-code runs them as written)")
