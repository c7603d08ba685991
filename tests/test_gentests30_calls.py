"""Callables that fail and then succeed, and functions a dispatcher returns.

* `retry(func, attempts=3, delay=0.5)` (gentests29's funcs.py) calls `func()` until it returns:
  every drawn callable always returned or always raised, so `attempts` 3 -> 4 / 2 and the loop
  stopping after one pass survived. The zero-argument callables now include ones that raise
  (ZeroDivisionError) on their first call, or first two or three, and return 5 after.
* `formatter(style)` (shifts.py) returns one of the module's functions from a table
  (`FORMATS[style]`): a bare call is no test (a returned function, uncalled), so formatter had none.
  A function that returns a module function (by name, or from a module table of them) is now probed
  with the returned function bound and called on arguments drawn for its parameters."""

import ast
import importlib.util
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

HERE = Path(__file__).parent / "fixtures"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _gen(path, name):
    module = analyze(path)
    gen = InputGenerator(module)
    return gen, next(u for u in module.units if u.qualname == name)


def _outcome(mod, src):
    func = eval(src, vars(mod).copy())  # noqa: S307 (our own pool's sources)
    try:
        return "returns", mod.retry(func, delay=0)
    except Exception as exc:  # noqa: BLE001
        return "raises", type(exc).__name__


def test_retry_is_probed_with_callables_that_fail_first_and_then_return():
    path = HERE / "gentests29" / "funcs.py"
    mod = _load(path, "funcs30")
    gen, unit = _gen(path, "retry")
    funcs = list(dict.fromkeys(p.steps[-1].args[0] for p in gen.initial(unit) if p.steps[-1].args))
    recovered = []
    for src in funcs:
        f = eval(src, vars(mod).copy())  # noqa: S307
        try:
            f()
        except ZeroDivisionError:
            if _outcome(mod, src) == ("returns", 5):
                recovered.append(src)
        except Exception:  # noqa: BLE001 (callables that raise otherwise)
            pass
    assert len(recovered) >= 2, funcs
    # and each evaluation of the source is a fresh callable (the test's call sees its first failure)
    assert _outcome(mod, recovered[0]) == _outcome(mod, recovered[0])


def test_a_function_returned_from_a_module_table_is_called_on_drawn_arguments():
    gen, unit = _gen(HERE / "gentests30" / "shifts.py", "formatter")
    chained = [p for p in gen.initial(unit) if len(p.steps) == 2 and p.steps[0].callee == "formatter"
               and p.steps[0].bind and p.steps[1].callee == p.steps[0].bind and p.steps[1].args]
    assert len(chained) >= 3, [p.steps for p in gen.initial(unit)]
    assert any(a.startswith("date(") for p in chained for a in p.steps[1].args), chained
    styles = {ast.literal_eval(p.steps[0].args[0]) for p in chained if p.steps[0].args}
    assert {"short", "long"} <= styles, styles


def test_a_key_looked_up_in_the_objects_own_mapping_is_drawn_from_it():
    """`Section.get_int(key)` reads `self.values.get(key)`: the keys drawn were never keys of the
    values the object was built with (gentests29's inifile.py), so `int(raw)` never ran."""
    gen, unit = _gen(HERE / "gentests29" / "inifile.py", "Section.get_int")
    found = []
    for p in gen.initial(unit):
        ctor, call = p.steps[0], p.steps[-1]
        values = dict(ctor.kwargs).get("values", ctor.args[1] if len(ctor.args) > 1 else None)
        key = call.args[0] if call.args else dict(call.kwargs).get("key")
        if values and key:
            try:
                keys = ast.literal_eval(values)
            except ValueError:
                continue
            if isinstance(keys, dict) and ast.literal_eval(key) in keys:
                found.append((values, key))
    assert len({v for v, _ in found}) >= 2, [p.steps for p in gen.initial(unit)]
