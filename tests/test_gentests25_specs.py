"""gen-tests: parameter types on modules never tried before (session 24). CPython's getopt:
`getopt(args, shortopts)` got lists of ints for shortopts (`getopt(['--', 'ZXCS'], [-38, 1])`):
the name's plural guess won over what the function it is handed to does with it (two calls
down, `shortopts.startswith(':', i + 1)`). Fixtures in tests/fixtures/gentests25/."""

from gentests_specs import fixture_module, fixture_specs


def _specs(name: str) -> dict[str, dict[str, str]]:
    return fixture_specs("gentests25", name)


def test_a_parameter_only_passed_on_takes_its_callees_type_over_its_names_guess():
    specs = _specs("opts")
    assert specs["wants_value"]["shortopts"] == "str", specs
    assert specs["take_shorts"]["shortopts"] == "str", specs  # one call down
    assert specs["parse"]["shortopts"] == "str", specs  # two calls down
    # what the body itself shows still decides: args is indexed and its items are strings
    assert specs["parse"]["args"] == "list[str]", specs


def test_a_list_of_paths_the_code_opens_names_files_the_test_writes():
    """`for path in paths: open(path)` (fileinput's files): the list got ['hello', '0', ''] or
    ints, never a file, so every call raised FileNotFoundError or read nothing. A list whose
    items the code opens now also names files the test writes first."""
    module, gen = fixture_module("gentests25", "lines", "lines.py")
    units = {u.qualname: u for u in module.units}
    for name in ("count_lines", "longest"):
        probes = gen.initial(units[name])
        with_files = [p for p in probes if sum(s.kind == "file" for s in p.steps) >= 2]
        assert with_files, [p.source() for p in probes]
        p = with_files[0]
        written = [s.callee for s in p.steps if s.kind == "file"]
        call = p.steps[-1].source()
        assert call.startswith(f"{name}([") and all(repr(w) in call for w in written), (call, written)


def test_a_pattern_with_a_class_over_most_of_unicode_is_not_drawn_from():
    """CPython's mailcap: `_find_unsafe = re.compile(r'[^\\xa1-\\U0010FFFF\\w@+=:,./-]').search`.
    Hypothesis builds that class character by character (2.2 million calls): building the input
    generator took 19-45 s of the 60 s budget (the 'inspect' phase: 30.5 s, explore 2.7 s). The
    strings are drawn over ASCII: a class spanning thousands of code points is not drawn from
    (the module's other patterns are)."""
    from coevo.testgen.inputs import _regex_examples
    wide = r"[^\xa1-\U0010FFFF\w@+=:,./-]"
    assert _regex_examples([wide, r"[a-c]{2}\d"], 0) and all(
        len(x) == 3 for x in _regex_examples([wide, r"[a-c]{2}\d"], 0))
    assert _regex_examples([r"[\u0100-\uffff]x"], 0) == []
    # inside a group, a repeat or one branch of an alternation too
    from coevo.testgen.inputs import _wide_class
    assert _wide_class(r"(?:ab|c[\u0100-\uffff])+") and _wide_class(r"(x[^\xa1-\U0010FFFF]){2}")
    assert not _wide_class(r"(?:ab|c[a-z])+") and not _wide_class(r"[\w.-]+@[^\s@]+")
