"""What to test: ``PATH`` (a ``.py`` file, a package directory, or ``file.py::name``) -> modules, and
in each module the functions, classes and methods a test can call.

Everything here reads source text and its AST; the user's code is never imported or run in this
process (that happens only in the sandbox, :mod:`coevo.testgen.harness`).

* The import root of a file is the first directory above it without an ``__init__.py``; the
  module's dotted name is its path from there (``src/mylib/stats.py`` -> ``mylib.stats`` with root
  ``src``).
* Testable units: public top-level functions, public classes (their constructor, public methods,
  static and class methods, properties); private ones only when nothing public exists or when
  named with ``::``. Stubs (``@overload``, ``@abstractmethod``, a body of ``...``) and async
  functions are left out.
* Bad input raises :class:`matrix.errors.InputError` naming the file (and line): a missing path, a
  file that is not Python, a file that does not parse, a ``::name`` that the module does not
  define, a directory without modules.
"""

from __future__ import annotations

import ast
import keyword
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from matrix.errors import InputError

__all__ = ["Param", "Unit", "ClassInfo", "ModuleInfo", "resolve", "analyze", "SKIP_DIRS"]

SKIP_DIRS = frozenset({"tests", "test", "testing", "docs", "examples", "build", "dist", "__pycache__",
                       "node_modules", "site-packages"})
_SKIP_FILES = frozenset({"setup.py", "conftest.py", "__main__.py", "noxfile.py", "fabfile.py"})
_STUB_DECORATORS = frozenset({"overload", "abstractmethod", "abstractproperty"})
_MAX_SOURCE = 2_000_000


@dataclass
class Param:
    name: str
    kind: str  # "pos" | "posonly" | "kwonly" | "star" (*args) | "starstar" (**kwargs)
    annotation: ast.expr | None = None
    default: ast.expr | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("pos", "posonly", "kwonly")


@dataclass
class Unit:
    """One callable a test calls: a function, a method, or a class's constructor."""

    qualname: str  # "mean", "Stack.push", "Stack" (constructor)
    name: str
    owner: str | None  # the class, for methods and constructors
    kind: str  # "function" | "method" | "static" | "classmethod" | "property" | "init"
    params: list[Param]  # without self / cls
    node: ast.AST | None
    doc: str | None
    start: int
    end: int
    is_generator: bool = False
    constants: list = field(default_factory=list)  # literal values seen in the body
    is_async: bool = False  # a coroutine function: called as asyncio.run(f(...))

    @property
    def lines(self) -> range:
        return range(self.start, self.end + 1)


@dataclass
class ClassInfo:
    name: str
    node: ast.ClassDef
    doc: str | None
    init: Unit
    methods: list[Unit]
    properties: list[str]
    style: str  # "plain" | "dataclass" | "enum" | "exception" | "namedtuple" | "abstract"
    attributes: list[str]  # public instance attributes assigned as self.X = ...
    start: int
    end: int
    dunders: list[str] = field(default_factory=list)  # __len__, __iter__, __eq__ ... defined here


@dataclass
class ModuleInfo:
    path: Path
    name: str  # dotted import name
    root: Path  # directory that must be on sys.path
    source: str
    tree: ast.Module
    functions: list[Unit]
    classes: list[ClassInfo]
    selected: str | None = None  # the ::name this run is about, if any
    constants: list = field(default_factory=list)  # module-level literal values
    regexes: list[str] = field(default_factory=list)  # patterns given to re.compile / re.match ...
    run_root: Path | None = None  # where the sandbox finds the code (coevo.testgen.sources)
    run_path: Path | None = None
    async_units: list[str] = field(default_factory=list)  # async functions and methods: not tested
    mros: dict[str, list[str]] = field(default_factory=dict)  # class -> its order (class_mros)

    @property
    def sandbox_path(self) -> Path:
        return self.run_path or self.path

    @property
    def sandbox_root(self) -> Path:
        return self.run_root or self.root

    @property
    def units(self) -> list[Unit]:
        out = list(self.functions)
        for c in self.classes:
            out.append(c.init)
            out += c.methods
        return out

    def target_lines(self) -> set[int] | None:
        """The lines mutants and coverage goals are restricted to (None = the whole module)."""
        if self.selected is None:
            return None
        lines: set[int] = set()
        for c in self.classes:
            if c.name == self.selected:
                lines.update(range(c.start, c.end + 1))
            for m in c.methods:
                if m.qualname == self.selected:
                    lines.update(m.lines)
        for f in self.functions:
            if f.qualname == self.selected:
                lines.update(f.lines)
        return lines

    def class_named(self, name: str) -> ClassInfo | None:
        return next((c for c in self.classes if c.name == name), None)


# ----------------------------------------------------------------------------- paths

def import_root(path: Path) -> tuple[Path, str]:
    """(directory to put on sys.path, dotted module name) for a ``.py`` file."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    d = path.parent
    while (d / "__init__.py").is_file() and d.parent != d:
        parts.insert(0, d.name)
        d = d.parent
    if not parts:  # a top-level __init__.py without a package around it
        parts = [path.parent.name]
        d = path.parent.parent
    return d, ".".join(parts)


def _module_files(directory: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                             and d.isidentifier())
        for fn in sorted(filenames):
            if not fn.endswith(".py") or fn in _SKIP_FILES or fn.startswith(("test_", ".")) \
                    or fn.endswith("_test.py") or not fn[:-3].isidentifier():
                continue
            out.append(Path(dirpath) / fn)
    return out


def resolve(spec: str, skipped: list | None = None) -> list[ModuleInfo]:
    """The modules named by ``PATH`` / ``file.py::name``, analysed; raises InputError. Under a
    directory, a module that cannot be read or parsed is left out and appended to ``skipped`` as
    ``(path, message)`` when a list is given (the others still get suites); an error only when
    none is left."""
    name = None
    raw = spec
    if "::" in spec:
        raw, name = spec.split("::", 1)
        if not name or not all(p.isidentifier() for p in name.split(".")) or name.count(".") > 1:
            raise InputError(f"'{name}' is not a function, class or Class.method name", file=raw)
    path = Path(raw)
    if not path.exists():
        raise InputError("no such file or directory", file=raw)
    if path.is_dir():
        if name is not None:
            raise InputError("::name needs a .py file, not a directory", file=raw)
        files = _module_files(path)
        if not files:
            raise InputError("no Python modules in this directory", file=raw)
        mods = []
        for f in files:
            try:
                mods.append(analyze(f))
            except InputError as exc:
                if skipped is None or len(files) == 1:
                    raise
                skipped.append((Path(f).resolve(), exc.message + (f" (line {exc.line})" if exc.line else "")))
        if skipped is not None:  # a module with only async functions: said, as the others left out
            skipped += [(m.path, f"nothing testable: {_async_note(m.async_units)}") for m in mods
                        if m.async_units and not (m.functions or m.classes)]
        mods = [m for m in mods if m.functions or m.classes]
        if not mods and skipped:
            path0, msg0 = skipped[0]
            raise InputError(msg0 + (f" (and {len(skipped) - 1} more module(s))" if len(skipped) > 1 else ""),
                             file=str(path0))
        if not mods:
            raise InputError("nothing testable: no public function or class in any module", file=raw)
        return mods
    if path.suffix != ".py":
        raise InputError("not a Python source file (expected a .py file, a package directory or "
                         "file.py::name)", file=raw)
    _, dotted = import_root(path)
    bad = [p for p in dotted.split(".") if not p.isidentifier() or keyword.iskeyword(p)]
    if bad:  # a test file could not say `from my-tool import add`
        raise InputError(f"'{bad[0]}' cannot be imported by a test (a module or package name is letters, digits "
                         f"and _, not starting with a digit, and no keyword): rename it, e.g. "
                         f"'{_importable(bad[0])}'", file=raw)
    mod = analyze(path, selected=name)
    if name is not None:
        _restrict(mod, name, raw)
    if not mod.functions and not mod.classes:
        if mod.async_units:
            raise InputError(f"nothing testable: {_async_note(mod.async_units)}", file=raw)
        raise InputError("nothing testable: no function or class defined at module level", file=raw)
    return [mod]


def _importable(name: str) -> str:
    """``my-tool`` -> ``my_tool``, ``2fa`` -> ``_2fa``, ``class`` -> ``class_``."""
    out = re.sub(r"\W", "_", name)
    out = "_" + out if out[:1].isdigit() else out
    return out + "_" if keyword.iskeyword(out) else out


def _async_note(names: list[str]) -> str:
    return "async functions are not tested: " + ", ".join(names[:8]) + (
        f" (and {len(names) - 8} more)" if len(names) > 8 else "")


def async_warning(mod: ModuleInfo) -> str | None:
    """The line that tells the user which of the module's async functions get no test."""
    return _async_note(mod.async_units) if mod.async_units else None


def _restrict(mod: ModuleInfo, name: str, raw: str) -> None:
    """Keep only the unit named by ``::name`` (a class keeps its constructor for its methods)."""
    owner, _, meth = name.partition(".")
    everything = analyze(mod.path, private=True)
    if not meth:
        funcs = [f for f in everything.functions if f.name == name]
        classes = [c for c in everything.classes if c.name == name]
        if not funcs and not classes:
            if name in everything.async_units:
                raise InputError(f"'{name}' is an async function: gen-tests does not test async functions",
                                 file=raw)
            raise InputError(f"defines no function or class named '{name}'", file=raw)
        mod.async_units = [a for a in mod.async_units if a.startswith(name + ".")]
        mod.functions, mod.classes = funcs, classes
        return
    cls = everything.class_named(owner)
    if cls is None:
        raise InputError(f"defines no class named '{owner}'", file=raw)
    methods = [m for m in cls.methods if m.name == meth]
    if not methods and name in everything.async_units:
        raise InputError(f"'{name}' is an async method: gen-tests does not test async functions", file=raw)
    mod.async_units = [a for a in mod.async_units if a.startswith(owner + ".")]
    if not methods and not (meth == "__init__"):
        raise InputError(f"class '{owner}' defines no method named '{meth}'", file=raw)
    cls.methods = methods
    mod.functions, mod.classes = [], [cls]


# ----------------------------------------------------------------------------- analysis

def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if len(data) > _MAX_SOURCE:
        raise InputError(f"too large ({len(data)} bytes; at most {_MAX_SOURCE})", file=str(path))
    try:
        import io
        import tokenize

        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(enc)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise InputError(f"cannot decode the source: {exc}", file=str(path)) from None


def analyze(path: Path, *, selected: str | None = None, private: bool = False) -> ModuleInfo:
    """Parse one file and list its testable units (``private``: also the underscore ones)."""
    path = Path(path)
    source = _read(path)
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise InputError(f"does not parse: {exc.msg}", file=str(path), line=exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise InputError(f"does not parse: {exc}", file=str(path)) from None
    root, name = import_root(path)
    functions: list[Unit] = []
    classes: list[ClassInfo] = []
    infos: dict[str, ClassInfo] = {}
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            u = _function_unit(node, None, "function")
            if u is not None:
                functions.append(u)
        elif isinstance(node, ast.ClassDef):
            c = _class_info(node)
            if c is not None:
                infos[node.name] = c
            if c is not None and not (c.style == "exception" and not c.methods) and c.style != "enum":
                classes.append(c)  # bare exception classes are tested where raised, enum members are values
    if not private:
        pub_f = [f for f in functions if not f.name.startswith("_")]
        pub_c = [c for c in classes if not c.name.startswith("_")]
        if pub_f or pub_c:
            functions, classes = pub_f, pub_c
        else:  # nothing public: the single-underscore helpers are the module's behaviour
            functions = [f for f in functions if not f.name.startswith("__")]
            classes = [c for c in classes if not c.name.startswith("__")]
    mros = class_mros(tree)
    for c in classes:
        _inherit(c, infos, {k.name for k in classes}, mros.get(c.name, [c.name]))
    consts = _constants([n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))
                         and not _assigns_dunder(n) and not (isinstance(n, ast.If) and _is_main_guard(n))])
    return ModuleInfo(path=path.resolve(), name=name, root=root, source=source, tree=tree,
                      functions=functions, classes=classes, selected=selected, constants=consts,
                      regexes=_regexes(tree), async_units=_async_units(tree, private), mros=mros)


def class_mros(tree: ast.Module) -> dict[str, list[str]]:
    """Each top-level class's method resolution order over the module's own classes, as Python
    computes it (C3; a base written as a bare name of a class of the module; any other base is a
    class from elsewhere, kept in the order as ``'?name'``), the class itself first. A hierarchy
    C3 refuses (Python would not create it) gets its bases depth first."""
    nodes: dict[str, ast.ClassDef] = {}
    for node in _top_level(tree.body):
        if isinstance(node, ast.ClassDef):
            nodes[node.name] = node

    def bases(name: str) -> list[str]:
        out = []
        for b in nodes[name].bases:
            b = b.value if isinstance(b, ast.Subscript) else b
            if isinstance(b, ast.Name) and b.id in nodes and b.id != name:
                out.append(b.id)
            elif not (isinstance(b, ast.Name) and b.id == "object"):
                out.append("?" + (ast.unparse(b) if not isinstance(b, ast.Name) else b.id))
        return out

    memo: dict[str, list[str]] = {}

    def mro(name: str, path: tuple[str, ...] = ()) -> list[str]:
        if name in memo:
            return memo[name]
        if name.startswith("?") or name in path:
            return [name]
        heads = [mro(b, path + (name,)) for b in bases(name)]
        seqs = [list(x) for x in heads] + [bases(name)]
        out = [name]
        while any(seqs):
            for seq in seqs:
                if seq and not any(seq[0] in other[1:] for other in seqs):
                    pick = seq[0]
                    break
            else:  # no consistent order: depth first, each once
                rest = [x for seq in heads for x in seq]
                out += [x for x in dict.fromkeys(rest) if x not in out]
                break
            out.append(pick)
            seqs = [x[1:] if x and x[0] == pick else x for x in seqs]
        memo[name] = out
        return out

    return {name: mro(name) for name in nodes}


# bases from elsewhere that define no constructor and no method a class of the module would use
_EMPTY_BASES = frozenset({"?object", "?ABC", "?Generic", "?Protocol"})


def _inherit(c: ClassInfo, infos: dict[str, ClassInfo], kept: set[str], order: list[str]) -> None:
    """What ``c`` inherits from the module's own classes along its method resolution order
    (``order``, :func:`class_mros`): a constructor when ``c`` defines none (``class Ver(_Base)`` is
    called with ``_Base.__init__``'s parameters, a dataclass base's fields included), and the
    operators, methods and properties of a base that gets no tests of its own (a private
    ``_BaseVersion`` defining ``__lt__``/``__eq__`` over ``self._key`` for its public ``Version``):
    before, those ran on no instance at all. A name an earlier class of the order defines hides
    the later ones, a tested base's included; a base from elsewhere ends the search for the
    constructor (it may define one)."""
    own = _defined_names(c.node)
    init_open = not ("__init__" in own or "__new__" in own or c.style in ("dataclass", "namedtuple"))
    for name in order[1:]:
        base = infos.get(name)
        if base is None:
            if name not in _EMPTY_BASES:
                init_open = False
            continue
        if init_open and (base.init.node is not None or base.style in ("dataclass", "namedtuple")):
            c.init = replace(base.init, qualname=c.name, owner=c.name, doc=c.init.doc)
            init_open = False
        if name not in kept:
            for d in base.dunders:
                if d not in own and d not in c.dunders and d not in ("__init__", "__new__"):
                    c.dunders.append(d)
            for m in base.methods:
                if m.name not in own:
                    c.methods.append(replace(m, qualname=f"{c.name}.{m.name}", owner=c.name))
                    if m.kind == "property" and m.name not in c.properties:
                        c.properties.append(m.name)
            for a in base.attributes:
                if a not in c.attributes:
                    c.attributes.append(a)
        own |= _defined_names(base.node)


def _defined_names(node: ast.ClassDef) -> set[str]:
    """The names a class body binds itself (methods, assignments; also under ``if``/``try``)."""
    out: set[str] = set()
    stack = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(item.name)
        elif isinstance(item, ast.Assign):
            for t in item.targets:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
            out.add(item.target.id)
        elif isinstance(item, ast.If):
            stack += item.body + item.orelse
        elif isinstance(item, ast.Try):
            stack += item.body + item.orelse + item.finalbody + [s for h in item.handlers for s in h.body]
    return out


def _async_units(tree: ast.Module, private: bool) -> list[str]:
    """The (public, unless ``private``) async functions of the module and async methods of its
    classes that get no test, by qualified name: async generators, async properties and special
    methods (coroutine functions are run: ``asyncio.run(f(x))``)."""
    def shown(name: str) -> bool:
        return private or not name.startswith("_")

    out: list[str] = []
    stack = list(tree.body)
    for node in stack:
        if isinstance(node, ast.AsyncFunctionDef) and shown(node.name) and node.name not in out \
                and not _testable_async(node):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef) and shown(node.name):
            out += [f"{node.name}.{m.name}" for m in node.body
                    if isinstance(m, ast.AsyncFunctionDef) and (shown(m.name) or m.name.startswith("__"))
                    and not (_testable_async(m, "method") and not m.name.startswith("_"))]
        elif isinstance(node, ast.If) and not _is_main_guard(node):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse)
    return out


_RE_FUNCS = frozenset({"compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "subn",
                       "split"})


def _regexes(tree: ast.Module) -> list[str]:
    """String patterns passed to the ``re`` module's functions (first argument)."""
    out: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _RE_FUNCS \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "re" and n.args:
            a = n.args[0]
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and len(a.value) <= 300 \
                    and a.value not in out:
                out.append(a.value)
    return out[:12]


def _top_level(body: list[ast.stmt]):
    """Module-level definitions, also those inside top-level ``if``/``try`` blocks (first wins)."""
    seen: set[str] = set()
    stack = list(body)
    out = []
    for node in stack:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name not in seen:
                seen.add(node.name)
                out.append(node)
        elif isinstance(node, ast.If) and not _is_main_guard(node):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse)
    return out


def _is_main_guard(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__")


def _last_name(expr) -> str | None:
    """``b`` of ``a.b`` or of ``b``; ``None`` for any other expression."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _decorator_names(node) -> list[str]:
    names = [_last_name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
    return [n for n in names if n is not None]


def _is_stub(node: ast.FunctionDef) -> bool:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return True
    if len(body) == 1:
        s = body[0]
        if isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                       and s.value.value is Ellipsis):
            return True
        if isinstance(s, ast.Raise) and s.exc is not None:
            exc = s.exc.func if isinstance(s.exc, ast.Call) else s.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                return True
    return False


def _params(args: ast.arguments, drop_first: bool) -> list[Param]:
    out: list[Param] = []
    pos = [(a, "posonly") for a in args.posonlyargs] + [(a, "pos") for a in args.args]
    defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
    for (a, kind), d in zip(pos, defaults):
        out.append(Param(a.arg, kind, a.annotation, d))
    if drop_first and out:
        out = out[1:]
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, "star", args.vararg.annotation, None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, "kwonly", a.annotation, d))
    if args.kwarg is not None:
        out.append(Param(args.kwarg.arg, "starstar", args.kwarg.annotation, None))
    return out


def _is_generator(node: ast.FunctionDef) -> bool:
    for n in ast.walk(node):
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            # a yield inside a nested function or lambda does not count
            return _own_yield(node)
    return False


def _own_yield(node: ast.FunctionDef) -> bool:
    stack = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def _function_unit(node, owner: str | None, kind: str) -> Unit | None:
    if isinstance(node, ast.AsyncFunctionDef):
        if not _testable_async(node, kind):
            return None  # an async generator, an async property: left out (and said)
    elif not isinstance(node, ast.FunctionDef):
        return None
    decos = _decorator_names(node)
    if any(d in _STUB_DECORATORS for d in decos) or "contextmanager" in decos:
        return None
    if _is_stub(node) and kind != "init":
        return None
    if owner is not None and kind == "method":
        if "staticmethod" in decos:
            kind = "static"
        elif "classmethod" in decos:
            kind = "classmethod"
        elif "property" in decos or "cached_property" in decos:
            kind = "property"
        elif any(d in ("setter", "deleter", "getter") for d in decos):
            return None
    params = _params(node.args, drop_first=owner is not None and kind != "static")
    qual = f"{owner}.{node.name}" if owner and kind != "init" else (owner or node.name)
    return Unit(qualname=qual, name=node.name, owner=owner, kind=kind, params=params, node=node,
                doc=ast.get_docstring(node), start=_first_line(node), end=node.end_lineno or node.lineno,
                is_generator=_is_generator(node), constants=_constants(node.body),
                is_async=isinstance(node, ast.AsyncFunctionDef))


def _testable_async(node: ast.AsyncFunctionDef, kind: str = "function") -> bool:
    """A coroutine function or method (a test runs it: ``asyncio.run(f(x))``); not an async
    generator, an async property or an async special method (``__aenter__``)."""
    if kind == "init" or _own_yield(node) or (node.name.startswith("__") and node.name.endswith("__")):
        return False
    return not set(_decorator_names(node)) & {"property", "cached_property", "setter", "getter", "deleter"}


def _first_line(node) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def _base_names(node: ast.ClassDef) -> list[str]:
    names = [_last_name(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]
    return [n for n in names if n is not None]


_EXC_BASES = ("Exception", "BaseException", "ValueError", "TypeError", "KeyError", "RuntimeError",
              "LookupError", "ArithmeticError", "Error", "Warning")


def _class_info(node: ast.ClassDef) -> ClassInfo | None:
    bases = _base_names(node)
    decos = _decorator_names(node)
    if any(b in ("Protocol", "TypedDict", "NamedTuple") for b in bases) and "NamedTuple" not in bases:
        return None
    style = "plain"
    if "dataclass" in decos or "define" in decos or "attrs" in decos or "frozen" in decos:
        style = "dataclass"
    elif any(b in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for b in bases):
        style = "enum"
    elif any(b.endswith(_EXC_BASES) for b in bases):
        style = "exception"
    elif "NamedTuple" in bases:
        style = "namedtuple"
    elif "ABC" in bases or any(isinstance(k.value, ast.Name) and k.value.id == "ABCMeta"
                                 for k in node.keywords):
        style = "abstract"
    methods: list[Unit] = []
    props: list[str] = []
    dunders: list[str] = []
    init_node = new_node = None
    attributes: list[str] = []
    for item in node.body:
        for n in ast.walk(item):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and \
                    isinstance(n.value, ast.Name) and n.value.id == "self" and not n.attr.startswith("_") \
                    and n.attr not in attributes:
                attributes.append(n.attr)
        if isinstance(item, ast.Assign):  # __add__, __radd__ = _operator_fallbacks(...) (fractions)
            for t in item.targets:
                for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(n, ast.Name) and n.id.startswith("__") and n.id.endswith("__") \
                            and n.id not in dunders:
                        dunders.append(n.id)
        if isinstance(item, ast.AsyncFunctionDef) and not item.name.startswith("_"):
            u = _function_unit(item, node.name, "method")
            if u is not None:
                methods.append(u)
        if isinstance(item, ast.FunctionDef):
            if item.name == "__init__":
                init_node = item
            elif item.name == "__new__":  # an immutable value class (Fraction) takes its arguments here
                new_node = item
            if item.name.startswith("__") and item.name.endswith("__"):
                if item.name not in dunders:
                    dunders.append(item.name)
                continue
            if item.name.startswith("_"):
                continue
            u = _function_unit(item, node.name, "method")
            if u is None:
                continue
            if u.kind == "property":
                props.append(u.name)
            methods.append(u)
    if init_node is None:
        init_node = new_node
    if init_node is not None:
        init = _function_unit(init_node, node.name, "init")
    else:
        init = Unit(qualname=node.name, name="__init__", owner=node.name, kind="init",
                    params=_field_params(node) if style in ("dataclass", "namedtuple") else [],
                    node=None, doc=None, start=node.lineno, end=node.lineno)
    init.doc = ast.get_docstring(node)
    if style in ("dataclass", "namedtuple"):
        for p in init.params:
            if p.name not in attributes and not p.name.startswith("_"):
                attributes.append(p.name)
    return ClassInfo(name=node.name, node=node, doc=ast.get_docstring(node), init=init,
                     methods=methods, properties=props, style=style, attributes=attributes,
                     start=_first_line(node), end=node.end_lineno or node.lineno, dunders=dunders)


def _field_params(node: ast.ClassDef) -> list[Param]:
    """Constructor parameters of a dataclass / NamedTuple: its annotated class attributes."""
    out = []
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            ann = item.annotation
            if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id == "ClassVar":
                continue
            default = item.value
            if isinstance(default, ast.Call) and isinstance(default.func, ast.Name) and \
                    default.func.id == "field":
                kw = {k.arg: k.value for k in default.keywords}
                if "init" in kw and isinstance(kw["init"], ast.Constant) and kw["init"].value is False:
                    continue
                # (a default_factory: its call, ``list()``, is the default; None is no value of it)
                default = kw.get("default") or (ast.Call(kw["default_factory"], [], []) if "default_factory" in kw
                                                else None)
            out.append(Param(item.target.id, "pos", ann, default))
    return out


def _assigns_dunder(node: ast.stmt) -> bool:
    """``__all__ = [...]``, ``__version__ = "1.2"``: names and metadata, not values the code works on."""
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    return any(isinstance(t, ast.Name) and t.id.startswith("__") and t.id.endswith("__") for t in targets)


def _constants(body: list[ast.stmt]) -> list:
    """Distinct literal values in ``body`` (docstrings and huge literals left out), in order."""
    seen: dict = {}
    doc_ids = set()
    for stmt in body[:1]:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            doc_ids.add(id(stmt.value))
    for stmt in body:  # messages (raise X("..."), f-string pieces) are not inputs
        for n in ast.walk(stmt):
            if isinstance(n, (ast.Raise, ast.JoinedStr)):
                doc_ids.update(id(c) for c in ast.walk(n) if isinstance(c, ast.Constant))
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Constant) and id(n) not in doc_ids:
                v = n.value
                if isinstance(v, bool) or v is None or v is Ellipsis:
                    continue
                if isinstance(v, (int, float)) and abs(v) < 10 ** 12:
                    seen.setdefault((type(v), v), v)
                elif isinstance(v, str) and len(v) <= 40:
                    seen.setdefault((str, v), v)
                elif isinstance(v, bytes) and len(v) <= 40:
                    seen.setdefault((bytes, v), v)
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and \
                    isinstance(n.operand, ast.Constant) and type(n.operand.value) in (int, float):
                v = -n.operand.value
                seen.setdefault((type(v), v), v)
    return list(seen.values())[:64]


# ----------------------------------------------------------------------------- stand-in modules

def standin_users(tree: ast.Module, modules: set[str]) -> set[str]:
    """The functions, classes (``"Cls"``) and methods (``"Cls.m"``) of the module that use one of
    ``modules`` (modules the sandbox does not have, e.g. ``ctypes``, replaced by an inert stand-in
    for the module's own import), directly or through what the module computed with them at import
    (``try: X = ctypes.pythonapi ... except: X = None``), through another such function, or through
    ``self.m()`` of such a method: their behaviour in the sandbox is not their behaviour for real.
    A statement at the top level that uses them taints every name it binds (both branches of its
    ``try``/``if``); a class whose body, bases or constructor uses them is tainted whole."""
    return {q for q, _ in _standin_taint(tree, modules)[0]}


def standin_nodes(tree: ast.Module, modules: set[str]) -> tuple[set[int], set[str]]:
    """``id()`` of the function and class nodes :func:`standin_users` names, and every top-level
    name whose value depends on the stand-ins (data a test would assert, e.g. ``HAS_C_API``)."""
    out, names = _standin_taint(tree, modules)
    return {n for _, n in out}, names


def _standin_taint(tree: ast.Module, modules: set[str]) -> tuple[set[tuple[str, int]], set[str]]:
    def hits_module(name: str | None) -> bool:
        return bool(name) and str(name).split(".")[0] in modules

    seen: dict[int, tuple[frozenset[str], bool, frozenset[str]]] = {}  # (node stays alive: tree holds it)

    def scan(node: ast.AST) -> tuple[frozenset[str], bool, frozenset[str]]:
        """The names a node reads, whether it imports a stand-in module, the globals it declares:
        walked once (the taint below goes round until nothing changes; walking every statement
        each round was quadratic in a chain of callers: 1,000 functions took 8.7 s)."""
        got = seen.get(id(node))
        if got is None:
            names, hit, declared = set(), False, set()
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    names.add(n.id)
                elif isinstance(n, ast.Import):
                    hit = hit or any(hits_module(a.name) for a in n.names)
                elif isinstance(n, ast.ImportFrom):
                    hit = hit or (not n.level and hits_module(n.module))
                elif isinstance(n, ast.Global):
                    declared.update(n.names)
            got = seen[id(node)] = (frozenset(names), hit, frozenset(declared))
        return got

    def mentions(node: ast.AST, names: set[str]) -> bool:
        found, hit, _ = scan(node)
        return hit or not found.isdisjoint(names)

    def globals_set(node: ast.AST) -> frozenset[str]:
        """What a function assigns through ``global`` (a top-level ``_init()`` calling it sets the
        module's data with the stand-in: ``_impl = 'py'``, where the real module has ``'c'``)."""
        return scan(node)[2]

    def binds(stmt: ast.stmt) -> set[str]:
        out: set[str] = set()
        stack: list[ast.AST] = [stmt]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
                continue
            if isinstance(n, ast.Lambda):
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in n.names)
            stack.extend(ast.iter_child_nodes(n))
        return out

    def defs_in(stmt: ast.stmt) -> list:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [stmt]
        return [n for n in ast.walk(stmt) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n in _top_level([stmt])]

    tainted: set[str] = set()
    for stmt in tree.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Import):
                tainted.update((a.asname or a.name).split(".")[0] for a in n.names if hits_module(a.name))
            elif isinstance(n, ast.ImportFrom) and not n.level and hits_module(n.module):
                tainted.update(a.asname or a.name for a in n.names)
    classes = {s.name: s for s in _top_level(tree.body) if isinstance(s, ast.ClassDef)}
    bad_methods: dict[str, set[str]] = {name: set() for name in classes}
    whole: set[str] = set()
    out: set[tuple[str, int]] = set()
    changed = True
    while changed:
        changed = False
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name not in tainted and mentions(stmt, tainted):
                    tainted.add(stmt.name)
                    changed = True
                if stmt.name in tainted and not globals_set(stmt) <= tainted:
                    tainted |= globals_set(stmt)
                    changed = True
                continue
            if mentions(stmt, tainted) and not binds(stmt) <= tainted:
                tainted |= binds(stmt)
                changed = True
        for name, node in classes.items():
            if name in whole:
                continue
            head = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
            body = [s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            bad = bad_methods[name]
            for base in node.bases:  # what a base of the module's own has tainted, if not overridden
                if isinstance(base, ast.Name) and base.id in bad_methods:
                    bad |= bad_methods[base.id] - set(methods)
            for m_name, m in methods.items():
                if m_name in bad:
                    continue
                own_calls = {a.attr for a in ast.walk(m) if isinstance(a, ast.Attribute)
                             and isinstance(a.value, ast.Name) and a.value.id in ("self", "cls", name)}
                if mentions(m, tainted) or own_calls & bad:
                    bad.add(m_name)
                    tainted |= globals_set(m)
                    changed = True
            if any(mentions(h, tainted) for h in head + body) or bad & {"__init__", "__new__", "__post_init__"}:
                whole.add(name)
                tainted.add(name)
                changed = True
    for stmt in tree.body:
        for d in defs_in(stmt):
            if d.name in tainted:
                out.add((d.name, id(d)))
            if isinstance(d, ast.ClassDef):
                for m in d.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                            d.name in whole or m.name in bad_methods.get(d.name, ())):
                        out.add((f"{d.name}.{m.name}", id(m)))
    return out, tainted
