"""Texts a tokenizer scans (calc.py).

`evaluate(text)` hands its text to `Parser(text)`, whose constructor hands it to
`tokenize(text)`: a loop that reads `text[i]` and tells characters apart with `isdigit()`,
`isspace()`, `isalpha()` and `ch in OPERATORS`. The pool's texts were 'hello', '' and the module's
constants ('+-*/%^()'), so no test parsed an expression: mutation 0.23. A text the body (or a
function or constructor it is handed to) scans character by character now also gets texts built
from the characters it tells apart: numbers and names joined by its operators, bracketed,
chained, unbalanced."""

import ast
import importlib.util
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests30"


def _calc():
    spec = importlib.util.spec_from_file_location("calc30", FIX / "calc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pool(path, qualname, kind, param):
    module = analyze(path)
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == qualname and u.kind == kind)
    p, s = next((p, s) for p, s in gen.specs(unit) if p.name == param)
    return [ast.literal_eval(x) for x in gen._pool_for(p, s, gen._consts(unit), 0, unit) if x.startswith("'")]


def test_a_scanned_text_gets_expressions_of_the_characters_the_scanner_tells_apart():
    calc = _calc()
    for qualname, kind in (("tokenize", "function"), ("evaluate", "function"), ("Parser", "init")):
        pool = _pool(FIX / "calc.py", qualname, kind, "text")
        parsed = []
        for t in pool[:8]:
            try:
                parsed.append(calc.evaluate(t))
            except (calc.ParseError, ZeroDivisionError, ValueError):
                pass
        assert len(parsed) >= 4, (qualname, pool)
        # brackets, chains of two operators, an unbalanced bracket, somewhere in the pool
        assert any("(" in t and ")" in t for t in pool), pool
        assert any(sum(c in "+-*/%^" for c in t) >= 2 and "(" not in t for t in pool), pool
        assert any(t.count("(") != t.count(")") for t in pool), pool
        assert len(set(pool)) == len(pool) and all(len(t) <= 60 for t in pool)


def test_a_text_that_is_not_scanned_gets_no_expressions():
    pool = _pool(Path(__file__).parent / "fixtures" / "gentests29" / "textkit.py", "slugify", "function", "text")
    assert not any(any(c.isdigit() for c in t) and " + " in t for t in pool), pool


def test_the_written_suite_asserts_values_of_parsed_expressions(tmp_path):
    import shutil

    from coevo.cli import main

    shutil.copy2(FIX / "calc.py", tmp_path / "calc.py")
    assert main(["gen-tests", str(tmp_path / "calc.py"), "--out", str(tmp_path / "out"), "--quiet",
                 "--time-budget", "12"]) == 0
    tree = ast.parse((tmp_path / "out" / "test_calc.py").read_text())
    # tests built on an expression ('6 * 4', '(8 + 3) - 2') that assert what the code gives for it
    asserted = [f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")
                and any(isinstance(n, ast.Assert) for n in ast.walk(f))
                and any(isinstance(c, ast.Constant) and isinstance(c.value, str) and any(d.isdigit() for d in c.value)
                        and any(o in c.value for o in "+-*/") for c in ast.walk(f))]
    assert len(asserted) >= 3, ast.unparse(tree)


def test_a_parameter_typed_as_another_functions_result_gets_its_calls():
    """`rpn(tokens: list[tuple[str, str]])` takes what `tokenize(text) -> list[tuple[str, str]]`
    returns: its drawn lists were [('', ''), ...], never tokens; the calls of the producer
    (`tokenize('8 + 3 - 2')`) are now among its values."""
    calc = _calc()
    module = analyze(FIX / "calc.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == "rpn")
    p, s = gen.specs(unit)[0]
    pool = gen._pool_for(p, s, gen._consts(unit), 0, unit)[:8]
    made = [src for src in pool if src.startswith("tokenize(")]
    ok = []
    for src in made:
        try:
            ok.append(list(calc.rpn(eval(src, vars(calc).copy()))))  # noqa: S307 (our own pool's sources)
        except (calc.ParseError, ValueError):
            pass
    assert len([r for r in ok if len(r) >= 3]) >= 2, pool
