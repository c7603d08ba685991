"""Candidate calls ("probes") for the units of a module, without running anything.

A :class:`Probe` is a short program in a fixed shape: optionally a constructor call bound to a
variable, then calls of functions or methods (or a property read), each argument a Python source
string (a literal, a constructor call of one of the module's classes, an enum member, a lambda).
The same sources go into the sandbox (evaluated in the module's namespace) and, for the kept
probes, into the written test, so what is asserted is exactly what was run.

Where arguments come from (:class:`InputGenerator`):

* the parameter's :class:`~coevo.testgen.specs.Spec` (type hint, default, usage, name), each with a
  pool of typical and edge values (``0``, ``-1``, ``''``, ``[]``, ...), widened with the constants
  of the function's body and of the module (``c``, ``c - 1``, ``c + 1``: the values at which
  comparisons flip);
* one-parameter-at-a-time variations around a typical call, and seeded random combinations;
* hypothesis strategies built from the specs (drawn reproducibly, no example database);
* calls written in the docstrings (``>>> f(2)``, ``>>> s = Stack()`` / ``>>> s.push(1)``);
* :meth:`InputGenerator.mutate`: small changes of a probe that reached new lines or branches (a
  number moved by one or negated, a character added or dropped, an element appended or removed, a
  method call inserted or deleted), the coverage-guided loop's step.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import doctest
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from coevo.testgen.specs import (
    ANY,
    INT,
    Spec,
    container_keys,
    guessed_by_name,
    infer_param,
    module_globals,
    names_checked,
)
from coevo.testgen.target import ModuleInfo, Param, Unit, _constants, _params

__all__ = ["Step", "Probe", "InputGenerator", "var_name"]

_MAX_SRC = 400


@dataclass(frozen=True)
class Step:
    kind: str  # "call" | "attr"
    callee: str  # "mean", "Stack", "stack.push", "Stack.from_list", "stack.size"
    args: tuple[str, ...] = ()
    kwargs: tuple[tuple[str, str], ...] = ()
    bind: str | None = None
    unit: str | None = field(default=None, compare=False)  # qualname of the unit called

    def wire(self) -> list:
        return [self.kind, self.callee, list(self.args), [list(k) for k in self.kwargs], self.bind]

    def source(self) -> str:
        if self.kind == "attr":
            return self.callee
        if self.kind == "argv":  # the command line the next calls see (after sys.argv[0])
            return f"sys.argv[1:] = {self.args[0]}"
        if self.kind == "file":  # a file the next calls read, in the directory the test runs in
            write = "write_bytes" if self.args[0].lstrip()[:1] in ("b", "B") else "write_text"
            return f"pathlib.Path({self.callee!r}).{write}({self.args[0]})"
        parts = list(self.args) + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.callee}({', '.join(parts)})"


@dataclass(frozen=True)
class Probe:
    unit: str  # the unit this probe is about (qualname)
    steps: tuple[Step, ...]
    origin: str = field(default="pool", compare=False)  # pool | random | hypothesis | docstring | mutation | model

    def wire(self) -> list:
        return [s.wire() for s in self.steps]

    def source(self) -> str:
        return "; ".join((f"{s.bind} = " if s.bind else "") + s.source() for s in self.steps)

    def size(self) -> int:
        return sum(len(s.source()) for s in self.steps)


def var_name(class_name: str, taken: set[str]) -> str:
    """``BankAccount`` -> ``bank_account`` (``_obj`` appended when the module uses the name)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", class_name).lower().strip("_") or "obj"
    if not s.isidentifier() or s in taken or s in _RESERVED:
        s = s + "_obj" if s.isidentifier() else "obj"
    return s


_RESERVED = frozenset({"pytest", "math", "re", "result", "datetime", "self", "len", "list", "dict",
                       "set", "str", "int", "float", "type", "id", "input", "object", "print"})

_INTS = [5, 0, 1, -1, 2, 3, 10, -7, 100, 42, 9, 13, 1000, 4, -100, 21, 7, 25, 97, 64]
_FLOATS = [2.5, 0.0, 1.0, -1.0, 0.5, 3.75, -2.25, 100.0, 1e-06, 12.125, 0.1]
_STRS = ["hello", "", "a", "abc", "Hello, World!", "racecar", "  spaced out  ", "123", "a1b2c3",
         "x,y,z", "UPPER lower", "A", "aaa", "ab cd ef", "tab\there", "line1\nline2", "12.5", "-42",
         "hello world", "Zz"]
_INT_LISTS = ["[3, 1, 2]", "[]", "[7]", "[1, 2, 3, 4]", "[5, 5, 5]", "[-2, 0, 9, -7]", "[10, 20]",
              "[4, 1, 3, 1, 5, 9, 2, 6]", "[0]", "[-1, -5, -3]"]
_ANY = ["5", "'abc'", "[3, 1, 2]", "None", "0", "''", "2.5", "True", "[]", "-1", "{'a': 1}", "(1, 2)"]
_CALLABLES = ["lambda x: x", "abs", "len", "lambda x: -x", "lambda x: x > 0", "str", "lambda x: x * 2",
              "bool"]
# (a hint saying how many arguments: ``Callable[[], T]`` is called with none, ``Callable[[int, int], int]`` two;
# some that raise, for the code's handling of a failing callable: ``retry(lambda: 1 / 0)``)
# and ones that raise on their first call (or first two, three) and return 5 after, for code that
# calls again (``retry(func, attempts=3)``); each evaluation of the source is a fresh one
_FAILS_THEN_5 = "(lambda calls: lambda: 5 if calls.append(1) or len(calls) > {} else 1 / 0)([])"
_CALLABLES_BY_ARITY = {0: ["lambda: 5", "lambda: 1 / 0", _FAILS_THEN_5.format(1), "int", _FAILS_THEN_5.format(2),
                           "lambda: 'hello'", "lambda: int('x')", _FAILS_THEN_5.format(3), "list",
                           "lambda: None", "dict"],
                       2: ["lambda x, y: x + y", "max", "min", "lambda x, y: x", "pow", "lambda x, y: x < y"]}


_FORMAT_NAMES = frozenset({"format", "fmt", "format_string", "format_spec", "template"})
_FORMATS = ["'{}'", "'{:d}'", "'{} {}'", "'{name}'", "'{:>5}'", "'%s'", "'%d'"]
_STD_ARGS = {"date": ["2024, 2, 29", "2023, 1, 1", "1999, 12, 31", "2024, 12, 25"],
             "datetime": ["2024, 2, 29, 12, 30", "2023, 1, 1, 0, 0", "1999, 12, 31, 23, 59, 59"],
             "decimal": ["'2.50'", "'0'", "'-1.25'", "'100'"],
             "fraction": ["1, 3", "0, 1", "-5, 2", "7, 1"]}
# what text files hold, for a stream parameter: lines, key = value pairs, comments, quotes
_TEXT_FILES = ["hello\nworld\n", "", "a=1\nb=2\n", "key = value\n# a comment\nname='two words'\n",
               "one line without an end", "first\n\n  indented\n\ttab\n", "[section]\nx = 1\n",
               "name,age\nbob,42\n", 'q="a \\"quoted\\" word"\r\nempty=\n']
_STD_CLASSES = {"date": ("datetime", "date"), "datetime": ("datetime", "datetime"),
                "decimal": ("decimal", "Decimal"), "fraction": ("fractions", "Fraction")}


def std_sources(tree: ast.Module) -> dict[str, str | None]:
    """How a call written in the module's namespace names the standard library's date, datetime,
    Decimal and Fraction: the module's own name for the class (``from datetime import date``), or
    its module's (``import decimal``: ``decimal.Decimal``), or a name the module leaves free
    (``datetime.date``, ``Decimal``: provided where the calls run, imported by the test); None
    where there is none (a module's own ``date`` that is something else)."""
    mods: dict[str, str] = {}
    classes: dict[str, tuple[str, str]] = {}
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.partition(".")[0]
                bound.add(name)
                if a.asname or "." not in a.name:
                    mods[name] = a.name
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                bound.add(a.asname or a.name)
                if node.level == 0 and node.module:
                    classes[a.asname or a.name] = (node.module, a.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    out: dict[str, str | None] = {}
    for kind, (m, c) in _STD_CLASSES.items():
        src = next((n for n, v in classes.items() if v == (m, c)), None)
        if src is None:
            src = next((f"{n}.{c}" for n, v in mods.items() if v == m), None)
        if src is None:
            if m == "datetime" and "datetime" not in bound:
                src = f"datetime.{c}"
            elif c not in bound:
                src = c
        out[kind] = src
    return out


def _const(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None


def argv_lists(tree: ast.Module) -> list[str]:
    """Command lines (list sources, without ``sys.argv[0]``) for the module's argparse parsers,
    from their ``add_argument`` calls: the required positionals with a typical value, then each
    option alone on top, another value of a typed or choice positional, nothing, an unknown
    option (``--help`` and ``--version`` are left out: their text is the Python version's)."""
    positionals, options = [], []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        action = _const(kw["action"]) if "action" in kw else None
        if action in ("help", "version") or "-h" in names or "--help" in names:
            continue
        typ = kw["type"].id if isinstance(kw.get("type"), ast.Name) else None
        choices = _const(kw["choices"]) if "choices" in kw else None
        choices = [str(c) for c in choices] if isinstance(choices, (list, tuple)) and choices else None
        values = choices or {"int": ["5", "0", "x"], "float": ["2.5", "-40", "x"]}.get(typ) or ["hello", "a1"]
        nargs = _const(kw["nargs"]) if "nargs" in kw else None
        if not names[0].startswith("-"):
            positionals.append((values, nargs))
        else:
            flag = max(names, key=len)
            flagged = action in ("store_true", "store_false", "count", "store_const", "append_const")
            options.append((flag, None if flagged else (values[1:] if choices and len(choices) > 1 else values)))
    if not positionals and not options:
        return []
    base = [v[0] for v, nargs in positionals if nargs not in ("?", "*")]
    lists = [base]
    for flag, values in options:
        lists.append(base + [flag] + ([values[0]] if values else []))
    for k, (values, _) in enumerate(positionals):
        for other in values[1:3]:
            lists.append([other if j == k else v[0] for j, (v, _) in enumerate(positionals)])
    lists.append(base[:-1] if base else ["extra"])
    lists.append(base + ["--no-such-option"])
    out = []
    for xs in lists:
        src = _lit(list(xs))
        if src not in out:
            out.append(src)
    return out


def _argv_calls(body: list) -> tuple[bool, set[str]]:
    """(whether ``body`` reads ``sys.argv``: ``.parse_args()`` with no arguments, ``sys.argv``
    itself; the names ``.parse_args(NAME)`` parses)."""
    reads, parsed = False, set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Attribute) and n.attr == "argv" and isinstance(n.value, ast.Name) \
                    and n.value.id == "sys" and isinstance(n.ctx, ast.Load):
                reads = True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and n.func.attr in ("parse_args", "parse_known_args", "parse_intermixed_args"):
                given = n.args[:1] + [k.value for k in n.keywords if k.arg == "args"]
                if not given or (isinstance(given[0], ast.Constant) and given[0].value is None):
                    reads = True
                elif isinstance(given[0], ast.Name):
                    parsed.add(given[0].id)
    return reads, parsed


def argv_readers(tree: ast.Module) -> tuple[set[str], dict[str, set[str]]]:
    """The module's functions that read ``sys.argv`` (themselves or through another of its
    functions called without arguments), and for each function the parameters it hands to an
    argparse parser (itself or through another of its functions)."""
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    reads: set[str] = set()
    parsed: dict[str, set[str]] = {}
    for name, f in funcs.items():
        r, ps = _argv_calls(f.body)
        if r:
            reads.add(name)
        params = {a.arg for a in f.args.args + f.args.kwonlyargs}
        parsed[name] = ps & params
    for _ in range(3):  # through the module's own functions (main -> parse_args() -> parser)
        for name, f in funcs.items():
            params = [a.arg for a in f.args.args]
            for n in ast.walk(f):
                if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in funcs):
                    continue
                callee = n.func.id
                if callee in reads and not n.args and not n.keywords:
                    reads.add(name)
                cparams = [a.arg for a in funcs[callee].args.args]
                for j, a in enumerate(n.args):
                    if isinstance(a, ast.Name) and a.id in params and j < len(cparams) \
                            and cparams[j] in parsed.get(callee, ()):
                        parsed[name].add(a.id)
    return reads, {k: v for k, v in parsed.items() if v}


def _lit(v) -> str:
    from coevo.testgen.literals import NotLiteral, literal

    try:
        return literal(v)
    except NotLiteral:
        return repr(v)


def project_classes(module: ModuleInfo) -> dict[str, ast.ClassDef]:
    """The classes ``module`` imports by name at its top level from other modules of its own
    project (under its import root: ``from .money import Money``, ``from shop.money import Money
    as M``), by the name the module binds, with their definitions (parsed from their source)."""
    out: dict[str, ast.ClassDef] = {}
    root = Path(module.root).resolve()
    parsed: dict[Path, ast.Module | None] = {}
    for node in module.tree.body:
        if not isinstance(node, ast.ImportFrom) or any(a.name == "*" for a in node.names):
            continue
        if node.level:
            package = module.name.split(".")
            if Path(module.path).name != "__init__.py":
                package = package[:-1]
            if node.level - 1 > len(package):
                continue
            base = package[:len(package) - (node.level - 1)]
            dotted = base + (node.module.split(".") if node.module else [])
        elif node.module:
            dotted = node.module.split(".")
        else:
            continue
        if not dotted:
            continue
        where = root.joinpath(*dotted)
        path = next((c for c in (where.with_suffix(".py"), where / "__init__.py") if c.is_file()), None)
        if path is None or path.resolve() == Path(module.path).resolve():
            continue
        if path not in parsed:
            try:
                parsed[path] = ast.parse(path.read_text(encoding="utf-8")) if path.stat().st_size < 1 << 20 else None
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                parsed[path] = None
        tree = parsed[path]
        if tree is None:
            continue
        defs = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        for a in node.names:
            if a.name in defs:
                out[a.asname or a.name] = defs[a.name]
    return out


def _lookup_of(n: ast.AST) -> tuple[tuple[ast.expr, ast.expr] | None, str]:
    """``((looked up, container), how)`` where node ``n`` looks a value up in another: ``"item"``
    for ``q in p``, ``p.index(q)``, ``p.count(q)``, ``p.remove(q)``; ``"key"`` for ``p[q]``,
    ``p.get(q)``, ``p.pop(q)``, ``p.setdefault(q)``; ``(None, "")`` otherwise."""
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.In, ast.NotIn)):
        return (n.left, n.comparators[0]), "item"
    if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
        return (n.slice, n.value), "key"
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args:
        if n.func.attr in ("index", "count", "remove"):
            return (n.args[0], n.func.value), "item"
        if n.func.attr in ("get", "pop", "setdefault"):
            return (n.args[0], n.func.value), "key"
    return None, ""


def _self_attrs_as_names(stmts, names: dict[str, str], load_only: bool = False) -> list:
    """Copies of ``stmts`` with each ``self.<attr>`` of ``names`` read as the bare name it maps to
    (``self.values`` -> ``values``; only where it is read, with ``load_only``), so that what a
    method does with a kept constructor argument reads as done with that argument."""

    class Back(ast.NodeTransformer):
        def visit_Attribute(self, node):
            if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in names \
                    and (not load_only or isinstance(node.ctx, ast.Load)):
                return ast.copy_location(ast.Name(names[node.attr], ast.Load()), node)
            return self.generic_visit(node)

    return [Back().visit(copy.deepcopy(stmt)) for stmt in stmts]


# the types a method named for one (``repr_dict``, ``visit_list``) is dispatched on, as specs
_DISPATCHED_TYPES = {"dict": Spec("dict", (ANY, ANY)), "list": Spec("list", (ANY,)),
                     "tuple": Spec("tuple", (ANY, Ellipsis)), "set": Spec("set", (ANY,)),
                     "frozenset": Spec("frozenset", (ANY,)), "str": Spec("str"), "int": Spec("int"),
                     "float": Spec("float"), "bytes": Spec("bytes"), "bool": Spec("bool"),
                     "complex": Spec("complex"), "NoneType": Spec("none")}


_URLS = ("http://user:pw@example.com:8080/a/b;p?q=1&r=2#frag", "https://example.com/path/page.html",
         "//example.com/a/b?c=d", "ftp://ftp.example.com/pub/file.txt", "mailto:someone@example.com",
         "/a/b/../c/./d?x=1#top", "http://[::1]:80/", "a=1&b=2&b=x+y%20z", "a%20b%2Fc%zz+d")


def _dispatch_prefixes(tree: ast.Module) -> list[str]:
    """The texts joined to a type's name (``type(x).__name__``, ``x.__class__.__name__``, or a
    name bound to one) in ``tree``: ``'repr_' + typename`` -> ``['repr_']``."""
    def type_name(x) -> bool:
        if not (isinstance(x, ast.Attribute) and x.attr == "__name__"):
            return False
        v = x.value
        return (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "type"
                and len(v.args) == 1) or (isinstance(v, ast.Attribute) and v.attr == "__class__")
    bound = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and type_name(n.value)
             for t in n.targets if isinstance(t, ast.Name)}

    def is_type_name(x) -> bool:
        return type_name(x) or (isinstance(x, ast.Name) and x.id in bound)
    out: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and is_type_name(n.right) and \
                isinstance(n.left, ast.Constant) and isinstance(n.left.value, str) and n.left.value:
            out.append(n.left.value)
        elif isinstance(n, ast.JoinedStr) and len(n.values) == 2 and isinstance(n.values[0], ast.Constant) \
                and isinstance(n.values[1], ast.FormattedValue) and is_type_name(n.values[1].value) \
                and isinstance(n.values[0].value, str) and n.values[0].value:
            out.append(n.values[0].value)
    return list(dict.fromkeys(out))


def _small_size(v) -> bool:
    return type(v) is int and 3 <= v <= 64


def _length_limits(tree: ast.Module, named: dict[str, int]) -> list[int]:
    """The whole numbers ``tree`` compares a length with (``len(s) > 10``, ``len(x) <= MAXLEN``)
    or cuts a sequence at by name (``x[:MAXLEN]``, ``islice(x, LIMIT)``); ``named``: the
    module's names bound to such numbers."""
    def value(x) -> int | None:
        if isinstance(x, ast.Constant) and _small_size(x.value):
            return x.value
        if isinstance(x, ast.Name):
            return named.get(x.id)
        return None
    out: list[int] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            left, right = n.left, n.comparators[0]
            for a, b in ((left, right), (right, left)):
                if isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == "len":
                    v = value(b)
                    if v is not None:
                        out.append(v)
        elif isinstance(n, ast.Slice):
            for b in (n.lower, n.upper):
                if isinstance(b, ast.Name) and b.id in named:
                    out.append(named[b.id])
        elif isinstance(n, ast.Call) and _name_of_call(n.func) == "islice" and len(n.args) == 2 and \
                isinstance(n.args[1], ast.Name) and n.args[1].id in named:
            out.append(named[n.args[1].id])
    return out


def _sized_values(spec: Spec, limits: list[int]) -> list[str]:
    """Values of ``spec`` (texts and collections; each member of a union) holding as many items
    as each limit, and one more: ``'abcdef'`` and ``'abcdefg'`` for 6."""
    if not limits:
        return []
    k = spec.kind
    if k in ("optional", "checked"):
        return _sized_values(spec.args[0], limits)
    if k == "union":  # (in turns, one of each member's at a time; twelve at most)
        each = [_sized_values(s, limits) for s in spec.args if isinstance(s, Spec)]
        return [x for row in zip_longest(*each) for x in row if x is not None][:12]
    out: list[str] = []
    for size in sorted({m for n in limits for m in (n, n + 1)}):
        if k == "str":
            out.append(_lit(("abcdefghijklmnopqrstuvwxyz" * 3)[:size]))
        elif k in ("list", "tuple", "set", "frozenset") and (not spec.args or spec.args[0] in (ANY, INT)):
            items = ", ".join(str(i) for i in range(size))
            out.append({"list": f"[{items}]", "tuple": f"({items})", "set": "{" + items + "}",
                        "frozenset": f"frozenset({{{items}}})"}[k])
        elif k == "dict" and (not spec.args or spec.args[0] in (ANY, STR_SPEC)) and \
                (len(spec.args) < 2 or spec.args[1] in (ANY, INT)):
            out.append("{" + ", ".join(f"'k{i}': {i}" for i in range(size)) + "}")
    return out


STR_SPEC = Spec("str")


_TRUTH_CALLS = frozenset({"isinstance", "issubclass", "any", "all", "bool", "callable", "hasattr", "startswith",
                          "endswith", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "exists",
                          "isfile", "isdir", "match", "fullmatch"})


def _truth_value(x) -> bool:
    """Whether expression ``x`` is a truth value (a comparison, ``not``, ``True``, ``isinstance``)."""
    if isinstance(x, ast.Compare) or (isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not)):
        return True
    if isinstance(x, ast.Constant):
        return isinstance(x.value, bool)
    if isinstance(x, ast.BoolOp):
        return all(_truth_value(v) for v in x.values)
    if isinstance(x, ast.Call):
        return _name_of_call(x.func) in _TRUTH_CALLS - {"match", "fullmatch"}
    return False


def _returned_as_flag(name: str, node: ast.AST | None) -> bool:
    """Whether function ``node`` returns its parameter ``name`` as it is and each of its other
    returns (one at least) is a truth value."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    returns: list[ast.Return] = []
    todo = list(node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Return):
            returns.append(n)
        todo.extend(ast.iter_child_nodes(n))
    own = [r for r in returns if isinstance(r.value, ast.Name) and r.value.id == name]
    others = [r for r in returns if r not in own and not (isinstance(r.value, ast.Name) and r.value.id != name
                                                          and r.value.id in _param_names(node))]
    return bool(own) and bool(others) and all(r.value is not None and _truth_value(r.value) for r in others)


def _param_names(node) -> set[str]:
    a = node.args
    return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}


def _type_named(name: str, body: list) -> bool:
    """Whether ``body`` takes the name of the type of ``name`` (``type(name).__name__``,
    ``name.__class__.__name__``)."""
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Attribute) and n.attr == "__name__":
                v = n.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "type" \
                        and len(v.args) == 1 and isinstance(v.args[0], ast.Name) and v.args[0].id == name:
                    return True
                if isinstance(v, ast.Attribute) and v.attr == "__class__" and isinstance(v.value, ast.Name) \
                        and v.value.id == name:
                    return True
    return False


class InputGenerator:
    """Probes for the units of ``module`` (``enums``: class -> member names, from the sandbox's
    inspection of the loaded module)."""

    def __init__(self, module: ModuleInfo, *, seed: int = 0, enums: dict[str, list[str]] | None = None):
        self.module = module
        self.rng = random.Random(seed)
        self.seed = seed
        self.enums = enums or {}
        members: dict[str, tuple[str, list[str]]] = {}
        for c in module.classes:
            members[c.name] = (c.style, list(c.attributes) + [m.name for m in c.methods] + c.properties)
        # classes defined in the module but not tested (private, stubs) still build arguments
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef) and node.name not in members:
                from coevo.testgen.target import _class_info

                info = _class_info(node)
                if info is not None:
                    members[node.name] = (info.style, list(info.attributes) + [m.name for m in info.methods])
        self._inits = {}
        # classes the module imports from its own project (``from .money import Money``): a
        # ``price: Money`` parameter is built from Money, not from whichever class of the module
        # has a ``currency`` attribute
        for local, node in project_classes(module).items():
            from coevo.testgen.target import _class_info

            info = _class_info(node)
            if info is not None and local not in members:
                members[local] = (info.style, list(info.attributes) + [m.name for m in info.methods])
                self._inits[local] = info.init
        for name in self.enums:
            members[name] = ("enum", members.get(name, ("enum", []))[1])
        self.class_members = members
        # the module's classes by each base class they name (their subclasses, in order)
        self._subclasses: dict[str, list[str]] = {}
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef):
                from coevo.testgen.target import _base_names

                for base in dict.fromkeys(_base_names(node)):
                    self._subclasses.setdefault(base, []).append(node.name)
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef):
                from coevo.testgen.target import _class_info

                info = _class_info(node)
                if info is not None:
                    self._inits[node.name] = info.init
        for c in module.classes:  # a constructor inherited from a base of the module (target._inherit)
            self._inits[c.name] = c.init
        taken = {n.name for n in module.tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        taken |= {t.id for n in module.tree.body if isinstance(n, ast.Assign) for t in n.targets
                  if isinstance(t, ast.Name)}
        self.vars = {c.name: var_name(c.name, taken) for c in module.classes}
        self._spec_cache: dict[str, list[tuple[Param, Spec]]] = {}
        self._matched_cache: dict[tuple, list[str]] = {}
        self._compiled: dict | None = None
        self._enum_texts: dict[str, list[str]] | None = None
        self._enum_reached: dict[tuple, str | None] = {}
        self._path_cache: dict[str, list[Param]] = {}
        self.module_consts = module.constants
        # the module's literal tables (its top level): their keys
        self.tables = container_keys([n for n in module.tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))])
        self.units = {u.qualname if u.kind != "init" else u.owner: u for u in module.units}
        self.regex_strings = _regex_examples(module.regexes, seed)
        words = [c for c in dict.fromkeys([*module.constants, *(v for u in module.units for v in u.constants)])
                 if type(c) is str and 0 < len(c) <= 30 and c.isprintable()]
        self.worded_strings = _with_module_words(module.regexes, self.regex_strings, words)
        self.regex_strings += self.worded_strings
        self.dated_strings = _dated_strings(module.tree)
        self.clock_times = _clock_times(module.tree)
        self.rounds = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "round"
                          and len(n.args) == 2 and isinstance(n.args[1], ast.Constant)
                          and type(n.args[1].value) is int and n.args[1].value > 0 for n in ast.walk(module.tree))
        self._matches: list[str] | None = None
        self._patterns: list[str] | None = None
        self.std = std_sources(module.tree)
        self.argv = argv_lists(module.tree)
        self.argv_reads, self.argv_params = argv_readers(module.tree)
        self._module_functions = {n.name: n for n in module.tree.body if isinstance(n, ast.FunctionDef)}
        self._lists_cache: dict[str, bool] = {}
        self._lookup_cache: dict[str, list[tuple[str, str, str]]] = {}
        self._slept_cache: dict[str, set[str]] = {}
        # the constants of the module's functions that are not tested themselves (private helpers:
        # the pattern compiler behind a public match function)
        tested = {u.name for u in module.units if u.owner is None}
        self._helper_consts = [v for name, node in self._module_functions.items() if name not in tested
                               for v in _constants(node.body)]

    # ------------------------------------------------------------------ specs and pools
    def specs(self, unit: Unit) -> list[tuple[Param, Spec]]:
        key = unit.qualname + "#" + unit.kind
        if key not in self._spec_cache:
            body = unit.node.body if unit.node is not None else []
            out = []
            prefix = next((x for x in self.dispatch_prefixes if unit.name.startswith(x)
                           and unit.name[len(x):] in _DISPATCHED_TYPES), None)
            dispatched = next((q for q in unit.params if q.kind in ("pos", "posonly")), None) \
                if prefix is not None and unit.kind in ("method", "function", "static") else None
            for p in unit.params:
                if p.name.startswith("_") and not p.required and p.kind in ("pos", "kwonly"):
                    continue  # a private option (Fraction's _normalize): its default, as callers use it
                spec = infer_param(p, self._types_named(body), self.class_members, self.tables)
                if unit.kind == "init" and p.annotation is None and p.default is None:
                    spec = self._kept_on_object(p, unit) or spec
                elif unit.kind == "init" and unit.node is None and _bare_items(spec):
                    # a dataclass's ``items: list`` field: its items, from how the methods read
                    # ``self.items`` (``item.sku``, ``item.total``: the module's LineItem)
                    kept = self._kept_on_object(p, unit)
                    if kept is not None and not _bare_items(kept) and _bare_items(spec) == _bare_items(kept, True):
                        spec = kept
                if unit.kind == "init" and unit.node is None and spec == Spec("str"):
                    # a dataclass's text field that __post_init__ checks against the module's
                    # table (``self.tier not in TIERS``): the table's texts first
                    checked = self._post_init_spec(p, unit)
                    if checked is not None and checked.kind == "union" and checked.args[0].kind == "literal":
                        spec = checked
                if p.annotation is None and (spec == ANY or guessed_by_name(p, body, spec)) and \
                        _returned_as_flag(p.name, unit.node):
                    # returned as it is where the other returns are truth values (quopri's
                    # needsquoting: `return quotetabs` beside `return c == ESCAPE or ...`)
                    spec = Spec("bool")
                if (spec == ANY or guessed_by_name(p, body, spec)) and p.kind in ("pos", "posonly", "kwonly"):
                    # no evidence of its own (or only its name's guess: getopt's shortopts, a
                    # plural, is a string two calls down): the type of the parameter it is handed to
                    spec = self._passed_on(p.name, body, 0, unit.owner) or spec
                if spec == Spec("list", (INT,)) and p.annotation is None:
                    # (ints: the default of a list with no evidence of its items) the items a
                    # loop hands to a module function (shlex's join: quote(arg) for arg in
                    # split_command) take that function's parameter's type
                    spec = Spec("list", (self._items_passed_on(p.name, body) or INT,))
                if spec.kind == "dict" and (not spec.args or spec.args[-1] == ANY) and \
                        self._values_read_as_text(p, unit):
                    # its values read as text (``values.get(key, '').strip()``, ``int(raw)``)
                    spec = Spec("dict", (spec.args[0] if spec.args and spec.args[0] != ANY else Spec("str"),
                                         Spec("str")))
                if p is dispatched and p.annotation is None:
                    # a method named for the type that reaches it (reprlib's repr_dict, found by
                    # getattr(self, 'repr_' + type(x).__name__)): that type, whatever the body says
                    spec = _DISPATCHED_TYPES[unit.name[len(prefix):]]
                elif p.annotation is None and self.dispatch_prefixes and _type_named(p.name, body):
                    # the value whose type's name picks the method (reprlib's repr1(x, level)):
                    # one of each type the module has a method for
                    spec = self._dispatch_union() or spec
                if unit.owner is None and p.name in self.argv_params.get(unit.name, ()):
                    spec = Spec("argv")  # handed to an argparse parser: command lines
                if p.name in self.slept(unit):
                    spec = _SLEEPS  # handed to time.sleep: small (the user's suite would sleep)
                named = names_checked(body, p.name, self.global_names) if unit.node is not None else ()
                if named:
                    # compared with the module's own names (h11's ``our_role not in (CLIENT,
                    # SERVER)``, ``mode is Modes.FAST``): those names first, the drawn values after
                    spec = Spec("union", (Spec("names", named), spec))
                out.append((p, spec))
            self._spec_cache[key] = out
        return self._spec_cache[key]

    @property
    def global_names(self) -> set[str]:
        """The names the module binds at its top level (:func:`module_globals`)."""
        got = self.__dict__.get("_global_names")
        if got is None:
            got = module_globals(self.module.tree)
            self.__dict__["_global_names"] = got
        return got

    @property
    def dispatch_prefixes(self) -> list[str]:
        """The prefixes the module joins to a value's type name to find the function or method
        that handles it (``getattr(self, 'repr_' + type(x).__name__)``, ``typename =
        type(x).__name__`` first, or ``f'visit_{x.__class__.__name__}'``)."""
        got = self.__dict__.get("_dispatch_prefixes")
        if got is None:
            got = _dispatch_prefixes(self.module.tree)
            self.__dict__["_dispatch_prefixes"] = got
        return got

    def size_limits(self, unit: Unit) -> list[int]:
        """The sizes that ``unit``'s code cuts or compares its values' lengths at: for a method,
        the small whole numbers its class keeps (``self.maxlist = 6``, a class attribute
        ``width = 70``); and the module's, compared with a length (``len(s) > MAXLEN``,
        ``len(x) >= 10``) or cutting a sequence where they are named (``x[:self.maxstring]``,
        ``islice(x, self.maxdict)``). Five at most, smallest first."""
        cache = self.__dict__.setdefault("_limits_cache", {})
        key = unit.owner or ""
        if key not in cache:
            cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner),
                       None)
            kept: dict[str, int] = {}
            if cls is not None:
                for n in ast.walk(cls):
                    if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and _small_size(n.value.value):
                        for t in n.targets:
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                                kept.setdefault(t.attr, n.value.value)
                for n in cls.body:
                    if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and _small_size(n.value.value):
                        for t in n.targets:
                            if isinstance(t, ast.Name):
                                kept.setdefault(t.id, n.value.value)
            named = {t.id: n.value.value for n in self.module.tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and _small_size(n.value.value)
                     for t in n.targets if isinstance(t, ast.Name)}
            limits = list(kept.values()) + _length_limits(self.module.tree, named)
            cache[key] = sorted(set(limits))[:5]
        return cache[key]

    def _types_named(self, body: list) -> list:
        """``body`` with the module's names for a tuple of types (``bytes_types = (bytes,
        bytearray)``) written out where ``isinstance`` reads them; ``body`` itself where none is."""
        names = self.__dict__.get("_type_tuples")
        if names is None:
            names = {t.id: n.value for n in self.module.tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Tuple) and n.value.elts
                     and all(isinstance(e, (ast.Name, ast.Attribute)) for e in n.value.elts)
                     for t in n.targets if isinstance(t, ast.Name)}
            self.__dict__["_type_tuples"] = names
        if not names or not any(isinstance(n, ast.Call) and _name_of_call(n.func) == "isinstance" and len(n.args) == 2
                                and isinstance(n.args[1], ast.Name) and n.args[1].id in names
                                for stmt in body for n in ast.walk(stmt)):
            return body
        return [_Substitute(dict(names)).visit(copy.deepcopy(stmt)) for stmt in body]

    def _url_texts(self, p: Param) -> list[str]:
        """Web addresses for a text parameter named for one (``url``, ``uri``, ``href``; or
        ``link``, ``address``, ``location``, ``base`` where the module's literals show them: a
        text holding ``'://'``, or ``'http'`` / ``'https'``): with a user, a port, a path,
        parameters, a query and a fragment, other schemes, a relative one, a query string alone
        and %-escapes. [] for other parameters (urllib.parse's ``quote(string, safe, encoding)``
        drew addresses for each of them before its own texts: mutation 0.29 -> 0.11)."""
        low = p.name.lower()
        named = any(w in low for w in ("url", "uri", "href"))
        if not named:
            if not any(w in low for w in ("link", "address", "location", "base")) or \
                    low.endswith(("links", "addresses", "locations", "bases")):
                return []
            lits = self.__dict__.get("_url_literals")
            if lits is None:
                strs = [n.value for n in ast.walk(self.module.tree) if isinstance(n, ast.Constant)
                        and isinstance(n.value, str) and len(n.value) <= 200]
                lits = any("://" in x for x in strs) or bool({"http", "https"} & set(strs))
                self.__dict__["_url_literals"] = lits
            if not lits:
                return []
        return list(_URLS)

    def _alphabet_texts(self, spec: Spec) -> list[str]:
        """For a text or bytes ``spec``: texts written in the module's alphabets (a literal of 32
        distinct printable characters or more: base64's ``_b32alphabet``), four and eight long
        and, where the module has a ``'='`` literal, padded with it (``'ABCD'``, ``'ABC='``,
        ``'EFGHIJ=='``, ``'MNOP===='``); [] for other specs or without one."""
        kinds = {s.kind for s in ([spec] + list(spec.args)) if isinstance(s, Spec)}
        want = "bytes" if "bytes" in kinds and "str" not in kinds else "str" if kinds & {"str", "any"} else None
        if want is None:
            return []
        consts = [c for c in self.module_consts if type(c) in (str, bytes)]
        alphabets = []
        for c in consts:
            text = c.decode("latin-1") if type(c) is bytes else c
            if len(text) >= 32 and len(set(text)) == len(text) and text.isascii() and text.isprintable() \
                    and " " not in text:
                alphabets.append(text)
        if not alphabets:
            return []
        pad = any(c in ("=", b"=") for c in consts) or any(
            isinstance(n, ast.Constant) and n.value in ("=", b"=") for n in ast.walk(self.module.tree))
        out: list[str] = []
        for a in alphabets[:2]:
            a = a.replace("=", "")
            texts = [a[:4], a[4:12], a[:16]]
            if pad:
                texts += [a[:3] + "=", a[:2] + "==", a[12:17] + "===", a[8:12] + "====", a[5:7] + "======",
                          a[:7] + "="]
            texts.append(a[:8].lower())
            out += [_lit(t.encode("latin-1") if want == "bytes" else t) for t in texts]
        return list(dict.fromkeys(out))

    def _dispatch_union(self) -> Spec | None:
        """A union of the types the module's functions or methods are named for (after one of
        :attr:`dispatch_prefixes`), in the order they are defined; None when none is."""
        kinds = [_DISPATCHED_TYPES[u.name[len(x):]] for u in self.module.units for x in self.dispatch_prefixes
                 if u.name.startswith(x) and u.name[len(x):] in _DISPATCHED_TYPES]
        kinds = list(dict.fromkeys(kinds))
        return Spec("union", tuple(kinds)) if kinds else None

    def _kept_on_object(self, p, unit: Unit) -> Spec | None:
        """The spec of a constructor argument kept as it is (``self.base = base``) from how the
        constructor and the class's methods use it (``self.base.rstrip('/')``: a string)."""
        init = unit.node
        if unit.owner is None:
            return None
        cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner), None)
        if init is None:  # a dataclass's field: ``self.<name>`` in the methods
            attrs = {p.name}
        else:
            attrs = {t.attr for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                     and n.value.id == p.name for t in n.targets
                     if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
        if not attrs or cls is None:
            return None

        body = list(init.body) if init is not None else []
        for m in cls.body:
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m is not init:
                body += _self_attrs_as_names(m.body, dict.fromkeys(attrs, p.name), load_only=True)
        spec = infer_param(p, body, self.class_members, self.tables)
        return spec if spec != ANY else None

    def _values_read_as_text(self, p: Param, unit: Unit) -> bool:
        """Whether the values of the mapping ``p`` are read as text: ``p.get(k, '')``, a text
        method on ``p[k]`` / ``p.get(k)`` or on a name bound to one (``raw.strip()``), or one
        handed to ``int()`` / ``float()``; in the unit's body and, for a constructor's argument
        kept on the object (a dataclass field), in the class's methods (``self.values``)."""
        body = list(unit.node.body) if unit.node is not None else []
        if unit.kind == "init" and unit.owner:
            cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner),
                       None)
            if unit.node is None:
                attrs = {p.name}
            else:
                attrs = {t.attr for n in ast.walk(unit.node) if isinstance(n, ast.Assign)
                         and isinstance(n.value, ast.Name) and n.value.id == p.name for t in n.targets
                         if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
            for m in (cls.body if cls is not None and attrs else []):
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m is not unit.node:
                    body += _self_attrs_as_names(m.body, dict.fromkeys(attrs, p.name))
        return _values_read_as_text(p.name, body)

    def _post_init_spec(self, p: Param, unit: Unit) -> Spec | None:
        """The spec a dataclass field ``p`` gets from how ``__post_init__`` uses ``self.<p>``,
        as if it had no hint; None without a ``__post_init__``."""
        cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner), None)
        post = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__post_init__"),
                    None) if cls is not None else None
        if post is None:
            return None
        body = _self_attrs_as_names(post.body, {p.name: p.name})
        return infer_param(Param(p.name, p.kind), body, self.class_members, self.tables)

    def _bytes_body(self, unit: Unit) -> bool:
        """Whether the unit's body (its docstring aside) holds more bytes literals than texts."""
        if unit.node is None:
            return False
        body = list(unit.node.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        consts = [n.value for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Constant)]
        nb = sum(type(c) is bytes for c in consts)
        return nb > 0 and nb > sum(type(c) is str for c in consts)

    @property
    def enum_texts(self) -> dict[str, list[str]]:
        """The module's Enum classes whose members are texts: class -> their values."""
        if self._enum_texts is None:
            self._enum_texts = {}
            for n in self.module.tree.body:
                if isinstance(n, ast.ClassDef) and any(
                        (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "")
                        in ("Enum", "StrEnum") for b in n.bases):
                    vals = [a.value.value for a in n.body if isinstance(a, ast.Assign)
                            and isinstance(a.value, ast.Constant) and isinstance(a.value.value, str)]
                    if vals:
                        self._enum_texts[n.name] = list(dict.fromkeys(vals))
        return self._enum_texts

    def _reaches_enum(self, name: str, body: list, depth: int = 0) -> str | None:
        """The Enum class (of texts) that a value named ``name`` is handed to in ``body``:
        ``Event(name)``, or through a module function, a method of a module class (``t.post(e)``)
        or a constructor whose parameter is, up to 3 calls deep; the items of a list too
        (``for e in name``)."""
        enums = self.enum_texts
        if not enums or depth > 3:
            return None

        def mentions(x) -> bool:
            return any(isinstance(k, ast.Name) and k.id == name for k in ast.walk(x))
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) \
                        and n.target.id != name and mentions(n.iter):
                    inner = n.body if isinstance(n, ast.For) else [ast.Expr(x) for x in ast.walk(stmt)
                                                                    if isinstance(x, ast.Call)]
                    got = self._reaches_enum(n.target.id, inner, depth + 1)
                    if got:
                        return got
                if not isinstance(n, ast.Call):
                    continue
                if isinstance(n.func, ast.Name) and n.func.id in enums and n.args and mentions(n.args[0]):
                    return n.func.id
                callees: list = []
                if isinstance(n.func, ast.Name) and n.func.id in self._module_functions:
                    callees = [(self._module_functions[n.func.id], 0)]
                elif isinstance(n.func, ast.Name):
                    cls = next((c for c in self.module.tree.body if isinstance(c, ast.ClassDef)
                                and c.name == n.func.id), None)
                    callees = [(m, 1) for m in (cls.body if cls else []) if isinstance(m, ast.FunctionDef)
                               and m.name == "__init__"]
                elif isinstance(n.func, ast.Attribute):
                    callees = [(m, 1) for c in self.module.tree.body if isinstance(c, ast.ClassDef)
                               for m in c.body if isinstance(m, ast.FunctionDef) and m.name == n.func.attr]
                for fn, skip in callees:
                    params = [a.arg for a in fn.args.posonlyargs + fn.args.args][skip:]
                    for i, a in enumerate(n.args):
                        if i < len(params) and mentions(a):
                            got = self._reaches_enum(params[i], fn.body, depth + 1)
                            if got:
                                return got
                    for k in n.keywords:
                        if k.arg and mentions(k.value):
                            got = self._reaches_enum(k.arg, fn.body, depth + 1)
                            if got:
                                return got
        return None

    def _with_enum_texts(self, p: Param, spec: Spec, unit: Unit, pool: list[str]) -> list[str]:
        """A text (or a list of texts) that reaches an Enum constructor (:meth:`_reaches_enum`)
        draws the enum's values: one first (the typical call gets past ``Event(event)``), the
        rest among the first eight; lists of them in order and in pairs (COIN then PUSH)."""
        texts = spec.kind in ("str", "any", "optional", "union")
        items = spec.kind == "list" and (not spec.args or spec.args[0].kind in ("str", "any"))
        if unit.node is None or not (texts or items) or not self.enum_texts:
            return pool
        key = (unit.qualname, unit.kind, p.name)
        if key not in self._enum_reached:
            self._enum_reached[key] = self._reaches_enum(p.name, list(unit.node.body))
        cls = self._enum_reached[key]
        if cls is None:
            return pool
        vals = self.enum_texts[cls]
        if texts:
            new = [_lit(v) for v in vals]
        else:
            seqs = [vals[:1], vals, vals[:2] + vals[1:2], vals[::-1]]
            seqs += [[a, b] for i, a in enumerate(vals) for b in vals[i + 1:]][:6]
            seqs.append(vals[:1] + ["hello"])
            new = list(dict.fromkeys(_lit(x) for x in seqs))
        rest = [x for x in pool if x not in new]
        return new[:1] + rest[:2] + new[1:6] + rest[2:4] + new[6:] + rest[4:]

    def _matched_texts(self, p: Param, unit: Unit) -> list[str]:
        """Texts a pattern matches where the body checks ``p`` with it: ``PAT.match(p)`` (``PAT``
        a module-level compiled pattern; ``fullmatch``, ``search``) or ``re.match(r'...', p)``;
        a dataclass field's check in ``__post_init__`` (``EMAIL.match(self.email)``). Members'
        typical object had email='hello' and raised there, so the objects varied from it did too."""
        key = (unit.qualname, unit.kind, p.name)
        if key in self._matched_cache:
            return self._matched_cache[key]
        body: list = list(unit.node.body) if unit.node is not None else []
        if unit.kind == "init" and unit.owner:
            cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner),
                       None)
            post = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__post_init__"),
                        None) if cls is not None and unit.node is None else None
            if post is not None:
                body += _self_attrs_as_names(post.body, {p.name: p.name})
        out: list[str] = []
        if body:
            compiled = self.compiled_patterns
            for stmt in body:
                for n in ast.walk(stmt):
                    if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                            and n.func.attr in ("match", "fullmatch", "search")):
                        continue
                    owner = self._pattern_owner(n.func.value, unit)
                    if owner is None:
                        continue
                    args = n.args
                    if owner == "re" and len(args) >= 2:
                        pat_node, arg = args[0], args[1]
                    elif owner in compiled and args:
                        pat_node, arg = None, args[0]
                    else:
                        continue
                    if not any(isinstance(x, ast.Name) and x.id == p.name for x in ast.walk(arg)):
                        continue
                    try:
                        if pat_node is None:
                            pat = compiled[owner]
                        elif isinstance(pat_node, ast.Constant) and isinstance(pat_node.value, str):
                            pat = re.compile(pat_node.value)
                        elif isinstance(pat_node, ast.Name) and pat_node.id in compiled:
                            pat = compiled[pat_node.id]
                        else:
                            continue
                    except re.error:
                        continue
                    if not isinstance(pat.pattern, str):
                        continue
                    check = getattr(pat, n.func.attr)
                    drawn = [t for t in _draw_regex(pat, self.seed, 6) if check(t)]
                    # the shortest, the longest and one between: '0' and '0' compare equal, a
                    # comparison of '0' with '5!0.0rc1.post2' tells versions apart
                    out += list(dict.fromkeys(drawn[:1] + drawn[-1:] + drawn[len(drawn) // 2:][:1]))
        self._matched_cache[key] = list(dict.fromkeys(out))[:6]
        return self._matched_cache[key]

    @property
    def compiled_patterns(self) -> dict:
        """The module's compiled patterns, its classes' own among them (:func:`_compiled_patterns`),
        compiled once."""
        if self._compiled is None:
            self._compiled = _compiled_patterns(self.module.tree, in_classes=True)
        return self._compiled

    def _pattern_owner(self, node: ast.expr, unit: Unit) -> str | None:
        """The key of :func:`_compiled_patterns` that ``node`` reads: ``re``, a module-level
        ``NAME``, or a class's own pattern read as ``self.NAME`` / ``cls.NAME`` in a method of that
        class (or of a class of the module deriving from it) or as ``Class.NAME``."""
        if isinstance(node, ast.Name):
            return node.id
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return None
        compiled = self.compiled_patterns
        base = node.value.id
        if base in ("self", "cls") and unit.owner:
            # along the class's method resolution order over the module's classes (target.class_mros)
            for cls in self.module.mros.get(unit.owner, [unit.owner]):
                if f"{cls}.{node.attr}" in compiled:
                    return f"{cls}.{node.attr}"
            return None
        key = f"{base}.{node.attr}"
        return key if key in compiled else None

    def _items_passed_on(self, name: str, body: list) -> Spec | None:
        """The spec the items of ``name`` get where a ``for`` loop or a comprehension over it
        hands them to a module function (:meth:`_passed_on`); None when none does."""
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id == name and \
                        isinstance(n.target, ast.Name):
                    got = self._passed_on(n.target.id, n.body, 0)
                elif isinstance(n, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and len(n.generators) == 1 and \
                        isinstance(n.generators[0].iter, ast.Name) and n.generators[0].iter.id == name and \
                        isinstance(n.generators[0].target, ast.Name):
                    got = self._passed_on(n.generators[0].target.id, [ast.Expr(n.elt)], 0)
                else:
                    continue
                if got is not None and got.kind in ("str", "bytes", "float", "bool"):
                    return got
        return None

    def _passed_on(self, name: str, body: list, depth: int, owner: str | None = None) -> Spec | None:
        """The spec of the module function's parameter that ``name`` is handed to unchanged
        (``def fnmatch(name, pat): ... fnmatchcase(name, pat)``): the first such call whose
        parameter is not ``any`` (followed up to three calls deep). In a method of class
        ``owner``, the parameters of its own methods called on ``self`` too (reprlib's
        ``repr(x)``: ``self.repr1(x, self.maxlevel)``)."""
        if depth > 2:
            return None
        functions = self._module_functions
        busy = self.__dict__.setdefault("_passing", set())
        for stmt in body:
            for n in ast.walk(stmt):
                if owner is not None and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                        and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
                    m = self.units.get(f"{owner}.{n.func.attr}")
                    if m is None or m.kind != "method" or m.qualname in busy:
                        continue
                    positional = [q.name for q in m.params if q.kind in ("pos", "posonly")]
                    wanted = {positional[i] for i, a in enumerate(n.args)
                              if i < len(positional) and isinstance(a, ast.Name) and a.id == name}
                    wanted |= {k.arg for k in n.keywords if isinstance(k.value, ast.Name) and k.value.id == name
                               and k.arg}
                    if not wanted:
                        continue
                    busy.add(m.qualname)
                    try:
                        got = [s for q, s in self.specs(m) if q.name in wanted and s != ANY]
                    finally:
                        busy.discard(m.qualname)
                    if got:
                        return got[0]
                    continue
                if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in functions):
                    continue
                node = functions[n.func.id]
                params = _params(node.args, False)
                positional = [q for q in params if q.kind in ("pos", "posonly")]
                targets = [positional[i] for i, a in enumerate(n.args)
                           if i < len(positional) and isinstance(a, ast.Name) and a.id == name]
                targets += [q for k in n.keywords if isinstance(k.value, ast.Name) and k.value.id == name
                            for q in params if q.name == k.arg and q.kind != "posonly"]
                for q in targets:
                    spec = infer_param(q, node.body, self.class_members)
                    if q.annotation is None and (spec == ANY or guessed_by_name(q, node.body, spec)) and \
                            _returned_as_flag(q.name, node):
                        spec = Spec("bool")
                    if spec == ANY:
                        spec = self._passed_on(q.name, node.body, depth + 1) or ANY
                    elif guessed_by_name(q, node.body, spec):
                        spec = self._passed_on(q.name, node.body, depth + 1) or spec
                    if spec != ANY:
                        return spec
        return None

    def pool(self, spec: Spec, consts: list, depth: int = 0) -> list[str]:
        """Candidate sources for one value of ``spec``; the first is the typical one."""
        k = spec.kind
        out: list[str] = []
        if k == "int":
            cints = [c for c in consts if type(c) is int]
            out = [_lit(v) for v in _INTS[:3]]
            for c in cints:
                out += [_lit(c), _lit(c - 1), _lit(c + 1)]
            out += [_lit(v) for v in _INTS[3:]]
        elif k == "float":
            cnum = [c for c in consts if type(c) in (int, float)]
            out = [_lit(v) for v in _FLOATS[:3]]
            if self.rounds:  # ``round(x, 2)``: a float with more decimals than it keeps
                out.append("1.23456")
            for c in cnum:
                out += [_lit(float(c)), _lit(float(c) + 0.5), _lit(float(c) - 0.5)]
            out += [_lit(v) for v in _FLOATS[3:]] + ["7", "-3"]
        elif k == "bool":
            out = ["True", "False"]
        elif k == "str":
            cstr = [c for c in consts if type(c) is str]
            out = [_lit(_STRS[0]), _lit("")] + [_lit(x) for x in self.dated_strings[:2] + self.regex_strings]
            if len(self.regex_strings) >= 2:  # lines of a text the code splits (a log, a listing)
                lines = list(dict.fromkeys(self.worded_strings + self.regex_strings))
                out.insert(4, _lit("\n".join(lines[:4]) + "\n"))
            for c in cstr:
                out.append(_lit(c))
            for c in cstr:
                if c:
                    out += [_lit(c + "x"), _lit(" " + c + " "), _lit(c.upper() if c != c.upper() else c.lower())]
            # numbers as text: the code may parse them (int(text), float(text))
            for c in [c for c in consts if type(c) in (int, float)][:6]:
                out += [_lit(str(c)), _lit(str(c + 1)), _lit(f" {c} ")]
            out += [_lit(s) for s in _STRS[2:]] + [_lit(x) for x in self.dated_strings[2:]]
        elif k == "bytes":
            cb = [c for c in consts if type(c) is bytes]
            out = ["b'hello'", "b''", "b'\\x00\\xff'"] + [_lit(c) for c in cb] + ["b'abc'", "b'A'"]
        elif k == "complex":
            out = ["(1+2j)", "0j", "(-3+0.5j)", "1j"]
        elif k == "none":
            out = ["None"]
        elif k == "checked":  # the code checks the type itself: a value of another type too
            inner = self.pool(spec.args[0], consts, depth + 1)
            foreign = {"str": ["42", "None"], "int": ["'3'", "2.5", "None"], "float": ["'2.5'", "None"],
                       "list": ["'abc'", "None", "(1, 2)"], "dict": ["[('a', 1)]", "None"]}
            if spec.args[0].kind == "bytes":  # `if isinstance(x, bytes): ...` is mostly the text one
                foreign["bytes"] = self.pool(Spec("str"), consts, depth + 1)[:10] + ["None"]
            out = inner + foreign.get(spec.args[0].kind, ["None", "42"])
            for other in spec.args[1:]:  # the other types it is tested for: two of each
                out[len(inner):len(inner)] = self.pool(other, consts, depth + 1)[:2]
        elif k == "any":
            cs = [_lit(c) for c in consts if type(c) in (int, str, float)][:6]
            out = _ANY[:4] + cs + _ANY[4:]
        elif k == "literal":
            out = [_lit(v) for v in spec.args]
        elif k == "optional":
            inner = self.pool(spec.args[0], consts, depth + 1)
            out = inner[:1] + ["None"] + inner[1:]
        elif k == "union":
            pools = [self.pool(s, consts, depth + 1) for s in spec.args]
            for i in range(max(map(len, pools))):
                for p in pools:
                    if i < len(p):
                        out.append(p[i])
        elif k == "callable":
            out = list(_CALLABLES_BY_ARITY.get(spec.args[0], _CALLABLES) if spec.args else _CALLABLES)
        elif k == "match":
            out = self.matches or ["None"]
        elif k == "pattern":
            out = self.patterns or ["None"]
        elif k == "names":  # the module's own names, as argument text
            out = list(spec.args)
        elif k == "stream":
            out = self._streams(spec.args[0] if spec.args else "str", consts)
        elif k == "argv":
            out = (self.argv or ["[]", "['5']", "['hello']", "['hello', 'world']"]) + ["None"]
        elif k in _STD_ARGS:
            f = self.std.get(k)
            args = list(_STD_ARGS[k])
            if k in ("date", "datetime"):
                # a Saturday (``weekday() >= 5``), and on a Monday each clock time the module
                # compares with (``time(22, 0)``) and the minute before it
                args.append("2024, 3, 2" + (", 9, 0" if k == "datetime" else ""))
                if k == "datetime":
                    for h, m in self.clock_times[:4]:
                        before = (h * 60 + m - 1) % 1440
                        args += [f"2024, 3, 4, {h}, {m}", f"2024, 3, 4, {before // 60}, {before % 60}"]
            out = [f"{f}({a})" for a in args] if f else ["None"]
        elif k in ("list", "set", "frozenset"):
            elem = spec.args[0] if spec.args else ANY
            out = self._lists(elem, consts, depth)
            if k == "set":
                out = ["set()" if s == "[]" else "{" + s[1:-1] + "}" for s in out]
                out = list(dict.fromkeys(out))
            elif k == "frozenset":
                out = [f"frozenset({s})" for s in out]
        elif k == "tuple":
            out = self._tuples(spec, consts, depth)
        elif k == "dict":
            out = self._dicts(spec, consts, depth)
        elif k == "instance":
            out = self._instances(spec.args[0], depth)
        elif k == "enum":
            members = self.enums.get(spec.args[0], [])
            out = [f"{spec.args[0]}.{m}" for m in members] or ["None"]
        else:
            out = list(_ANY)
        seen = []
        for s in out:
            if s not in seen and len(s) <= _MAX_SRC:
                seen.append(s)
        return seen or ["None"]

    def _pool_for(self, p: Param, spec: Spec, consts: list, depth: int = 0, unit: Unit | None = None) -> list[str]:
        """``pool(spec)``, with format strings for a parameter named for one (parse's
        ``parse(format, string)`` never got a field: ``'{}'``, ``'{:d}'``), and an empty stream
        first for a stream the unit writes to (quopri's ``encode(input, output)``: what the call
        wrote is then the whole of ``output.getvalue()``)."""
        pool = self.pool(spec, consts, depth)
        if spec.kind == "stream" and unit is not None and p.name in _written_names(unit.node):
            # (the kind of its first stream first; both where the pool holds both)
            kinds = list(dict.fromkeys(x.split("(", 1)[0] for x in pool if x.startswith(("StringIO(", "BytesIO("))))
            binary = spec.args and spec.args[0] == "bytes"
            empty = [f"{k}()" for k in kinds] or ["BytesIO()" if binary else "StringIO()"]
            pool = empty + [x for x in pool if x not in empty]
        low = p.name.lower()
        if (low in _FORMAT_NAMES or low.endswith(("_format", "_fmt", "_template"))) and \
                spec.kind in ("str", "any", "optional", "union"):
            pool = pool[:1] + [f for f in _FORMATS if f not in pool] + pool[1:]
        if unit is not None and depth == 0 and spec.kind in ("str", "any", "optional", "union") \
                and any(x.startswith("'") for x in pool[:3]):
            texts = [_lit(t) for t in self._split_texts(p, unit)]
            if texts:  # after the typical text and '', most of them among the first eight
                head = [x for x in pool if x not in texts]
                pool = head[:2] + texts[:4] + head[2:4] + texts[4:] + head[4:]
            scanned = [_lit(t) for t in self._scanned_texts(p, unit)]
            if scanned:  # after the typical text and '': six of them among the first eight
                head = [x for x in pool if x not in scanned]
                pool = head[:2] + scanned[:6] + head[2:4] + scanned[6:] + head[4:]
        if unit is not None and depth == 0 and self._bytes_body(unit):
            # a body of bytes literals (quopri's encode: line[-1:] == b'\n'): binary streams and
            # lines of bytes first (a StringIO's lines raised TypeError before the first branch)
            if spec.kind == "stream" and not (spec.args and spec.args[0] == "bytes"):
                binary = [x for x in pool if x.startswith("BytesIO(")]
                pool = binary + [x for x in pool if x not in binary]
            elif spec.kind == "list" and spec.args and spec.args[0] == Spec("str"):
                lines = self.pool(Spec("list", (Spec("bytes"),)), consts, depth)
                pool = lines + [x for x in pool if x not in lines]
        if unit is not None and depth == 0:
            pool = self._with_enum_texts(p, spec, unit, pool)
        if unit is not None and depth == 0 and spec.kind in ("str", "checked", "optional", "union", "any") \
                and any(x.startswith("'") for x in pool[:3]):
            urls = [_lit(t) for t in self._url_texts(p)]
            if urls:  # a module about web addresses ('://', 'http'): addresses, with every part
                rest = [x for x in pool if x not in urls]
                pool = rest[:2] + urls + rest[2:]
        if unit is not None and depth == 0 and "decode" in unit.name.lower():
            coded = self._alphabet_texts(spec)
            if coded:  # texts of the module's alphabet, padded (base64's b32decode: 'MZXW6===')
                rest = [x for x in pool if x not in coded]
                pool = rest[:2] + coded + rest[2:]
        if unit is not None and depth == 0:
            longs = [x for x in _sized_values(spec, self.size_limits(unit)) if x not in pool[:3]]
            if longs:  # a text or collection at each size limit and one past it (reprlib's maxlist)
                # (after the typical value and the empty ones; after one of each type in a union)
                head = 3 if spec.kind != "union" else len(spec.args) + 1
                rest = [x for x in pool if x not in longs]
                pool = rest[:head] + longs + rest[head:]
        if unit is not None and depth == 0 and spec.kind in ("str", "any", "optional", "union"):
            matched = [_lit(t) for t in self._matched_texts(p, unit)]
            if matched:  # checked against a pattern (EMAIL.match(self.email)): a match is typical
                rest = [x for x in pool if x not in matched]
                pool = matched[:1] + rest[:2] + matched[1:] + rest[2:]
        if unit is not None and depth == 0:
            made = self._produced(p, unit)
            if made:  # after the typical value: what the module's producer of that type returns
                pool = pool[:1] + made + [x for x in pool[1:] if x not in made]
        return pool

    def _produced(self, p: Param, unit: Unit) -> list[str]:
        """Calls of a module function whose return hint is ``p``'s (a subscripted one:
        ``rpn(tokens: list[tuple[str, str]])`` and ``tokenize(text) -> list[tuple[str, str]]``):
        ``tokenize('8 + 3 - 2')``, four at most; [] where none."""
        if p.annotation is None or not isinstance(p.annotation, ast.Subscript):
            return []
        hint = ast.unparse(p.annotation)
        busy = self.__dict__.setdefault("_producing", set())
        out: list[str] = []
        for name, node in self._module_functions.items():
            fu = self.units.get(name)
            if fu is None or fu is unit or name in busy or node.returns is None or ast.unparse(node.returns) != hint:
                continue
            busy.add(name)
            try:
                chs = self._choices(fu)
            finally:
                busy.discard(name)
            for ch in chs[2:6]:
                src = self._call_src(name, fu, ch)
                if len(src) <= _MAX_SRC and src not in out:
                    out.append(src)
            if out:
                break
        return out

    def _scanned_texts(self, p: Param, unit: Unit) -> list[str]:
        """Texts for a parameter that ``unit`` (or a function or constructor of the module it is
        handed to, three calls deep) scans character by character and tells characters apart in
        (a tokenizer: ``text[i]``, ``ch.isdigit()``, ``ch in OPERATORS``): numbers and names
        joined by the other characters it tests (``'6 + 4'``, ``'8 - 3 * 2'``, ``'(8 + 3) * 2'``),
        unbalanced brackets, a trailing operator. [] when no scanner is reached."""
        if unit.node is None:
            return []
        key = unit.qualname + "#" + unit.kind + "#" + p.name
        cache = self.__dict__.setdefault("_scan_cache", {})
        if key not in cache:
            classes = self._scanner_classes(p.name, unit.node, 0)
            cache[key] = _scan_texts(classes) if classes is not None else []
        return cache[key]

    def _scanner_classes(self, name: str, node: ast.AST, depth: int) -> tuple[set[str], list[str]] | None:
        """``(classes, chars)`` of the scanner ``name`` reaches from function ``node``: the
        ``str`` tests it makes (``digit``, ``alpha``, ``space``) and the single characters it
        compares with (in the order met); None when none is reached."""
        got = _scan_classes(node, name, self._module_strs())
        classes = {n.name: n for n in self.module.tree.body if isinstance(n, ast.ClassDef)}
        if got is None and isinstance(node, ast.FunctionDef) and node.name == "__init__":
            owner = next((c for c in classes.values() if node in c.body), None)
            if owner is not None:  # a text the object keeps and reads one character at a time
                got = _class_scan(owner, node, name, self._module_strs())
        if got is not None or depth > 2:
            return got
        for n in ast.walk(node):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
                continue
            callee: ast.AST | None = self._module_functions.get(n.func.id)
            drop = False
            if callee is None and n.func.id in classes:
                callee = next((m for m in classes[n.func.id].body if isinstance(m, ast.FunctionDef)
                               and m.name == "__init__"), None)
                drop = True
            if not isinstance(callee, ast.FunctionDef) or callee is node:
                continue
            params = _params(callee.args, drop)
            positional = [q for q in params if q.kind in ("pos", "posonly")]
            targets = [positional[i].name for i, a in enumerate(n.args)
                       if i < len(positional) and isinstance(a, ast.Name) and a.id == name]
            targets += [k.arg for k in n.keywords if isinstance(k.value, ast.Name) and k.value.id == name and k.arg]
            for q in targets:
                got = self._scanner_classes(q, callee, depth + 1)
                if got is not None:
                    return got
        return None

    def _module_strs(self) -> dict[str, str]:
        """The module's top-level names bound to a text (``OPERATORS = '+-*/'``)."""
        out: dict[str, str] = {}
        for n in self.module.tree.body:
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        out[t.id] = n.value.value
        return out

    def _split_texts(self, p: Param, unit: Unit) -> list[str]:
        """Texts in the shape that ``unit`` splits ``p`` into (``text.split(sep)`` with ``sep=';'``,
        then ``part.split('=', 1)``: ``'a=1;b=true'``): plain, with whitespace around every key
        and value (``' a = 1 ; b = true '``: what ``strip()``, not ``lstrip()``, parses), with an
        empty part (``'a=1;;b=true'``), the inner separator twice in a value where the split is
        limited (``'a=1=2;b=true'``), a trailing separator, a part without the inner separator.
        [] when ``p`` is not split by a separator of the body."""
        seps, limited = self._split_seps(p, unit)
        if not seps:
            return []
        words = [c for c in unit.constants if type(c) is str and c.isalnum() and not c.isdigit()][:1] or ["x"]
        leaves = ["a", "1", "b", words[0], "c", "2", "d", "3"] * 3

        def build(lv: int, it: Iterator[str], outer_twice: bool = False) -> str:
            n = 3 if len(seps) == 1 else 2
            parts = [next(it) if lv + 1 == len(seps) else build(lv + 1, it) for _ in range(n)]
            return (seps[lv] * 2 if outer_twice and lv == 0 else seps[lv]).join(parts)

        plain = build(0, iter(leaves))
        texts = [plain, build(0, iter(f" {x} " for x in leaves))]
        if len(seps) >= 2:
            texts.append(build(0, iter(leaves), True))
            if limited:
                texts.append(build(0, iter([leaves[0], leaves[1] + seps[-1] + "2"] + leaves[2:])))
            texts += [plain + seps[0], seps[0].join([leaves[0], build(1, iter(leaves[2:]))])]
        else:
            texts += [build(0, iter(["a", "", "b"])), plain + seps[0]]
        if seps[0] == "\n":
            # lines of other shapes the body tells apart: `line.startswith('[') and
            # line.endswith(']')` (an INI section's header), `line.startswith('#')` (a comment)
            heads, marks = _line_shapes(unit.node)
            for h in heads[:2]:
                texts = [h + "\n" + texts[0], h + "\n" + texts[1]] + texts + \
                    [h + "\n" + (marks[0] + " note\n\n" if marks else "\n") + texts[0] + "\n" + h.replace("s", "t")
                     + "\n" + texts[1]]
        return list(dict.fromkeys(t for t in texts if len(t) <= 200))

    def _split_seps(self, p: Param, unit: Unit) -> tuple[list[str], bool]:
        """The separators ``unit``'s body splits text on, in the order they are met (a
        parameter's default for ``text.split(sep)``; ``'\\n'`` for ``splitlines()``), when ``p``
        is one of the texts split; and whether the last of them splits a limited number of
        times (``split('=', 1)``, ``partition('=')``)."""
        if unit.node is None:
            return [], False
        defaults = {q.name: q.default.value for q in unit.params if isinstance(q.default, ast.Constant)
                    and isinstance(q.default.value, str)}
        calls = [n for stmt in unit.node.body for n in ast.walk(stmt) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute)
                 and n.func.attr in ("split", "rsplit", "partition", "rpartition", "splitlines")]
        calls.sort(key=lambda n: (n.lineno, n.col_offset))
        seps: list[str] = []
        split_p, limited = False, False
        for n in calls:
            assert isinstance(n.func, ast.Attribute)
            receiver = {x.id for x in ast.walk(n.func.value) if isinstance(x, ast.Name)}
            split_p = split_p or p.name in receiver
            if n.func.attr == "splitlines":
                sep: str | None = "\n"
            elif not n.args:
                continue  # split(): on any whitespace
            else:
                a = n.args[0]
                sep = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else \
                    defaults.get(a.id) if isinstance(a, ast.Name) else None
            if not sep or sep in seps or len(sep) > 3:
                continue
            seps.append(sep)
            limited = n.func.attr in ("partition", "rpartition") or len(n.args) > 1 or \
                any(k.arg == "maxsplit" for k in n.keywords)
        return (seps[:3], limited) if split_p else ([], False)

    def _exact_lists(self) -> list[str]:
        """Lists of the exact numbers the module imports (``from fractions import Fraction``,
        ``import decimal``), alone and mixed with ints and each other: CPython's statistics tells
        them apart deep inside (``_coerce``, ``_exact_ratio``); [] where it imports neither."""
        got = self.__dict__.get("_exact")
        if got is None:
            mods = {a.name for n in ast.walk(self.module.tree) if isinstance(n, ast.Import) for a in n.names}
            mods |= {n.module for n in ast.walk(self.module.tree) if isinstance(n, ast.ImportFrom)
                     and n.level == 0 and n.module for a in n.names if a.name in ("Fraction", "Decimal")}
            f = self.std.get("fraction") if "fractions" in mods else None
            d = self.std.get("decimal") if "decimal" in mods else None
            got = []
            if f:
                got += [f"[{f}(1, 3), {f}(3, 4), {f}(5, 2)]", f"[1, {f}(1, 2), 3]"]
            if d:
                got += [f"[{d}('0.5'), {d}('1.25'), {d}('2')]", f"[{d}('1.5'), 2]"]
            if f and d:
                got.append(f"[{f}(1, 2), {d}('0.5')]")
            self.__dict__["_exact"] = got
        return got

    def _lists(self, elem: Spec, consts: list, depth: int) -> list[str]:
        if depth > 2:
            return ["[]"]
        exact = self._exact_lists() if elem.kind in ("int", "float", "any") else []
        if elem.kind in ("int", "any") or elem == ANY:
            base = list(_INT_LISTS)
            cints = [c for c in consts if type(c) is int and abs(c) < 10 ** 6][:4]
            if cints:
                base.insert(3, _lit(cints))
                base.insert(4, _lit([cints[0], cints[0] + 1, cints[0] - 1]))
            return base[:6] + exact + base[6:] if exact else base
        p = self.pool(elem, consts, depth + 1)
        a = p[0]
        b = p[1] if len(p) > 1 else p[0]
        c = p[2] if len(p) > 2 else a
        d = p[3] if len(p) > 3 else b
        e = p[4] if len(p) > 4 else c
        out = [f"[{a}, {c}, {b}]", "[]", f"[{a}]", f"[{b}, {a}]", f"[{a}, {a}]", f"[{c}, {d}, {e}, {a}]",
               f"[{d}]", f"[{e}, {c}]"]
        if elem.kind == "str" and len(self.dated_strings) >= 2:
            # texts in the module's strptime formats only (``['2024-03-01 22:00+8', ...]``)
            out.insert(1, _lit(self.dated_strings[:3]))
        if exact:  # (after the first six: the usual shapes first)
            out = out[:6] + exact + out[6:]
        return out

    def _tuples(self, spec: Spec, consts: list, depth: int) -> list[str]:
        if depth > 2:
            return ["()"]
        if not spec.args:
            return ["()"]
        if len(spec.args) == 2 and spec.args[1] is Ellipsis:
            lists = self._lists(spec.args[0], consts, depth)
            out = []
            for s in lists:
                inner = s[1:-1]
                out.append("()" if not inner else f"({inner},)" if "," not in inner else f"({inner})")
            return out
        pools = [self.pool(s, consts, depth + 1) for s in spec.args]
        out = []
        for i in range(4):
            items = [p[min(i, len(p) - 1)] if j == i % len(pools) or i == 0 else p[0]
                     for j, p in enumerate(pools)]
            out.append("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
        for i in range(1, 4):
            items = [p[min(i, len(p) - 1)] for p in pools]
            out.append("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")
        return out

    def _dicts(self, spec: Spec, consts: list, depth: int) -> list[str]:
        if depth > 2:
            return ["{}"]
        ks, vs = (spec.args + (ANY, ANY))[:2]
        if ks == ANY:
            ks = Spec("str")
        if vs == ANY:
            vs = Spec("int")
        kp = self.pool(ks, consts, depth + 1)
        vp = self.pool(vs, consts, depth + 1)
        kp = [k for k in kp if k not in ("''",)] or kp
        if ks.kind == "str" and len(kp) >= 1 and kp[0] == "'hello'":
            kp = ["'a'", "'b'", "'c'"] + kp
        pairs = lambda n, off=0: ", ".join(f"{kp[(i + off) % len(kp)]}: {vp[(i + off) % len(vp)]}"  # noqa: E731
                                           for i in range(n))
        out = ["{" + pairs(2) + "}", "{}", "{" + pairs(1) + "}", "{" + pairs(3, 1) + "}"]
        if len(vp) > 2:
            out.append("{" + f"{kp[0]}: {vp[2]}" + "}")
        if vs.kind in ("list", "set", "frozenset") and vs.args and vs.args[0] == ks and len(kp) >= 3:
            out = self._graphs(kp[:3], vs.kind) + out  # values that are collections of its keys
        return list(dict.fromkeys(out))

    @staticmethod
    def _graphs(keys: list[str], kind: str) -> list[str]:
        """Dicts whose values are collections of the dict's own keys (a graph: node ->
        successors or predecessors): a chain, a diamond, a cycle, a self-loop, edges to nodes
        that are no keys."""
        a, b, c = keys

        def coll(items: list[str]) -> str:
            if kind == "list":
                return "[" + ", ".join(items) + "]"
            inner = "{" + ", ".join(items) + "}" if items else "set()"
            return inner if kind == "set" else f"frozenset({inner if items else ''})"
        shapes = [{a: [b], b: [c], c: []}, {a: [b, c], b: [c], c: []}, {a: [b], b: [a]},
                  {a: [b, c]}, {a: [a]}, {a: [], b: [a]}]
        return ["{" + ", ".join(f"{k}: {coll(v)}" for k, v in g.items()) + "}" for g in shapes]

    def _instances(self, cls: str, depth: int) -> list[str]:
        if cls in self.enums:
            return [f"{cls}.{m}" for m in self.enums[cls]]
        subs = self._subclasses.get(cls)
        if subs and self.class_members.get(cls, ("",))[0] == "abstract" and depth <= 2:
            # an abstract class (``shapes: list[Shape]``): instances of its concrete subclasses
            # in the module, a few of each, taking turns (``Shape()`` only raises TypeError)
            each = [self._instances(sub, depth + 1)[:3] for sub in subs]
            out = [x for row in zip_longest(*each) for x in row if x is not None and x != "None"]
            if out:
                return out
        init = self._inits.get(cls)
        if init is None or depth > 2:
            return ["None"]
        choices = self._choices(init, depth + 1, n=4)
        return [self._call_src(cls, init, ch) for ch in choices] or [f"{cls}()"]

    # ------------------------------------------------------------------ calls
    def _consts(self, unit: Unit) -> list:
        """The unit's own constants first, then its class's, the module's, and those of every
        other function of the module."""
        owner_consts: list = []
        if unit.owner is not None:
            for c in self.module.classes:
                if c.name == unit.owner:
                    owner_consts = [v for m in [c.init] + c.methods for v in m.constants]
                    # and its private methods' (netrc's _parse: the words its files hold)
                    owner_consts += [v for n in c.node.body if isinstance(n, ast.FunctionDef)
                                     and n.name.startswith("_") and not n.name.startswith("__")
                                     for v in _constants(n.body)]
                    # and a dataclass's __post_init__ (the bounds it validates its fields with)
                    owner_consts += [v for n in c.node.body if isinstance(n, ast.FunctionDef)
                                     and n.name == "__post_init__" for v in _constants(n.body)]
        others = [v for u in self.module.units for v in u.constants] + self._helper_consts
        return list(dict.fromkeys([*unit.constants, *owner_consts, *self.module_consts, *others]))[:80]

    def _named_texts(self, unit: Unit, specs, pools: dict, base: dict) -> list[dict[str, str]]:
        """Expression texts with a name (``'x + 1'``, :func:`_scan_texts`) given with a mapping
        that holds it: a dict parameter with text keys (``Parser(text, variables)``) or keyword
        arguments (``evaluate(text, **variables)``, ``x=2.5``); an unknown name was all the
        lookup (``value not in self.variables``) ever met."""
        texts = [(p, t) for p, _ in specs if p.kind not in ("star", "starstar")
                 for t in self._scanned_texts(p, unit) if "x" in t.split()]
        if not texts:
            return []
        out = []
        for q, s in specs:
            inner = s.args[0] if s.kind == "optional" and s.args else s
            if q.kind == "starstar":
                vals = self.pool(s, self._consts(unit))[:1]
                held = [f"x={v}" for v in vals]
            elif inner.kind == "dict" and inner.args and inner.args[0].kind in ("str", "any"):
                vals = self.pool(inner.args[1], self._consts(unit))[:1] if len(inner.args) > 1 else ["1"]
                held = [f"{{'x': {v}}}" for v in vals]
            else:
                continue
            for p, t in texts[:3]:
                for h in held:
                    out.append({**base, p.name: _lit(t), q.name: h})
        return out

    def _choices(self, unit: Unit, depth: int = 0, n: int = 8) -> list[dict[str, str]]:
        """One-parameter-at-a-time variations around a typical call (a dict param -> source; a
        missing key means "left to its default")."""
        specs = self.specs(unit)
        consts = self._consts(unit)
        pools = {p.name: self._pool_for(p, s, consts, depth, unit) for p, s in specs if p.kind != "starstar"}
        slept = self.slept(unit)
        slept = slept | self.stdin_defaults(unit)
        base = {p.name: pools[p.name][0] for p, _ in specs if p.required or p.name in slept}
        out = [dict(base)]
        for p, _ in specs:
            if p.kind == "starstar":
                continue
            for v in pools[p.name][:n]:
                ch = dict(base)
                ch[p.name] = v
                out.append(ch)
            if not p.required and p.kind != "star":
                # no argument for it: the default
                pass
        # a parameter that indexes or is looked for in another one (``start not in graph``,
        # ``prices[name]``): drawn from the keys or items of that one's values
        for p_name, qs in self._lookup_groups(unit).items():
            for src in pools.get(p_name, [])[:8]:
                keys = _keys_of(src, qs[0][1])
                if not keys:
                    continue
                rows = [[keys[0]] * len(qs), [keys[(i * -1) % len(keys)] for i in range(len(qs))],
                        [keys[(-1 - i) % len(keys)] for i in range(len(qs))]]
                for row in rows:
                    ch = dict(base)
                    ch[p_name] = src
                    for (q, _), k in zip(qs, row):
                        ch[q] = k
                    out.append(ch)
        out += self._named_texts(unit, specs, pools, base)
        seen, uniq = set(), []
        for ch in out:
            key = tuple(sorted(ch.items()))
            if key not in seen:
                seen.add(key)
                uniq.append(ch)
        return uniq

    def stdin_defaults(self, unit: Unit) -> set[str]:
        """The parameters of ``unit`` that stand for the standard input when left out
        (``if instream is not None: ... else: self.instream = sys.stdin``, ``stream or sys.stdin``,
        shlex's): the typical call gives them a drawn value (no test has a standard input)."""
        if unit.node is None:
            return set()
        names = {p.name for p in unit.params if not p.required and p.kind not in ("star", "starstar")}
        if not names:
            return set()

        def stdin_in(nodes) -> bool:
            return any(isinstance(x, ast.Attribute) and x.attr == "stdin" and isinstance(x.value, ast.Name)
                       and x.value.id == "sys" for node in nodes for x in ast.walk(node))

        def named(node) -> set[str]:
            return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in names}

        found: set[str] = set()
        for n in ast.walk(unit.node):
            if isinstance(n, ast.If) and stdin_in(n.body + n.orelse):
                found |= named(n.test)
            elif isinstance(n, (ast.IfExp, ast.BoolOp)) and stdin_in([n]):
                found |= named(n)
        return found

    def slept(self, unit: Unit) -> set[str]:
        """The parameters of ``unit`` that its body hands to ``time.sleep`` (or ``asyncio.sleep``,
        ``sleep``), alone or in an expression (``sleep(delay * 2 ** i)``)."""
        key = unit.qualname + "#" + unit.kind
        if key not in self._slept_cache:
            names = {p.name for p in unit.params if p.kind not in ("star", "starstar")}
            found: set[str] = set()
            for stmt in (unit.node.body if unit.node is not None else []):
                for n in ast.walk(stmt):
                    if isinstance(n, ast.Call) and _name_of_call(n.func) == "sleep":
                        found |= {x.id for a in [*n.args, *(k.value for k in n.keywords)] for x in ast.walk(a)
                                  if isinstance(x, ast.Name) and x.id in names}
            self._slept_cache[key] = found
        return self._slept_cache[key]

    def closure_probes(self, unit: Unit, n: int = 6) -> list[Probe]:
        """For a function that returns a function of its own (``compose(f, g)`` returning ``h``,
        ``make_adder(n)`` returning ``add``, a lambda): the returned function bound and called on
        drawn arguments (``h = compose(abs, str)`` / ``h(-3)``): what a test can assert of it."""
        inner = _returned_function(unit.node) if unit.kind == "function" and unit.node is not None else None
        if inner is None and unit.kind == "function" and unit.node is not None:
            inner = self._returned_module_function(unit.node)
        if inner is None:
            return []
        params = [q for q in _params(inner.args, False) if q.kind in ("pos", "posonly") and q.required]
        consts = self._consts(unit)
        body = inner.body if isinstance(inner.body, list) else [ast.Return(inner.body)]
        pools = [self.pool(infer_param(q, body, self.class_members, self.tables), consts) for q in params]
        if not params and inner.args.vararg is not None:
            pools = [self.pool(ANY, consts)]
        taken = {x.name for x in self.module.tree.body if isinstance(x, (ast.FunctionDef, ast.ClassDef))}
        var = getattr(inner, "name", "fn")
        var = var if var not in taken and var != unit.name and not var.startswith("_") else "fn"
        chs = self._choices(unit)[:n] + [self._random_choice(unit) for _ in range(2)]
        out = []
        for k, ch in enumerate(chs):
            first = self._unit_step(unit, ch)
            first = Step(first.kind, first.callee, first.args, first.kwargs, bind=var, unit=first.unit)
            for m in ((0, k + 1) if pools else (0,)):
                args = tuple(p[min(m, len(p) - 1)] for p in pools)
                out.append(Probe(unit.qualname, (first, Step("call", var, args)), "pool"))
        return _dedupe(out)

    def own_lookups(self, unit: Unit) -> list[tuple[str, str, str]]:
        """``(q, field, how)`` for each parameter ``q`` of method ``unit`` looked up in an
        attribute the object keeps a constructor argument in (``self.values.get(key)`` with a
        dataclass field ``values``, or ``self.values = values`` in ``__init__``); ``how`` as in
        :meth:`lookups`."""
        if unit.kind != "method" or unit.node is None or unit.owner is None:
            return []
        fields = self._kept_fields(unit.owner)
        if not fields:
            return []
        names = {p.name for p in unit.params if p.kind not in ("star", "starstar")}

        def own(x) -> str | None:
            if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "self":
                return fields.get(x.attr)
            return None

        found: dict[str, tuple[str, str]] = {}
        for n in ast.walk(unit.node):
            pair, how = _lookup_of(n)
            if pair is None or not (isinstance(pair[0], ast.Name) and pair[0].id in names):
                continue
            f = own(pair[1])
            if f is not None and pair[0].id not in found:
                found[pair[0].id] = (f, how)
        return [(q, f, how) for q, (f, how) in found.items()]

    def _kept_fields(self, owner: str) -> dict[str, str]:
        """``attribute -> constructor parameter`` for the arguments an object of class ``owner``
        keeps as they are (a dataclass's fields; ``self.values = values`` in ``__init__``)."""
        init = self._inits.get(owner)
        if init is None:
            return {}
        if init.node is None:
            return {q.name: q.name for q in init.params}
        return {t.attr: n.value.id for n in ast.walk(init.node) if isinstance(n, ast.Assign)
                and isinstance(n.value, ast.Name) for t in n.targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}

    def _field_ctors(self, unit: Unit, n: int = 12, most: int = 16) -> list[dict[str, str]]:
        """Constructor choices for method ``unit``'s object: the typical one with each of the
        first ``n`` drawn values of each constructor argument the method reads back
        (``self.age >= 18``: ages 17, 18, 19 ...)."""
        init = self._inits.get(unit.owner) if unit.owner else None
        if init is None or unit.node is None:
            return []
        fields = self._kept_fields(unit.owner or "")
        read = [fields[n.attr] for n in ast.walk(unit.node) if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load)
                and n.attr in fields]
        read = list(dict.fromkeys(read))
        if not read:
            return []
        base = self._choices(init)[0]
        consts = self._consts(init)
        per: list[list[dict[str, str]]] = []
        for q, spec in self.specs(init):
            if q.name in read and q.kind not in ("star", "starstar"):
                per.append([{**base, q.name: v} for v in self._pool_for(q, spec, consts, 0, init)[:n]
                            if base.get(q.name) != v])
        out = [ch for row in zip_longest(*per) for ch in row if ch is not None]  # each field in turn
        return out[:most]

    def _own_lookup_probes(self, unit: Unit) -> list[Probe]:
        """For each of :meth:`own_lookups`: the method called, on objects built from the
        constructor's variations, with the first and the last key of what the object holds."""
        looks = self.own_lookups(unit)
        init = self._inits.get(unit.owner) if looks and unit.owner else None
        if init is None:
            return []
        base = self._choices(unit)[0]
        out = []
        fields = {f for _, f, _ in looks}
        for ctor in [c for c in self._choices(init) if fields & set(c)][:8]:
            for q, f, how in looks:
                keys = _keys_of(ctor.get(f, ""), how) if f in ctor else []
                for k in dict.fromkeys(keys[:1] + keys[-1:]):
                    ch = dict(base)
                    ch[q] = k
                    out.append(self.probe(unit, ch, "pool", ctor))
        return out[:12]

    def _returned_module_function(self, node: ast.AST) -> ast.FunctionDef | None:
        """The module function that function ``node`` returns (a dispatcher): ``return handle_x``,
        or ``return TABLE[key]`` / ``TABLE.get(key)`` of a module table whose values are the
        module's functions (the first of them); None when it returns none."""
        functions = self._module_functions
        tables: dict[str, list[str]] = {}
        for n in self.module.tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Dict):
                names = [v.id for v in n.value.values if isinstance(v, ast.Name) and v.id in functions]
                if names and len(names) == len(n.value.values):
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Name):
                            tables[t.id] = names
        for n in ast.walk(node):
            if not (isinstance(n, ast.Return) and n.value is not None):
                continue
            v = n.value
            if isinstance(v, ast.Name) and v.id in functions and functions[v.id] is not node:
                return functions[v.id]
            if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and v.value.id in tables:
                return functions[tables[v.value.id][0]]
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "get" and \
                    isinstance(v.func.value, ast.Name) and v.func.value.id in tables:
                return functions[tables[v.func.value.id][0]]
        return None

    def lookups(self, unit: Unit) -> list[tuple[str, str, str]]:
        """``(q, p, how)`` for each parameter ``q`` of ``unit`` that indexes or is looked for in
        another parameter ``p`` (``how``: ``"item"`` for ``q in p``, ``p.index(q)``, ``p.count(q)``,
        ``p.remove(q)``; ``"key"`` for ``p[q]``, ``p.get(q)``, ``p.pop(q)``, ``p.setdefault(q)``)."""
        key = unit.qualname + "#" + unit.kind
        if key in self._lookup_cache:
            return self._lookup_cache[key]
        names = {p.name for p in unit.params if p.kind not in ("star", "starstar")}
        found: dict[tuple[str, str], str] = {}
        for stmt in (unit.node.body if unit.node is not None else []):
            for n in ast.walk(stmt):
                pair, how = _lookup_of(n)
                if pair is None or not all(isinstance(x, ast.Name) and x.id in names for x in pair):
                    continue
                q, p = pair[0].id, pair[1].id  # type: ignore[attr-defined]
                if q != p and found.get((q, p), "key") == "key":
                    found[(q, p)] = how  # (an item of a list rather than its index, where both)
        out = [(q, p, how) for (q, p), how in found.items()]
        self._lookup_cache[key] = out
        return out

    def _lookup_groups(self, unit: Unit) -> dict[str, list[tuple[str, str]]]:
        """:meth:`lookups` by the looked-in parameter: ``p -> [(q, how), ...]`` (a ``q`` looked
        up in two parameters counts for the first)."""
        groups: dict[str, list[tuple[str, str]]] = {}
        taken: set[str] = set()
        for q, p, how in self.lookups(unit):
            if q not in taken:
                taken.add(q)
                groups.setdefault(p, []).append((q, how))
        return groups

    def _keyed(self, unit: Unit, ch: dict[str, str], share: float = 0.7,
               changed: str | None = None) -> dict[str, str]:
        """``ch`` with, most of the time (``share``), each parameter that looks something up in
        another one drawn from the keys or items of that one's value in ``ch`` (only those
        that ``changed``, a parameter drawn anew, concerns, when it is given)."""
        for p_name, qs in self._lookup_groups(unit).items():
            if p_name not in ch:
                continue
            keys = _keys_of(ch[p_name], qs[0][1])
            for q, _ in qs:
                if changed is not None and changed not in (q, p_name):
                    continue
                if keys and (q in ch or any(p.name == q and p.required for p in unit.params)) \
                        and self.rng.random() < share:
                    ch[q] = self.rng.choice(keys)
        return ch

    def _random_choice(self, unit: Unit) -> dict[str, str]:
        specs = self.specs(unit)
        consts = self._consts(unit)
        ch = {}
        slept = self.slept(unit)
        for p, s in specs:
            if p.kind == "starstar":
                continue
            if not p.required and p.name not in slept and self.rng.random() < 0.5:
                continue
            pool = self._pool_for(p, s, consts, unit=unit)
            if p.kind == "star":
                ch[p.name] = ", ".join(self.rng.choice(pool) for _ in range(self.rng.randint(0, 3)))
            else:
                ch[p.name] = self.rng.choice(pool)
        return self._keyed(unit, ch)

    def _call_parts(self, unit: Unit, ch: dict[str, str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        args: list[str] = []
        kwargs: list[tuple[str, str]] = []
        positional_ok = True
        for p in unit.params:
            if p.kind == "starstar":
                # keyword arguments of its own: the choice 'x=2.5, y=1' (names no parameter has)
                try:
                    given = ast.parse(f"f({ch.get(p.name) or ''})", mode="eval").body
                except SyntaxError:
                    given = None
                if isinstance(given, ast.Call):
                    kwargs += [(k.arg, ast.unparse(k.value)) for k in given.keywords if k.arg]
                continue
            if p.name not in ch:
                if p.kind in ("pos", "posonly"):
                    positional_ok = False
                continue
            v = ch[p.name]
            if p.kind == "star":
                if positional_ok and v:
                    args += [x.strip() for x in _split_args(v)]
                continue
            if p.kind == "kwonly" or (not positional_ok and p.kind == "pos"):
                kwargs.append((p.name, v))
            elif p.kind == "posonly" and not positional_ok:
                continue
            elif p.required or p.kind == "posonly":
                args.append(v)
            else:
                kwargs.append((p.name, v))
                positional_ok = False
        return tuple(args), tuple(kwargs)

    def _call_src(self, callee: str, unit: Unit, ch: dict[str, str]) -> str:
        args, kwargs = self._call_parts(unit, ch)
        return f"{callee}({', '.join(list(args) + [f'{k}={v}' for k, v in kwargs])})"

    def _ctor_step(self, cls: str, ch: dict[str, str] | None = None) -> Step:
        if ch is None and self.class_members.get(cls, ("",))[0] == "abstract":
            # the methods an abstract class defines (``Shape.describe``), on an instance of its
            # first concrete subclass in the module (``shape = Circle(2.5)``): ``Shape()`` raises
            sub = next((c for c in self._subclasses.get(cls, []) if c in self._inits
                        and self.class_members.get(c, ("",))[0] not in ("abstract", "enum", "exception")), None)
            if sub is not None:
                built = self._ctor_step(sub)
                return Step("call", sub, built.args, built.kwargs, bind=self.vars.get(cls, var_name(cls, set())),
                            unit=sub)
        init = self._inits.get(cls) or self.units.get(cls)
        if ch is None:
            ch = self._choices(init)[0] if init is not None else {}
        args, kwargs = self._call_parts(init, ch) if init is not None else ((), ())
        return Step("call", cls, args, kwargs, bind=self.vars.get(cls, var_name(cls, set())), unit=cls)

    def _unit_step(self, unit: Unit, ch: dict[str, str]) -> Step:
        args, kwargs = self._call_parts(unit, ch)
        if unit.kind == "function":
            return Step("call", unit.name, args, kwargs, unit=unit.qualname)
        if unit.kind in ("static", "classmethod"):
            return Step("call", f"{unit.owner}.{unit.name}", args, kwargs, unit=unit.qualname)
        if unit.kind == "init":
            return Step("call", unit.owner, args, kwargs, bind=self.vars.get(unit.owner), unit=unit.owner)
        var = self.vars.get(unit.owner, "obj")
        if unit.kind == "property":
            return Step("attr", f"{var}.{unit.name}", unit=unit.qualname)
        return Step("call", f"{var}.{unit.name}", args, kwargs, unit=unit.qualname)

    def probe(self, unit: Unit, ch: dict[str, str], origin: str, ctor: dict[str, str] | None = None) -> Probe:
        step = self._unit_step(unit, ch)
        if unit.kind in ("method", "property"):
            return Probe(unit.qualname, (self._ctor_step(unit.owner, ctor), step), origin)
        return Probe(unit.qualname if unit.kind != "init" else unit.owner, (step,), origin)

    def initial(self, unit: Unit, n_random: int = 6) -> list[Probe]:
        """Variations around a typical call, then seeded random combinations; a function that
        reads ``sys.argv`` is called under command lines for its parser too."""
        out = [self.probe(unit, ch, "pool") for ch in self._choices(unit)]
        if unit.kind == "function" and unit.name in self.argv_reads:
            base = self._choices(unit)[0]
            pool = self.argv or ["['5']", "['hello']", "['hello', 'world']", "['-v']"]
            out += [Probe(unit.qualname, (Step("argv", "sys.argv", (src,)), self._unit_step(unit, base)), "pool")
                    for src in pool]
        if unit.kind in ("method", "property"):
            init = self._inits.get(unit.owner)
            if init is not None:
                base = self._choices(unit)[0]
                for ctor in self._choices(init)[1:6]:
                    out.append(self.probe(unit, base, "pool", ctor))
                for ctor in self._field_ctors(unit):
                    out.append(self.probe(unit, base, "pool", ctor))
        out += self.file_probes(unit)
        out += self.closure_probes(unit)
        out += self._own_lookup_probes(unit)
        init = self._inits.get(unit.owner) if unit.kind in ("method", "property") and unit.owner \
            and self.class_members.get(unit.owner, ("",))[0] not in ("abstract", "enum") else None
        for i in range(n_random):
            # every other one on an object built from drawn arguments too (an order that holds
            # items, and a drawn discount: only the typical object met the drawn arguments)
            ctor = self._random_choice(init) if init is not None and i % 2 else None
            out.append(self.probe(unit, self._random_choice(unit), "random", ctor))
        return _dedupe(out)

    def round_trips(self, n: int = 8) -> list[Probe]:
        """Functions named as inverses of each other (``dumps``/``loads``, ``encode``/``decode``,
        ``format_x``/``parse_x``, ``join``/``split``, ``to_x``/``from_x``), chained: the decoder
        called on what the encoder returns (``loads(dumps({'a': 1}))``), a document the code
        accepts, whose test asserts that the value comes back."""
        functions = {u.name: u for u in self.module.units if u.kind == "function" and not u.is_generator}
        out: list[Probe] = []
        for enc_name, enc in functions.items():
            if enc.node is None or not any(isinstance(r, ast.Return) and r.value is not None
                                           for r in ast.walk(enc.node)):
                continue  # it writes (dump(value, fp)): nothing to hand on
            for dec_name in _inverse_names(enc_name, set(functions)):
                dec = functions[dec_name]
                first = next((p for p in dec.params if p.kind in ("pos", "posonly")), None)
                if first is None:
                    continue
                base = self._choices(dec)[0]
                choices = self._choices(enc)[:n]
                value = next((p for p in enc.params if p.kind in ("pos", "posonly")), None)
                if value is not None and value.annotation is None and choices:
                    # what an encoder of documents takes: nested data, text, words to quote
                    choices += [{**choices[0], value.name: v} for v in _DOCUMENTS]
                for ch in choices:
                    inner = self._call_src(enc_name, enc, ch)
                    if len(inner) > _MAX_SRC:
                        continue
                    outer = dict(base)
                    outer[first.name] = inner
                    out.append(Probe(dec.qualname, (self._unit_step(dec, outer),), "pool"))
        return _dedupe(out)

    # ------------------------------------------------------------------ files named by a path
    def path_params(self, unit: Unit) -> list[Param]:
        """The parameters the code opens or stats as a path (``open(file)``, ``os.stat(f1)``,
        ``Path(p).read_text()``), also through the module's functions and, for a constructor, the
        class's methods (``self.file = file`` ... ``open(self.file)``)."""
        if unit.node is None:
            return []
        key = unit.qualname + "#" + unit.kind
        if key not in self._path_cache:
            self._path_cache[key] = self._path_params(unit)
        return self._path_cache[key]

    def dir_params(self, unit: Unit) -> list[Param]:
        """The parameters the code lists or walks as a directory (``os.listdir(top)``,
        ``os.walk(top)``, ``source.rglob('*')``), found as :meth:`path_params` finds files."""
        if unit.node is None:
            return []
        key = unit.qualname + "#" + unit.kind + "#dir"
        if key not in self._path_cache:
            self._path_cache[key] = self._path_params(unit, dirs=True)
        return self._path_cache[key]

    def path_list_params(self, unit: Unit) -> list[Param]:
        """The parameters whose items the code opens or stats as paths (``for name in files:
        open(name)``, fileinput's files), in its own body."""
        if unit.node is None:
            return []
        key = unit.qualname + "#" + unit.kind + "#list"
        if key not in self._path_cache:
            names: set[str] = set()
            for n in ast.walk(unit.node):
                if isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and isinstance(n.target, ast.Name) \
                        and n.target.id in self._path_names(n.body, 0):
                    names.add(n.iter.id)
            self._path_cache[key] = [p for p in unit.params
                                     if p.name in names and p.kind in ("pos", "posonly", "kwonly")]
        return self._path_cache[key]

    def _path_params(self, unit: Unit, dirs: bool = False) -> list[Param]:
        body = list(unit.node.body)
        if unit.kind == "init":
            cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner), None)
            kept = {t.attr: n.value.id for n in ast.walk(unit.node) if isinstance(n, ast.Assign)
                    and isinstance(n.value, ast.Name) for t in n.targets
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
            if cls is not None and kept:
                for m in cls.body:
                    if isinstance(m, ast.FunctionDef) and m is not unit.node:
                        body += _self_attrs_as_names(m.body, kept)
        names = self._path_names(body, 0, dirs)
        return [p for p in unit.params if p.name in names and p.kind in ("pos", "posonly", "kwonly")]

    def _path_names(self, body: list, depth: int, dirs: bool = False) -> set[str]:
        out: set[str] = set()
        calls = _DIR_CALLS if dirs else _PATH_CALLS
        for stmt in body:
            for n in ast.walk(stmt):
                if not isinstance(n, ast.Call):
                    continue
                if dirs and isinstance(n.func, ast.Attribute) and n.func.attr in _DIR_METHODS and \
                        isinstance(n.func.value, ast.Name):  # source.rglob('*'), top.iterdir()
                    out.add(n.func.value.id)
                if not n.args:
                    continue
                first = n.args[0]
                fname = _name_of_call(n.func)
                if fname in calls and isinstance(first, ast.Name):
                    out.add(first.id)
                elif depth < (4 if dirs else 2) and fname in self._module_functions and isinstance(n.func, ast.Name):
                    node = self._module_functions[fname]
                    params = [q for q in _params(node.args, False) if q.kind in ("pos", "posonly")]
                    inner = self._path_names(node.body, depth + 1, dirs)
                    out |= {a.id for q, a in zip(params, n.args) if isinstance(a, ast.Name) and q.name in inner}
        if dirs and out:  # a directory listed under a local name it was handed on to (glob's `arg = dirname`)
            moved = [(n.targets[0].id, n.value.id) for stmt in body for n in ast.walk(stmt)
                     if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                     and isinstance(n.value, ast.Name)]
            for _ in range(3):
                out |= {src for dst, src in moved if dst in out}
        return out

    def lists_dirs(self, unit: Unit) -> bool:
        """Whether a call of ``unit`` lists or globs a directory (``os.listdir()``,
        ``os.scandir(arg)``, ``Path('.').glob('*')``), itself or through the module's functions
        and its class's methods, a few calls down: what it finds depends on the files around it."""
        if unit.node is None:
            return False
        key = unit.qualname + "#" + unit.kind + "#lists"
        if key not in self._lists_cache:
            cls = next((n for n in self.module.tree.body if isinstance(n, ast.ClassDef) and n.name == unit.owner),
                       None) if unit.owner else None
            methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)} if cls is not None else {}
            seen: set[int] = set()
            todo = [(unit.node, 0)]
            found = False
            while todo and not found:
                node, depth = todo.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                for n in ast.walk(node):
                    if not isinstance(n, ast.Call):
                        continue
                    f = n.func
                    name = _name_of_call(f)
                    if name in _LISTINGS and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                                  and f.value.id == "ast"):
                        found = True
                        break
                    if depth < 4 and isinstance(f, ast.Name) and f.id in self._module_functions:
                        todo.append((self._module_functions[f.id], depth + 1))
                    elif depth < 4 and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                            f.value.id in ("self", "cls") and f.attr in methods:
                        todo.append((methods[f.attr], depth + 1))
            self._lists_cache[key] = found
        return self._lists_cache[key]

    def _file_texts(self, consts: list, columns: tuple[str, ...] = ()) -> list[str]:
        """What files handed to the code hold: lines of the module's own words, each followed
        by a value (netrc's ``machine hello login abc``), a table whose header is the words
        (``columns`` first: the parameters' text defaults, ``by="region"``) as a CSV file
        (``csv.DictReader`` and ``row["amount"]``), the module's strings as lines, plain text, an
        empty file; its bytes where it has bytes literals."""
        words = list(dict.fromkeys(c for c in consts if _is_word(c)))[:8]
        texts = []
        for k in range(min(3, len(words))):  # (starting from each of the first three words)
            texts.append(" ".join(f"{w} {_FILL[i]}" for i, w in enumerate(words[k:k + 4])) + "\n")
            if k < 2 and len(words) > 3:  # and every other word (netrc: machine hello login abc ...)
                texts.append(" ".join(f"{w} {_FILL[i]}" for i, w in enumerate(words[k::2][:3])) + "\n")
        if words:
            texts.insert(1, "".join(f"{w} {_FILL[i % len(_FILL)]}\n" for i, w in enumerate(words)))
        own = [c if c.endswith("\n") else c + "\n" for c in consts if type(c) is str and c.strip()
               and "\0" not in c][:4]
        texts = texts[:1] + _TEXT_FILES[:1] + texts[1:] + [""] + own + _TEXT_FILES[2:4]
        out = [_lit(t) for t in dict.fromkeys(texts)]
        own_bytes = [c for c in consts if type(c) is bytes and c][:2]
        tables = [_lit(t) for t in _table_texts(list(dict.fromkeys([*columns, *words])))]
        return out[:2] + tables + [_lit(b) for b in own_bytes] + out[2:10]

    def _text_defaults(self) -> tuple[str, ...]:
        """The word-like text defaults of the module's parameters (``by="region"``): names of
        the fields its files hold, often."""
        found = [p.default.value for u in self.module.units for p in u.params
                 if isinstance(p.default, ast.Constant) and _is_word(p.default.value)]
        return tuple(dict.fromkeys(found))[:3]

    def file_probes(self, unit: Unit) -> list[Probe]:
        """Calls whose path parameters name files the test writes first (the same text in
        each, or another text in the second), and methods called on an object built from
        such files."""
        out: list[Probe] = []
        paths = self.path_params(unit)
        texts = self._file_texts(self._consts(unit), self._text_defaults())
        if paths and texts:
            base = self._choices(unit)[0]
            for k in range(len(texts)):
                files, ch = self._files_for(paths, texts, k, base)
                out.append(Probe(unit.qualname if unit.kind != "init" else unit.owner,
                                 files + self.probe(unit, ch, "pool").steps, "pool"))
        lists = [p for p in self.path_list_params(unit) if p not in paths]
        if lists and texts:  # a list of paths: two files the test writes first (one, for k odd)
            base = self._choices(unit)[0]
            for k in range(min(4, len(texts))):
                ch = dict(base)
                files: list[Step] = []
                for p in lists:
                    names = [f"{p.name}_{i + 1}.txt" for i in range(2 if k % 2 == 0 else 1)]
                    files += [Step("file", n, (texts[(k + i) % len(texts)],)) for i, n in enumerate(names)]
                    ch[p.name] = "[" + ", ".join(repr(n) for n in names) + "]"
                out.append(Probe(unit.qualname if unit.kind != "init" else unit.owner,
                                 tuple(files) + self.probe(unit, ch, "pool").steps, "pool"))
        dirs = self.dir_params(unit)
        if dirs and texts:
            base = self._choices(unit)[0]
            names = self._tree_names(self._consts(unit))
            for k in range(min(4, len(texts))):
                files, ch = self._dirs_for(dirs, texts, names, k, base)
                rest = [p for p in paths if p not in dirs]
                if rest:
                    more, ch = self._files_for(rest, texts, k, ch)
                    files = more + files
                out.append(Probe(unit.qualname if unit.kind != "init" else unit.owner,
                                 files + self.probe(unit, ch, "pool").steps, "pool"))
        if dirs and texts:  # its other strings naming what the tree holds (total_size(top, '.txt'))
            files, ch = self._dirs_for(dirs, texts, names, 0, self._choices(unit)[0])
            for p in self._named_params(unit, paths + dirs):
                for v in self._tree_values(names):
                    out.append(Probe(unit.qualname if unit.kind != "init" else unit.owner,
                                     files + self.probe(unit, {**ch, p.name: v}, "pool").steps, "pool"))
        if self.lists_dirs(unit):
            out += self._tree_probes(unit, paths + dirs, texts)
        init = self._inits.get(unit.owner) if unit.kind in ("method", "property") else None
        init_paths = self.path_params(init) if init is not None else []
        init_dirs = self.dir_params(init) if init is not None else []
        if init_dirs:
            itexts = self._file_texts(self._consts(init)) or [_lit("hello\n")]
            ibase = self._choices(init)[0]
            names = self._tree_names(self._consts(init) + self._consts(unit))
            for k in range(min(4, len(itexts))):
                files, ctor = self._dirs_for(init_dirs, itexts, names, k, ibase)
                rest = [p for p in init_paths if p not in init_dirs]
                if rest:
                    more, ctor = self._files_for(rest, itexts, k, ctor)
                    files = more + files
                out.append(Probe(unit.qualname, files + (self._ctor_step(unit.owner, ctor),
                                                         self._unit_step(unit, self._choices(unit)[0])), "pool"))
        if init_paths and not init_dirs:
            itexts = self._file_texts(self._consts(init))
            ibase = self._choices(init)[0]
            calls = [self._choices(unit)[0]]
            first = next((p for p, spec in self.specs(unit) if p.kind in ("pos", "posonly")
                          and spec.kind not in ("bool", "callable", "instance", "enum")), None)
            if first is not None:  # a value the files hold (netrc's authenticators('hello'): its
                # host is a key of a dict, read as an index)
                calls += [{**calls[0], first.name: _lit(w)} for w in _FILL[:2]]
            for k in range(len(itexts)):  # (netrc's one valid text is its sixth)
                files, ctor = self._files_for(init_paths, itexts, k, ibase)
                for ch in calls:
                    out.append(Probe(unit.qualname, files + (self._ctor_step(unit.owner, ctor),
                                                             self._unit_step(unit, ch)), "pool"))
        return out

    def _named_params(self, unit: Unit, taken: list[Param]) -> list[Param]:
        """The (first two) parameters of ``unit`` that take a string or are named as a path or a
        pattern (glob's ``pathname``, typed by ``pathname[:0]`` alone), but for ``taken``."""
        return [p for p, spec in self.specs(unit) if p not in taken and p.kind in ("pos", "posonly", "kwonly")
                and (spec.kind in ("str", "any") or _PATHY.search(p.name.lower()))][:2]

    def _tree_values(self, names: list[str]) -> list[str]:
        """Strings naming what a tree of ``names`` holds: a file, the subdirectory, a file in it,
        an extension; and shell patterns matching them when the module matches patterns
        (``fnmatch``, ``glob``, a ``*`` among its strings)."""
        top = next((n for n in names if "/" not in n), names[0])
        inner = next((n for n in names if "/" in n), "sub/c.txt")
        ext = "." + top.rsplit(".", 1)[1] if "." in top.strip(".") else ".txt"
        out = [top, inner.split("/")[0], inner, ext]
        if self._matches_patterns():
            out += ["*" + ext, "*", inner.split("/")[0] + "/*", "[ab]" + ext, "**"]
        return [_lit(v) for v in dict.fromkeys(out)]

    def _matches_patterns(self) -> bool:
        tree = self.module.tree
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
            {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        return bool(imported & {"fnmatch", "glob"}) or any(
            isinstance(n, ast.Constant) and type(n.value) is str and "*" in n.value and len(n.value) <= 20
            for n in ast.walk(tree))

    def _tree_probes(self, unit: Unit, taken: list[Param], texts: list[str]) -> list[Probe]:
        """Calls of a unit that lists a directory (the working directory, or one it derives from
        its arguments: ``glob('*.txt')``) in a working directory holding a tree of files the test
        writes first; its string parameters naming what is there."""
        names = self._tree_names(self._consts(unit))
        texts = texts or [_lit("hello\n")]
        tree = tuple(Step("file", fn, (texts[i % len(texts)],)) for i, fn in enumerate(names))
        base = self._choices(unit)[0]
        chs = [base] + [{**base, p.name: v} for p in self._named_params(unit, taken) for v in self._tree_values(names)]
        owner = unit.qualname if unit.kind != "init" else unit.owner
        return [Probe(owner, tree + self.probe(unit, ch, "pool").steps, "pool") for ch in chs]

    @staticmethod
    def _tree_names(consts: list) -> list[str]:
        """The names of the files in a directory handed to the code: the module's own file names
        (zipapp's '__main__.py'), a file with an extension it names, then a.txt, b.txt and
        sub/c.txt."""
        own = [c for c in consts if type(c) is str and "." in c.strip(".") and not c.startswith(".")
               and all(part.replace("_", "a").replace("-", "a").isalnum() for part in c.split("."))
               and len(c) <= 30][:2]
        # and a file for each extension it looks for (tabnanny's '.py': sub/a.py)
        own += [f"sub/a{c}" for c in consts if type(c) is str and c.startswith(".") and 1 < len(c) <= 6
                and c[1:].isalnum() and c != ".txt"][:1]
        return list(dict.fromkeys(own + ["a.txt", "b.txt", "sub/c.txt"]))[:5]

    @staticmethod
    def _dirs_for(params: list[Param], texts: list[str], names: list[str], k: int,
                  base: dict[str, str]) -> tuple[tuple[Step, ...], dict[str, str]]:
        """Files in a directory for each of ``params`` (named after the parameter): the first
        the tree of ``names``, a second the same tree (even ``k``) or another one (odd ``k``:
        its first file outside sub/ named otherwise, another text in the file after it)."""
        ch = dict(base)
        files = []
        top = next((i for i, fn in enumerate(names) if "/" not in fn), 0)  # (a file in it, not in sub/)
        for j, p in enumerate(params):
            same = j == 0 or k % 2 == 0
            for i, fn in enumerate(names):
                text = texts[(k + i) % len(texts)] if same or i != top + 1 else texts[(k + i + 1) % len(texts)]
                if not same and i == top:
                    fn = f"only_{p.name}.txt"
                files.append(Step("file", f"{p.name}/{fn}", (text,)))
            ch[p.name] = repr(p.name)
        return tuple(files), ch

    @staticmethod
    def _files_for(paths: list[Param], texts: list[str], k: int, base: dict[str, str]) -> tuple[tuple[Step, ...],
                                                                                                dict[str, str]]:
        ch = dict(base)
        files = []
        for j, p in enumerate(paths):
            name = p.name + ".txt" if "." not in p.name else p.name
            text = texts[k] if j == 0 or k % 2 == 0 else texts[(k + 1) % len(texts)]
            files.append(Step("file", name, (text,)))
            ch[p.name] = repr(name)
        return tuple(files), ch

    def sequences(self, cls_name: str, n: int = 12) -> list[Probe]:
        """Constructor then 2-4 method calls of a class (state that builds up)."""
        cls = self.module.class_named(cls_name)
        if cls is None:
            return []
        methods = [m for m in cls.methods if m.kind in ("method", "property")]
        if not methods:
            return []
        out = []
        for i in range(n):
            steps = [self._ctor_step(cls_name, None if i % 3 else None)]
            for _ in range(self.rng.randint(2, 4)):
                m = self.rng.choice(methods)
                ch = self._random_choice(m) if self.rng.random() < 0.6 else self._choices(m)[0]
                steps.append(self._unit_step(m, ch))
            out.append(Probe(cls_name, tuple(steps), "random"))
        # each method twice in a row, and each pair
        for m in methods:
            chs = self._choices(m)
            steps = [self._ctor_step(cls_name)] + [self._unit_step(m, chs[min(j, len(chs) - 1)]) for j in (0, 1)]
            out.append(Probe(cls_name, tuple(steps), "pool"))
        shared = []
        for a in methods:
            for b in methods:
                if a is not b:
                    cha, chb = self._choices(a)[0], self._choices(b)[0]
                    out.append(Probe(cls_name, (self._ctor_step(cls_name), self._unit_step(a, cha),
                                                self._unit_step(b, chb)), "pool"))
                    same = self._same_values(cha, b, chb)
                    if same is not None:  # the key put in is the key taken out
                        shared.append(Probe(cls_name, (self._ctor_step(cls_name), self._unit_step(a, cha),
                                                       self._unit_step(b, same)), "pool"))
        shared = _dedupe(shared)[: 2 * len(methods)]
        return _dedupe(_dedupe(out)[: max(n, 4 * len(methods) + 8)] + shared + self._filled(cls_name, methods))

    def _filled(self, cls_name: str, methods: list[Unit]) -> list[Probe]:
        """Each method that takes values called four times with different ones (a cache's
        ``put`` past its capacity: what it evicts), on the typical object and on one built
        small (``capacity=1``), then a read of what the first call put in (``get`` of the
        first key: gone or kept) or a method that takes no argument (``keys()``). Random
        sequences met no such thing: the same key put twice at most."""
        init = self._inits.get(cls_name)
        ctors: list[dict[str, str] | None] = [None]
        if init is not None:
            ctors += [ch for ch in self._choices(init)[1:] if any(v in ("1", "2") for v in ch.values())][:1]
        readers = [m for m in methods if m.kind == "method" and not any(p.required for p in m.params)]
        each: list[list[Probe]] = []
        for m in methods:
            out: list[Probe] = []
            each.append(out)
            specs = [(p, s) for p, s in self.specs(m) if p.required]
            if m.kind != "method" or not specs or m.name.startswith(("remove", "pop", "del", "discard", "clear")):
                continue
            first, spec = specs[0]
            pool = [v for v in self._pool_for(first, spec, self._consts(m), 0, m) if v not in ("None", "''", "[]")]
            if len(pool) < 4:
                continue
            base = self._choices(m)[0]
            chs = [{**base, first.name: v} for v in pool[:4]]
            for ctor in ctors:
                steps = [self._ctor_step(cls_name, ctor)] + [self._unit_step(m, ch) for ch in chs]
                for b in methods:
                    shared = {p.name for p in b.params} & set(chs[0])
                    if b is not m and b.kind == "method" and shared:
                        back = self._unit_step(b, {**self._choices(b)[0], **{k: chs[0][k] for k in shared}})
                        out.append(Probe(cls_name, tuple(steps + [back]), "pool"))
                        # the first read back before the last call (a cache's get keeps it)
                        again = steps[:-1] + [back, steps[-1]] + ([self._unit_step(readers[0], {})] if readers else [])
                        out.append(Probe(cls_name, tuple(again), "pool"))
                for r in readers[:2]:
                    out.append(Probe(cls_name, tuple(steps + [self._unit_step(r, self._choices(r)[0])]), "pool"))
        # (taking turns: each method's first ones)
        return _dedupe([p for row in zip_longest(*each) for p in row if p is not None])[:16]

    def _same_values(self, earlier: dict[str, str], unit: Unit, ch: dict[str, str]) -> dict[str, str] | None:
        """``ch`` with each parameter of ``unit`` named as one of the earlier call's taking that
        call's value (``add(name)`` then ``remove(name)``: the same name); None when no value
        changes."""
        names = {p.name for p, _ in self.specs(unit) if p.kind not in ("star", "starstar")}
        same = dict(ch)
        for k in names & set(earlier):
            same[k] = earlier[k]
        return same if same != ch else None

    def protocol_probes(self, cls_name: str) -> list[Probe]:
        """The operators and built-in protocols a class defines (``__add__``, ``__lt__``,
        ``__neg__``, ``__len__``, ``__getitem__``, ``__str__`` ...), each as an expression on an
        instance: ``fraction + Fraction(1, 3)``, ``2 * fraction``, ``-fraction``, ``len(stack)``.
        The other operand is another instance or a value the dunder's parameter takes.
        ``__hash__`` is left out (string hashes change between runs)."""
        cls = self.module.class_named(cls_name)
        init = self._inits.get(cls_name) or self.units.get(cls_name)
        if cls is None or init is None or cls.style in ("enum", "exception", "abstract"):
            return []
        choices = self._choices(init)
        ctors = choices[:3]
        others = [self._call_src(cls_name, init, ch) for ch in choices[1:5]]
        out: list[Probe] = []

        def add(ch, template):  # HOLE in the template stands for the instance
            ctor = self._ctor_step(cls_name, ch)
            out.append(Probe(cls_name, (ctor, Step("attr", template.replace(_HOLE, ctor.bind or "obj"))), "pool"))

        for name in cls.dunders:
            if name in _BINARY_OPS or name in _REFLECTED_OPS:
                operands = [_operand(x) for x in others[:2] + self._dunder_values(cls, name)[:3] + others[2:]][:6]
                for k, x in enumerate(operands):
                    if name in _BINARY_OPS:
                        template = f"{_HOLE} {_BINARY_OPS[name]} {x}"
                    else:
                        template = f"{x} {_REFLECTED_OPS[name]} {_HOLE}"
                    for ch in (ctors if k == 0 else ctors[:1]):
                        add(ch, template)
            elif name in _UNARY_OPS:
                for ch in ctors:
                    add(ch, _UNARY_OPS[name].replace("{}", _HOLE))
            elif name == "__getitem__":
                for ch in ctors[:2]:
                    for key in ("0", "-1", "1"):
                        add(ch, f"{_HOLE}[{key}]")
            elif name == "__contains__":
                for ch in ctors[:2]:
                    for x in ("0", "1", "'a'"):
                        add(ch, f"{x} in {_HOLE}")
            elif name == "__getattr__":  # attributes it makes up (addict's Dict: d.a)
                for ch in ctors[:2]:
                    for attr in ("a", "name"):
                        add(ch, f"{_HOLE}.{attr}")
            elif name == "__setattr__":  # obj.a = 5, then obj.a; also a name the class has
                own = [m.name for m in cls.methods if m.name.isidentifier() and not m.name.startswith("_")]
                for attr, value in [("a", "5"), ("a", "'x'"), ("name", "[1, 2]")] + [(a, "5") for a in own[:1]]:
                    ctor = self._ctor_step(cls_name, ctors[0])
                    var = ctor.bind or "obj"
                    out.append(Probe(cls_name, (ctor, Step("call", "setattr", (var, repr(attr), value)),
                                                Step("attr", f"{var}.{attr}")), "pool"))
        return _dedupe(out)

    def _dunder_values(self, cls, name: str) -> list[str]:
        """Values for the other operand of ``cls.name``: its parameter's pool when the dunder is
        written out, else small numbers."""
        node = next((n for n in cls.node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if node is not None:
            params = _params(node.args, drop_first=True)
            if params:
                spec = infer_param(params[0], node.body, self.class_members)
                if spec != ANY:
                    return self.pool(spec, self._consts(self._inits.get(cls.name) or self.units[cls.name]))[:3]
        return ["2", "0.5"]

    # ------------------------------------------------------------------ hypothesis
    def hypothesis(self, units: list[Unit], n: int = 10, salt: int = 0) -> list[Probe]:
        """``n`` calls of each unit drawn by hypothesis from strategies built on the specs (one
        hypothesis run for all the units: its set-up is the expensive part)."""
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hseed
        from hypothesis import strategies as st

        plan = []
        for unit in units:
            specs = [(p, s) for p, s in self.specs(unit) if p.kind not in ("star", "starstar")]
            if specs:
                consts = self._consts(unit)
                slept = self.slept(unit)
                plan.append((unit, specs, st.tuples(*[
                    st.one_of(st.none(), _strategy(s, consts, self)) if not p.required and p.name not in slept
                    else _strategy(s, consts, self) for p, s in specs])))
        if not plan:
            return []
        found: list[list[dict[str, str]]] = [[] for _ in plan]

        @hseed(self.seed + 7919 * salt)
        @settings(max_examples=n * 2, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
        @given(st.tuples(*[strat for _, _, strat in plan]))
        def collect(all_values):
            for k, ((_, specs, _), values) in enumerate(zip(plan, all_values)):
                if len(found[k]) >= n:
                    continue
                ch = {}
                for (p, _), v in zip(specs, values):
                    if v is not None:
                        ch[p.name] = v
                    elif p.required:
                        ch[p.name] = "None"
                found[k].append(ch)

        with _private_hypothesis_home():
            try:
                collect()
            except Exception:  # an odd spec: keep what was drawn
                pass
        return _dedupe([self.probe(unit, self._keyed(unit, ch, 0.5), "hypothesis")
                        for (unit, _, _), chs in zip(plan, found) for ch in chs])

    @property
    def patterns(self) -> list[str]:
        """The names of the module's compiled patterns: ``NAME = re.compile(...)``, or a call of a
        function of the module that returns one (``_newline = make_regex(r'...')``)."""
        if self._patterns is None:
            self._patterns = _pattern_names(self.module.tree)
        return self._patterns

    def _streams(self, kind: str, consts: list) -> list[str]:
        """``StringIO('...')`` sources (``BytesIO(b'...')`` for a binary stream): lines of text as
        files hold them (the module's strings, and those drawn from its patterns, among them)."""
        own = [c for c in [*self.regex_strings, *consts] if type(c) is str and c.strip()][:12]
        texts = list(dict.fromkeys(_TEXT_FILES[:4] + [c if c.endswith("\n") else c + "\n" for c in own]
                                   + _TEXT_FILES[4:]))
        if kind == "bytes":
            return [f"BytesIO({_lit(t.encode('utf-8', 'surrogatepass'))})" for t in texts]
        out = [f"StringIO({_lit(t)})" for t in texts]
        own_bytes = [c for c in consts if type(c) is bytes and c][:6]
        if own_bytes:  # a module of bytes literals (plistlib's b'bplist00') may read binary files
            binary = [f"BytesIO({_lit(b)})" for b in own_bytes] + \
                     [f"BytesIO({_lit(t.encode('utf-8', 'surrogatepass'))})" for t in texts[:2]]
            out = out[:2] + [x for pair in zip(binary, out[2:]) for x in pair] + \
                out[2 + len(binary):] + binary[len(out[2:]):]
        return out

    @property
    def matches(self) -> list[str]:
        """``RE_X.match('...')`` sources: matches of the module's compiled patterns (module-level
        ``NAME = re.compile(...)``), on strings drawn from each pattern with its flags."""
        if self._matches is None:
            self._matches = []
            for name, pattern in [(k, v) for k, v in self.compiled_patterns.items() if "." not in k]:
                for text in _draw_regex(pattern, self.seed, 3):
                    if pattern.match(text):
                        self._matches.append(f"{name}.match({_lit(text)})")
        return self._matches

    # ------------------------------------------------------------------ docstrings
    def docstring_probes(self) -> list[Probe]:
        """Calls in the docstrings' doctest examples: ``>>> f(args)`` and, for classes,
        ``>>> s = Stack(...)`` followed by ``>>> s.push(...)`` lines."""
        out: list[Probe] = []
        parser = doctest.DocTestParser()
        for unit in self.module.units:
            owner_doc = None
            if unit.kind == "init":
                owner_doc = unit.doc
            for doc in {unit.doc, owner_doc} - {None}:
                try:
                    examples = parser.get_examples(doc)
                except ValueError:
                    continue
                out += self._doc_sequence(examples, doc)
        mod_doc = ast.get_docstring(self.module.tree)
        if mod_doc:
            try:
                out += self._doc_sequence(parser.get_examples(mod_doc), mod_doc)
            except ValueError:
                pass
        return _dedupe(out)

    def _doc_sequence(self, examples, doc: str = "") -> list[Probe]:
        out: list[Probe] = []
        bound: dict[str, str] = {}  # doctest variable -> class
        literals: dict[str, ast.expr] = {}  # doctest variable -> the literal it was bound to
        steps: list[Step] = []
        # the names the examples call the module by (``>>> import xmltodict``, then
        # ``xmltodict.parse(...)``): such a call is the call of the module's own name
        own = self.module.name.rpartition(".")[2]
        aliases = {own, self.module.name}
        for ex in examples:
            node = _example_tree(ex, doc)
            if node is None or len(node.body) != 1:
                continue
            stmt = node.body[0]
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for a in stmt.names:
                    if a.name in (own, self.module.name) or (isinstance(stmt, ast.ImportFrom) and a.name == own):
                        aliases.add(a.asname or a.name)
                continue
            stmt = _Unqualify(aliases, set(self.units) | set(self.vars)).visit(stmt)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                literals.pop(name, None)
                try:  # ``>>> obj = {'foo': [1, 2]}``: the later examples' ``obj`` is that literal
                    ast.literal_eval(stmt.value)
                    if len(ast.unparse(stmt.value)) <= 2000:
                        literals[name] = stmt.value
                        continue
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    pass
            if literals:
                stmt = _Substitute(literals).visit(stmt)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) \
                    and stmt.value.func.id in self.vars:
                cls = stmt.value.func.id
                var = self.vars[cls]
                bound[stmt.targets[0].id] = cls
                steps = [Step("call", cls, tuple(ast.unparse(a) for a in stmt.value.args),
                              tuple((k.arg, ast.unparse(k.value)) for k in stmt.value.keywords if k.arg),
                              bind=var, unit=cls)]
                continue
            if not isinstance(stmt, ast.Expr):
                out += self._doc_inner_calls(stmt.value) if isinstance(stmt, ast.Assign) else []
                continue
            call = stmt.value
            target = call.func if isinstance(call, ast.Call) else call
            direct = isinstance(target, ast.Name) and target.id in self.units and isinstance(call, ast.Call)
            on_bound = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and target.value.id in bound
            if not direct and not on_bound:
                # ``f(x) == y``, ``print(f(x))``, ``Version('1.0').is_prerelease``: the calls inside
                out += self._doc_inner_calls(call)
                continue
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.units \
                    and _literal_args(call):
                unit = self.units[call.func.id]
                if unit.kind == "function":
                    out.append(Probe(unit.qualname, (Step("call", unit.name, tuple(ast.unparse(a) for a in call.args),
                                                          tuple((k.arg, ast.unparse(k.value)) for k in call.keywords),
                                                          unit=unit.qualname),), "docstring"))
                elif unit.kind == "init":
                    out.append(Probe(unit.owner, (Step("call", unit.owner, tuple(ast.unparse(a) for a in call.args),
                                                       tuple((k.arg, ast.unparse(k.value)) for k in call.keywords),
                                                       bind=self.vars.get(unit.owner), unit=unit.owner),),
                                     "docstring"))
                continue
            target = call.func if isinstance(call, ast.Call) else call
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                    target.value.id in bound and steps:
                cls = bound[target.value.id]
                var = self.vars[cls]
                qual = f"{cls}.{target.attr}"
                if isinstance(call, ast.Call):
                    if not _literal_args(call):
                        continue
                    steps.append(Step("call", f"{var}.{target.attr}", tuple(ast.unparse(a) for a in call.args),
                                      tuple((k.arg, ast.unparse(k.value)) for k in call.keywords), unit=qual))
                else:
                    steps.append(Step("attr", f"{var}.{target.attr}", unit=qual))
                out.append(Probe(cls, tuple(steps), "docstring"))
        return out

    def _doc_inner_calls(self, expr: ast.expr) -> list[Probe]:
        """The calls of the module's functions and classes (with literal arguments) inside a
        doctest expression: ``f(x) == y``, ``print(f(x))``, ``list(f(x))``; on a fresh object,
        ``Cls(x).attr`` and ``Cls(x).method(y)`` (the object built, then the attribute read)."""
        out: list[Probe] = []

        def ctor(call: ast.Call) -> Step | None:
            unit = self.units.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if unit is None or not _literal_args(call):
                return None
            args = tuple(ast.unparse(a) for a in call.args)
            kwargs = tuple((k.arg, ast.unparse(k.value)) for k in call.keywords if k.arg)
            if unit.kind == "function":
                return Step("call", unit.name, args, kwargs, unit=unit.qualname)
            if unit.kind == "init" and unit.owner in self.vars:
                return Step("call", unit.owner, args, kwargs, bind=self.vars[unit.owner], unit=unit.owner)
            return None

        seen: set[int] = set()
        for node in ast.walk(expr):
            if id(node) in seen:
                continue
            target = node.func if isinstance(node, ast.Call) else node
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Call):
                first = ctor(target.value)
                if first is not None and first.bind is not None:
                    seen.add(id(target.value))
                    cls = first.callee
                    qual = f"{cls}.{target.attr}"
                    if isinstance(node, ast.Call):
                        if not _literal_args(node):
                            continue
                        last = Step("call", f"{first.bind}.{target.attr}", tuple(ast.unparse(a) for a in node.args),
                                    tuple((k.arg, ast.unparse(k.value)) for k in node.keywords if k.arg), unit=qual)
                    else:
                        last = Step("attr", f"{first.bind}.{target.attr}", unit=qual)
                    out.append(Probe(cls, (first, last), "docstring"))
                    continue
            if isinstance(node, ast.Call):
                step = ctor(node)
                if step is not None:
                    out.append(Probe(step.unit or step.callee, (step,), "docstring"))
        return out

    # ------------------------------------------------------------------ mutation
    def mutate(self, probe: Probe) -> Probe | None:
        """A small change of ``probe`` (None when nothing could change)."""
        for _ in range(6):
            r = self.rng.random()
            steps = list(probe.steps)
            c0 = next((j for j, st in enumerate(steps) if st.kind != "file"), 0)  # (after the files it reads)
            has_ctor = c0 < len(steps) and steps[c0].bind is not None
            cls = steps[c0].callee if has_ctor else None
            cinfo = self.module.class_named(cls) if cls else None
            if cinfo is not None and cinfo.methods and r < 0.3:
                methods = [m for m in cinfo.methods if m.kind in ("method", "property")]
                if methods:
                    op = self.rng.random()
                    if op < 0.5 and len(steps) < 7 + c0:
                        m = self.rng.choice(methods)
                        pos = self.rng.randint(c0 + 1, len(steps))
                        steps.insert(pos, self._unit_step(m, self._random_choice(m)))
                    elif len(steps) > c0 + 2:
                        del steps[self.rng.randint(c0 + 1, len(steps) - 1)]
                    elif len(steps) > c0 + 1 and len(steps) < 7 + c0:
                        steps.append(steps[-1])
                    new = Probe(probe.unit, tuple(steps), "mutation")
                    if new != probe:
                        return new
                    continue
            i = self.rng.randrange(len(steps))
            st = steps[i]
            slots = [("a", j) for j in range(len(st.args))] + [("k", j) for j in range(len(st.kwargs))]
            unit = self.units.get(st.unit) if st.unit else None
            if unit is not None and r < 0.45:
                # re-draw one parameter from its pool, or drop / add an optional one
                ch = self._choice_of(unit, st)
                if ch is not None:
                    specs = self.specs(unit)
                    p, s = self.rng.choice(specs) if specs else (None, None)
                    if p is not None and p.kind not in ("star", "starstar"):
                        if not p.required and p.name in ch and p.name not in self.slept(unit) \
                                and self.rng.random() < 0.3:
                            del ch[p.name]
                        else:
                            ch[p.name] = self.rng.choice(self.pool(s, self._consts(unit)))
                            ch = self._keyed(unit, ch, 0.5, changed=p.name)
                        steps[i] = self._rebuild(st, unit, ch)
                        new = Probe(probe.unit, tuple(steps), "mutation")
                        if new != probe:
                            return new
                        continue
            if unit is not None and self.slept(unit):  # (a delay handed to time.sleep: only redrawn)
                pos = [q.name for q in unit.params if q.kind in ("pos", "posonly")]
                slots = [(kd, k) for kd, k in slots if (pos[k] if kd == "a" and k < len(pos) else
                                                        st.kwargs[k][0] if kd == "k" else "") not in self.slept(unit)]
            if not slots:
                continue
            kind, j = self.rng.choice(slots)
            src = st.args[j] if kind == "a" else st.kwargs[j][1]
            new_src = self.perturb(src)
            if new_src is None or new_src == src or len(new_src) > _MAX_SRC:
                continue
            if kind == "a":
                args = list(st.args)
                args[j] = new_src
                st = Step(st.kind, st.callee, tuple(args), st.kwargs, st.bind, st.unit)
            else:
                kw = list(st.kwargs)
                kw[j] = (kw[j][0], new_src)
                st = Step(st.kind, st.callee, st.args, tuple(kw), st.bind, st.unit)
            steps[i] = st
            return Probe(probe.unit, tuple(steps), "mutation")
        return None

    def _choice_of(self, unit: Unit, st: Step) -> dict[str, str] | None:
        ch: dict[str, str] = {}
        pos = [p for p in unit.params if p.kind in ("pos", "posonly")]
        star = next((p for p in unit.params if p.kind == "star"), None)
        for j, a in enumerate(st.args):
            if j < len(pos):
                ch[pos[j].name] = a
            elif star is not None:
                ch[star.name] = (ch[star.name] + ", " + a) if star.name in ch else a
            else:
                return None
        named = {p.name for p in unit.params if p.kind not in ("star", "starstar")}
        starstar = next((p for p in unit.params if p.kind == "starstar"), None)
        for k, v in st.kwargs:
            if k not in named and starstar is not None:  # kept as the **kwargs choice: 'x=2.5, y=1'
                ch[starstar.name] = (ch[starstar.name] + ", " if starstar.name in ch else "") + f"{k}={v}"
            else:
                ch[k] = v
        return ch

    def _rebuild(self, st: Step, unit: Unit, ch: dict[str, str]) -> Step:
        args, kwargs = self._call_parts(unit, ch)
        return Step(st.kind, st.callee, args, kwargs, st.bind, st.unit)

    def perturb(self, src: str) -> str | None:
        """One literal inside ``src`` changed a little (numbers, strings, containers)."""
        try:
            tree = _Signed().visit(ast.parse(src, mode="eval"))
        except SyntaxError:
            return None
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict))
                 and not (isinstance(n, ast.Constant) and (n.value is None or isinstance(n.value, bool)
                                                             and False))]
        if not nodes:
            return None
        node = self.rng.choice(nodes)
        new = self._perturb_node(node)
        if new is None:
            return None
        tree = _Swap(node, new).visit(tree)
        ast.fix_missing_locations(tree)
        try:
            out = ast.unparse(tree)
            compile(out, "<probe>", "eval")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            return None
        return out

    def _perturb_node(self, node: ast.AST) -> ast.AST | None:
        rng = self.rng
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return ast.Constant(not v)
            if isinstance(v, int):
                choices = [v + 1, v - 1, -v, v * 2, v // 2, 0, v + rng.randint(-10, 10), v * 10 + 3]
                consts = [c for c in self.module_consts if type(c) is int]
                if consts:
                    c = rng.choice(consts)
                    choices += [c, c + 1, c - 1]
                w = rng.choice(choices)
                if abs(w) > 10 ** 9:
                    w = v + 1
                return ast.Constant(w)
            if isinstance(v, float):
                w = rng.choice([v + 0.5, v - 0.5, -v, v * 2, round(v / 4, 2), 0.0, v + 0.25])
                return ast.Constant(w + 0.0 if w != 0 else 0.0)
            if isinstance(v, str):
                return ast.Constant(self._perturb_str(v))
            if isinstance(v, bytes):
                return ast.Constant(rng.choice([v + b"x", v[1:], v[:-1], b"", v * 2]))
            return None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            elts = list(node.elts)
            op = rng.random()
            if elts and op < 0.25:
                del elts[rng.randrange(len(elts))]
            elif op < 0.55 and len(elts) < 12:
                model = rng.choice(elts) if elts else ast.Constant(rng.choice([1, 2, 0, -3]))
                inner = self._perturb_node(model) if not isinstance(model, (ast.List, ast.Dict)) else None
                elts.insert(rng.randint(0, len(elts)), inner or model)
            elif op < 0.7 and len(elts) > 1:
                elts.reverse()
            elif op < 0.85 and elts:
                elts.append(elts[rng.randrange(len(elts))])
            else:
                try:
                    vals = [ast.literal_eval(e) for e in elts]
                    elts = [ast.Constant(x) for x in sorted(vals)] if len(vals) > 1 else elts
                except (ValueError, TypeError, SyntaxError):
                    pass
            if isinstance(node, ast.Set) and not elts:
                return ast.Call(ast.Name("set", ast.Load()), [], [])
            return type(node)(elts=elts, ctx=ast.Load()) if not isinstance(node, ast.Set) else ast.Set(elts=elts)
        if isinstance(node, ast.Dict):
            keys, vals = list(node.keys), list(node.values)
            if keys and rng.random() < 0.4:
                j = rng.randrange(len(keys))
                del keys[j]
                del vals[j]
            elif keys:
                j = rng.randrange(len(keys))
                k2 = self._perturb_node(keys[j]) if isinstance(keys[j], ast.Constant) else None
                if k2 is not None and rng.random() < 0.5:
                    keys.append(k2)
                    vals.append(vals[j])
                else:
                    v2 = self._perturb_node(vals[j]) if isinstance(vals[j], ast.Constant) else None
                    if v2 is not None:
                        vals[j] = v2
            return ast.Dict(keys=keys, values=vals)
        return None

    def _perturb_str(self, s: str) -> str:
        rng = self.rng
        strs = [c for c in self.module_consts if type(c) is str and c]
        alphabet = "abcxyzABC019 ,.-_!?"
        ops = [
            lambda: s + rng.choice(alphabet),
            lambda: s[1:],
            lambda: s[:-1],
            lambda: s.upper(),
            lambda: s.lower(),
            lambda: s[::-1],
            lambda: s + s,
            lambda: " " + s + " ",
            lambda: "",
            lambda: (s[:k] + rng.choice(alphabet) + s[k + 1:]) if (k := rng.randrange(len(s) + 1)) >= 0 else s,
            lambda: s.capitalize(),
        ]
        if strs:
            ops += [lambda: rng.choice(strs), lambda: s + rng.choice(strs), lambda: rng.choice(strs) + s]
        runs = list(re.finditer(r"\d+", s))
        if runs and rng.random() < 0.5:  # a number inside the text moved (durations, versions, dates...)
            m = rng.choice(runs)
            ints = [c for c in self.module_consts + [v for u in self.module.units for v in u.constants]
                    if type(c) is int and 0 <= c < 10 ** 6]
            v = int(m.group())
            w = rng.choice([v + 1, max(0, v - 1), 0, 1, 2, 10, rng.randint(0, 99)] +
                           [c + d for c in ints[:20] for d in (-1, 0, 1) if c + d >= 0])
            return (s[:m.start()] + str(w) + s[m.end():])[:200]
        out = rng.choice(ops)()
        return out[:200]


class _Signed(ast.NodeTransformer):
    """``-1`` as the one number it is (``UnaryOp(-, 1)`` -> ``Constant(-1)``): negating it then
    gives ``1``, never ``--1``."""

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd))
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)):
            v = node.operand.value
            return ast.copy_location(ast.Constant(-v if isinstance(node.op, ast.USub) else v), node)
        return node


class _Swap(ast.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit(self, node):
        if node is self.old:
            return self.new
        return self.generic_visit(node)


def _example_tree(ex, doc: str) -> ast.Module | None:
    """A doctest example's statement. One whose source does not end (``>>> doc = '''`` with the
    text on the following lines, written without ``...`` prompts, as docopt's docstring does) is
    completed with the docstring's lines after it, up to the next prompt."""
    try:
        return ast.parse(ex.source.strip())
    except SyntaxError:
        pass
    if not doc or ex.lineno is None:
        return None
    lines = doc.splitlines()
    first = ex.lineno + ex.source.count("\n")
    src = ex.source
    for line in lines[first:first + 80]:
        if line.lstrip().startswith(">>>"):
            return None
        src += (line[ex.indent:] if line[:ex.indent].strip() == "" else line.lstrip()) + "\n"
        try:
            return ast.parse(src.strip())
        except SyntaxError:
            continue
    return None


class _Unqualify(ast.NodeTransformer):
    """``xmltodict.parse(...)`` -> ``parse(...)``, for the names the module is imported as."""

    def __init__(self, aliases: set[str], names: set[str]):
        self.aliases, self.names = aliases, names

    def visit_Attribute(self, node):
        if node.attr in self.names and isinstance(node.ctx, ast.Load):
            try:
                owner = ast.unparse(node.value)
            except Exception:  # noqa: BLE001 - an odd tree: left as it is
                return self.generic_visit(node)
            if owner in self.aliases:
                return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
        return self.generic_visit(node)


class _Substitute(ast.NodeTransformer):
    """Names bound to literals in earlier doctest examples, replaced by those literals."""

    def __init__(self, literals: dict[str, ast.expr]):
        self.literals = literals

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.literals:
            return self.literals[node.id]
        return node


def _pattern_names(tree: ast.Module) -> list[str]:
    """The module's top-level names bound to a compiled pattern: ``re.compile(...)`` (``compile``
    imported from ``re``), or a call of a module function whose ``return`` is such a call."""
    def compiles(node) -> bool:
        return isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
             and isinstance(node.func.value, ast.Name) and node.func.value.id in ("re", "regex"))
            or (isinstance(node.func, ast.Name) and node.func.id == "compile"))
    helpers = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
               and any(isinstance(r, ast.Return) and compiles(r.value) for r in ast.walk(n))}
    out = []
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Call):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if compiles(n.value) or (isinstance(n.value.func, ast.Name) and n.value.func.id in helpers):
                out += [t.id for t in targets if isinstance(t, ast.Name)]
    return list(dict.fromkeys(out))


_PATTERN_TEXT_MAX = 8000  # characters of a pattern text folded from the module's strings


def _compiled_patterns(tree: ast.Module, in_classes: bool = False) -> dict:
    """The module's top-level ``NAME = re.compile(PATTERN[, FLAGS])`` (at most 12), compiled here:
    PATTERN a string, a name of a string of the module (assigned before, as Python reads the
    module), ``+`` or an f-string of such, or such a text handed to a function of one argument that
    is not a builtin (packaging's ``_adapt_possessive(PATTERN)``: the text stands for the result;
    drawn texts are only inputs, the code judges them); FLAGS ``re.X | ...``. ``in_classes``: also
    the top-level classes' own, as ``'Class.NAME'`` (their bodies read in place, their own strings
    first; at most 48 in all)."""
    strings: dict[str, str] = {}
    scope: dict[str, str] = {}  # the class body being read (its own strings first)

    def text(node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return scope.get(node.id, strings.get(node.id))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 \
                and not node.keywords and not hasattr(builtins, node.func.id):
            return text(node.args[0])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = text(node.left), text(node.right)
            return a + b if a is not None and b is not None and len(a) + len(b) <= _PATTERN_TEXT_MAX else None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    if v.conversion != -1 or v.format_spec is not None:
                        return None
                    v = v.value
                t = text(v)
                if t is None:
                    return None
                parts.append(t)
            joined = "".join(parts)
            return joined if len(joined) <= _PATTERN_TEXT_MAX else None
        return None

    def folded(node) -> str | None:
        try:
            return text(node)
        except RecursionError:  # a sum of thousands of terms
            return None

    def flags(node) -> int | None:
        if node is None:
            return 0
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
            v = getattr(re, node.attr, None)
            return int(v) if isinstance(v, re.RegexFlag) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            try:
                a, b = flags(node.left), flags(node.right)
            except RecursionError:
                return None
            return a | b if a is not None and b is not None else None
        return None

    out: dict = {}
    body: list = []
    for stmt in tree.body:  # the classes' bodies where they stand: ``_regex = re.compile(...)`` as ``self._regex``
        body.append((None, stmt))
        if in_classes and isinstance(stmt, ast.ClassDef):
            body += [(stmt.name, item) for item in stmt.body]
    class_strings: dict[str, dict[str, str]] = {}
    module_level = 0
    for owner, stmt in body:
        scope = class_strings.setdefault(owner, {}) if owner is not None else {}
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        t = folded(value)
        if t is not None:
            (strings if owner is None else scope)[target.id] = t
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "compile" \
                and isinstance(value.func.value, ast.Name) and value.func.value.id == "re" and value.args:
            if owner is None and module_level >= 12:
                continue
            pat = folded(value.args[0])
            fl = flags(value.args[1] if len(value.args) > 1 else
                       next((k.value for k in value.keywords if k.arg == "flags"), None))
            if pat is None or fl is None or len(pat) > (2000 if not fl & re.VERBOSE else _PATTERN_TEXT_MAX):
                continue
            try:
                out[target.id if owner is None else f"{owner}.{target.id}"] = re.compile(pat, fl)
            except (re.error, TypeError, ValueError, OverflowError, RecursionError, MemoryError):
                continue
            module_level += owner is None
        if len(out) >= 48:
            break
    return out


def _literal_args(call: ast.Call) -> bool:
    for a in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(a, ast.Starred):
            return False
        try:
            ast.literal_eval(a)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
    return all(k.arg is not None for k in call.keywords)


# what a parameter handed to time.sleep gets: a test that sleeps the default (retry's
# delay=0.5, three attempts) would sleep in the user's suite
_SLEEPS = Spec("literal", (0.01, 0, -1.0))


def _name_of_call(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _returned_function(node: ast.AST) -> ast.FunctionDef | ast.Lambda | None:
    """The function of its own that function ``node`` returns: a nested ``def`` whose name a
    ``return`` of its body gives (not of a nested one), or a returned ``lambda``."""
    nested = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}  # type: ignore[attr-defined]
    todo = list(node.body)  # type: ignore[attr-defined]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return) and n.value is not None:
            if isinstance(n.value, ast.Name) and n.value.id in nested:
                return nested[n.value.id]
            if isinstance(n.value, ast.Lambda):
                return n.value
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo += list(ast.iter_child_nodes(n))
    return None


def _line_shapes(node: ast.AST) -> tuple[list[str], list[str]]:
    """``(headers, marks)`` from the tests of a function's body: ``x.startswith(A) and
    x.endswith(B)`` gives the line ``A + 's' + B`` (``'[s]'``); ``x.startswith(A)`` alone (or a
    tuple of them) gives ``A`` (``'#'``, a comment's mark)."""
    heads: list[str] = []
    marks: list[str] = []

    def consts(call: ast.Call) -> list[str]:
        a = call.args[0] if call.args else None
        elts = a.elts if isinstance(a, ast.Tuple) else [a] if a is not None else []
        return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value]

    def method(n: ast.AST, name: str) -> ast.Call | None:
        return n if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name else None

    paired: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
            starts = [c for v in n.values if (c := method(v, "startswith")) is not None]
            ends = [c for v in n.values if (c := method(v, "endswith")) is not None]
            for a, b in zip(starts, ends):
                for x in consts(a)[:1]:
                    for y in consts(b)[:1]:
                        heads.append(x + "s" + y)
                paired.add(id(a))
    for n in ast.walk(node):
        c = method(n, "startswith")
        if c is not None and id(c) not in paired:
            marks += consts(c)
    return list(dict.fromkeys(heads)), list(dict.fromkeys(marks))


_DATED = [(2024, 3, 1, 22, 0), (2024, 3, 4, 9, 15), (2024, 3, 9, 7, 30)]


def _dated_strings(tree: ast.Module) -> list[str]:
    """Texts in the module's ``strptime`` formats (``'%Y-%m-%d %H:%M'``: ``'2024-03-01 22:00'``),
    first followed by each separator the same function splits on and a number
    (``'2024-03-01 22:00+8'``: ``when, _, hours = text.partition('+')``), then alone."""
    import datetime as _dt

    joined: list[str] = []
    bare: list[str] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        fmts = [n.args[1].value for n in ast.walk(fn) if isinstance(n, ast.Call) and
                isinstance(n.func, ast.Attribute) and n.func.attr == "strptime" and len(n.args) >= 2
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)]
        if not fmts:
            continue
        seps = [n.args[0].value for n in ast.walk(fn) if isinstance(n, ast.Call) and
                isinstance(n.func, ast.Attribute) and n.func.attr in ("split", "rsplit", "partition", "rpartition")
                and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)
                and 0 < len(n.args[0].value) <= 3]
        for fmt in fmts[:3]:
            try:
                days = [_dt.datetime(*d).strftime(fmt) for d in _DATED]
            except ValueError:
                continue
            for sep in list(dict.fromkeys(seps))[:2]:
                joined += [f"{d}{sep}{n}" for d, n in zip(days, ("8", "2.5", "4"))]
            bare += days
    return list(dict.fromkeys(t for t in joined + bare if 0 < len(t) <= 60))[:12]


def _clock_times(tree: ast.Module) -> list[tuple[int, int]]:
    """``(hour, minute)`` of each ``time(H, M)`` / ``time(H)`` the module writes."""
    out: list[tuple[int, int]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _name_of_call(n.func) == "time" and 1 <= len(n.args) <= 3 and \
                all(isinstance(a, ast.Constant) and type(a.value) is int for a in n.args):
            h = n.args[0].value  # type: ignore[attr-defined]
            m = n.args[1].value if len(n.args) > 1 else 0  # type: ignore[attr-defined]
            if 0 <= h < 24 and 0 <= m < 60:
                out.append((h, m))
    return list(dict.fromkeys(out))


_SCAN_TESTS = {"isdigit": "digit", "isdecimal": "digit", "isnumeric": "digit", "isalpha": "alpha",
               "isalnum": "alnum", "isidentifier": "alpha", "isspace": "space", "isupper": "alpha",
               "islower": "alpha"}


def _scan_classes(node: ast.AST, name: str, strs: dict[str, str]) -> tuple[set[str], list[str]] | None:
    """``(classes, chars)`` when function ``node`` scans its text ``name`` one character at a
    time (``name[i]`` with a computed index, ``for ch in name``, ``enumerate(name)``) and tells
    characters apart in two ways or more (``ch.isdigit()``, ``ch in OPERATORS``, ``ch == '.'``);
    else None."""
    def is_name(x) -> bool:
        return isinstance(x, ast.Name) and x.id == name

    scans = False
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript) and is_name(n.value) and isinstance(n.ctx, ast.Load) and \
                not isinstance(n.slice, (ast.Constant, ast.Slice)):
            scans = True
        elif isinstance(n, (ast.For, ast.comprehension)) and (
                is_name(n.iter) or (isinstance(n.iter, ast.Call) and _name_of_call(n.iter.func) == "enumerate"
                                    and n.iter.args and is_name(n.iter.args[0]))):
            scans = True
    if not scans:
        return None
    return _char_tests(node, strs)


def _char_tests(node: ast.AST, strs: dict[str, str]) -> tuple[set[str], list[str]] | None:
    """``(classes, chars)`` of the tests ``node`` tells characters apart by (``ch.isdigit()``,
    ``ch in OPERATORS``, ``ch in self.quotes``, ``ch == '.'``; ``strs``: texts by name, a kept
    one as ``self.<attr>``); a long text of letters and digits counts as ``alnum``, one of
    whitespace as ``space``. None where fewer than two kinds of test are made."""
    classes: set[str] = set()
    chars: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _SCAN_TESTS \
                and not n.args:
            classes.add(_SCAN_TESTS[n.func.attr])
        elif isinstance(n, ast.Compare):
            for op, right in zip(n.ops, n.comparators):
                text = None
                if isinstance(op, (ast.In, ast.NotIn)):
                    if isinstance(right, ast.Name):
                        text = strs.get(right.id)
                    elif isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) and \
                            right.value.id == "self":
                        text = strs.get("self." + right.attr)
                        if text and len(text) > 1 and text.isspace():
                            classes.add("space")
                        elif text and len(text) > 40 and sum(c.isalnum() for c in text) > 0.8 * len(text):
                            classes.add("alnum")
                    elif isinstance(right, ast.Constant) and isinstance(right.value, str):
                        text = right.value
                    elif isinstance(right, (ast.Tuple, ast.Set, ast.List)):
                        text = "".join(e.value for e in right.elts if isinstance(e, ast.Constant)
                                       and isinstance(e.value, str) and len(e.value) == 1)
                elif isinstance(op, (ast.Eq, ast.NotEq)):
                    for side in (n.left, right):
                        if isinstance(side, ast.Constant) and isinstance(side.value, str) and len(side.value) == 1:
                            text = side.value
                if text and len(text) <= 40:
                    chars += [c for c in text if not c.isalnum() and not c.isspace()]
    chars = list(dict.fromkeys(chars))
    if len(classes) + (1 if chars else 0) < 2:
        return None
    return classes, chars


def _class_scan(cls: ast.ClassDef, init: ast.FunctionDef, name: str,
                strs: dict[str, str]) -> tuple[set[str], list[str]] | None:
    """``(classes, chars)`` when the constructor ``init`` keeps its text ``name`` on the object
    (``self.stream = StringIO(text)``, ``self.text = text``) and a method of ``cls`` reads it one
    character at a time (``self.stream.read(1)``, ``self.text[self.pos]``), telling characters
    apart by texts the class keeps (``ch in self.quotes``, CPython's shlex) or the module's;
    else None."""
    kept = {t.attr for n in ast.walk(init) if isinstance(n, ast.Assign)
            and any(isinstance(k, ast.Name) and k.id == name for k in ast.walk(n.value))
            for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id == "self"}
    if not kept:
        return None

    def is_kept(x) -> bool:
        return isinstance(x, ast.Attribute) and x.attr in kept and isinstance(x.value, ast.Name) \
            and x.value.id == "self"
    scans = False
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "read" and \
                is_kept(n.func.value) and len(n.args) == 1 and isinstance(n.args[0], ast.Constant) \
                and n.args[0].value == 1:
            scans = True
        elif isinstance(n, ast.Subscript) and is_kept(n.value) and isinstance(n.ctx, ast.Load) and \
                not isinstance(n.slice, (ast.Constant, ast.Slice)):
            scans = True
    if not scans:
        return None
    texts = dict(strs)
    for n in ast.walk(cls):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    texts.setdefault("self." + t.attr, n.value.value)
    return _char_tests(cls, texts)


def _scan_texts(got: tuple[set[str], list[str]]) -> list[str]:
    """Texts of the tokens a scanner tells apart (:func:`_scan_classes`): numbers (and names,
    where it tests letters) joined by its other characters, spaced and not."""
    classes, chars = got
    dot = "." in chars
    opens = [(a, b) for a, b in ("()", "[]", "{}") if a in chars and b in chars]
    pairs = {c for ab in opens for c in ab}
    ops = [c for c in chars if c not in pairs and c not in "._"][:8]
    name = "x" if classes & {"alpha", "alnum"} else ""
    texts: list[str] = []
    if not ops:
        words = [w for w in ("12", "3.5" if dot else "", name, "7") if w]
        texts = [" ".join(words), "".join(words[:2])]
        return list(dict.fromkeys(texts))
    a, b = ops[0], ops[1 % len(ops)]
    texts += [f"6 {a} 4", f"8 {a} 3 {b} 2" if b != a else f"8 {a} 3 {a} 2"]
    if opens:
        o, c = opens[0]
        texts += [f"{o}8 {a} 3{c} {b} 2", f"{o}6 {b} 4"]
    else:
        texts.append(f"{b}6")
    texts += [f"6 {c} 4" for c in ops[1:]]
    texts += [f"6 {c} 0" for c in ops if c in "/%"]
    texts += [f"8 {x} 3 {y} 2" for x, y in zip(ops[1:], ops[2:] + ops[:1])]
    texts += [f"8 {c} 3 {c} 2" for c in ops[:4]]
    if opens:
        o, c = opens[0]
        texts += [f"2 {b} {o}6 {a} 4{c}", f"{o}{o}1{c}{c}", f"6 {c}", f"{o}6 {a} 4"]
    texts += [f"{b}6", f"6 {a}", f"6{a}4{b}2"]
    if dot:
        texts += [f"1.5 {a} 2", "1.2.3"]
    texts.append("6 ~ 4" if "~" not in chars else "6 ` 4")
    if name:  # (among the first: past the cap of 28 they were never drawn)
        texts[6:6] = [f"{name} {a} 1", f"2 {b} {name}", name]
    quotes = [c for c in ops if c in "'\"`"]
    if quotes:  # quoted parts, closed (a tokenizer's quotes: shlex's "a 'b c' d"), first
        q = quotes[0]
        quoted = [f"6 {q}a b{q} 4", f"{q}{q} 6"] + [f"{x}a b{x}" for x in quotes[1:2]]
        if "\\" in ops:
            quoted += [f"6\\ 4 {q}a\\{q}b{q}"]
        texts = quoted[:3] + texts[:3] + quoted[3:] + texts[3:]
    return list(dict.fromkeys(t for t in texts))[:28]


_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "split", "rsplit",
                           "splitlines", "partition", "startswith", "endswith", "isdigit", "isnumeric",
                           "isalpha", "title", "capitalize", "encode", "zfill"})


def _values_read_as_text(name: str, body: list) -> bool:
    """Whether ``body`` reads the values of the mapping ``name`` as text (see
    :meth:`InputGenerator._values_read_as_text`)."""
    def reads(x) -> bool:
        return (isinstance(x, ast.Subscript) and isinstance(x.value, ast.Name) and x.value.id == name
                and isinstance(x.ctx, ast.Load)) or \
            (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "get"
             and isinstance(x.func.value, ast.Name) and x.func.value.id == name)
    nodes = [n for stmt in body for n in ast.walk(stmt)]
    held = {n.targets[0].id for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and reads(n.value)}

    def texty(x) -> bool:
        return reads(x) or (isinstance(x, ast.Name) and x.id in held)
    for n in nodes:
        if not isinstance(n, ast.Call):
            continue
        if reads(n) and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            return True
        if isinstance(n.func, ast.Attribute) and n.func.attr in _TEXT_METHODS and texty(n.func.value):
            return True
        if isinstance(n.func, ast.Name) and n.func.id in ("int", "float") and n.args and texty(n.args[0]):
            return True
    return False


def _bare_items(spec: Spec, kind: bool = False) -> str | None:
    """The kind (``list``, ``set``) of a collection of ``any`` (``items: list``), under an
    ``optional`` too; with ``kind``, the kind of any such collection."""
    while spec.kind == "optional":
        spec = spec.args[0]
    if spec.kind in ("list", "set", "frozenset") and (kind or spec.args in ((ANY,), ())):
        return spec.kind
    return None


def _keys_of(src: str, how: str) -> list[str]:
    """The sources of the keys (``how == "key"``: a dict's keys, a list's or a string's indices)
    or items (``"item"``: a dict's keys, a list's, set's or string's items) of the literal
    ``src``, at most eight; [] when ``src`` is no literal container or holds nothing."""
    try:
        v = ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    if isinstance(v, dict):
        ks = list(v)
    elif isinstance(v, (list, tuple, str)):
        ks = list(dict.fromkeys(x for x in v if _hashable(x))) if how == "item" else list(range(len(v)))
    elif isinstance(v, (set, frozenset)):
        ks = sorted(v, key=repr)
    else:
        return []
    return list(dict.fromkeys(_lit(k) for k in ks))[:8]


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _split_args(src: str) -> list[str]:
    """``"1, [2, 3], 'a,b'"`` -> its top-level comma-separated parts."""
    try:
        node = ast.parse(f"f({src})", mode="eval").body
        return [ast.unparse(a) for a in node.args]
    except SyntaxError:
        return [src]


_HOLE = "\0"  # where the instance goes in an operator template (no source text holds a NUL)
_BINARY_OPS = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
               "__mod__": "%", "__pow__": "**", "__matmul__": "@", "__and__": "&", "__or__": "|", "__xor__": "^",
               "__lshift__": "<<", "__rshift__": ">>", "__lt__": "<", "__le__": "<=", "__gt__": ">",
               "__ge__": ">=", "__eq__": "==", "__ne__": "!="}
_REFLECTED_OPS = {"__radd__": "+", "__rsub__": "-", "__rmul__": "*", "__rtruediv__": "/", "__rfloordiv__": "//",
                  "__rmod__": "%", "__rpow__": "**", "__rmatmul__": "@", "__rand__": "&", "__ror__": "|",
                  "__rxor__": "^"}
_UNARY_OPS = {"__neg__": "-{}", "__pos__": "+{}", "__invert__": "~{}", "__abs__": "abs({})", "__len__": "len({})",
              "__bool__": "bool({})", "__int__": "int({})", "__index__": "int({})", "__float__": "float({})",
              "__complex__": "complex({})", "__round__": "round({})", "__str__": "str({})", "__repr__": "repr({})",
              "__iter__": "list({})", "__reversed__": "list(reversed({}))"}


def _operand(src: str) -> str:
    """``src`` as an operand of a binary operator (parenthesised unless it is an atom)."""
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return f"({src})"
    atom = isinstance(node, (ast.Constant, ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple,
                             ast.Dict, ast.Set))
    return src if atom else f"({src})"


_FILL = [_STRS[0], "abc", "a", "x1", "y2", "z3"]  # the values after the module's words in a file's lines
_TABLE_NUMBERS = ["1", "2.5", "3", "4", "0.5", "6"]


def _table_texts(words: list[str]) -> list[str]:
    """CSV files whose header is the module's words (up to six columns): rows with a text first
    column and numbers after it (a key, then amounts), and rows of numbers only."""
    cols = words[:6]
    if len(cols) < 2:
        return []
    head = ",".join(cols) + "\n"
    keyed = "".join(",".join([key] + [_TABLE_NUMBERS[(r + j) % 6] for j in range(len(cols) - 1)]) + "\n"
                    for r, key in enumerate(("hello", "world", "hello")))
    numbers = "".join(",".join(_TABLE_NUMBERS[(r + j) % 6] for j in range(len(cols))) + "\n" for r in range(2))
    return [head + keyed, head + numbers]


# words of a module that say how it opens a file, not what the file holds
_NOT_WORDS = frozenset({"r", "rb", "w", "wb", "rt", "wt", "ab", "utf8", "ascii", "latin1", "locale", "strict",
                        "ignore", "replace", "surrogateescape", "backslashreplace", "encoding", "errors",
                        "newline", "mode", "self", "cls", "none", "true", "false"})


def _is_word(c) -> bool:
    """A text of the module's that may name what its files hold (``amount``, ``machine``)."""
    return type(c) is str and c.isidentifier() and 1 < len(c) <= 20 and c.lower() not in _NOT_WORDS


# calls whose first argument is a path: the file is read (or stat'ed) there
_PATH_CALLS = frozenset({"open", "stat", "lstat", "getsize", "getmtime", "getatime", "getctime", "isfile",
                         "Path", "copyfile", "copy2"})

# calls whose first argument is a directory the code lists or walks, and methods of a path that do
_DIR_CALLS = frozenset({"listdir", "scandir", "walk", "rmtree", "copytree", "isdir", "fwalk"})
_DIR_METHODS = frozenset({"iterdir", "rglob", "glob", "walk"})
# names of parameters that name a file, a directory or a pattern
_PATHY = re.compile(r"path|file|dir|name$|pat(tern)?$|glob|suffix|ext$")
# calls that list a directory (the working directory when given none)
_LISTINGS = frozenset({"listdir", "scandir", "walk", "fwalk", "iterdir", "rglob", "glob", "iglob"})

# encoder verb -> decoder verb (a function named with the first has an inverse named with the second)
_DOCUMENTS = ["{'name': 'a b', 'items': [1, 2.5, True], 'nested': {'key': 'value'}}", "['hello world', 'a', \"it's\"]",
              "'text with spaces'", "{}", "[]", "{'a': 1}", "42"]
_INVERSE_VERBS = (("dumps", "loads"), ("dump", "load"), ("encode", "decode"), ("format", "parse"),
                  ("unparse", "parse"), ("serialize", "deserialize"), ("pack", "unpack"),
                  ("compress", "decompress"), ("quote", "unquote"), ("escape", "unescape"),
                  ("encrypt", "decrypt"), ("join", "split"), ("marshal", "unmarshal"), ("stringify", "parse"),
                  ("to", "from"), ("render", "parse"), ("compile", "decompile"), ("encipher", "decipher"))


def _inverse_names(name: str, names: set[str]) -> list[str]:
    """The functions among ``names`` that undo ``name``: its verb replaced by the inverse one
    (``b64encode`` -> ``b64decode``, ``to_json`` -> ``from_json``, ``format_version`` ->
    ``parse_version``), or the inverse verb alone (``format_version`` -> ``parse``)."""
    out = []
    words = name.lower().split("_")
    for enc, dec in _INVERSE_VERBS:
        if enc == "to":  # a word of its own: to_json / from_json, json_to_x / x_from_json
            if "to" in words:
                k = words.index("to")
                cands = ["_".join(words[:k] + ["from"] + words[k + 1:])]
                if 0 < k < len(words) - 1:
                    cands.append("_".join(words[k + 1:] + ["to"] + words[:k]))
            else:
                cands = []
        elif re.search(rf"(?<![a-z]){enc}|{enc}(?![a-z])", name.lower()):
            cands = [re.sub(enc, dec, name, count=1, flags=re.I)] + ([dec] if "_" in name else [])
            if dec.startswith("un") and ("un" + enc) in name.lower():
                cands = []  # unquote is no encoder of "ununquote"
        else:
            cands = []
        for c in cands:
            if c in names and c != name and c not in out:
                out.append(c)
    return out


def _written_names(node: ast.AST | None) -> set[str]:
    """Names the code calls ``.write(...)`` / ``.writelines(...)`` on (its output streams)."""
    if node is None:
        return set()
    return {n.func.value.id for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("write", "writelines") and isinstance(n.func.value, ast.Name)}


def _dedupe(probes: list[Probe]) -> list[Probe]:
    seen, out = set(), []
    for p in probes:
        key = p.steps
        if key not in seen and p.size() <= 4 * _MAX_SRC:
            seen.add(key)
            out.append(p)
    return out


def _regex_examples(patterns: list[str], seed: int, per_pattern: int = 4) -> list[str]:
    """A few short ASCII strings matching each pattern (hypothesis ``from_regex``), reproducibly."""
    if not patterns:
        return []
    out: list[str] = []
    for k, pat in enumerate(patterns):
        if not _wide_class(pat):
            out += _draw_regex(pat, seed + k, per_pattern)
    return out


def _with_module_words(patterns: list[str], drawn: list[str], words: list[str], limit: int = 4) -> list[str]:
    """Strings of the module's patterns with groups' text replaced by words of the module that
    those groups match too (a log line's ``[A]`` made ``[ERROR]`` where the code compares
    ``e.level == "ERROR"``: a drawn level never equals it), each word once in each group. A group
    that matches anything (``.*``) gets a word only where it was drawn empty (a message the
    code's ``line.strip()`` would cut off)."""
    out: list[str] = []
    for pat in patterns:
        try:
            rx = re.compile(pat)
        except (re.error, TypeError, ValueError, RecursionError):
            continue
        used: set[tuple[int, str]] = set()
        for s in drawn:
            t = s
            for g in range(1, rx.groups + 1):
                m = rx.fullmatch(t)
                if m is None:
                    break
                a, b = m.span(g)
                if a < 0:
                    continue
                wide = rx.fullmatch(t[:a] + "@ #~" + t[b:])
                if wide is not None and wide.group(g) == "@ #~" and m.group(g) != "":
                    continue
                for w in [*words, "hello world"]:
                    u = t[:a] + w + t[b:]
                    if w == m.group(g) or (g, w) in used or len(u) > 60:
                        continue
                    m2 = rx.fullmatch(u)
                    if m2 is not None and m2.group(g) == w:
                        used.add((g, w))
                        t = u
                        break
            if t != s and t not in out and t not in drawn:
                out.append(t)
                if len(out) >= limit:
                    return out
    return out


def _wide_class(pat: str) -> bool:
    """A character class of the pattern spans thousands of code points (mailcap's
    ``[^\\xa1-\\U0010FFFF...]``): hypothesis builds it character by character (20-45 s), and
    the strings are drawn over ASCII."""
    import re._parser as sre

    try:
        tree = sre.parse(pat)
    except Exception:
        return False

    def wide(items) -> bool:
        for op, av in items:
            if op is sre.RANGE and av[1] - av[0] > 4096:
                return True
            if op is sre.IN and wide(av):
                return True
            if isinstance(av, (list, tuple)):
                for x in av:
                    if isinstance(x, sre.SubPattern) and wide(x):
                        return True
                    if isinstance(x, list) and any(isinstance(y, sre.SubPattern) and wide(y) for y in x):
                        return True  # the branches of an alternation
        return False
    return wide(tree)


def _drop_hypothesis_gc_callbacks() -> None:
    """Hypothesis times the garbage collector with a callback it leaves registered for the rest of
    the process: a SIGTERM (raised as an exception by the CLI's handler) arriving during a
    collection was raised inside it and ignored by Python, and the command went on to the end.
    The callback goes, and is not made again (hypothesis registers it once per process)."""
    import gc
    gc.callbacks[:] = [c for c in gc.callbacks if "hypothesis" not in (getattr(c, "__module__", "") or "")]
    try:  # and is not registered while hypothesis runs (its GC timing stays 0: only its own statistics)
        from hypothesis.internal.conjecture import junkdrawer
        if hasattr(junkdrawer, "_gc_initialized"):
            junkdrawer._gc_initialized = True
    except ImportError:
        pass


@contextlib.contextmanager
def _private_hypothesis_home() -> Iterator[None]:
    """Hypothesis's home directory (by default ``./.hypothesis``, where it caches what it reads of
    the modules it sees and its character tables) made a temporary directory while hypothesis
    runs: gen-tests writes nothing outside --out."""
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    _drop_hypothesis_gc_callbacks()
    with tempfile.TemporaryDirectory(prefix="coevo-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            set_hypothesis_home_dir(None)
            _drop_hypothesis_gc_callbacks()


def _draw_regex(pat: str, seed: int, n: int) -> list[str]:
    with _private_hypothesis_home():
        return _draw_regex_here(pat, seed, n)


def _draw_regex_here(pat: str, seed: int, n: int) -> list[str]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    try:
        strat = st.from_regex(pat, fullmatch=True, alphabet=st.characters(codec="ascii"))
    except Exception:  # a pattern (or a hypothesis version) that does not allow it
        return []
    found: list[str] = []

    @hseed(seed)
    @settings(max_examples=n * 8, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(strat)
    def collect(x):
        if len(found) < n and x not in found and len(x) <= 40 and x.isprintable():
            found.append(x)

    try:
        collect()
    except Exception:
        pass
    return sorted(found, key=lambda x: (len(x), x))


def _strategy(spec: Spec, consts: list, gen: InputGenerator, depth: int = 0):
    """A hypothesis strategy of source strings for ``spec``."""
    from hypothesis import strategies as st

    k = spec.kind
    pool = gen.pool(spec, consts, depth)
    if depth > 2:
        return st.sampled_from(pool)
    if k == "int":
        ints = [c for c in consts if type(c) is int]
        return st.one_of(st.integers(-50, 50), st.integers(-10 ** 6, 10 ** 6),
                         st.sampled_from(ints or [0])).map(repr)
    if k == "float":  # quarters: exact in binary, short to read
        return st.one_of(st.integers(-400, 400).map(lambda i: i / 4), st.integers(-20, 20).map(float)).map(repr)
    if k == "str":
        strs = [c for c in consts if type(c) is str]
        alphabet = st.sampled_from(list("abcdeXYZ 019,.-_") + sorted({ch for c in strs for ch in c})[:30])
        base = st.text(alphabet, max_size=12)
        if strs:
            base = st.one_of(base, st.sampled_from(strs), st.tuples(st.sampled_from(strs), base).map("".join))
        return base.map(repr)
    if k in ("list", "set", "frozenset", "tuple") and spec.args and spec.args[-1] is not Ellipsis \
            and k != "tuple":
        elem = _strategy(spec.args[0], consts, gen, depth + 1)
        lists = st.lists(elem, max_size=6)
        if k == "list":
            return lists.map(lambda xs: "[" + ", ".join(xs) + "]")
        if k == "set":
            return lists.map(lambda xs: "{" + ", ".join(dict.fromkeys(xs)) + "}" if xs else "set()")
        return lists.map(lambda xs: "frozenset({" + ", ".join(dict.fromkeys(xs)) + "})" if xs else "frozenset()")
    if k == "dict" and spec.args:
        ks = spec.args[0] if spec.args[0] != ANY else Spec("str")
        vs = spec.args[1] if len(spec.args) > 1 and spec.args[1] != ANY else Spec("int")
        pairs = st.lists(st.tuples(_strategy(ks, consts, gen, depth + 1), _strategy(vs, consts, gen, depth + 1)),
                         max_size=4)
        return pairs.map(lambda kv: "{" + ", ".join(f"{a}: {b}" for a, b in dict(kv).items()) + "}")
    if k == "optional":
        return st.one_of(st.just("None"), _strategy(spec.args[0], consts, gen, depth + 1))
    if k == "checked":
        return _strategy(spec.args[0], consts, gen, depth + 1)
    if k == "union":
        return st.one_of(*[_strategy(s, consts, gen, depth + 1) for s in spec.args])
    return st.sampled_from(pool)
