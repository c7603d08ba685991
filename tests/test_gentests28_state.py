"""What a written test asserts of an object after calls on it (coevo.testgen.observe.checks).
orders.py: `order = Order('hello'); order.add('hello', 5, 2.5); order.remove('hello')` was
written with nothing asserted after remove(): the object's state was compared with its state
as built (both with items == []) and every check that passes there was left out, so a remove()
that removed nothing passed the test."""

from coevo.testgen import observe


def ok(desc, out="", changed=()):
    return ["ok", desc, out, [list(c) for c in changed]]


def order(items):
    return ["obj", ["orders", "Order"], {"customer": ["v", "hello"], "items": ["v", items], "status": ["v", "open"]},
            {}]


def var_checks(outcome):
    return [c for c in observe.checks(outcome) if c.root == ("var", "order")]


def test_a_state_that_calls_changed_and_put_back_is_asserted():
    item = ["repr", "LineItem(sku='hello')", ["orders", "LineItem"]]
    o = {"steps": [ok(["bound", order([])]), ok(item), ok(["v", None])], "state": {"order": order([])}}
    cs = var_checks(o)
    assert cs, observe.checks(o)
    # a remove() that removed nothing fails it
    assert observe.breaks(cs, {"steps": o["steps"], "state": {"order": order([["v", 1]])}})


def test_the_state_as_built_is_not_asserted_again_after_one_call():
    o = {"steps": [ok(["bound", order([])]), ok(["v", 0])], "state": {"order": order([])}}
    assert var_checks(o) == []  # the constructor alone has a test of its own
    changed = {"steps": [ok(["bound", order([])]), ok(["v", None])], "state": {"order": order([["v", 1]])}}
    assert [c.path for c in var_checks(changed)] == [(("attr", "items"),)]  # only what changed
