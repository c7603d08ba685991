"""The task's setup computed where no program code ever ran (red-team pass 23).

A split test's holes that read nothing but what the task's setup bound and the builtins (``want``,
``sorted(want)``, a setup helper's ``norm([3, 1])``) were computed and encoded in the program's
process, after the program: a program reaching the harness through ``sys.modules`` chose them
(``_G['encode']`` wrapped, ``run_setup`` wrapped, the harness's table of genuine builtins or of
the standard modules changed, the result channel's frames rewritten), and ``assert f(3) == want``
passed a wrong ``f``. Here a process of its own (mode ``setup``: the zygote's fork, no program
loaded) runs the setup alone and computes those holes; the worker puts its values in place of the
program process's (:func:`merge`). A setup that cannot run alone (it reads the program's
definitions: MBPP's trees of the program's ``Node``) gives nothing here, and its values stay the
program process's, as they are the program's anyway."""

from __future__ import annotations

import json
import os

from .records import Frame

_VALUES = bytes([int(Frame.VALUES)])
_RAISED = bytes([int(Frame.RAISED)])


def run_setup_cell(cmd: dict, chan) -> None:
    """Mode ``setup``: for each probe of ``cmd["probes"]``, the setup run afresh (a helper counting
    its calls counts from the start, as in the test's own process) and the values of the probe's
    setup-only holes: ``[[hole index, encoded value], ...]`` (``[]`` for a probe with none, or one
    that is not a values probe); null for all when the setup does not run alone."""
    from . import harness

    G = harness._G
    harness._real_streams()
    try:
        setup_co, _, _ = harness.compile_source(cmd["setup"], "<setup>", guard=False)
    except harness._COMPILE_ERRORS:
        chan.send_json(Frame.VALUES, None)
        return
    harness._reset_interpreter("solution.py", False)
    out: list = []
    for raw in cmd["probes"]:
        try:
            probe = harness.compile_probe(raw, guard=False)
        except harness._COMPILE_ERRORS + (ValueError,):
            out.append([])
            continue
        if probe[0] != "values":
            out.append([])
            continue
        runs = []
        for _ in range(2):  # (twice: a value that differs from run to run, ``random.random()``
            # unseeded, is the program process's run's, which its holes computed with)
            mod = G["modtype"]("solution")
            ns = mod.__dict__
            ns["__builtins__"] = G["builtins"]
            G["sysmods"]["solution"] = mod
            kept: list = []
            try:
                bound = harness.run_setup(setup_co, ns, kept)
            except G["BaseException"]:
                # it needs the program: only what it bound before, never named again, is its own
                alone = run_alone(setup_co, G)
                if alone is None:
                    chan.send_json(Frame.VALUES, None)  # (its values are the program's)
                    return
                bound, kept = alone, []
            pinned = tuple(probe[4]) + tuple(harness._guarded(bound, kept).items())
            try:
                got = harness._setup_values(probe[1], ns, pinned, bound) if bound else {}
                if bound:
                    got.update(_raised_alone(probe[1], ns, pinned, bound, got, harness))
                runs.append(got)
            except G["BaseException"]:
                runs.append({})
        same = [[i, v] for i, v in runs[0].items() if i in runs[1] and _same(v, runs[1][i])]
        out.append(same)
    chan.send_json(Frame.VALUES, out)


def _raised_alone(exprs, ns, pinned, bound, got, harness) -> dict:
    """``{hole: {"raised": exception info}}`` for the holes :func:`.harness._setup_values` left
    (they raised here) that read nothing but the setup's plain data and the pinned builtins: such
    a hole raises in the program's process too, where that data is the same (red-team pass 24: a
    program sent a value for ``want[7]``, ``want = [1, 2, 3]``, and a test that is an error for every
    program passed). Not a hole reading a function of the setup's (it may call the program's) nor
    one failing with NameError (a name the setup binds only with the program)."""
    G = harness._G
    allowed = {n for n, _ in pinned}
    code_type = G["type"](_raised_alone.__code__)
    out = {}
    for i, e in enumerate(exprs):
        if i in got or not e.co_names or not all(n in allowed for n in e.co_names) \
                or any(G["type"](c) is code_type for c in e.co_consts) or not any(n in bound for n in e.co_names) \
                or not all(plain_data(bound[n]) for n in e.co_names if n in bound):
            continue
        try:
            eval(e, ns, G["mapping_proxy"](dict(pinned)))
        except (harness._Timeout, harness._OutputCap):
            raise
        except G["BaseException"] as exc:
            if not isinstance(exc, (NameError, RecursionError, MemoryError)):
                out[i] = {"raised": harness.exc_info(exc, "test", None)}
    return out


def _same(a, b) -> bool:
    """Whether two encoded values are the same (their JSON text: a NaN is not equal to itself)."""
    try:
        return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)
    except (TypeError, ValueError, RecursionError):
        return False


_ANY_NAME = frozenset({"globals", "locals", "vars", "exec", "eval", "__dict__", "setattr", "delattr",
                       "__import__", "__builtins__", "sys", "builtins", "gc", "inspect"})


def nested_instructions(co):
    """``(code object, instruction)`` for each instruction of ``co`` and of the code nested in it."""
    import dis

    stack = [co]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            yield c, ins
        stack.extend(x for x in c.co_consts if type(x) is type(co))


def alone_names(co) -> frozenset:
    """The names a setup binds once and names nowhere else (no read, no other store, in its code or
    the code nested in it), nor reaches by another way (``globals()``, ``exec``, ``import *``): bound
    before the setup first reads the program's definitions (``want = [1, 2, 3]`` then ``root =
    Node(1)``), what they hold is computed without the program, whatever follows."""
    seen: dict = {}
    for c, ins in nested_instructions(co):
        if ins.opname == "IMPORT_STAR":
            return frozenset()
        if type(ins.argval) is str:
            if ins.argval in _ANY_NAME:
                return frozenset()
            n = seen.setdefault(ins.argval, [0, 0])
            n[0] += 1
            n[1] += ins.opname == "STORE_NAME" and c is co
    return frozenset(k for k, (uses, stores) in seen.items() if uses == 1 and stores == 1 and k[:2] != "__")


def alone_data(co, ns) -> dict:
    """What a setup that raised (it reads the program's definitions) bound in ``ns`` before that
    and holds as its own: the plain data under :func:`alone_names` (not a function: it reads names
    the rest may rebind)."""
    safe = alone_names(co)
    return {k: v for k, v in ns.items() if k in safe and plain_data(v)}


def run_alone(setup_co, G) -> dict | None:
    """The setup run without the program (a fresh ``solution`` module over the builtins): what it
    bound, or when it raised (it reads the program's definitions), what :func:`alone_names` holds of
    what it bound before that; None when that is nothing."""
    mod = G["modtype"]("solution")
    ns = mod.__dict__
    ns["__builtins__"] = dict(G["genuine"])
    G["sysmods"]["solution"] = mod
    before = dict(ns)
    try:
        exec(setup_co, ns)
    except G["BaseException"]:
        return alone_data(setup_co, ns) or None
    return {k: v for k, v in ns.items() if k != "__builtins__" and before.get(k, _NONE) is not v}


_NONE = object()
_SCALARS = frozenset({int, float, complex, str, bytes, bool, type(None)})


def plain_data(v, budget: int = 100_000, scalars: frozenset = frozenset(), containers: frozenset = frozenset()) -> bool:
    """Whether ``v`` is plain data: exact numbers, strings, bytes, None, and lists, tuples, sets,
    frozensets and dicts of them (no cycle, at most ``budget`` items); and objects of the classes
    ``scalars`` (a naive one where it has a ``tzinfo``) and ``containers`` (a ``deque`` holding
    items, the others mappings) that the caller admits (the test process: :func:`.remote.test_side._plain`)."""
    stack = [v]
    while stack:
        x = stack.pop()
        budget -= 1
        if budget < 0:
            return False
        t = type(x)
        if t in _SCALARS or (t in scalars and getattr(x, "tzinfo", None) is None):
            continue
        if t is list or t is tuple or t is set or t is frozenset or (t in containers and t.__name__ == "deque"):
            stack.extend(x)
        elif t is dict or t in containers:
            stack.extend(x.keys())
            stack.extend(x.values())
        else:
            return False
    return True


def _is_raise(v) -> bool:
    return type(v) is dict and len(v) == 1 and type(v.get("raised")) is list and len(v["raised"]) == 4 \
        and all(type(x) is str for x in v["raised"])


def parse(payload: bytes, n: int) -> list | None:
    """The setup cell's claim (a ``Frame.VALUES`` body) for ``n`` probes: one ``{hole: value}``
    for each, or None (the setup did not run alone, or the answer is malformed)."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if type(data) is not list or len(data) != n:
        return None
    out = []
    for pairs in data:
        if type(pairs) is not list:
            return None
        got = {}
        for p in pairs:
            if type(p) is not list or len(p) != 2 or type(p[0]) is not int or p[0] < 0:
                return None
            got[p[0]] = p[1]
        out.append(got)
    return out


def merge(payload: bytes, trusted: dict) -> bytes:
    """A program cell's claim (the frame kind's byte, then its JSON body) with the setup-only
    holes' values put in from ``trusted`` (``{hole: encoded value}``): a ``Frame.VALUES`` claim's
    values, or the values a ``Frame.RAISED`` claim carries of the holes that ran before the raise.
    Anything else, or a body that does not parse, is returned as it is (it claims no value)."""
    if not trusted or payload[:1] not in (_VALUES, _RAISED):
        return payload
    values = payload[:1] == _VALUES
    token = os.urandom(8).hex()
    big: list = []

    def parse_int(s):  # (an int of more digits than ``int()`` reads here: kept as its text)
        if len(s) < 4000:
            return int(s)
        big.append(s)
        return f"{token}{len(big) - 1}"

    try:
        body = json.loads(payload[1:], parse_int=parse_int)
    except (ValueError, RecursionError):
        body = None
    if values:  # (the shape the verdict reads, exactly: a tagged tuple of values, ``{"t": [...]}``,
        # or a body Python's JSON does not read would keep the program's values: malformed)
        encoded = body[0] if type(body) is list and len(body) in (2, 3) and type(body[0]) is list else None
        if encoded is None:
            return _VALUES + b"null"
    else:  # (a raise's values before it can only make a test fail, never pass: kept as they are)
        part = body[4] if type(body) is list and len(body) > 4 else None
        encoded = part[0] if type(part) is list and part and type(part[0]) is list else None
        if encoded is None:
            return payload
    raised = [i for i, v in trusted.items() if _is_raise(v) and i < len(encoded)]
    for i, v in trusted.items():
        if i < len(encoded) and not _is_raise(v):
            encoded[i] = v
    if raised:  # (a hole that raises with the setup's data alone: the test raises there, in order)
        first = min(raised)
        names = body[1] if values else (body[4][1] if len(body[4]) > 1 else [])
        body = trusted[first]["raised"] + [[encoded[:first], names]]
        text = json.dumps(body, ensure_ascii=True, separators=(",", ":"))
        for n in range(len(big) - 1, -1, -1):
            text = text.replace(f'"{token}{n}"', big[n])
        return _RAISED + text.encode("ascii")
    text = json.dumps(body, ensure_ascii=True, separators=(",", ":"))
    for n in range(len(big) - 1, -1, -1):  # (backwards: token + "1" is a prefix of token + "10")
        text = text.replace(f'"{token}{n}"', big[n])
    return payload[:1] + text.encode("ascii")
