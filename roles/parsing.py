"""Parsing the roles' completions (formats documented in :mod:`roles.prompts`).

Model output is untrusted and often malformed: missing or unclosed fences (truncation), prose
around the code, several blocks, garbage. Every parser here returns a value whose ``ok`` says
whether something usable was found and whose ``error`` says why not; none of them raises on any
input text. A parse failure earns the role's minimum reward upstream.

Choices, in brief:

* code: among python-ish fenced blocks (``python``, ``py``, ``python3`` or no language), pick the
  one that defines the entry point, then one that parses, then the longest; an unclosed final
  fence (truncated output) still counts. Without fences, the text from the first code-looking line
  is used if (a prefix of) it parses as Python.
* tests (function tasks): top-level ``assert`` statements, plus call-style lines
  (``f(1) == 2``, ``f(1) -> 2``) turned into asserts; with an entry point, tests that never mention
  it are dropped; duplicates dropped. Tests (stdio tasks): JSON objects with ``input`` and
  ``output``, one per line or in a list.
* tasks (proposer): the ``### Task / ### Function / ### Solution / ### Inputs`` sections; only
  the solution and the inputs are required (the program format): the description may be left to
  the loop to derive, and a solution that is just one top-level function makes a function task.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field

from matrix.tasks import Task, Test

MAX_CHARS = 40_000  # longer completions are cut before parsing (bounds the parser's work)
PY_LANGS = {"", "python", "py", "python3", "py3"}
JSON_LANGS = {"", "json", "jsonl", "jsonlines"}


@dataclass
class Block:
    lang: str
    body: str
    closed: bool


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

_OPEN = re.compile(r"```[ \t]*([^\n`]*)\n")


def fenced_blocks(text: str) -> list[Block]:
    """All fenced blocks in order; a final fence with no closing fence is ``closed=False``."""
    blocks = []
    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if not m:
            break
        start = m.end()
        end = text.find("```", start)
        if end < 0:
            blocks.append(Block(_lang(m.group(1)), text[start:].rstrip(), False))
            break
        blocks.append(Block(_lang(m.group(1)), text[start:end].rstrip(), True))
        pos = end + 3
    return blocks


def _lang(s: str) -> str:
    s = s.strip().lower()
    return s.split()[0] if s else ""


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
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _CODE_START.match(ln)), None)
    if start is None:
        return None
    body = lines[start:]
    # drop trailing prose: the longest prefix that parses (at most 40 tries)
    for end in range(len(body), max(0, len(body) - 40), -1):
        src = "\n".join(body[:end]).rstrip()
        if src and _parses(src):
            return src
    return None


def parse_code(text: str, entry_point: str | None = None) -> ParsedCode:
    """The code of a Coder/Fixer completion (see the module doc for the choice among blocks)."""
    try:
        return _parse_code(text, entry_point)
    except Exception as exc:  # never raise on model output
        return ParsedCode(None, False, f"parser error: {type(exc).__name__}")


def _parse_code(text: str, entry_point: str | None) -> ParsedCode:
    if not isinstance(text, str) or not text.strip():
        return ParsedCode(None, False, "empty output")
    text = text[:MAX_CHARS]
    blocks = fenced_blocks(text)
    if blocks:
        cands = [b for b in blocks if b.lang in PY_LANGS and b.body.strip()]
        if not cands:
            return ParsedCode(None, False, "no python code block")

        def key(b: Block):
            return (bool(entry_point) and _defines(b.body, entry_point), _parses(b.body),
                    len(b.body))
        best = max(cands, key=key)
        return ParsedCode(best.body.strip("\n"), True, "" if best.closed else "unclosed code block")
    code = _unfenced_code(text)
    if code is None:
        return ParsedCode(None, False, "no code found")
    return ParsedCode(code, True, "no code fence")


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------

_ARROW = re.compile(r"^(.+\))\s*(?:->|=>)\s*(.+)$")


def _mentions(node: ast.AST, name: str | None) -> bool:
    if not name:
        return True
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _assert_from_stmt(stmt: ast.stmt, src: str) -> str | None:
    if isinstance(stmt, ast.Assert):
        return ast.get_source_segment(src, stmt) or ast.unparse(stmt)
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Compare)
            and isinstance(stmt.value.left, ast.Call) and len(stmt.value.ops) == 1
            and isinstance(stmt.value.ops[0], ast.Eq)):
        return "assert " + (ast.get_source_segment(src, stmt.value) or ast.unparse(stmt.value))
    return None


_ASSERT_LINE = re.compile(r"^\s*assert\b", re.M)


def _asserts_in(chunk: str) -> list[str]:
    """Assert statements (and call-style comparisons) in ``chunk``, in order."""
    try:
        mod = ast.parse(chunk)
    except Exception:
        mod = None
    out: list[str] = []
    if mod is not None:
        for stmt in mod.body:
            a = _assert_from_stmt(stmt, chunk)
            if a is not None:
                out.append(a)
        return out
    for line in chunk.split("\n"):  # unparseable (e.g. truncated): line by line
        line = line.strip()
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


def _norm(src: str) -> str:
    try:
        return ast.dump(ast.parse(src))
    except Exception:
        return " ".join(src.split())


def _function_tests(text: str, entry: str | None) -> tuple[list[str], int]:
    blocks = [b for b in fenced_blocks(text) if b.lang in PY_LANGS]
    chunks = [b.body for b in blocks] if blocks else [text]
    found: list[str] = []
    for ch in chunks:
        found += _asserts_in(ch)
    kept, seen, dropped = [], set(), 0
    if blocks:  # asserts written outside the code blocks are never run: they count as rejected
        inside = sum(len(_ASSERT_LINE.findall(b.body)) for b in blocks)
        dropped += max(0, len(_ASSERT_LINE.findall(text)) - inside)
    for a in found:
        try:
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


def _stdio_tests(text: str) -> tuple[list[tuple[str, str]], int]:
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
        text = text[:MAX_CHARS]
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
_HEAD = re.compile(r"^\s*#{1,6}\s*\**\s*(task|description|function|entry[ _]point|solution|code|"
                   r"test inputs|inputs?)\s*\**\s*:?\s*(.*)$", re.I)
_HEAD_COLON = re.compile(r"^\s*\**\s*(task|description|function|entry[ _]point|solution|"
                         r"test inputs|inputs?)\s*\**\s*:\s*\**\s*(.*)$", re.I)
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


def _section_lines(body: str) -> list[str]:
    blocks = fenced_blocks(body)
    src = blocks[0].body if blocks else body
    return [ln.strip() for ln in src.split("\n") if ln.strip()]


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
    for line in _section_lines(secs["inputs"]):
        v = _call_input(line, entry) if task_kind == "function" else _stdin_input(line)
        if v is not None and v not in inputs:
            inputs.append(v)
    if not inputs:
        return ParsedTask(None, [], False, "no valid inputs")
    digest = hashlib.sha1(f"{desc}\n{entry}\n{code}".encode()).hexdigest()[:12]
    task = Task(task_id=f"proposed-{digest}", prompt=desc, kind=task_kind, entry_point=entry,
                solutions=[code], meta={"inputs": list(inputs), "origin": "proposer"})
    return ParsedTask(task, inputs, True, "")
