"""gen-tests: the types of values shaped by how the code uses them (gentests23's report: netrc's
`authenticators(host)` got ints; `os.path.join(dirname, n)` made dirname a list of str, read as
str.join; `fnmatch.filter(names, pattern)` made pattern a list, read as filter(function,
iterable)). Fixtures in tests/fixtures/gentests24/."""

from gentests_specs import fixture_specs


def _specs(name: str) -> dict[str, dict[str, str]]:
    return fixture_specs("gentests24", name)


def test_a_key_tested_to_be_in_a_mapping_is_a_key_not_an_index():
    """`if host in self.hosts: return self.hosts[host]` (netrc): host is a key of the mapping
    (it was an int, an index: `authenticators(5)`, never a host the file names)."""
    specs = _specs("hostbook")
    assert specs["Book.login_for"]["host"] == "str", specs
    assert specs["lookup"]["name"] == "str", specs
    assert specs["lookup"]["table"].startswith("dict["), specs


def test_arguments_of_os_path_and_fnmatch_are_strings():
    """os.path.join(root, name) is no str.join(iterable), fnmatch.filter(names, pattern) no
    filter(function, iterable): their paths and patterns are strings."""
    specs = _specs("hostbook")
    assert specs["under"] == {"root": "str", "name": "str"}, specs
    assert specs["matching"]["pattern"] == "str", specs
    assert specs["matching"]["names"] != "str", specs
    finder = _specs("finder")
    assert finder["find"]["pattern"] == "str" and finder["total_size"]["dirname"] == "str", finder
