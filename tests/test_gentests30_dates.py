"""Dates and validated dataclasses (shifts.py, members.py).

* `parse_shift(text)` partitions '2024-03-01 22:00+8' and hands the first part to
  `datetime.strptime(..., '%Y-%m-%d %H:%M')`: no drawn text was a date, so neither it nor
  `weekly_total([...])` ever returned. Texts written in the module's strptime formats (alone and
  followed by each separator the body splits on and a number) are now among the module's texts.
* `classify(start)` compares `start.time()` with `time(22, 0)` and `time(6, 0)` and tests
  `weekday() >= 5`: the drawn datetimes were a Thursday noon, a Sunday midnight and a Friday 23:59.
  A datetime at each `time(H, M)` of the module and a minute before it, on a Monday, and a
  Saturday, are now drawn too.
* `Member.__post_init__` rejects `age > 150`: its constants were not among the dataclass's
  (only __init__'s and the methods'), so no age near 150 was drawn."""

import ast
import importlib.util
from datetime import date, datetime  # noqa: F401  (the pools' sources name them)
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests30"


def _load(name):
    spec = importlib.util.spec_from_file_location(name + "30", FIX / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pool(name, qualname, param, kind=None):
    module = analyze(FIX / f"{name}.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == qualname and (kind is None or u.kind == kind))
    p, s = next((p, s) for p, s in gen.specs(unit) if p.name == param)
    return gen._pool_for(p, s, gen._consts(unit), 0, unit)


def _ok(f, *args):
    try:
        f(*args)
    except (ValueError, TypeError):
        return False
    return True


def test_texts_in_the_modules_strptime_formats_are_drawn():
    shifts = _load("shifts")
    texts = [ast.literal_eval(x) for x in _pool("shifts", "parse_shift", "text")[:12]]
    assert sum(_ok(shifts.parse_shift, t) for t in texts) >= 2, texts
    lists = [ast.literal_eval(x) for x in _pool("shifts", "weekly_total", "shifts")]
    assert any(len(v) >= 2 and _ok(shifts.weekly_total, v) for v in lists), lists


def test_datetimes_at_the_modules_times_and_on_a_saturday_are_drawn():
    shifts = _load("shifts")
    got = [eval(x) for x in _pool("shifts", "classify", "start")]  # noqa: S307 (our own pool's sources)
    assert {(d.hour, d.minute) for d in got if d.weekday() < 5} >= {(22, 0), (21, 59), (6, 0), (5, 59)}, got
    assert any(d.weekday() == 5 for d in got), got
    assert {shifts.classify(d).value for d in got} == {"day", "night", "weekend"}


def test_a_dataclass_post_init_s_constants_are_drawn_for_its_fields():
    ages = [ast.literal_eval(x) for x in _pool("members", "Member", "age", "init")]
    assert {150, 151} <= set(ages), ages


def test_a_module_that_rounds_gets_floats_with_more_decimals_than_it_keeps():
    """`round(rate * hours, 2)`: 2 -> 3 survived, no drawn float had more than two decimals
    that a product kept (2.5, 0.5, 1.0...)."""
    floats = [ast.literal_eval(x) for x in _pool("shifts", "pay", "hours")[:8]]
    assert any(round(v, 3) != round(v, 2) and round(v * 20, 3) != round(v * 20, 2) for v in floats), floats
    calc = [ast.literal_eval(x) for x in _pool("calc", "Parser", "variables", "init")[:8]]
    assert not any(isinstance(v, dict) and 1.23456 in v.values() for v in calc), calc
