"""How each test runs: what goes into the sandbox, and how the parent decides the verdict.

A test becomes a :class:`Plan`:

* ``values`` (protected): the sandbox evaluates only the *holes* of the test (the candidate calls
  and what must run next to the candidate: ``f(1, [2])``, ``sorted(f(x))``, ``round(f(x), 2)``,
  ``root.left``...) and sends their values back as plain data; the parent evaluates the rest of
  the test (``== [1, 2]``, ``math.isclose(_, 3.14, rel_tol=1e-3)``, ``abs(_ - 2) < 1e-9``,
  ``set(_) == {1, 2}``...) with :func:`matrix.plain.evaluate`. The expected value never enters the
  sandbox, so exiting early, printing ``PASS``, forging ``__eq__``, returning an ``int`` subclass
  or reading the caller's frame cannot produce a pass. Call-style tests (``call`` + ``expected``)
  always take this route.
* ``exec`` (generic): tests that cannot be split (several statements, loops, ``try``, comprehensions
  or lambdas around the call, ``type(f(x)) == int``, conditional evaluation of candidate calls,
  ``check(candidate)`` functions...) run as written in a *test process* of their own, against the
  program in its own process (:mod:`matrix.sandbox.remote`): the test's text and expected values
  never enter the program's process, the program's objects reach the test only as plain data or
  as references, and the verdict is the test process's.
* ``stdio``: the program runs as ``__main__`` with the input on stdin; the parent compares stdout
  with the expected output (whitespace-normalised: lines compared as lists of whitespace-separated
  tokens, leading/trailing blank lines ignored; optional float tolerance per token).
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import re
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from matrix import plain
from matrix.sandbox.purity import walk as _walk

__all__ = ["Plan", "plan_test", "plan_call", "plan_stdin", "plain_equal", "stdout_matches",
           "MAX_TEST_CHARS"]

MAX_TEST_CHARS = 1_000_000
_BUILTINS = frozenset(vars(builtins))
# builtins that may wrap a hole inside the sandbox (a hole passed straight to them)
_WRAPPERS = frozenset({
    "list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "len", "str", "repr", "int",
    "float", "bool", "dict", "abs", "round", "isinstance", "reversed", "enumerate", "zip", "map",
    "filter", "any", "all", "hash", "ord", "chr", "bin", "hex", "oct", "iter", "next", "callable",
    "format", "ascii",
})


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))
_SCOPES = (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)


def _builtins_read(node: ast.AST) -> tuple[set[str], set[str]]:
    """The builtins' names an expression reads: (at its top level, inside a lambda or a
    comprehension). The first can be bound to the builtins for the hole's evaluation (a mapping of
    its own, read before the program's namespace); the second are read through the program's
    globals, so the cell checks that the program does not bind them (else it runs generic)."""
    top: set[str] = set()
    nested: set[str] = set()
    stack: list[tuple[ast.AST, bool]] = [(node, False)]
    push, pop = stack.append, stack.pop
    AST, Name, Attribute, Constant, Load = ast.AST, ast.Name, ast.Attribute, ast.Constant, ast.Load
    n: Any  # (dispatched on t = type(n), which mypy does not narrow)
    while stack:
        n, inner = pop()
        t = type(n)
        if t is Constant or t is Load:  # (no names below: a hole's literal arguments, a display's context)
            continue
        if t is Name:
            if n.id in _BUILTINS:
                (nested if inner else top).add(n.id)
            continue
        if t is Attribute and type(n.value) is Name and n.value.id in _STDLIB \
                and n.value.id not in _BUILTINS:  # (`collections.Counter(f(x))`: a module's name read
            nested.add(n.value.id)  # as one, checked to be the module itself, unchanged)
        inner = inner or isinstance(n, _SCOPES)
        for f in n._fields:  # (ast.iter_child_nodes' children, without its generators)
            try:
                v = getattr(n, f)
            except AttributeError:
                continue
            if isinstance(v, AST):
                push((v, inner))
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, AST):
                        push((x, inner))
    return top, nested


class _Generic(Exception):
    """The test cannot be split into sandbox values and a parent-side judgement."""


# ----------------------------------------------------------------------------- judges

_EXACT_INT = 2 ** 53  # past it an integer expected value is met by equal values only


def plain_equal(a: Any, b: Any, tol: float | None = None) -> bool:
    """``a == b`` on plain data; with ``tol``, numbers (not bools) compare with
    ``math.isclose(rel_tol=tol, abs_tol=tol)`` inside lists, tuples and dict values."""
    if tol is None:
        return bool(a == b)
    return _close(a, b, tol, 0)


def _near_int(a: float, b: int, tol: float) -> bool:
    """A float answer ``a`` meets the expected integer ``b`` (at most 2**53) within the absolute
    tolerance, or within the relative one where ``b`` is its nearest integer (``(0.1 + 0.2) *
    10**10`` meets 3000000000; ``1000000008.0`` does not meet 1000000007: red-team pass 20)."""
    if not math.isfinite(a) or abs(b) > _EXACT_INT:
        return False
    return abs(a - b) <= tol or (round(a) == b and math.isclose(a, b, rel_tol=tol, abs_tol=tol))


def _close(a, b, tol, depth):
    if depth > 200:
        return a == b
    num = (int, float)
    if type(a) in num and type(b) in num:
        if a == b:
            return True
        if type(b) is int:  # an integer expected value: two integers are exact (1000000008 is not
            # 1000000007); a float answer as _near_int says, past 2**53 (no float there stands for
            # one integer) exact (1000000008.0 passed == 1000000007 by the relative part: red-team
            # pass 20)
            return type(a) is float and _near_int(a, b, tol)
        try:
            return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)
        except OverflowError:
            return False
    if type(a) in (list, tuple) and type(a) is type(b):
        return len(a) == len(b) and all(_close(x, y, tol, depth + 1) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol, depth + 1) for k in a)
    return bool(a == b)


@dataclass(frozen=True)
class EqJudge:
    """Pass iff the first hole equals ``expected``."""

    expected: Any
    tol: float | None = None

    def __call__(self, values: list) -> bool:
        return plain_equal(values[0], self.expected, self.tol)


@dataclass(frozen=True)
class ExprJudge:
    """Pass iff the parent-side expression (with :class:`matrix.plain.Hole` nodes) is truthy.

    ``steps``: for a test of several claims (its ``assert`` statements, in order), each claim
    with the number of holes that have run when a plain run reaches it. When hole ``k`` raises or
    hangs, a plain run has already stopped at the first false claim among those that need at most
    ``k`` holes: :meth:`fails_before` finds it, and the verdict is ``fail``, not ``error``.
    ``raises``: the claims (indices into ``steps``) that a plain run checks by raising
    ``ValueError``, not ``AssertionError`` (``a, b = f(x)``: the count of values): false, they
    make the verdict ``error``."""

    tree: Any
    steps: tuple = ()
    raises: frozenset = frozenset()

    def __call__(self, values: list) -> bool:
        if not self.raises:
            return bool(plain.evaluate(self.tree, values))
        for i, (claim, _needs) in enumerate(self.steps):
            if not plain.evaluate(claim, values):
                if i in self.raises:
                    raise ValueError("the number of values to unpack does not match")
                return False
        return True

    def fails_before(self, values: list, undefined: frozenset = frozenset()) -> bool:
        """Whether a claim that a plain run judges before the hole ``len(values)`` runs is false
        (claims evaluated in order; one the parent cannot evaluate, one a plain run checks by
        raising, or one that reads a name in ``undefined`` (a ``NameError`` there) ends the
        search: the error stands)."""
        for i, (claim, needs) in enumerate(self.steps):
            if needs > len(values):
                return False
            if undefined and any(type(n) is ast.Name and n.id in undefined for n in ast.walk(claim)):
                return False
            try:
                if not plain.evaluate(claim, values):
                    return i not in self.raises
            except Exception:  # a plain run raises here too: the error stands
                return False
        return False


def _tokens(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


_INT_TOKEN = re.compile(r"[+-]?[0-9]+")
# a number as a judge reads it: ASCII only (float() and int() also read '１０', '١٠' and '1_0',
# which passed an expected "10" under a tolerance: red-team pass 20)
_NUMBER_TOKEN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def stdout_matches(out: str, expected: str, tol: float | None = None) -> bool:
    """Whitespace-normalised comparison (see module doc); ``tol`` compares numeric tokens."""
    a, b = _tokens(out), _tokens(expected)
    if a == b:
        return True
    if tol is None or len(a) != len(b):
        return False
    for la, lb in zip(a, b):
        if len(la) != len(lb):
            return False
        for x, y in zip(la, lb):
            if x == y:
                continue
            if _INT_TOKEN.fullmatch(x) and _INT_TOKEN.fullmatch(y):  # integers are exact
                if int(x) != int(y):
                    return False
                continue
            if not (_NUMBER_TOKEN.fullmatch(x) and _NUMBER_TOKEN.fullmatch(y)):
                return False
            fx, fy = float(x), float(y)
            if _INT_TOKEN.fullmatch(y):  # an expected integer: as _close reads it (_near_int)
                if not _near_int(fx, int(y), tol):
                    return False
                continue
            if not (math.isfinite(fx) and math.isfinite(fy)
                    and math.isclose(fx, fy, rel_tol=tol, abs_tol=tol)):
                return False
    return True


@dataclass(frozen=True)
class StdoutJudge:
    expected: str
    tol: float | None = None

    def __call__(self, out: str) -> bool:
        return stdout_matches(out, self.expected, self.tol)


# ----------------------------------------------------------------------------- plans

@dataclass(frozen=True)
class Plan:
    mode: str  # "values" | "exec" | "stdio" | "bad"  (see the module docstring)
    exprs: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    source: str = ""
    stdin: str = ""
    judge: Any = None  # None: report the value (run_calls / run_stdin)
    pure: bool | None = False  # None: the worker checks the holes itself
    error: str = ""
    fallback_source: str | None = field(default=None, compare=False)
    # builtins' names the holes read at their top level: the sandbox evaluates the holes with
    # these names bound to the builtins themselves, whatever the program binds (but the task's
    # entry point: :mod:`matrix.dispatch` leaves it out), docs/contracts.md
    pins: tuple[str, ...] = ()

    @property
    def fallback(self) -> Plan | None:
        """The generic plan of the same test (used when the candidate shadows a builtin that
        the parent's side of the test relies on)."""
        if self.fallback_source is None:
            return None
        return _generic_from_source(self.fallback_source)

    def probe(self) -> tuple:
        """The wire form sent to the worker (never contains an expected value, except the
        text of a generic ``exec`` test)."""
        if self.mode == "values":
            return ("values", self.exprs, self.pure, self.names, self.pins)
        if self.mode == "exec":
            return ("exec", self.source, None, ())
        if self.mode == "stdio":
            return ("stdio", self.stdin, True, ())
        raise ValueError("a bad test has no probe")


def _bad(msg: str) -> Plan:
    return Plan(mode="bad", error=msg[:1000])


def plan_stdin(stdin: str, expected: str | None = None, tol: float | None = None) -> Plan:
    judge = StdoutJudge(expected, tol) if expected is not None else None
    return Plan(mode="stdio", stdin=stdin, judge=judge, pure=True)


def plan_call(call: str, expected: str | None = None, tol: float | None = None) -> Plan:
    """A call expression, judged against ``expected`` (a literal) when given."""
    if not isinstance(call, str) or len(call) > MAX_TEST_CHARS:
        return _bad("call expression missing or too long")
    try:
        tree = ast.parse(call.strip(), mode="eval")
        compile(tree, "<test>", "eval", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return _bad(f"call does not parse: {type(exc).__name__}: {exc}")
    try:
        src = ast.unparse(tree.body)
    except RecursionError:  # 400 nested unary minus signs parse and compile, but do not unparse
        return _bad("call nests too deeply")
    judge = None
    if expected is not None:
        try:
            judge = EqJudge(plain.literal(expected), tol)
        except ValueError as exc:
            return _bad(f"expected value: {exc}")
    pins, nested = _builtins_read(tree.body)
    return Plan(mode="values", exprs=(src,), names=tuple(sorted(nested)), judge=judge, pure=None,
                pins=tuple(sorted(pins)))


def plan_test(test, tol: float | None = None) -> Plan:
    """The :class:`Plan` of a :class:`matrix.tasks.Test` (memoised: plans are immutable)."""
    fields = tuple(getattr(test, name, None) for name in _TEST_FIELDS)
    try:
        try:
            return _plan_cached(fields, tol)
        except TypeError:  # unhashable fields: plan without the cache
            return _plan(test, tol)
    except RecursionError:  # whatever step of planning meets a test nested too deeply: its cells only
        return _bad("the test nests too deeply")


_TEST_FIELDS = ("kind", "test", "input", "output", "call", "expected")


@functools.lru_cache(maxsize=65536)
def _plan_cached(fields: tuple, tol: float | None) -> Plan:
    return _plan(types.SimpleNamespace(**dict(zip(_TEST_FIELDS, fields))), tol)


def _plan(test, tol: float | None) -> Plan:
    kind = getattr(test, "kind", None)
    if kind == "stdio":
        if not isinstance(test.input, str) or not isinstance(test.output, str):
            return _bad("stdio test needs input and output strings")
        return plan_stdin(test.input, test.output, tol)
    if kind == "call":
        return plan_call(test.call, test.expected, tol)
    if kind != "assert" or not isinstance(test.test, str):
        return _bad(f"unknown test kind {kind!r}")
    src = test.test
    if len(src) > MAX_TEST_CHARS:
        return _bad("test too long")
    try:
        module = ast.parse(src, "<test>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return _bad(f"test does not compile: {type(exc).__name__}: {exc}")
    if "test" in src or "main" in src:  # test functions, TestCase classes, unittest.main()
        runs = _run_definitions(module, src)
        if runs is not None:
            if runs[0] == "bad":
                return _bad(runs[1])
            return Plan(mode="exec", source=_own_builtins(runs[1]), pure=False)
    if "solution" in src and _imports_program(module):
        return Plan(mode="exec", source=_own_builtins(src), pure=False)
    try:
        seen: set[str] = set()
        written = _Comprehensions(seen)
        if "for" in src:  # a comprehension needs the word (most tests have none: no tree walk)
            module = written.visit(module)
        if len(module.body) == 1 and isinstance(module.body[0], ast.Assert) and not _is_and(module.body[0].test):
            return _split(module.body[0].test, tol, src, seen, from_source=not written.changed)
        return _lower(module, tol, src, seen)
    except (_Generic, plain.Unsupported, plain.TooBig, RecursionError, MemoryError):
        pass
    except Exception:  # evaluating a constant part failed (e.g. 1/0): run it whole
        pass
    return _generic_plan(module, src)


# ----------------------------------------------------------------------------- generic tests

@functools.lru_cache(maxsize=4096)
def _generic_from_source(src: str) -> Plan:
    # (``src`` is a test a split plan was made from: parsed already; a verdict asking whether a
    # fallback exists, on every cell that raised, parsed it again: 0.45 s of the parent's 8 s on
    # the MBPP speed pool)
    return Plan(mode="exec", source=src, pure=False)


def _generic_plan(module: ast.Module, src: str) -> Plan:
    """The test as written, run in a test process of its own against the program's process."""
    return Plan(mode="exec", source=src, pure=False)


# ----------------------------------------------------------------------------- test functions

# A test written for a test runner (pytest-style ``def test_*():`` functions, ``unittest.TestCase``
# subclasses, pytest-style ``class Test*:``) defines its checks without running them, and often
# ends with ``unittest.main()`` (``SystemExit`` in coevo's test process) or an ``if __name__ ==
# "__main__":`` block (which never runs there: the test reads ``__name__`` from the program).
# :func:`_run_definitions` rewrites such a test so that it runs its checks in the test process:
# the runner calls and ``__main__`` blocks become ``pass`` (on the same lines), and calls of the
# test functions, then a run of the classes, are appended after the test's own text (its line
# numbers stay). The first failure or error decides, as in a plain test: an assertion that fails
# (``self.assertEqual`` included) is ``fail``, any other exception ``error``.

_RUN_TESTS = "__coevo_run_tests__"
_RUNNER_SOURCE = '''

# added by coevo: run the test's test functions and classes (docs/contracts.md, tests)
def __coevo_run_tests__(cases, classes):
    import builtins as b  # (the test's free names are the program's where it defines them)
    import unittest

    class Result(unittest.TestResult):
        first = None

        def keep(self, err):
            if self.first is None:
                self.first = err[1]
            self.stop()

        def addError(self, test, err):
            self.keep(err)

        def addFailure(self, test, err):
            self.keep(err)

        def addSubTest(self, test, subtest, err):
            if err is not None:
                self.keep(err)

        def addUnexpectedSuccess(self, test):
            self.keep((None, b.AssertionError(test.id() + " passed but is marked expectedFailure"), None))

    for cls, names in classes:
        for name in names:
            obj = cls()
            if b.hasattr(obj, "setup_method"):
                obj.setup_method(b.getattr(obj, name))
            try:
                b.getattr(obj, name)()
            finally:
                if b.hasattr(obj, "teardown_method"):
                    obj.teardown_method(b.getattr(obj, name))
    if cases:
        loader = unittest.TestLoader()
        suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in cases
                                   if b.isinstance(c, b.type) and b.issubclass(c, unittest.TestCase))
        if not suite.countTestCases():
            raise b.RuntimeError("the test's TestCase classes have no test method")
        result = Result()
        suite.run(result)
        if result.first is not None:
            raise result.first
'''


def _dotted(node: ast.AST) -> str:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return _dotted(node.value) + "." + node.attr
    if type(node) is ast.Call:
        return _dotted(node.func)
    return ""


def _runner_call(node: ast.AST | None) -> bool:
    """``unittest.main(...)`` / ``pytest.main(...)``, also in ``sys.exit(...)`` / ``exit(...)`` /
    ``SystemExit(...)``."""
    if type(node) is not ast.Call:
        return False
    name = _dotted(node.func)
    if name in ("unittest.main", "pytest.main"):
        return True
    return (name.rpartition(".")[2] in ("exit", "SystemExit") and len(node.args) == 1
            and _runner_call(node.args[0]))


def _main_guard(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (no ``else``)."""
    if type(stmt) is not ast.If or stmt.orelse:
        return False
    t = stmt.test
    if type(t) is not ast.Compare or len(t.ops) != 1 or type(t.ops[0]) is not ast.Eq:
        return False
    sides = [t.left, t.comparators[0]]
    return (any(type(x) is ast.Name and x.id == "__name__" for x in sides)
            and any(type(x) is ast.Constant and x.value == "__main__" for x in sides))


def _dropped(stmt: ast.stmt) -> bool:
    if type(stmt) is ast.Expr:
        return _runner_call(stmt.value)
    if type(stmt) is ast.Raise:
        return _runner_call(stmt.exc)
    return _main_guard(stmt)


def _required_args(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    positional = a.posonlyargs + a.args
    required = positional[:len(positional) - len(a.defaults)]
    return [x.arg for x in required] + [k.arg for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]


def _is_test_method(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _run_definitions(module: ast.Module, src: str) -> tuple[str, str] | None:
    """``("exec", source)``: the test rewritten to run its test functions and classes (see above);
    ``("bad", message)``: it defines tests, none of which coevo can run, and does nothing else;
    None: nothing to change (the test is planned as written)."""
    body = module.body
    dropped = [s for s in body if _dropped(s)]
    if not dropped and not any(type(s) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) for s in body):
        return None
    kept = [s for s in body if not _dropped(s)]
    used: set[str] = set()  # names the test itself reads (calls of its own test functions...)
    for stmt in kept:
        parts: list[Any] = [stmt]
        if isinstance(stmt, ast.ClassDef):  # a class named as a base is not run by the test
            parts = stmt.body + stmt.decorator_list + stmt.keywords
        for part in parts:
            used.update(n.id for n in ast.walk(part) if type(n) is ast.Name)
    functions: list[str] = []
    left_out: list[str] = []
    cases: list[str] = []
    with_tests: set[str] = set()  # TestCase classes that (may) have test methods
    classes: list[tuple[str, list[str]]] = []
    runs_itself = False
    for stmt in kept:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            if stmt.name in used:
                runs_itself = True
                continue
            decorators = [_dotted(d) for d in stmt.decorator_list]
            if any(d.rpartition(".")[2] == "fixture" for d in decorators):
                continue
            if isinstance(stmt, ast.AsyncFunctionDef):
                left_out.append(f"{stmt.name} (async)")
            elif any("skip" in d for d in decorators):
                left_out.append(f"{stmt.name} (skipped)")
            elif _required_args(stmt):
                why = ("hypothesis @given with a strategy coevo cannot draw values from"
                       if any(d.rpartition(".")[2] == "given" for d in decorators)
                       else "pytest fixtures or parameters")
                left_out.append(f"{stmt.name}({', '.join(_required_args(stmt))}): takes arguments coevo "
                                f"cannot provide ({why})")
            else:
                functions.append(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            bases = [_dotted(b) for b in stmt.bases]
            local = [b for b in bases if b in with_tests or b in cases]
            if any(b.rpartition(".")[2].endswith("TestCase") for b in bases) or local:
                if stmt.name in used:
                    runs_itself = True
                    continue
                cases.append(stmt.name)
                unknown = [b for b in bases if not b.rpartition(".")[2].endswith("TestCase") and b not in cases]
                if (any(_is_test_method(m) for m in stmt.body) or unknown
                        or any(b in with_tests for b in local)):
                    with_tests.add(stmt.name)
                else:
                    left_out.append(f"{stmt.name} (a TestCase without test methods)")
            elif stmt.name.startswith("Test") and not [b for b in bases if b != "object"]:
                methods = [m.name for m in stmt.body if _is_test_method(m) and isinstance(m, ast.FunctionDef)
                           and len(_required_args(m)) == 1]
                if any(isinstance(m, ast.FunctionDef) and m.name == "__init__" for m in stmt.body):
                    continue
                if not methods:  # (its test methods all take fixtures: named, as a function's are)
                    left_out.extend(f"{stmt.name}.{m.name}({', '.join(_required_args(m)[1:])}): takes arguments "
                                    "coevo cannot provide (pytest fixtures or parameters)"
                                    for m in stmt.body if _is_test_method(m) and isinstance(m, ast.FunctionDef))
                    continue
                if stmt.name in used:
                    runs_itself = True
                    continue
                classes.append((stmt.name, methods))
    cases = [c for c in cases if c in with_tests]
    if not (functions or cases or classes):
        inert = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                 ast.AnnAssign, ast.Pass)
        if left_out and not runs_itself and all(type(s) in inert or (type(s) is ast.Expr and type(s.value)
                                                                     is ast.Constant) for s in kept):
            return "bad", "the test defines no test coevo can run: " + "; ".join(left_out)
        if not dropped:
            return None
    out = _without(src, dropped, module)
    if out is None:
        return None
    tail = [f"{name}()\n" for name in functions]
    if cases or classes:
        pairs = "".join(f"({c}, {tuple(m)!r}), " for c, m in classes)
        tail = [_RUNNER_SOURCE] + tail + [f"{_RUN_TESTS}(({''.join(c + ', ' for c in cases)}), ({pairs}))\n"]
    elif tail:
        tail = ["\n# added by coevo: run the test's test functions (docs/contracts.md, tests)\n"] + tail
    new = out + ("" if out.endswith(("\n", "\r")) else "\n") + "".join(tail)
    try:
        compile(new, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return "exec", new


def _without(src: str, dropped: list, module: ast.Module) -> str | None:
    """``src`` with each of the ``dropped`` top-level statements turned into ``pass`` on the same
    lines (or, when one shares a line with another statement, the whole module unparsed)."""
    if not dropped:
        return src
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", src)
    for stmt in dropped:
        first, last = stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1
        if last >= len(lines):
            break
        head = lines[first].encode("utf-8")[:stmt.col_offset]
        rest = lines[last].encode("utf-8")[stmt.end_col_offset or 0:].decode("utf-8", "replace").strip()
        if head.strip() or (rest and not rest.startswith("#")):
            break
        for i in range(first, last + 1):
            text = lines[i]
            newline = text[len(text.rstrip("\r\n")):]
            lines[i] = (head.decode("utf-8") + "pass" if i == first else "") + newline
    else:
        return "".join(lines)
    try:
        keep = [ast.Pass() if s in dropped else s for s in module.body]
        return ast.unparse(ast.fix_missing_locations(ast.Module(body=keep, type_ignores=[]))) + "\n"
    except (RecursionError, ValueError):
        return None


# A test that imports the program as the module ``solution`` (``from solution import f``, ``import
# solution``) is a module of its own, as in the harness it was written for: its other names are the
# builtins, whatever the program defines (pytest: ``abs`` in the test file is the builtin). The test
# process resolves a test's free names from the program (an assert test runs in the program's
# namespace, as human-eval's and MBPP's harnesses exec it), so a wrong program defining ``abs`` or
# ``all`` passed such a test (red-team pass 15). :func:`_own_builtins` starts such a test by dropping
# the program's values of builtin names from its globals (on the line of its first statement, so its
# line numbers stay). ``from solution import *`` imports the program's public names, its ``abs``
# too, as in Python: such a test is left as it is.

_OWN = "__coevo_own_builtins__"


def _imports_program(module: ast.Module) -> bool:
    """The test imports the module ``solution`` (and none of it with ``*``)."""
    found = False
    for node in ast.walk(module):
        if type(node) is ast.Import:
            found = found or any(a.name == "solution" or a.name.startswith("solution.") for a in node.names)
        elif type(node) is ast.ImportFrom and not node.level and node.module is not None \
                and (node.module == "solution" or node.module.startswith("solution.")):
            if any(a.name == "*" for a in node.names):
                return False
            found = True
    return found


def _own_builtins(src: str) -> str:
    """``src`` (a test importing ``solution``, see above) reading the builtins under their names."""
    try:
        module = ast.parse(src, "<test>", "exec")
        if not _imports_program(module):
            return src
        from matrix.sandbox.remote import free_names  # as the test process finds them (imported here: rare)

        shadowable = tuple(n for n in free_names(src) if not n.startswith("__") and hasattr(builtins, n))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return src
    if not shadowable:
        return src
    header = (f"import builtins as {_OWN}; [{_OWN}.globals().pop(__coevo_n, None) for __coevo_n in "
              f"{shadowable!r}]; del {_OWN}")
    body: list[Any] = module.body
    first = 0
    while first < len(body) and (
            (first == 0 and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant
             and type(body[0].value.value) is str)
            or (type(body[first]) is ast.ImportFrom and body[first].module == "__future__")):
        first += 1
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", src)
    if first == len(body):
        out = src + ("" if src.endswith(("\n", "\r")) else "\n") + header + "\n"
    else:
        stmt = body[first]
        simple = not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For,
                                       ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
                                       *((ast.TryStar,) if hasattr(ast, "TryStar") else ())))
        at = stmt.lineno - 1
        if simple and at < len(lines):  # `HEADER; stmt` on the statement's own line
            raw = lines[at].encode("utf-8")
            lines[at] = (raw[:stmt.col_offset] + header.encode() + b"; " + raw[stmt.col_offset:]).decode("utf-8")
            out = "".join(lines)
        else:  # a compound statement (its decorators first): the header on a line of its own
            at = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])]) - 1
            out = "".join(lines[:at]) + header + "\n" + "".join(lines[at:])
    try:
        compile(out, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return src
    return out


# ----------------------------------------------------------------------------- splitting

class _Bound(ast.expr):
    """A name the test bound to a value the sandbox computes (``r = f(x)``): the parent-side
    tree of that value, spliced wherever the test reads the name."""

    _fields = ()

    def __init__(self, tree: ast.expr):
        super().__init__()
        self.tree = tree


MAX_LOWERED_STATEMENTS = 200
MAX_WRITTEN_NODES = 20_000  # syntax nodes the splitting of one test may copy (loops and comprehensions
# written out, the test's literals put in where it reads them): a hostile test must not make planning
# cost more than running it (64 copies of a 15 KB statement, or a 5,000-item literal read 300 times,
# took the parent 8-23 s before this bound; now ~0.1 s at most)


def _lower(module: ast.Module, tol, source: str, seen: set | frozenset = frozenset()) -> Plan:
    """A straight-line test of several statements as a ``values`` plan, when that changes
    nothing a plain run would show: ``import math`` at the top; ``name = EXPR`` and
    ``a, b = CALL``; bare candidate calls; ``assert`` statements (``assert a and b`` as ``assert a``
    then ``assert b``; messages are not evaluated: they only matter once the test has failed).
    The holes run in order in one namespace, as the statements would; what the test computes
    from them is judged here, and each claim knows how many holes a plain run has run when it
    reaches it (``ExprJudge.steps``: a later hole that raises or hangs is never reached when an
    earlier claim is false). A ``for`` loop over a constant is written out first
    (:func:`_unrolled`). Anything else (another loop, ``try``, a name bound twice, a bound value
    handed back to the candidate, a mutable literal that the candidate receives and the test reads
    again) raises :class:`_Generic`.
    """
    body = module.body
    if not body or len(body) > MAX_LOWERED_STATEMENTS:
        raise _Generic("size")
    sp = _Splitter(source)
    sp.names |= seen
    sp._bytes = None  # hole texts from the (substituted) trees, never from the source's columns
    imports_math = False
    while body and isinstance(body[0], ast.Import) and all(a.name == "math" and a.asname is None
                                                            for a in body[0].names):
        imports_math, body = True, body[1:]
    env: dict[str, tuple] = {}  # name -> ("const", literal node, mutable, its size) | ("bound", tree)
    loads: dict[str, int] = {}
    claims: list[ast.expr] = []
    stops: list[int] = []  # per claim: the holes that have run when a plain run reaches it
    raising: set[int] = set()  # claims a plain run checks by raising (unpacking)
    stmt: Any  # dispatched on t = type(stmt) below, which mypy does not narrow
    todo = list(body)
    done = 0
    while todo:
        stmt = todo.pop(0)
        done += 1
        if done > MAX_LOWERED_STATEMENTS:
            raise _Generic("size")
        t = type(stmt)
        if t is ast.For:
            todo[:0] = _unrolled(stmt, todo, env, loads, sp, done)
        elif t is ast.Assert:  # `assert a and b` is `assert a` then `assert b` (all(generator) alike)
            for part in _conjuncts(stmt.test, sp.names):
                claims.append(sp.conv(_substitute(part, env, loads, sp)))
                stops.append(len(sp.holes))
        elif t is ast.Assign and len(stmt.targets) == 1:
            target, value = stmt.targets[0], _substitute(stmt.value, env, loads, sp)
            if type(target) is ast.Name:
                _bind_new(env, target.id)
                if _not_constant(value):
                    tree = sp.conv(value)
                    env[target.id] = ("bound", tree)
                    if type(tree) is not plain.Hole:
                        # what the test computes runs where its statement is, read or not (red-team
                        # pass 18: ``x = f(1) + 'a'``, never read, passed): a claim that holds
                        # unless the computation raises
                        claims.append(ast.Subscript(value=ast.Tuple(elts=[tree, plain.Const(True)], ctx=ast.Load()),
                                                    slice=plain.Const(1), ctx=ast.Load()))
                        stops.append(len(sp.holes))
                else:
                    lit = sp.const(value)
                    env[target.id] = ("const", value, not _immutable(lit.value, 0),
                                      sum(1 for _ in ast.walk(value)))
            elif type(target) in (ast.Tuple, ast.List) and target.elts and \
                    all(type(e) is ast.Name for e in target.elts) and _is_sandbox_root(value):
                # unpacking iterates the candidate's value in the sandbox (tuple(...)), then
                # checks the count here, as the assignment would
                whole = sp.hole(ast.Call(func=ast.Name(id="tuple", ctx=ast.Load()), args=[value], keywords=[]))
                n = len(target.elts)
                raising.add(len(claims))  # a plain run raises ValueError: error, not fail
                claims.append(ast.Compare(left=ast.Call(func=ast.Name(id="len", ctx=ast.Load()), args=[whole],
                                                        keywords=[]),
                                          ops=[ast.Eq()], comparators=[plain.Const(n)]))
                stops.append(len(sp.holes))
                for i, e in enumerate(target.elts):
                    _bind_new(env, e.id)
                    env[e.id] = ("bound", ast.Subscript(value=whole, slice=plain.Const(i), ctx=ast.Load()))
            else:
                raise _Generic("assignment")
        elif t is ast.Expr and _is_sandbox_root(stmt.value):
            sp.conv(_substitute(stmt.value, env, loads, sp))  # a call for its effect: it must not raise
        elif t is ast.Expr and type(stmt.value) is ast.Constant or t is ast.Pass:
            continue  # a docstring or a placeholder
        else:
            raise _Generic(t.__name__)
    if not sp.holes:
        raise _Generic("no candidate call")
    if any("\0" in h for h in sp.holes):  # a name a loop renamed reached the sandbox: never expected
        raise _Generic("renamed name in a hole")
    for name in sp.sent:  # a mutable literal the candidate received: its only reader must be that call
        if loads.get(name, 0) > 1:
            raise _Generic("mutable literal shared with the candidate")
    names = sp.names - {"math"} if imports_math else sp.names
    if not claims:
        claims = [plain.Const(True)]
    tree = claims[0] if len(claims) == 1 else ast.BoolOp(op=ast.And(), values=claims)
    return Plan(mode="values", exprs=tuple(sp.holes), names=tuple(sorted(names)), pins=tuple(sorted(sp.pins)),
                judge=ExprJudge(tree, tuple(zip(claims, stops)), frozenset(raising)), pure=None,
                fallback_source=source)


def _is_and(node: ast.expr) -> bool:
    """``a and b``, or ``all(...)`` of a generator written out as a list (:class:`_Comprehensions`):
    an ``assert`` of it checks its parts one after the other and stops at the first false one."""
    return (type(node) is ast.BoolOp and type(node.op) is ast.And) or getattr(node, "_coevo_lazy", False)


def _conjuncts(node: Any, names: set) -> list[ast.expr]:
    """``a and (b and c)`` -> ``[a, b, c]``; ``all(<written-out generator>)`` -> its elements
    (``all`` joins ``names``: the program must not shadow it)."""
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        return [part for v in node.values for part in _conjuncts(v, names)]
    if getattr(node, "_coevo_lazy", False) and type(node.args[0]) is ast.List:
        names.add("all")
        return [part for v in node.args[0].elts for part in _conjuncts(v, names)]
    return [node]


MAX_UNROLLED = 64  # iterations of a test's loop written out as straight-line statements
_ITERATORS = {"range": range, "enumerate": enumerate, "zip": zip, "reversed": reversed}


def _loop_values(node: ast.expr, sp: _Splitter) -> list:
    """The elements of a loop's iterable when the parent can compute it exactly: a constant (a
    literal, a name the test bound to one) or ``range``/``enumerate``/``zip``/``reversed`` of
    constants (their names join the plan's names: a program that shadows one makes the test
    run as written)."""
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in _ITERATORS \
            and not node.keywords and not any(type(a) is ast.Starred for a in node.args):
        args = [sp.const(a).value for a in node.args]
        if node.func.id == "range" and not all(type(a) is int for a in args):
            raise _Generic("range of non-integers")
        sp.names.add(node.func.id)
        try:
            it = iter(_ITERATORS[node.func.id](*args))
        except (TypeError, ValueError) as exc:
            raise _Generic(f"loop iterable: {exc}") from None
    else:
        value = sp.const(node).value
        if type(value) not in (list, tuple, str):  # sets and dicts: the order is the sandbox's own
            raise _Generic("loop over an unordered or non-sequence value")
        it = iter(value)
    out: list = []
    for v in it:
        if len(out) >= MAX_UNROLLED:
            raise _Generic("loop too long")
        out.append(v)
    return out


def _loop_names(target: Any) -> list[Any] | None:
    """The names a ``for`` target binds: one name, or a flat tuple/list of names; else None."""
    names = [target] if type(target) is ast.Name else \
        list(target.elts) if type(target) in (ast.Tuple, ast.List) else []
    return names if names and all(type(x) is ast.Name for x in names) else None


def _unpacked(target: Any, n: int, value: Any) -> list | None:
    """What each of the ``n`` names of ``target`` gets from one element, or None when the element
    does not unpack into them (a plain run would raise)."""
    if type(target) is ast.Name:
        return [value]
    if type(value) not in (tuple, list, str) or len(value) != n:
        return None
    return list(value)


class _Literals(ast.NodeTransformer):
    """Names replaced by (copies of) literal nodes."""

    def __init__(self, literals: dict):
        self.literals = literals

    def visit_Name(self, n):
        import copy

        lit = self.literals.get(n.id)
        return n if lit is None else copy.deepcopy(lit)


# builtins that consume a whole generator (``all`` too, where an assert's claims stop with it; never ``any``,
# which stops at the first true element: a later call that raises would turn a pass into an error)
_CONSUMERS = frozenset({"all", "sum", "sorted", "list", "tuple", "set", "frozenset", "min", "max"})


class _Comprehensions(ast.NodeTransformer):
    """A test's list and set comprehensions over a constant, and generator expressions over one
    that a builtin consumes whole (``all``, ``sum``, ``sorted``...), written out as displays:
    ``[f(i) for i in range(3)]`` -> ``[f(0), f(1), f(2)]``, so that each call is a hole. Left
    as they are (the test then runs as written): comprehensions inside a candidate's call (the
    sandbox evaluates its arguments as written), several ``for`` clauses, conditions that depend
    on the candidate, nested scopes that bind the same name, more than :data:`MAX_UNROLLED`
    elements, ``any`` (it stops at the first true element) and an ``all`` that is not one of an
    assert's conjuncts: ``assert all(...)`` checks the written-out elements one after the other
    (:func:`_conjuncts`), as the generator would, but ``assert not all(...)`` would run calls
    that a plain run never makes, and one that raises would turn its pass into an error."""

    def __init__(self, names: set):
        self.names = names  # builtins the written-out iterables used (range, zip...)
        self.changed = False
        self.written = 0  # syntax nodes written out (MAX_WRITTEN_NODES)

    def visit_Assert(self, node):
        stack = [node.test]  # the assert's conjuncts: an all() among them may be written out
        while stack:
            part = stack.pop()
            if type(part) is ast.BoolOp and type(part.op) is ast.And:
                stack.extend(part.values)
            elif type(part) is ast.Call and type(part.func) is ast.Name and part.func.id == "all":
                part._coevo_conjunct = True
        return self.generic_visit(node)

    def visit_Call(self, node):
        if _is_sandbox_root(node):
            return node
        if (type(node.func) is ast.Name and node.func.id in _CONSUMERS and len(node.args) == 1
                and not node.keywords and type(node.args[0]) is ast.GeneratorExp
                and (node.func.id != "all" or getattr(node, "_coevo_conjunct", False))):
            listed = self._written(node.args[0], ast.List)
            if listed is not None:
                node.args = [listed]
                if node.func.id == "all":  # it stopped at the first false element: so do the claims
                    node._coevo_lazy = True
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        out = self._written(node, ast.List)
        return node if out is None else self.generic_visit(out)

    def visit_SetComp(self, node):
        out = self._written(node, ast.Set)
        return node if out is None else self.generic_visit(out)

    def _written(self, comp: Any, display: type) -> ast.expr | None:
        import copy

        if len(comp.generators) != 1 or comp.generators[0].is_async:
            return None
        gen = comp.generators[0]
        targets = _loop_names(gen.target)
        if targets is None:
            return None
        reads: dict[str, int] = {}
        for part in [comp.elt, *gen.ifs]:
            for n in ast.walk(part):
                if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.comprehension)):
                    return None  # a scope of its own, or a binding: not written out
                if type(n) is ast.Name:
                    reads[n.id] = reads.get(n.id, 0) + 1
        sp = _Splitter("")
        try:
            values = _loop_values(gen.iter, sp)
            self.written += sum(1 for part in [comp.elt, *gen.ifs] for _ in ast.walk(part)) * len(values)
            if self.written > MAX_WRITTEN_NODES:
                return None
            elts = []
            for v in values:
                parts = _unpacked(gen.target, len(targets), v)
                if parts is None:
                    return None
                if any(reads.get(x.id, 0) > 1 and not _immutable(p, 0) for x, p in zip(targets, parts)):
                    return None  # a mutable element the candidate may change, read again: one object
                sub = _Literals({x.id: _literal_node(p) for x, p in zip(targets, parts)})
                keep = True
                for cond in gen.ifs:
                    keep = bool(plain.evaluate(sub.visit(copy.deepcopy(cond))))
                    if not keep:
                        break
                if keep:
                    elts.append(sub.visit(copy.deepcopy(comp.elt)))
        except (_Generic, plain.Unsupported, plain.TooBig, RecursionError, MemoryError, ValueError,
                TypeError, ZeroDivisionError, IndexError, KeyError, OverflowError):
            return None
        if not elts and display is ast.Set:
            return None  # {} would be a dict
        self.names |= sp.names
        self.changed = True
        return display(elts=elts, ctx=ast.Load()) if display is ast.List else display(elts=elts)


def _literal_node(v: Any) -> ast.expr:
    text = repr(v)
    try:
        node = ast.parse(text, mode="eval").body
        back = plain.evaluate(node)
        same = type(back) is type(v) and repr(back) == text
    except (SyntaxError, plain.Unsupported, plain.TooBig, RecursionError, MemoryError, ValueError, TypeError):
        same = False
    if not same or len(text) > MAX_TEST_CHARS:
        raise _Generic("loop element without an exact literal")
    return node


def _unrolled(loop: ast.For, rest: list, env: dict, loads: dict, sp: _Splitter, tag: int) -> list:
    """A ``for`` loop of a test over a constant, written out: per element, assignments of the
    loop's targets and a copy of the body, every name the loop binds renamed apart per iteration
    (the straight-line statements a plain run executes, so the loop splits like them). Raises
    :class:`_Generic` when that is not exact: ``else``, ``break``/``continue`` (left to the
    statement check), a target that is not a name or a flat tuple of names, an element that does
    not unpack, or a name the loop binds read after it."""
    import copy

    if loop.orelse:
        raise _Generic("for-else")
    targets = _loop_names(loop.target)
    if targets is None:
        raise _Generic("loop target")
    values = _loop_values(_substitute(loop.iter, env, loads, sp), sp)
    sp.written += sum(1 for st in loop.body for _ in ast.walk(st)) * len(values)
    if sp.written > MAX_WRITTEN_NODES:
        raise _Generic("a loop too large to write out")
    bound = {x.id for x in targets}
    for st in loop.body:
        for n in ast.walk(st):
            if type(n) is ast.Name and type(n.ctx) is not ast.Load:
                bound.add(n.id)
    for st in rest:
        if any(type(n) is ast.Name and n.id in bound for n in ast.walk(st)):
            raise _Generic("a loop's name read after it")

    class Rename(ast.NodeTransformer):
        def __init__(self, k):
            self.k = k

        def visit_Name(self, n):
            if n.id in bound:
                return ast.copy_location(ast.Name(id=f"{n.id}\0{tag}.{self.k}", ctx=n.ctx), n)
            return n

    out: list = []
    for k, v in enumerate(values):
        parts = _unpacked(loop.target, len(targets), v)
        if parts is None:
            raise _Generic("a loop element that does not unpack")
        ren = Rename(k)
        for x, part in zip(targets, parts):
            out.append(ast.Assign(targets=[ren.visit(copy.deepcopy(x))], value=_literal_node(part), lineno=0))
        out.extend(ren.visit(copy.deepcopy(st)) for st in loop.body)
    return out


def _bind_new(env: dict, name: str) -> None:
    if name in env:
        raise _Generic("a name bound twice")


def _substitute(node: ast.expr, env: dict, loads: dict, sp: _Splitter) -> ast.expr:
    """``node`` with the test's own names replaced: literals by a copy of their text (marked with
    the name, to find those the candidate receives), bound values by :class:`_Bound`. Every copy
    counts towards :data:`MAX_WRITTEN_NODES` (``x = [...5,000 items]`` read 300 times took the
    parent 23 s to plan before that bound)."""
    if not env:
        return node
    sp.substituted = True  # from now on a hole may hold a bound value or a marked literal
    import copy

    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            entry = env.get(n.id)
            if entry is None:
                return n
            if type(n.ctx) is not ast.Load:
                raise _Generic("a bound name rebound")
            loads[n.id] = loads.get(n.id, 0) + 1
            if entry[0] == "bound":
                return _Bound(entry[1])
            sp.written += entry[3]
            if sp.written > MAX_WRITTEN_NODES:
                raise _Generic("a literal copied too often")
            lit = copy.deepcopy(entry[1])
            if entry[2]:
                lit._coevo_from = n.id
            return lit

        def generic_visit(self, n):
            if isinstance(n, (ast.Lambda, ast.comprehension, ast.NamedExpr)):
                raise _Generic("scope")
            return super().generic_visit(n)

    return Sub().visit(copy.deepcopy(node))


def _immutable(v, depth: int) -> bool:
    if depth > 100:
        return False
    t = type(v)
    if t in (int, float, complex, str, bytes, bool, type(None)):
        return True
    if t in (tuple, frozenset):
        return all(_immutable(x, depth + 1) for x in v)
    return False


def _not_constant(node: ast.AST) -> bool:
    """The parent cannot fold ``node`` now: it holds a candidate call or a bound value."""
    return any(_is_sandbox_root(n) or type(n) is _Bound for n, _ in _walk(node))


def _split(expr: ast.expr, tol, source: str, seen: set | frozenset = frozenset(), from_source: bool = True) -> Plan:
    sp = _Splitter(source)
    sp.names |= seen
    if not from_source:  # the tree was rewritten: hole texts from the tree, not the source's columns
        sp._bytes = None
    tree = sp.conv(expr)
    if not sp.holes:
        raise _Generic("no candidate call")
    names = tuple(sorted(sp.names))
    pins = tuple(sorted(sp.pins))
    exprs = tuple(sp.holes)
    pure = None  # decided by the worker when it compiles the holes
    # the common case `assert HOLE == CONST` / `assert CONST == HOLE`
    if (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)
            and len(exprs) == 1):
        left, right = tree.left, tree.comparators[0]
        if isinstance(left, plain.Hole) and isinstance(right, plain.Const):
            return Plan(mode="values", exprs=exprs, names=names, judge=EqJudge(right.value, tol),
                        pure=pure, fallback_source=source, pins=pins)
        if isinstance(right, plain.Hole) and isinstance(left, plain.Const):
            return Plan(mode="values", exprs=exprs, names=names, judge=EqJudge(left.value, tol),
                        pure=pure, fallback_source=source, pins=pins)
    return Plan(mode="values", exprs=exprs, names=names, judge=ExprJudge(tree), pure=pure,
                fallback_source=source, pins=pins)


def _harmless(node: ast.AST) -> bool:
    """Arguments that may travel into the sandbox next to a hole: small numbers, short strings,
    None/bools, builtin names and lambdas (sort keys). Nothing that looks like an expected value
    of any size."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, str):
            return len(v) <= 8
        return v is None or isinstance(v, (bool, int, float)) and (not isinstance(v, int) or abs(v) < 1000)
    if isinstance(node, ast.Name):
        return node.id in _BUILTINS
    if isinstance(node, ast.Lambda):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _harmless(node.operand)
    return False


class _Splitter:
    def __init__(self, source: str = ""):
        self.source = source
        self._bytes = source.encode("utf-8") if source and "\n" not in source.strip() else None
        self.holes: list[str] = []
        self.pure: list[bool | None] = []
        self.names: set[str] = set()
        self.pins: set[str] = set()  # builtins' names the holes read (Plan.pins)
        self.sent: set[str] = set()  # the test's mutable literals that went into a hole
        self.written = 0  # syntax nodes written out by loops (MAX_WRITTEN_NODES)
        self.substituted = False  # _substitute put the test's bound values or literals in a tree
        self.passed: set[str] = set()  # names an earlier hole handed to a call (``f(DATA)``)

    def hole(self, node: ast.expr) -> plain.Hole:
        if self.substituted:  # only _substitute makes _Bound nodes and marks literals
            for n, _ in _walk(node):
                if type(n) is _Bound:
                    raise _Generic("a value computed by the candidate handed back to it")
                name = getattr(n, "_coevo_from", None)
                if name is not None:
                    self.sent.add(name)
        self._order(node)
        pins, nested = _builtins_read(node)
        if nested & _STDLIB:
            # a standard module read in a hole (`datetime.date(2020, 1, 2)`, an expected value, or
            # `collections.Counter(f(x)).most_common(1)`): never computed where the program runs,
            # whose process may have patched the module's classes or inner functions and put them
            # back (review 21; red-team pass 20: `Counter.most_common`, `os.path.join`, `sys.getsizeof`
            # patched passed); the test runs generic, reading the module in a process of its own
            raise _Generic("a standard module read where the candidate runs")
        self.pins |= pins  # (`sum(10, 15)` below too: a task asking for `sum` has it unpinned, dispatch)
        self.names |= nested
        text = None
        if self._bytes is not None and node.lineno == node.end_lineno == 1:
            text = self._bytes[node.col_offset:node.end_col_offset].decode("utf-8")
        if text is None:
            text = ast.unparse(node)
        self.holes.append(text)
        self.pure.append(None)  # the worker decides (it parses the hole anyway)
        return plain.Hole(len(self.holes) - 1)

    def _order(self, node: ast.expr) -> None:
        """Notes the names ``node`` hands to a call (or calls a method of); a hole that calls nothing but builtins and
        reads such a name again runs generic. The sandbox computes a hole that reads only what
        the task's setup bound before any call (red-team pass 20: the program cannot change an
        expected value): ``f(DATA)`` then ``assert len(DATA) == 1`` read the setup's list as it
        was before the call that grew it, and a program changing its input passed (pass 30)."""
        nodes = _walk(node)
        calls = [n for n, _ in nodes if type(n) is ast.Call
                 and not (type(n.func) is ast.Name and n.func.id in _BUILTINS)]
        if not calls:
            if self.passed and any(type(n) is ast.Name and n.id in self.passed for n, _ in nodes):
                raise _Generic("a name handed to the candidate read again")
            return
        for c in calls:
            for a in (*c.args, *(k.value for k in c.keywords)):
                self.passed.update(n.id for n, _ in _walk(a) if type(n) is ast.Name)
            if type(c.func) is not ast.Name:  # (a method's object: ``DATA.append(5)`` changes DATA)
                self.passed.update(n.id for n, _ in _walk(c.func) if type(n) is ast.Name)

    def const(self, node: ast.AST) -> plain.Const:
        names: set[str] = set()
        value = plain.evaluate(node, (), names)  # Unsupported / TooBig: the test runs generic
        self.names |= names
        return plain.Const(value)

    def conv(self, node: Any) -> ast.expr:
        # node: an ast.expr, typed Any because the body dispatches on t = type(node), which mypy
        # does not narrow
        if type(node) is _Bound:
            return node.tree
        if _is_sandbox_root(node):
            return self.hole(node)
        t = type(node)
        if t in _LEAFY:  # usually a hole-free literal: one evaluation pass, no walk
            try:
                return self.const(node)
            except plain.Unsupported:
                if not _not_constant(node):
                    raise
        elif t not in _STRUCTURAL:
            return self.const(node)
        elif t is ast.Call:
            if not any(_not_constant(a) for a in (*node.args, *(k.value for k in node.keywords))):
                try:
                    return self.const(node)  # e.g. sorted([3, 1]): folded once, not at every cell
                except (plain.Unsupported, plain.TooBig, RecursionError, MemoryError):
                    raise
                except Exception:
                    # sum(10, 15) fails as the builtin: the name is the candidate's (a program
                    # defining `sum`), so the call is a hole, looked up in the program's namespace
                    # as the plain test would (the builtin's error where the program has none)
                    if isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
                        return self.hole(node)
                    raise
        elif t not in (ast.Compare, ast.BoolOp) and not _not_constant(node):
            return self.const(node)  # hole-free arithmetic: folded (and size-checked) now
        if t is ast.Compare:
            left = self.conv(node.left)
            comps = []
            for i, c in enumerate(node.comparators):
                if i > 0 and _needs_sandbox(c):
                    raise _Generic("lazily evaluated candidate call")
                comps.append(self.conv(c))
            sides = [left, *comps]
            for i, op in enumerate(node.ops):
                if type(op) in (ast.Is, ast.IsNot) and _holds_hole(sides[i]) and _holds_hole(sides[i + 1]):
                    # two values of the program cross as two copies: whether they are one object
                    # (a cache, a singleton, a kept default argument) only the program can tell
                    raise _Generic("identity of two candidate values")
            return ast.Compare(left=left, ops=node.ops, comparators=comps)
        if t is ast.BoolOp:
            vals = [self.conv(node.values[0])]
            for v in node.values[1:]:
                if _needs_sandbox(v):
                    raise _Generic("lazily evaluated candidate call")
                vals.append(self.conv(v))
            return ast.BoolOp(op=node.op, values=vals)
        if t is ast.UnaryOp:
            return ast.UnaryOp(op=node.op, operand=self.conv(node.operand))
        if t is ast.BinOp:
            return ast.BinOp(left=self.conv(node.left), op=node.op, right=self.conv(node.right))
        if t in (ast.Tuple, ast.List, ast.Set):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _Generic("starred")
            elts = [self.conv(e) for e in node.elts]
            return ast.Set(elts=elts) if t is ast.Set else t(elts=elts, ctx=ast.Load())
        if t is ast.Dict:
            if any(k is None for k in node.keys):
                raise _Generic("** in dict display")
            return ast.Dict(keys=[self.conv(k) for k in node.keys], values=[self.conv(v) for v in node.values])
        if t is ast.Call:
            func = node.func
            if isinstance(func, ast.Name) and func.id in _BUILTINS:
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    raise _Generic("starred arguments")
                direct = [a for a in node.args if _is_sandbox_root(a)] + \
                         [k.value for k in node.keywords if _is_sandbox_root(k.value)]
                others = [a for a in node.args if not _is_sandbox_root(a)] + \
                         [k.value for k in node.keywords if not _is_sandbox_root(k.value)]
                if func.id in _WRAPPERS and direct and all(_harmless(o) for o in others):
                    return self.hole(node)
                if func.id not in plain.SAFE_FUNCS:
                    raise _Generic(f"builtin {func.id} around a candidate call")
                self.names.add(func.id)
                args = [self.conv(a) for a in node.args]
                kws = []
                for k in node.keywords:
                    if isinstance(k.value, ast.Name) and k.value.id in plain.SAFE_FUNCS:
                        self.names.add(k.value.id)
                        kws.append(k)
                    else:
                        kws.append(ast.keyword(arg=k.arg, value=self.conv(k.value)))
                return ast.Call(func=func, args=args, keywords=kws)
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id == "math" and func.attr in plain.MATH_FUNCS):
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    raise _Generic("starred arguments")
                self.names.add("math")
                return ast.Call(func=func, args=[self.conv(a) for a in node.args],
                                keywords=[ast.keyword(arg=k.arg, value=self.conv(k.value)) for k in node.keywords])
            raise _Generic("call")
        if t is ast.Subscript:
            if _is_sandbox_root(node.value):
                return self.hole(node)
            sl = node.slice
            if isinstance(sl, ast.Slice):
                parts = [None if p is None else self.conv(p) for p in (sl.lower, sl.upper, sl.step)]
                sl = ast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
            else:
                sl = self.conv(sl)
            return ast.Subscript(value=self.conv(node.value), slice=sl, ctx=ast.Load())
        raise _Generic(t.__name__)

def _holds_hole(node: ast.AST) -> bool:
    """A converted subtree (:meth:`_Splitter.conv`) holds a value of the sandbox's."""
    return any(isinstance(n, plain.Hole) for n, _ in _walk(node))


def _is_sandbox_root(node: Any) -> bool:
    """A subtree that must be evaluated in the sandbox as a whole: a call of (or a name, attribute,
    subscript or method rooted at) something the candidate or the task's setup defines."""
    # node: an ast.AST, typed Any because the body dispatches on t = type(node)
    t = type(node)
    if t is ast.Name:
        return node.id not in _BUILTINS and node.id != "math"
    if t is ast.Call:
        func = node.func
        if isinstance(func, ast.Name):
            return func.id not in _BUILTINS and func.id != "math"
        if isinstance(func, (ast.Attribute, ast.Subscript, ast.Call)):
            return _is_sandbox_root(func.value if not isinstance(func, ast.Call) else func)
        return False
    if t in (ast.Attribute, ast.Subscript):
        return _is_sandbox_root(node.value)
    return False


def _needs_sandbox(node: ast.AST) -> bool:
    return any(_is_sandbox_root(n) for n, _ in _walk(node))


# displays and constants: tried as a whole first (expected values)
_LEAFY = (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp)
# nodes the parent may evaluate around holes
_STRUCTURAL = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Tuple, ast.List, ast.Set,
               ast.Dict, ast.Call, ast.Subscript)
