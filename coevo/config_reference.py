"""The configuration reference, read from the schema itself.

Every field of :class:`coevo.settings.CoevoConfig` (sections, and settings nested in them such as
``rollout.vllm`` and ``eval.api``) with its type, its default and the comment written next to it
in the dataclass: the comment on the field's line, after the comment lines just above it. The
documentation lives beside the field (as in TRL's and CleanRL's config classes); ``coevo config``
prints it, and the README's configuration table is this module's Markdown output.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class FieldDoc:
    key: str  # dotted name, as in an override: loop.n_codes
    type: str  # the annotation as written
    default: Any  # the value in the default configuration
    doc: str  # the comment next to the field ("" when there is none)


@cache
def field_comments(cls: type) -> dict[str, str]:
    """``{field: comment}`` for the fields of dataclass ``cls``: the comment lines directly above a
    field, then the comment at the end of its line, joined by spaces. A comment line starting with
    ``--`` heads a group of fields and documents none of them."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    comments: dict[int, str] = {}  # 1-based line -> comment text (without '#')
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    cls_node = ast.parse(textwrap.dedent(source)).body[0]
    out: dict[str, str] = {}
    for node in getattr(cls_node, "body", []):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above = []
        line = node.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            if comments.get(line, "").startswith("--"):
                break
            above.insert(0, comments.get(line, ""))
            line -= 1
        trailing = comments.get(node.end_lineno or node.lineno, "")
        if trailing and lines[(node.end_lineno or node.lineno) - 1].strip().startswith("#"):
            trailing = ""
        out[node.target.id] = " ".join(x for x in (*above, trailing) if x)
    return out


def reference(config: Any = None) -> list[FieldDoc]:
    """Every leaf field of ``config`` (default: the default :class:`CoevoConfig`), in schema order;
    nested dataclasses are walked into (``rollout.vllm.sleep_level``)."""
    if config is None:
        from coevo.settings import CoevoConfig

        config = CoevoConfig()
    rows: list[FieldDoc] = []
    _walk(config, "", rows)
    return rows


def _walk(obj: Any, prefix: str, rows: list[FieldDoc]) -> None:
    docs = field_comments(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            _walk(value, key + ".", rows)
        else:
            rows.append(FieldDoc(key, str(f.type), value, docs.get(f.name, "")))


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, dict) and not value:
        return "{}"
    if isinstance(value, list | tuple) and not value:
        return "[]"
    return str(value)


def format_text(rows: list[FieldDoc]) -> str:
    """Plain text for a terminal: one block per section, ``key = default  (type)`` and the doc."""
    out: list[str] = []
    section = None
    for r in rows:
        head = r.key.split(".")[0]
        if head != section:
            if section is not None:
                out.append("")
            out.append(f"[{head}]")
            section = head
        out.append(f"  {r.key} = {_show(r.default)}  ({r.type})")
        if r.doc:
            out.append(f"      {r.doc}")
    return "\n".join(out) + "\n"


def format_markdown(rows: list[FieldDoc]) -> str:
    """A Markdown table: key, default, meaning (the README's configuration reference)."""
    out = ["| key | default | meaning |", "| --- | --- | --- |"]
    for r in rows:
        doc = r.doc.replace("|", "\\|")
        default = _show(r.default).replace("|", "\\|")
        out.append(f"| `{r.key}` | `{default}` | {doc} |")
    return "\n".join(out) + "\n"
