"""The test process (mode ``test``): runs a generic test, the program's names resolved to
references into the program process, and writes the verdict on its own channel."""

from __future__ import annotations

import socket
import sys
import types

from ..records import Frame
from ..setup_cell import alone_data, nested_instructions, plain_data
from .peer import (
    _GONE,
    FORWARDED_BUILTINS,
    MAX_SHARED,
    PROCESS_WORDS,
    RPC_FD,
    RemoteError,
    _Peer,
    _Raised,
    _Raw,
    process_state,
    random_state,
    share_files,
    std_class_name,
    take_load_changes,
)
from .shapes import _NODE_KINDS, _as_node, _held_across, _NodeNo
from .stand_ins import _VALUE_CLASSES, STD_VALUE_CLASSES, _ProgramClass, _Proxy

_TABLE: list = [None, None]  # (the last source's symbol table: free_names and _top_bound read one)


def _symtable(src: str):
    import symtable

    if _TABLE[0] != src:
        _TABLE[1] = symtable.symtable(src, "<test>", "exec")
        _TABLE[0] = src
    return _TABLE[1]


def free_names(src: str) -> list[str]:
    """Names the test reads from its module scope (and so from the program) without defining."""
    top = _symtable(src)
    assigned = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    names: set[str] = set()
    stack = [top]
    while stack:
        t = stack.pop()
        for s in t.get_symbols():
            if (t is top and s.is_referenced()) or (t is not top and s.is_global() and s.is_referenced()):
                names.add(s.get_name())
            if t is not top and s.is_declared_global() and (s.is_assigned() or s.is_imported()):
                # `def setup(): global expected; expected = None` binds the test's own name: it
                # must neither be read from the program nor followed when the program rebinds its
                # own (review of red-team pass 18: a program's `o global expected` replaced it)
                assigned.add(s.get_name())
        stack.extend(t.get_children())
    return sorted(n for n in names if n not in assigned)


def run_test(cmd: dict, chan) -> None:
    """Mode ``test``: run a generic test against the program process; the verdict is this
    process's (``Frame.VERDICT``: null when the test passed, else exception info)."""
    from .. import harness

    G = harness._G
    t0 = G["clock"]()
    src = cmd["test"]
    sock = socket.socket(fileno=RPC_FD)
    peer = _Peer(sock, "T", int(cmd["max_out"]), 1.0)
    peer.handle = lambda op, args: _test_side_handle(peer, op, args)  # type: ignore[method-assign]  # this peer's handler
    peer.sinks = harness._fresh_streams("", int(cmd["max_out"]), False)
    share_files(src)
    peer.random_on = "random" in src
    if any(w in src for w in PROCESS_WORDS):  # (the environment, directory, command line: one process's)
        peer.process_base = peer.process_sent = process_state()
    if "builtins" in src:  # (a builtin the test replaces is the program's too: one ``builtins``)
        import builtins

        peer.builtins_base = {k: getattr(builtins, k) for k in FORWARDED_BUILTINS}
    setup_own = _own_setup(cmd.get("task_setup"))  # (before any answer of the program's process)
    live = setup_own.pop(_LIVE, frozenset())
    peer.random_state = random_state() if peer.random_on else None  # (moved by the test from here on:
    # synced with the program's)
    try:
        loaded = peer.recv()
        state = loaded[1] if loaded[0] == "r" and len(loaded) > 1 and type(loaded[1]) is list else None
        if not state or state[0] not in ("loaded", "load_error", "syntax"):
            raise RemoteError("the program process did not start")
        if state[0] == "syntax":
            chan.send(Frame.SYNTAX, str(state[1])[:harness.MAX_ERR].encode("utf-8", "replace"))
            return
        if state[0] == "load_error":
            info = state[1] if type(state[1]) is list and len(state[1]) == 4 else ["code", "Error", "", "other"]
            chan.send_json(Frame.VERDICT, [str(x)[:harness.MAX_ERR + 140] for x in info], G["clock"]() - t0)
            return
        if state[0] == "loaded" and len(state) == 2:  # (the state its load moved: the test's too)
            take_load_changes(peer, state[1])
        chan.send(Frame.LOADED)  # the program is loaded: the test's own time starts
        t0 = G["clock"]()
        own = cmd["own"] if type(cmd.get("own")) is list else []
        names, modules = _program_names(free_names(src), own, src)
        names = [n for n in names if (n not in setup_own or n in own) and n not in live]  # (the setup's: its own)
        bound = _top_bound(src)
        in_functions = [n for n in (_function_globals(src) if "global" in src else ()) if n not in bound]
        in_functions = in_functions[:max(0, MAX_SHARED - len(bound))]
        bound += in_functions
        answers = peer.request("resolve", names, bound)
        shared: dict = {}
        if type(answers) is list and len(answers) == len(names) + 1:
            flags = answers.pop()
            if type(flags) is list and len(flags) == len(bound):
                shared = {n: f is True for n, f in zip(bound, flags)}
        # (a plain dict where the test binds none of the program's globals: its functions' global
        # reads stay the interpreter's fast ones)
        ns = (_TestGlobals if any(shared.values()) or "globals" in src else dict)(
            {"__name__": "__main__", "__builtins__": G["builtins"]})
        if type(answers) is list and len(answers) == len(names):
            for name, a in zip(names, answers):
                if type(a) is list and len(a) in (2, 3) and a[0] == "module":
                    ns[name] = a[1]  # the module itself, the program's (not followed if rebound)
                    # (its name: the test's where that is a standard module's, else the one the
                    # program gave; what the test reads there is checked, :meth:`.peer._Peer.verify_std`)
                    std = name if name in G["stdlib_dicts"] else (a[2] if len(a) == 3 else None)
                    if isinstance(a[1], _Proxy) and type(std) is str and std in G["stdlib_dicts"]:
                        peer.std_modules[object.__getattribute__(a[1], "_coevo_r")] = std
                    continue
                if name in modules and type(a) is list and a and a[0] in ("value", "kept"):
                    # the program binds a standard module's name to an object of its own (``class
                    # math``): the test's ``math`` is the module itself
                    mod = _own_import(name)
                    if mod is not None:
                        ns[name] = mod
                        continue
                if type(a) is list and a and a[0] == "value" and len(a) == 2:
                    ns[name] = peer.globals_given[name] = _value_class(peer, a[1])
                elif type(a) is list and a and a[0] == "kept" and len(a) == 3 and type(a[2]) is int:
                    # a container of the program's globals (a log, a cache): shared, kept in sync
                    ns[name] = peer.globals_given[name] = peer._kept_value(a[1], [["K", "v", a[2]]])
                elif a is None:  # (none yet: one a call of the program's creates is the test's to read,
                    peer.globals_given[name] = _GONE  # as in one module; red-team pass 33)
        for k, v in setup_own.items():
            if k not in own:
                ns[k] = v
        if live:
            _live_helpers({k: v for k, v in setup_own.items() if k not in own}, ns)
        peer.test_ns = ns
        if "import" in src:  # (a standard module the program returns is the test's own where it imports it)
            peer.test_imports = _imported(src)
        watched = [n for n in in_functions if shared.get(n)]
        if watched:  # (``global helper; helper = ...`` in a function of the test's)
            peer.pre_request = _watch_globals(ns, watched)
        _forward_module_patches(peer, src)
        if "logging" in src or "assertLogs" in src or "assertNoLogs" in src:  # (what the program logs: the test's)
            peer.request("logging", True)
        # `from solution import f`, as test files write (the setup's names it computed: its own)
        mine = {k: ns.get(k, v) for k, v in setup_own.items() if k not in own}
        G["sysmods"]["solution"] = _program_module(peer, mine)
        code = compile(src, "<test>", "exec", dont_inherit=True)
        _SHARED.clear()
        _SHARED.update(peer=peer, names=shared)
    except (RemoteError, ValueError, OSError, SyntaxError) as exc:
        chan.send_json(Frame.VERDICT, ["test", "Error", f"the program process failed: {exc}"[:500], "other"],
                       G["clock"]() - t0)
        return
    try:
        exec(code, ns)
        verdict = None
    except RemoteError as exc:
        verdict = ["test", "Error", f"the program process failed: {exc}"[:500], "other"]
    except BaseException as exc:  # noqa: BLE001 - the test's outcome
        verdict = harness.exc_info(exc, "test", None)
    if peer.broken is not None:  # whatever the test caught of it (:attr:`_Peer.broken`)
        verdict = ["test", "Error", f"the program process failed: {peer.broken}"[:500], "other"]
    chan.send_json(Frame.VERDICT, verdict, G["clock"]() - t0)
    try:
        peer.send(["q", "bye"])
    except (RemoteError, OSError):
        pass


def _imported(src: str) -> frozenset:
    """The modules the test's text imports (``import math``, ``import os.path as p``, ``from os import
    path``: ``os.path`` and ``os``)."""
    import ast

    out: set[str] = set()
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    for node in ast.walk(tree):
        if type(node) is ast.Import:
            out.update(a.name for a in node.names)
        elif type(node) is ast.ImportFrom and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return frozenset(out)


def _top_bound(src: str) -> list[str]:
    """The names the test binds at its top level (assigned, imported, defined), at most
    ``MAX_SHARED``: which of them are the program's globals is asked with its names
    (:class:`_TestGlobals`)."""
    top = _symtable(src)
    out = sorted(s.get_name() for s in top.get_symbols()
                 if (s.is_assigned() or s.is_imported()) and s.get_name()[:2] != "__")
    return out[:MAX_SHARED]


def _function_globals(src: str) -> list[str]:
    """The names a function of the test's declares ``global`` and binds (``global helper; helper
    = ...``), sorted."""
    top = _symtable(src)
    out: set[str] = set()
    stack = list(top.get_children())
    while stack:
        t = stack.pop()
        out.update(s.get_name() for s in t.get_symbols()
                   if s.is_declared_global() and (s.is_assigned() or s.is_imported()) and s.get_name()[:2] != "__")
        stack.extend(t.get_children())
    return sorted(out)


def _watch_globals(ns: dict, names: list):
    """A check, run before each request to the program's process, of the globals of the program's
    that functions of the test's rebind with ``global`` (``STORE_GLOBAL`` writes the namespace
    itself, past :class:`_TestGlobals`): one rebound (or deleted) since is sent as
    :class:`_TestGlobals` sends its own (red-team pass 30: ``def swap(): global helper; helper =
    lambda x: 0`` left the program's ``f`` calling its own helper, and ``assert f(2) == 4``
    passed)."""
    missing = object()
    last = {n: ns.get(n, missing) for n in names}

    def check() -> None:
        for name, was in last.items():
            now = ns.get(name, missing)
            if now is not was:
                last[name] = now
                if now is missing:
                    _share_global(name, None, "del")
                else:
                    _share_global(name, now, "set")

    return check


_SHARED: dict = {}  # "peer": the test side's peer, "names": {name: whether it is a global of the program's}


class _TestGlobals(dict):
    """The test's namespace. In one interpreter the test's top level and the program share one:
    ``def helper``, ``helper = Mock()``, ``globals()['helper'] = ...`` replace what the program's
    functions call (red-team pass 29, R4/R14: a wrong program passed ``def helper(x): return 0``
    then ``assert f(2) == 4``). A binding of a callable to a name that is a global of the
    program's (asked once per name) is sent to the program's process (op ``setglobal``), crossing
    as a callable argument does. Data the test binds stays the test's alone (red-team pass 18: a
    program with a global ``expected`` would read the test's ``expected = 5`` and return it;
    ``solution.K = 5`` says it for the program, :func:`_program_module`), and the program's later
    rebinding of the name never reaches the test's (a program could swap the test's own checker).
    A function's ``global helper; helper = ...`` (``STORE_GLOBAL`` writes the dict itself) is
    followed by :func:`_watch_globals`. Not followed: ``globals().update``, a module bound (``import
    math``: one module in one interpreter)."""

    __slots__ = ()

    def __setitem__(self, name, value):
        dict.__setitem__(self, name, value)
        if _SHARED:
            _share_global(name, value, "set")

    def __delitem__(self, name):
        dict.__delitem__(self, name)
        if _SHARED:
            _share_global(name, None, "del")


def _share_global(name, value, how: str) -> None:
    peer, known = _SHARED["peer"], _SHARED["names"]
    if type(name) is not str or name[:2] == "__" or known.get(name, True) is False:
        return
    if how == "set" and (not callable(value) or isinstance(value, types.ModuleType)
                         or value is peer.globals_given.get(name, _SHARED)):
        return
    if len(known) >= MAX_SHARED and name not in known:
        return
    done = peer.request("setglobal", name, how, value) if how == "set" else peer.request("setglobal", name, how)
    known[name] = done is True


def _own_setup(src) -> dict:
    """The plain data (numbers, strings, bytes, None, lists, tuples, sets, dicts of them, and
    Counter/OrderedDict/deque) a task setup binds when this process runs it alone (twice), before
    the program's process answers anything, and its helpers that read only those, builtins and
    standard modules: the test reads those names as computed here (red-team pass 23: the setup's
    values came from the program's process, where a program that reached the harness through
    ``sys.modules`` chose them: ``run_setup`` wrapped, ``want`` read ``[9]``). A setup that is not
    pure (files, the environment) runs in a directory of its own, the environment put back after. A
    setup that does not run alone (it reads the program's definitions), or data that differs
    between the two runs, gives nothing here: those names are the program's process's, as before.
    The random generator's state and the decimal context are put back (the test's own draws are
    synced with the program's)."""
    if type(src) is not str or not src.strip():
        return {}
    import random

    from .. import harness

    try:
        _, pure, _ = harness.compile_source(src, "<setup>", guard=True)
        co = compile(src, "<setup>", "exec", dont_inherit=True)
    except harness._COMPILE_ERRORS:
        return {}
    import os
    import shutil
    import tempfile

    state = random.getstate()
    env = dict(os.environ)
    dec = sys.modules.get("decimal")
    ctx = dec.getcontext().copy() if dec is not None else None
    ns: dict = {"__name__": "solution", "__builtins__": harness._G["builtins"]}
    again: dict = {"__name__": "solution", "__builtins__": harness._G["builtins"]}
    here = away = None
    failed = False
    try:
        if not pure:  # (files it writes or reads: in a directory of its own, not the program's)
            here = os.getcwd()
            away = tempfile.mkdtemp(prefix="setup")
            os.chdir(away)
        for d in (ns, again):  # (twice: data that differs from run to run is the program process's run's)
            try:
                exec(co, d)
            except BaseException:  # noqa: BLE001 - it needs the program: only what it bound before
                keep = alone_data(co, d)  # and never names again is its own (setup_cell.alone_data)
                failed = True
                for k in [k for k in d if k not in keep and k[:2] != "__"]:
                    del d[k]
    except BaseException:  # noqa: BLE001 - this process's directory: not its own
        return {}
    finally:
        try:
            random.setstate(state)
            if here is not None:
                os.chdir(here)
            if away is not None:
                shutil.rmtree(away, ignore_errors=True)
            if dict(os.environ) != env:
                os.environ.clear()
                os.environ.update(env)
            if ctx is not None:
                dec.setcontext(ctx)  # type: ignore[union-attr]  # (not None with ctx)
        except BaseException:  # noqa: BLE001 - this process's own state not restored: nothing here
            ns = {}
    out = {k: v for k, v in ns.items() if k[:2] != "__" and _plain(v) and type(again.get(k)) is type(v)
           and _plain(again[k]) and again[k] == v}
    # its helpers (``def norm(xs): return sorted(xs)``) too, those whose global names are all its
    # own data, builtins, or such helpers: they compute here, as the test's own functions
    builtins = vars(harness._G["builtins"])
    std = harness._G["stdlib_dicts"]
    modules = {k for k, v in ns.items() if type(v) is types.ModuleType and std.get(getattr(v, "__name__", None),
                                                                                  (None,))[0] is v}
    fns = {k: v for k, v in ns.items() if type(v) is types.FunctionType and v.__globals__ is ns
           and k[:2] != "__" and not failed}
    both = {k: _global_reads(v.__code__) for k, v in fns.items()}
    reads = {k: r[0] for k, r in both.items()}
    # state its helpers rebind (``global calls; calls += 1``): its own too where each such name
    # holds its own data or is one the setup does not bind (red-team pass 24: the helper and its
    # counter were the program process's, which chose what it computed); the helpers then run with
    # the test's namespace as their globals (:func:`_live_helpers`), as in one interpreter
    live = set().union(*(r[1] for r in both.values())) if both else set()
    keep_live = bool(live) and all(k in out or k not in ns for k in live)

    def own_helpers(fns: dict, allowed: set) -> dict:
        while True:
            bad = [k for k in fns if any(n not in out and n not in fns and n not in modules and n not in builtins
                                        and n not in allowed for n in reads[k])]
            if not bad:
                return fns
            for k in bad:
                del fns[k]

    kept = own_helpers(dict(fns), live) if keep_live else {}
    if keep_live and all(k in kept for k in fns if both[k][1]):
        out.update(kept)
        out.update({k: ns[k] for k in modules if any(k in reads[f] for f in kept)})
        out[_LIVE] = frozenset(live)  # (names it may bind: never the program process's)
        return out
    # (else that state stays the program process's, read there as it is now, with those helpers)
    for k in live:
        out.pop(k, None)
    out.update(own_helpers({k: v for k, v in fns.items() if not both[k][1]}, set()))
    return out


_LIVE = "__live__"  # (a key of :func:`_own_setup`'s answer: its helpers run in the test's namespace)


def _live_helpers(setup_own: dict, ns: dict) -> None:
    """The setup's own helpers made again with the test's namespace ``ns`` as their globals, in
    ``ns`` (their state rebinds there, where the test reads it)."""
    for k, v in setup_own.items():
        if type(v) is types.FunctionType:
            fn = types.FunctionType(v.__code__, ns, v.__name__, v.__defaults__, v.__closure__)
            fn.__kwdefaults__ = v.__kwdefaults__
            fn.__qualname__ = v.__qualname__
            ns[k] = fn


def _global_reads(co) -> tuple[set, set]:
    """The global names ``co`` and the code nested in it read, and those it stores or deletes."""
    reads: set = set()
    stores: set = set()
    for _, ins in nested_instructions(co):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            reads.add(ins.argval)
        elif ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            stores.add(ins.argval)
    return reads, stores


def _value_class(peer, value):
    """``value``, or the test's own class where it is the program's reference to a standard data
    class whose instances cross as the test's own values (:data:`.stand_ins._VALUE_CLASSES`): a
    program's ``from collections import Counter`` read by the test as ``Counter`` is then the class
    of what ``f()`` returns, as in one interpreter (red-team pass 28: ``type(f()) is Counter``
    failed a right program; ``collections.Counter`` through the program's module already was the
    test's own, :meth:`.stand_ins._Proxy.__getattr__`)."""
    if type(value) is not _ProgramClass:
        return value
    own = peer._own_function(value)
    if own is not None and (getattr(own, "__module__", None), getattr(own, "__qualname__", None)) in _VALUE_CLASSES:
        return own
    return value


def _std_data() -> tuple[frozenset, frozenset]:
    """(scalar-like classes, container classes) of :data:`.stand_ins.STD_VALUE_CLASSES` among the
    modules loaded: a setup's values of them are the test's own, which travel to the program's
    process as values (red-team pass 24: ``want = Fraction(1, 3)`` or a date was the program
    process's)."""
    scalars: set = set()
    containers: set = set()
    for mod, names in STD_VALUE_CLASSES:
        m = sys.modules.get(mod)
        for n in names:
            c = getattr(m, n, None) if m is not None else None
            if isinstance(c, type):
                (containers if mod == "collections" else scalars).add(c)
    return frozenset(scalars), frozenset(containers)


def _plain(v, budget: int = 100_000) -> bool:
    """Whether ``v`` is plain data (exact types, no cycles, at most ``budget`` items): numbers,
    strings, bytes, None, lists, tuples, sets and dicts of them, and the standard library's data
    classes (:data:`.stand_ins.STD_VALUE_CLASSES`)."""
    scalars, containers = _std_data()
    return plain_data(v, budget, scalars, containers)


# A test's builtins are the builtins and its standard modules the modules, whatever names the
# program binds (``exec(program); exec(test)`` would hand the test the program's: a wrong program
# defining ``abs = lambda x: 0`` passed ``assert abs(f(1) - 3.14) < 1e-6``, ``class math`` with
# an ``isclose`` always true passed ``assert math.isclose(f(1), 3.14)``: a reward-hacking route).
# Only the task's entry point (``own``: a task may ask for ``sum``) is the program's under such a
# name. A standard module's name the program does not bind stays undefined, as before: a test
# reading ``math`` that the program never imported fails with the NameError it would get.

_NOT_IMPORTED = frozenset({"this", "antigravity", "__main__", "idlelib", "tkinter", "turtle", "turtledemo"})


def _program_names(names: list, own: list, src: str) -> tuple[list, frozenset]:
    """(the free names to ask the program for, those of them the test reads as a standard module:
    ``math.isclose``, never called itself, so a program's function ``select`` stays the program's)."""
    import ast
    import builtins

    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    asked = [n for n in names if n in own or not hasattr(builtins, n)]
    candidates = {n for n in asked if n not in own and n in stdlib and n not in _NOT_IMPORTED}
    if not candidates:
        return asked, frozenset()
    based, called = set(), set()
    for node in ast.walk(ast.parse(src)):
        if type(node) is ast.Attribute and type(node.value) is ast.Name:
            based.add(node.value.id)
        elif type(node) is ast.Call and type(node.func) is ast.Name:
            called.add(node.func.id)
    return asked, frozenset(n for n in candidates if n in based and n not in called)


class _ForwardingModule(types.ModuleType):
    """A standard module of the test process whose attributes the test sets or deletes (``time.time
    = ...``, ``mock.patch('time.time')``, ``mock.patch.object(time, 'time')``): the program's
    module of that name gets the same change, as in one interpreter, where the test and the program
    import one module (the test's own ``import time`` and ``mock.patch('time.time', ...)`` did not
    reach the program's ``time.time()``: review 22)."""

    def __setattr__(self, name, value):
        types.ModuleType.__setattr__(self, name, value)
        _forward(self, name, value, "set")

    def __delattr__(self, name):
        types.ModuleType.__delattr__(self, name)
        _forward(self, name, None, "del")


_FORWARD: list = []  # [the test side's peer] once the test runs


def _forward(module, name, value, how) -> None:
    from .. import harness

    if not _FORWARD or type(name) is not str:
        return
    mod = types.ModuleType.__getattribute__(module, "__name__")
    kept = harness._G["stdlib_dicts"].get(mod)
    if kept is None:
        return
    if how == "set" and kept[1].get(name, harness._MISSING) is value:  # (put back: the program's own)
        how, value = "own", None
    _FORWARD[0].std_set.add((mod, name))  # (the test's own change: read back as it set it)
    _FORWARD[0].request("stdset", mod, name, how, value)


# the modules whose attributes the test may set for the program (not ``sys``, ``builtins``: the
# harness forwards what of them the test sets, :data:`.peer.FORWARDED_BUILTINS`, PROCESS_WORDS)
_NOT_FORWARDED = frozenset({"sys", "builtins", "importlib", "unittest", "warnings", "logging", "gc", "types",
                            "abc", "io", "_io", "typing", "enum", "weakref", "copyreg", "marshal", "traceback"})


def _forward_module_patches(peer, src: str) -> None:
    """The standard modules the test's text names (``time``, ``os.path``; the zygote's) forward the
    test's changes of their attributes to the program's (:class:`_ForwardingModule`)."""
    import re

    from .. import harness

    dicts = harness._G["stdlib_dicts"]
    names = set()
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", src):
        parts = word.split(".")
        for i in range(1, len(parts) + 1):
            names.add(".".join(parts[:i]))
    _FORWARD[:] = [peer]
    for n in names:
        kept = dicts.get(n)
        if kept is None or n.split(".")[0] in _NOT_FORWARDED or type(kept[0]) is not types.ModuleType:
            continue
        try:
            kept[0].__class__ = _ForwardingModule
        except TypeError:  # (a module object that cannot change its class: not forwarded)
            continue


def _own_import(name: str):
    """The test process's own import of the standard module ``name`` (None where it fails)."""
    import importlib

    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - (a module this process cannot import: the program's name stands)
        return None


def _program_module(peer, own: dict):
    """The program as the module ``solution`` of the test process (the name its module has where
    it runs): ``from solution import f`` and ``solution.f(x)`` read the program's names, but for
    the task setup's names this process computed (``own``, :func:`_own_setup`): those are read here
    (red-team pass 24: ``from solution import want`` read the program process's ``want``, which a
    program that wrapped the harness's ``run_setup`` chose)."""
    import types

    class ProgramModule(types.ModuleType):
        def __getattr__(self, name):
            if type(name) is str and name in own:
                return own[name]
            if type(name) is str and not name.startswith("__"):
                answer = peer.request("resolve", [name])
                if type(answer) is list and len(answer) == 1 and type(answer[0]) is list \
                        and len(answer[0]) == 2 and answer[0][0] == "value":
                    return answer[0][1]
            raise AttributeError(f"module 'solution' has no attribute {name!r}")

        def __setattr__(self, name, value):  # (``solution.K = 5``: the program's global, red-team pass 29)
            if type(name) is not str or name.startswith("__") or name in own:
                types.ModuleType.__setattr__(self, name, value)
            elif peer.request("setglobal", name, "new", value) is True:
                peer.take_global(name, value, None)

        def __delattr__(self, name):
            if type(name) is not str or name.startswith("__") or name in own:
                types.ModuleType.__delattr__(self, name)
            elif peer.request("setglobal", name, "del") is not True:
                raise AttributeError(name)

    return ProgramModule("solution")


def _changed(peer, given) -> list:
    """``[where, new contents]`` of each of the program's containers a call of the test's
    function was given that the call changed."""
    out = []
    for where, a, before in given:
        now = peer.to_wire(a)
        if now != before:
            out.append([where, now])
    return out


def _one_reply(peer, value, changes, given):
    """The reply of a call of the test's function that changed the program's containers it was
    given: where a container is held by more than one of its parts (its value, the changed
    containers' new contents), the value encoded (first in the message) and the changes again,
    so that it crosses once (``r = [0]; acc.append(r); return r``: :meth:`_Peer.share_across`)."""
    args = {w: a for w, a, _ in given}
    parts = [args[w] for w, _ in changes]
    across = _held_across([value] + parts, {id(a): n for n, a in enumerate(parts)})
    if not across:
        return value, changes
    peer.share_across(across)
    try:
        return _Raw(peer.to_wire(value)), [[w, peer.to_wire(args[w])] for w, _ in changes]
    finally:
        peer.share_across(None)


def _test_side_handle(peer, op, args):
    """What the program process may do with the test's objects it was given: call them,
    iterate, read public attributes and items, measure; write attributes of plain instances."""
    obj = args[0] if args else None
    if op == "bye":  # (never asked by a program process that follows the protocol)
        raise peer.broke("the program process hung up")
    if op == "kept":  # the program's changes to containers of the test's it keeps
        peer.apply_kept(obj)
        return None, None
    if op == "call":
        _refuse_mock_method(obj)
        call_args = args[1] if len(args) > 1 and type(args[1]) is list else []
        kwargs = args[2] if len(args) > 2 and type(args[2]) is dict else {}
        # the program's containers it is given (copies here): what the test's function changes in
        # them is changed in the program's too, as in Python (red-team pass 17: a callback filling
        # the program's grid filled a copy)
        given = [(w, a, peer.to_wire(a)) for w, a in list(enumerate(call_args)) + list(kwargs.items())
                 if type(a) in _NODE_KINDS]
        try:
            value, writeback = _as_node(peer, obj(*call_args, **kwargs))
        except Exception as exc:
            changes = _changed(peer, given)
            if changes:
                raise _Raised(exc, changes) from None
            raise
        changes = _changed(peer, given)
        if not changes:
            return value, writeback
        value, changes = _one_reply(peer, value, changes, given)
        if type(writeback) is _NodeNo:
            writeback.changes = changes
            return value, writeback
        return value, changes
    if op == "enter":  # a ``with`` of the program's on an object of the test's (``mock_open``'s handle)
        return _as_node(peer, type(obj).__enter__(obj))
    if op == "exit":
        desc = args[1] if len(args) > 1 else None
        ended = peer._exception(desc) if desc is not None else None
        return bool(type(obj).__exit__(obj, type(ended) if ended is not None else None, ended, None)), None
    if op == "stdin":  # the program reads its standard input: the test's (:class:`.program_side._TestStdin`)
        return _stdin(args), None
    if op == "warn":  # the program warns: the test's filters take it (:func:`.program_side._warn_through_test`)
        _warn(peer, args)
        return None, None
    if op == "log":  # the program logs: the test's logger of that name takes the record
        _log(peer, args)
        return None, None
    if op in ("getattr", "setattr", "delattr"):
        name = args[1]
        if type(name) is not str or name.startswith("_"):
            raise AttributeError(f"{name!r} is not available to the program")
        mock_api = _mock_api(obj)
        if mock_api is not None:  # the test's Mock: its management API is the test's alone
            if op != "getattr" or name in mock_api:
                raise AttributeError(f"{name!r} of the test's mock is not available to the program")
        if op == "getattr":
            return _as_node(peer, getattr(obj, name))
        if isinstance(obj, type) or callable(obj) or type(obj).__module__ in ("builtins",):
            raise AttributeError("the test's objects of this kind cannot be changed by the program")
        (setattr(obj, name, args[2]) if op == "setattr" else delattr(obj, name))
        return None, None
    if op == "getitem":
        return _as_node(peer, obj[args[1]])
    if op == "len":
        return len(obj), None
    if op == "bool":
        return bool(obj), None
    if op == "iter":
        return iter(obj), None
    if op == "next":
        return _as_node(peer, next(obj))
    if op == "contains":
        return args[1] in obj, None
    if op in ("str", "repr"):
        return (str if op == "str" else repr)(obj), None
    if op == "stdlib_class":  # the program's isinstance(x, cls) with a class of the test's: which
        # standard class it is, so that the program's process reads its own (red-team pass 28:
        # f(xs, Fraction) ERRORED where the program asked)
        return std_class_name(obj), None
    if op in ("copy", "deepcopy"):  # a copy of the test's: the program's changes to it stay in the copy
        import copy

        return (copy.copy(obj) if op == "copy" else copy.deepcopy(obj)), None
    raise TypeError(f"the program may not {op} the test's objects")


_MOCK_API: frozenset | None = None


def _mock_api(obj) -> frozenset | None:
    """The names of ``unittest.mock``'s management API (``configure_mock``, ``assert_*``,
    ``return_value``, ``call_args``...) where ``obj`` is a mock of the test's, else None. A program
    handed the test's mock (a patched ``builtins.print``, a Mock argument) reconfigured it through
    them: ``print.configure_mock(assert_called_once_with=ok)`` made the test's assertion a no-op
    (red-team pass 19). Only where the test has imported ``unittest.mock`` (nothing is imported)."""
    global _MOCK_API
    mock = sys.modules.get("unittest.mock")
    if mock is None or not isinstance(obj, mock.NonCallableMock):
        return None
    if _MOCK_API is None:
        names = set(dir(mock.NonCallableMock)) | set(dir(mock.CallableMixin)) | {"method_calls"}
        for extra in ("AsyncMockMixin", "NonCallableMagicMock", "MagicMixin"):
            names |= set(dir(getattr(mock, extra, object)))
        _MOCK_API = frozenset(n for n in names if not n.startswith("_"))
    return _MOCK_API


def _refuse_mock_method(obj) -> None:
    """A bound method of the management API of a test's mock is not called for the program."""
    owner = getattr(obj, "__self__", None) if isinstance(obj, types.MethodType) else None
    api = _mock_api(owner) if owner is not None else None
    if api is not None and getattr(obj, "__name__", None) in api:
        raise AttributeError(f"{obj.__name__!r} of the test's mock is not available to the program")


def _stdin(args):
    """What the program's ``input()`` or ``sys.stdin`` read returns in one interpreter: the test's
    ``input`` (``builtins.input``, which a test may patch) or its ``sys.stdin`` (its ``buffer``
    for bytes). Only these reads, with an int size: nothing else of the test's is reached."""
    import builtins

    what, arg, binary = (list(args) + [None, None, None])[:3]
    if what == "input" and (arg is None or type(arg) is str):
        return builtins.input() if arg is None else builtins.input(arg)
    if what not in ("read", "readline", "readlines") or type(arg) is not int or type(binary) is not bool:
        raise TypeError("malformed read of standard input")
    stream = sys.stdin
    if binary:
        stream = stream.buffer
    return getattr(stream, what)(arg)


def _warn(peer, args) -> None:
    """The program's warning, given to the test's ``warnings`` (its filters and ``showwarning``:
    shown, recorded or raised here, the exception then going back into the program's call); one
    registry per place (``"default"`` shows a place's warning once, as the module's registry does)."""
    import warnings

    text, category, where, line = (list(args) + [None] * 4)[:4]
    if type(text) is not str or not (isinstance(category, type) and issubclass(category, Warning)) \
            or type(where) is not str or type(line) is not int:
        raise TypeError("malformed warning")
    registries = peer.__dict__.setdefault("warn_registries", {})
    registry = registries.get((where, line))
    if registry is None and len(registries) < 1024:
        registry = registries[(where, line)] = {}
    # (the place as a name linecache never opens, no module globals: showing the warning read the
    # file the program named, in this process and under the test's uid; red-team pass 19)
    warnings.warn_explicit(text, category, f"<program {where[:200]}>", line, registry=registry, module_globals=None)


def _log(peer, args) -> None:
    """A record the program logged (:func:`.program_side._log_through_test`), handled by the
    test's logger of that name where its level lets it through (at most 1024 loggers made so)."""
    import logging

    name, level, level_name, text, exc, func, line = (list(args) + [None] * 7)[:7]
    if type(name) is not str or type(level) is not int or type(level_name) is not str or type(text) is not str \
            or not (exc is None or type(exc) is str) or type(func) is not str or type(line) is not int:
        raise TypeError("malformed log record")
    made = peer.__dict__.setdefault("loggers_made", set())
    if name and name not in logging.Logger.manager.loggerDict and len(made) >= 1024:
        return
    made.add(name)
    logger = logging.getLogger(name or None)
    if not logger.isEnabledFor(level):
        return
    record = logging.makeLogRecord({"name": logger.name, "levelno": level, "levelname": level_name, "msg": text,
                                    "args": None, "exc_text": exc, "funcName": func, "lineno": line,
                                    "pathname": "<solution>", "filename": "<solution>", "module": "solution"})
    logger.handle(record)
