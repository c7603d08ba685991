"""gen-tests on the shapes of more real modules (python-slugify, semver, colour, parse, humanize,
more-itertools, ...), each rebuilt as a tiny case here so that no package has to be installed:
what a reader of the written suite sees, and what the suite asserts."""

import ast
import unicodedata

from coevo.testgen import observe
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.literals import literal
from coevo.testgen.writer import TestCase, match_pattern, render_file


def ok(desc, out="", changed=()):
    return ["ok", desc, out, [list(c) for c in changed]]


def raised(types, msg, line=3):
    return ["raise", [[list(t) for t in types], msg, line], ""]


VE = [("builtins", "ValueError"), ("builtins", "Exception"), ("builtins", "BaseException"), ("builtins", "object")]


def _case(module, names, steps, outcome):
    return TestCase(Probe(steps[0].unit, tuple(steps)), outcome,
                    observe.checks(outcome, observe.Names(module, set(names))))


def _invisible(text):
    """Characters a reader cannot see in the written text: marks with nothing to combine with
    (or after an ASCII letter, where 'e' + U+0301 reads as a precomposed 'é'), variation
    selectors, Hangul fillers."""
    out = []
    for k, ch in enumerate(text):
        cat = unicodedata.category(ch)
        prev = text[k - 1] if k else ""
        if ch in "\u115f\u1160\u3164\uffa0" or 0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF:
            out.append(ch)
        elif cat in ("Mn", "Me") and (not prev or prev.isascii() or unicodedata.category(prev)[0] not in "LM"):
            out.append(ch)
        elif not ch.isprintable() and ch not in "\n":
            out.append(ch)
    return out


def test_invisible_characters_in_strings_are_written_as_escapes():
    """python-slugify: `slugify('\\ufe0f', ...)` was written as `slugify('️', ...)` (a variation
    selector alone, which reads as ''), and `'\\U000e01eftext-unidecode'` as `'󠇯text-unidecode'`."""
    steps = [Step("call", "slugify", ("'\ufe0f'",), (("separator", "'\U000e01ef-'"),), unit="slugify")]
    outcome = {"steps": [ok(["v", "\ufe0fe\u0301 \u3164 \u0915\u094d"])], "state": {}}
    text = render_file("slugs", {"slugify"}, [_case("slugs", {"slugify"}, steps, outcome)], {}, "Tests.")
    assert _invisible(text) == [], [hex(ord(c)) for c in _invisible(text)]
    call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
                and getattr(n.func, "id", "") == "slugify")
    assert ast.literal_eval(call.args[0]) == "\ufe0f"  # the same values, only written visibly
    assert ast.literal_eval(call.keywords[0].value) == "\U000e01ef-"
    compare = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Compare))
    assert ast.literal_eval(compare.comparators[0]) == "\ufe0fe\u0301 \u3164 \u0915\u094d"
    assert "\u0915\u094d" in text  # a mark on a letter of its own script stays as it is
    # values and exception messages written from data
    for v in ("\u0301", "a\ufe0f", ["\U000e01ef"], {"k": "\u3164"}, "it's \u0301\"q\"\\"):
        src = literal(v)
        assert _invisible(src) == [] and ast.literal_eval(src) == v, src
    pat = match_pattern("bad \u0301 (char)")
    assert _invisible(pat) == [] and ast.literal_eval(pat) == "bad \u0301 \\(char\\)", pat
    for msg in ("nul \x00 (x)", "tab\t(x)", "cr\r(x)"):  # a raw string would hold them as they are
        pat = match_pattern(msg)
        assert pat.isprintable() and ast.literal_eval(pat) == msg.replace("(", "\\(").replace(")", "\\)"), pat
    assert literal("plain 'text'") == repr("plain 'text'")  # everything else as repr writes it
