"""The runner's check before a plain row (speed25, issue 23: R1 of /work/s20/REQUESTS.md).

``purity.plain_code`` listed a program's nodes with ``ast.walk``, a generator per node
(``ast.iter_child_nodes``); its verdict depends on the order (a class's bases must be classes
already seen), so the faster walk must give exactly ``ast.walk``'s order."""

from __future__ import annotations

import ast

import pytest

from matrix.sandbox import purity

PROGRAMS = [
    "import math\nclass A(Exception):\n    pass\nclass B(A):\n    pass\n"
    "def f(x):\n    return [B(y) for y in x if math.isqrt(y)]\n",
    "import math\nclass A:\n    pass\nclass B(A):\n    def f(self, x):\n        return [y for y in x if y]\n",
    "class B(A):\n    pass\nclass A:\n    pass\n",  # (a base seen after its subclass: not plain)
    "from collections import Counter as C\ndef f(s, *a, k=1, **kw):\n    global g\n    return C(s).most_common(k)\n",
    "def f(x):\n    match x:\n        case [1, *rest]:\n            return rest\n"
    "        case {'a': v, **kw}:\n            return v\n",
    "import re\nasync def g():\n    await h()\ndef f(x):\n    try:\n        return re.sub('a', 'b', x)\n"
    "    except (ValueError, TypeError) as e:\n        raise\n    finally:\n        pass\n",
    "def f(x):\n    return lambda y=x: {k: [v for v in range(k) if v % 2] for k in y}\n",
    "x = 1\nif __name__ == '__main__':\n    print(f'{x!r:>{x}}')\nwith open('f') as fh, open('g') as gh:\n    del fh\n",
]


@pytest.mark.parametrize("src", PROGRAMS)
def test_walk_in_order_is_ast_walks_order(src):
    tree = ast.parse(src)
    assert [id(n) for n in purity.walk_in_order(tree)] == [id(n) for n in ast.walk(tree)]


# plain_code's verdicts on PROGRAMS (as on 5b3cecf, with ast.walk)
PLAIN = [True, False, False, False, False, False, True, False]


@pytest.mark.parametrize("src, plain", list(zip(PROGRAMS, PLAIN)))
def test_plain_code_walks_without_ast_walk_and_decides_as_before(monkeypatch, src, plain):
    tree = ast.parse(src)
    calls = []
    real = ast.walk

    def counting(node):
        calls.append(1)
        return real(node)

    monkeypatch.setattr(ast, "walk", counting)
    assert purity.plain_code(tree) is plain
    assert calls == []
