"""gen-tests' input drawing (gentests33, test first)."""

from pathlib import Path

from gentests_specs import drawn_pool as _pool

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX33 = Path(__file__).parent / "fixtures" / "gentests33"



def test_methods_named_for_the_type_they_are_dispatched_on_get_that_type():
    """show.py (as CPython's reprlib: getattr(self, 'repr_' + type(x).__name__)): show_dict(x)
    iterates and subscripts x, show_tuple(x) slices it, so both drew lists of ints
    (repr_dict([3, 1, 2]) raised IndexError) and show_str/show_int got whatever the body
    suggested; the method's name says which type reaches it."""
    for qual, kind in (("Show.show_dict", dict), ("Show.show_tuple", tuple), ("Show.show_str", str),
                       ("Show.show_int", int)):
        pool = _pool(FIX33 / "show.py", qual, "x")
        assert pool and type(pool[0]) is kind, (qual, pool[:4])
        assert sum(type(v) is kind for v in pool) >= min(len(pool), 3), (qual, pool)


def test_the_value_whose_type_name_picks_the_method_gets_each_type_dispatched_on():
    """show.py's show(x) (reprlib's repr1(x, level)) looks up 'show_' + type(x).__name__; x drew
    floats by its name, so no method was reached through it."""
    pool = _pool(FIX33 / "show.py", "Show.show", "x")
    assert {dict, tuple, str, int} <= {type(v) for v in pool[:8]}, pool[:8]


def test_a_value_handed_on_to_a_method_takes_that_method_s_parameter_type():
    """show.py's line(value) only hands value to self.show (reprlib's repr(x) to self.repr1):
    only module functions were followed, so value got the guess from its name."""
    pool = _pool(FIX33 / "show.py", "Show.line", "value")
    assert {dict, tuple, str, int} <= {type(v) for v in pool[:8]}, pool[:8]


def test_texts_and_collections_at_the_size_limits_the_code_keeps(tmp_path):
    """show.py keeps self.maxitems = 4 and self.maxtext = 12 (reprlib: maxlist = 6, maxstring =
    30) and cuts at them; the drawn texts and lists were all shorter, so the '...' branches never
    ran and the `len(x) > limit` boundaries survived. A module constant compared with a length
    (`len(s) > MAXLEN`) counts too."""
    strs = _pool(FIX33 / "show.py", "Show.show_str", "x")
    assert {12, 13} <= {len(v) for v in strs[:10]}, strs[:10]
    tuples = _pool(FIX33 / "show.py", "Show.show_tuple", "x")
    assert {4, 5} <= {len(v) for v in tuples[:10]}, tuples[:10]
    dicts = _pool(FIX33 / "show.py", "Show.show", "x")
    assert any(type(v) is dict and len(v) == 5 for v in dicts), dicts
    (tmp_path / "clip.py").write_text("MAXLEN = 8\n\n\ndef clip(s):\n    if len(s) > MAXLEN:\n"
                                      "        return s[:MAXLEN - 1] + '~'\n    return s\n")
    texts = _pool(tmp_path / "clip.py", "clip", "s")
    assert {8, 9} <= {len(v) for v in texts[:10]}, texts[:10]


def test_a_text_a_class_reads_char_by_char_gets_quoted_and_commented_texts():
    """lexer.py (as CPython's shlex: self.instream.read(1), then `ch in self.quotes`,
    `ch in self.commenters`, strings kept on the object): no scanner was seen, so no drawn
    text held a quoted part, a comment or an escape."""
    for qual in ("split", "Lexer"):
        pool = [v for v in _pool(FIX33 / "lexer.py", qual, "text") if isinstance(v, str)]
        head = pool[:12]
        assert any(v.count("'") == 2 and " " in v.split("'")[1] for v in head) or \
            any(v.count('"') == 2 and " " in v.split('"')[1] for v in head), (qual, head)
        assert any("#" in v for v in head), (qual, head)
        assert any("\\" in v for v in pool), (qual, pool)


def test_values_checked_against_a_module_tuple_of_types_or_joined_with_bytes_are_bytes():
    """binenc.py (as base64's _b32encode: `isinstance(s, bytes_types)`, `s + b'\\0' * n`, len and
    slices): the tuple of types was not read and bytes joined to the value counted for nothing, so
    s and data drew lists of ints, and every call raised TypeError."""
    for qual, param in (("pad", "s"), ("chunks", "data")):
        pool = _pool(FIX33 / "binenc.py", qual, param)
        assert type(pool[0]) is bytes, (qual, pool[:5])


def test_a_decoder_gets_texts_of_the_module_s_alphabet_with_padding():
    """binenc.py's b32ish_decode (as base64's b32decode): every drawn text ('hello', 'base32',
    '!I') had a length that is no multiple of 8 or letters outside the alphabet, so only the
    first raise was reached."""
    pool = [v for v in _pool(FIX33 / "binenc.py", "b32ish_decode", "s") if isinstance(v, (str, bytes))]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567="
    good = [v for v in pool[:12] if v and len(v) % 8 == 0
            and set(v if isinstance(v, str) else v.decode()) <= set(alphabet)]
    assert len(good) >= 3 and any(v.endswith("===" if isinstance(v, str) else b"===") for v in good), pool[:12]


def test_a_text_of_a_module_about_web_addresses_gets_addresses():
    """weblinks.py (as urllib.parse: literals '://', 'http', 'https'): the drawn texts were
    'hello', '', the module's own fragments, so host_of never got past its first raise and
    query_of never saw a query."""
    pool = _pool(FIX33 / "weblinks.py", "host_of", "address")
    head = [v for v in pool[:10] if isinstance(v, str)]
    assert any(v.startswith("http://") and ":8080" in v for v in head), head
    assert any(v.startswith("https://") for v in head), head
    pool = _pool(FIX33 / "weblinks.py", "query_of", "address")
    assert any("?" in v and "&" in v and "=" in v for v in pool[:10]), pool[:10]


def test_a_parameter_returned_where_the_other_returns_are_truth_values_is_a_flag():
    """flags.py (as quopri's needsquoting(c, quotetabs, header): `return quotetabs` beside
    `return c == ESCAPE or ...`): quotetabs drew lists of ints by its plural name, header
    anything, and encode(text, quotetabs) the same through it."""
    module = analyze(FIX33 / "flags.py")
    gen = InputGenerator(module)
    specs = {(u.qualname, q.name): s.kind for u in module.units for q, s in gen.specs(u)}
    assert specs[("needs_quoting", "quotetabs")] == "bool", specs
    assert specs[("needs_quoting", "header")] == "bool", specs
    assert specs[("encode", "quotetabs")] == "bool", specs
    assert specs[("strip_marks", "marks")] != "bool", specs


def test_a_module_that_imports_fraction_and_decimal_draws_lists_of_them():
    """exact.py (as CPython's statistics: `from fractions import Fraction`, `from decimal import
    Decimal`, told apart by issubclass(T, Fraction) in a helper): mean(data) drew lists of ints
    only, so the Fraction, Decimal and mixing branches never ran."""
    module = analyze(FIX33 / "exact.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == "mean")
    q, spec = gen.specs(unit)[0]
    pool = gen._pool_for(q, spec, gen._consts(unit), 0, unit)
    assert any("Fraction(" in x for x in pool[:12]), pool[:12]
    assert any("Decimal(" in x for x in pool[:12]), pool[:12]
    assert any("Decimal(" in x and ("Fraction(" in x or "1," in x) for x in pool), pool


def test_a_value_checked_against_several_types_gets_one_of_each():
    """exact.py's as_exact(x=0) (as Fraction(numerator=0): isinstance(x, (float, Decimal)),
    isinstance(x, str)): the default made x an int, and the values of other types drawn were
    '3', 2.5 and None, never a Decimal."""
    module = analyze(FIX33 / "exact.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == "as_exact")
    q, spec = gen.specs(unit)[0]
    pool = gen._pool_for(q, spec, gen._consts(unit), 0, unit)
    assert any(x.startswith("Decimal(") for x in pool), pool
