"""Output consensus's extra inputs drawn by a seeded generator of our own (matrix.inputs.spec_value),
not by hypothesis's engine: deterministic across processes, valid for the inferred spec, boundary
values present, and able to separate programs that differ only on an edge input."""

import ast
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from matrix.inputs import Spec, extract_calls, generate_calls, infer_signature, spec_value

ROOT = Path(__file__).resolve().parents[1]

LISTS = ["assert total([1, 2, 3]) == 6", "assert total([5, 7]) == 12", "assert total([10, 20, 30, 40]) == 100"]
WORDS = ["assert tags({'ab', 'ba'}) == 2", "assert tags({'c', 'abc', 'b'}) == 3"]


def _args(calls):
    return [[ast.literal_eval(a) for a in ast.parse(c, mode="eval").body.args] for c in calls]


def test_draws_are_the_same_in_another_process_with_another_hash_seed():
    """A set of strings has a hash-dependent order: the call text must not (the run's seed and
    the function decide the inputs, nothing else)."""
    here = generate_calls(LISTS, n=20, seed=7) + generate_calls(WORDS, n=20, seed=7)
    code = ("import json, sys; from matrix.inputs import generate_calls; "
            f"L = {LISTS!r}; W = {WORDS!r}; "
            "print(json.dumps(generate_calls(L, n=20, seed=7) + generate_calls(W, n=20, seed=7)))")
    for hs in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == here
    assert generate_calls(LISTS, n=20, seed=8) != generate_calls(LISTS, n=20, seed=7)  # the seed counts


def test_another_function_of_the_same_shape_gets_other_draws():
    renamed = [t.replace("total", "summe") for t in LISTS]
    a = generate_calls(LISTS, n=12, seed=0, include_test_inputs=False)
    b = generate_calls(renamed, n=12, seed=0, include_test_inputs=False)
    assert [c.replace("total", "") for c in a] != [c.replace("summe", "") for c in b]


def _walk_valid(spec, value, depth=0):
    """Whether ``value`` is one spec_strategy could draw (bounds and types as spec_strategy sets them)."""
    from matrix.inputs import _int_bounds, _len_bounds

    if spec is None:
        return isinstance(value, int) and 0 <= value <= 9
    k = spec.kind
    if k == "none":
        return value is None
    if k == "bool":
        return isinstance(value, bool)
    if k == "int":
        lo, hi = _int_bounds(spec.lo, spec.hi)
        return type(value) is int and lo <= value <= hi
    if k == "float":
        span = max(1.0, (spec.hi - spec.lo) / 2)
        low = spec.lo - span if spec.lo < 0 else max(0.0, spec.lo - span)
        return isinstance(value, float) and low - 1e-3 <= value <= spec.hi + span + 1e-3 and round(value, 3) == value
    if k in ("str", "bytes"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        text = value if k == "str" else value.decode()
        return isinstance(value, str if k == "str" else bytes) and lo <= len(value) <= hi and \
            set(text) <= set(spec.alphabet or "abc")
    if depth > 4:
        return value is None
    if k in ("list", "tuplevar", "set"):
        lo, hi = _len_bounds(spec.lo, spec.hi)
        typ = {"list": list, "tuplevar": tuple, "set": set}[k]
        low = 0 if k == "set" else lo
        return isinstance(value, typ) and low <= len(value) <= hi and \
            all(_walk_valid(spec.elem, v, depth + 1) for v in value)
    if k == "tuple":
        return isinstance(value, tuple) and len(value) == len(spec.items) and \
            all(_walk_valid(s, v, depth + 1) for s, v in zip(spec.items, value))
    if k == "dict":
        _, hi = _len_bounds(spec.lo, spec.hi)
        return isinstance(value, dict) and len(value) <= hi and \
            all(_walk_valid(spec.key, a, depth + 1) and _walk_valid(spec.elem, b, depth + 1) for a, b in value.items())
    if k == "union":
        return any(_walk_valid(s, value, depth + 1) for s in spec.items)
    return value in (list(spec.values) or [None])


def test_drawn_values_stay_within_the_spec():
    tests = ["assert f(3, [1.5, -2.0], 'xy', (1, 'a'), {1: [True]}, b'zz', None) == 0",
             "assert f(40, [], 'yyyx', (7, 'bb'), {}, b'', None) == 1"]
    pos, kw = infer_signature(extract_calls(tests, "f"))
    calls = generate_calls(tests, "f", n=60, seed=3, include_test_inputs=False)
    assert len(calls) >= 40 and len(set(calls)) == len(calls)
    for args in _args(calls):
        assert len(args) == len(pos)
        for spec, value in zip(pos, args):
            assert _walk_valid(spec, value), (spec.describe(), value)
    rng = random.Random(0)
    deep = Spec("list", 1, 2, elem=Spec("list", 1, 2, elem=Spec("list", 1, 2, elem=Spec(
        "list", 1, 2, elem=Spec("list", 1, 2, elem=Spec("list", 1, 2, elem=Spec("int", 1, 2)))))))
    for _ in range(200):
        v = spec_value(deep, rng)
        assert _walk_valid(deep, v)
        # past depth 4 a container is None, as in spec_strategy
        d, x = 0, v
        while isinstance(x, list) and x:
            x, d = x[0], d + 1
        assert d <= 5
    union = Spec("union", items=(Spec("int", 0, 5), Spec("str", 1, 2, alphabet="q")))
    seen = {type(spec_value(union, rng)) for _ in range(100)}
    assert seen == {int, str}


def test_boundary_values_are_drawn():
    """The tests' ints run 2..30: the draws hold the bounds hypothesis-style draws hold (0 when in
    range, the padded bounds), empty and one-element lists, the empty string."""
    calls = generate_calls(["assert g(5, [2, 3], 'ab') == 1", "assert g(30, [4], 'b') == 2"], "g", n=24, seed=0,
                           include_test_inputs=False)
    args = _args(calls)
    ints = {a[0] for a in args}
    lists = [a[1] for a in args]
    strs = [a[2] for a in args]
    assert 0 in ints  # the ints seen are >= 0: the range is padded down to 0, not below
    assert min(ints) >= 0 and max(ints) <= 40
    assert [] in lists and any(len(x) == 1 for x in lists)
    assert "" in strs
    assert any(0 in x for x in lists)


def test_consensus_inputs_separate_programs_that_differ_only_on_an_edge_input():
    """Hand-worked: two programs agree on every input but those with n == 0 (
    ``best * n`` vs ``best * (n or 1)``; n runs 10..40 in the tests, so 0 is
    one value of 51 in the padded range). The drawn
    inputs must hold such an input, so their outputs differ and consensus can tell them apart."""
    from matrix.engine import ExecConfig, Executor
    from matrix.inputs import consensus_keys
    from matrix.tasks import Task, Test

    task = Task(task_id="edge", prompt="", kind="function", entry_point="largest", tests=[], solutions=[])
    codes = ["def largest(xs, n):\n    best = 0\n    for x in xs:\n        best = x if x > best else best\n"
             "    return best * n\n",
             "def largest(xs, n):\n    best = 0\n    for x in xs:\n        best = x if x > best else best\n"
             "    return best * (n or 1)\n"]
    tests = [Test.assertion("assert largest([3, 1, 2], 10) == 30"),
             Test.assertion("assert largest([5, 4], 25) == 125"),
             Test.assertion("assert largest([9, 9, 1, 7], 40) == 360")]
    with Executor(ExecConfig(workers=1, timeout=5.0)) as ex:
        keys, inputs = consensus_keys(ex, task, codes, tests, n_inputs=24, seed=0)
    differ = [inp for inp, a, b in zip(inputs, keys[0], keys[1]) if a != b]
    assert differ, inputs
    assert all(", 0)" in inp for inp in differ)  # only where n is 0


def test_ties_and_equal_arguments_are_drawn():
    """What hypothesis makes by copying values, and what tells "first minimum" from "last minimum"
    or ``k`` found in the list from ``k`` not in it: two pairs with other names but the same number
    (the numbers range over ~280 values: by chance alone a rare tie), and a second argument equal
    to an item of the first (items and k range over ~230 values), for every one of five seeds."""
    for seed in range(5):
        calls = generate_calls(["assert idx([('ab', 143), ('cd', 200), ('ef', 100)]) == 'ef'",
                                "assert idx([('a', 345), ('b', 145)]) == 'b'"], "idx", n=24, seed=seed,
                               include_test_inputs=False)
        ties = [p for (p,) in _args(calls)
                if any(a[1] == b[1] and a[0] != b[0] for i, a in enumerate(p) for b in p[i + 1:])]
        assert ties, (seed, calls)
        nums = _args(generate_calls(["assert has([30, 50, 80], 150) == False", "assert has([10, 20, 200, 70], 20)"],
                                    "has", n=24, seed=seed, include_test_inputs=False))
        assert any(k in xs and k not in (0, 1, 2) for xs, k in nums), (seed, nums)
