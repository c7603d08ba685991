"""AST mutants of a module under test: :mod:`matrix.mutation`'s operators plus a few that matter
for whole modules (in the spirit of the classic mutation-testing operator sets):

* ``negate``: an ``if`` / ``while`` / conditional-expression / ``assert`` condition negated;
* ``raise``: a ``raise`` statement replaced by ``pass`` (the validation is gone);
* ``handler``: an ``except`` body replaced by ``raise`` (the error escapes);
* ``return``: ``return EXPR`` replaced by ``return None`` (in functions of two or more statements);
* ``loop``: a loop body cut to its first iteration (``break`` appended);
* ``slice``: a slice bound removed (``x[1:n]`` -> ``x[:n]``).

Mutants inside docstrings, ``if __name__ == "__main__":`` blocks and (with ``lines``) outside the
unit the user named are left out. Each mutant records the line it changes in the ORIGINAL file,
which is how the pipeline knows which probes can reach it (those that executed the line).
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Iterable
from dataclasses import dataclass

from matrix.mutation import mutants as base_mutants

__all__ = ["ModuleMutant", "module_mutants", "EXTRA_OPERATORS"]

EXTRA_OPERATORS = ("negate", "raise", "handler", "return", "loop", "slice")


@dataclass(frozen=True)
class ModuleMutant:
    index: int
    code: str
    op: str
    line: int
    description: str


def _main_guard_lines(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.If):
            t = node.test
            if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__":
                out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def _extra_sites(tree: ast.Module):
    """(node position in ast.walk order, op, description, line, apply(copy_of_node) -> replacement)."""
    out = []
    for pos, node in enumerate(ast.walk(tree)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            def neg(n):
                n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)
                return n
            out.append((pos, "negate", f"negate the condition on line {line}", line, neg))
        elif isinstance(node, ast.Assert):
            def neg_assert(n):
                n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)
                return n
            out.append((pos, "negate", f"negate the assert on line {line}", line, neg_assert))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            out.append((pos, "raise", f"raise on line {line} -> pass", line, lambda n: ast.Pass()))
        elif isinstance(node, ast.ExceptHandler):
            def reraise(n):
                n.body = [ast.Raise(exc=None, cause=None)]
                return n
            out.append((pos, "handler", f"except body on line {line} -> raise", line, reraise))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(node.body) >= 2:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None and not (
                        isinstance(ret.value, ast.Constant) and ret.value.value is None):
                    rpos = _position(tree, ret)

                    def none(n):
                        n.value = ast.Constant(None)
                        return n
                    out.append((rpos, "return", f"return on line {ret.lineno} -> return None", ret.lineno, none))
        elif isinstance(node, (ast.For, ast.While)) and node.body:
            def once(n):
                n.body = list(n.body) + [ast.Break()]
                return n
            out.append((pos, "loop", f"loop on line {line} stops after one pass", line, once))
        elif isinstance(node, ast.Slice):
            for attr in ("lower", "upper"):
                if getattr(node, attr) is not None:
                    def drop(n, attr=attr):
                        setattr(n, attr, None)
                        return n
                    out.append((pos, "slice", f"slice {attr} bound on line {line} removed", line, drop))
    return out


def _position(tree: ast.AST, target: ast.AST) -> int:
    for i, n in enumerate(ast.walk(tree)):
        if n is target:
            return i
    return -1


class _Replace(ast.NodeTransformer):
    def __init__(self, target, replacement):
        self.target, self.replacement = target, replacement

    def visit(self, node):
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def _extra_mutants(source: str) -> list[tuple[str, str, int, str]]:
    tree = ast.parse(source)
    out = []
    seen_sites = set()
    for pos, op, desc, line, apply in _extra_sites(tree):
        if (pos, op, desc) in seen_sites or pos < 0:
            continue
        seen_sites.add((pos, op, desc))
        fresh = copy.deepcopy(tree)
        target = list(ast.walk(fresh))[pos]
        repl = apply(target)
        if repl is not target:
            fresh = _Replace(target, repl).visit(fresh)
        ast.fix_missing_locations(fresh)
        try:
            src = ast.unparse(fresh)
            compile(src, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            continue
        out.append((src, op, line, desc))
    return out


def module_mutants(source: str, *, lines: Iterable[int] | None = None, limit: int | None = 400,
                   seed: int = 0, extra: bool = True) -> list[ModuleMutant]:
    """Distinct mutants of ``source`` (deterministic for a seed), restricted to ``lines`` when
    given, at most ``limit`` (a seeded sample spread over the lines when there are more)."""
    tree = ast.parse(source)
    skip = _main_guard_lines(tree)
    wanted = set(lines) if lines is not None else None
    original = ast.unparse(tree)
    found: list[tuple[str, str, int, str]] = []
    seen = {original}
    for m in base_mutants(source):
        found.append((m.code, m.op, m.line, m.description))
    if extra:
        found += _extra_mutants(source)
    out = []
    for code, op, line, desc in found:
        if code in seen or line in skip or (wanted is not None and line not in wanted):
            continue
        seen.add(code)
        out.append((code, op, line, desc))
    if limit is not None and len(out) > limit:
        rng = random.Random(seed)
        by_line: dict[int, list] = {}
        for m in out:
            by_line.setdefault(m[2], []).append(m)
        for group in by_line.values():
            rng.shuffle(group)
        picked = []
        while len(picked) < limit:  # round-robin over lines: every line keeps some mutants
            for ln in sorted(by_line):
                if by_line[ln] and len(picked) < limit:
                    picked.append(by_line[ln].pop())
        out = sorted(picked, key=lambda m: (m[2], m[1], m[3]))
    return [ModuleMutant(i, code, op, line, desc) for i, (code, op, line, desc) in enumerate(out)]
