"""Python source for plain values: the one place that turns data into test text.

:func:`literal` writes a value the way a person would (``[1, 2]``, ``{'a': 1}``, ``set()``,
``float('inf')``), deterministically (set elements sorted by their text), and raises
:class:`NotLiteral` for anything else. :func:`pretty` wraps a long literal over several lines.
Values come from the sandbox as plain data decoded by :mod:`matrix.plain` (exact builtin types), so
the text written here is never something the code under test chose.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["NotLiteral", "literal", "pretty", "has_float", "imports_for"]


class NotLiteral(ValueError):
    pass


def literal(v, depth: int = 0) -> str:
    if depth > 60:
        raise NotLiteral("too deep")
    t = type(v)
    if v is None or t is bool:
        return repr(v)
    if t is int:  # hex past Python's decimal digit limit: a written test must compile anywhere
        return repr(v) if v.bit_length() < 14000 else ("-" if v < 0 else "") + hex(abs(v))
    if t is float:
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    if t is complex:
        return repr(v)
    if t in (str, bytes):
        return repr(v)
    if t is bytearray:
        return f"bytearray({bytes(v)!r})"
    if t is list:
        return "[" + ", ".join(literal(x, depth + 1) for x in v) + "]"
    if t is tuple:
        if len(v) == 1:
            return "(" + literal(v[0], depth + 1) + ",)"
        return "(" + ", ".join(literal(x, depth + 1) for x in v) + ")"
    if t is dict:
        return "{" + ", ".join(f"{literal(k, depth + 1)}: {literal(x, depth + 1)}" for k, x in v.items()) + "}"
    if t in (set, frozenset):
        items = sorted((literal(x, depth + 1) for x in v), key=lambda s: (len(s), s))
        body = "{" + ", ".join(items) + "}"
        if t is frozenset:
            return f"frozenset({body})" if items else "frozenset()"
        return body if items else "set()"
    if t is range:
        return repr(v)
    if t is Fraction:
        return f"Fraction({v.numerator}, {v.denominator})"
    if type(v).__name__ == "Decimal" and type(v).__module__ == "decimal":
        return f"Decimal({str(v)!r})"
    if type(v).__name__ == "deque" and type(v).__module__ == "collections":
        return "deque([" + ", ".join(literal(x, depth + 1) for x in v) + "])"
    raise NotLiteral(f"not a literal: {type(v).__name__}")


def imports_for(v, depth: int = 0) -> set[str]:
    """Import lines a literal of ``v`` needs (``from fractions import Fraction``...)."""
    out: set[str] = set()
    if depth > 60:
        return out
    if type(v) is Fraction:
        out.add("from fractions import Fraction")
    elif type(v).__name__ == "Decimal" and type(v).__module__ == "decimal":
        out.add("from decimal import Decimal")
    elif type(v).__name__ == "deque" and type(v).__module__ == "collections":
        out.add("from collections import deque")
        for x in v:
            out |= imports_for(x, depth + 1)
    elif type(v) in (list, tuple, set, frozenset):
        for x in v:
            out |= imports_for(x, depth + 1)
    elif type(v) is dict:
        for k, x in v.items():
            out |= imports_for(k, depth + 1) | imports_for(x, depth + 1)
    return out


def has_float(v, depth: int = 0) -> bool:
    if type(v) is float:
        return True
    if depth > 60:
        return False
    if type(v) in (list, tuple, set, frozenset):
        return any(has_float(x, depth + 1) for x in v)
    if type(v) is dict:
        return any(has_float(x, depth + 1) for x in v.values())
    return False


def pretty(text: str, indent: int, width: int = 100, column: int | None = None) -> str:
    """``text`` (one literal) wrapped over several lines when, starting at ``column`` (default
    ``indent``), it would pass ``width`` columns: one element per line for lists, tuples, dicts
    and sets (recursively), short scalars packed several to a line; continuation lines are
    indented from ``indent`` (the statement's indentation), as black does."""
    column = indent if column is None else column
    if column + len(text) <= width:
        return text
    import ast

    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return text
    return _wrap(node, text, indent, width, column)


def _wrap(node, text: str, indent: int, width: int, column: int | None = None) -> str:
    import ast

    src = ast.get_source_segment(text, node) or ast.unparse(node)
    if (indent if column is None else column) + len(src) <= width:
        return src
    pad = " " * (indent + 4)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
        open_, close = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(node)]
        parts = [_wrap(e, text, indent + 4, width) for e in node.elts]
        if all(isinstance(e, (ast.Constant, ast.UnaryOp)) and "\n" not in p and len(p) <= 12
               for e, p in zip(node.elts, parts)):
            lines, cur = [], ""
            for p in parts:  # short scalars: as many to a line as fit
                piece = p + ","
                if cur and len(pad) + len(cur) + 1 + len(piece) > width:
                    lines.append(cur)
                    cur = piece
                else:
                    cur = f"{cur} {piece}" if cur else piece
            lines.append(cur)
            return open_ + "\n" + "".join(f"{pad}{ln}\n" for ln in lines) + " " * indent + close
        return open_ + "\n" + "".join(f"{pad}{p},\n" for p in parts) + " " * indent + close
    if isinstance(node, ast.Dict) and node.keys and all(k is not None for k in node.keys):
        parts = [f"{ast.get_source_segment(text, k) or ast.unparse(k)}: {_wrap(v, text, indent + 4, width)}"
                 for k, v in zip(node.keys, node.values)]
        return "{\n" + "".join(f"{pad}{p},\n" for p in parts) + " " * indent + "}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 40:
        # implicit concatenation of pieces inside parentheses
        pieces, cur = [], ""
        step = max(20, width - indent - 8)
        for ch in node.value:
            cur += ch
            if len(repr(cur)) >= step:
                pieces.append(cur)
                cur = ""
        if cur:
            pieces.append(cur)
        return "(\n" + "".join(f"{pad}{p!r}\n" for p in pieces) + " " * indent + ")"
    return src
