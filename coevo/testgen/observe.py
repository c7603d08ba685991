"""Outcomes of probes: which are usable as tests, what a test asserts about them (:class:`Check`),
and whether a variant's outcome breaks those assertions (the variant is "killed").

An outcome (from :mod:`coevo.testgen.harness`) is ``{"steps": [...], "state": {var: desc}, "t":
seconds}``, ``{"load": [exception types, message]}`` or ``{"crash": status}``. A step is ``["ok",
desc, stdout, [[arg index, desc after], ...]]``, ``["raise", [types of the MRO, message, line],
stdout]`` or one of ``["timeout"] ["memory"] ["recursion"] ["output"] ["badarg", why]``.

Value descriptions (``desc``): ``["v", plain]``, ``["bound", desc]`` (a constructor whose result is
bound to a variable, described as built), ``["enum", type, member]``, ``["repr", text, type]`` (a
repr that evaluates back to an equal value), ``["obj", type, {attr: desc}, {"len", "items", "str",
"repr"}]``, ``["iter", [desc]]`` (``["iter", [desc], "more"]``: the first items of a longer
iterator), ``["seq", "list"|"tuple"|"set"|"frozenset", [desc]]``,
``["map", [[key, desc]]]``, ``["exc", type, message]``, ``["opaque", type]``; a type is
``[module, qualname]``.

:func:`checks` lists what the written test asserts, and :func:`passes` decides one check on any
outcome; :mod:`coevo.testgen.writer` renders the same checks, so the kill matrix and the file
agree: ``==`` on plain values, ``pytest.approx`` for floats (relative 1e-6, absolute 1e-12),
``is`` for ``None``/``True``/``False`` and enum members, ``pytest.raises(Type, match=...)`` (a
subclass passes, as in pytest), printed output, arguments changed in place, and objects attribute
by attribute.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Check", "Names", "usable", "checks", "passes", "breaks", "stable_pair", "stable_checks", "approx_form",
           "ADDRESS", "asserts_message"]

ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
# "env": the call read environment variables (HOME, USER, COLUMNS, the code's own settings...):
# what it gives depends on where the suite runs, so it is not asserted
# "random": the call drew on randomness the code did not seed (random's functions, random.Random(),
# os.urandom): what it gives differs from run to run, so it is not asserted
_BAD_STEPS = ("timeout", "memory", "recursion", "output", "badarg", "stdin", "env", "random")
_MAX_ATTRS = 8
_MAX_ITEMS = 6
_MAX_FILES = 4  # files a step created, changed or removed that its test asserts (and one it kept)


@dataclass(frozen=True)
class Check:
    root: tuple  # ("ret", i) | ("arg", i, j) | ("out", i) | ("var", name) | ("raise", i) | ("warn", i)
    #   | ("file", i, path) (a file of the working directory after step i: :func:`_file_checks`)
    # accessors: ("attr", name) | ("len",) | ("list",) | ("islice", n) | ("str",) | ("index", k) | ("key", k)
    #   | ("getvalue",) (an in-memory stream's contents)
    #   | a file's ("read_text",) ("read_bytes",) ("size",) ("exists",) ("is_file",) ("is_dir",) ("is_symlink",)
    path: tuple
    op: str  # "ok" | "eq" | "is" | "approx" | "isnan" | "enum" | "src" | "raises" | "warns"
    value: Any = None


def usable(outcome: dict | None) -> bool:
    """An outcome a test can be written from: every step ended (value or exception) within the
    limits, nothing crashed."""
    if not isinstance(outcome, dict) or "steps" not in outcome:
        return False
    steps = outcome["steps"]
    if not steps:
        return False
    last = steps[-1]
    if isinstance(last, list) and len(last) > 1 and last[0] == "ok" and last[1] == ["opaque", ["builtins", "function"]]:
        return False  # a function it returned, left uncalled: nothing of it to assert (it is bound and called)
    for s in steps:
        if not isinstance(s, list) or not s or s[0] in _BAD_STEPS:
            return False
        if s[0] == "raise":
            names = [p[1] for p in s[1][0]] if s[1] and s[1][0] else []
            if any(n in ("KeyboardInterrupt", "GeneratorExit", "_CvTimeout", "_CvOutputCap") for n in names):
                return False
    return True


def approx_form(v) -> bool:
    """Whether ``v`` is asserted with ``pytest.approx``: a float, or a flat list / tuple / dict of
    numbers holding a float."""
    if type(v) is float:
        return not (math.isnan(v) or math.isinf(v))
    if type(v) in (list, tuple) and v and all(type(x) in (int, float) for x in v):
        return any(type(x) is float for x in v) and all(math.isfinite(x) for x in v)
    if type(v) is dict and v and all(type(x) in (int, float) for x in v.values()):
        return any(type(x) is float for x in v.values()) and all(math.isfinite(x) for x in v.values())
    return False


def asserts_message(step: list) -> bool:
    """Whether ``pytest.raises`` gets ``match=`` for this exception (a short one-line message
    without memory addresses)."""
    msg = step[1][1] if step[1] else ""
    return bool(msg) and len(msg) <= 160 and "\n" not in msg and not ADDRESS.search(msg)


# ----------------------------------------------------------------------------- what is asserted

def _value_checks(root: tuple, path: tuple, d, depth: int = 0, ctx=None) -> list[Check]:
    if not isinstance(d, list) or not d:
        return []
    kind = d[0]
    if kind == "v":
        x = d[1]
        if x is None or type(x) is bool:
            return [Check(root, path, "is", x)]
        if type(x) is float and math.isnan(x):
            return [Check(root, path, "isnan")]
        if approx_form(x):
            return [Check(root, path, "approx", x)]
        return [Check(root, path, "eq", x)]
    if kind == "enum":
        if ctx is not None and not ctx.nameable(d[1]):
            return []
        return [Check(root, path, "enum", (tuple(d[1]), d[2]))]
    if kind == "repr":
        if ctx is None or not ctx.valid_repr(d[1], d[2]):
            return []
        return [Check(root, path, "src", (d[1], tuple(d[2])))]
    if depth >= 2:
        return []
    if kind == "obj":
        out: list[Check] = []
        for name, sub in list(d[2].items())[:_MAX_ATTRS]:
            if name.isidentifier():
                out += _value_checks(root, path + (("attr", name),), sub, depth + 1, ctx)
        extra = d[3] or {}
        if "len" in extra and type(extra["len"]) is int:
            out.append(Check(root, path + (("len",),), "eq", extra["len"]))
        items = extra.get("items")
        if items is not None and all(isinstance(i, list) and i and i[0] == "v" for i in items):
            out += _value_checks(root, path + (("list",),), ["v", [i[1] for i in items]], depth + 1, ctx)
        if type(extra.get("getvalue")) in (str, bytes):  # an in-memory stream: what it holds
            out.append(Check(root, path + (("getvalue",),), "eq", extra["getvalue"]))
        if "str" in extra:
            out.append(Check(root, path + (("str",),), "eq", extra["str"]))
        elif "repr" in extra:
            out.append(Check(root, path + (("repr",),), "eq", extra["repr"]))
        return out
    if kind == "iter":
        items = d[1]
        # an iterator longer than the harness reads (an infinite generator): its first items
        whole = ("list",) if len(d) < 3 else ("islice", len(items))
        if all(isinstance(i, list) and i and i[0] == "v" for i in items):
            return _value_checks(root, path + (whole,), ["v", [i[1] for i in items]], depth + 1, ctx)
        out = [Check(root, path + (whole, ("len",)), "eq", len(items))]
        for k, sub in enumerate(items[:_MAX_ITEMS]):
            out += _value_checks(root, path + (whole, ("index", k)), sub, depth + 1, ctx)
        return out
    if kind == "seq":
        out = [Check(root, path + (("len",),), "eq", len(d[2]))]
        if d[1] in ("list", "tuple"):
            for k, sub in enumerate(d[2][:_MAX_ITEMS]):
                out += _value_checks(root, path + (("index", k),), sub, depth + 1, ctx)
        return out
    if kind == "map":
        out = [Check(root, path + (("len",),), "eq", len(d[1]))]
        for key, sub in d[1][:_MAX_ITEMS]:
            out += _value_checks(root, path + (("key", key),), sub, depth + 1, ctx)
        return out
    if kind == "exc":
        return [Check(root, path + (("type",),), "eq", d[1][1]), Check(root, path + (("str",),), "eq", d[2])]
    return []


class Names:
    """What a test file can name: builtins, and the module's own top-level names (imported from
    it); used to pick exception types and to accept reprs as expected values."""

    _STDLIB = {"datetime": ("datetime",), "decimal": ("Decimal",), "fractions": ("Fraction",),
               "collections": ("OrderedDict", "deque", "Counter")}

    def __init__(self, module_name: str, names: set[str]):
        self.module_name = module_name
        self.names = set(names)

    def nameable(self, t) -> bool:
        mod, qual = t[0], t[1]
        if "." in qual or "<" in qual:
            return False
        if mod == "builtins":
            return True
        return mod == self.module_name and qual in self.names

    def valid_repr(self, text: str, t) -> bool:
        """``text`` is a constructor call (of the value's own class, nameable here, or a datetime /
        Decimal / Fraction) with literal arguments only: safe to write into a test file."""
        import ast

        if len(text) > 400:
            return False
        try:
            node = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        mod, qual = t[0], t[1]
        leaves: frozenset = frozenset()
        if mod == "datetime":
            # an aware value holds its zone: datetime.timezone(datetime.timedelta(...)), .utc
            ok_funcs = {f"datetime.{qual}", "datetime.timezone", "datetime.timedelta"}
            leaves = frozenset({"datetime.timezone.utc"})
        elif mod in self._STDLIB and qual in self._STDLIB[mod]:
            ok_funcs = {qual}
        elif mod != "builtins" and (self.nameable(t) or ("." not in qual and qual in self.names)):
            # (a class the module imports under its own name: webcolors' PercentRGB from its
            # _types; the harness wrote the repr only where it builds the same type back there)
            ok_funcs = {qual}
        else:
            return False
        return _literal_call(node, ok_funcs, 0, leaves)

    def exception(self, types: list) -> tuple:
        for t in types:
            if self.nameable(t):
                return tuple(t)
        return ("builtins", "Exception")


def _literal_call(node, funcs: set[str], depth: int = 0, leaves: frozenset = frozenset()) -> bool:
    import ast

    if depth > 6:
        return False
    if leaves and isinstance(node, ast.Attribute) and ast.unparse(node) in leaves:
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else (
            f"{f.value.id}.{f.attr}" if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None)
        if name not in funcs:
            return False
        parts = list(node.args) + [k.value for k in node.keywords]
        return all(k.arg is not None for k in node.keywords) and all(
            _literal_call(p, funcs, depth + 1, leaves) for p in parts)
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def checks(outcome: dict, ctx: Names | None = None) -> list[Check]:
    """Everything the test written from ``outcome`` asserts, in the order it is written."""
    ctx = ctx or Names("", set())
    out: list[Check] = []
    warns = {w[0]: w for w in outcome.get("warns") or () if isinstance(w, list) and len(w) == 3}
    for i, s in enumerate(outcome["steps"]):
        if s[0] in ("ok", "raise") and i in warns:  # ``with pytest.warns(Category, match=...):`` around it
            types, msg = warns[i][1], warns[i][2]
            cat = next((tuple(t) for t in types if ctx.nameable(t)), ("builtins", "Warning"))
            out.append(Check(("warn", i), (), "warns", (cat, msg if asserts_message(["warn", ["", msg]]) else None)))
        if s[0] == "ok":
            out.append(Check(("ret", i), (), "ok"))
            out += _value_checks(("ret", i), (), s[1], 0, ctx)
            for j, after in s[3]:
                out += _value_checks(("arg", i, j), (), after, 0, ctx)
            if s[2]:
                out.append(Check(("out", i), (), "eq", s[2]))
        elif s[0] == "raise":
            exc = ctx.exception(s[1][0])
            out.append(Check(("raise", i), (), "raises", (exc, s[1][1] if asserts_message(s) else None)))
            if s[2]:
                out.append(Check(("out", i), (), "eq", s[2]))
        if s[0] in ("ok", "raise"):
            out += _file_checks(outcome, i)
    built = {}
    steps = outcome["steps"]
    for i, s in enumerate(steps):
        if s[0] == "ok" and isinstance(s[1], list) and s[1] and s[1][0] == "bound" and len(s[1]) > 1:
            built[i] = s[1][1]
    for var in sorted(outcome.get("state", {})):
        d = outcome["state"][var]
        if isinstance(d, list) and d and d[0] in ("obj", "repr"):
            state_checks = _value_checks(("var", var), (), d, 0, ctx)
            if len(steps) > 1 and built:
                # after calls on the object, assert what they changed (its initial state has a test
                # of its own: the constructor alone)
                first = next(iter(built.values()))
                changed = [c for c in state_checks if not passes(c, {"steps": [], "state": {var: first}})]
                # unless calls for their effect put it back as built (add, then remove() -> None):
                # that is what the last one did (a remove() that removes nothing fails then)
                last = steps[-1]
                undone = len(steps) > 2 and last[0] == "ok" and last[1] == ["v", None]
                state_checks = changed if changed or not undone else state_checks
            out += state_checks
    return out


def _file_changes(outcome: dict, i: int) -> list:
    """What step ``i`` did to the files of the working directory (the harness's ``files``):
    ``[[path, desc], ...]``, desc ``["file", size, contents]``, ``["dir"]``, ``["link"]``,
    ``["other"]``, ``["gone"]`` (removed) or ``["kept"]`` (a file beside a removed one, unchanged)."""
    for entry in outcome.get("files") or ():
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == i and isinstance(entry[1], list):
            return [x for x in entry[1] if isinstance(x, list) and len(x) == 2 and type(x[0]) is str]
    return []


def _file_check(i: int, path: str, d) -> Check | None:
    root = ("file", i, path)
    kind = d[0] if isinstance(d, list) and d else None
    if kind in ("gone", "kept"):
        return Check(root, (("exists",),), "is", kind == "kept")
    if kind in ("dir", "link"):
        return Check(root, (("is_dir",) if kind == "dir" else ("is_symlink",),), "is", True)
    if kind != "file" or len(d) != 3:
        return None
    data = d[2]
    if type(data) is bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and "\r" not in text:  # (read_text() reads "\r\n" as "\n")
            return Check(root, (("read_text",),), "eq", text)
        return Check(root, (("read_bytes",),), "eq", data)
    if type(d[1]) is int:  # a large file: its size
        return Check(root, (("size",),), "eq", d[1])
    return Check(root, (("is_file",),), "is", True)


def _file_checks(outcome: dict, i: int) -> list[Check]:
    """The files step ``i`` created, changed or removed (the first ``_MAX_FILES``, the nearest the
    working directory first), and one it kept beside a removed one: a small file by its contents
    (text where it is UTF-8), a large one by its size, a directory, a link, a removed file."""
    out: list[Check] = []
    kept: list[Check] = []
    for path, d in _file_changes(outcome, i):
        c = _file_check(i, path, d)
        if c is None:
            continue
        if d == ["kept"]:
            kept.append(c)
        elif len(out) < _MAX_FILES:
            out.append(c)
    return out + kept[:1]


def _file_value(d, acc: str):
    """The value a file accessor gives on a file the step left as ``d`` (None: unchanged by it)."""
    if acc == "exists":  # (asserted of files that were there before the step)
        return d != ["gone"]
    if not isinstance(d, list) or not d:
        return _MISSING
    if acc in ("is_dir", "is_symlink"):
        return d[0] == ("dir" if acc == "is_dir" else "link")
    if acc == "is_file":
        return d[0] == "file"
    if d[0] != "file" or len(d) != 3:
        return _MISSING
    if acc == "size":
        return d[1] if type(d[1]) is int else _MISSING
    if type(d[2]) is not bytes:
        return _MISSING
    if acc == "read_bytes":
        return d[2]
    try:  # as read_text() reads it: universal newlines
        return d[2].decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        return _MISSING


def _file_passes(check: Check, outcome: dict) -> bool:
    _, i, path = check.root
    d = next((x[1] for x in _file_changes(outcome, i) if x[0] == path), None)
    if not check.path:
        return False
    v = _file_value(d, check.path[0][0])
    if v is _MISSING:
        return False
    if check.op == "is":
        return v is check.value
    return type(v) is type(check.value) and v == check.value


# ----------------------------------------------------------------------------- judging a variant

_MISSING = object()


def _root(outcome: dict, root: tuple):
    steps = outcome.get("steps") or []
    kind = root[0]
    if kind == "var":
        return outcome.get("state", {}).get(root[1], _MISSING)
    i = root[1]
    if i >= len(steps):
        return _MISSING
    s = steps[i]
    if kind == "raise":
        return s
    if s[0] != "ok":
        return _MISSING
    if kind == "ret":
        return s[1]
    if kind == "out":
        return ["v", s[2]]
    if kind == "arg":
        changed = {j: d for j, d in s[3]}
        return changed.get(root[2], _MISSING)
    return _MISSING


def _walk(d, path: tuple):
    for acc in path:
        if not isinstance(d, list) or not d:
            return _MISSING
        kind = d[0]
        a = acc[0]
        if a == "attr":
            if kind != "obj" or acc[1] not in d[2]:
                return _MISSING
            d = d[2][acc[1]]
        elif a in ("len", "str", "repr", "getvalue"):
            if kind == "obj" and a in (d[3] or {}):
                d = ["v", d[3][a]]
            elif kind == "v" and a == "len":
                try:
                    d = ["v", len(d[1])]
                except TypeError:
                    return _MISSING
            elif kind == "seq" and a == "len" or kind == "iter" and a == "len" and len(d) < 3:
                d = ["v", len(d[2] if kind == "seq" else d[1])]
            elif kind == "map" and a == "len":
                d = ["v", len(d[1])]
            elif kind == "exc" and a == "str":
                d = ["v", d[2]]
            else:
                return _MISSING
        elif a == "islice":
            # the first n items: of an iterator read to its end, or of a longer one read that far
            if kind != "iter" or (len(d) > 2 and len(d[1]) < acc[1]):
                return _MISSING
            d = ["seq", "list", d[1][:acc[1]]]
            if all(isinstance(x, list) and x and x[0] == "v" for x in d[2]):
                d = ["v", [x[1] for x in d[2]]]
        elif a == "list":
            if kind == "iter" and len(d) < 3:
                d = ["seq", "list", d[1]]
                if all(isinstance(x, list) and x and x[0] == "v" for x in d[2]):
                    d = ["v", [x[1] for x in d[2]]]
            elif kind == "obj" and "items" in (d[3] or {}):
                items = d[3]["items"]
                d = ["seq", "list", items]
                if all(isinstance(x, list) and x and x[0] == "v" for x in items):
                    d = ["v", [x[1] for x in items]]
            else:
                return _MISSING
        elif a == "index":
            k = acc[1]
            if kind == "seq" and k < len(d[2]):
                d = d[2][k]
            elif kind == "v" and type(d[1]) in (list, tuple) and k < len(d[1]):
                d = ["v", d[1][k]]
            else:
                return _MISSING
        elif a == "key":
            if kind != "map":
                return _MISSING
            found = [x for key, x in d[1] if key == acc[1] and type(key) is type(acc[1])]
            if not found:
                return _MISSING
            d = found[0]
        elif a == "type":
            if kind != "exc":
                return _MISSING
            d = ["v", d[1][1]]
        else:
            return _MISSING
    return d


def _close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b
    return abs(a - b) <= max(1e-6 * abs(a), 1e-12)


def _num_close(a, b) -> bool:
    """``b == pytest.approx(a)`` for ints and floats: equal, or close as floats (an int past
    float's range is close to nothing but itself: pytest's approx fails on it)."""
    if type(b) not in (int, float):
        return False
    if a == b:
        return True
    try:
        return _close(float(a), float(b))
    except OverflowError:
        return False


def _approx_equal(expected, actual) -> bool:
    num = (int, float)
    if type(expected) in num:
        return _num_close(expected, actual)
    if type(expected) is dict:
        return (type(actual) is dict and actual.keys() == expected.keys()
                and all(_num_close(expected[k], actual[k]) for k in expected))
    return (type(actual) in (list, tuple) and len(actual) == len(expected)
            and all(_num_close(a, b) for a, b in zip(expected, actual)))


def passes(check: Check, outcome: dict) -> bool:
    """The verdict of one written assertion on a variant's outcome."""
    if check.op == "warns":
        want, msg = check.value
        return any(w[0] == check.root[1] and list(want) in [list(t) for t in w[1]] and (msg is None or msg in w[2])
                   for w in outcome.get("warns") or () if isinstance(w, list) and len(w) == 3)
    if check.root[0] == "file":
        return _file_passes(check, outcome)
    d = _root(outcome, check.root)
    if check.op == "raises":
        if d is _MISSING or d[0] != "raise":
            return False
        want, msg = check.value
        if list(want) not in d[1][0] and tuple(want) not in [tuple(t) for t in d[1][0]]:
            return False
        return msg is None or msg in d[1][1]
    if d is _MISSING:
        return False
    if check.op == "ok":
        return True
    d = _walk(d, check.path)
    if d is _MISSING or not isinstance(d, list) or not d:
        return False
    if check.op == "enum":
        return d[0] == "enum" and (tuple(d[1]), d[2]) == check.value
    if check.op == "src":
        return d[0] == "repr" and d[1] == check.value[0]
    if d[0] != "v":
        return False
    x = d[1]
    if check.op == "is":
        return x is check.value
    if check.op == "isnan":
        return type(x) is float and math.isnan(x)
    if check.op == "approx":
        return _approx_equal(check.value, x)
    try:
        return bool(check.value == x)
    except Exception:
        return False


def breaks(expected: list[Check], actual: dict | None) -> bool:
    """True when the test asserting ``expected`` fails (or errors, or hangs) on ``actual``."""
    if not isinstance(actual, dict) or "steps" not in actual:
        return True
    if any(s[0] in _BAD_STEPS for s in actual["steps"]):
        return True
    return not all(passes(c, actual) for c in expected)


def stable_pair(first: dict, second: dict, ctx: Names | None = None) -> bool:
    """Whether two runs of the same probe on the same code agree on everything a test asserts."""
    if not (usable(first) and usable(second)):
        return False
    return not breaks(checks(first, ctx), second) and not breaks(checks(second, ctx), first)


def stable_checks(cs: list[Check], first: dict, second: dict, ctx: Names | None = None) -> list[Check] | None:
    """``cs`` (the checks written from ``first``) where a second run of the probe on the same code
    agrees on everything but the contents of some files (a time stamp, a temporary name): those
    file checks left out (a file whose contents differ asserted to be there, where both runs agree
    on that); None where the runs disagree on anything else (:func:`stable_pair`)."""
    if not (usable(first) and usable(second)):
        return None
    plain = [c for c in cs if c.root[0] != "file"]
    if breaks(plain, second) or breaks([c for c in checks(second, ctx) if c.root[0] != "file"], first):
        return None
    out = list(plain)
    for c in cs:
        if c.root[0] != "file":
            continue
        if passes(c, second):
            out.append(c)
            continue
        there = Check(c.root, (("is_file",),), "is", True)
        if c.path and c.path[0][0] in ("read_text", "read_bytes", "size") and passes(there, first) and \
                passes(there, second):
            out.append(there)
    return out
