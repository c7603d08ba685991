"""AST mutants of a program: small syntactic changes that usually change behaviour.

Used by the selection benchmark (wrong-but-plausible candidates) and by the mutation-score metric
(how many behaviour-changing mutants of the reference a generated test suite kills).

Operators (``Mutant.op``):

* ``binop``: arithmetic/bitwise operator swaps (``+ -> -``, ``* -> +``, ``// -> /``, ``% -> //``,
  ``** -> *``, ``& <-> |``, ``<< <-> >>`` ...), also inside augmented assignments (``+= -> -=``);
* ``compare``: comparison flips (``< -> <=``, ``< -> >``, ``== <-> !=``, ``in <-> not in``,
  ``is <-> is not``);
* ``boolop``: ``and <-> or``; ``unary``: drop ``not`` / unary minus;
* ``constant``: integer ``c -> c + 1`` and ``c -> c - 1``, ``True <-> False``, float ``x -> x + 1``;
* ``off_by_one``: ``range(.., b) -> range(.., b + 1 / b - 1)``, slice bounds ``+ 1`` / ``- 1``;
* ``string``: a non-empty string constant emptied (``"0b" -> ""``), an empty one given a space;
* ``call``: ``min <-> max``, ``any <-> all``, ``sum -> len``, method swaps (``nlargest <-> nsmallest``,
  ``upper <-> lower``, ``startswith <-> endswith``, ``find <-> rfind``, ``strip -> lstrip``,
  ``union <-> intersection`` ...), ``sorted(x) -> sorted(x, reverse=True)``;
* ``swap``: the first two elements of a tuple display, or the first two arguments of a call;
* ``statement``: an assignment or expression statement replaced by ``pass`` (bodies of 2+ lines);
* ``flow``: ``break <-> continue``.

:func:`mutants` is deterministic: mutation sites in AST walk order, each site's variants in a fixed
order, duplicates (same source after ``ast.unparse``) removed, and an optional seeded shuffle and
limit. Docstrings are left alone. Nothing here runs code: whether a mutant really changes behaviour
is for the caller to check by execution.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Mutant", "mutants", "mutation_sites", "OPERATORS"]

OPERATORS = ("binop", "compare", "boolop", "unary", "constant", "string", "off_by_one", "call", "swap",
             "statement", "flow")

_BINOP_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Add, ast.FloorDiv),
    ast.Div: (ast.Mult, ast.FloorDiv),
    ast.FloorDiv: (ast.Div, ast.Mult),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
    ast.BitAnd: (ast.BitOr,),
    ast.BitOr: (ast.BitAnd,),
    ast.BitXor: (ast.BitOr,),
    ast.LShift: (ast.RShift,),
    ast.RShift: (ast.LShift,),
}
_CMP_SWAPS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_CALL_SWAPS = {"min": "max", "max": "min", "any": "all", "all": "any", "sum": "len"}
_METHOD_SWAPS = {"nlargest": "nsmallest", "nsmallest": "nlargest", "upper": "lower", "lower": "upper",
                 "startswith": "endswith", "endswith": "startswith", "find": "rfind", "rfind": "find",
                 "index": "rindex", "strip": "lstrip", "rstrip": "lstrip", "lstrip": "rstrip",
                 "union": "intersection", "intersection": "union", "difference": "symmetric_difference",
                 "append": "remove", "pop": "copy", "isdigit": "isalpha", "isalpha": "isdigit",
                 "islower": "isupper", "isupper": "islower", "findall": "search", "sub": "split",
                 "most_common": "elements", "keys": "values", "values": "keys", "extend": "append",
                 "count": "index", "max": "min", "min": "max", "floor": "ceil", "ceil": "floor"}
_SYMBOLS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
            ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
            ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


@dataclass(frozen=True)
class Mutant:
    code: str
    op: str  # one of OPERATORS
    line: int  # 1-based line of the mutated node in the original program
    description: str


# A site is (node position in ast.walk order, operator, description, apply(node) -> replacement)
# takes the fresh copy of the node that _sites matched (so of the class it checked): typed Any
_Apply = Callable[[Any], ast.AST | None]


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                ids.add(id(body[0].value))
    return ids


def _plus(expr: ast.expr, delta: int) -> ast.expr:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return ast.Constant(expr.value + delta)
    return ast.BinOp(left=expr, op=ast.Add() if delta > 0 else ast.Sub(), right=ast.Constant(abs(delta)))


def _sites(node: ast.AST, skip: set[int], body_ok: set[int]) -> Iterator[tuple[str, str, _Apply]]:
    """(operator, description, apply) for every mutation of ``node`` itself."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        for new in _BINOP_SWAPS.get(type(node.op), ()):
            def apply_binop(n, new=new):
                n.op = new()
                return n
            sym = "=" if isinstance(node, ast.AugAssign) else ""
            yield "binop", f"{_SYMBOLS[type(node.op)]}{sym} -> {_SYMBOLS[new]}{sym}", apply_binop
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in _CMP_SWAPS.get(type(op), ()):
                def apply_compare(n, i=i, new=new):
                    n.ops[i] = new()
                    return n
                yield "compare", f"{_SYMBOLS[type(op)]} -> {_SYMBOLS[new]}", apply_compare
    elif isinstance(node, ast.BoolOp):
        new_op, desc = (ast.Or, "and -> or") if isinstance(node.op, ast.And) else (ast.And, "or -> and")

        def apply_boolop(n, new_op=new_op):
            n.op = new_op()
            return n
        yield "boolop", desc, apply_boolop
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        if not (isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)):
            yield "unary", f"drop {'not' if isinstance(node.op, ast.Not) else 'unary -'}", lambda n: n.operand
    elif isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)) and id(node) not in skip:
        v = node.value
        if isinstance(v, bool):
            yield "constant", f"{v} -> {not v}", lambda n: ast.Constant(not n.value)
        elif isinstance(v, int):
            yield "constant", f"{_int_text(v)} -> {_int_text(v + 1)}", lambda n: ast.Constant(n.value + 1)
            yield "constant", f"{_int_text(v)} -> {_int_text(v - 1)}", lambda n: ast.Constant(n.value - 1)
        elif isinstance(v, float):
            yield "constant", f"{v} -> {v + 1}", lambda n: ast.Constant(n.value + 1.0)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
        if node.value:
            yield "string", f"{node.value[:10]!r} -> ''", lambda n: ast.Constant("")
        else:
            yield "string", "'' -> ' '", lambda n: ast.Constant(" ")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        yield from _swap_args(node)
        name = node.func.attr
        if name in _METHOD_SWAPS:
            def apply_method(n, new=_METHOD_SWAPS[name]):
                n.func.attr = new
                return n
            yield "call", f".{name} -> .{_METHOD_SWAPS[name]}", apply_method
    elif isinstance(node, ast.Tuple) and len(node.elts) >= 2 and isinstance(node.ctx, ast.Load) \
            and not any(isinstance(e, ast.Starred) for e in node.elts[:2]):
        def apply_swap(n):
            n.elts[0], n.elts[1] = n.elts[1], n.elts[0]
            return n
        yield "swap", "swap the first two tuple elements", apply_swap
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) and id(node) in body_ok:
        yield "statement", f"delete line {getattr(node, 'lineno', 0)}", lambda n: ast.Pass()
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name == "range" and 1 <= len(node.args) <= 3 and not node.keywords:
            stop = 0 if len(node.args) == 1 else 1
            for delta in (1, -1):
                def apply_stop(n, stop=stop, delta=delta):
                    n.args[stop] = _plus(n.args[stop], delta)
                    return n
                yield "off_by_one", f"range stop {'+' if delta > 0 else '-'} 1", apply_stop
            if len(node.args) >= 2:
                def apply_start(n):
                    n.args[0] = _plus(n.args[0], 1)
                    return n
                yield "off_by_one", "range start + 1", apply_start
        elif name in _CALL_SWAPS:
            def apply_callee(n, new=_CALL_SWAPS[name]):
                n.func = ast.Name(id=new, ctx=ast.Load())
                return n
            yield "call", f"{name} -> {_CALL_SWAPS[name]}", apply_callee
        elif name == "sorted" and not any(k.arg == "reverse" for k in node.keywords):
            def apply_reverse(n):
                n.keywords.append(ast.keyword(arg="reverse", value=ast.Constant(True)))
                return n
            yield "call", "sorted -> sorted(reverse=True)", apply_reverse
        if name not in ("range", "print", "isinstance"):
            yield from _swap_args(node)
    elif isinstance(node, ast.Slice):
        for attr in ("lower", "upper"):
            if getattr(node, attr) is not None:
                for delta in (1, -1):
                    def apply_slice(n, attr=attr, delta=delta):
                        setattr(n, attr, _plus(getattr(n, attr), delta))
                        return n
                    yield "off_by_one", f"slice {attr} {'+' if delta > 0 else '-'} 1", apply_slice
    elif isinstance(node, ast.Break):
        yield "flow", "break -> continue", lambda n: ast.Continue()
    elif isinstance(node, ast.Continue):
        yield "flow", "continue -> break", lambda n: ast.Break()


def _swap_args(node: ast.Call) -> Iterator[tuple[str, str, _Apply]]:
    args = node.args
    if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]) \
            and ast.dump(args[0]) != ast.dump(args[1]):
        def apply(n):
            n.args[0], n.args[1] = n.args[1], n.args[0]
            return n
        yield "swap", "swap the first two arguments", apply


def _deletable(tree: ast.AST) -> set[int]:
    """Statements that may be deleted: assignments and expression statements (not docstrings) in a
    body of two or more statements."""
    ids = set()
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and len(body) >= 2:
                for stmt in body:
                    if isinstance(stmt, (ast.Assign, ast.AugAssign)) or (
                            isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Constant)):
                        ids.add(id(stmt))
    return ids


def mutation_sites(code: str) -> list[tuple[int, str, str, int]]:
    """``(node position, operator, description, line)`` for every possible single mutation."""
    tree = ast.parse(code)
    skip, body_ok = _docstring_ids(tree), _deletable(tree)
    out = []
    for pos, node in enumerate(ast.walk(tree)):
        for op, desc, _ in _sites(node, skip, body_ok):
            out.append((pos, op, desc, getattr(node, "lineno", 0)))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST | None):  # None: the node is removed
        self.target = target
        self.replacement = replacement

    def visit(self, node):
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def mutants(code: str, *, ops: tuple[str, ...] | None = None, limit: int | None = None,
            seed: int | None = None) -> list[Mutant]:
    """Distinct single-site mutants of ``code`` (which must parse). ``ops`` restricts the operators;
    with ``seed`` the list is shuffled reproducibly before ``limit`` is applied."""
    tree = ast.parse(code)
    original = ast.unparse(tree)
    skip, body_ok = _docstring_ids(tree), _deletable(tree)
    nodes = list(ast.walk(tree))
    wanted = set(ops) if ops is not None else set(OPERATORS)
    plan: list[tuple[int, int, str, str, int]] = []  # (node pos, variant no, op, description, line)
    for pos, node in enumerate(nodes):
        for k, (op, desc, _) in enumerate(_sites(node, skip, body_ok)):
            if op in wanted:
                plan.append((pos, k, op, desc, getattr(node, "lineno", 0)))
    if seed is not None:
        random.Random(seed).shuffle(plan)
    out: list[Mutant] = []
    seen = {original}
    for pos, k, op, desc, line in plan:
        fresh = copy.deepcopy(tree)
        fresh_nodes = list(ast.walk(fresh))
        target = fresh_nodes[pos]
        apply = list(_sites(target, _docstring_ids(fresh), _deletable(fresh)))[k][2]
        replacement = apply(target)
        if replacement is not target:
            fresh = _Replace(target, replacement).visit(fresh)
        ast.fix_missing_locations(fresh)
        try:
            src = ast.unparse(fresh)
            compile(src, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            continue
        if src in seen:
            continue
        seen.add(src)
        out.append(Mutant(src, op, line, desc))
        if limit is not None and len(out) >= limit:
            break
    return out


def _int_text(v: int) -> str:
    """An int for a mutant's description: in full, or its size past Python's decimal digit limit
    (a module's 4,000-digit literal ended `coevo gen-tests` with a traceback)."""
    return str(v) if v.bit_length() <= 4096 else f"<{v.bit_length()}-bit int>"
