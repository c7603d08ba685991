"""From what the sandbox reports to a cell's verdict: the parent's side of every test.

A cell's record (:class:`matrix.sandbox.records.CellRecord`) says how the cell ended; when the
processes in the sandbox sent a *claim*, this module decides what it means for the test's plan
(:mod:`matrix.plans`), accepting for each plan only the kind of claim it can produce:

* ``values`` plans (protected tests, call-style tests, extra inputs): a values claim, judged here
  on plain data, or the exception the program raised;
* ``stdio`` plans: the program's standard output (and how it ended), compared here;
* ``exec`` plans (generic tests): the verdict of the test's own process, which ran apart from the
  program (:mod:`matrix.sandbox.remote`), or the program's loading error.

Anything else (a claim of the wrong kind, a malformed one) is an ``error``: nothing a program
writes can say "the test ran". Every decoded value is bounded in size and in decoding work
(:func:`matrix.sandbox.encoding.decode`); a value too costly to decode is an ``error``.
"""

from __future__ import annotations

import builtins
import collections
import json
import signal
from json.scanner import make_scanner
from typing import Any

from matrix import plain
from matrix.plans import EqJudge, ExprJudge, Plan
from matrix.sandbox.encoding import ProgramAnswers, TooCostly, TooShared
from matrix.sandbox.harness import EXIT_CHANNEL, EXIT_FORBIDDEN, EXIT_HARNESS
from matrix.sandbox.records import LOAD_HANG, CellRecord, Frame, Outcome

__all__ = ["CellResult", "interpret", "decode_claims", "NEEDS_GENERIC", "MAX_ERROR"]

MAX_ERROR = 1000
DECODE_BUDGET = 0.5  # seconds of decoding work one cell's claim may cost the parent
NEEDS_GENERIC = object()  # the cell must run again as a generic test (a shadowed builtin)
_CLAIM = Outcome.CLAIM
_VALUES = bytes([int(Frame.VALUES)])
_NO_DATA = object()


class CellResult:
    """One cell's verdict: ``status`` (see :data:`matrix.engine.STATUSES`), the value of the
    test's candidate call or the program's stdout, an error message and the seconds it took."""

    __slots__ = ("status", "value", "error", "time")

    def __init__(self, status: str, value: Any = None, error: str = "", time: float = 0.0):
        self.status = status
        self.value = value
        self.error = error
        self.time = time

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __eq__(self, other):
        return isinstance(other, CellResult) and (self.status, self.value, self.error, self.time) == \
            (other.status, other.value, other.error, other.time)

    def __repr__(self):
        return f"CellResult(status={self.status!r}, value={self.value!r}, error={self.error!r}, time={self.time!r})"


def truncate(text: str, n: int = MAX_ERROR) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def decode_claims(records: list[CellRecord]) -> list[Any]:
    """The decoded body of each claim record (``_NO_DATA`` for the others, a ``ValueError``
    instance for a malformed or too costly one). Small bodies are parsed together, but for those
    holding shared parts (``{"S":``, which are malformed in a batch: each is parsed alone, so that
    the others still go together)."""
    out: list[Any] = [_NO_DATA] * len(records)
    small = [i for i, r in enumerate(records) if r.outcome == Outcome.CLAIM and 1 < len(r.payload) < 4096
             and _SHARED not in r.payload]
    if small:
        bodies = [records[i].payload[1:] for i in small]
        batch = b"[" + b",".join(bodies) + b"]"
        try:
            # a body is what a cell's process sent: it must be one JSON value, or a body holding
            # "1],[2" (or a top-level comma) would shift the values of the unit's later cells,
            # other programs' cells among them
            if not _one_value_each(batch, bodies):
                raise ValueError("a claim body is not one value")
            values = plain.decode(batch, budget=DECODE_BUDGET, together=True)  # (a body with shared parts: alone)
            if type(values) is not list or len(values) != len(small):
                raise ValueError("claim bodies and values differ in number")
            for i, v in zip(small, values):
                out[i] = v
        except ValueError:
            for i in small:
                out[i] = _decode_one(records[i].payload[1:])
    for i, r in enumerate(records):
        if r.outcome == Outcome.CLAIM and (len(r.payload) >= 4096 or (len(r.payload) > 1 and _SHARED in r.payload)):
            out[i] = _decode_one(r.payload[1:])
    return out


_SHARED = b'{"S":'  # (the encoder's tag of a shared part, as its JSON writes it)


_SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed types the context as the scanner


def _one_value_each(batch: bytes, bodies: list[bytes]) -> bool:
    """Whether ``batch`` (``[`` + the bodies joined by commas + ``]``) holds each body as exactly
    one JSON value, at its own place: the C scanner run from each body's first byte must end at its
    last. ASCII only (offsets in bytes and characters then agree; the sandbox's encoder escapes
    the rest), else False (each body is then decoded alone)."""
    if not batch.isascii():
        return False
    text = batch.decode("ascii")
    pos = 1
    scan = _SCAN
    try:
        for b in bodies:
            end = pos + len(b)
            if scan(text, pos)[1] != end:
                return False
            pos = end + 1
    except (StopIteration, ValueError, RecursionError):
        return False
    return True


def _decode_one(body: bytes) -> Any:
    try:
        return plain.decode(body, budget=DECODE_BUDGET)
    except ValueError as exc:
        return exc


def interpret(rec: CellRecord, plan: Plan, data: Any, timeout: float, max_output: int):
    """The :class:`CellResult` of ``rec`` under ``plan`` (``data``: its decoded claim), or
    :data:`NEEDS_GENERIC`."""
    secs = float(rec.seconds)
    o = rec.outcome
    if o is _CLAIM and plan.mode == "values" and rec.payload[:1] == _VALUES and type(data) is list \
            and len(data) == 2 and type(data[0]) is list and len(data[0]) == 1 and data[1] == [] \
            and not plan.names and type(plan.judge) is EqJudge and plan.judge.tol is None:
        v = data[0][0]  # the usual cell: one plain value, compared for equality
        if type(v) is not plain.NonPlain:
            try:
                ok = v == plan.judge.expected
            except Exception:
                ok = None
            if type(v) is plain.Member:  # an enum member: equal to what its value equals
                v = v.value
            if ok is True:
                return CellResult("pass", v, "", secs)
            if ok is False:
                return CellResult("fail", v, "", secs)
    if o == Outcome.TIMEOUT:
        if rec.payload == LOAD_HANG:
            return CellResult("timeout", None, f"loading the program took longer than {timeout:g}s", secs)
        if rec.payload and plan.mode == "values":
            part = _decode_one(rec.payload)
            if plan.fallback is not None and type(part) is list and len(part) == 3 and part[2] == 1:
                return NEEDS_GENERIC  # (a value the program changed after its hole ran: as in :func:`_values`)
            early = _failed_before(part, plan, secs)
            if early is not None:
                return early
        return CellResult("timeout", None, f"took longer than {timeout:g}s", secs)
    if o == Outcome.SKIPPED:
        return CellResult("timeout", None, "not run: the program timed out on an earlier input", 0.0)
    if o == Outcome.OUTPUT_LIMIT:
        return CellResult("output_limit", None, f"output exceeded {max_output} bytes", secs)
    if o == Outcome.SYNTAX:
        return CellResult("syntax_error", None, truncate(rec.payload.decode("utf-8", "replace")), secs)
    if o == Outcome.BAD_TEST:
        return CellResult("bad_test", None, truncate(rec.payload.decode("utf-8", "replace")), secs)
    if o == Outcome.SANDBOX:
        return CellResult("sandbox_error", None, truncate(rec.payload.decode("utf-8", "replace")
                                                          or "the sandbox could not run the cell"), secs)
    if o == Outcome.PROTOCOL:
        return CellResult("error", None, "the program wrote garbage into the result channel", secs)
    if o == Outcome.MEMORY:
        return CellResult("memory", None, "the program's processes exceeded the memory limit", secs)
    if o == Outcome.FORBIDDEN:
        what = _last_line(rec.stderr)
        return CellResult("error", None, truncate(what or "the program used an operation the sandbox forbids"), secs)
    if o == Outcome.DIED:
        return _died(rec, plan, secs)
    if o != Outcome.CLAIM or not rec.payload:
        return CellResult("error", None, "malformed result", secs)
    kind = rec.payload[0]
    if isinstance(data, ValueError):
        if isinstance(data, TooShared) and plan.fallback is not None:
            return NEEDS_GENERIC  # (a value of many references to shared parts: the test's own run walks it)
        msg = str(data) if isinstance(data, TooCostly) else "malformed result"
        return CellResult("error", None, msg, secs)
    if kind == Frame.TOO_LARGE:
        return CellResult("output_limit", None, "the returned value exceeded the output cap", secs)
    if kind == Frame.RAISED:
        return _raised(data, plan, secs, stdout=None)
    if plan.mode == "values" and kind == Frame.VALUES:
        return _values(data, plan, secs)
    if plan.mode == "stdio" and kind == Frame.STDOUT:
        try:
            stdout, info = data
            stdout = str(stdout)
        except (TypeError, ValueError):
            return CellResult("error", None, "malformed result", secs)
        if info is None:
            return _judge_stdout(plan, stdout, secs)
        return _raised(info, plan, secs, stdout=stdout)
    if plan.mode == "exec" and kind == Frame.VERDICT:
        if data is None:
            return CellResult("pass", None, "", secs)
        return _raised(data, plan, secs, stdout=None)
    return CellResult("error", None, "the program sent a result this test cannot produce", secs)


def _last_line(err: bytes) -> str:
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if lines else ""


def _died(rec: CellRecord, plan: Plan, secs: float) -> CellResult:
    info = rec.exit_info
    last = _last_line(rec.stderr)
    if info < 0:
        what = f"killed by {_signame(-info)}"
    elif info == EXIT_HARNESS:
        what = "the sandbox harness failed in the program's process"
    elif info == EXIT_CHANNEL:
        what = "the program closed or replaced the result channel"
    elif info == EXIT_FORBIDDEN:
        what = "the program used an operation the sandbox forbids"
    else:
        what = f"exited with status {info} before the test finished"
    if "MemoryError" in last or "Cannot allocate memory" in last or "out of memory" in last.lower():
        return CellResult("memory", None, truncate(f"{what}: {last}"), secs)
    return CellResult("error", None, truncate(f"{what}: {last}" if last else what), secs)


def _failed_before(partial, plan: Plan, secs: float) -> CellResult | None:
    """``fail`` when a hole raised or hung (``partial``: ``[values of the holes before it, name
    statuses]``) after a claim that a plain run judges first came out false; else None (the
    error or timeout stands). Only ever a ``fail``: a sandbox's partial values cannot pass a test."""
    try:
        values, names = partial
        values, names = list(values), list(names)
    except (TypeError, ValueError):
        return None
    if len(values) >= len(plan.exprs) or len(names) != len(plan.names) or any(st not in (0, 1) for st in names):
        return None  # a shadowed name: the claims would not read as the plain run reads them
    return _false_claim_first(values, names, plan, secs)


def _false_claim_first(values: list, names: list, plan: Plan, secs: float) -> CellResult | None:
    """``fail`` when, of the claims a plain run judges with ``values`` (the holes that ran), one is
    false before any that raises or reads a name the program leaves undefined (``names``: the
    statuses of ``plan.names``, none shadowed); else None."""
    judge, undefined = plan.judge, _undefined(plan, names)
    if type(judge) is not ExprJudge or not judge.steps or undefined is None or \
            not judge.fails_before(values, undefined):
        return None
    first = values[0] if values else None
    return CellResult("fail", _shown(first), "", secs)


def _undefined(plan: Plan, names: list) -> frozenset | None:
    """The names the program leaves undefined (a test's ``math`` without ``import math``), or
    None when one of them is a builtin (the test's loops and generators were written out with
    it: a plain run stops at its ``NameError`` before any claim)."""
    out = frozenset(n for n, st in zip(plan.names, names) if st == 1)
    return None if any(hasattr(builtins, n) for n in out) else out


def _raised(exc_info, plan: Plan, secs: float, stdout) -> Any:  # (a CellResult or NEEDS_GENERIC)
    try:
        where, _name, msg, cat, *partial = exc_info
        msg = str(msg)
    except (TypeError, ValueError):
        return CellResult("error", None, "malformed result", secs)
    if partial and where == "test" and plan.mode == "values" and plan.fallback is not None \
            and type(partial[0]) is list and len(partial[0]) == 3 and partial[0][2] == 1:
        return NEEDS_GENERIC  # (a value the program changed after its hole ran: as in :func:`_values`)
    if partial and where == "test" and plan.mode == "values" and cat != "assert":
        early = _failed_before(partial[0], plan, secs)
        if early is not None:
            return early
    if where == "code" and cat != "assert":
        msg = "while loading the code: " + msg
    elif where == "setup":
        msg = "in the task's setup: " + msg
    if cat == "assert":
        return CellResult("fail", stdout if plan.mode == "stdio" else None, truncate(msg), secs)
    if cat == "memory":
        return CellResult("memory", None, truncate(msg), secs)
    if cat == "output":
        return CellResult("output_limit", None, truncate(msg), secs)
    return CellResult("error", None, truncate(msg), secs)


def _values(data, plan: Plan, secs: float):
    if type(data) is list and len(data) == 3 and data[2] == 1:
        # a hole's value the program changed after the hole ran (``a = f(1); b = f(2)``, a mutable
        # default argument; harness ``run_one``): its claim reads it later, as only the test's own
        # run can (red-team pass 26: a split test read the value as it was returned)
        return NEEDS_GENERIC if plan.fallback is not None else CellResult(
            "error", None, "the program changed a value after returning it", secs)
    try:
        values, names = data
        values = list(values)
        names = list(names)
    except (TypeError, ValueError):
        return CellResult("error", None, "malformed result", secs)
    if len(values) != len(plan.exprs) or len(names) != len(plan.names):
        return CellResult("error", None, "malformed result", secs)
    for name, st in zip(plan.names, names):
        if st == 2:
            return NEEDS_GENERIC if plan.fallback is not None else CellResult(
                "error", None, f"the program redefines {name}", secs)
        if st not in (0, 1):
            return CellResult("error", None, "malformed result", secs)
    missing = [name for name, st in zip(plan.names, names) if st == 1]
    if missing:  # a NameError where the first claim reads it, unless an earlier claim is false
        return _false_claim_first(values, names, plan, secs) or CellResult(
            "error", None, f"NameError: name '{missing[0]}' is not defined", secs)
    first = values[0] if values else None
    # program objects: an enum member (Member) equals its value, any other object nothing of the test's
    nonplain = next((v for v in values if isinstance(v, plain.NonPlain) and type(v) is not plain.Member), None)
    member = next((v for v in values if type(v) is plain.Member), None)
    shown = _shown(first)
    if plan.judge is None:
        if nonplain is not None:
            return CellResult("error", None, f"returned a {nonplain.type_name}, not plain data", secs)
        return CellResult("pass", shown, "", secs)
    try:
        ok = plan.judge(values)
    except plain.TooBig:  # e.g. math.factorial(f(2)) with f(2) == 10**7: Python would run and run
        if plan.fallback is not None:
            return NEEDS_GENERIC  # the test runs in the sandbox, under the cell's limits
        return CellResult("timeout", shown, "the test's expression is too costly to evaluate", secs)
    except Exception as exc:
        if plan.fallback is not None and (nonplain is not None or member is not None
                                          or isinstance(exc, ProgramAnswers) or _holds_program_object(values)):
            # `x in obj`, `obj[i]`...: the program's own object must answer (one inside a value
            # too: `not any([I(1)])` asks its class's __bool__, `x[0] + 1` its __add__)
            return NEEDS_GENERIC
        return CellResult("error", shown, truncate(f"{type(exc).__name__}: {plain.display(exc, 900)}"), secs)
    if ok:
        return CellResult("pass", shown, "", secs)
    msg = f"returned a {nonplain.type_name}, not plain data" if nonplain is not None and nonplain.truth is None else ""
    return CellResult("fail", shown, msg, secs)


def _holds_program_object(values: list, budget: int = 10000) -> bool:
    """Whether a program object (:class:`plain.NonPlain`, :class:`plain.Member`) is inside one of
    ``values`` (lists, tuples, sets, deques, dict keys and values; at most ``budget`` items looked
    at). Asked only where a claim raised."""
    stack = list(values)
    while stack and budget > 0:
        budget -= 1
        v = stack.pop()
        if isinstance(v, plain.NonPlain):
            return True
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset, collections.deque)):
            stack.extend(v)
    return False


def _shown(value: Any) -> Any:
    """The value a cell shows: a program object is none, an enum member its own value."""
    if type(value) is plain.Member:
        return value.value
    return None if isinstance(value, plain.NonPlain) else value


def _judge_stdout(plan: Plan, stdout: str, secs: float) -> CellResult:
    if plan.judge is None or plan.judge(stdout):
        return CellResult("pass", stdout, "", secs)
    return CellResult("fail", stdout, "", secs)


def loads(body: bytes):
    return json.loads(body)
