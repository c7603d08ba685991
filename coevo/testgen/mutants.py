"""AST mutants of a module under test: :mod:`matrix.mutation`'s operators (the same sites and
changes) plus a few that matter for whole modules, in the spirit of the classic mutation-testing
operator sets:

* ``negate``: an ``if`` / ``while`` / conditional-expression / ``assert`` condition negated;
* ``raise``: a ``raise`` statement replaced by ``pass`` (the validation is gone);
* ``handler``: an ``except`` body replaced by ``raise`` (the error escapes);
* ``return``: ``return EXPR`` replaced by ``return None`` (in functions of two or more statements);
* ``loop``: a loop body cut to its first iteration (``break`` appended);
* ``slice``: a slice bound removed (``x[1:n]`` -> ``x[:n]``).

Mutants inside docstrings, ``if __name__ == "__main__":`` blocks and (with ``lines``) outside the
unit the user named are left out. Sites are listed first and ordered round-robin over the lines
(sampled, spread over the lines, when there are more than the limit) before any source is
produced; each mutant is made by changing the one parsed tree in place, unparsing it and restoring
it (no copy of the tree per mutant), so a module of a few hundred lines yields its mutants in well
under a second. Each mutant records the line it changes in the ORIGINAL file,
which is how the pipeline knows which probes can reach it (those that executed the line).
"""

from __future__ import annotations

import ast
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass

from matrix import mutation as _base

__all__ = ["ModuleMutant", "module_mutants", "EXTRA_OPERATORS"]

EXTRA_OPERATORS = ("negate", "raise", "handler", "return", "loop", "slice")


@dataclass(frozen=True)
class ModuleMutant:
    index: int
    code: str
    op: str
    line: int  # the line of the changed node
    description: str
    stmt_line: int = 0  # the first line of the statement holding it (what coverage.py records)

    @property
    def reach_line(self) -> int:
        """The line a probe must execute for this mutant to matter."""
        return self.stmt_line or self.line


def _main_guard_lines(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If):
            t = node.test
            if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__":
                out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def _extra_sites(node: ast.AST, in_multi_stmt_function: bool):
    """(op, description, apply) for the extra operators at ``node``."""
    line = getattr(node, "lineno", 0)
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        def neg(n):
            n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)
            return n
        yield "negate", f"negate the condition on line {line}", neg
    if isinstance(node, ast.Assert):
        def neg_assert(n):
            n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)
            return n
        yield "negate", f"negate the assert on line {line}", neg_assert
    if isinstance(node, ast.Raise) and node.exc is not None:
        yield "raise", f"raise on line {line} -> pass", lambda n: ast.Pass()
    if isinstance(node, ast.ExceptHandler):
        def reraise(n):
            n.body = [ast.Raise(exc=None, cause=None)]
            return n
        yield "handler", f"except body on line {line} -> raise", reraise
    if isinstance(node, ast.Return) and in_multi_stmt_function and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        def none(n):
            n.value = ast.Constant(None)
            return n
        yield "return", f"return on line {line} -> return None", none
    if isinstance(node, (ast.For, ast.While)) and node.body:
        def once(n):
            n.body = list(n.body) + [ast.Break()]
            return n
        yield "loop", f"loop on line {line} stops after one pass", once
    if isinstance(node, ast.Slice):
        for attr in ("lower", "upper"):
            if getattr(node, attr) is not None:
                def drop(n, attr=attr):
                    setattr(n, attr, None)
                    return n
                yield "slice", f"slice {attr} bound on line {line} removed", drop


def _is_data(node: ast.AST) -> bool:
    """A display of constants only (nested lists, tuples, sets, dicts; negative numbers)."""
    for n in ast.walk(node):
        if not isinstance(n, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Constant, ast.Load, ast.UnaryOp,
                              ast.USub, ast.UAdd)):
            return False
    return True


def _data_tables(tree: ast.Module, min_lines: int = 6) -> dict[int, int]:
    """``{line: first line}`` for the lines of the module's (and its classes') assignments of a
    data display of ``min_lines`` lines or more."""
    out: dict[int, int] = {}
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            if value is None or not isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
                continue
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            if last - first + 1 >= min_lines and _is_data(value):
                out.update({ln: first for ln in range(first, last + 1)})
    return out


def _returns_in_long_functions(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(f.body) >= 2:
            stack = list(f.body)
            while stack:
                n = stack.pop()
                if isinstance(n, ast.Return):
                    ids.add(id(n))
                if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    stack.extend(ast.iter_child_nodes(n))
    return ids


_Site = tuple  # (node, parent, field, index, op, description, line, apply, top-level statement, statement line)


def _sites(tree: ast.Module, extra: bool) -> list[_Site]:
    skip, body_ok = _base._docstring_ids(tree), _base._deletable(tree)
    long_returns = _returns_in_long_functions(tree) if extra else set()
    parent: dict[int, tuple[ast.AST, str, int | None]] = {}
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        parent[id(child)] = (node, name, i)
            elif isinstance(value, ast.AST):
                parent[id(value)] = (node, name, None)
    top: dict[int, int] = {}
    for k, stmt in enumerate(tree.body):
        for n in ast.walk(stmt):
            top[id(n)] = k
    stmt_line: dict[int, int] = {}

    def mark(node: ast.AST, line: int) -> None:
        if isinstance(node, ast.stmt):
            line = node.lineno
        stmt_line[id(node)] = line
        for child in ast.iter_child_nodes(node):
            mark(child, line)

    mark(tree, 0)
    out = []
    for node in ast.walk(tree):
        if id(node) not in parent:
            continue
        p, field, idx = parent[id(node)]
        line = getattr(node, "lineno", 0) or getattr(p, "lineno", 0)
        k = top.get(id(node), -1)
        sl = stmt_line.get(id(node), 0)
        for op, desc, apply in _base._sites(node, skip, body_ok):
            out.append((node, p, field, idx, op, desc, line, apply, k, sl))
        if extra:
            for op, desc, apply in _extra_sites(node, id(node) in long_returns):
                out.append((node, p, field, idx, op, desc, line, apply, k, sl))
    return out


class _Splicer:
    """Mutant source = the original text with one top-level statement replaced by the unparsed
    mutated statement (the whole module is unparsed only where statements share lines)."""

    def __init__(self, source: str, tree: ast.Module):
        self.lines = source.splitlines(keepends=True)
        self.tree = tree
        self.spans: list[tuple[int, int] | None] = []
        taken: dict[int, int] = {}
        for stmt in tree.body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
            end = stmt.end_lineno or stmt.lineno
            self.spans.append((start, end))
            for ln in range(start, end + 1):
                taken[ln] = taken.get(ln, 0) + 1
        shared = {ln for ln, c in taken.items() if c > 1}
        self.spans = [None if sp is None or any(ln in shared for ln in range(sp[0], sp[1] + 1))
                      or stmt.col_offset != 0 else sp for sp, stmt in zip(self.spans, tree.body)]
        self.originals = [ast.unparse(stmt) for stmt in tree.body]
        self.module = ast.unparse(tree)
        self._members: dict[int, dict] = {}
        self._original_members = {(k, j): ast.unparse(m) for k, stmt in enumerate(tree.body)
                                  if isinstance(stmt, ast.ClassDef) for j, m in enumerate(stmt.body)
                                  if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def _methods(self, k: int) -> dict[int, tuple[int, int, int, str]]:
        """The methods of top-level class ``k`` that can be spliced alone: ``{index in its body:
        (start line, end line, ...)}`` (none sharing a line with another statement)."""
        if k in self._members:
            return self._members[k]
        out: dict = {}
        cls = self.tree.body[k]
        if isinstance(cls, ast.ClassDef):
            spans = []
            for j, stmt in enumerate(cls.body):
                start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
                spans.append((j, stmt, start, stmt.end_lineno or stmt.lineno))
            header_end = spans[0][2] - 1 if spans else 0
            used: dict[int, int] = {}
            for _, _, a, b in spans:
                for ln in range(a, b + 1):
                    used[ln] = used.get(ln, 0) + 1
            for j, stmt, a, b in spans:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or a <= header_end \
                        or any(used[ln] > 1 for ln in range(a, b + 1)):
                    continue
                prefix = self.lines[a - 1][:stmt.col_offset]
                if prefix.strip() or len(prefix) != stmt.col_offset or not prefix:
                    continue
                out[j] = (a, b, j, prefix)
        self._members[k] = out
        return out

    def _method_source(self, k: int, line: int) -> str | None | bool:
        """The mutant's text when its change is inside one method of class ``k`` (only that method
        unparsed: a class of 1500 lines costs what its method does); False where it is not."""
        cls = self.tree.body[k]
        for start, end, j, prefix in self._methods(k).values():
            if not start <= line <= end:
                continue
            text = ast.unparse(cls.body[j])
            if text == self._original_members[(k, j)]:
                return None
            compile(text, "<mutant>", "exec", dont_inherit=True)
            inside = _string_rows(text)  # a multi-line string's own lines keep their text
            body = "".join(prefix + ln if ln.strip() and r not in inside else ln
                           for r, ln in enumerate(text.splitlines(keepends=True), 1))
            return "".join(self.lines[:start - 1]) + body + "\n" + "".join(self.lines[end:])
        return False

    def source(self, k: int, line: int = 0, in_method: bool = False) -> str | None:
        """The mutant's text (None when the change leaves the code as it was); ``in_method``: the
        change is inside a method at ``line`` (the class's own list of statements is unchanged)."""
        if in_method and 0 <= k < len(self.spans) and self.spans[k] is not None:
            out = self._method_source(k, line)
            if out is not False:
                return out  # type: ignore[return-value]
        if 0 <= k < len(self.spans) and self.spans[k] is not None:
            start, end = self.spans[k]
            stmt_src = ast.unparse(self.tree.body[k])
            if stmt_src == self.originals[k]:
                return None
            compile(stmt_src, "<mutant>", "exec", dont_inherit=True)
            return "".join(self.lines[:start - 1]) + stmt_src + "\n" + "".join(self.lines[end:])
        src = ast.unparse(self.tree)
        if src == self.module:
            return None
        compile(src, "<mutant>", "exec", dont_inherit=True)
        return src


def _string_rows(text: str) -> set[int]:
    """The rows of ``text`` that continue a string begun on an earlier row."""
    import io
    import tokenize

    rows: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.start[0] < tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
            rows.update(range(tok.start[0] + 1, tok.end[0] + 1))
    return rows


def _snapshot(node: ast.AST) -> list:
    """Enough of ``node`` to undo any site's change: its fields (lists copied) and the fields of
    its direct children (a method swap renames ``node.func.attr``)."""
    snap = []
    for name, value in ast.iter_fields(node):
        snap.append((node, name, list(value) if isinstance(value, list) else value))
        if isinstance(value, ast.AST):
            for cname, cvalue in ast.iter_fields(value):
                snap.append((value, cname, list(cvalue) if isinstance(cvalue, list) else cvalue))
    return snap


def _restore(snap: list) -> None:
    for obj, name, value in snap:
        setattr(obj, name, value)


def _mutant_source(splicer: _Splicer, site: _Site) -> str | None:
    node, parent, field, idx, _, _, _, apply, k, _ = site
    snap = _snapshot(node)
    holder = getattr(parent, field)
    try:
        repl = apply(node)
        if repl is not node:
            if idx is None:
                setattr(parent, field, repl)
            else:
                holder[idx] = repl
        cls = splicer.tree.body[k] if 0 <= k < len(splicer.tree.body) else None
        # the change is inside a method when what it replaces is not the class's own statement list
        in_method = isinstance(cls, ast.ClassDef) and parent is not cls
        return splicer.source(k, site[9] or site[6], in_method)
    except (SyntaxError, ValueError, TypeError, RecursionError, AttributeError, IndexError):
        return None
    finally:
        if idx is None:
            setattr(parent, field, holder)
        else:
            holder[idx] = node
        _restore(snap)


def module_mutants(source: str, *, lines: Iterable[int] | None = None, limit: int | None = 400,
                   seed: int = 0, extra: bool = True, deadline: float | None = None,
                   at_least: int = 24, left_out: list | None = None) -> list[ModuleMutant]:
    """Distinct mutants of ``source`` (deterministic for a seed), restricted to ``lines`` when
    given, at most ``limit`` (a seeded sample when there are more), in round-robin order over the
    lines, taken in a seeded order (see below). ``deadline`` (``time.monotonic()``): no more are made past it once there
    are ``at_least`` (a prefix of the list, spread over the module: writing 1,000 mutants of
    toml's decoder took 6.7 s of a 60 s budget on a loaded machine, more than could be run);
    ``left_out``, a list, then gets the number of places of the sample not made."""
    tree = ast.parse(source)
    skip_lines = _main_guard_lines(tree)
    wanted = set(lines) if lines is not None else None
    sites = [s for s in _sites(tree, extra) if s[6] not in skip_lines and (wanted is None or s[6] in wanted)]
    # round-robin over lines (each line's sites in a seeded order): every prefix of the list is
    # spread over the whole module, so a sample (``limit``) or a run cut short by its time budget
    # still reaches every line
    rng = random.Random(seed)
    tables = _data_tables(tree)
    by_line: dict[int, list] = {}
    for s in sites:
        # a table of data (colour's 150 lines of name -> RGB) is one place in the rounds, not
        # one per line: it would take most of a sample of the mutants, or of the time to run them
        by_line.setdefault(tables.get(s[6], s[6]), []).append(s)
    sample = limit is not None and len(sites) > limit
    for group in by_line.values():
        if sample:
            rng.shuffle(group)
        else:
            group.reverse()  # pop() below takes them in walk order
    want = len(sites) if limit is None else min(len(sites), int(limit * 1.15) + 1)  # spare for duplicates
    picked: list = []
    # each round takes the lines in a seeded order, not top to bottom: a run cut short by its
    # time share (a loaded machine runs fewer) then ran a sample of the whole module, not its
    # first lines (docopt at load 8: 200 of 831 run, all above line 300, score 0.05 against 0.21)
    lines_in_order = sorted(by_line)
    random.Random(seed + 1).shuffle(lines_in_order)
    while len(picked) < want:
        for ln in lines_in_order:
            if by_line[ln] and len(picked) < want:
                picked.append(by_line[ln].pop())
    sites = picked
    splicer = _Splicer(source, tree)
    seen = {source}
    out: list[ModuleMutant] = []
    for k, site in enumerate(sites):
        if deadline is not None and k % 8 == 0 and len(out) >= at_least and time.monotonic() > deadline:
            if left_out is not None:
                left_out.append(len(sites) - k)
            break
        src = _mutant_source(splicer, site)
        if src is None or src in seen:
            continue
        seen.add(src)
        out.append(ModuleMutant(len(out), src, site[4], site[6], site[5], site[9]))
        if limit is not None and len(out) >= limit:
            break
    return out
