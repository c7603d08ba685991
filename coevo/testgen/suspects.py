"""Suspects: behaviours where the code disagrees with evidence that does not come from the code.

* Docstring examples: a ``>>>`` example whose output differs from what the code prints (run by the
  stdlib ``doctest`` in the sandbox, twice: a difference that is not the same both times is
  nondeterminism, not evidence), and the inline forms ``f(2) -> 4`` / ``f(2) == 4`` /
  ``Input: ... Output: ...`` that :mod:`matrix.statement_examples` reads (the call runs as a probe).
  Values compare as values when both sides are literals (``2`` and ``2.0`` agree; floats within
  1e-9), else as whitespace-normalised text.
* Consensus (with a model): on an input where independently sampled implementations that agree
  with each other (at least two samples, and a strict majority of those that returned) give one
  value and the user's code another.

A suspect is reported with the input, what the code returns and what the evidence says; the probe
with that input is never written into the suite as if its observed value were right.
"""

from __future__ import annotations

import ast
import math
import re

__all__ = ["doctest_suspects", "inline_examples", "inline_suspects", "consensus_suspects", "same_call"]


def _literal(text: str):
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def values_agree(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (type(a) is type(b) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(values_agree(x, y) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(values_agree(a[k], b[k]) for k in a)
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _norm(text: str) -> str:
    return " ".join(text.split())


def _exception_line(want: str) -> str | None:
    lines = [ln for ln in want.strip().splitlines() if ln.strip()]
    if lines and lines[0].startswith("Traceback"):
        return lines[-1].strip()
    return None


def _disagrees(want: str, got: str, exc) -> bool:
    expected_exc = _exception_line(want)
    if exc is not None:
        if expected_exc is None:
            return True
        name = exc[0][1] if exc and exc[0] else ""
        return not expected_exc.split(":")[0].strip().endswith(name)
    if expected_exc is not None:
        return True
    ok_w, w = _literal(want)
    ok_g, g = _literal(got)
    if ok_w and ok_g:
        return not values_agree(w, g)
    if "..." in want:
        pattern = re.escape(_norm(want)).replace(re.escape("..."), ".*")
        return re.fullmatch(pattern, _norm(got)) is None
    return _norm(want) != _norm(got)


def doctest_suspects(first: dict | None, second: dict | None, file: str) -> list[dict]:
    """Suspects from two runs of the module's doctests (``harness._cv_doctests`` results)."""
    if not first or not second:
        return []
    again = {(e[0], e[1], e[2]): e for e in second.get("examples", [])}
    out = []
    for name, line, source, want, got, exc, ok in first.get("examples", []):
        if ok or not source:
            continue
        twin = again.get((name, line, source))
        if twin is None or twin[4] != got or twin[6]:
            continue  # not the same failure twice: nondeterministic, not evidence
        if not _disagrees(want, got, exc):
            continue
        returns = got.strip() if exc is None else f"raises {exc[0][1]}: {exc[1]}"
        out.append({"source": "docstring", "where": f"{file}:{line}", "unit": name.rpartition(".")[2] or name,
                    "input": source.strip(), "code_returns": returns,
                    "evidence": f"the docstring example says {want.strip()!s}"})
    return out


def inline_examples(units) -> list[tuple[str, str, str, int]]:
    """``(unit qualname, call source, expected literal source, docstring line)`` for the inline
    examples of each function's docstring (doctest lines are left to :func:`doctest_suspects`)."""
    from matrix.statement_examples import prompt_examples

    out = []
    for u in units:
        if u.kind != "function" or not u.doc:
            continue
        doc_wo_doctest = "\n".join(ln for ln in u.doc.splitlines() if not ln.strip().startswith(">>>"))
        for t in prompt_examples(doc_wo_doctest, u.name, limit=8):
            parsed = _call_and_value(t.test or "", u.name)
            if parsed is not None:
                out.append((u.qualname, parsed[0], parsed[1], u.start))
    return out


def _call_and_value(test: str, name: str) -> tuple[str, str] | None:
    try:
        node = ast.parse(test).body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(node, ast.Assert):
        return None
    t = node.test
    if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
        left = t.left
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == name:
            return ast.unparse(left), ast.unparse(t.comparators[0])
    if isinstance(t, ast.Compare) and isinstance(t.left, ast.Call) and getattr(t.left.func, "id", "") == "abs":
        inner = t.left.args[0] if t.left.args else None
        if isinstance(inner, ast.BinOp) and isinstance(inner.left, ast.Call) and \
                isinstance(inner.left.func, ast.Name) and inner.left.func.id == name:
            return ast.unparse(inner.left), ast.unparse(inner.right)
    return None


def inline_suspects(examples, outcome_of, file: str) -> list[dict]:
    """``outcome_of(call_source)`` gives the probe outcome of an example's call (or None)."""
    out = []
    for qual, call, expected, line in examples:
        o = outcome_of(call)
        if not o or "steps" not in o or not o["steps"]:
            continue
        step = o["steps"][-1]
        ok, want = _literal(expected)
        if not ok:
            continue
        if step[0] == "ok" and step[1][0] == "v":
            if values_agree(want, step[1][1]):
                continue
            returns = repr(step[1][1])
        elif step[0] == "raise":
            returns = f"raises {step[1][0][0][1]}: {step[1][1]}"
        else:
            continue
        out.append({"source": "docstring", "where": f"{file}:{line}", "unit": qual, "input": call,
                    "code_returns": returns, "evidence": f"the docstring says {call} gives {expected}"})
    return out


def consensus_suspects(calls: list[str], code_values: list, impl_values: list[list], unit: str,
                       file: str, line: int) -> list[dict]:
    """``code_values[i]``: the user's code's value on ``calls[i]`` (``("v", x)``, ``("raise",
    name)`` or None); ``impl_values[k][i]``: the same for implementation ``k``."""
    out = []
    for i, call in enumerate(calls):
        mine = code_values[i]
        if mine is None:
            continue
        theirs = [vals[i] for vals in impl_values if vals[i] is not None]
        if len(theirs) < 2:
            continue
        groups: list[list] = []
        for v in theirs:
            for g in groups:
                if _same_result(g[0], v):
                    g.append(v)
                    break
            else:
                groups.append([v])
        groups.sort(key=len, reverse=True)
        top = groups[0]
        if len(top) < 2 or len(top) * 2 <= len(theirs) or (len(groups) > 1 and len(groups[1]) == len(top)):
            continue
        if _same_result(top[0], mine):
            continue
        out.append({"source": "consensus", "where": f"{file}:{line}", "unit": unit, "input": call,
                    "code_returns": _show(mine),
                    "evidence": f"{len(top)} of {len(theirs)} independent implementations return {_show(top[0])}"})
    return out


def _same_result(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] == b[1]
    return values_agree(a[1], b[1])


def _show(r) -> str:
    return f"raises {r[1]}" if r[0] == "raise" else repr(r[1])


def same_call(a: str, b: str) -> bool:
    """Whether two call sources are the same call (formatting aside)."""
    try:
        return ast.unparse(ast.parse(a.strip(), mode="eval")) == ast.unparse(ast.parse(b.strip(), mode="eval"))
    except SyntaxError:
        return a.strip() == b.strip()
