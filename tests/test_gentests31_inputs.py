"""gen-tests' input drawing (gentests31, test first)."""

import ast
import re
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX30 = Path(__file__).parent / "fixtures" / "gentests30"


def _gen(path):
    module = analyze(path)
    return module, InputGenerator(module)


def test_a_text_checked_against_a_module_pattern_is_typically_a_match():
    """members.py: `EMAIL.match(self.email)` in __post_init__; the typical Member had
    email='hello', so every object varied in the field a method reads (`age` for is_adult) raised
    in __post_init__, and the `age >= 18` boundaries survived."""
    module, gen = _gen(FIX30 / "members.py")
    email = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
    init = gen._inits["Member"]
    assert email.match(ast.literal_eval(gen._choices(init)[0]["email"]).lower())
    unit = next(u for u in module.units if u.qualname == "Member.is_adult")
    ctors = gen._field_ctors(unit)
    assert ctors and all(email.match(ast.literal_eval(c["email"]).lower()) for c in ctors), ctors


def test_a_parameter_matched_by_re_functions_gets_matches_first(tmp_path):
    src = ("import re\n\nCODE = re.compile(r'[A-Z]{3}-\\d{4}')\n\n\n"
           "def parse(code: str) -> int:\n    m = CODE.fullmatch(code)\n    if not m:\n        raise ValueError(code)\n"
           "    return int(code[4:])\n\n\n"
           "def zip_ok(zip_code: str) -> bool:\n    return re.match(r'\\d{5}$', zip_code) is not None\n")
    (tmp_path / "codes.py").write_text(src)
    module, gen = _gen(tmp_path / "codes.py")
    parse = next(u for u in module.units if u.name == "parse")
    first = ast.literal_eval(gen._choices(parse)[0]["code"])
    assert re.fullmatch(r"[A-Z]{3}-\d{4}", first), first
    zip_ok = next(u for u in module.units if u.name == "zip_ok")
    first = ast.literal_eval(gen._choices(zip_ok)[0]["zip_code"])
    assert re.match(r"\d{5}$", first), first


def _pool(gen, module, qualname, param):
    unit = next(u for u in module.units if u.qualname == qualname)
    q, spec = next((q, s) for q, s in gen.specs(unit) if q.name == param)
    return [ast.literal_eval(x) for x in gen._pool_for(q, spec, gen._consts(unit), 0, unit)]


def test_a_text_handed_to_an_enum_constructor_draws_the_enum_values():
    """turnstile.py: `post(event: str)` does `Event(event)`, and `replay(events: list[str])` hands
    each item to `t.post(e)`; their texts were 'hello', 'ignored'..., so Event('coin') was never
    built from a drawn text and replay's lists only raised."""
    module, gen = _gen(FIX30 / "turnstile.py")
    values = {"coin", "push", "kick", "repair"}
    post = _pool(gen, module, "Turnstile.post", "event")
    assert post[0] in values and values <= set(post[:8]), post
    lists = _pool(gen, module, "replay", "events")
    assert lists[0] and set(lists[0]) <= values, lists
    assert any(x[:2] == ["coin", "push"] for x in lists[:8]), lists


def test_a_dict_whose_values_are_read_as_text_holds_texts():
    """inifile.py: `Section(values: dict)`, read as `self.values.get(key, '').strip()` and
    `raw = self.values.get(key)` ... `int(raw)`; the drawn dicts held ints, so `int(raw)` never
    failed and get_bool's `.strip()` raised AttributeError."""
    module, gen = _gen(Path(__file__).parent / "fixtures" / "gentests29" / "inifile.py")
    dicts = [d for d in _pool(gen, module, "Section", "values") if d]
    assert dicts and all(isinstance(v, str) for d in dicts for v in d.values()), dicts


def test_a_dict_parameter_read_as_text_holds_texts(tmp_path):
    src = ("def setting(env: dict, key):\n    raw = env.get(key)\n    if raw is None:\n        return 0\n"
           "    return int(raw.strip())\n\n\n"
           "def flag(opts: dict, key):\n    return opts[key].lower() == 'yes'\n")
    (tmp_path / "envs.py").write_text(src)
    module, gen = _gen(tmp_path / "envs.py")
    for fn, param in (("setting", "env"), ("flag", "opts")):
        dicts = [d for d in _pool(gen, module, fn, param) if d]
        assert dicts and all(isinstance(v, str) for d in dicts for v in d.values()), (fn, dicts)


def test_the_names_in_expression_texts_are_keys_of_the_mapping_given_with_them():
    """calc.py: `evaluate(text, **variables)` -> `Parser(text, variables)`, whose atom() raises
    'unknown variable' unless the name is in `self.variables`; the texts held 'x' ('x + 1') but
    no call gave a variable x (keyword arguments were never drawn), so the lookup's success
    path was never run from evaluate."""
    module, gen = _gen(FIX30 / "calc.py")
    for qual in ("evaluate", "Parser"):
        unit = next(u for u in module.units if u.qualname == qual)
        calls = [gen._call_parts(unit, ch) for ch in gen._choices(unit)]
        both = []
        for args, kwargs in calls:
            text = ast.literal_eval(args[0]) if args else ""
            given = dict(kwargs)
            names = set(given) if qual == "evaluate" else \
                set(ast.literal_eval(args[1] if len(args) > 1 else given.get("variables", "{}")) or {})
            if "x" in text.split() and "x" in names:
                both.append((args, kwargs))
        assert both, (qual, calls)

