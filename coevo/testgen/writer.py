"""The pytest file: one test function per kept probe, named for what it does, importing the module
the normal way (``from mylib.stats import mean``), asserting exactly the
:class:`~coevo.testgen.observe.Check` list of the probe's outcome.

Shapes written:

* ``assert mean([1, 2, 3]) == pytest.approx(2.0)``; ``assert is_prime(7) is True``;
* ``with pytest.raises(ValueError, match='empty'):`` around a call that raises;
* ``result = f(x)`` then one assert per attribute / length / item when several facts are checked;
* ``stack = Stack()`` then its method calls, then the object's state;
* ``items = [3, 1, 2]`` / ``sort_in_place(items)`` / ``assert items == [1, 2, 3]`` for arguments
  changed in place; ``capsys.readouterr().out`` for printed output.

Names that pytest would collect (``test_*``) or that clash with the file's own names are reached
through the module instead (``from mylib import stats`` then ``stats.test_mode(...)``).
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass

from coevo.testgen.inputs import Probe, Step
from coevo.testgen.literals import imports_for, literal, pretty, str_literal, visible_source
from coevo.testgen.observe import Check

__all__ = ["TestCase", "render_file", "test_name", "clash_names"]

_WIDTH = 100
_FILE_NAMES = frozenset({"pytest", "math", "re", "datetime", "result", "capsys", "pathlib", "sys", "tmp_path",
                         "monkeypatch", "_in_a_fresh_directory"})
# names written in values (reprs, arguments) that come from the standard library
_STDLIB_NAMES = {"datetime": "import datetime", "date": "from datetime import date",
                 "Decimal": "from decimal import Decimal",
                 "Fraction": "from fractions import Fraction", "OrderedDict": "from collections import OrderedDict",
                 "deque": "from collections import deque", "Counter": "from collections import Counter",
                 "defaultdict": "from collections import defaultdict",
                 "StringIO": "from io import StringIO", "BytesIO": "from io import BytesIO"}
_REGEX_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def match_pattern(message: str) -> str:
    """The ``match=`` argument for an exception message: the message with only the regex
    metacharacters escaped, written as a raw string when it holds backslashes."""
    pat = _REGEX_SPECIAL.sub(r"\\\1", message)
    if "\\" in pat and "'" not in pat and not pat.endswith("\\") and pat.isprintable() \
            and str_literal(pat) == repr(pat):
        return "r'" + pat + "'"
    return literal(pat)


@dataclass
class TestCase:
    __test__ = False  # not a pytest test class

    probe: Probe
    outcome: dict
    checks: list[Check]
    name: str = ""
    comment: str = ""


def clash_names(names: set[str]) -> set[str]:
    """Module names that cannot be imported bare into a test file."""
    return {n for n in names if n.startswith(("test", "Test")) or n in _FILE_NAMES or keyword.iskeyword(n)
            or n.startswith("_")}


# ----------------------------------------------------------------------------- names

def _snake(s: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s)
    s = re.sub(r"\W+", "_", s).strip("_").lower()
    return re.sub(r"_+", "_", s)


def _word_for(src: str) -> str:
    try:
        v = ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        v = _NOT
    if v is _NOT:
        try:
            node = ast.parse(src, mode="eval").body
        except SyntaxError:
            return "value"
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "call"
            return _snake(name)
        if isinstance(node, ast.Attribute):
            return _snake(node.attr)
        if isinstance(node, ast.Lambda):
            return "lambda"
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            kind = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
            n = len(node.elts)
            return f"empty_{kind}" if not n else f"one_item_{kind}" if n == 1 else f"{n}_items"
        if isinstance(node, ast.Dict):
            return "dict"
        if isinstance(node, ast.Name):
            return _snake(node.id)
        return "value"
    return _value_word(v)


_NOT = object()


def _value_word(v) -> str:
    if v is None:
        return "none"
    if v is True or v is False:
        return str(v).lower()
    if type(v) is int:
        if v < 0:
            return f"minus_{-v}" if v > -1000 else "large_negative"
        return str(v) if v < 10 ** 6 else "large"
    if type(v) is float:
        if v == 0:
            return "zero_float"
        if v < 0:
            return "negative_float"
        if v != v or v in (float("inf"),):
            return "special_float"
        return "float"
    if isinstance(v, str):
        if v == "":
            return "empty_string"
        w = _snake(v)
        if w and len(w) <= 14 and re.fullmatch(r"[a-z][a-z0-9_]*", w):
            return w
        if v.strip() == "":
            return "blank_string"
        if v.isdigit() and len(v) <= 6:
            return f"text_{v}"
        if v.isdigit():
            return "digits"
        return "text"
    if isinstance(v, bytes):
        return "empty_bytes" if not v else "bytes"
    if isinstance(v, (list, tuple, set, frozenset)):
        kind = {list: "list", tuple: "tuple", set: "set", frozenset: "set"}[type(v)]
        if not v:
            return f"empty_{kind}"
        if len(v) == 1:
            return f"one_item_{kind}"
        return f"{len(v)}_items"
    if isinstance(v, dict):
        return "empty_dict" if not v else f"{len(v)}_key_dict" if len(v) <= 3 else "dict"
    return "value"


def _outcome_word(tc: TestCase) -> str:
    steps = tc.outcome["steps"]
    last = steps[-1]
    if last[0] == "raise":
        name = "exception"
        for c in tc.checks:
            if c.op == "raises" and c.root == ("raise", len(steps) - 1):
                name = c.value[0][1]
        return "raises_" + _snake(name)
    if any(s[0] == "raise" for s in steps):
        return "after_error"
    d = last[1]
    if isinstance(d, list) and d and d[0] == "v":
        v = d[1]
        if v is None:
            return "returns_none"
        if v is True or v is False:
            return f"is_{str(v).lower()}"
        if type(v) is int and -1000 < v < 10 ** 6:
            return f"returns_{v}" if v >= 0 else f"returns_minus_{-v}"
        if isinstance(v, str):
            if v == "":
                return "returns_empty_string"
            w = _snake(v)
            if w and len(w) <= 14 and re.fullmatch(r"[a-z][a-z0-9_]*", w):
                return f"returns_{w}"
        if isinstance(v, (list, tuple, dict, set)) and not v:
            return "returns_empty"
    if last[2]:
        return "prints"
    return ""


def test_name(tc: TestCase, unit_words: str) -> str:
    """``test_<unit>_<arguments>_<outcome>``, at most about 70 characters."""
    steps = tuple(s for s in tc.probe.steps if s.kind not in ("argv", "file"))
    words: list[str] = [unit_words]
    for s in tc.probe.steps:
        if s.kind == "argv":  # main() under a command line: its words
            try:
                line = [str(x) for x in ast.literal_eval(s.args[0])]
            except (ValueError, SyntaxError, TypeError):
                line = []
            words.append("argv_" + ("_".join(_snake(x) or "blank" for x in line)[:30] or "empty"))
    calls = [s for s in steps if s.bind is None]
    out = _outcome_word(tc)
    if calls and calls[0].callee == "setattr" and len(calls[0].args) == 3:  # obj.a = 5: "set_a_5"
        try:
            attr = str(ast.literal_eval(calls[0].args[1]))
        except (ValueError, SyntaxError):
            attr = "attribute"
        words.append(f"set_{_snake(attr)}_{_word_for(calls[0].args[2])}")
        words += ["then_" + s.callee.rpartition(".")[2] for s in calls[1:2]]
        if len(calls) == 1 and out == "returns_none":
            out = ""
        name = _snake("_".join(w for w in words if w))
        return "test_" + (_cut(name, 70) if not out else _cut(name, max(70 - len(out) - 1, 1)) + "_" + out)
    if len(calls) >= 2:
        names = [s.callee.rpartition(".")[2] for s in calls]
        words.append("_then_".join(dict.fromkeys(names)) if len(set(names)) > 1 else f"{names[0]}_twice")
    elif len(steps) == 1 and steps[0].kind == "attr" and "." not in steps[0].callee:
        return "test_" + _snake(steps[0].callee) + "_value"  # a module's public data
    elif len(calls) == 1 and calls[0].kind == "attr" and _op_word(calls[0].callee):
        words.append(_op_word(calls[0].callee))  # fraction + Fraction(1, 3): "plus_fraction"
    else:
        target = calls[0] if calls else steps[0]
        if calls and steps[0].bind is not None and len(steps) == 2:
            words.append(_snake(target.callee.rpartition(".")[2]))
        elif not calls and not target.args and not target.kwargs:
            words.append("initial_state")
        args = [_word_for(a) for a in target.args[:3]] + [f"{_snake(k)}_{_word_for(v)}" for k, v in target.kwargs[:2]]
        if args:
            words.append("_".join(args))
        elif target.kind == "call" and not (steps[0].bind is not None and len(steps) == 1) \
                and len(steps) == len(tc.probe.steps):  # (under a command line: its words say it)
            words.append("no_arguments")
    name = _snake("_".join(w for w in words if w))
    if out:  # the outcome is kept whole; the words before it are cut between words
        room = max(70 - len(out) - 1, len(unit_words))
        name = _cut(name, room) + "_" + out
    return "test_" + _cut(name, 70)


def _cut(name: str, n: int) -> str:
    """``name`` in at most ``n`` characters, cut after a whole word where it has to be cut."""
    if len(name) <= n:
        return name
    head = name[:n + 1]
    return (head.rsplit("_", 1)[0] if "_" in head[1:] else name[:n]).rstrip("_")


_OP_WORDS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times", ast.Div: "divided_by",
             ast.FloorDiv: "floor_divided_by", ast.Mod: "mod", ast.Pow: "power", ast.MatMult: "matmul",
             ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "shifted_left",
             ast.RShift: "shifted_right", ast.Lt: "less_than", ast.LtE: "at_most", ast.Gt: "greater_than",
             ast.GtE: "at_least", ast.Eq: "equals", ast.NotEq: "differs_from", ast.In: "in",
             ast.USub: "negated", ast.UAdd: "unary_plus", ast.Invert: "inverted"}


def _op_word(expr: str) -> str:
    """Words for an operator expression on an instance (``protocol_probes``), '' for anything
    else (a property, the module's data)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return ""
    if isinstance(node, ast.BinOp):
        left, right = _word_for(ast.unparse(node.left)), _word_for(ast.unparse(node.right))
        return f"{left}_{_OP_WORDS.get(type(node.op), 'op')}_{right}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _word_for(ast.unparse(node.left)), _word_for(ast.unparse(node.comparators[0]))
        return f"{left}_{_OP_WORDS.get(type(node.ops[0]), 'op')}_{right}"
    if isinstance(node, ast.UnaryOp):
        return _OP_WORDS.get(type(node.op), "op")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        return f"{node.func.id}_of"  # len(stack), abs(fraction), str(money)
    if isinstance(node, ast.Subscript):
        return f"item_{_word_for(ast.unparse(node.slice))}"
    return ""


def _unit_words(probe: Probe) -> str:
    first = next((s for s in probe.steps if s.kind not in ("argv", "file")), probe.steps[0])
    if first.bind is not None:
        return _snake(first.callee)
    callee = first.callee
    return _snake(callee.replace(".", "_"))


# ----------------------------------------------------------------------------- rendering

class _Ctx:
    def __init__(self, module_name: str, alias: str, clash: set[str], module_names: set[str],
                 defined: set[str] | None = None):
        self.module_name = module_name
        self.defined = module_names if defined is None else defined  # names the module itself defines
        self.alias = alias
        self.clash = clash
        self.module_names = module_names
        self.imported: set[str] = set()
        self.alias_used = False
        self.extra_imports: set[str] = set()
        self.uses_pytest = False
        self.uses_math = False
        self.bindings: dict[str, str] = {}

    def src(self, text: str) -> str:
        """``text`` with the module's names noted for import (clashing ones qualified)."""
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return text
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in self.bindings and node.id not in self.defined:
                self.extra_imports.add(self.bindings[node.id])  # as the module imports it
            elif isinstance(node, ast.Name) and node.id in _STDLIB_NAMES and node.id not in self.defined:
                self.extra_imports.add(_STDLIB_NAMES[node.id])
            elif isinstance(node, ast.Name) and node.id in self.module_names:
                if node.id in self.clash:
                    changed = True
                else:
                    self.imported.add(node.id)

        if not changed:
            return visible_source(text)
        self.alias_used = True
        tree = _Qualify(self.clash, self.alias).visit(tree)
        return visible_source(ast.unparse(tree))

    def type_name(self, t: tuple) -> str:
        mod, qual = t
        if mod == "builtins":
            return qual
        return self.src(qual)


class _Qualify(ast.NodeTransformer):
    def __init__(self, names: set[str], alias: str):
        self.names, self.alias = names, alias

    def visit_Name(self, node):
        if node.id in self.names:
            return ast.copy_location(ast.Attribute(ast.Name(self.alias, ast.Load()), node.id, node.ctx), node)
        return node


def _access(expr: str, path: tuple, ctx: _Ctx) -> str:
    for acc in path:
        a = acc[0]
        if a == "attr":
            expr = f"{expr}.{acc[1]}"
        elif a in ("len", "list", "str", "repr"):
            expr = f"{a}({expr})"
        elif a == "islice":
            ctx.extra_imports.add("import itertools")
            expr = f"list(itertools.islice({expr}, {acc[1]}))"
        elif a == "index":
            expr = f"{expr}[{acc[1]}]"
        elif a == "key":
            expr = f"{expr}[{literal(acc[1])}]"
        elif a == "type":
            expr = f"type({expr}).__name__"
        elif a == "getvalue":
            expr = f"{expr}.getvalue()"
    return expr


def _operand(expr: str) -> str:
    """``expr`` in parentheses where ``assert EXPR is True`` / ``== value`` would read otherwise:
    a comparison (``a != 2 is True`` is the chain ``a != 2 and 2 is True``), ``not``, ``and`` /
    ``or``, a conditional expression."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return expr
    if isinstance(node, (ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) or \
            (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return f"({expr})"
    return expr


def _assert_line(expr: str, c: Check, ctx: _Ctx, indent: int) -> str:
    if c.op != "isnan":
        expr = _operand(expr)
    if c.op == "is":
        return f"assert {expr} is {c.value!r}"
    if c.op == "isnan":
        ctx.uses_math = True
        return f"assert math.isnan({expr})"
    if c.op == "enum":
        (t, member) = c.value
        return f"assert {expr} is {ctx.type_name(tuple(t))}.{member}"
    if c.op == "src":
        head = f"assert {expr} == "
        text = _datetime_names(c.value[0], ctx) if c.value[1][0] == "datetime" else c.value[0]
        return head + pretty(ctx.src(text), 0, _WIDTH - indent, column=len(head))
    head = f"assert {expr} == "
    for imp in imports_for(c.value):
        ctx.extra_imports.add(imp)
    lit = literal(c.value)
    # continuation lines are indented from the statement (its own indentation is added later)
    if c.op == "approx":
        ctx.uses_pytest = True
        lit = pretty(lit, 0, _WIDTH - indent, column=len(head) + len("pytest.approx("))
        return f"{head}pytest.approx({lit})"
    return head + pretty(lit, 0, _WIDTH - indent, column=len(head))


def _file_assert(c: Check, ctx: _Ctx, indent: int) -> str:
    """``assert pathlib.Path('out.json').read_text() == '...'``, ``assert not
    pathlib.Path('d/b.txt').exists()``, ``assert pathlib.Path('dst').is_dir()``..."""
    ctx.extra_imports.add("import pathlib")
    path = f"pathlib.Path({c.root[2]!r})"
    acc = c.path[0][0] if c.path else "exists"
    if c.op == "is":
        return f"assert {'' if c.value else 'not '}{path}.{acc}()"
    if acc == "size":
        expr = f"{path}.stat().st_size"
    elif acc == "read_text" and type(c.value) is str and not c.value.isascii():
        expr = f"{path}.read_text(encoding='utf-8')"  # (not the locale's encoding)
    else:
        expr = f"{path}.{acc}()"
    return _assert_line(expr, c, ctx, indent)


_DATETIME_TYPES = ("date", "datetime", "time", "timedelta", "timezone")


def _datetime_names(text: str, ctx: _Ctx) -> str:
    """A datetime value's repr (``datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)``)
    written with the names the module imports them as where it binds ``datetime`` to the class
    (``from datetime import datetime, timezone``: ``datetime(2020, 1, 2, tzinfo=timezone.utc)``);
    a type it does not import is imported from datetime by the test."""
    binding = ctx.bindings.get("datetime")
    if binding is None or binding == "import datetime":
        return text
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "datetime"}
    for name in used:
        if name not in _DATETIME_TYPES:
            return text
        bound = ctx.bindings.get(name)
        if bound is not None and bound != f"from datetime import {name}":
            return text  # (imported as another name: left as it was)
        if bound is None and name in ctx.module_names:
            return text  # the module's own name for something else

    class Short(ast.NodeTransformer):
        def visit_Attribute(self, node):
            if isinstance(node.value, ast.Name) and node.value.id == "datetime":
                return ast.copy_location(ast.Name(node.attr, ast.Load()), node)
            return self.generic_visit(node)

    for name in used:
        if name not in ctx.bindings:
            ctx.extra_imports.add(f"from datetime import {name}")
    return ast.unparse(Short().visit(tree))


def _call_src(step: Step, ctx: _Ctx, arg_vars: dict[int, str], column: int = 0, width: int = _WIDTH,
              awaited: bool = False) -> str:
    """The call's source; where, starting at ``column``, it would pass ``width`` columns, one
    argument per line (each wrapped in turn), indented from the call's own line. ``awaited``: a
    coroutine function's call, run as ``asyncio.run(f(x))``."""
    if awaited:
        ctx.extra_imports.add("import asyncio")
        return "asyncio.run(" + _call_src(step, ctx, arg_vars, column + 12, width) + ")"
    if step.kind == "attr":
        return ctx.src(step.callee)
    if step.callee == "setattr" and len(step.args) == 3 and not step.kwargs and not arg_vars:
        try:
            attr = ast.literal_eval(step.args[1])
        except (ValueError, SyntaxError):
            attr = None
        if isinstance(attr, str) and attr.isidentifier() and not keyword.iskeyword(attr):
            return f"{ctx.src(step.args[0])}.{attr} = {ctx.src(step.args[2])}"  # an attribute set
    pos = [arg_vars.get(j) or ctx.src(a) for j, a in enumerate(step.args)]
    kws = [(k, ctx.src(v)) for k, v in step.kwargs]
    head = f"{ctx.src(step.callee)}("
    flat = head + ", ".join(pos + [f"{k}={v}" for k, v in kws]) + ")"
    if column + len(flat) <= width or not (pos or kws):
        return flat
    parts = [pretty(a, 4, width, column=4) for a in pos]
    parts += [f"{k}=" + pretty(v, 4, width, column=5 + len(k)) for k, v in kws]
    return head + "\n" + "".join(f"    {p},\n" for p in parts) + ")"


def _indented(text: str, n: int) -> str:
    return "\n".join((" " * n + ln) if ln else "" for ln in text.split("\n"))


def _param_names(step: Step, units: dict) -> list[str]:
    unit = units.get(step.unit) if step.unit else None
    if unit is None:
        return []
    return [p.name for p in unit.params if p.kind in ("pos", "posonly")]


def render_test(tc: TestCase, ctx: _Ctx, units: dict) -> str:
    """The source of one test function."""
    body: list[str] = []
    ind = 4
    steps = tc.probe.steps
    by_root: dict[tuple, list[Check]] = {}
    for c in tc.checks:
        by_root.setdefault(c.root, []).append(c)
    uses_capsys = any(c.root[0] == "out" for c in tc.checks)
    uses_argv = any(s.kind == "argv" for s in steps)
    taken = {s.bind for s in steps if s.bind} | ctx.module_names | {"pytest", "math"}
    n_results = 0
    made: set[str] = set()  # the directories the test made
    for i, step in enumerate(steps):
        if step.kind == "argv":  # the command line the calls below see
            try:
                line = [argv0(ctx.module_name)] + list(ast.literal_eval(step.args[0]))
            except (ValueError, SyntaxError, TypeError):
                line = None
            head = "monkeypatch.setattr('sys.argv', "
            src = pretty(literal(line), 0, _WIDTH - ind, column=len(head)) if line is not None else step.args[0]
            body.append(f"{head}{src})")
            continue
        if step.kind == "file":  # a file the calls below read, where the test runs (its tmp_path)
            ctx.extra_imports.add("import pathlib")
            parent = step.callee.rpartition("/")[0]
            if parent and parent not in made:  # (a file in a directory: a directory parameter's tree)
                made.add(parent)
                body.append(f"pathlib.Path({parent!r}).mkdir(parents=True, exist_ok=True)")
            head = step.source()[:len(step.source()) - len(step.args[0]) - 1]  # pathlib.Path('f').write_text(
            body.append(head + pretty(ctx.src(step.args[0]), 0, _WIDTH - ind, column=len(head)) + ")")
            continue
        # arguments changed in place get a variable first
        arg_vars: dict[int, str] = {}
        params = _param_names(step, units)
        for c in tc.checks:
            if c.root[0] == "arg" and c.root[1] == i and c.root[2] not in arg_vars and c.root[2] < len(step.args):
                j = c.root[2]
                base = params[j] if j < len(params) and params[j].isidentifier() else f"arg{j + 1}"
                name = base
                k = 2
                while name in taken or keyword.iskeyword(name):
                    name = f"{base}_{k}"
                    k += 1
                taken.add(name)
                arg_vars[j] = name
                head = f"{name} = "
                body.append(head + pretty(ctx.src(step.args[j]), 0, _WIDTH - ind, column=len(head)))
        warn_checks = by_root.get(("warn", i), [])
        sind = ind + 4 if warn_checks else ind  # the step's lines go in a ``with pytest.warns(...):``
        first_line = len(body)
        width = _WIDTH - sind

        awaited = i in (tc.outcome.get("awaited") or ())

        def call_at(column: int, step=step, arg_vars=arg_vars, width=width, awaited=awaited) -> str:
            return _call_src(step, ctx, arg_vars, column, width, awaited)

        raise_checks = by_root.get(("raise", i), [])
        if raise_checks:
            t, msg = raise_checks[0].value
            ctx.uses_pytest = True
            tname = ctx.type_name(tuple(t))
            match = f", match={match_pattern(msg)}" if msg is not None else ""
            head = f"with pytest.raises({tname}{match}):"
            if len(head) > width:  # the type and the pattern on lines of their own
                pat = "" if msg is None else "    match=" + pretty(match_pattern(msg), 4, width, column=10) + ",\n"
                head = f"with pytest.raises(\n    {tname},\n{pat}):"
            body.append(head)
            read = len(tc.outcome["steps"][i]) > 3 and tc.outcome["steps"][i][3] == "read"
            # what raised reading the returned generator: the test reads it too
            body.append(_indented(f"list({call_at(9)})" if read else call_at(4), 4))
        else:
            value_checks = [c for c in by_root.get(("ret", i), []) if c.op != "ok"]
            call = call_at(len("assert "))
            if step.bind and (i + 1 < len(steps) or any(c.root == ("var", step.bind) for c in tc.checks)):
                body.append(f"{step.bind} = {call_at(len(step.bind) + 3)}")
            elif not value_checks:
                body.append(call_at(0))
            elif len(value_checks) == 1 and not value_checks[0].path and "\n" not in call and \
                    sind + len(_assert_line(call, value_checks[0], ctx, sind).split("\n")[0]) <= _WIDTH:
                body.append(_assert_line(call, value_checks[0], ctx, sind))
            elif len(value_checks) == 1 and len(value_checks[0].path) == 1 and "\n" not in call and \
                    value_checks[0].path[0][0] in ("list", "len", "str", "islice"):
                body.append(_assert_line(_access(call, value_checks[0].path, ctx), value_checks[0], ctx, sind))
            else:  # several facts, or a call too long to assert on one line: its result first
                n_results += 1
                var = "result" if n_results == 1 else f"result_{n_results}"
                while var in taken:
                    var += "_"
                taken.add(var)
                reads = {c.path[0] for c in value_checks if c.path and c.path[0][0] in ("list", "islice")}
                # a returned iterator (a generator): read once into the result, not once per fact
                # (a second list() of it reads nothing, a second islice the next items)
                once = tuple(reads) if len(reads) == 1 and all(c.path and c.path[0] in reads for c in value_checks) \
                    else ()
                body.append(f"{var} = {_access(call_at(len(var) + 3), once, ctx)}")
                for c in value_checks:
                    body.append(_assert_line(_access(var, c.path[len(once):], ctx), c, ctx, sind))
            for j, name in arg_vars.items():
                for c in by_root.get(("arg", i, j), []):
                    body.append(_assert_line(_access(name, c.path, ctx), c, ctx, sind))
        for c in by_root.get(("out", i), []):
            body.append(_assert_line("capsys.readouterr().out", c, ctx, sind))
        for c in tc.checks:  # what the call did to the files where the test runs
            if c.root[0] == "file" and c.root[1] == i:
                body.append(_file_assert(c, ctx, sind))
        if warn_checks:
            t, msg = warn_checks[0].value
            ctx.uses_pytest = True
            tname = ctx.type_name(tuple(t))
            head = f"with pytest.warns({tname}{f', match={match_pattern(msg)}' if msg is not None else ''}):"
            if len(head) > _WIDTH - ind:  # the type and the pattern on lines of their own
                pat = "" if msg is None else \
                    "    match=" + pretty(match_pattern(msg), 4, _WIDTH - ind, column=10) + ",\n"
                head = f"with pytest.warns(\n    {tname},\n{pat}):"
            inner = body[first_line:]
            body[first_line:] = [head] + [_indented(b, 4) for b in inner]
    for c in tc.checks:
        if c.root[0] == "var":
            body.append(_assert_line(_access(c.root[1], c.path, ctx), c, ctx, ind))
    lines = []
    if tc.comment:
        lines.append(f"# {tc.comment}")
    fixtures = ", ".join(f for f, used in (("capsys", uses_capsys), ("monkeypatch", uses_argv)) if used)
    lines.append(f"def {tc.name}({fixtures}):")
    for b in body:
        lines += [(" " * ind + ln) if ln else "" for ln in b.split("\n")]
    return "\n".join(lines) + "\n"


# Every test runs in an empty directory of its own, as the code ran when its behaviour was
# observed (a sandboxed cell): a function that reads or writes a relative path (a default
# "notes.json") neither sees the user's files nor overwrites them, wherever pytest is started;
# and with the command line the code saw then (``sys.argv``: pytest's own otherwise, which
# differs between ``pytest -q`` and ``python -m pytest tests/x.py``).
#
# And what a test changes in the state the code keeps in its modules (a global rebound, a
# module-level list, dict or set, an object's attributes, a thread-local, a class attribute) is
# put back after it: the behaviour was observed on a freshly imported module, and the project's
# other tests (another module's generated suite, the user's own) must not see what one changed
# (``activate('lv')`` left a translation active for every test that ran after it).
FRESH_DIRECTORY = '''

@pytest.fixture(autouse=True)
def _in_a_fresh_directory(tmp_path, monkeypatch):
    """Each test runs in an empty directory of its own: the code's relative paths land there;
    sys.argv is what it was when the behaviour was observed, not pytest's command line; what
    the test changes in the state of the code's modules is put back after it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [ARGV0])
    saved = _module_state(CODE)
    yield
    _put_back(saved)


def _module_state(top_name):
    """The globals of the code's modules (and of their classes), with a copy of what can change
    in place: their lists, dicts and sets, and the attributes of their objects."""
    import os
    import sys
    import types

    def contents(v):
        if isinstance(v, (list, dict, set, bytearray)) or type(v).__name__ == "deque":
            return v.copy() if len(v) <= 10000 else None
        if isinstance(v, (type, types.ModuleType)) or callable(v):
            return None
        d = getattr(v, "__dict__", None)
        return dict(d) if type(d) is dict else None

    top = sys.modules.get(top_name)
    dirs = tuple(os.path.join(p, "") for p in getattr(top, "__path__", None) or [])
    saved = []
    for mod in list(sys.modules.values()):
        if mod is top or (dirs and str(getattr(mod, "__file__", None) or "").startswith(dirs)):
            owners = [mod] + [c for c in vars(mod).values()
                              if isinstance(c, type) and c.__module__ == mod.__name__]
            for owner in owners:
                names = {k: v for k, v in vars(owner).items() if not k.startswith("__")}
                copies = [(v, c) for v in names.values() if (c := contents(v)) is not None]
                saved.append((owner, names, copies))
    return saved


def _put_back(saved):
    for owner, names, copies in saved:
        for k, v in names.items():
            if vars(owner).get(k, names) is not v:
                try:
                    setattr(owner, k, v)
                except (AttributeError, TypeError):
                    pass
        for v, c in copies:
            try:
                if isinstance(v, (list, bytearray)):
                    v[:] = c
                elif isinstance(v, (dict, set)) or type(v).__name__ == "deque":
                    v.clear()
                    (v.extend if type(v).__name__ == "deque" else v.update)(c)
                else:
                    v.__dict__.clear()
                    v.__dict__.update(c)
            except Exception:
                pass
'''


def argv0(module_name: str) -> str:
    """``sys.argv[0]`` while the module's behaviour is observed and in its written suite."""
    return module_name.rpartition(".")[2] + ".py"


_BOUND_MODULES = ("datetime", "decimal", "fractions", "collections")


def import_bindings(tree: ast.Module) -> dict[str, str]:
    """``{name: import line}`` for the names the module binds from the standard library modules
    whose values calls and reprs write (``from datetime import datetime``: a test writing
    ``datetime(2024, 2, 29)`` imports it so, not ``import datetime``)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in _BOUND_MODULES:
                    out[a.asname or a.name] = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in _BOUND_MODULES:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"from {node.module} import {a.name}" + \
                        (f" as {a.asname}" if a.asname else "")
    return out


def render_file(module_name: str, module_names: set[str], cases: list[TestCase], units: dict,
                header: str, defined: set[str] | None = None, bindings: dict[str, str] | None = None) -> str:
    """The whole test module: docstring, imports, tests (names made unique). ``module_names``:
    every name the module has at its top level; ``defined``: those it defines itself (the rest,
    e.g. ``OrderedDict``, are imported from where they come from: ``bindings``, the module's own
    import lines, :func:`import_bindings`)."""
    clash = clash_names(module_names)
    parent, _, leaf = module_name.rpartition(".")
    alias = leaf if leaf not in module_names and leaf.isidentifier() and not keyword.iskeyword(leaf) \
        and leaf not in _FILE_NAMES else "module_under_test"
    ctx = _Ctx(module_name, alias, clash, module_names, defined)
    ctx.bindings = dict(bindings or {})
    used: dict[str, int] = {}
    tests = []
    for tc in cases:
        base = tc.name or test_name(tc, _unit_words(tc.probe))
        n = used.get(base, 0) + 1
        used[base] = n
        tc.name = base if n == 1 else f"{base}_{n}"
        tests.append(render_test(tc, ctx, units))
    imports = ["import math"] if ctx.uses_math else []
    imports += sorted(i for i in ctx.extra_imports if i.startswith("import "))
    imports += sorted(i for i in ctx.extra_imports if i.startswith("from "))
    third = ["import pytest"]  # the fixture below, at least
    own = []
    if ctx.imported:  # isort's order by type: CONSTANTS, Classes, functions
        names = sorted(ctx.imported, key=lambda s: (0 if s.isupper() else 1 if s[:1].isupper() else 2, s))
        line = f"from {module_name} import {', '.join(names)}"
        if len(line) > _WIDTH:
            line = f"from {module_name} import (\n" + "".join(f"    {n},\n" for n in names) + ")"
        own.append(line)
    if ctx.alias_used:
        line = (f"from {parent} import {leaf}" if parent else f"import {leaf}") + \
            ("" if alias == leaf else f" as {alias}")
        own.insert(0 if line.startswith("import ") else len(own), line)
    blocks = [b for b in (imports, third, own) if b]
    out = [f'"""{header.strip()}\n"""', ""]
    for b in blocks:
        out.append("\n".join(b))
        out.append("")
    text = "\n".join(out).rstrip("\n") + "\n" + FRESH_DIRECTORY.replace("ARGV0", repr(argv0(module_name))) \
        .replace("(CODE)", f"({module_name.split('.')[0]!r})")
    for t in tests:
        text += "\n\n" + t
    return text


def unique_names(names: list[str]) -> list[str]:
    """``names`` with repeats numbered (``test_x``, ``test_x_2``...)."""
    used: dict[str, int] = {}
    out = []
    for n in names:
        k = used.get(n, 0) + 1
        used[n] = k
        cand = n if k == 1 else f"{n}_{k}"
        while cand in used and k > 1:
            k += 1
            cand = f"{n}_{k}"
        used.setdefault(cand, 1)
        out.append(cand)
    return out
