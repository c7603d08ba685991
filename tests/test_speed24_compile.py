"""The runner's check before a plain row compiles a program once (speed24, R1 of /work/s20/REQUESTS.md).

A program with no ``import`` whose code fails the fast purity check (``globals()``, an attribute
store, ``getattr``...) was compiled from its source, then parsed and compiled again from the tree,
though nothing in the tree had changed (it is impure: nothing is guarded; nothing was dropped).
These tests count the compiles and check the verdict of the check and the code it gives are the
same as the tree's."""

from __future__ import annotations

import builtins

import pytest

from matrix.sandbox import harness

IMPURE_NO_IMPORT = [
    "def f(x):\n    return globals()['g'](x)\ndef g(x):\n    return x + 1\n",
    "class A:\n    pass\ndef f(x):\n    a = A()\n    a.v = x\n    return getattr(a, 'v') + 1\n",
    "def f(x):\n    return eval('x + 1')\n",
]
PURE_GUARDED_NO_IMPORT = [
    # pure, but its attribute store is guarded: the tree is changed and must be compiled
    "class A:\n    pass\ndef f(x):\n    a = A()\n    a.v = x\n    return a.v\n",
]


def _count_compiles(monkeypatch):
    calls = []
    real = builtins.compile

    def counting(*a, **k):
        calls.append(type(a[0]).__name__)
        return real(*a, **k)

    monkeypatch.setattr(harness, "compile", counting, raising=False)
    return calls


@pytest.mark.parametrize("src", IMPURE_NO_IMPORT)
@pytest.mark.parametrize("as_main", [True, False])
def test_an_impure_program_without_import_is_compiled_once(monkeypatch, src, as_main):
    harness._COMPILED[0] = None
    calls = _count_compiles(monkeypatch)
    co, pure, _state, plain = harness._compile_guarded(src, "<solution>", as_main)
    assert len(calls) == 1, calls
    assert (pure, plain) == (False, False)
    ns: dict = {"__name__": "__main__" if as_main else "solution"}
    exec(co, ns)
    assert ns["f"](1) == 2


@pytest.mark.parametrize("src", PURE_GUARDED_NO_IMPORT)
def test_a_guarded_program_runs_the_guarded_tree(monkeypatch, src):
    harness._COMPILED[0] = None
    co, pure, _state, _plain = harness._compile_guarded(src, "<solution>", False)
    assert pure
    plain_co = compile(src, "<solution>", "exec", dont_inherit=True)
    names = lambda c: {n for k in c.co_consts if hasattr(k, "co_names") for n in k.co_names} | set(c.co_names)  # noqa: E731
    assert names(co) != names(plain_co)  # the guard is in the code that runs


def test_a_dead_main_block_is_still_dropped_without_import(monkeypatch):
    src = "def f(x):\n    return x + 1\nif __name__ == '__main__':\n    globals()['f'] = None\n"
    harness._COMPILED[0] = None
    co, pure, _state, _plain = harness._compile_guarded(src, "<solution>", False)
    assert pure  # the block's globals() is gone with the block
    ns: dict = {"__name__": "__main__"}
    exec(co, ns)
    assert ns["f"](1) == 2
