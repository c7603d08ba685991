import pytest
from tinymodel import CHAT_TEMPLATE, build_tokenizer

from matrix.tasks import Task, Test
from roles.feedback import format_feedback, summarize_feedback
from roles.parsing import parse_code, parse_task, parse_tests
from roles.prompts import (
    ROLES,
    build_prompt,
    encode_example,
    render_code_completion,
    render_task_completion,
    render_tests_completion,
)

FUNC = Task("t1", "Return the sum of a and b.", "function", "add",
            solutions=["def add(a, b):\n    return a + b\n"],
            meta={"inputs": ["add(1, 2)", "add(-1, 1)"]})
STDIO = Task("s1", "Read two integers and print their sum.", "stdio", None,
             solutions=["a, b = map(int, input().split())\nprint(a + b)\n"],
             meta={"inputs": ["1 2\n", "3 4\n"]})


class Cell:
    def __init__(self, status, value=None, error=None):
        self.status, self.value, self.error = status, value, error


@pytest.fixture(scope="module")
def plain_tok():
    return build_tokenizer()


@pytest.fixture(scope="module")
def chat_tok():
    return build_tokenizer(CHAT_TEMPLATE)


def test_plain_coder_prompt_is_exact(plain_tok):
    assert build_prompt("coder", FUNC, plain_tok) == (
        "<|role|>coder\n<|task|>\nReturn the sum of a and b.\n<|entry|>add\n<|answer|>\n")
    assert build_prompt("coder", STDIO, None) == (
        "<|role|>coder\n<|task|>\nRead two integers and print their sum.\n<|entry|>(stdin)\n"
        "<|answer|>\n")


def test_plain_optional_lines():
    p = build_prompt("tester", FUNC, None, n_tests=4, tests=[Test.assertion("assert add(1, 1) == 2")])
    assert "<|count|>4\n" in p and "<|tests|>\nassert add(1, 1) == 2\n" in p
    assert "<|count|>" not in build_prompt("coder", FUNC, None, n_tests=4)


def test_plain_fixer_turns_in_order():
    p = build_prompt("fixer", FUNC, None, code="def add(a, b):\n    return 0",
                     feedback="failed: assert add(1, 2) == 3\ngot: 0",
                     history=[("def add(a, b):\n    return a - b", "failed: x")])
    assert p.count("<|code|>") == 2 and p.count("<|feedback|>") == 2
    assert p.index("return a - b") < p.index("failed: x") < p.index("return 0") < p.index("got: 0")
    assert p.endswith("<|answer|>\n")


def test_plain_proposer_with_and_without_example():
    assert build_prompt("proposer", None, None) == "<|role|>proposer\n<|kind|>function\n<|answer|>\n"
    p = build_prompt("proposer", STDIO, None)
    assert p.startswith("<|role|>proposer\n<|kind|>stdio\n<|example|>\n### Task\n")


def test_proposer_program_format_with_several_references(chat_tok):
    p = build_prompt("proposer", None, None, references=[FUNC, FUNC], describe=False)
    assert p.count("<|example|>") == 2 and "### Task" not in p and p.count("### Solution") == 2
    assert p.endswith("<|answer|>\n")
    c = build_prompt("proposer", None, chat_tok, references=[FUNC], describe=False)
    assert "### Task" not in c and "### Solution" in c and "different from all of them" in c
    target = render_task_completion(FUNC, describe=False)
    assert target.startswith("### Solution") and parse_task(target).task.solutions == [FUNC.solutions[0].rstrip()]


def test_chat_template_used_when_present(chat_tok, plain_tok):
    for role in ROLES:
        p = build_prompt(role, FUNC, chat_tok, code="def add(a, b): pass", feedback="failed")
        assert p.startswith("<|system|>\n") and p.endswith("<|assistant|>\n"), role
        assert "<|role|>" not in p
    tester = build_prompt("tester", FUNC, chat_tok, n_tests=5)
    assert "5 unit tests" in tester and "assert" in tester
    assert "json" in build_prompt("tester", STDIO, chat_tok)
    # forcing the plain template on a chat tokenizer, and refusing chat without a template
    assert build_prompt("coder", FUNC, chat_tok, template="plain").startswith("<|role|>coder")
    with pytest.raises(ValueError):
        build_prompt("coder", FUNC, plain_tok, template="chat")


def test_chat_fixer_is_multi_turn(chat_tok):
    p = build_prompt("fixer", FUNC, chat_tok, code="c2", feedback="f2", history=[("c1", "f1")])
    assert p.count("<|assistant|>") == 3  # two previous attempts + the generation prompt
    assert p.index("c1") < p.index("f1") < p.index("c2") < p.index("f2")


def test_bad_arguments():
    with pytest.raises(ValueError):
        build_prompt("judge", FUNC, None)
    with pytest.raises(ValueError):
        build_prompt("coder", None, None)
    with pytest.raises(ValueError):
        build_prompt("fixer", FUNC, None)


def test_completions_round_trip_through_the_parsers():
    code = FUNC.solutions[0]
    assert parse_code(render_code_completion(code)).code == code.rstrip()
    tests = [Test.assertion("assert add(1, 2) == 3"), Test.call_expected("add(2, 2)", "4")]
    got = parse_tests(render_tests_completion(tests), FUNC)
    assert [t.test for t in got.tests] == ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
    st = [Test.stdio("1 2\n", "3\n"), Test.stdio("5 5\n", "10\n")]
    assert parse_tests(render_tests_completion(st), STDIO).tests == st
    for task in (FUNC, STDIO):
        pt = parse_task(render_task_completion(task))
        assert pt.ok, pt.error
        assert pt.task.kind == task.kind and pt.task.entry_point == task.entry_point
        assert pt.task.prompt == task.prompt and pt.inputs == task.meta["inputs"]
        assert pt.task.solutions == [task.solutions[0].rstrip()]


def test_encode_example_appends_eos_and_matches_separate_encoding(plain_tok):
    prompt = build_prompt("coder", FUNC, plain_tok)
    p, c = encode_example(plain_tok, prompt, render_code_completion(FUNC.solutions[0]))
    assert c[-1] == plain_tok.eos_token_id
    assert p == plain_tok(prompt, add_special_tokens=False)["input_ids"]
    assert plain_tok.decode(c, skip_special_tokens=True) == render_code_completion(FUNC.solutions[0])


def test_feedback_formats():
    t = Test.assertion("assert add(1, 2) == 3")
    assert format_feedback(t, Cell("fail", value="-1")) == "failed: assert add(1, 2) == 3\ngot: -1"
    assert format_feedback(t, Cell("timeout")).endswith("took too long")
    assert format_feedback(t, Cell("memory")).endswith("out of memory")
    err = format_feedback(t, Cell("error", error="Traceback...\nZeroDivisionError: division by zero"))
    assert "error:" in err and "ZeroDivisionError" in err
    c = format_feedback(Test.call_expected("add(1, 2)", "3"), Cell("fail", value="4"))
    assert c == "failed: add(1, 2)\nexpected: 3\ngot: 4"
    s = format_feedback(Test.stdio("1 2\n", "3\n"), Cell("fail", value="4\n"))
    assert s.startswith("failed on input: 1 2\nexpected: 3\ngot: 4")
    long = format_feedback(t, Cell("error", error="x" * 5000), max_chars=100)
    assert len(long) < 200 and "..." in long
    assert summarize_feedback([t, t], [Cell("pass"), Cell("pass")]) == "all tests passed"
    many = summarize_feedback([t, t, t], [Cell("fail"), Cell("fail"), Cell("pass")])
    assert many.count("failed:") == 1 and "(1 more failing)" in many
