"""`max(r, g, b)` hands each argument as an element, not a sequence (found on the standard
library's colorsys: gen-tests drew only lists for rgb_to_hls/rgb_to_hsv, every call a TypeError,
their bodies uncovered: mutation 0.54, lines 0.71). ``max(xs)`` alone still says a sequence."""

from __future__ import annotations

import ast
from types import SimpleNamespace

from coevo.testgen.specs import infer_param


def _spec(src: str, name: str):
    fn = ast.parse(src).body[0]
    assert isinstance(fn, ast.FunctionDef)
    param = SimpleNamespace(name=name, annotation=None, default=None, kind="pos")
    return infer_param(param, fn.body, {})


def test_several_arguments_of_max_are_numbers():
    src = ("def rgb_to_hsv(r, g, b):\n    maxc = max(r, g, b)\n    minc = min(r, g, b)\n"
           "    return maxc - minc\n")
    for name in "rgb":
        assert _spec(src, name).kind in ("int", "float"), name


def test_one_argument_of_max_is_a_sequence():
    src = "def top(xs):\n    return max(xs) - min(xs)\n"
    assert _spec(src, "xs").kind == "list"
