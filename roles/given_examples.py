"""hypothesis ``@given`` tests in a Tester's answer or a tests row, read as parametrized tests.

A property-based test (``@given(st.integers(), st.lists(st.text()))``) cannot run in the sandbox
(hypothesis is refused there, and its draws would differ from program to program). Its strategies
are read from the syntax (a whitelist of hypothesis's strategy functions with literal arguments,
never the row's own code), drawn here reproducibly (a fixed seed: every program gets the same
examples), and each drawn example becomes a parameter set, as ``@pytest.mark.parametrize`` gives
one; ``@example(...)`` rows come first. :func:`given_sets` returns None where a strategy cannot be
read so (``.map``/``.filter`` of a lambda, ``st.builds`` of a class, ``@st.composite``, a strategy
bound in the row's code): the test is then one coevo cannot run.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

DRAWS = 20  # examples drawn per @given test (fewer where its settings say max_examples is smaller)
MAX_VALUE_CHARS = 2000  # a drawn example longer than this as Python source is not used

# hypothesis.strategies functions read from a row, with the arguments that may be strategies
_STRATEGIES: dict[str, tuple[str, ...]] = {
    "integers": (), "floats": (), "booleans": (), "none": (), "just": (), "sampled_from": (),
    "text": ("alphabet",), "characters": (), "binary": (), "from_regex": (), "permutations": (),
    "lists": ("elements",), "sets": ("elements",), "frozensets": ("elements",), "tuples": ("*",),
    "dictionaries": ("keys", "values"), "one_of": ("*",), "fixed_dictionaries": ("mapping", "optional"),
    "fractions": (), "decimals": (), "complex_numbers": (), "emails": (), "uuids": (),
}
_POSITIONAL = {  # the parameter names of positional arguments that may be strategies
    "lists": ("elements",), "sets": ("elements",), "frozensets": ("elements",),
    "dictionaries": ("keys", "values"), "text": ("alphabet",), "fixed_dictionaries": ("mapping", "optional"),
}


class _Unreadable(Exception):
    pass


def _strategy_name(node: ast.expr) -> str:
    f = node.func if isinstance(node, ast.Call) else node
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.Mult, ast.Add, ast.Sub)):
        a, b = _literal(node.left), _literal(node.right)  # 10**6, 2**31 - 1
        if all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)) and abs(a) < 1 << 64 \
                and (not isinstance(node.op, ast.Pow) or 0 <= b <= 128):
            return {ast.Pow: lambda: a ** b, ast.Mult: lambda: a * b, ast.Add: lambda: a + b,
                    ast.Sub: lambda: a - b}[type(node.op)]()
    raise _Unreadable(ast.unparse(node))


def strategy(node: ast.expr, lookup: Callable[[str], ast.expr | None], depth: int = 0) -> Any:
    """The hypothesis strategy that ``node`` (a row's syntax) states; raises _Unreadable."""
    from hypothesis import strategies as st

    if depth > 20:
        raise _Unreadable("nested too deep")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # st.none() | st.integers()
        return st.one_of(strategy(node.left, lookup, depth + 1), strategy(node.right, lookup, depth + 1))
    if isinstance(node, ast.Name) and node.id not in _STRATEGIES:
        bound = lookup(node.id)  # small = st.integers(0, 9) at the row's top level
        if bound is None:
            raise _Unreadable(node.id)
        return strategy(bound, lookup, depth + 1)
    name = _strategy_name(node)
    if name not in _STRATEGIES:
        raise _Unreadable(ast.unparse(node))
    if not isinstance(node, ast.Call):
        raise _Unreadable(ast.unparse(node))
    nested = _STRATEGIES[name]
    args: list[Any] = []
    for i, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            raise _Unreadable(ast.unparse(a))
        pname = "*" if "*" in nested else (_POSITIONAL.get(name, ()) + ("",) * 8)[i]
        if name == "fixed_dictionaries" and isinstance(a, ast.Dict):
            args.append({_literal(k): strategy(v, lookup, depth + 1) for k, v in zip(a.keys, a.values)
                         if k is not None})
        elif pname and (pname in nested or pname == "*") and not (name == "text" and isinstance(a, ast.Constant)):
            args.append(strategy(a, lookup, depth + 1))
        else:
            args.append(_literal(a))
    kwargs: dict[str, Any] = {}
    for k in node.keywords:
        if k.arg is None:
            raise _Unreadable(ast.unparse(k.value))
        if k.arg in nested and not (name == "text" and isinstance(k.value, ast.Constant)):
            if name == "fixed_dictionaries" and isinstance(k.value, ast.Dict):
                kwargs[k.arg] = {_literal(x): strategy(v, lookup, depth + 1)
                                 for x, v in zip(k.value.keys, k.value.values) if x is not None}
            else:
                kwargs[k.arg] = strategy(k.value, lookup, depth + 1)
        else:
            kwargs[k.arg] = _literal(k.value)
    try:
        return getattr(st, name)(*args, **kwargs)
    except Exception as e:  # hypothesis's own check of the arguments (InvalidArgument, TypeError)
        raise _Unreadable(f"{ast.unparse(node)}: {e}") from None


def value_node(v: Any, depth: int = 0) -> ast.expr:
    """Python source for a drawn value, as an expression; raises _Unreadable for other types."""
    if depth > 50:
        raise _Unreadable("nested too deep")
    if v is None or isinstance(v, (bool, int, str, bytes, complex)):
        return ast.Constant(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return ast.Call(ast.Name("float", ast.Load()), [ast.Constant(repr(v))], [])
        return ast.Constant(v)
    if isinstance(v, list):
        return ast.List([value_node(x, depth + 1) for x in v], ast.Load())
    if isinstance(v, tuple):
        return ast.Tuple([value_node(x, depth + 1) for x in v], ast.Load())
    if isinstance(v, (set, frozenset)):
        elts = [value_node(x, depth + 1) for x in sorted(v, key=repr)]
        inner: ast.expr = ast.Set(elts) if elts else ast.Call(ast.Name("set", ast.Load()), [], [])
        if isinstance(v, frozenset):
            return ast.Call(ast.Name("frozenset", ast.Load()), [inner] if elts else [], [])
        return inner
    if isinstance(v, dict):
        return ast.Dict([value_node(k, depth + 1) for k in v], [value_node(x, depth + 1) for x in v.values()])
    raise _Unreadable(type(v).__name__)


def _draw(strats: dict[str, Any], n: int, seed: int = 0) -> list[dict[str, Any]]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from matrix.inputs import _private_hypothesis_home

    _private_hypothesis_home()
    names = list(strats)
    drawn: list[dict[str, Any]] = []

    class _Enough(Exception):
        pass

    @hseed(seed)
    @settings(max_examples=max(4 * n, 20), deadline=None, database=None, derandomize=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(st.tuples(*(strats[k] for k in names)))
    def collect(values):
        drawn.append(dict(zip(names, values)))
        if len(drawn) >= n:
            raise _Enough()

    try:
        collect()
    except _Enough:
        pass
    except Exception as e:  # an empty strategy, an odd one: unreadable
        if not drawn:
            raise _Unreadable(str(e)) from None
    return drawn


def _is_given(d: ast.expr, what: str) -> bool:
    return what.split(".")[-1] == "given" and isinstance(d, ast.Call)


def given_sets(fn: ast.FunctionDef, params: list[str], lookup: Callable[[str], ast.expr | None]
               ) -> list[dict[str, ast.expr]] | None:
    """The parameter sets of a ``@given`` test ``fn`` taking ``params`` (``self`` left out): its
    ``@example`` rows, then up to :data:`DRAWS` drawn examples (``@settings(max_examples=)``
    fewer); None where the strategies cannot be read (see the module's text)."""
    given: ast.Call | None = None
    examples: list[ast.Call] = []
    n = DRAWS
    for d in fn.decorator_list:
        name = _strategy_name(d) if isinstance(d, (ast.Call, ast.Attribute, ast.Name)) else ""
        if name == "given" and isinstance(d, ast.Call):
            if given is not None:
                return None
            given = d
        elif name == "example" and isinstance(d, ast.Call):
            examples.append(d)
        elif name == "settings" and isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg == "max_examples" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, int):
                    n = max(1, min(n, k.value.value))
    if given is None:
        return None
    try:
        named: dict[str, ast.expr] = {}
        if given.args:  # positional strategies fill the rightmost parameters, as hypothesis says
            if given.keywords or len(given.args) > len(params):
                return None
            named = dict(zip(params[len(params) - len(given.args):], given.args))
        for k in given.keywords:
            if k.arg is None or k.arg not in params:
                return None
            named[k.arg] = k.value
        if set(named) != set(params):
            return None
        strats = {k: strategy(v, lookup) for k, v in named.items()}
        sets: list[dict[str, ast.expr]] = []
        for ex in examples:
            if len(ex.args) > len(params) or any(k.arg is None for k in ex.keywords):
                return None
            row = {**dict(zip(params, ex.args)), **{str(k.arg): k.value for k in ex.keywords}}
            if set(row) != set(params):
                return None
            sets.append(row)
        seen = {ast.dump(ast.Tuple([sets[i][k] for k in params], ast.Load())) for i in range(len(sets))}
        for values in _draw(strats, n):
            nodes = {k: value_node(values[k]) for k in params}
            key = ast.dump(ast.Tuple([nodes[k] for k in params], ast.Load()))
            if key in seen or sum(len(ast.unparse(x)) for x in nodes.values()) > MAX_VALUE_CHARS:
                continue
            seen.add(key)
            sets.append(nodes)
        return sets or None
    except (_Unreadable, RecursionError, MemoryError, ValueError, TypeError):
        return None


def assumed(body: list[ast.stmt], names: set[str]) -> list[ast.stmt] | None:
    """``body`` with each top-level ``assume(cond)`` (``names``: what binds hypothesis's
    ``assume``) made an ``if cond:`` around the statements after it (an example it rejects checks
    nothing, as hypothesis discards it), and ``note(...)`` / ``event(...)`` / ``target(...)`` left
    out; None where an ``assume`` stands deeper (the test is left to be dropped)."""
    out: list[ast.stmt] = []
    for i, st in enumerate(body):
        call = st.value if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
        what = _strategy_name(call) if call is not None else ""
        if call is not None and what in ("note", "event", "target") and what in names:
            continue
        if call is not None and what == "assume" and what in names and len(call.args) == 1 and not call.keywords:
            rest = assumed(body[i + 1:], names)
            if rest is None:
                return None
            out.append(ast.If(call.args[0], rest or [ast.Pass()], []))
            return out
        if any(isinstance(n, ast.Name) and n.id == "assume" and "assume" in names for n in ast.walk(st)):
            return None
        out.append(st)
    return out
