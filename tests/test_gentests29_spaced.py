"""Text that a function splits into parts and strips (textkit.py's `parse_config`: `text.split(sep)`,
`part.split('=', 1)`, `key.strip()`, `value.strip()`): the drawn texts never had whitespace
around keys or values ('a=1;b=true' from the docstring, 'fY1,u=', ' true '), so every
`.strip -> .lstrip` and deleted `key = key.strip()` survived. The texts of such a parameter
now include ones built from the separators the body splits on: spaced (' a = 1 ; b = true '),
with an empty part ('a=1;;b=true'), with the inner separator twice ('a=1=2;...')."""

import ast
import importlib.util
import json
import shutil
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"


def textkit():
    spec = importlib.util.spec_from_file_location("textkit29", FIX / "textkit.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def drawn_texts(name):
    module = analyze(FIX / "textkit.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == name)
    out = []
    for probe in gen.initial(unit):
        step = probe.steps[-1]
        if step.args:
            v = ast.literal_eval(step.args[0])
            if isinstance(v, str):
                out.append(v)
    return out


def test_parsed_text_is_drawn_with_spaces_around_its_keys_and_values():
    parse = textkit().parse_config
    texts = drawn_texts("parse_config")
    spaced = []
    for t in texts:
        try:
            got = parse(t)
        except ValueError:
            continue
        # a key or a value that only strip() (not lstrip, not rstrip) turns into what was parsed
        if len(got) >= 2 and any(f" {k} " in t for k in got):
            spaced.append(t)
    assert spaced, texts
    assert any(";;" in t and len(parse(t)) >= 2 for t in texts if t.count("=") >= 2), texts


def test_the_written_suite_kills_the_strip_mutants_of_parse_config(tmp_path):
    from coevo.cli import main

    shutil.copy2(FIX / "textkit.py", tmp_path / "textkit.py")
    rc = main(["gen-tests", str(tmp_path / "textkit.py"), "--out", str(tmp_path / "out"), "--quiet"])
    assert rc == 0
    report = json.loads((tmp_path / "out" / "test_textkit.json").read_text())
    left = [(s["line"], s["change"]) for s in report["survivors"]]
    # key = key.strip(); value = value.strip() (its .lstrip is equivalent: the part was stripped)
    assert (19, ".strip -> .lstrip") not in left, left
    for line in (19, 22):
        assert (line, f"delete line {line}") not in left, left
    assert (15, "continue -> break") not in left, left
