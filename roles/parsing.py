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
  counts. Without fences, the text from the first code-looking line that starts parseable code
  is used if (a prefix of) it parses as Python. See :func:`parse_code`.
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
import hashlib
import itertools
import json
import re
import sys
import textwrap
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

_OPEN = re.compile(r"(`{3,})[ \t]*([^\n`]*)\n")
_CLOSE = re.compile(r"^[ \t]*(`{3,})", re.M)  # a closing fence starts a line (indent allowed)
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
        ticks, lang = len(m.group(1)), _lang(m.group(2))
        lead = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        indent = len(lead) if _LIST_LEAD.match(lead) else 0  # fence text after prose: no indent
        start = m.end()
        closes = (c for c in _CLOSE.finditer(text, start) if len(c.group(1)) >= ticks)
        first = next(closes, None)
        if first is None:
            blocks.append(Block(lang, _outdent(text[start:], indent).rstrip(), False))
            break
        close = first
        if lang in PY_LANGS and _open_string(_outdent(text[start:first.start()], indent)):
            for _, later in zip(range(_MAX_FENCE_TRIES), closes):
                if _parses(_outdent(text[start:later.start()], indent)):
                    close = later
                    break
        blocks.append(Block(lang, _outdent(text[start:close.start()], indent).rstrip(), True))
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
    """The code of an answer without fences: from the first code-looking line whose rest (less any
    trailing prose) parses; a prose line that only looks like code (``n = len(xs) is the size``)
    is passed over for the next one."""
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _CODE_START.match(ln)][:10]
    for start in starts:
        body = lines[start:]
        # drop trailing prose: the longest prefix that parses (at most 40 tries)
        for end in range(len(body), max(0, len(body) - 40), -1):
            src = "\n".join(body[:end]).rstrip()
            if src and _parses(src):
                return src
    return None


def parse_code(text: str, entry_point: str | None = None) -> ParsedCode:
    """The code of a Coder/Fixer completion.

    Among the python-ish fenced blocks (bodies dedented, see :func:`fenced_blocks`):

    * with an entry point, the block that defines it (``def``/``class``/assignment at top level;
      a block that only imports it, such as a test block's ``from solution import f``, comes
      after), preferring one that parses, and among those the **last** one. Chat models that
      write several definitions of the function revise themselves ("a naive version ... a better
      version", "wait, that fails for [] -- fixed:", a reasoning model's final answer after its
      drafts, a closing "complete code" block): the last word is the answer. A later definition
      that does not parse (output cut off) loses to an earlier whole one.
    * without one (or when no block defines it): one that parses, then the longest.

    Chat answers also split one program across blocks ("we need ``import math``:", "first a
    helper:", then the function). The chosen block is completed with the top-level imports,
    functions, classes and constants of the other blocks that it uses (transitively) and does not
    define itself -- only those statements, never a block's usage or test code -- placed before it
    (imports first). Without fences, the code runs from the first code-looking line that starts
    parseable code.
    """
    try:
        return _parse_code(text, entry_point)
    except Exception as exc:  # never raise on model output
        return ParsedCode(None, False, f"parser error: {type(exc).__name__}")


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


def _parse_code(text: str, entry_point: str | None) -> ParsedCode:
    if not isinstance(text, str) or not text.strip():
        return ParsedCode(None, False, "empty output")
    text = text[:MAX_CHARS]
    blocks = fenced_blocks(text)
    if blocks:
        cands = [b for b in blocks if b.lang in PY_LANGS and b.body.strip()]
        if not cands:
            return ParsedCode(None, False, "no python code block")
        bodies = []
        for b in cands:  # a body indented as a whole (no list fence to say so) is dedented too
            body = b.body.strip("\n")
            if not _parses(body) and _parses(textwrap.dedent(body)):
                body = textwrap.dedent(body)
            bodies.append(body)
        parses = [_parses(src) for src in bodies]
        levels = [_def_level(src, entry_point) if entry_point else 0 for src in bodies]

        def key(i: int):
            return (levels[i], parses[i], i if levels[i] else len(bodies[i]))
        best = max(range(len(cands)), key=key)
        code = _join_blocks(best, bodies) if entry_point and levels[best] else bodies[best]
        return ParsedCode(code, True, "" if cands[best].closed else "unclosed code block")
    found = _unfenced_code(text)
    if found is None:
        return ParsedCode(None, False, "no code found")
    return ParsedCode(found, True, "no code fence")


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


def _line_asserts(chunk: str) -> list[str]:
    """Assert lines of text that does not parse (truncated, or prose around), one line at a time."""
    out: list[str] = []
    for line in chunk.split("\n"):
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


# What a Tester writes around its asserts: pytest functions and unittest classes -------------------

_TESTING_MODULES = {"pytest", "unittest", "hypothesis", "mock", "nose", "doctest"}
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"math", "collections", "itertools"}
MAX_PARAM_SETS = 100
MAX_CANDIDATES = 1000  # candidate tests read from one answer at most (bounds the parser's work)

_CMP = {"assertEqual": ast.Eq, "assertEquals": ast.Eq, "assertNotEqual": ast.NotEq,
        "assertNotEquals": ast.NotEq, "assertIs": ast.Is, "assertIsNot": ast.IsNot, "assertIn": ast.In,
        "assertNotIn": ast.NotIn, "assertGreater": ast.Gt, "assertGreaterEqual": ast.GtE,
        "assertLess": ast.Lt, "assertLessEqual": ast.LtE}
_CMP_ARGS = {"assertIn": ("member", "container"), "assertNotIn": ("member", "container"),
             "assertIs": ("expr1", "expr2"), "assertIsNot": ("expr1", "expr2"),
             "assertGreater": ("a", "b"), "assertGreaterEqual": ("a", "b"), "assertLess": ("a", "b"),
             "assertLessEqual": ("a", "b")}
# the typed equalities: (helper, argument names, what the helper is given after the two values)
_TYPED = {"assertListEqual": ("_coevo_sequence_equal", ("list1", "list2"), "list"),
          "assertTupleEqual": ("_coevo_sequence_equal", ("tuple1", "tuple2"), "tuple"),
          "assertSequenceEqual": ("_coevo_sequence_equal", ("seq1", "seq2"), None),
          "assertSetEqual": ("_coevo_set_equal", ("set1", "set2"), None),
          "assertDictEqual": ("_coevo_typed_equal", ("d1", "d2"), "dict"),
          "assertMultiLineEqual": ("_coevo_typed_equal", ("first", "second"), "str")}


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _attr_name(node: ast.AST) -> str:
    """``a.b.c`` -> ``"a.b.c"`` (``""`` for anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


# What pytest and unittest decide, as plain functions a converted test carries along (each imports
# what it needs itself): a converted test checks exactly what the text asked, never less.
_HELPER_SRC = {
    "_coevo_approx": '''
def _coevo_approx(actual, expected, rel=None, abs_=None, nan_ok=False):
    """actual == pytest.approx(expected, rel, abs_, nan_ok), a number expected (pytest's ApproxScalar)."""
    import math
    from decimal import Decimal
    from numbers import Complex

    def isnan(v):
        return v.is_nan() if isinstance(v, Decimal) else math.isnan(v)
    for tol in (rel, abs_):
        if tol is not None and not isinstance(tol, (int, float, Decimal)):
            raise TypeError(f"a tolerance must be an int, float or Decimal, got {type(tol).__name__}")
    if actual == expected:
        return True
    if not (isinstance(expected, (Complex, Decimal)) and isinstance(actual, (Complex, Decimal))):
        return False
    if isnan(abs(expected)):
        return bool(nan_ok) and isnan(abs(actual))
    if math.isinf(abs(expected)):
        return False
    diff = abs(expected - actual)
    tolerance = abs_ if abs_ is not None else 1e-12
    if isnan(tolerance) or tolerance < 0:
        raise ValueError(f"absolute tolerance can't be {tolerance}")
    if rel is None and abs_ is not None:
        return diff <= tolerance
    relative = (rel if rel is not None else 1e-6) * abs(expected)
    if isnan(relative) or relative < 0:
        raise ValueError(f"relative tolerance can't be {relative}")
    return diff <= max(relative, tolerance)''',
    "_coevo_almost_equal": '''
def _coevo_almost_equal(first, second, places=None, delta=None):
    """self.assertAlmostEqual(first, second, places, delta=delta), as unittest decides it."""
    if first == second:
        return True
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return diff <= delta
    return round(diff, 7 if places is None else places) == 0''',
    "_coevo_not_almost_equal": '''
def _coevo_not_almost_equal(first, second, places=None, delta=None):
    """self.assertNotAlmostEqual(first, second, places, delta=delta), as unittest decides it."""
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return not (first == second) and diff > delta
    return not (first == second) and round(diff, 7 if places is None else places) != 0''',
    "_coevo_count_equal": '''
def _coevo_count_equal(first, second):
    """self.assertCountEqual(first, second), as unittest decides it (unhashable items counted by ==)."""
    import collections
    s, t = list(first), list(second)
    try:
        a, b = collections.Counter(s), collections.Counter(t)
    except TypeError:
        pass
    else:
        return a == b
    gone = object()
    for i, elem in enumerate(s):
        if elem is gone:
            continue
        cnt_s = cnt_t = 0
        for j in range(i, len(s)):
            if s[j] == elem:
                cnt_s += 1
                s[j] = gone
        for j, other in enumerate(t):
            if other == elem:
                cnt_t += 1
                t[j] = gone
        if cnt_s != cnt_t:
            return False
    return all(elem is gone for elem in t)''',
    "_coevo_sequence_equal": '''
def _coevo_sequence_equal(seq1, seq2, seq_type=None):
    """self.assertSequenceEqual(seq1, seq2, seq_type=seq_type) (assertListEqual: list,
    assertTupleEqual: tuple), as unittest decides it."""
    if seq_type is not None and not (isinstance(seq1, seq_type) and isinstance(seq2, seq_type)):
        return False
    try:
        len1, len2 = len(seq1), len(seq2)
    except (TypeError, NotImplementedError):
        return False
    if seq1 == seq2:
        return True
    for i in range(min(len1, len2)):
        try:
            item1, item2 = seq1[i], seq2[i]
        except (TypeError, IndexError, NotImplementedError):
            return False
        if item1 != item2:
            return False
    return len1 == len2 and seq_type is None and type(seq1) != type(seq2)''',
    "_coevo_set_equal": '''
def _coevo_set_equal(set1, set2):
    """self.assertSetEqual(set1, set2), as unittest decides it."""
    try:
        difference1 = set1.difference(set2)
        difference2 = set2.difference(set1)
    except (TypeError, AttributeError):
        return False
    return not (difference1 or difference2)''',
    "_coevo_typed_equal": '''
def _coevo_typed_equal(first, second, kind):
    """self.assertDictEqual (kind dict) / assertMultiLineEqual (kind str), as unittest decides it."""
    return isinstance(first, kind) and isinstance(second, kind) and not first != second''',
}


def _own_builtins(src: str) -> str:
    """``src`` (one function) with the builtins it uses imported first: a test's free names are
    the program's where it defines them (a program with its own ``abs`` must not answer inside
    coevo's helpers, as it would not inside pytest's)."""
    import builtins

    fn = ast.parse(src.strip()).body[0]
    names = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and hasattr(builtins, n.id)})
    if not names:
        return src
    head, _, rest = src.strip().partition("\n")
    body_indent = " " * 4
    first = rest.lstrip("\n")
    if first.lstrip().startswith(('"""', "'''")):  # after the docstring
        quote = first.lstrip()[:3]
        end = first.index(quote, first.index(quote) + 3) + 3
        doc, rest = first[:end], first[end:]
        return f"{head}\n{doc}\n{body_indent}from builtins import {', '.join(names)}{rest}"
    return f"{head}\n{body_indent}from builtins import {', '.join(names)}\n{rest}"


_HELPER_SRC = {name: _own_builtins(src) for name, src in _HELPER_SRC.items()}
_HELPERS = {name: ast.parse(src.strip()).body[0] for name, src in _HELPER_SRC.items()}
_RAISED = "_raised"  # the name a converted raises-with-a-pattern test binds the exception to


def _helper_call(name: str, args: list[ast.expr], kws: dict[str, ast.expr] | None = None) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), args, [ast.keyword(k, v) for k, v in (kws or {}).items()])


def _raises_try(body: list[ast.stmt], exc: ast.expr, pattern: ast.expr | None = None) -> ast.Try:
    """``try: body / except exc: pass / else: raise AssertionError(...)``; with a ``pattern``
    (``pytest.raises(match=)``, ``assertRaisesRegex``) the handler checks the message as they do:
    ``except exc as _raised: assert re.search(pattern, str(_raised))``."""
    msg = ast.Constant(f"did not raise {ast.unparse(exc)}")
    fail = ast.Raise(exc=ast.Call(ast.Name("AssertionError", ast.Load()), [msg], []), cause=None)
    handler = ast.ExceptHandler(type=exc, name=None, body=[ast.Pass()])
    if pattern is not None:
        text = ast.Call(ast.Name("str", ast.Load()), [ast.Name(_RAISED, ast.Load())], [])
        search = ast.Call(ast.Attribute(ast.Name("re", ast.Load()), "search", ast.Load()), [pattern, text], [])
        handler = ast.ExceptHandler(type=exc, name=_RAISED, body=[ast.Assert(test=search, msg=None)])
    return ast.Try(body=body, handlers=[handler], orelse=[fail], finalbody=[])


def _unittest_assert(meth: str, args: list[ast.expr], kws: list[ast.keyword]) -> ast.stmt | None:
    """The plain statement for ``self.<meth>(*args, **kws)``, or None (not a known assert method)."""
    kw = {k.arg: k.value for k in kws if k.arg}

    def arg(i: int, *names: str) -> ast.expr | None:
        if len(args) > i:
            return args[i]
        return next((kw[n] for n in names if n in kw), None)

    def claim(test: ast.expr, nargs: int) -> ast.Assert:
        return ast.Assert(test=test, msg=arg(nargs, "msg"))
    if meth in _CMP:
        names = _CMP_ARGS.get(meth, ("first", "second"))
        a, b = arg(0, names[0]), arg(1, names[1])
        if a is None or b is None:
            return None
        return claim(ast.Compare(left=a, ops=[_CMP[meth]()], comparators=[b]), 2)
    if meth in ("assertTrue", "assert_", "assertFalse"):
        x = arg(0, "expr")
        if x is None:
            return None
        return claim(x if meth != "assertFalse" else ast.UnaryOp(ast.Not(), x), 1)
    if meth in ("assertIsNone", "assertIsNotNone"):
        x = arg(0, "obj", "expr")
        if x is None:
            return None
        op = ast.Is() if meth == "assertIsNone" else ast.IsNot()
        return claim(ast.Compare(left=x, ops=[op], comparators=[ast.Constant(None)]), 1)
    if meth in ("assertIsInstance", "assertNotIsInstance"):
        x, t = arg(0, "obj"), arg(1, "cls")
        if x is None or t is None:
            return None
        test: ast.expr = ast.Call(ast.Name("isinstance", ast.Load()), [x, t], [])
        return claim(test if meth == "assertIsInstance" else ast.UnaryOp(ast.Not(), test), 2)
    if meth in _TYPED:
        helper, names, kind = _TYPED[meth]
        a, b = arg(0, names[0]), arg(1, names[1])
        if a is None or b is None:
            return None
        extra: list[ast.expr] = [ast.Name(kind, ast.Load())] if kind else []
        if meth == "assertSequenceEqual":
            seq_type = arg(3, "seq_type")
            extra = [seq_type] if seq_type is not None else []
        return claim(_helper_call(helper, [a, b, *extra]), 2)
    if meth in ("assertAlmostEqual", "assertNotAlmostEqual", "assertAlmostEquals", "assertNotAlmostEquals"):
        a, b = arg(0, "first"), arg(1, "second")
        if a is None or b is None:
            return None
        opts = {k: v for k, v in (("places", arg(2, "places")), ("delta", arg(4, "delta"))) if v is not None}
        helper = "_coevo_not_almost_equal" if "Not" in meth else "_coevo_almost_equal"
        return claim(_helper_call(helper, [a, b], opts), 3)
    if meth == "assertCountEqual":  # the same items, as many times each, in any order
        a, b = arg(0, "first"), arg(1, "second")
        if a is None or b is None:
            return None
        return claim(_helper_call("_coevo_count_equal", [a, b]), 2)
    if meth == "fail":
        return ast.Raise(exc=ast.Call(ast.Name("AssertionError", ast.Load()), list(args[:1]), []), cause=None)
    if meth == "assertRaises" and len(args) >= 2:  # assertRaises(E, f, *args, **kwargs)
        call = ast.Call(args[1], list(args[2:]), list(kws))
        return _raises_try([ast.Expr(call)], args[0])
    if meth == "assertRaisesRegex" and len(args) >= 3:  # assertRaisesRegex(E, regex, f, *args, **kwargs)
        call = ast.Call(args[2], list(args[3:]), list(kws))
        return _raises_try([ast.Expr(call)], args[0], args[1])
    return None


class _Rewrite(ast.NodeTransformer):
    """A test function's statements as plain statements: ``self.assertX(...)`` as ``assert``,
    ``with pytest.raises(E)`` / ``with self.assertRaises(E)`` as ``try``/``except``/``else``,
    ``with self.subTest(...)`` as its body, ``x == pytest.approx(v)`` (a number) as
    ``_coevo_approx(x, v)`` (pytest's rule), ``solution.f`` as ``f``, ``self.x`` (set by ``setUp``) as ``x``, and the
    parameters in ``subst`` replaced by their values."""

    def __init__(self, ctx: _TestCtx, subst: dict[str, ast.expr] | None = None,
                 self_attrs: frozenset[str] = frozenset()):
        self.ctx, self.subst, self.self_attrs = ctx, subst or {}, self_attrs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.subst:
            return copy.deepcopy(self.subst[node.id])
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name):
            if node.value.id in self.ctx.solution_mods:
                return ast.copy_location(ast.Name(node.attr, node.ctx), node)
            if node.value.id == "self" and node.attr in self.self_attrs:
                return ast.copy_location(ast.Name(node.attr, node.ctx), node)
        return self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and _is_name(call.func.value, "self"):
            new = _unittest_assert(call.func.attr, call.args, call.keywords)
            if new is not None:
                return self.visit(ast.copy_location(new, node))
        return self.generic_visit(node)

    def visit_With(self, node: ast.With) -> ast.AST | list[ast.stmt]:
        if len(node.items) == 1 and isinstance(node.items[0].context_expr, ast.Call):
            call = node.items[0].context_expr
            what = _attr_name(call.func)
            if what in ("self.subTest",):
                return [self.visit(st) for st in node.body]
            if what.endswith("pytest.raises") or (what == "raises" and "raises" in self.ctx.testing_names):
                names, allowed = ("expected_exception", "match"), {"expected_exception", "match"}
            elif what == "self.assertRaises":
                names, allowed = ("expected_exception",), {"expected_exception", "msg"}
            elif what == "self.assertRaisesRegex":
                names = ("expected_exception", "expected_regex")
                allowed = {"expected_exception", "expected_regex", "msg"}
            else:
                return self.generic_visit(node)
            kw = {k.arg: k.value for k in call.keywords}
            if what.endswith("raises"):  # pytest.raises(E, *, match=None): E alone by position
                got = {**dict(zip(names[:1], call.args)), **kw} if len(call.args) <= 1 else None
            else:
                got = {**dict(zip(names, call.args)), **kw} if len(call.args) <= len(names) else None
            # anything else (``as cm`` then checks on cm.exception, check=, a callable) is left
            # as it is: the test still needs pytest/self, and is dropped
            if got is None or set(got) - allowed or None in got or "expected_exception" not in got \
                    or len(got) < len(call.args) + len(kw) or node.items[0].optional_vars is not None:
                return self.generic_visit(node)
            pattern = got.get("match", got.get("expected_regex"))
            if what == "self.assertRaisesRegex" and pattern is None:
                return self.generic_visit(node)
            if isinstance(pattern, ast.Constant) and pattern.value is None:
                pattern = None  # match=None: any message
            body = [self.visit(st) for st in node.body]
            exc = self.visit(got["expected_exception"])
            return ast.copy_location(_raises_try(body, exc, self.visit(pattern) if pattern else None), node)
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)  # rewrites the children in place
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            sides = [node.left, node.comparators[0]]
            for i, side in enumerate(sides):
                what = _attr_name(side.func) if isinstance(side, ast.Call) else ""
                if not (what == "pytest.approx" or (what == "approx" and what in self.ctx.testing_names)):
                    continue
                assert isinstance(side, ast.Call)
                # approx(expected, rel=None, abs=None, nan_ok=False) of a plain number; of a list,
                # a dict... (or with other arguments) it is left as it is, and the test is dropped
                names = ("expected", "rel", "abs", "nan_ok")
                got = {**dict(zip(names, side.args)), **{k.arg: k.value for k in side.keywords}}
                if len(side.args) > len(names) or set(got) - set(names) or \
                        len(got) < len(side.args) + len(side.keywords) or "expected" not in got \
                        or not _is_number(got["expected"]):
                    break
                opts = {("abs_" if k == "abs" else k): v for k, v in got.items() if k != "expected"}
                close = _helper_call("_coevo_approx", [sides[1 - i], got["expected"]], opts)
                return close if isinstance(node.ops[0], ast.Eq) else ast.UnaryOp(ast.Not(), close)
        return node


def _is_number(node: ast.expr) -> bool:
    """A number written with constants and arithmetic only (``0.3``, ``-1/3``, ``2 ** 0.5``)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant):
            if not isinstance(n.value, (int, float)) or isinstance(n.value, bool):
                return False
        elif not isinstance(n, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)):
            return False
    return True


def _is_immutable(node: ast.expr) -> bool:
    try:
        v = ast.literal_eval(node)
    except Exception:
        return False

    def imm(x) -> bool:
        if isinstance(x, (tuple, frozenset)):
            return all(imm(y) for y in x)
        return x is None or isinstance(x, (bool, int, float, complex, str, bytes))
    return imm(v)


def _is_test_func(node: ast.stmt, entry: str | None, method: bool = False) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name == entry:
        return False
    if method:
        return node.name.startswith("test")
    return node.name.startswith("test") or node.name.endswith(("_test", "_tests"))


def _is_test_class(node: ast.stmt) -> bool:
    if not isinstance(node, ast.ClassDef):
        return False
    bases = {_attr_name(b).split(".")[-1] for b in node.bases}
    return "TestCase" in bases or node.name.startswith("Test") or node.name.endswith(("Test", "Tests"))


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    names = [node.test.left, *node.test.comparators]
    return any(_is_name(n, "__name__") for n in names)


@dataclass
class _Def:
    pos: tuple[int, int]  # (chunk, statement): where the answer binds the names
    src: str
    is_import: bool
    node: ast.stmt | None = None


class _TestCtx:
    """What the answer's python blocks bind at top level, for the tests to take along: imports
    (the solution's own left out: the code under test is in scope already), helper functions,
    constants. ``pytest``/``unittest`` names are never taken along: a test that still needs them
    after the rewriting is dropped."""

    def __init__(self, entry: str | None, mods: list[tuple[ast.Module, str]]):
        self.entry = entry
        self.defs: dict[str, list[_Def]] = {}
        self.solution_mods: set[str] = set()
        self.solution_names: set[str] = set()
        self.testing_names: set[str] = set()
        self.made = 0  # tests made so far (see MAX_CANDIDATES)
        plain_imports: dict[str, str] = {}  # non-stdlib `import m` binding -> module
        for ci, (mod, src) in enumerate(mods):
            lines = src.split("\n")
            for si, st in enumerate(mod.body):
                pos = (ci, si)
                if isinstance(st, ast.ImportFrom):
                    self._import_from(st, pos)
                elif isinstance(st, ast.Import):
                    for al in st.names:
                        root, bound = al.name.split(".")[0], (al.asname or al.name).split(".")[0]
                        if root in _TESTING_MODULES:
                            self.testing_names.add(bound)
                            continue
                        if root not in _STDLIB:
                            plain_imports[bound] = root
                        text = f"import {al.name}" + (f" as {al.asname}" if al.asname else "")
                        self.defs.setdefault(bound, []).append(_Def(pos, text, True))
                elif _is_test_func(st, entry) or _is_test_class(st) or _is_main_guard(st):
                    continue
                else:
                    for name in _top_binds(st, imports=False):
                        if name != entry:
                            self.defs.setdefault(name, []).append(_Def(pos, _stmt_src(lines, st), False, st))
        if entry:  # `import solution` ... `solution.f(...)`: that module is the code under test
            for mod, _ in mods:
                for n in ast.walk(mod):
                    if isinstance(n, ast.Attribute) and n.attr == entry and isinstance(n.value, ast.Name) \
                            and n.value.id in plain_imports:
                        self.solution_mods.add(n.value.id)
            for name in self.solution_mods:
                self.defs.pop(name, None)
        if "math" not in self.defs:
            self.defs["math"] = [_Def((-1, -1), "import math", True)]
        # for the message check of pytest.raises(match=) / assertRaisesRegex (where the answer
        # imports re later, or never)
        self.defs.setdefault("re", []).insert(0, _Def((-1, -1), "import re", True))

    def _import_from(self, st: ast.ImportFrom, pos: tuple[int, int]) -> None:
        mod = st.module or ""
        root = mod.split(".")[0]
        names = [al.name for al in st.names]
        bound = [al.asname or al.name for al in st.names if al.name != "*"]
        if root in _TESTING_MODULES:
            self.testing_names.update(bound)
        elif st.level or (root not in _STDLIB and (self.entry in names or "*" in names)):
            self.solution_names.update(bound)
        elif "*" not in names:
            for al in st.names:
                text = f"from {mod} import {al.name}" + (f" as {al.asname}" if al.asname else "")
                self.defs.setdefault(al.asname or al.name, []).append(_Def(pos, text, True))

    def prelude(self, names: set[str], pos: tuple[int, int] | None) -> tuple[list[str], bool]:
        """The imports and definitions (imports first, each in the answer's order) that bind
        ``names`` -- as the module stands at ``pos`` (None: its end, where test functions run) --
        and whether every name is one a test may keep (an unknown name is left to the program)."""
        need: dict[tuple[int, int], _Def] = {}
        todo, seen, ok = sorted(names), set(), True
        while todo:
            name = todo.pop()
            if name in seen or name == self.entry or name in self.solution_names:
                continue
            seen.add(name)
            if name in self.testing_names or name in _TESTING_MODULES or name == "self":
                ok = False
                continue
            if name in _HELPERS:  # what pytest/unittest decide, as a converted test calls it
                k = list(_HELPERS).index(name)
                need[(-1, k)] = _Def((-1, k), _HELPER_SRC[name].strip(), False)
                continue
            found = [d for d in self.defs.get(name, []) if pos is None or d.pos < pos]
            if not found:
                continue
            d = found[-1]
            if d.pos not in need:
                need[d.pos] = d
                if d.node is not None:
                    todo += sorted(_free_names([d.node]) - seen)
        ds = [need[k] for k in sorted(need)]
        srcs = [d.src for d in ds if d.is_import] + [d.src for d in ds if not d.is_import]
        return list(dict.fromkeys(srcs)), ok

    def test(self, stmts: list[ast.stmt], pos: tuple[int, int] | None, source: str | None = None) -> str | None:
        """One test: ``stmts`` after what they need; None if they need pytest/unittest."""
        pre, ok = self.prelude(_free_names(stmts), pos)
        if not ok:
            return None
        self.made += 1
        if source is None:
            mod = ast.fix_missing_locations(ast.Module(body=stmts, type_ignores=[]))
            source = ast.unparse(mod)
        return "\n".join([*pre, source])


def _has_check(nodes) -> bool:
    return any(isinstance(n, (ast.Assert, ast.Raise)) for node in nodes for n in ast.walk(node))


def _param_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef, ctx: _TestCtx) -> list[dict[str, ast.expr]] | None:
    """The parameter sets of a pytest function (``[{}]`` without ``parametrize``); None when it is
    no test that must pass alone (``skip``, ``xfail``, ``fixture``, unreadable parameters)."""
    sets: list[dict[str, ast.expr]] = [{}]
    for d in fn.decorator_list:
        what = _attr_name(d.func if isinstance(d, ast.Call) else d)
        last = what.split(".")[-1]
        if last in ("skip", "skipif", "xfail", "fixture", "skipIf", "skipUnless", "expectedFailure"):
            return None
        if last != "parametrize" or not isinstance(d, ast.Call):
            continue
        kw = {k.arg: k.value for k in d.keywords}
        if kw.get("indirect") is not None:
            return None
        names_node = d.args[0] if d.args else kw.get("argnames")
        values_node = d.args[1] if len(d.args) > 1 else kw.get("argvalues")
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",") if n.strip()]
        elif isinstance(names_node, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts):
            names = [str(e.value) for e in names_node.elts if isinstance(e, ast.Constant)]
        else:
            return None
        if isinstance(values_node, ast.Name):  # a module-level list of cases
            found = ctx.defs.get(values_node.id, [])
            node = found[-1].node if found else None
            values_node = node.value if isinstance(node, ast.Assign) else None
        if not isinstance(values_node, (ast.List, ast.Tuple)) or not names:
            return None
        rows = []
        for el in values_node.elts:
            if isinstance(el, ast.Call) and _attr_name(el.func).endswith("param"):
                if any(k.arg == "marks" for k in el.keywords):
                    continue  # an expected failure, a skip...
                vals = list(el.args) if len(names) > 1 else el.args[:1]
            elif len(names) == 1:
                vals = [el]
            elif isinstance(el, (ast.Tuple, ast.List)):
                vals = list(el.elts)
            else:
                return None
            if len(vals) != len(names):
                return None
            rows.append(dict(zip(names, vals)))
        sets = [{**a, **b} for a, b in itertools.islice(itertools.product(sets, rows), MAX_PARAM_SETS)]
    return sets


def _function_cases(fn: ast.stmt, ctx: _TestCtx, method: bool = False, setup: list[ast.stmt] | None = None,
                    self_attrs: frozenset[str] = frozenset()) -> tuple[list[str], int]:
    """The tests of a pytest function or unittest method: one per assert when its asserts stand
    alone, else its whole body as one test; and how many were rejected."""
    if not isinstance(fn, ast.FunctionDef):  # an async test needs a runner
        return [], 1
    sets = _param_sets(fn, ctx)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    if method:
        params = params[1:]
    if sets is None or fn.args.vararg or fn.args.kwarg or any(set(params) != set(s) for s in sets):
        return [], 1  # fixtures, skipped or expected to fail
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    out: list[str] = []
    dropped = 0
    for values in sets:
        if ctx.made >= MAX_CANDIDATES:
            break
        stored = _bound_names(body)
        binds: list[ast.stmt] = []
        subst: dict[str, ast.expr] = {}
        for name, node in values.items():
            uses = sum(isinstance(n, ast.Name) and n.id == name for st in body for n in ast.walk(st))
            if name not in stored and (uses <= 1 or _is_immutable(node)):
                subst[name] = node
            else:  # a list the test mutates, or reads twice: one object, as pytest passes it
                binds.append(ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(node), lineno=0))
        rw = _Rewrite(ctx, subst, self_attrs)
        stmts = [x for st in copy.deepcopy(body) for x in _as_list(rw.visit(st))]
        stmts = [st for st in stmts if not isinstance(st, ast.Pass) and not _drop_import(st, ctx)]
        # setUp runs before every test: kept where the test reads what it sets, and where it
        # checks something or calls the code under test itself (it may fail there)
        uses_setup = bool(setup) and (_has_check(setup) or any(_mentions(st, ctx.entry) for st in setup) or any(
            isinstance(n, ast.Name) and n.id in self_attrs for st in stmts for n in ast.walk(st)))
        pre = binds + (copy.deepcopy(setup) if uses_setup and setup else [])
        if not stmts or not _has_check(pre + stmts):
            dropped += 1
            continue
        if not pre and all(isinstance(st, ast.Assert) or _is_raises_try(st) for st in stmts):
            for st in stmts:  # asserts that stand alone: a test each
                t = ctx.test([st], None)
                if t is None:
                    dropped += 1
                else:
                    out.append(t)
            continue
        t = ctx.test(pre + stmts, None)
        if t is None:
            dropped += 1
        else:
            out.append(t)
    return out, dropped


def _as_list(x) -> list[ast.stmt]:
    return x if isinstance(x, list) else [x]


def _is_raises_try(st: ast.stmt) -> bool:
    """A ``try`` made by :func:`_raises_try`."""
    return isinstance(st, ast.Try) and len(st.handlers) == 1 and len(st.orelse) == 1 and \
        isinstance(st.orelse[0], ast.Raise) and len(st.handlers[0].body) == 1 and \
        (isinstance(st.handlers[0].body[0], ast.Pass) or
         (isinstance(st.handlers[0].body[0], ast.Assert) and st.handlers[0].name == _RAISED))


def _drop_import(st: ast.stmt, ctx: _TestCtx) -> bool:
    """An import of the solution or of a testing module inside a test function: left out (the
    solution is in scope; a name it bound for pytest stays unknown, and then the test is dropped)."""
    if isinstance(st, ast.ImportFrom):
        root = (st.module or "").split(".")[0]
        names = [a.name for a in st.names]
        if root in _TESTING_MODULES:
            ctx.testing_names.update(a.asname or a.name for a in st.names)
            return True
        return bool(st.level) or (root not in _STDLIB and (ctx.entry in names or "*" in names))
    if isinstance(st, ast.Import):
        if all(a.name.split(".")[0] in _TESTING_MODULES for a in st.names):
            ctx.testing_names.update((a.asname or a.name).split(".")[0] for a in st.names)
            return True
    return False


def _class_cases(cls: ast.ClassDef, ctx: _TestCtx) -> tuple[list[str], int]:
    if any(_attr_name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("skip", "skipIf")
           for d in cls.decorator_list):
        return [], 1
    setup: list[ast.stmt] = []
    attrs: set[str] = set()
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name in ("setUp", "setup_method"):
            attrs = {n.attr for n in ast.walk(st) if isinstance(n, ast.Attribute) and _is_name(n.value, "self")
                     and isinstance(n.ctx, ast.Store)}
            rw = _Rewrite(ctx, None, frozenset(attrs))
            setup = [x for s in copy.deepcopy(st.body) for x in _as_list(rw.visit(s))]
    out: list[str] = []
    dropped = 0
    for st in cls.body:
        if _is_test_func(st, ctx.entry, method=True):
            got, d = _function_cases(st, ctx, True, setup, frozenset(attrs))
            out += got
            dropped += d
    return out, dropped


def _module_cases(mod: ast.Module, src: str, ci: int, ctx: _TestCtx) -> tuple[list[str], int]:
    out: list[str] = []
    dropped = 0

    def top(st: ast.stmt, si: int) -> None:
        nonlocal dropped
        pos = (ci, si)
        if isinstance(st, ast.If) and _is_main_guard(st):
            for inner in st.body:
                top(inner, si)
            return
        if _is_test_func(st, ctx.entry):
            got, d = _function_cases(st, ctx)
        elif isinstance(st, ast.ClassDef) and _is_test_class(st):
            got, d = _class_cases(st, ctx)
        elif isinstance(st, ast.With):
            new = _as_list(_Rewrite(ctx).visit(copy.deepcopy(st)))
            t = ctx.test(new, pos) if len(new) == 1 and _is_raises_try(new[0]) else None
            got, d = ([t], 0) if t else ([], 0)
        else:
            a = _assert_from_stmt(st, src)
            if a is None:
                return
            node = ast.parse(a).body[0]
            rw = _Rewrite(ctx)
            new = rw.visit(copy.deepcopy(node))
            same = ast.dump(new) == ast.dump(node)
            t = ctx.test([new], pos, a if same else None)
            got, d = ([t], 0) if t else ([], 1)
        out.extend(got)
        dropped += d

    for si, st in enumerate(mod.body):
        if ctx.made >= MAX_CANDIDATES:
            break
        top(st, si)
    return out, dropped


def _norm(src: str) -> str:
    try:
        return ast.dump(ast.parse(src))
    except Exception:
        return " ".join(src.split())


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
      equalities, ``x == pytest.approx(number)``: see :data:`_HELPER_SRC`);
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
    * ``if __name__ == "__main__":`` bodies are read like top-level code.

    A test takes along the imports, helper functions and constants of the answer that it uses
    (imports first), as the module stands where it is written; imports of the solution module
    (``from solution import f``, ``from main import *``, ``import solution`` with
    ``solution.f(...)`` read as ``f(...)``) are left out: the code under test is in scope. A
    name the answer does not bind is left to the program (a class the task's code defines); a
    test that still needs ``pytest``, ``unittest`` or ``self`` is rejected. A block that does not
    parse gives the tests of its longest parseable prefix, then its remaining assert lines.
    """
    blocks = [b for b in fenced_blocks(text) if b.lang in PY_LANGS]
    chunks = [b.body for b in blocks] if blocks else [text]
    parsed: list[tuple[ast.Module, str]] = []
    rests: list[str] = []
    for ch in chunks:
        mod, pre, rest = _parse_prefix(ch)
        parsed.append((mod, pre) if mod is not None else (ast.Module(body=[], type_ignores=[]), ""))
        rests.append(rest)
    ctx = _TestCtx(entry, parsed)
    found: list[str] = []
    dropped = 0
    for ci, ((mod, src), rest) in enumerate(zip(parsed, rests)):
        got, d = _module_cases(mod, src, ci, ctx)
        found += got + (_line_asserts(rest) if rest else [])
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
