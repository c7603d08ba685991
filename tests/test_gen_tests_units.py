"""coevo.testgen's pure parts on hand-worked examples: module analysis, specs, literals, what a
test asserts (observe), the greedy suite, mutants, the writer."""

import ast
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coevo.testgen import observe
from coevo.testgen.choose import Candidate, greedy_suite
from coevo.testgen.inputs import InputGenerator, Probe, Step
from coevo.testgen.literals import literal, pretty
from coevo.testgen.mutants import module_mutants
from coevo.testgen.specs import from_annotation, infer_param
from coevo.testgen.target import analyze, resolve
from coevo.testgen.writer import TestCase, match_pattern, render_file
from matrix.errors import InputError
from matrix.mutation import mutants as base_mutants

FIX = __import__("pathlib").Path(__file__).parent / "fixtures" / "gentests"


# ----------------------------------------------------------------------------- target

def test_resolve_file_package_and_names():
    (m,) = resolve(str(FIX / "bank_account.py"))
    assert m.name == "bank_account" and m.root == FIX.resolve()
    assert [c.name for c in m.classes] == ["Account", "Stack"]  # a bare exception class is tested where raised
    acc = m.class_named("Account")
    assert [u.name for u in acc.methods] == ["deposit", "withdraw", "transfer_to", "transactions"]
    assert acc.methods[-1].kind == "property" and [p.name for p in acc.init.params] == ["owner", "balance"]
    assert acc.attributes == ["owner", "balance", "history"]
    (g,) = resolve(str(FIX / "shapes" / "geometry.py"))
    assert g.name == "shapes.geometry" and g.root == FIX.resolve()
    point = g.class_named("Point")
    assert point.style == "dataclass" and [p.name for p in point.init.params] == ["x", "y"]
    pkg = resolve(str(FIX / "shapes"))
    assert sorted(m.name for m in pkg) == ["shapes.geometry", "shapes.units"]
    (one,) = resolve(str(FIX / "bank_account.py") + "::Account.withdraw")
    assert one.selected == "Account.withdraw" and [u.qualname for u in one.units] == ["Account", "Account.withdraw"]
    assert min(one.target_lines()) > 1 and len(one.target_lines()) < 12


@pytest.mark.parametrize("text, spec, message", [
    ("def f(:\n", "bad.py", "bad.py:1: does not parse"),
    ("X = 1\n", "consts.py", "nothing testable"),
    ("def f(x):\n    return x\n", "ok.py::g", "defines no function or class named 'g'"),
    ("class A:\n    def m(self):\n        return 1\n", "ok2.py::A.z", "class 'A' defines no method named 'z'"),
])
def test_resolve_bad_input_is_one_clear_error(tmp_path, text, spec, message):
    name = spec.split("::")[0]
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as exc:
        resolve(str(tmp_path / spec))
    assert message in str(exc.value).replace(str(tmp_path) + "/", "")

def test_resolve_missing_and_non_python_paths(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        resolve(str(tmp_path / "missing.py"))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="not a Python source file"):
        resolve(str(tmp_path / "notes.txt"))
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(InputError, match="no Python modules"):
        resolve(str(tmp_path / "empty_dir"))


def test_units_skip_stubs_and_private_helpers_unless_nothing_else(tmp_path):
    src = ("from typing import overload\n"
           "def pub(x):\n    return _helper(x)\n"
           "def _helper(x):\n    return x + 1\n"
           "@overload\ndef pub2(x: int) -> int: ...\n"
           "def stub():\n    raise NotImplementedError\n")
    (tmp_path / "a_mod.py").write_text(src)
    assert [u.name for u in analyze(tmp_path / "a_mod.py").functions] == ["pub"]
    (tmp_path / "b_mod.py").write_text("def _only(x):\n    return x\n")
    assert [u.name for u in analyze(tmp_path / "b_mod.py").functions] == ["_only"]


# ----------------------------------------------------------------------------- specs

def _ann(text):
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize("ann, want", [
    ("int", "int"), ("list[int]", "list[int]"), ("Optional[str]", "optional[str]"),
    ("dict[str, float]", "dict[str, float]"), ("tuple[int, ...]", "tuple[int, Ellipsis]"),
    ("int | None", "optional[int]"), ("'Point'", "instance['Point']"), ("Literal['a', 'b']", "literal['a', 'b']"),
    ("Sequence[str]", "list[str]"), ("Union[int, str]", "union[int, str]"), ("Color", "enum['Color']"),
])
def test_specs_from_annotations(ann, want):
    assert repr(from_annotation(_ann(ann), {"Point": "plain", "Color": "enum"})) == want


def _param_spec(src):
    fn = ast.parse(src).body[0]
    from coevo.testgen.target import _params

    return [repr(infer_param(p, fn.body, {})) for p in _params(fn.args, drop_first=False)]


def test_specs_from_usage_defaults_and_names():
    assert _param_spec("def f(s, n, xs, d, flag=False, sep=','):\n"
                       "    s.strip(); range(n)\n    for x in xs: total += x\n    d['key']\n") == \
        ["str", "int", "list[float]", "dict[literal['key'], int]", "bool", "str"]
    assert _param_spec("def f(words, price):\n    pass\n") == ["list[str]", "float"]
    assert _param_spec("def f(name):\n    if not isinstance(name, str):\n        raise TypeError\n") == \
        ["checked[str]"]
    assert _param_spec("def f(x=None):\n    return x + 1\n") == ["optional[int]"]


def test_specs_read_characters_compared_with_text():
    # fnmatch.translate: indexed, sliced and len()-ed like a list, but its items are compared with
    # one-character strings (directly or through a name): a pattern string, not a list of ints
    src = ("def translate(pat):\n    i, n = 0, len(pat)\n    while i < n:\n        c = pat[i]\n"
           "        i = i + 1\n        if c == '*':\n            pass\n        elif pat[i] == '!':\n"
           "            stuff = pat[i:n]\n")
    assert _param_spec(src) == ["str"]
    assert _param_spec("def f(xs):\n    return xs[0] + xs[1] * 2\n") == ["list[int]"]
    # only through a name compared with several literals: still text
    assert _param_spec("def f(p):\n    n = len(p)\n    c = p[0]\n    return n and (c == '*' or c == '?')\n") == \
        ["str"]
    # a string repeated n times: n is a count (calendar.formatstring's `spacing *= ' '`)
    assert _param_spec("def f(spacing, n):\n    spacing *= ' '\n    return spacing + '-' * n\n") == ["int", "int"]
    # membership of an item in a tuple is not a comparison with one string
    assert _param_spec("def f(xs):\n    for x in xs:\n        pass\n    return xs[0] in ('a', 'b')\n")[0] \
        .startswith("list[")


def test_specs_follow_a_parameter_handed_on_and_skip_dunder_constants(tmp_path):
    (tmp_path / "globs.py").write_text(
        "__all__ = ['match', 'outer']\n__version__ = '9.9'\nLIMIT = 7\n\n"
        "def match(name, pat):\n    return _compiled(pat).fullmatch(name) is not None\n\n"
        "def outer(name, pat):\n    return match(name, pat=pat)\n\n"
        "def _compiled(pat):\n    if isinstance(pat, bytes):\n        pat = pat.decode()\n"
        "    return _translate(pat)\n\n"
        "def _translate(pat):\n    out = ''\n    for i in range(len(pat)):\n        c = pat[i]\n"
        "        out += '.*' if c == '*' else c\n    return out\n\n"
        "if __name__ == '__main__':\n    print(outer('a', 'b'))\n")
    m = analyze(tmp_path / "globs.py")
    assert m.constants == [7]  # __all__'s names, __version__ and '__main__' are not values the code works on
    gen = InputGenerator(m)
    by = {u.name: u for u in m.units}
    for name in ("match", "outer"):  # pat reaches _compiled (checks bytes) and then _translate (text)
        spec = dict((p.name, s) for p, s in gen.specs(by[name]))["pat"]
        assert repr(spec) == "checked[bytes]", (name, spec)
        pool = gen.pool(spec, gen._consts(by[name]))
        assert "'*'" in pool and any(s.startswith("b") for s in pool)  # text patterns too


def test_a_value_class_takes_its_arguments_through_new_and_private_options_stay_default(tmp_path):
    (tmp_path / "money.py").write_text(
        "class Money:\n"
        "    def __new__(cls, amount=0, currency='EUR', *, _checked=False):\n"
        "        self = super().__new__(cls)\n"
        "        if not _checked and amount < 0:\n            raise ValueError('negative')\n"
        "        self.amount, self.currency = amount, currency\n        return self\n\n"
        "    def doubled(self):\n        return Money(2 * self.amount, self.currency, _checked=True)\n\n"
        "def total(values, _cache=None):\n    return sum(values)\n")
    m = analyze(tmp_path / "money.py")
    cls = m.class_named("Money")
    # no __init__: the constructor's parameters are __new__'s (without cls), as for fractions.Fraction
    assert [p.name for p in cls.init.params] == ["amount", "currency", "_checked"]
    gen = InputGenerator(m, seed=1)
    probes = [p for u in m.units for p in gen.initial(u)] + gen.hypothesis(m.units)
    calls = [s.source() for p in probes for s in p.steps]
    assert any(c.startswith("Money(") and c != "Money()" for c in calls)  # amounts and currencies are tried
    assert not any("_checked" in c or "_cache" in c for c in calls)  # private options keep their defaults


def test_a_class_s_operators_and_protocols_are_called(tmp_path):
    (tmp_path / "vec.py").write_text(
        "class Vec:\n"
        "    def __init__(self, x=0, y=0):\n        self.x, self.y = x, y\n\n"
        "    def __add__(self, other):\n        return Vec(self.x + other.x, self.y + other.y)\n\n"
        "    def __mul__(self, k: int):\n        return Vec(self.x * k, self.y * k)\n\n"
        "    __rmul__ = __mul__\n\n"
        "    def __neg__(self):\n        return Vec(-self.x, -self.y)\n\n"
        "    def __len__(self):\n        return 2\n\n"
        "    def __getitem__(self, i):\n        return (self.x, self.y)[i]\n\n"
        "    def __hash__(self):\n        return hash((self.x, self.y))\n")
    m = analyze(tmp_path / "vec.py")
    assert {"__add__", "__mul__", "__rmul__", "__neg__", "__len__", "__getitem__"} <= set(m.class_named("Vec").dunders)
    probes = InputGenerator(m, seed=0).protocol_probes("Vec")
    exprs = [p.steps[-1].source() for p in probes]
    assert all(p.steps[0].callee == "Vec" and p.steps[0].bind == "vec" and p.unit == "Vec" for p in probes)
    assert any(e.startswith("vec + Vec(") for e in exprs)  # another instance as the operand
    assert any(e.startswith("vec * ") and "Vec(" not in e for e in exprs)  # the annotated int
    assert any(e.endswith(" * vec") for e in exprs)  # reflected
    assert "-vec" in exprs and "len(vec)" in exprs and "vec[0]" in exprs and "vec[-1]" in exprs
    assert not any("hash" in e for e in exprs)  # string hashes change between runs
    for e in exprs:
        ast.parse(e, mode="eval")
    # an operand's own braces stay (an empty dict from a pool is not a placeholder)
    (tmp_path / "bag.py").write_text(
        "class Bag:\n    def __init__(self, items=None):\n        self.items = dict(items or {})\n\n"
        "    def __or__(self, other: dict):\n        return Bag({**self.items, **other})\n")
    bag = InputGenerator(analyze(tmp_path / "bag.py"), seed=0).protocol_probes("Bag")
    ors = [p.steps[-1].source() for p in bag]
    assert "bag | {}" in ors and all(e.startswith("bag | ") for e in ors)
    # the test names say what is called
    from coevo.testgen.writer import _op_word
    assert _op_word("vec + Vec(x=1)") == "vec_plus_vec" and _op_word("2 * vec") == "2_times_vec"
    assert _op_word("-vec") == "negated" and _op_word("len(vec)") == "len_of" and _op_word("vec[-1]") == "item_minus_1"
    assert _op_word("vec.x") == ""


def test_pools_use_constants_regexes_and_types():
    m = analyze(FIX / "validation.py")
    gen = InputGenerator(m)
    dur = next(u for u in m.units if u.name == "parse_duration")
    pool = gen.pool(gen.specs(dur)[0][1], gen._consts(dur))
    assert any(ast.literal_eval(s) in ("0h", "0m") for s in pool)  # drawn from the module's regex
    port = next(u for u in m.units if u.name == "parse_port")
    pool = gen.pool(gen.specs(port)[0][1], gen._consts(port))
    assert "'65535'" in pool and "'65536'" in pool and "' 1 '" in pool
    assert not any("out of range" in s for s in pool)  # messages are not inputs
    user = next(u for u in m.units if u.name == "validate_username")
    assert "42" in gen.pool(gen.specs(user)[0][1], gen._consts(user))  # it checks the type itself


def test_regex_draws_write_nothing_in_the_current_directory(tmp_path):
    # hypothesis keeps its caches under ./.hypothesis unless told otherwise: gen-tests writes
    # nothing outside --out (red-team pass 12, F8); a fresh process, as hypothesis caches per process
    import subprocess
    import sys
    code = "from coevo.testgen.inputs import _regex_examples; print(_regex_examples([r'[a-z]+[0-9]'], 1))"
    root = str(FIX.parent.parent.parent)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={**__import__("os").environ, "PYTHONPATH": root}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "0" in out.stdout and list(tmp_path.iterdir()) == []


def test_docstring_probes_and_mutation_stay_valid_python():
    m = analyze(FIX / "planted_bug.py")
    gen = InputGenerator(m, seed=3)
    doc = gen.docstring_probes()
    assert [p.source() for p in doc][:2] == ["median([3, 1, 2])", "median([4, 1, 3, 2])"]
    for p in doc + [gen.mutate(p) for p in doc]:
        for step in p.steps:
            compile(step.source(), "<probe>", "eval")


# ----------------------------------------------------------------------------- literals

plain = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
                     | st.binary(max_size=4),
                     lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3)
                     | st.frozensets(st.integers(), max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None, database=None)
@given(plain)
def test_literal_round_trips(v):
    assert eval(literal(v), {}) == v  # noqa: S307 - our own text


def test_literal_forms():
    assert literal(set()) == "set()" and literal({3, 1, 22}) == "{1, 3, 22}" and literal((1,)) == "(1,)"
    assert literal(float("inf")) == "float('inf')" and literal(frozenset()) == "frozenset()"
    assert math.isnan(eval(literal(float("nan"))))
    text = pretty(literal(list(range(40))), 4, 60)
    assert "\n" in text and eval(text) == list(range(40))
    assert match_pattern("lo > hi") == "'lo > hi'" and match_pattern("f(x) [1]") == r"r'f\(x\) \[1\]'"
    big = 3 ** 20000  # 9,543 decimal digits: a decimal literal past Python's limit does not compile
    assert literal(big).startswith("0x") and literal(-big).startswith("-0x")
    assert eval(compile(literal(-big), "<t>", "eval")) == -big


# ----------------------------------------------------------------------------- observe

def ok(desc, out="", changed=()):
    return ["ok", desc, out, [list(c) for c in changed]]


def raised(types, msg, line=3):
    return ["raise", [[list(t) for t in types], msg, line], ""]


VE = [("builtins", "ValueError"), ("builtins", "Exception"), ("builtins", "BaseException"), ("builtins", "object")]


def test_checks_and_kills_follow_the_written_asserts():
    o = {"steps": [ok(["v", 2.0])], "state": {}}
    cs = observe.checks(o)
    assert [(c.op, c.value) for c in cs] == [("ok", None), ("approx", 2.0)]
    assert not observe.breaks(cs, {"steps": [ok(["v", 2.0000000001])]})  # within pytest.approx
    assert observe.breaks(cs, {"steps": [ok(["v", 2.1])]})
    assert observe.breaks(cs, {"steps": [raised(VE, "x")]})
    assert observe.breaks(cs, {"crash": "timeout"})
    b = observe.checks({"steps": [ok(["v", True])]})
    assert observe.breaks(b, {"steps": [ok(["v", 1])]})  # `is True` rejects 1
    e = observe.checks({"steps": [raised(VE, "bad value")]})
    sub = [("mod", "MyError")] + VE
    assert not observe.breaks(e, {"steps": [raised(sub, "a bad value here")]})  # subclass, message found
    assert observe.breaks(e, {"steps": [raised(VE, "other")]})
    assert observe.breaks(e, {"steps": [ok(["v", 1])]})


def test_checks_for_objects_arguments_and_output():
    obj = ["obj", ["m", "Stack"], {"capacity": ["v", 3]}, {"len": 2}]
    o = {"steps": [ok(["bound"]), ok(["v", None], "pushed\n", [(0, ["v", [1, 2]])])], "state": {"stack": obj}}
    cs = observe.checks(o)
    roots = [(c.root, c.path, c.op) for c in cs if c.op != "ok"]
    assert ((("ret", 1), (), "is")) in roots and (("out", 1), (), "eq") in roots
    assert (("arg", 1, 0), (), "eq") in roots and (("var", "stack"), (("attr", "capacity"),), "eq") in roots
    assert (("var", "stack"), (("len",),), "eq") in roots
    other = {"steps": [ok(["bound"]), ok(["v", None], "pushed\n", [(0, ["v", [1, 2]])])],
             "state": {"stack": ["obj", ["m", "Stack"], {"capacity": ["v", 3]}, {"len": 3}]}}
    assert observe.breaks(cs, other) and not observe.breaks(cs, o)


# ----------------------------------------------------------------------------- choose

def test_greedy_suite_hand_worked():
    a = Candidate(0, kills=frozenset({1, 2, 3}), lines=frozenset({1, 2}))
    b = Candidate(1, kills=frozenset({3}), lines=frozenset({2}))
    c = Candidate(2, branches=frozenset({(2, 3)}), lines=frozenset({3}))
    d = Candidate(3, kills=frozenset({1}), cost=0.1)
    assert [x.pid for x in greedy_suite([a, b, c, d])] == [0, 2]


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.tuples(st.frozensets(st.integers(0, 8), max_size=4), st.frozensets(st.integers(0, 5), max_size=3)),
                max_size=8))
def test_greedy_suite_keeps_every_goal_without_redundancy(rows):
    cands = [Candidate(i, kills=k, lines=ln) for i, (k, ln) in enumerate(rows)]
    chosen = greedy_suite(cands)
    def union(sets):
        return frozenset().union(*sets)

    assert union(c.kills for c in chosen) == union(c.kills for c in cands)
    assert union(c.lines for c in chosen) == union(c.lines for c in cands)
    for c in chosen:  # none is redundant
        rest = [o for o in chosen if o is not c]
        assert not (c.kills <= union(o.kills for o in rest) and c.lines <= union(o.lines for o in rest))


# ----------------------------------------------------------------------------- mutants

def test_mutants_are_matrix_mutations_plus_extras():
    src = (FIX / "text_utils.py").read_text()
    ours = module_mutants(src, limit=None, extra=False)
    assert {ast.unparse(ast.parse(m.code)) for m in ours} == {m.code for m in base_mutants(src)}
    extra = module_mutants(src, limit=None)
    ops = {m.op for m in extra}
    assert {"negate", "raise", "return", "loop", "slice"} <= ops
    for m in extra:
        assert m.code != src
        compile(m.code, "<mutant>", "exec")
    lines = set(range(45, 60))
    assert all(m.line in lines for m in module_mutants(src, lines=lines, limit=None))
    few = module_mutants(src, limit=20, seed=1)
    assert len(few) == 20 and len({m.line for m in few}) >= 10  # spread over the lines
    guarded = "def f(x):\n    return x + 1\n\nif __name__ == '__main__':\n    print(f(1) + 2)\n"
    assert all(m.line < 4 for m in module_mutants(guarded, limit=None))


# ----------------------------------------------------------------------------- writer

def test_writer_renders_readable_valid_tests():
    probes = [
        Probe("mean", (Step("call", "mean", ("[1, 2]",), unit="mean"),)),
        Probe("mean", (Step("call", "mean", ("[]",), unit="mean"),)),
        Probe("test_mode", (Step("call", "test_mode", ("'x'",), unit="test_mode"),)),
    ]
    outs = [{"steps": [ok(["v", 1.5])], "state": {}},
            {"steps": [raised(VE, "mean of empty (list)")], "state": {}},
            {"steps": [ok(["v", None], "hello\n")], "state": {}}]
    cases = [TestCase(p, o, observe.checks(o, observe.Names("pkg.stats", {"mean", "test_mode"})))
             for p, o in zip(probes, outs)]
    text = render_file("pkg.stats", {"mean", "test_mode"}, cases, {}, "Tests.")
    compile(text, "<suite>", "exec")
    assert "from pkg import stats" in text and "from pkg.stats import mean" in text
    assert "assert mean([1, 2]) == pytest.approx(1.5)" in text
    assert "with pytest.raises(ValueError, match=r'mean of empty \\(list\\)'):" in text
    assert "def test_test_mode_x_returns_none(capsys):" in text and "stats.test_mode('x')" in text
    assert "capsys.readouterr().out == 'hello\\n'" in text
    names = [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    # every test runs in an empty directory of its own (the code's relative paths land there)
    # (and what a test changes in the module's state is put back after it)
    assert names == ["_in_a_fresh_directory", "_module_state", "_put_back", "test_mean_2_items",
                     "test_mean_empty_list_raises_value_error", "test_test_mode_x_returns_none"]
    assert "monkeypatch.chdir(tmp_path)" in text and "@pytest.fixture(autouse=True)" in text
