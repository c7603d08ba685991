"""Parameters that hold the module's own objects without saying so: orders.py's dataclass field
`items: list = field(default_factory=list)`, which Order's methods use as `item.sku`,
`item.quantity`, `item.total`; invoice.py's untyped `items` used as `item.price * item.qty`.
They were drawn as lists of ints (`Order('', items=[2, 3, 1])`, `invoice_total([3, 1, 2])`), so
the tests asserted AttributeErrors on input no caller passes. They are now lists of instances
of the class whose attributes the code reads."""

from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.specs import Spec
from coevo.testgen.target import analyze

FIX = Path(__file__).parent / "fixtures" / "gentests29"
FIX28 = Path(__file__).parent / "fixtures" / "gentests28"  # (the modules gentests28 probed)


def spec_and_pool(path, unit_name, param):
    module = analyze(path)
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == unit_name and (u.kind == "init") == (unit_name[0].isupper()))
    p, spec = next((p, s) for p, s in gen.specs(unit) if p.name == param)
    return spec, gen._pool_for(p, spec, gen._consts(unit), 0, unit)


def inner(spec):
    while spec.kind == "optional":
        spec = spec.args[0]
    return spec


def test_a_dataclass_list_field_whose_items_the_methods_read_holds_instances():
    spec, pool = spec_and_pool(FIX28 / "orders.py", "Order", "items")
    assert inner(spec) == Spec("list", (Spec("instance", ("LineItem",)),)), spec
    assert any(v.startswith("[LineItem(") for v in pool), pool


def test_an_untyped_list_whose_items_are_read_as_attributes_holds_instances():
    for name in ("invoice_total", "most_expensive"):
        spec, pool = spec_and_pool(FIX / "invoice.py", name, "items")
        assert spec == Spec("list", (Spec("instance", ("Item",)),)), (name, spec)
        assert any(v.startswith("[Item(") for v in pool), pool


def test_a_field_with_a_default_factory_is_not_drawn_as_none():
    spec, pool = spec_and_pool(FIX28 / "orders.py", "Order", "items")
    assert "None" not in pool, pool  # Order('closeds', items=None): a TypeError no caller meets


def test_a_method_is_called_with_a_drawn_argument_on_an_object_that_holds_items():
    """orders.py's survivors on `round(sub * (1 - discount_percent / 100), 2)`: total(discount)
    was only called on orders built with no items (the typical constructor call), or with the
    typical discount on the varied orders."""
    module = analyze(FIX28 / "orders.py")
    gen = InputGenerator(module)
    unit = next(u for u in module.units if u.qualname == "Order.total")
    both = []
    for probe in gen.initial(unit):
        ctor, call = probe.steps[0], probe.steps[-1]
        items = dict(ctor.kwargs).get("items", ctor.args[1] if len(ctor.args) > 1 else "[]")
        discount = dict(call.kwargs).get("discount_percent", call.args[0] if call.args else None)
        if items.startswith("[LineItem(") and discount not in (None, "0.0"):
            both.append(probe.source() if hasattr(probe, "source") else probe)
    assert both
