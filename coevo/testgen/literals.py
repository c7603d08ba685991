"""Python source for plain values: the one place that turns data into test text.

:func:`literal` writes a value the way a person would (``[1, 2]``, ``{'a': 1}``, ``set()``,
``float('inf')``), deterministically (set elements sorted by their text), and raises
:class:`NotLiteral` for anything else. :func:`pretty` wraps a long literal over several lines.
Values come from the sandbox as plain data decoded by :mod:`matrix.plain` (exact builtin types), so
the text written here is never something the code under test chose.
"""

from __future__ import annotations

import ast
import math
import unicodedata
from fractions import Fraction

__all__ = ["NotLiteral", "literal", "pretty", "has_float", "imports_for", "str_literal", "visible_source"]


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
    if t is str:
        return str_literal(v)
    if t is bytes:
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


_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u034f")  # Hangul fillers, the grapheme joiner


def _hidden(text: str, k: int) -> bool:
    """Whether ``text[k]``, which ``repr`` leaves as it is, reads as nothing: a variation selector,
    a filler, or a combining mark with nothing of its own script to sit on (at the start, after a
    space or a quote; after an ASCII letter, where 'e' + U+0301 looks like a precomposed 'é')."""
    ch = text[k]
    o = ord(ch)
    if o < 0x300:
        return False
    if ch in _FILLERS or 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF or 0x180B <= o <= 0x180F:
        return True
    if unicodedata.category(ch) in ("Mn", "Me"):
        prev = text[k - 1] if k else ""
        return not prev or prev.isascii() or unicodedata.category(prev)[0] not in "LM"
    return False


def str_literal(v: str) -> str:
    """``repr(v)``, except that characters a reader cannot see are escaped too (slugify's
    ``'\\ufe0f'`` read as ``''``)."""
    if v.isascii() or not any(_hidden(v, k) for k in range(len(v))):
        return repr(v)
    quote = '"' if "'" in v and '"' not in v else "'"
    out = []
    for k, ch in enumerate(v):
        if _hidden(v, k):
            o = ord(ch)
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        elif ch == quote or ch == "\\":
            out.append("\\" + ch)
        else:
            out.append(repr(ch)[1:-1] if ch != '"' and ch != "'" else ch)
    return quote + "".join(out) + quote


def visible_source(src: str) -> str:
    """``src`` (Python source) with its string literals that hold characters a reader cannot
    see written as :func:`str_literal` writes them."""
    if src.isascii():
        return src
    import io
    import tokenize

    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return src
    lines = src.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    edits = []
    for tok in toks:
        if tok.type != tokenize.STRING or tok.string.isascii():
            continue
        prefix = tok.string[:len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))].lower()
        if "f" in prefix or "b" in prefix:
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str) and any(_hidden(value, k) for k in range(len(value))):
            a = starts[tok.start[0] - 1] + tok.start[1]
            b = starts[tok.end[0] - 1] + tok.end[1]
            edits.append((a, b, str_literal(value)))
    for a, b, new in reversed(edits):
        src = src[:a] + new + src[b:]
    return src


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
    if isinstance(node, ast.Call) and (node.args or node.keywords) and \
            all(k.arg is not None for k in node.keywords) and not any(isinstance(a, ast.Starred) for a in node.args):
        # a repr of a call (Version(major=5, minor=0, ...)): one argument per line
        func = ast.get_source_segment(text, node.func) or ast.unparse(node.func)
        parts = [_wrap(a, text, indent + 4, width) for a in node.args]
        parts += [f"{k.arg}=" + _wrap(k.value, text, indent + 4, width, column=indent + 5 + len(k.arg))
                  for k in node.keywords]
        return func + "(\n" + "".join(f"{pad}{p},\n" for p in parts) + " " * indent + ")"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 40:
        # implicit concatenation of pieces inside parentheses
        pieces, cur = [], ""
        step = max(20, width - indent - 8)
        for ch in node.value:
            cur += ch
            if len(str_literal(cur)) >= step:
                cut = cur.rfind(" ", len(cur) // 2)  # after a space, where there is one
                pieces.append(cur[:cut + 1] if cut > 0 else cur)
                cur = cur[cut + 1:] if cut > 0 else ""
        if cur:
            pieces.append(cur)
        return "(\n" + "".join(f"{pad}{str_literal(p)}\n" for p in pieces) + " " * indent + ")"
    return src
