"""Extra-input generation: calls found in tests, inferred types, reproducible hypothesis draws."""

import ast

from matrix.inputs import (
    extract_calls,
    generate_calls,
    infer_entry_point,
    infer_signature,
    merge,
    output_key,
    output_keys,
    perturb_stdin,
    spec_of,
)
from matrix.tasks import Test

MBPP_LIKE = [
    "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
    "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)",
    "assert math.isclose(similar_elements((11, 12), (17, 15)), 1.0, rel_tol=0.1)",
]


def test_entry_point_and_calls_from_asserts():
    assert infer_entry_point(MBPP_LIKE) == "similar_elements"
    assert infer_entry_point(["assert sum(1, 2) == 3"]) == "sum"  # a task may be called `sum`
    calls = extract_calls(MBPP_LIKE)
    assert [c.args for c in calls] == [((3, 4, 5, 6), (5, 7, 4, 10)), ((1, 2, 3, 4), (5, 4, 3, 7)),
                                       ((11, 12), (17, 15))]
    assert calls[0].source == "similar_elements((3, 4, 5, 6), (5, 7, 4, 10))"


def test_calls_from_test_objects_and_non_literals_skipped():
    tests = [Test.assertion("assert f(x) == 1"), Test.call_expected("f([1, 2], k=3)", "2"),
             Test.stdio("1\n", "2\n"), "assert f(*args) == 0", "not python ("]
    calls = extract_calls(tests, "f")
    assert len(calls) == 1 and calls[0].args == ([1, 2],) and calls[0].kwargs == (("k", 3),)


def test_signature_inference_and_merging():
    pos, kw = infer_signature(extract_calls(["assert f([1, 2], 'ab', (1, 'x'), {1: 2.5}) == 0",
                                             "assert f([], 'zz', (2, 'y'), {}) == 0"], "f"))
    assert kw == ()
    lst, text, tup, dct = pos
    assert lst.kind == "list" and lst.elem.kind == "int" and (lst.lo, lst.hi) == (0, 2)
    assert text.kind == "str" and set(text.alphabet) == {"a", "b", "z"}
    assert tup.kind == "tuple" and [s.kind for s in tup.items] == ["int", "str"]
    assert dct.kind == "dict" and dct.key.kind == "int" and dct.elem.kind == "float"
    assert merge(spec_of(1), spec_of(2.5)).kind == "float"
    assert merge(spec_of("a"), spec_of(None)).kind == "union"
    assert merge(spec_of((1, 2)), spec_of((1, 2, 3))).kind == "tuplevar"
    # the most common arity wins
    pos, _ = infer_signature(extract_calls(["assert g(1) == 1", "assert g(2) == 1", "assert g(1, 2) == 0"], "g"))
    assert len(pos) == 1


def test_generated_calls_are_reproducible_literal_and_shaped_like_the_tests():
    a = generate_calls(MBPP_LIKE, n=10, seed=1)
    b = generate_calls(MBPP_LIKE, n=10, seed=1)
    assert a == b
    assert a[:3] == [c.source for c in extract_calls(MBPP_LIKE)]
    fresh = a[3:]
    assert 5 <= len(fresh) <= 10 and len(set(a)) == len(a)
    for src in fresh:
        call = ast.parse(src, mode="eval").body
        assert call.func.id == "similar_elements" and len(call.args) == 2
        for arg in call.args:
            value = ast.literal_eval(arg)
            assert isinstance(value, tuple) and all(isinstance(x, int) for x in value)
    assert generate_calls(MBPP_LIKE, n=4, seed=1, include_test_inputs=False)[0] not in a[:3]


def test_generation_respects_sign_and_size():
    calls = generate_calls(["assert fib(5) == 5", "assert fib(10) == 55"], n=15, seed=0,
                           include_test_inputs=False)
    values = [ast.literal_eval(ast.parse(c, mode="eval").body.args[0]) for c in calls]
    assert values and min(values) >= 0 and max(values) <= 30
    text_calls = generate_calls(["assert up('abc') == 'ABC'"], n=8, seed=0, include_test_inputs=False)
    for c in text_calls:
        s = ast.literal_eval(ast.parse(c, mode="eval").body.args[0])
        assert set(s) <= set("abc")
    assert generate_calls(["assert True"], n=5) == []


def test_output_keys_canonical():
    assert output_key("pass", {3, 1, 2}) == output_key("pass", {1, 2, 3})
    assert output_key("pass", 0.1 + 0.2) == output_key("pass", 0.3)
    assert output_key("pass", [1, 2]) != output_key("pass", (1, 2))
    assert output_key("pass", 1.0) != output_key("pass", True)
    assert output_key("pass", 2.0) == output_key("pass", 2)
    assert output_key("error", 5) is None and output_key("timeout", None) is None
    assert output_keys([[("pass", {"b": 1, "a": 2}), ("error", None)]]) == [["{'a':2,'b':1}", None]]


def test_output_keys_of_values_python_cannot_print():
    """An int past Python's 4300-digit str limit (a mutant computing 10 ** n) and an object whose
    repr raises get keys instead of crashing the selection; equal huge ints agree."""
    big = 10 ** 5000
    assert output_key("pass", big) == output_key("pass", 10 ** 5000) != output_key("pass", big + 1)
    assert output_key("pass", -big) != output_key("pass", big)
    assert output_key("pass", [big, 1]).startswith("[0x")

    class Unprintable:
        def __repr__(self):
            raise RuntimeError("no")

    assert output_key("pass", Unprintable()) == "<unprintable Unprintable>"


def test_consensus_keys_survive_a_huge_int():
    from matrix.engine import ExecConfig, Executor
    from matrix.inputs import consensus_keys
    from matrix.tasks import Task

    task = Task(task_id="p", prompt="", kind="function", entry_point="power", tests=[], solutions=[])
    codes = ["def power(n):\n    return 10 ** n\n", "def power(n):\n    return 10 ** (n * 1000)\n"]
    tests = [Test.assertion("assert power(5) == 100000")]
    with Executor(ExecConfig(workers=1, timeout=5.0)) as ex:
        keys, inputs = consensus_keys(ex, task, codes, tests, n_inputs=4, seed=0)
    assert inputs[0] == "power(5)"
    assert keys[0][0] == "100000" and keys[1][0].startswith("0x")


def test_perturbed_stdin_keeps_layout_and_header():
    bases = ["3\n1 2 30\n", "7 -4\n", "no numbers here\n"]
    new = perturb_stdin(bases, 10, seed=3)
    assert new == perturb_stdin(bases, 10, seed=3)  # reproducible
    assert new != perturb_stdin(bases, 10, seed=4)
    assert len(new) == len(set(new)) == 10 and not set(new) & set(bases)
    for x in new:
        lines = x.split("\n")
        if len(lines) == 3:  # from "3\n1 2 30\n": the count line stays, the values stay >= 0
            assert lines[0] == "3" and lines[2] == ""
            assert all(int(v) >= 0 for v in lines[1].split()) and len(lines[1].split()) == 3
        else:  # from "7 -4\n": a single line, every integer may move, 7 stays non-negative
            a, b = x.split()
            assert int(a) >= 0
    assert perturb_stdin(["abc\n", "x1 2.5\n"], 5) == []  # no free-standing integer
    assert perturb_stdin(bases, 0) == []
