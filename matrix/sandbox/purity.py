"""Which programs may run several tests in one process: the purity check, and the guard that
keeps such programs from writing into objects they did not create.

A program process (see :mod:`.harness`) runs each test of one program in a fresh module
namespace. That is only equivalent to a fresh process per test when nothing a test does can
outlive it. :func:`pure_code` accepts a program (or a test's expressions) only when:

* it imports nothing but the batch-safe standard-library modules (:data:`SAFE_MODULES`, all
  loaded before any program runs; ``sys`` only for :data:`SYS_ATTRS`), and reads from them only
  modules, classes, functions and immutable values (no shared container, no shared context such
  as ``decimal.DefaultContext``), and none of the functions of :data:`BANNED` (they write into
  their arguments or into shared registries: ``functools.wraps``, ``typing.overload``...);
* it uses modules only as ``module.attr`` reads, and never stores into imported names or through
  attribute chains rooted at them;
* it uses none of the I/O and introspection builtins (:data:`FORBIDDEN_NAMES`), no private or
  unusual dunder names or attributes, no ``__del__`` and no hook through which a class answers
  for a shared one (:data:`FORBIDDEN_DEFS`), no async code, no string holding ``__``.

What remains shared between the tests of a process is then: functions and classes of the standard
library, enum members and typing constructs, none of which has a method that changes it. Every
other object a pure program can reach either is created by the test itself or is immutable, and
the shared ones can only change through attribute stores (``self.x = v`` with ``self`` a
shared function, ``f = statistics.mean; f.x = 1``): :func:`guard_stores` rewrites every attribute
store and delete of the program so that the target is checked at run time against the objects
that existed before any program ran (:func:`make_store_guard`). A store into such an object stops
the test (the harness re-runs the cell alone in a fresh process, where the store happens as
Python would do it).

Interpreter state a test may touch (recursion limit, int-digit limit, random seed, decimal
context, ``sys.argv``, the standard streams) is reset by the harness before every test.
"""

from __future__ import annotations

import ast
import functools
import sys
from typing import Any

__all__ = ["SAFE_MODULES", "PRELOAD", "pure_code", "fast_pure", "guard_stores", "guard_in_place",
           "make_store_guard", "walk", "drop_dead_main", "GUARD_NAME", "HARNESS_NAMES", "StoreIntoShared"]

# Modules a pure program may import: no hidden process state, or state reset per test.
SAFE_MODULES = frozenset({
    "math", "cmath", "re", "string", "collections", "collections.abc", "itertools", "functools",
    "operator", "heapq", "bisect", "typing", "copy", "fractions", "decimal", "datetime", "json",
    "array", "statistics", "textwrap", "unicodedata", "dataclasses", "enum", "numbers", "abc",
    "struct", "binascii", "base64", "hashlib", "keyword", "difflib", "random", "time",
})
# Loaded by the zygote before any program: the safe modules, what the harness itself needs, and
# modules whose import builds code objects (``asyncio`` decorates with ``types.coroutine``, which
# calls ``code.replace``), an event the audit hook forbids once programs run: a program (or a
# module under gen-tests) importing them, or ``unittest.mock`` (which imports asyncio), could not
# run at all. They are not SAFE_MODULES: a pure program still may not import them.
PRELOAD = tuple(sorted(SAFE_MODULES)) + ("io", "traceback", "types", "weakref", "marshal", "gc",
                                         "asyncio", "unittest.mock",
                                         # (their exception classes are the test's standard ones only
                                         # as the zygote loaded them: red-team pass 35, remote.peer._stdlib_name)
                                         "csv", "pickle", "queue", "tomllib", "xml.etree.ElementTree",
                                         "configparser", "shlex", "urllib.parse", "ipaddress",
                                         # (and these, ~15 ms in all: a right program raising
                                         # zipfile.BadZipFile, getopt.GetoptError, calendar's
                                         # IllegalMonthError, email.errors' was an error under
                                         # pytest.raises since pass 35; all passed before)
                                         "zipfile", "tarfile", "gzip", "email.errors", "getopt", "calendar",
                                         "plistlib", "urllib.error", "graphlib", "netrc", "html.parser",
                                         "xml.dom.minidom", "zoneinfo", "tokenize", "shutil")
SYS_ATTRS = frozenset({
    "maxsize", "float_info", "int_info", "version_info", "version", "maxunicode", "byteorder",
    "platform", "hash_info", "getsizeof", "float_repr_style", "getrecursionlimit",
    "setrecursionlimit", "set_int_max_str_digits", "get_int_max_str_digits", "exit", "stdin",
    "stdout", "stderr", "argv",
})
# Standard-library functions that write into their arguments' attributes or into a shared
# registry, and shared objects whose methods mutate them.
BANNED = {
    "functools": frozenset({"update_wrapper", "wraps"}),
    # (get_type_hints / ForwardRef / evaluate_forward_ref evaluate annotations with eval)
    "typing": frozenset({"final", "no_type_check", "no_type_check_decorator", "overload", "get_overloads",
                         "clear_overloads", "runtime_checkable", "dataclass_transform",
                         "get_type_hints", "ForwardRef", "evaluate_forward_ref"}),
    "abc": frozenset({"abstractmethod", "abstractclassmethod", "abstractstaticmethod",
                      "abstractproperty", "update_abstractmethods"}),
    "enum": frozenset({"global_enum", "global_enum_repr", "global_str", "global_flag_repr"}),
    "time": frozenset({"tzset"}),
    # attribute access or evaluation by a string, around the check of attribute names
    # (attrgetter("gi_frame") reached the shared runner's frames; get_type_hints evaluates its
    # annotations with eval; Formatter().get_field("0.f_back", ...) returns the object)
    "operator": frozenset({"attrgetter", "methodcaller"}),
    "string": frozenset({"Formatter"}),
}
# hooks through which a class of the program changes what a shared class answers for others
# (a subclass of collections.abc.Iterable whose __subclasshook__ says yes makes int an Iterable
# in the shared ABC's cache)
FORBIDDEN_DEFS = frozenset({"__del__", "__subclasshook__", "__instancecheck__", "__subclasscheck__"})
# Standard-library functions that write into the class (or function) they are given: allowed only
# as decorators of the program's own definitions.
DECORATOR_ONLY = {
    "dataclasses": frozenset({"dataclass"}),
    "functools": frozenset({"total_ordering"}),
}
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr",
    "setattr", "delattr", "breakpoint", "help", "memoryview", "__builtins__", "__loader__",
    "__spec__", "__file__", "__build_class__", "copyright", "credits", "license",
})
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__debug__", "__doc__"})
# dunder attributes a pure program may read (never store)
ALLOWED_DUNDER_ATTRS = frozenset({
    "__init__", "__name__", "__doc__", "__class__", "__qualname__", "__new__", "__call__",
    "__len__", "__iter__", "__next__", "__contains__", "__getitem__", "__setitem__", "__delitem__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
    "__str__", "__repr__", "__format__", "__int__", "__float__", "__index__", "__round__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
    "__divmod__", "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__or__", "__xor__",
    "__lshift__", "__rshift__", "__radd__", "__rsub__", "__rmul__", "__enter__", "__exit__",
})
FORBIDDEN_ATTRS = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_consts", "co_code",
    "cell_contents", "mro", "register", "reconfigure",
    "unicode_whitespace_trans",  # a dict shared by every textwrap.TextWrapper
})
GUARD_NAME = "__coevo_own__"
HARNESS_NAMES = frozenset({"__coevo_eq__", "__coevo_test__", GUARD_NAME})
STATE_WORDS = ("random", "decimal", "statistics", "time", "datetime")


class StoreIntoShared(BaseException):
    """Raised by the store guard: the program writes into an object it did not create."""


def _safe_object(v, depth=0):
    """Whether a module attribute may be referenced by a pure program: modules, classes,
    functions and immutable values (enum members and typing constructs included)."""
    import types

    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, type, types.ModuleType,
                                   types.FunctionType, types.BuiltinFunctionType, range)):
        return True
    t = type(v)
    if isinstance(v, (tuple, frozenset)):
        return depth < 3 and all(_safe_object(x, depth + 1) for x in v)
    mod = getattr(t, "__module__", "") or ""
    if mod in ("typing", "sys") or callable(v) and mod in ("builtins", "functools", "operator"):
        return True
    try:
        import enum

        if isinstance(v, enum.Enum):
            return True
    except ImportError:
        pass
    return type(v).__name__ in ("method_descriptor", "wrapper_descriptor", "getset_descriptor",
                                "classmethod_descriptor", "staticmethod", "classmethod",
                                "Pattern", "ellipsis")


def walk(tree):
    """All (node, parent) pairs of ``tree`` in one pass (faster than ``ast.walk`` + a map)."""
    out = []
    stack = [(tree, None)]
    AST = ast.AST
    push, pop, app = stack.append, stack.pop, out.append
    while stack:
        node, parent = pop()
        app((node, parent))
        for f in node._fields:
            v = getattr(node, f, None)
            if type(v) is list:
                for x in v:
                    if isinstance(x, AST):
                        push((x, node))
            elif isinstance(v, AST):
                push((v, node))
    return out


def walk_in_order(tree) -> list:
    """Every node of ``tree`` in :func:`ast.walk`'s order (breadth first, each node's children in
    field order), without its generators: a third of the time."""
    out = [tree]
    AST = ast.AST
    app = out.append
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        for f in node._fields:
            try:
                v = getattr(node, f)
            except AttributeError:
                continue
            if type(v) is list:
                for x in v:
                    if isinstance(x, AST):
                        app(x)
            elif isinstance(v, AST):
                app(v)
    return out


def _is_main_test(node) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if type(node) is not ast.Compare or len(node.ops) != 1 or type(node.ops[0]) is not ast.Eq:
        return False
    sides = (node.left, node.comparators[0])
    return (any(type(x) is ast.Name and x.id == "__name__" for x in sides)
            and any(type(x) is ast.Constant and x.value == "__main__" for x in sides))


def drop_dead_main(tree: ast.Module) -> bool:
    """Remove the module-level ``if __name__ == "__main__":`` blocks (their ``else`` stays) of a
    program loaded under another module name (a function task's ``solution``), in place; True
    when one was removed. Model-written programs often end with one (``doctest.testmod()``, a
    demo reading ``sys.argv``) whose imports alone would make the program impure, and so run it
    one process per test, though the block never runs. It is dead only while nothing can make
    ``__name__`` equal ``"__main__"`` first: nothing is removed when the program binds or deletes
    the name anywhere (assignment, ``global``, import alias, parameter, ``except ... as``,
    pattern capture...), stores into any ``__name__`` attribute, or star-imports. Any other way to
    reach the module's namespace (``globals()``, ``vars()``, ``exec``...) makes the rest of the
    program impure anyway (:func:`pure_code` checks what is left)."""
    if not any(type(n) is ast.If and _is_main_test(n.test) for n in tree.body):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id == "__name__" and type(node.ctx) is not ast.Load:
                return False
            continue
        if isinstance(node, ast.Attribute):
            if node.attr == "__name__" and type(node.ctx) is not ast.Load:
                return False
            continue
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return False
        for field in node._fields:  # a name bound by any other construct
            v = getattr(node, field, None)
            if v == "__name__" or (type(v) is list and "__name__" in v):
                return False
    body = []
    for n in tree.body:
        if type(n) is ast.If and _is_main_test(n.test):
            body.extend(n.orelse)  # the test is false: the else branch runs
        else:
            body.append(n)
    tree.body = body
    return True


def _banned(module_name: str, attr: str) -> bool:
    return attr in BANNED.get(module_name, ())


@functools.cache
def _refused_ids() -> frozenset:
    """The objects refused by identity, however they are reached: the builtins
    :data:`FORBIDDEN_NAMES` stands for (``some_module.eval`` is refused as the bare name is) and
    :data:`BANNED`'s functions under any module's name (``typing.abstractmethod`` is
    ``abc.abstractmethod``). Built on first use: the BANNED modules may load after this one."""
    import builtins
    import importlib

    ids = {id(getattr(builtins, n)) for n in FORBIDDEN_NAMES if hasattr(builtins, n)}
    for mod, names in BANNED.items():
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        ids.update(id(getattr(m, n)) for n in names if hasattr(m, n))
    return frozenset(ids)


def _refused_object(obj) -> bool:
    return id(obj) in _refused_ids()


def pure_code(tree: ast.AST, allow: frozenset = frozenset(), pairs: list | None = None) -> bool:
    """True when ``tree`` may run beside other tests of the same program in one process (see the
    module docstring). Conservative: anything it cannot vouch for makes the code impure (it then
    runs one fresh process per test)."""
    pairs = walk(tree) if pairs is None else pairs
    modules: dict[str, object] = {}  # name -> module object it is bound to
    imported: set[str] = set()
    decorator_only: set[str] = set()  # names bound to DECORATOR_ONLY functions
    Name, Attribute, Subscript, Constant = ast.Name, ast.Attribute, ast.Subscript, ast.Constant
    Load = ast.Load
    others = []
    for node, parent in pairs:
        t = type(node)
        if t is ast.Import:
            for a in node.names:
                if a.name not in SAFE_MODULES and a.name != "sys":
                    return False
                top = a.name.split(".")[0]
                bound = a.asname or top
                mod = sys.modules.get(a.name if a.asname else top)
                if mod is None:
                    return False
                modules[bound] = mod
                imported.add(bound)
        elif t is ast.ImportFrom:
            if node.module == "sys" and not node.level:
                if any(a.name not in SYS_ATTRS for a in node.names):
                    return False
                imported.update(a.asname or a.name for a in node.names)
                continue
            if node.level or node.module not in SAFE_MODULES:
                return False
            mod = sys.modules.get(node.module)
            if mod is None:
                return False
            for a in node.names:
                if a.name == "*":
                    public = {k: v for k, v in vars(mod).items() if not k.startswith("_")}
                    if any(not _safe_object(v) or _banned(node.module, k) for k, v in public.items()):
                        return False
                    decorator_only.update(DECORATOR_ONLY.get(node.module, ()))
                    imported.update(public)
                    continue
                if a.name.startswith("_") or not hasattr(mod, a.name) or _banned(node.module, a.name):
                    return False
                obj = getattr(mod, a.name)
                if not _safe_object(obj) or _refused_object(obj):
                    return False
                if type(obj).__name__ == "module" and getattr(obj, "__name__", None) not in SAFE_MODULES:
                    return False  # `from typing import types`: a module that is not batch-safe
                bound = a.asname or a.name
                imported.add(bound)
                if a.name in DECORATOR_ONLY.get(node.module, ()):
                    decorator_only.add(bound)
                if type(obj).__name__ == "module":
                    modules[bound] = obj
        elif t is Name or t is Attribute or t is Subscript or t is Constant:
            others.append((node, parent))
        elif t is ast.FunctionDef:
            if node.name in FORBIDDEN_DEFS:
                return False
        elif not _other_names_ok(node, t):
            return False
        elif t in (ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith, ast.Await):
            return False

    def module_chain_ok(node, parent, obj):
        """``node`` (an expression yielding module ``obj``) must be read as ``node.attr``."""
        if not (type(parent) is Attribute and parent.value is node and type(parent.ctx) is Load):
            return False
        attr = parent.attr
        if attr.startswith("_") or not hasattr(obj, attr):
            return False
        if obj is sys:
            return attr in SYS_ATTRS
        if _banned(getattr(obj, "__name__", ""), attr):
            return False
        if attr in DECORATOR_ONLY.get(getattr(obj, "__name__", ""), ()) and not decorates_class(parent):
            return False
        value = getattr(obj, attr)
        if not _safe_object(value) or _refused_object(value):
            return False
        if type(value).__name__ == "module":
            # only into the batch-safe modules: re.enum.bltns is the builtins module (its eval),
            # typing.types has new_class, typing.contextlib.os is os
            if getattr(value, "__name__", None) not in SAFE_MODULES:
                return False
            return module_chain_ok(parent, parent_of.get(id(parent)), value)
        return True

    parent_of = None

    def decorates_class(node):
        """``node`` is a decorator of a class of the program (``@x`` or ``@x(...)``)."""
        nonlocal parent_of
        if parent_of is None:
            parent_of = {id(n): p for n, p in pairs}
        up = parent_of.get(id(node))
        if type(up) is ast.Call and up.func is node:
            node, up = up, parent_of.get(id(up))
        return type(up) is ast.ClassDef and any(d is node for d in up.decorator_list)

    for node, parent in others:
        t = type(node)
        if t is Name:
            name = node.id
            if name in FORBIDDEN_NAMES:
                return False
            if name in decorator_only and not decorates_class(node):
                return False
            if name[:2] == "__" and name[-2:] == "__" and name not in ALLOWED_DUNDER_NAMES \
                    and name not in allow:
                return False
            if name in modules:
                if parent_of is None:
                    parent_of = {id(n): p for n, p in pairs}
                if not module_chain_ok(node, parent, modules[name]):
                    return False
            if type(node.ctx) is not Load and name in imported:
                return False
        elif t is Attribute:
            attr = node.attr
            if attr in FORBIDDEN_ATTRS:
                return False
            if attr[:1] == "_":
                if attr[:2] == "__" and attr[-2:] == "__":
                    if attr not in ALLOWED_DUNDER_ATTRS or type(node.ctx) is not Load:
                        return False
                elif not (type(node.value) is Name and node.value.id in ("self", "cls")):
                    return False
            if type(node.ctx) is not Load and not _store_root_ok(node, imported):
                return False
        elif t is Subscript:
            if type(node.ctx) is not Load and not _store_root_ok(node, imported):
                return False
        else:
            v = node.value
            if type(v) is str:
                if "__" in v and v != "__main__":
                    return False
            elif type(v) is bytes and b"__" in v:
                return False
    return True


def _bound_name_ok(name) -> bool:
    """A name bound by a construct other than a plain assignment (``import ... as``, ``except ...
    as``, a pattern's capture, a keyword argument): no dunder name (``case __hash__:`` in a class
    body gives the class a hash; ``import f as __coevo_own__`` would replace the store guard)."""
    return name is None or not (name[:2] == "__" and name[-2:] == "__")


def _other_names_ok(node, t) -> bool:
    """The names that syntax holds as plain strings rather than as ``Name``/``Attribute`` nodes:
    bound by an alias, a handler, a pattern or a keyword, or read by a class pattern's keywords
    (``case Callable(__self__=b)`` reads ``print.__self__``, the builtins module)."""
    if t is ast.alias:
        return _bound_name_ok(node.asname)
    if t is ast.ExceptHandler or t is ast.MatchAs or t is ast.MatchStar:
        return _bound_name_ok(node.name)
    if t is ast.MatchMapping:
        return _bound_name_ok(node.rest)
    if t is ast.keyword:
        return _bound_name_ok(node.arg)
    if t is ast.MatchClass:
        return all(a[:1] != "_" and a not in FORBIDDEN_ATTRS for a in node.kwd_attrs)
    return True


def _store_root_ok(node, imported):
    """A store target ``a.b[c].d = ...`` is fine when its root is a plain name that is not an
    imported name, and no ``__`` attribute sits in the chain."""
    root = node.value
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        if isinstance(root, ast.Attribute) and root.attr.startswith("__"):
            return False
        root = root.value
    return isinstance(root, ast.Name) and root.id not in imported


# names of the BANNED and DECORATOR_ONLY functions: the fast path leaves them to pure_code
_BANNED_NAMES = frozenset().union(*BANNED.values(), *DECORATOR_ONLY.values())
# dunder names a code object may mention on the fast path (the compiler's own included)
_FAST_DUNDERS = (ALLOWED_DUNDER_ATTRS - {"__class__"}) | {"__module__", "__annotations__", "__debug__"}
_CO_ASYNC = 0x80 | 0x100 | 0x200  # CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR


def _import_or_store_ops() -> frozenset:
    import opcode

    ops = opcode.opmap
    return frozenset(ops[n] for n in ("IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "STORE_ATTR", "DELETE_ATTR",
                                      "MATCH_CLASS")  # a class pattern reads attributes named in a constant
                     if n in ops)


_IMPORT_OR_STORE_OPS = _import_or_store_ops()


def fast_pure(co, *, own_names: bool = False) -> bool:
    """Purity read off a code's code objects alone, for code that neither imports (so no module is
    reachable) nor stores into or deletes an attribute (so nothing needs the store guard): no
    import, attribute-store or class-pattern instruction, no forbidden, private or unusual dunder name, no string
    holding ``__``, nothing async. False means "ask :func:`pure_code`".
    ``own_names`` (a test's expressions): a name with one leading underscore may be read as a
    variable (the program's: ``_sum([1, 2])``; no builtin has such a name), never as an attribute
    (:func:`variable_only`)."""
    stack = [co]
    code_type = type(co)
    while stack:
        c = stack.pop()
        if c.co_flags & _CO_ASYNC:
            return False
        if not _IMPORT_OR_STORE_OPS.isdisjoint(c.co_code[::2]):  # wordcode: every other byte an opcode
            return False
        for name in c.co_names:
            if name[:1] == "_":
                if name not in _FAST_DUNDERS and not (own_names and variable_only(c, name)):
                    return False
            elif name in FORBIDDEN_NAMES or name in FORBIDDEN_ATTRS or name in _BANNED_NAMES:
                return False
        consts = list(c.co_consts)
        while consts:
            k = consts.pop()
            t = type(k)
            if t is code_type:
                stack.append(k)
            elif t is str:
                if "__" in k and k != "__main__":
                    return False
            elif t is bytes:
                if b"__" in k:
                    return False
            elif t is tuple or t is frozenset:
                consts.extend(k)
    return True


_VARIABLE_OPS = frozenset({"LOAD_NAME", "LOAD_GLOBAL"})


def variable_only(c, name: str, ops: frozenset = _VARIABLE_OPS) -> bool:
    """``name`` (one leading underscore, no ``__`` in it) is used in code object ``c`` only as a
    variable (by the instructions ``ops``), by no other instruction (an attribute read or store)."""
    if "__" in name:
        return False
    import dis

    return all(ins.opname in ops for ins in dis.get_instructions(c) if ins.argval == name and
               type(ins.argval) is str and ins.opcode in dis.hasname)


# ----------------------------------------------------------------------------- the store guard

class _GuardStores(ast.NodeTransformer):
    """``x.a = v`` -> ``__coevo_own__(x).a = v`` (and the same for ``del x.a``, ``x.a += v``,
    loop, ``with`` and comprehension targets). Evaluation order is unchanged: Python evaluates
    the stored value before the target's object."""

    def __init__(self):
        self.count = 0

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.count += 1
            call = ast.Call(func=ast.Name(GUARD_NAME, ast.Load()), args=[node.value], keywords=[])
            return ast.copy_location(ast.Attribute(value=ast.copy_location(call, node.value),
                                                   attr=node.attr, ctx=node.ctx), node)
        return node


def guard_in_place(pairs: list) -> int:
    """Guard the attribute stores and deletes found in ``pairs`` (:func:`walk` of a tree), in
    place: ``x.a = v`` -> ``__coevo_own__(x).a = v``. Returns how many."""
    n = 0
    for node, _parent in pairs:
        if type(node) is ast.Attribute and type(node.ctx) is not ast.Load:
            call = ast.Call(func=ast.Name(GUARD_NAME, ast.Load()), args=[node.value], keywords=[])
            node.value = ast.copy_location(call, node.value)
            ast.fix_missing_locations(call)
            n += 1
    return n


def guard_stores(tree: ast.AST) -> tuple[ast.AST, int]:
    """``tree`` with every attribute store and delete guarded (in place), and how many."""
    g = _GuardStores()
    tree = g.visit(tree)
    if g.count:
        ast.fix_missing_locations(tree)
    return tree, g.count


def make_store_guard(shared_ids: frozenset, tripped: list):
    """The run-time guard: returns its argument unless it existed before any program ran (its
    ``id`` is in ``shared_ids``) or its class's ``__setattr__``/``__delattr__`` is a shared
    function (a typing alias forwards stores to its origin class), in which case it records the
    violation in ``tripped`` (so that catching the exception hides nothing) and raises
    :class:`StoreIntoShared`."""
    plain_set, plain_del = object.__setattr__, object.__delattr__

    def __coevo_own__(obj, _ids=shared_ids, _id=id, _type=type, _tripped=tripped, _exc=StoreIntoShared,
                      _set=plain_set, _del=plain_del):
        t = _type(obj)
        if _id(obj) in _ids:
            _tripped.append(1)
            raise _exc()
        s, d = t.__setattr__, t.__delattr__
        if (s is not _set and _id(s) in _ids) or (d is not _del and _id(d) in _ids):
            _tripped.append(1)
            raise _exc()
        return obj

    return __coevo_own__


# ----------------------------------------------------------------------------- sharing the runner
# A pure program runs in a process forked for its row (~1.7 ms a row in the sandbox); one that is
# also *plain* runs in the runner itself, after the row before it. Plain is an allow-list small
# enough to reason about, not the purity check with more holes stopped: a program that could
# reach the interpreter's shared state by any means found so far (a class made by ``type()``,
# ``property.__init__`` on a shared property, ``copy`` and a ``__reduce_ex__``, str.format fields
# walking to frames, private attributes of shared classes, a subclass of a shared ABC, ``sys``'s
# streams) is not plain; it only costs the fork.
PLAIN_MODULES = frozenset({"math", "cmath", "itertools", "functools", "collections", "collections.abc", "heapq",
                           "bisect", "re", "string", "fractions", "statistics", "typing"})
PLAIN_DENIED_NAMES = frozenset({"type", "super", "object", "property", "format", "classmethod", "staticmethod",
                                "callable", "hasattr", "id", "hash", "dir", "self", "cls"})
PLAIN_DENIED_ATTRS = frozenset({"format", "format_map", "mro", "register"})
# ``sys`` in plain code: read only as ``sys.<one of these>`` (or imported by name): constants, and
# the two limits the harness sets back after every test (:func:`.harness._cleanup`); never its
# streams, ``argv``, ``modules``, hooks or ``exit``
PLAIN_SYS_ATTRS = frozenset({"maxsize", "float_info", "int_info", "maxunicode", "hash_info", "version_info",
                             "byteorder", "getrecursionlimit", "setrecursionlimit", "get_int_max_str_digits",
                             "set_int_max_str_digits"})
_PLAIN_BASES = frozenset({"Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
                          "ArithmeticError", "ZeroDivisionError", "LookupError", "NotImplementedError"})


def plain_code(tree: ast.AST) -> bool:
    """Whether ``tree`` (a pure program, a setup) may run in the shared runner: imports only of
    :data:`PLAIN_MODULES`, no name of :data:`PLAIN_DENIED_NAMES` (``self``/``cls`` included: a
    method's first argument can be bound to anything), no dunder or private attribute, none of
    :data:`PLAIN_DENIED_ATTRS` (``format``: its fields read attributes by name), no string holding
    ``__``, no ``global``/``nonlocal``, classes whose bases are the program's own classes or a few
    builtin exceptions, no metaclass or class decorator, no function or method whose name starts
    with ``_`` (so no dunder method at all), decorators only plain names, and every attribute chain
    from an imported module staying in :data:`PLAIN_MODULES`."""
    own_classes: set[str] = set()
    modules: dict[str, object] = {}  # names the program binds to modules
    node: Any  # dispatched on t = type(node), which mypy does not narrow
    classes = False
    nodes = walk_in_order(tree)  # one walk for both passes (nothing changes the tree between them)
    for node in nodes:
        if type(node) is ast.Import:
            for a in node.names:
                top = a.name.split(".")[0]
                modules[a.asname or top] = sys.modules.get(a.name if a.asname else top)
        elif type(node) is ast.ImportFrom:
            for a in node.names:
                modules[a.asname or a.name] = getattr(sys.modules.get(node.module or ""), a.name, None)
        elif type(node) is ast.ClassDef:
            classes = True
    # one leading underscore names a binding of the program's own (``for _ in``, ``def _helper``),
    # never a private attribute (those stay refused); not in a program with classes, whose
    # ``_``-named members a shared class's machinery might look up
    private = _private_name_in_class if classes else _private_name
    for node in nodes:
        t = type(node)
        if t is ast.Attribute and not _plain_chain(node, modules):
            return False
        if t is ast.Import:
            if any(a.name not in PLAIN_MODULES and a.name != "sys" for a in node.names):
                return False
        elif t is ast.ImportFrom:
            if node.module == "sys" and not node.level:
                if any(a.name not in PLAIN_SYS_ATTRS for a in node.names):
                    return False
                continue
            if node.level or node.module not in PLAIN_MODULES or any(a.name == "*" for a in node.names):
                return False
            for a in node.names:  # `from re import enum`: a module out of the plain ones, by another name
                if not _plain_object(modules.get(a.asname or a.name)):
                    return False
        elif t is ast.Name:
            if node.id in PLAIN_DENIED_NAMES or private(node.id):
                return False
        elif t is ast.Attribute:
            if node.attr[:1] == "_" or node.attr in PLAIN_DENIED_ATTRS or node.attr in FORBIDDEN_ATTRS:
                return False
        elif t is ast.arg:
            if node.arg in ("self", "cls") or private(node.arg):
                return False
        elif t is ast.Constant:
            if isinstance(node.value, (str, bytes)) and "_" * 2 in str(node.value):
                return False
        elif t is ast.ClassDef:
            if node.keywords or node.decorator_list:
                return False
            for b in node.bases:
                if not (type(b) is ast.Name and (b.id in own_classes or b.id in _PLAIN_BASES)):
                    return False
            own_classes.add(node.name)
        elif t in (ast.FunctionDef, ast.Lambda):
            name = getattr(node, "name", "")
            if private(name) or any(type(d) is not ast.Name or private(d.id) for d in
                                    getattr(node, "decorator_list", [])):
                return False
        elif t in (ast.Global, ast.Nonlocal, ast.AsyncFunctionDef, ast.Await, ast.Match):
            return False
        elif t is ast.alias or t is ast.ExceptHandler:  # (names bound by syntax other than an
            # assignment or a definition: no leading underscore at all, as before)
            name = (node.asname or node.name) if t is ast.alias else node.name
            if name and name[:1] == "_":
                return False
        elif t is ast.keyword:
            if node.arg and private(node.arg):
                return False
    return True


def _private_name(name: str) -> bool:
    """A name plain code may not bind or read: a dunder or mangled one (``__x``, ``_A__x``: any
    ``__`` in it); one leading underscore is the program's own name."""
    return "__" in name


def _private_name_in_class(name: str) -> bool:
    return name[:1] == "_"


# names the compiler itself uses in a class body, and the store guard's
_COMPILER_NAMES = frozenset({"__module__", "__qualname__", "__name__", "__doc__", "__annotations__", GUARD_NAME})


def plain_names(co) -> bool:
    """The compiled program of a :func:`plain_code` tree binds and reads no private name but the
    compiler's own (whatever syntax bound it: a check of the text once missed ``case __hash__:``
    and ``except E as __x__``), and holds no string naming a private attribute. Names with one
    leading underscore pass where the text's check let them (no class: :func:`plain_code`); an
    attribute of that form never does (the text's check refuses every ``_`` attribute)."""
    stack = [co]
    code_type = type(co)
    while stack:
        c = stack.pop()
        for names in (c.co_names, c.co_varnames, c.co_cellvars, c.co_freevars):
            for name in names:
                if "__" in name and name not in _COMPILER_NAMES:
                    return False
        consts = list(c.co_consts)
        while consts:
            k = consts.pop()
            if type(k) is code_type:
                stack.append(k)
            elif type(k) is tuple or type(k) is frozenset:
                consts.extend(k)
            elif type(k) in (str, bytes) and "_" * 2 in str(k):
                return False
    return True


def _plain_chain(node: ast.Attribute, modules: dict) -> bool:
    """An attribute chain rooted at a module the program imported reaches no module outside
    :data:`PLAIN_MODULES` (``re.enum``, ``statistics.random``, ``typing.types``...)."""
    chain = []
    x: Any = node
    while type(x) is ast.Attribute:
        chain.append(x.attr)
        x = x.value
    if type(x) is not ast.Name or x.id not in modules:
        return True
    obj = modules[x.id]
    if obj is sys:  # `sys.maxsize`, `sys.float_info.max`: one of its constants or limits, then on
        if chain[-1] not in PLAIN_SYS_ATTRS:
            return False
        obj = getattr(sys, chain.pop(), None)
    if not _plain_object(obj):
        return False
    for attr in reversed(chain):
        obj = getattr(obj, attr, None) if not attr.startswith("_") else None
        if not _plain_object(obj):
            return False
    return True


def _plain_object(obj) -> bool:
    """What plain code may reach from a module: not a module out of :data:`PLAIN_MODULES`, not a
    metaclass (``typing.ABCMeta(name, bases, dict)`` makes a class with any hook, as ``type()``
    does: one with a ``__subclasshook__`` put ``set`` into ``Sequence``'s cache for the runner's
    life), not a :data:`BANNED` function under another name."""
    if type(obj).__name__ == "module":
        return getattr(obj, "__name__", None) in PLAIN_MODULES
    if isinstance(obj, type) and issubclass(obj, type):
        return False
    return not _refused_object(obj)


_MODULE_NAMES: list = []  # (:func:`probe_module_names`, once per process)


def probe_module_names() -> frozenset:
    """The names under which a plain module holds a module that is not plain (``typing.sys``,
    ``statistics.sys``, ``fractions.sys``, ``re.enum``, ``statistics.random``, ``typing.types``...),
    and ``sys``. A test's expressions read the program's module names, which plain code itself may
    only follow into plain modules (:func:`_plain_chain`): a test that names one of these does not
    run in the shared runner (a test ``f(typing.sys.modules.update(math=...))`` once replaced
    ``math`` for every later row of the runner). Computed from the loaded modules (the zygote's,
    :func:`.harness.prepare`)."""
    if not _MODULE_NAMES:
        names = {"sys"}
        for m in sorted(PLAIN_MODULES):
            mod = sys.modules.get(m)
            if mod is None:
                continue
            for attr, value in list(vars(mod).items()):
                if type(value).__name__ == "module" and getattr(value, "__name__", None) not in PLAIN_MODULES:
                    names.add(attr)
        _MODULE_NAMES.append(frozenset(names))
    return _MODULE_NAMES[0]


def plain_probe(co, *, module_names: bool = True, own_names: frozenset | None = _VARIABLE_OPS) -> bool:
    """The same for a test's compiled expression (already :func:`fast_pure`): no denied name,
    attribute or format string anywhere in it, and (``module_names``) no name under which a plain
    module holds a module that is not plain (:func:`probe_module_names`). A name with one leading
    underscore only as a variable (``own_names``: the instructions that may use it; None: never)."""
    stack = [co]
    code_type = type(co)
    modules = probe_module_names() if module_names else frozenset()
    while stack:
        c = stack.pop()
        for name in c.co_names:
            if name in PLAIN_DENIED_NAMES or name in PLAIN_DENIED_ATTRS or name in modules or \
                    (name[:1] == "_" and not (own_names is not None and variable_only(c, name, own_names))):
                return False
        for k in c.co_consts:
            if type(k) is code_type:
                stack.append(k)
            elif type(k) in (str, bytes) and "_" * 2 in str(k):
                return False
    return True
