"""Extra inputs for output consensus: read the calls in the tests, infer argument types, and draw
new calls of the same shape.

* :func:`extract_calls` finds calls of the entry point with literal arguments inside assert-style
  tests (``assert f(1, [2]) == 3``, ``assert set(f(x)) == {...}``, ``assert math.isclose(f(2.0),
  ...)``) and call-style tests (``Test.call``). Calls whose arguments are not literals are skipped.
* :func:`infer_signature` merges the argument values seen into one :class:`Spec` per argument
  position (ints and floats widen to ranges, strings keep their alphabet, containers recurse,
  mixtures become unions).
* :func:`spec_strategy` turns a signature into a hypothesis strategy, staying close to what the tests
  exercise (ranges padded a little, non-negative stays non-negative, containers stay small) so that
  the inputs are mostly valid and cheap to run.
* :func:`spec_value` draws one value of a spec as :func:`spec_strategy` would, with edge values
  (0, bounds, empty containers) often, from a ``random.Random`` (no hypothesis engine: microseconds
  a value, not a millisecond).
* :func:`generate_calls` draws ``n`` distinct call expressions, reproducibly: seeded by the run's
  seed, the function's name and signature, the same in every process.
* :func:`output_key` / :func:`output_keys` turn execution results into hashable keys for
  :mod:`matrix.selection` (``None`` for an error, timeout or other abstention).
* :func:`perturb_stdin` makes new stdin inputs for stdio tasks from the tests' inputs by moving
  their integers a little (the layout and the header line stay, so the inputs mostly still parse).
* :func:`consensus_keys` puts it together for one pool: the extra calls (function tasks) or the
  tests' stdin inputs plus perturbed ones (stdio tasks), run by the caller's executor, as a
  ``codes x inputs`` key grid.

Nothing here executes candidate code itself; the calls are strings that the engine evaluates in
its sandbox (``Executor.run_calls`` / ``run_stdin``). hypothesis is imported lazily (only by
:func:`spec_strategy`).
"""

from __future__ import annotations

import ast
import builtins
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from matrix.sandbox.encoding import Member, NonPlain

__all__ = [
    "CallSite",
    "Spec",
    "consensus_keys",
    "extract_calls",
    "format_call",
    "generate_calls",
    "infer_entry_point",
    "infer_signature",
    "normalize_stdout",
    "output_key",
    "output_keys",
    "perturb_stdin",
    "spec_strategy",
    "spec_value",
    "test_sources",
]

MAX_CONTAINER = 12  # longest generated list/str/dict
MAX_PAD = 10  # how far generated ints may go beyond the range seen
_NOT_ENTRY = {"set", "sorted", "list", "tuple", "abs", "round", "len", "str", "int", "float", "isclose",
              "frozenset", "dict", "all", "any", "sum", "min", "max", "type", "isinstance", "print",
              "repr", "bool", "map", "filter", "zip", "enumerate", "range", "reversed", "eval", "check"}


# ----------------------------------------------------------------------------- reading tests


@dataclass(frozen=True)
class CallSite:
    """One call of the entry point found in a test: literal ``args`` / ``kwargs`` and its source."""

    func: str
    args: tuple
    kwargs: tuple  # ((name, value), ...)
    source: str


def test_sources(tests: Iterable[Any]) -> list[str]:
    """Python source of each test: strings as they are; :class:`matrix.tasks.Test` objects by kind
    (assert statement, or the call expression of a call test); stdio tests are skipped."""
    out = []
    for t in tests:
        if isinstance(t, str):
            out.append(t)
            continue
        kind = getattr(t, "kind", None)
        if kind == "assert" and t.test:
            out.append(t.test)
        elif kind == "call" and t.call:
            out.append(t.call)
    return out


def _called_names(tree: ast.AST) -> list[str]:
    return [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def infer_entry_point(tests: Iterable[Any]) -> str | None:
    """The function the tests call most often, preferring names that are not common builtins."""
    counts: Counter[str] = Counter()
    for src in test_sources(tests):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        counts.update(_called_names(tree))
    for name, _ in counts.most_common():
        if name not in _NOT_ENTRY and not hasattr(builtins, name):  # (a builtin wraps the tested call:
            return name  # `chr(f(97))`; and only the entry point is the program's under such a name)
    return counts.most_common(1)[0][0] if counts else None  # a task may well be called `sum`


def extract_calls(tests: Iterable[Any], entry_point: str | None = None) -> list[CallSite]:
    """Calls of ``entry_point`` (inferred when None) with literal arguments, in test order,
    without duplicates."""
    tests = list(tests)
    entry = entry_point or infer_entry_point(tests)
    if not entry:
        return []
    out: list[CallSite] = []
    seen: set[str] = set()
    for src in test_sources(tests):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry):
                continue
            try:
                args = tuple(ast.literal_eval(a) for a in node.args if not isinstance(a, ast.Starred))
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    continue
                kwargs = tuple((k.arg, ast.literal_eval(k.value)) for k in node.keywords)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            source = ast.unparse(node)
            if source not in seen:
                seen.add(source)
                out.append(CallSite(entry, args, kwargs, source))
    return out


# ----------------------------------------------------------------------------- type specs


@dataclass(frozen=True)
class Spec:
    """An inferred argument type. ``kind`` is one of none, bool, int, float, str, bytes, list,
    tuple (fixed length, ``items``), tuplevar, set, dict, union, const; ``lo``/``hi`` bound numbers
    or container lengths; ``elem``/``key`` describe container contents; ``alphabet`` strings."""

    kind: str
    lo: float = 0
    hi: float = 0
    elem: Spec | None = None
    key: Spec | None = None
    items: tuple = ()
    alphabet: str = ""
    values: tuple = field(default=(), compare=False)

    def describe(self) -> str:
        if self.kind in ("int", "float"):
            return f"{self.kind}[{self.lo}..{self.hi}]"
        if self.kind in ("str", "bytes"):
            return f"{self.kind}(len {self.lo}..{self.hi})"
        if self.kind in ("list", "set", "tuplevar"):
            return f"{self.kind}[{self.elem.describe() if self.elem else '?'}]"
        if self.kind == "dict":
            return f"dict[{self.key.describe() if self.key else '?'}: {self.elem.describe() if self.elem else '?'}]"
        if self.kind == "tuple":
            return "tuple(" + ", ".join(s.describe() for s in self.items) + ")"
        if self.kind == "union":
            return " | ".join(s.describe() for s in self.items)
        return self.kind


_EMPTY = None  # element spec of an empty container


def spec_of(value: Any, depth: int = 0) -> Spec:
    """The spec of one literal value."""
    if depth > 6:
        return Spec("const", values=(value,))
    if value is None:
        return Spec("none")
    if isinstance(value, bool):
        return Spec("bool")
    if isinstance(value, int):
        return Spec("int", value, value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return Spec("const", values=(value,))
        return Spec("float", value, value)
    if isinstance(value, str):
        return Spec("str", len(value), len(value), alphabet="".join(sorted(set(value))))
    if isinstance(value, bytes):
        return Spec("bytes", len(value), len(value))
    if isinstance(value, (list, set, frozenset)):
        elem = _merge_all([spec_of(v, depth + 1) for v in value])
        kind = "list" if isinstance(value, list) else "set"
        return Spec(kind, len(value), len(value), elem=elem)
    if isinstance(value, tuple):
        return Spec("tuple", len(value), len(value), items=tuple(spec_of(v, depth + 1) for v in value))
    if isinstance(value, dict):
        key = _merge_all([spec_of(k, depth + 1) for k in value])
        val = _merge_all([spec_of(v, depth + 1) for v in value.values()])
        return Spec("dict", len(value), len(value), elem=val, key=key)
    return Spec("const", values=(value,))


def _merge_all(specs: Sequence[Spec]) -> Spec | None:
    out: Spec | None = _EMPTY
    for s in specs:
        out = merge(out, s)
    return out


def merge(a: Spec | None, b: Spec | None) -> Spec | None:
    """The smallest spec covering both (``None`` is the element spec of an empty container)."""
    if a is None:
        return b
    if b is None:
        return a
    if a.kind == "union" or b.kind == "union":
        members = list(a.items if a.kind == "union" else (a,))
        for s in (b.items if b.kind == "union" else (b,)):
            members = _union_add(members, s)
        return members[0] if len(members) == 1 else Spec("union", items=tuple(members))
    both = _merge_compatible(a, b)
    return both if both is not None else Spec("union", items=(a, b))


def _merge_compatible(a: Spec, b: Spec) -> Spec | None:
    """``a`` and ``b`` merged when they are of one family (same kind, int/float, tuple shapes)."""
    lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
    if a.kind == b.kind:
        k = a.kind
        if k in ("none", "bool"):
            return a
        if k in ("int", "float", "bytes"):
            return Spec(k, lo, hi)
        if k == "str":
            return Spec("str", lo, hi, alphabet="".join(sorted(set(a.alphabet) | set(b.alphabet))))
        if k in ("list", "set", "tuplevar"):
            return Spec(k, lo, hi, elem=merge(a.elem, b.elem))
        if k == "dict":
            return Spec("dict", lo, hi, elem=merge(a.elem, b.elem), key=merge(a.key, b.key))
        if k == "tuple":
            if len(a.items) == len(b.items):
                return Spec("tuple", lo, hi, items=tuple(merge(x, y) for x, y in zip(a.items, b.items)))
            return Spec("tuplevar", lo, hi, elem=_merge_all(list(a.items) + list(b.items)))
        if k == "const":
            vals = list(a.values) + [v for v in b.values if not any(v is w or v == w for w in a.values)]
            return Spec("const", values=tuple(vals[:32]))
        return None
    kinds = {a.kind, b.kind}
    if kinds == {"int", "float"}:
        return Spec("float", lo, hi)
    if kinds == {"tuple", "tuplevar"}:
        t, v = (a, b) if a.kind == "tuple" else (b, a)
        return Spec("tuplevar", lo, hi, elem=_merge_all([*t.items, v.elem]))  # type: ignore[list-item]  # a tuplevar has elem
    return None


def _union_add(members: list[Spec], s: Spec) -> list[Spec]:
    for i, m in enumerate(members):
        merged = _merge_compatible(m, s)
        if merged is not None:
            return members[:i] + [merged] + members[i + 1:]
    return members + [s]


def infer_signature(calls: Sequence[CallSite]) -> tuple[tuple[Spec, ...], tuple[tuple[str, Spec], ...]]:
    """Positional and keyword specs of the most common call shape (arity and keyword names)."""
    if not calls:
        return (), ()
    shape = Counter((len(c.args), tuple(k for k, _ in c.kwargs)) for c in calls).most_common(1)[0][0]
    chosen = [c for c in calls if (len(c.args), tuple(k for k, _ in c.kwargs)) == shape]
    pos = tuple(_merge_all([spec_of(c.args[i]) for c in chosen]) or Spec("none") for i in range(shape[0]))
    kw = tuple((name, _merge_all([spec_of(dict(c.kwargs)[name]) for c in chosen]) or Spec("none"))
               for name in shape[1])
    return pos, kw


# ----------------------------------------------------------------------------- strategies


def _int_bounds(lo: float, hi: float) -> tuple[int, int]:
    lo, hi = int(lo), int(hi)
    pad = max(3, min(max((hi - lo) // 2, abs(hi) // 2), MAX_PAD))
    new_lo = lo - pad
    if lo >= 0:
        new_lo = max(0, new_lo)
    return new_lo, hi + pad


def _len_bounds(lo: float, hi: float) -> tuple[int, int]:
    """Lengths a little around those seen; never above ``MAX_CONTAINER`` unless the tests use longer
    containers (then up to the longest seen, capped at 64)."""
    new_lo = min(max(0, int(lo) - 1), 64)
    new_hi = min(max(int(hi) + 2, 1), max(MAX_CONTAINER, min(int(hi), 64)))
    return new_lo, max(new_lo, new_hi)


def spec_strategy(spec: Spec | None, depth: int = 0):
    """A hypothesis strategy for values of ``spec``."""
    from hypothesis import strategies as st

    if spec is None:
        return st.integers(0, 9)
    k = spec.kind
    if k == "none":
        return st.none()
    if k == "bool":
        return st.booleans()
    if k == "int":
        lo, hi = _int_bounds(spec.lo, spec.hi)
        return st.integers(lo, hi)
    if k == "float":
        span = max(1.0, (spec.hi - spec.lo) / 2)
        low = spec.lo - span if spec.lo < 0 else max(0.0, spec.lo - span)
        return st.floats(low, spec.hi + span, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
    if k in ("str", "bytes"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        alphabet = spec.alphabet or "abc"
        text = st.text(alphabet=alphabet, min_size=lo, max_size=hi)
        return text if k == "str" else text.map(lambda s: s.encode())
    if depth > 4:
        return st.none()
    if k in ("list", "set", "tuplevar"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        elem = spec_strategy(spec.elem, depth + 1)
        if k == "set":
            return st.sets(elem, min_size=0, max_size=hi)
        lists = st.lists(elem, min_size=lo, max_size=hi)
        return lists if k == "list" else lists.map(tuple)
    if k == "tuple":
        return st.tuples(*(spec_strategy(s, depth + 1) for s in spec.items))
    if k == "dict":
        lo, hi = _len_bounds(spec.lo, spec.hi)
        return st.dictionaries(spec_strategy(spec.key, depth + 1), spec_strategy(spec.elem, depth + 1),
                               min_size=0, max_size=hi)
    if k == "union":
        return st.one_of(*(spec_strategy(s, depth + 1) for s in spec.items))
    return st.sampled_from(list(spec.values) or [None])


BOUNDARY_SHARE = 0.3  # how often a number, length or character is drawn from the edge cases
REUSE_SHARE = 0.2  # how often a number or string repeats one drawn earlier in the same call


def _pick_int(rng: random.Random, lo: int, hi: int, simplest: bool = False) -> int:
    """An int in [lo, hi]: the simplest (0 when in range, else the bound nearest 0) first; edge
    values (the bounds, 0, +-1, next to the bounds) at ``BOUNDARY_SHARE``; small ones (|x| <= 3)
    as often; uniform otherwise."""
    zero = min(max(0, lo), hi)
    if simplest:
        return zero
    r = rng.random()
    if r < BOUNDARY_SHARE:
        edges = [x for x in (lo, hi, 0, 1, -1, lo + 1, hi - 1, 2) if lo <= x <= hi]
        return edges[rng.randrange(len(edges))]
    if r < 2 * BOUNDARY_SHARE:
        return rng.randint(max(lo, -3), min(hi, 3)) if max(lo, -3) <= min(hi, 3) else rng.randint(lo, hi)
    return rng.randint(lo, hi)


def _pick_len(rng: random.Random, lo: int, hi: int, simplest: bool = False) -> int:
    """A length in [lo, hi]: the shortest first, the bounds and lo + 1 often, short ones
    favoured (a uniform length, then as often the shorter of two)."""
    if simplest or hi <= lo:
        return lo
    r = rng.random()
    if r < BOUNDARY_SHARE:
        return (lo, hi, lo + 1)[rng.randrange(3)]
    a = rng.randint(lo, hi)
    return a if r < 0.65 else min(a, rng.randint(lo, hi))


def spec_value(spec: Spec | None, rng: random.Random, depth: int = 0, *, simplest: bool = False,
               memo: dict | None = None) -> Any:
    """One value of ``spec``, drawn with ``rng``: what :func:`spec_strategy` draws (the same types,
    bounds, "abc" alphabet when none was seen, floats at 3 places, None past depth 4), without
    hypothesis's engine (a few microseconds a value instead of a millisecond). Edge values --
    0, the bounds, empty and one-element containers, a repeated element or character -- come
    often, as in hypothesis, since they are the inputs that tell programs apart; ``simplest``
    gives the simplest value of every part (what hypothesis tries first). With ``memo`` (a dict
    kept for one call) a number or string repeats one drawn before in the call at ``REUSE_SHARE``
    when it fits the spec, and a list has one item copied onto another as often: ties and equal
    arguments (``f([3, 5, 3], 3)``), which hypothesis makes by copying values too."""
    value = _spec_value(spec, rng, depth, simplest, memo)
    if memo is not None and isinstance(value, (int, float, str, bytes)) and not isinstance(value, bool):
        memo.setdefault(type(value), []).append(value)
    return value


def _reused(spec: Spec, rng: random.Random, memo: dict | None) -> tuple[bool, Any]:
    """A value drawn earlier in this call that also fits ``spec``, at ``REUSE_SHARE``."""
    typ = {"int": int, "float": float, "str": str, "bytes": bytes}[spec.kind]
    earlier = memo.get(typ) if memo else None
    if not earlier or rng.random() >= REUSE_SHARE:
        return False, None
    if spec.kind == "int":
        lo, hi = _int_bounds(spec.lo, spec.hi)
        fits = [v for v in earlier if lo <= v <= hi]
    elif spec.kind == "float":
        span = max(1.0, (spec.hi - spec.lo) / 2)
        low = spec.lo - span if spec.lo < 0 else max(0.0, spec.lo - span)
        fits = [v for v in earlier if low <= v <= spec.hi + span]
    else:
        lo, hi = _len_bounds(spec.lo, spec.hi)
        alphabet = set(spec.alphabet or "abc")
        fits = [v for v in earlier if lo <= len(v) <= hi
                and set(v if spec.kind == "str" else v.decode("latin-1")) <= alphabet]
    return (True, fits[rng.randrange(len(fits))]) if fits else (False, None)


def _spec_value(spec: Spec | None, rng: random.Random, depth: int, simplest: bool, memo: dict | None) -> Any:
    if spec is None:
        return _pick_int(rng, 0, 9, simplest)
    k = spec.kind
    if k in ("int", "float", "str", "bytes") and not simplest:
        ok, v = _reused(spec, rng, memo)
        if ok:
            return v
    if k == "none":
        return None
    if k == "bool":
        return False if simplest else rng.random() < 0.5
    if k == "int":
        return _pick_int(rng, *_int_bounds(spec.lo, spec.hi), simplest=simplest)
    if k == "float":
        span = max(1.0, (spec.hi - spec.lo) / 2)
        low = spec.lo - span if spec.lo < 0 else max(0.0, spec.lo - span)
        high = spec.hi + span
        zero = min(max(0.0, low), high)
        if simplest:
            return round(zero, 3)
        r = rng.random()
        if r < BOUNDARY_SHARE:
            edges = [x for x in (low, high, 0.0, 1.0, -1.0, 0.5) if low <= x <= high]
            return round(edges[rng.randrange(len(edges))], 3)
        small_lo, small_hi = max(math.ceil(low), -3), min(math.floor(high), 3)
        if r < 2 * BOUNDARY_SHARE and small_lo <= small_hi:  # a small whole number
            return float(rng.randint(small_lo, small_hi))
        return round(rng.uniform(low, high), 3)
    if k in ("str", "bytes"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        alphabet = spec.alphabet or "abc"
        size = _pick_len(rng, lo, hi, simplest)
        if simplest:
            text = alphabet[0] * size
        elif rng.random() < BOUNDARY_SHARE / 2:  # one character repeated
            text = alphabet[rng.randrange(len(alphabet))] * size
        else:
            text = "".join(alphabet[rng.randrange(len(alphabet))] for _ in range(size))
        return text if k == "str" else text.encode()
    if depth > 4:
        return None
    if k in ("list", "set", "tuplevar"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        size = _pick_len(rng, 0 if k == "set" else lo, hi, simplest)
        if size and not simplest and rng.random() < BOUNDARY_SHARE / 2:  # repeats of a few values
            few = [spec_value(spec.elem, rng, depth + 1, memo=memo) for _ in range(rng.randint(1, 2))]
            items = [few[rng.randrange(len(few))] for _ in range(size)]
        else:
            items = [spec_value(spec.elem, rng, depth + 1, simplest=simplest, memo=memo) for _ in range(size)]
            if size >= 2 and not simplest and rng.random() < REUSE_SHARE:  # a tie: one item copied
                items[rng.randrange(size)] = items[rng.randrange(size)]
        if k == "set":
            return set(items)
        return items if k == "list" else tuple(items)
    if k == "tuple":
        return tuple(spec_value(s, rng, depth + 1, simplest=simplest, memo=memo) for s in spec.items)
    if k == "dict":
        _, hi = _len_bounds(spec.lo, spec.hi)
        size = _pick_len(rng, 0, hi, simplest)
        return {spec_value(spec.key, rng, depth + 1, simplest=simplest, memo=memo):
                spec_value(spec.elem, rng, depth + 1, simplest=simplest, memo=memo) for _ in range(size)}
    if k == "union":
        return spec_value(spec.items[0 if simplest else rng.randrange(len(spec.items))], rng, depth + 1,
                          simplest=simplest, memo=memo)
    values = list(spec.values) or [None]
    return values[0 if simplest else rng.randrange(len(values))]


def literal_source(value: Any) -> str:
    """``repr(value)``, except that a set's items are written in sorted order: a set of strings
    prints in an order that changes with ``PYTHONHASHSEED``, and the calls must not."""
    if isinstance(value, (set, frozenset)):
        items = sorted(literal_source(v) for v in value)
        if not items:
            return "set()" if isinstance(value, set) else "frozenset()"
        body = "{" + ", ".join(items) + "}"
        return body if isinstance(value, set) else f"frozenset({body})"
    if type(value) is list:
        return "[" + ", ".join(literal_source(v) for v in value) + "]"
    if type(value) is tuple:
        inner = ", ".join(literal_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if type(value) is dict:
        return "{" + ", ".join(f"{literal_source(a)}: {literal_source(b)}" for a, b in value.items()) + "}"
    return repr(value)


def format_call(func: str, args: Sequence[Any], kwargs: Sequence[tuple[str, Any]] = ()) -> str:
    """The call's source, its arguments written by :func:`literal_source` (by ``repr`` when
    nested too deep for it)."""
    try:
        parts = [literal_source(a) for a in args] + [f"{k}={literal_source(v)}" for k, v in kwargs]
    except RecursionError:
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs]
    return f"{func}({', '.join(parts)})"


def _valid_literal_call(src: str) -> bool:
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        return False
    call: Any = tree.body  # made by format_call, so an ast.Call
    try:
        for a in call.args:
            ast.literal_eval(a)
        for kw in call.keywords:
            ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


_HYPOTHESIS_HOME: list = []


def _private_hypothesis_home() -> None:
    """hypothesis caches what it learns in ``./.hypothesis`` (the directory the user runs coevo
    from): point it at a private temporary directory, removed at exit, unless the user chose one
    (``HYPOTHESIS_STORAGE_DIRECTORY``). A tool writes only where it is told to."""
    import os

    if _HYPOTHESIS_HOME or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    import atexit
    import shutil
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="coevo-hypothesis-")
    atexit.register(shutil.rmtree, home, True)
    set_hypothesis_home_dir(home)
    _HYPOTHESIS_HOME.append(home)


def generate_calls(tests: Iterable[Any], entry_point: str | None = None, n: int = 24, *, seed: int = 0,
                   include_test_inputs: bool = True, max_chars: int = 2000) -> list[str]:
    """Up to ``n`` new call expressions shaped like the calls in ``tests``, preceded by the tests'
    own literal calls when ``include_test_inputs``. Returns [] when the tests contain no usable call.

    The arguments are drawn by :func:`spec_value` from the inferred signature, with a generator
    seeded by ``seed``, the function's name and its signature (the same inputs in every run and
    process, whatever ``PYTHONHASHSEED``; another function of the same shape gets others): at most
    ``max(4 * n, 20)`` draws, keeping those that are new, at most ``max_chars`` long and literal."""
    calls = extract_calls(tests, entry_point)
    if not calls:
        return []
    func = calls[0].func
    out: list[str] = [c.source for c in calls] if include_test_inputs else []
    seen = set(out)
    seen.update(format_call(c.func, c.args, c.kwargs) for c in calls)
    if n <= 0:
        return out
    pos, kw = infer_signature(calls)
    names = [name for name, _ in kw]
    signature = ", ".join([s.describe() for s in pos] + [f"{k}={s.describe()}" for k, s in kw])
    rng = random.Random(f"coevo-consensus-inputs {seed} {func}({signature})")  # a str seed: sha512
    fresh: list[str] = []
    for attempt in range(max(4 * n, 20)):
        if len(fresh) >= n:
            break
        # as hypothesis starts: every argument at its simplest; then now and then some arguments
        # at their simplest beside random others (``f([105, 0], 0)``)
        mixed = attempt == 0 or rng.random() < 0.25
        memo: dict = {}
        try:
            args = [spec_value(s, rng, simplest=mixed and (attempt == 0 or rng.random() < 0.5), memo=memo)
                    for s in pos]
            kwvals = [spec_value(s, rng, simplest=mixed and (attempt == 0 or rng.random() < 0.5), memo=memo)
                      for _, s in kw]
            src = format_call(func, args, list(zip(names, kwvals)))
        except (TypeError, ValueError, RecursionError):  # an unhashable set element, an odd const
            continue
        if src in seen or len(src) > max_chars or not _valid_literal_call(src):
            continue
        seen.add(src)
        fresh.append(src)
    return out + fresh


# ----------------------------------------------------------------------------- output keys

OK_STATUSES = ("pass", "ok", "returned", "value")


_INT_TOKEN = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def perturb_stdin(inputs: Sequence[str], n: int = 24, *, seed: int = 0, max_chars: int = 100_000
                  ) -> list[str]:
    """Up to ``n`` new stdin inputs (reproducible for a seed, none equal to a given one), each a copy
    of one of ``inputs`` with some of its integer tokens moved a little: small values by 1-3, larger
    ones by up to half their size, non-negative ones staying non-negative. In an input of several
    lines the first line is left alone (it usually holds counts that the rest must match). Inputs
    without integers yield nothing."""
    bases = [x for x in dict.fromkeys(inputs) if isinstance(x, str) and len(x) <= max_chars]
    rng = random.Random(seed)
    seen = set(bases)
    out: list[str] = []
    spans = []
    for x in bases:
        start = x.index("\n") + 1 if "\n" in x.strip("\n") else 0
        found = [m.span() for m in _INT_TOKEN.finditer(x) if m.start() >= start]
        if found:
            spans.append((x, found))
    if not spans or n <= 0:
        return out
    for _ in range(20 * n):
        if len(out) >= n:
            break
        x, found = spans[rng.randrange(len(spans))]
        chosen = [sp for sp in found if rng.random() < 0.5] or [found[rng.randrange(len(found))]]
        pieces, last = [], 0
        for a, b in chosen:
            v = int(x[a:b])
            step = rng.choice((1, 2, 3)) if abs(v) < 10 else rng.randint(1, max(1, abs(v) // 2))
            w = v + step * rng.choice((-1, 1))
            if v >= 0:
                w = abs(w)
            pieces += [x[last:a], str(w)]
            last = b
        new = "".join(pieces) + x[last:]
        if new not in seen:
            seen.add(new)
            out.append(new)
    return out


def value_key(value: Any) -> str | None:
    """A digest of ``value``'s canonical form (what :func:`output_key` compares): kept in place of
    a value too large to keep, so that two such values agree in consensus only when equal; None
    when it holds a program object (an abstention, as :func:`output_key` makes it)."""
    import hashlib

    try:
        text = _canon(value)
    except _NoKey:
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


class _NoKey(Exception):
    """A result whose value cannot be compared here (it holds a program object)."""


def _canon(value: Any, depth: int = 0) -> str:
    if type(value) is Member:  # an enum member or numpy bool agrees with its value, as it equals it
        value = value.value
    if isinstance(value, NonPlain):  # a dropped large value is its digest; a program object has
        if value.key is None:  # none, and nothing here tells two of them apart: no key at all
            raise _NoKey
        return f"<digest {value.key}>"
    if depth > 20:
        return _repr(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int) and value.bit_length() > 4096:
        return f"{'-' if value < 0 else ''}0x{abs(value):x}"  # decimal has a digit limit, hex none
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return repr(value)
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))  # 2.0 and 2 compare equal in the tests, so they agree here
        return format(value, ".10g")
    if isinstance(value, (list, tuple)):
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        return open_ + ",".join(_canon(v, depth + 1) for v in value) + close
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canon(v, depth + 1) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted((_canon(k, depth + 1), _canon(v, depth + 1)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    return _repr(value)


def _repr(value: Any) -> str:
    """``repr(value)``, or a placeholder naming the type when the value cannot be printed (an
    int past Python's digit limit inside an object, a ``__repr__`` that raises)."""
    try:
        return repr(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def output_key(status: str | None, value: Any) -> str | None:
    """A hashable, canonical key for one result: ``None`` unless ``status`` says the code returned
    (errors, timeouts and limits are abstentions), and ``None`` for a value holding a program object
    (a ``NonPlain`` without a digest: every ``Point`` looked alike, so a wrong program returning
    ``Point(0, 0)`` agreed with the right one's ``Point(1, 2)``). Floats are compared to 10
    significant digits (an integral float equals the int), sets and dicts independently of their
    order; lists and tuples stay distinct, and so do booleans and numbers."""
    if status not in OK_STATUSES:
        return None
    try:
        return _canon(value)
    except _NoKey:
        return None


def output_keys(cells: Sequence[Sequence[Any]]) -> list[list[str | None]]:
    """Keys for a ``codes x inputs`` grid of cell results (objects with ``status`` and ``value``,
    or ``(status, value)`` pairs)."""
    out = []
    for row in cells:
        keys = []
        for cell in row:
            if isinstance(cell, tuple):
                status, value = cell[0], cell[1]
            else:
                status, value = getattr(cell, "status", None), getattr(cell, "value", None)
            keys.append(output_key(status, value))
        out.append(keys)
    return out


def consensus_inputs(task, tests: Sequence[Any], *, n_inputs: int = 24, seed: int = 0) -> list[str]:
    """The extra inputs of output consensus for one task (see :func:`consensus_keys`): call
    expressions for function tasks, stdin texts for stdio tasks; [] when none can be built."""
    if getattr(task, "kind", "function") == "stdio":
        inputs = list(dict.fromkeys(t.input for t in tests if getattr(t, "kind", None) == "stdio"))
        return inputs + perturb_stdin(inputs, n_inputs, seed=seed) if inputs else []
    return generate_calls(tests, getattr(task, "entry_point", None), n=n_inputs, seed=seed)


def consensus_from_cells(task, cells: Sequence[Sequence[Any]]) -> list[list[str | None]]:
    """Output keys of a ``codes x inputs`` grid run on :func:`consensus_inputs` (stdout compared
    as the stdio tests compare it)."""
    if getattr(task, "kind", "function") == "stdio":
        cells = [[(getattr(c, "status", None), normalize_stdout(getattr(c, "value", None))) for c in row]
                 for row in cells]
    return output_keys(cells)


def consensus_keys(executor, task, codes: Sequence[str], tests: Sequence[Any], *, n_inputs: int = 24,
                   seed: int = 0) -> tuple[list[list[str | None]], list[str]] | None:
    """Output keys of every code on extra inputs, and the inputs, for one task's pool; None when no
    input can be built (no literal call in the tests, no stdin input, fewer than two codes).

    Function tasks: the tests' own literal calls plus up to ``n_inputs`` drawn calls
    (:func:`generate_calls` with ``seed``), evaluated with ``executor.run_calls``. Stdio tasks: the
    distinct stdin inputs of the tests plus up to ``n_inputs`` perturbed ones
    (:func:`perturb_stdin`), run with ``executor.run_stdin``."""
    if len(codes) < 2:
        return None
    if getattr(task, "kind", "function") == "stdio":
        inputs = list(dict.fromkeys(t.input for t in tests if getattr(t, "kind", None) == "stdio"))
        if not inputs:
            return None
        inputs += perturb_stdin(inputs, n_inputs, seed=seed)
        cells = executor.run_stdin(task, list(codes), inputs)
        cells = [[(getattr(c, "status", None), normalize_stdout(getattr(c, "value", None))) for c in row]
                 for row in cells]
    else:
        inputs = generate_calls(tests, getattr(task, "entry_point", None), n=n_inputs, seed=seed)
        if not inputs:
            return None
        cells = executor.run_calls(task, list(codes), inputs)
    return output_keys(cells), inputs


def normalize_stdout(value: Any) -> Any:
    """Stdout compared as the stdio tests compare it: trailing whitespace of lines ignored."""
    if isinstance(value, NonPlain) and value.key is not None:  # a large stdout, dropped
        return NonPlain(value.type_name, value.truth, value.stdout_key)
    if not isinstance(value, str):
        return value
    return "\n".join(line.rstrip() for line in value.strip().splitlines())
