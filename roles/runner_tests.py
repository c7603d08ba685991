"""Tests written for a test runner, as plain tests: what a Tester (a chat model above all) writes
around its asserts -- pytest functions (``parametrize`` too) and unittest classes (``self.assert*``,
``assertRaises`` / ``pytest.raises``, ``subTest``, ``setUp``) -- rewritten as plain Python that
checks exactly what they check (or dropped), each taking along the answer's imports and helpers it
uses. Used by :func:`roles.parsing.parse_tests` (see ``_function_tests`` there for the rules)."""

from __future__ import annotations

import ast
import copy
import itertools
import sys
from dataclasses import dataclass

from roles.parsing import _assert_from_stmt, _bound_names, _free_names, _mentions, _stmt_src, _top_binds

# What a Tester writes around its asserts: pytest functions and unittest classes -------------------

_TESTING_MODULES = {"pytest", "unittest", "hypothesis", "mock", "nose", "doctest"}
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"math", "collections", "itertools"}
MAX_PARAM_SETS = 100
MAX_CANDIDATES = 1000  # candidate tests read from one answer at most (bounds the parser's work)
# characters of the tests read from one answer (each carries the helpers it uses: 1,000 asserts after a
# 1,300-line helper made 18 MB of tests from 35 KB, 74 s of the parent's time; red-team pass 15)
MAX_TEST_TEXT = 1 << 18

_CMP = {"assertEqual": ast.Eq, "assertEquals": ast.Eq, "assertNotEqual": ast.NotEq,
        "assertNotEquals": ast.NotEq, "assertIs": ast.Is, "assertIsNot": ast.IsNot, "assertIn": ast.In,
        "assertNotIn": ast.NotIn, "assertGreater": ast.Gt, "assertGreaterEqual": ast.GtE,
        "assertLess": ast.Lt, "assertLessEqual": ast.LtE}
_CMP_ARGS = {"assertIn": ("member", "container"), "assertNotIn": ("member", "container"),
             "assertIs": ("expr1", "expr2"), "assertIsNot": ("expr1", "expr2"),
             "assertGreater": ("a", "b"), "assertGreaterEqual": ("a", "b"), "assertLess": ("a", "b"),
             "assertLessEqual": ("a", "b")}
# the typed equalities: (helper, argument names, what the helper is given after the two values)
_TYPED = {"assertListEqual": ("_coevo_sequence_equal", ("list1", "list2"), "list"),
          "assertTupleEqual": ("_coevo_sequence_equal", ("tuple1", "tuple2"), "tuple"),
          "assertSequenceEqual": ("_coevo_sequence_equal", ("seq1", "seq2"), None),
          "assertSetEqual": ("_coevo_set_equal", ("set1", "set2"), None),
          "assertDictEqual": ("_coevo_typed_equal", ("d1", "d2"), "dict"),
          "assertMultiLineEqual": ("_coevo_typed_equal", ("first", "second"), "str")}


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _attr_name(node: ast.AST) -> str:
    """``a.b.c`` -> ``"a.b.c"`` (``""`` for anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


# What pytest and unittest decide, as plain functions a converted test carries along (each imports
# what it needs itself): a converted test checks exactly what the text asked, never less.
_HELPER_SRC = {
    "_coevo_approx": '''
def _coevo_approx(actual, expected, rel=None, abs_=None, nan_ok=False):
    """actual == pytest.approx(expected, rel, abs_, nan_ok), a number expected (pytest's ApproxScalar)."""
    import math
    from decimal import Decimal
    from numbers import Complex

    def isnan(v):
        return v.is_nan() if isinstance(v, Decimal) else math.isnan(v)
    for tol in (rel, abs_):
        if tol is not None and not isinstance(tol, (int, float, Decimal)):
            raise TypeError(f"a tolerance must be an int, float or Decimal, got {type(tol).__name__}")
    if actual == expected:
        return True
    if not (isinstance(expected, (Complex, Decimal)) and isinstance(actual, (Complex, Decimal))):
        return False
    if isnan(abs(expected)):
        return bool(nan_ok) and isnan(abs(actual))
    if math.isinf(abs(expected)):
        return False
    diff = abs(expected - actual)
    tolerance = abs_ if abs_ is not None else 1e-12
    if isnan(tolerance) or tolerance < 0:
        raise ValueError(f"absolute tolerance can't be {tolerance}")
    if rel is None and abs_ is not None:
        return diff <= tolerance
    relative = (rel if rel is not None else 1e-6) * abs(expected)
    if isnan(relative) or relative < 0:
        raise ValueError(f"relative tolerance can't be {relative}")
    return diff <= max(relative, tolerance)''',
    "_coevo_almost_equal": '''
def _coevo_almost_equal(first, second, places=None, delta=None):
    """self.assertAlmostEqual(first, second, places, delta=delta), as unittest decides it."""
    if first == second:
        return True
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return diff <= delta
    return round(diff, 7 if places is None else places) == 0''',
    "_coevo_not_almost_equal": '''
def _coevo_not_almost_equal(first, second, places=None, delta=None):
    """self.assertNotAlmostEqual(first, second, places, delta=delta), as unittest decides it."""
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return not (first == second) and diff > delta
    return not (first == second) and round(diff, 7 if places is None else places) != 0''',
    "_coevo_count_equal": '''
def _coevo_count_equal(first, second):
    """self.assertCountEqual(first, second), as unittest decides it (unhashable items counted by ==)."""
    import collections
    s, t = list(first), list(second)
    try:
        a, b = collections.Counter(s), collections.Counter(t)
    except TypeError:
        pass
    else:
        return a == b
    gone = object()
    for i, elem in enumerate(s):
        if elem is gone:
            continue
        cnt_s = cnt_t = 0
        for j in range(i, len(s)):
            if s[j] == elem:
                cnt_s += 1
                s[j] = gone
        for j, other in enumerate(t):
            if other == elem:
                cnt_t += 1
                t[j] = gone
        if cnt_s != cnt_t:
            return False
    return all(elem is gone for elem in t)''',
    "_coevo_sequence_equal": '''
def _coevo_sequence_equal(seq1, seq2, seq_type=None):
    """self.assertSequenceEqual(seq1, seq2, seq_type=seq_type) (assertListEqual: list,
    assertTupleEqual: tuple), as unittest decides it."""
    if seq_type is not None and not (isinstance(seq1, seq_type) and isinstance(seq2, seq_type)):
        return False
    try:
        len1, len2 = len(seq1), len(seq2)
    except (TypeError, NotImplementedError):
        return False
    if seq1 == seq2:
        return True
    for i in range(min(len1, len2)):
        try:
            item1, item2 = seq1[i], seq2[i]
        except (TypeError, IndexError, NotImplementedError):
            return False
        if item1 != item2:
            return False
    return len1 == len2 and seq_type is None and type(seq1) != type(seq2)''',
    "_coevo_set_equal": '''
def _coevo_set_equal(set1, set2):
    """self.assertSetEqual(set1, set2), as unittest decides it."""
    try:
        difference1 = set1.difference(set2)
        difference2 = set2.difference(set1)
    except (TypeError, AttributeError):
        return False
    return not (difference1 or difference2)''',
    "_coevo_typed_equal": '''
def _coevo_typed_equal(first, second, kind):
    """self.assertDictEqual (kind dict) / assertMultiLineEqual (kind str), as unittest decides it."""
    return isinstance(first, kind) and isinstance(second, kind) and not first != second''',
}


def _own_builtins(src: str) -> str:
    """``src`` (one function) with the builtins it uses imported first: a test's free names are
    the program's where it defines them (a program with its own ``abs`` must not answer inside
    coevo's helpers, as it would not inside pytest's)."""
    import builtins

    fn = ast.parse(src.strip()).body[0]
    names = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and hasattr(builtins, n.id)})
    if not names:
        return src
    head, _, rest = src.strip().partition("\n")
    body_indent = " " * 4
    first = rest.lstrip("\n")
    if first.lstrip().startswith(('"""', "'''")):  # after the docstring
        quote = first.lstrip()[:3]
        end = first.index(quote, first.index(quote) + 3) + 3
        doc, rest = first[:end], first[end:]
        return f"{head}\n{doc}\n{body_indent}from builtins import {', '.join(names)}{rest}"
    return f"{head}\n{body_indent}from builtins import {', '.join(names)}\n{rest}"


_HELPER_SRC["_coevo_readouterr"] = '''
def _coevo_readouterr(out, err):
    """capsys.readouterr(): what was printed (to stdout, to stderr) since the last call."""
    import collections
    got = collections.namedtuple("CaptureResult", "out err")(out.getvalue(), err.getvalue())
    for buf in (out, err):
        buf.seek(0)
        buf.truncate()
    return got
'''
_HELPER_SRC = {name: _own_builtins(src) for name, src in _HELPER_SRC.items()}
_HELPERS = {name: ast.parse(src.strip()).body[0] for name, src in _HELPER_SRC.items()}
_RAISED = "_raised"  # the name a converted raises-with-a-pattern test binds the exception to


def _helper_call(name: str, args: list[ast.expr], kws: dict[str, ast.expr] | None = None) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), args, [ast.keyword(k, v) for k, v in (kws or {}).items()])


def _raises_try(body: list[ast.stmt], exc: ast.expr, pattern: ast.expr | None = None) -> ast.Try:
    """``try: body / except exc: pass / else: raise AssertionError(...)``; with a ``pattern``
    (``pytest.raises(match=)``, ``assertRaisesRegex``) the handler checks the message as they do:
    ``except exc as _raised: assert re.search(pattern, str(_raised))``."""
    msg = ast.Constant(f"did not raise {ast.unparse(exc)}")
    fail = ast.Raise(exc=ast.Call(ast.Name("AssertionError", ast.Load()), [msg], []), cause=None)
    handler = ast.ExceptHandler(type=exc, name=None, body=[ast.Pass()])
    if pattern is not None:
        text = ast.Call(ast.Name("str", ast.Load()), [ast.Name(_RAISED, ast.Load())], [])
        search = ast.Call(ast.Attribute(ast.Name("re", ast.Load()), "search", ast.Load()), [pattern, text], [])
        handler = ast.ExceptHandler(type=exc, name=_RAISED, body=[ast.Assert(test=search, msg=None)])
    return ast.Try(body=body, handlers=[handler], orelse=[fail], finalbody=[])


def _unittest_assert(meth: str, args: list[ast.expr], kws: list[ast.keyword]) -> ast.stmt | None:
    """The plain statement for ``self.<meth>(*args, **kws)``, or None (not a known assert method)."""
    kw = {k.arg: k.value for k in kws if k.arg}

    def arg(i: int, *names: str) -> ast.expr | None:
        if len(args) > i:
            return args[i]
        return next((kw[n] for n in names if n in kw), None)

    def claim(test: ast.expr, nargs: int) -> ast.Assert:
        return ast.Assert(test=test, msg=arg(nargs, "msg"))
    if meth in _CMP:
        names = _CMP_ARGS.get(meth, ("first", "second"))
        a, b = arg(0, names[0]), arg(1, names[1])
        if a is None or b is None:
            return None
        return claim(ast.Compare(left=a, ops=[_CMP[meth]()], comparators=[b]), 2)
    if meth in ("assertTrue", "assert_", "assertFalse"):
        x = arg(0, "expr")
        if x is None:
            return None
        return claim(x if meth != "assertFalse" else ast.UnaryOp(ast.Not(), x), 1)
    if meth in ("assertIsNone", "assertIsNotNone"):
        x = arg(0, "obj", "expr")
        if x is None:
            return None
        op = ast.Is() if meth == "assertIsNone" else ast.IsNot()
        return claim(ast.Compare(left=x, ops=[op], comparators=[ast.Constant(None)]), 1)
    if meth in ("assertIsInstance", "assertNotIsInstance"):
        x, t = arg(0, "obj"), arg(1, "cls")
        if x is None or t is None:
            return None
        test: ast.expr = ast.Call(ast.Name("isinstance", ast.Load()), [x, t], [])
        return claim(test if meth == "assertIsInstance" else ast.UnaryOp(ast.Not(), test), 2)
    if meth in _TYPED:
        helper, names, kind = _TYPED[meth]
        a, b = arg(0, names[0]), arg(1, names[1])
        if a is None or b is None:
            return None
        extra: list[ast.expr] = [ast.Name(kind, ast.Load())] if kind else []
        if meth == "assertSequenceEqual":
            seq_type = arg(3, "seq_type")
            extra = [seq_type] if seq_type is not None else []
        return claim(_helper_call(helper, [a, b, *extra]), 2)
    if meth in ("assertAlmostEqual", "assertNotAlmostEqual", "assertAlmostEquals", "assertNotAlmostEquals"):
        a, b = arg(0, "first"), arg(1, "second")
        if a is None or b is None:
            return None
        opts = {k: v for k, v in (("places", arg(2, "places")), ("delta", arg(4, "delta"))) if v is not None}
        helper = "_coevo_not_almost_equal" if "Not" in meth else "_coevo_almost_equal"
        return claim(_helper_call(helper, [a, b], opts), 3)
    if meth == "assertCountEqual":  # the same items, as many times each, in any order
        a, b = arg(0, "first"), arg(1, "second")
        if a is None or b is None:
            return None
        return claim(_helper_call("_coevo_count_equal", [a, b]), 2)
    if meth == "fail":
        return ast.Raise(exc=ast.Call(ast.Name("AssertionError", ast.Load()), list(args[:1]), []), cause=None)
    if meth == "assertRaises" and len(args) >= 2:  # assertRaises(E, f, *args, **kwargs)
        call = ast.Call(args[1], list(args[2:]), list(kws))
        return _raises_try([ast.Expr(call)], args[0])
    if meth == "assertRaisesRegex" and len(args) >= 3:  # assertRaisesRegex(E, regex, f, *args, **kwargs)
        call = ast.Call(args[2], list(args[3:]), list(kws))
        return _raises_try([ast.Expr(call)], args[0], args[1])
    return None


class _Rewrite(ast.NodeTransformer):
    """A test function's statements as plain statements: ``self.assertX(...)`` as ``assert``,
    ``with pytest.raises(E)`` / ``with self.assertRaises(E)`` as ``try``/``except``/``else``,
    ``with self.subTest(...)`` as its body, ``x == pytest.approx(v)`` (a number) as
    ``_coevo_approx(x, v)`` (pytest's rule), ``solution.f`` as ``f``, ``self.x`` (set by ``setUp``) as ``x``, and the
    parameters in ``subst`` replaced by their values."""

    def __init__(self, ctx: _TestCtx, subst: dict[str, ast.expr] | None = None,
                 self_attrs: frozenset[str] = frozenset()):
        self.ctx, self.subst, self.self_attrs = ctx, subst or {}, self_attrs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.subst:
            return copy.deepcopy(self.subst[node.id])
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name):
            if node.value.id in self.ctx.solution_mods:
                return ast.copy_location(ast.Name(node.attr, node.ctx), node)
            if node.value.id == "self" and node.attr in self.self_attrs:
                return ast.copy_location(ast.Name(node.attr, node.ctx), node)
        return self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and _is_name(call.func.value, "self"):
            new = _unittest_assert(call.func.attr, call.args, call.keywords)
            if new is not None:
                return self.visit(ast.copy_location(new, node))
        return self.generic_visit(node)

    def visit_With(self, node: ast.With) -> ast.AST | list[ast.stmt]:
        if len(node.items) == 1 and isinstance(node.items[0].context_expr, ast.Call):
            call = node.items[0].context_expr
            what = _attr_name(call.func)
            if what in ("self.subTest",):
                return [self.visit(st) for st in node.body]
            if what.endswith("pytest.raises") or (what == "raises" and "raises" in self.ctx.testing_names):
                names, allowed = ("expected_exception", "match"), {"expected_exception", "match"}
            elif what == "self.assertRaises":
                names, allowed = ("expected_exception",), {"expected_exception", "msg"}
            elif what == "self.assertRaisesRegex":
                names = ("expected_exception", "expected_regex")
                allowed = {"expected_exception", "expected_regex", "msg"}
            else:
                return self.generic_visit(node)
            kw = {k.arg: k.value for k in call.keywords}
            if what.endswith("raises"):  # pytest.raises(E, *, match=None): E alone by position
                got = {**dict(zip(names[:1], call.args)), **kw} if len(call.args) <= 1 else None
            else:
                got = {**dict(zip(names, call.args)), **kw} if len(call.args) <= len(names) else None
            # anything else (``as cm`` then checks on cm.exception, check=, a callable) is left
            # as it is: the test still needs pytest/self, and is dropped
            if got is None or set(got) - allowed or None in got or "expected_exception" not in got \
                    or len(got) < len(call.args) + len(kw) or node.items[0].optional_vars is not None:
                return self.generic_visit(node)
            pattern = got.get("match", got.get("expected_regex"))
            if what == "self.assertRaisesRegex" and pattern is None:
                return self.generic_visit(node)
            if isinstance(pattern, ast.Constant) and pattern.value is None:
                pattern = None  # match=None: any message
            body = [self.visit(st) for st in node.body]
            exc = self.visit(got["expected_exception"])
            return ast.copy_location(_raises_try(body, exc, self.visit(pattern) if pattern else None), node)
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)  # rewrites the children in place
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            sides = [node.left, node.comparators[0]]
            for i, side in enumerate(sides):
                what = _attr_name(side.func) if isinstance(side, ast.Call) else ""
                if not (what == "pytest.approx" or (what == "approx" and what in self.ctx.testing_names)):
                    continue
                assert isinstance(side, ast.Call)
                # approx(expected, rel=None, abs=None, nan_ok=False) of a plain number; of a list,
                # a dict... (or with other arguments) it is left as it is, and the test is dropped
                names = ("expected", "rel", "abs", "nan_ok")
                got = {**dict(zip(names, side.args)), **{k.arg: k.value for k in side.keywords}}
                if len(side.args) > len(names) or set(got) - set(names) or \
                        len(got) < len(side.args) + len(side.keywords) or "expected" not in got \
                        or not _is_number(got["expected"]):
                    break
                opts = {("abs_" if k == "abs" else k): v for k, v in got.items() if k != "expected"}
                close = _helper_call("_coevo_approx", [sides[1 - i], got["expected"]], opts)
                return close if isinstance(node.ops[0], ast.Eq) else ast.UnaryOp(ast.Not(), close)
        return node


def _is_number(node: ast.expr) -> bool:
    """A number written with constants and arithmetic only (``0.3``, ``-1/3``, ``2 ** 0.5``)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant):
            if not isinstance(n.value, (int, float)) or isinstance(n.value, bool):
                return False
        elif not isinstance(n, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)):
            return False
    return True


def _is_immutable(node: ast.expr) -> bool:
    try:
        v = ast.literal_eval(node)
    except Exception:
        return False

    def imm(x) -> bool:
        if isinstance(x, (tuple, frozenset)):
            return all(imm(y) for y in x)
        return x is None or isinstance(x, (bool, int, float, complex, str, bytes))
    return imm(v)


def _is_test_func(node: ast.stmt, entry: str | None, method: bool = False) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name == entry:
        return False
    if method:
        return node.name.startswith("test")
    return node.name.startswith("test") or node.name.endswith(("_test", "_tests"))


def _is_test_class(node: ast.stmt) -> bool:
    if not isinstance(node, ast.ClassDef):
        return False
    bases = {_attr_name(b).split(".")[-1] for b in node.bases}
    return "TestCase" in bases or node.name.startswith("Test") or node.name.endswith(("Test", "Tests"))


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    names = [node.test.left, *node.test.comparators]
    return any(_is_name(n, "__name__") for n in names)


@dataclass
class _Def:
    pos: tuple[int, int]  # (chunk, statement): where the answer binds the names
    src: str
    is_import: bool
    node: ast.stmt | None = None


class _TestCtx:
    """What the answer's python blocks bind at top level, for the tests to take along: imports
    (the solution's own left out: the code under test is in scope already), helper functions,
    constants. ``pytest``/``unittest`` names are never taken along: a test that still needs them
    after the rewriting is dropped."""

    def __init__(self, entry: str | None, mods: list[tuple[ast.Module, str]]):
        self.entry = entry
        self.defs: dict[str, list[_Def]] = {}
        self.solution_mods: set[str] = set()
        self.solution_names: set[str] = set()
        self.testing_names: set[str] = set()
        self.made = 0  # tests made so far (see MAX_CANDIDATES)
        self.chars = 0  # their characters (see MAX_TEST_TEXT)
        plain_imports: dict[str, str] = {}  # non-stdlib `import m` binding -> module
        for ci, (mod, src) in enumerate(mods):
            lines = src.split("\n")
            for si, st in enumerate(mod.body):
                pos = (ci, si)
                if isinstance(st, ast.ImportFrom):
                    self._import_from(st, pos)
                elif isinstance(st, ast.Import):
                    for al in st.names:
                        root, bound = al.name.split(".")[0], (al.asname or al.name).split(".")[0]
                        if root in _TESTING_MODULES:
                            self.testing_names.add(bound)
                            continue
                        if root not in _STDLIB:
                            plain_imports[bound] = root
                        text = f"import {al.name}" + (f" as {al.asname}" if al.asname else "")
                        self.defs.setdefault(bound, []).append(_Def(pos, text, True))
                elif _is_test_func(st, entry) or _is_test_class(st) or _is_main_guard(st):
                    continue
                else:
                    for name in _top_binds(st, imports=False):
                        if name != entry:
                            self.defs.setdefault(name, []).append(_Def(pos, _stmt_src(lines, st), False, st))
        if entry:  # `import solution` ... `solution.f(...)`: that module is the code under test
            for mod, _ in mods:
                for n in ast.walk(mod):
                    if isinstance(n, ast.Attribute) and n.attr == entry and isinstance(n.value, ast.Name) \
                            and n.value.id in plain_imports:
                        self.solution_mods.add(n.value.id)
            for name in self.solution_mods:
                self.defs.pop(name, None)
        if "math" not in self.defs:
            self.defs["math"] = [_Def((-1, -1), "import math", True)]
        # for the message check of pytest.raises(match=) / assertRaisesRegex (where the answer
        # imports re later, or never)
        self.defs.setdefault("re", []).insert(0, _Def((-1, -1), "import re", True))

    def _import_from(self, st: ast.ImportFrom, pos: tuple[int, int]) -> None:
        mod = st.module or ""
        root = mod.split(".")[0]
        names = [al.name for al in st.names]
        bound = [al.asname or al.name for al in st.names if al.name != "*"]
        if root in _TESTING_MODULES:
            self.testing_names.update(bound)
        elif st.level or (root not in _STDLIB and (self.entry in names or "*" in names)):
            self.solution_names.update(bound)
        elif "*" not in names:
            for al in st.names:
                text = f"from {mod} import {al.name}" + (f" as {al.asname}" if al.asname else "")
                self.defs.setdefault(al.asname or al.name, []).append(_Def(pos, text, True))

    def prelude(self, names: set[str], pos: tuple[int, int] | None) -> tuple[list[str], bool]:
        """The imports and definitions (imports first, each in the answer's order) that bind
        ``names`` -- as the module stands at ``pos`` (None: its end, where test functions run) --
        and whether every name is one a test may keep (an unknown name is left to the program)."""
        need: dict[tuple[int, int], _Def] = {}
        todo, seen, ok = sorted(names), set(), True
        while todo:
            name = todo.pop()
            if name in seen or name == self.entry or name in self.solution_names:
                continue
            seen.add(name)
            if name in self.testing_names or name in _TESTING_MODULES or name == "self":
                ok = False
                continue
            if name in _HELPERS:  # what pytest/unittest decide, as a converted test calls it
                k = list(_HELPERS).index(name)
                need[(-1, k)] = _Def((-1, k), _HELPER_SRC[name].strip(), False)
                continue
            found = [d for d in self.defs.get(name, []) if pos is None or d.pos < pos]
            if not found:
                continue
            d = found[-1]
            if d.pos not in need:
                need[d.pos] = d
                if d.node is not None:
                    todo += sorted(_free_names([d.node]) - seen)
        ds = [need[k] for k in sorted(need)]
        srcs = [d.src for d in ds if d.is_import] + [d.src for d in ds if not d.is_import]
        return list(dict.fromkeys(srcs)), ok

    def test(self, stmts: list[ast.stmt], pos: tuple[int, int] | None, source: str | None = None) -> str | None:
        """One test: ``stmts`` after what they need; None if they need pytest/unittest."""
        pre, ok = self.prelude(_free_names(stmts), pos)
        if not ok:
            return None
        self.made += 1
        if source is None:
            mod = ast.fix_missing_locations(ast.Module(body=stmts, type_ignores=[]))
            source = ast.unparse(mod)
        text = "\n".join([*pre, source])
        self.chars += len(text)
        if self.chars > MAX_TEST_TEXT:  # this one and the rest are left out
            self.made = MAX_CANDIDATES
            return None
        return text


def _has_check(nodes) -> bool:
    return any(isinstance(n, (ast.Assert, ast.Raise)) for node in nodes for n in ast.walk(node))


def _param_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef, ctx: _TestCtx) -> list[dict[str, ast.expr]] | None:
    """The parameter sets of a pytest function (``[{}]`` without ``parametrize``); None when it is
    no test that must pass alone (``skip``, ``xfail``, ``fixture``, unreadable parameters)."""
    sets: list[dict[str, ast.expr]] = [{}]
    for d in fn.decorator_list:
        what = _attr_name(d.func if isinstance(d, ast.Call) else d)
        last = what.split(".")[-1]
        if last in ("skip", "skipif", "xfail", "fixture", "skipIf", "skipUnless", "expectedFailure"):
            return None
        if last == "given" and isinstance(d, ast.Call):  # hypothesis: drawn examples as parameter sets
            from roles.given_examples import given_sets

            params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
            if params[:1] in (["self"], ["cls"]):
                params = params[1:]

            def lookup(name: str) -> ast.expr | None:
                found = ctx.defs.get(name, [])
                node = found[-1].node if found else None
                return node.value if isinstance(node, ast.Assign) and len(node.targets) == 1 else None

            drawn = given_sets(fn, params, lookup)  # type: ignore[arg-type]
            if drawn is None:
                return None
            read = {n.id for st in fn.body for n in ast.walk(st) if isinstance(n, ast.Name)}
            keys: set[str] = set()  # examples differing only where the body never reads: one test
            drawn = [x for x in drawn if not (
                (k := ast.dump(ast.Tuple([x[p] for p in params if p in read], ast.Load()))) in keys or keys.add(k))]
            sets = [{**a, **b} for a, b in itertools.islice(itertools.product(sets, drawn), MAX_PARAM_SETS)]
            continue
        if last != "parametrize" or not isinstance(d, ast.Call):
            continue
        kw = {k.arg: k.value for k in d.keywords}
        if kw.get("indirect") is not None:
            return None
        names_node = d.args[0] if d.args else kw.get("argnames")
        values_node = d.args[1] if len(d.args) > 1 else kw.get("argvalues")
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",") if n.strip()]
        elif isinstance(names_node, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts):
            names = [str(e.value) for e in names_node.elts if isinstance(e, ast.Constant)]
        else:
            return None
        if isinstance(values_node, ast.Name):  # a module-level list of cases
            found = ctx.defs.get(values_node.id, [])
            node = found[-1].node if found else None
            values_node = node.value if isinstance(node, ast.Assign) else None
        if not isinstance(values_node, (ast.List, ast.Tuple)) or not names:
            return None
        rows = []
        for el in values_node.elts:
            if isinstance(el, ast.Call) and _attr_name(el.func).endswith("param"):
                if any(k.arg == "marks" for k in el.keywords):
                    continue  # an expected failure, a skip...
                vals = list(el.args) if len(names) > 1 else el.args[:1]
            elif len(names) == 1:
                vals = [el]
            elif isinstance(el, (ast.Tuple, ast.List)):
                vals = list(el.elts)
            else:
                return None
            if len(vals) != len(names):
                return None
            rows.append(dict(zip(names, vals)))
        sets = [{**a, **b} for a, b in itertools.islice(itertools.product(sets, rows), MAX_PARAM_SETS)]
    return sets


def _function_cases(fn: ast.stmt, ctx: _TestCtx, method: bool = False, setup: list[ast.stmt] | None = None,
                    self_attrs: frozenset[str] = frozenset()) -> tuple[list[str], int]:
    """The tests of a pytest function or unittest method: one per assert when its asserts stand
    alone, else its whole body as one test; and how many were rejected."""
    if not isinstance(fn, ast.FunctionDef):  # an async test needs a runner
        return [], 1
    sets = _param_sets(fn, ctx)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    if method:
        params = params[1:]
    capture = [p for p in params if p in ("capsys", "capfd") and sets is not None and all(p not in s for s in sets)]
    params = [p for p in params if p not in capture]
    if sets is None or fn.args.vararg or fn.args.kwarg or any(set(params) != set(s) for s in sets):
        return [], 1  # fixtures, skipped or expected to fail
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    drawn = any(_attr_name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] == "given"
                for d in fn.decorator_list)
    if drawn:
        from roles.given_examples import assumed

        got = assumed(body, ctx.testing_names)  # assume(cond): the rest under `if cond:`
        if got is None:
            return [], 1
        body = got
    if capture:  # pytest's capsys: the output captured around the statements before each readouterr()
        got = _captured(body)
        if got is None:
            return [], 1
        body = got
    out: list[str] = []
    dropped = 0
    for values in sets:
        if ctx.made >= MAX_CANDIDATES:
            break
        stored = _bound_names(body)
        binds: list[ast.stmt] = []
        subst: dict[str, ast.expr] = {}
        for name, node in values.items():
            uses = sum(isinstance(n, ast.Name) and n.id == name for st in body for n in ast.walk(st))
            if name not in stored and (uses <= 1 or _is_immutable(node)):
                subst[name] = node
            else:  # a list the test mutates, or reads twice: one object, as pytest passes it
                binds.append(ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(node), lineno=0))
        rw = _Rewrite(ctx, subst, self_attrs)
        stmts = [x for st in copy.deepcopy(body) for x in _as_list(rw.visit(st))]
        stmts = [st for st in stmts if not isinstance(st, ast.Pass) and not _drop_import(st, ctx)]
        # setUp runs before every test: kept where the test reads what it sets, and where it
        # checks something or calls the code under test itself (it may fail there)
        uses_setup = bool(setup) and (_has_check(setup) or any(_mentions(st, ctx.entry) for st in setup) or any(
            isinstance(n, ast.Name) and n.id in self_attrs for st in stmts for n in ast.walk(st)))
        pre = binds + (copy.deepcopy(setup) if uses_setup and setup else [])
        if not stmts or not _has_check(pre + stmts):
            dropped += 1
            continue
        if not pre and not drawn and all(isinstance(st, ast.Assert) or _is_raises_try(st) for st in stmts):
            for st in stmts:  # asserts that stand alone: a test each
                t = ctx.test([st], None)
                if t is None:
                    dropped += 1
                else:
                    out.append(t)
            continue
        t = ctx.test(pre + stmts, None)
        if t is None:
            dropped += 1
        else:
            out.append(t)
    return out, dropped


def _readouterr(node: ast.AST) -> bool:
    """Whether ``node`` is a call ``capsys.readouterr()`` (or capfd's)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "readouterr" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id in ("capsys", "capfd") \
        and not node.args and not node.keywords


def _captured(body: list[ast.stmt]) -> list[ast.stmt] | None:
    """A test body reading pytest's ``capsys`` as plain statements: the statements before each
    ``capsys.readouterr()`` run with stdout and stderr captured, the call giving what they printed
    (``.out``, ``.err``, or unpacked); None where the fixture is read otherwise (in a loop, a
    nested block, by any other name)."""
    head = ast.parse("import io, contextlib\n_coevo_out, _coevo_err = io.StringIO(), io.StringIO()").body
    out: list[ast.stmt] = list(head)
    pending: list[ast.stmt] = []

    def flush() -> None:
        if pending:
            w = ast.parse("with contextlib.redirect_stdout(_coevo_out), contextlib.redirect_stderr(_coevo_err):\n"
                          "    pass").body[0]
            assert isinstance(w, ast.With)
            w.body = list(pending)
            out.append(w)
            pending.clear()

    class _Swap(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if _readouterr(node):
                return ast.Call(ast.Name("_coevo_readouterr", ast.Load()),
                                [ast.Name("_coevo_out", ast.Load()), ast.Name("_coevo_err", ast.Load())], [])
            return self.generic_visit(node)

    for st in body:
        uses = [n for n in ast.walk(st) if isinstance(n, ast.Name) and n.id in ("capsys", "capfd")]
        if not uses:
            pending.append(st)
            continue
        if isinstance(st, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef)) \
                or len(uses) != sum(_readouterr(n) for n in ast.walk(st)):
            return None
        flush()
        out.append(_Swap().visit(st))
    flush()
    return out


def _as_list(x) -> list[ast.stmt]:
    return x if isinstance(x, list) else [x]


def _is_raises_try(st: ast.stmt) -> bool:
    """A ``try`` made by :func:`_raises_try`."""
    return isinstance(st, ast.Try) and len(st.handlers) == 1 and len(st.orelse) == 1 and \
        isinstance(st.orelse[0], ast.Raise) and len(st.handlers[0].body) == 1 and \
        (isinstance(st.handlers[0].body[0], ast.Pass) or
         (isinstance(st.handlers[0].body[0], ast.Assert) and st.handlers[0].name == _RAISED))


def _drop_import(st: ast.stmt, ctx: _TestCtx) -> bool:
    """An import of the solution or of a testing module inside a test function: left out (the
    solution is in scope; a name it bound for pytest stays unknown, and then the test is dropped)."""
    if isinstance(st, ast.ImportFrom):
        root = (st.module or "").split(".")[0]
        names = [a.name for a in st.names]
        if root in _TESTING_MODULES:
            ctx.testing_names.update(a.asname or a.name for a in st.names)
            return True
        return bool(st.level) or (root not in _STDLIB and (ctx.entry in names or "*" in names))
    if isinstance(st, ast.Import):
        if all(a.name.split(".")[0] in _TESTING_MODULES for a in st.names):
            ctx.testing_names.update((a.asname or a.name).split(".")[0] for a in st.names)
            return True
    return False


def _class_cases(cls: ast.ClassDef, ctx: _TestCtx) -> tuple[list[str], int]:
    if any(_attr_name(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in ("skip", "skipIf")
           for d in cls.decorator_list):
        return [], 1
    setup: list[ast.stmt] = []
    attrs: set[str] = set()
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name in ("setUp", "setup_method"):
            attrs = {n.attr for n in ast.walk(st) if isinstance(n, ast.Attribute) and _is_name(n.value, "self")
                     and isinstance(n.ctx, ast.Store)}
            rw = _Rewrite(ctx, None, frozenset(attrs))
            setup = [x for s in copy.deepcopy(st.body) for x in _as_list(rw.visit(s))]
    out: list[str] = []
    dropped = 0
    for st in cls.body:
        if _is_test_func(st, ctx.entry, method=True):
            got, d = _function_cases(st, ctx, True, setup, frozenset(attrs))
            out += got
            dropped += d
    return out, dropped


def _module_cases(mod: ast.Module, src: str, ci: int, ctx: _TestCtx) -> tuple[list[str], int]:
    out: list[str] = []
    dropped = 0

    def top(st: ast.stmt, si: int) -> None:
        nonlocal dropped
        pos = (ci, si)
        if isinstance(st, ast.If) and _is_main_guard(st):
            for inner in st.body:
                top(inner, si)
            return
        if _is_test_func(st, ctx.entry):
            got, d = _function_cases(st, ctx)
        elif isinstance(st, ast.ClassDef) and _is_test_class(st):
            got, d = _class_cases(st, ctx)
        elif isinstance(st, ast.With):
            new = _as_list(_Rewrite(ctx).visit(copy.deepcopy(st)))
            t = ctx.test(new, pos) if len(new) == 1 and _is_raises_try(new[0]) else None
            got, d = ([t], 0) if t else ([], 0)
        else:
            a = _assert_from_stmt(st, src)
            if a is None:
                return
            node = ast.parse(a).body[0]
            rw = _Rewrite(ctx)
            new = rw.visit(copy.deepcopy(node))
            same = ast.dump(new) == ast.dump(node)
            t = ctx.test([new], pos, a if same else None)
            got, d = ([t], 0) if t else ([], 1)
        out.extend(got)
        dropped += d

    for si, st in enumerate(mod.body):
        if ctx.made >= MAX_CANDIDATES:
            break
        top(st, si)
    return out, dropped
