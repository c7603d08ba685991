"""Typed records at the sandbox's boundaries.

* :class:`Frame` kinds: what a process the sandbox started may write on its result channel. A
  frame is ``<u32 length><8-byte token><u8 kind><f64 seconds><body>``; the token is drawn per
  process by the worker and given to it with its command, so a frame written by a program that
  does not know it is garbage. Frames are *claims*: the verdict is decided elsewhere.
* :class:`Outcome`: how a cell ended, as the worker reports it to the parent in a
  :class:`CellRecord`. ``CLAIM`` records carry the claim (kind byte + JSON body) as payload.
* :class:`Unit` / :class:`Row`: the work the parent sends to a worker.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

__all__ = ["Frame", "Outcome", "CellRecord", "Row", "Unit", "REC", "FRAME_HEADER", "TOKEN_BYTES",
           "pack_records", "unpack_records", "MAX_ERR", "STDERR_TAIL"]

MAX_ERR = 1000  # characters of an error message kept
STDERR_TAIL = 2000  # bytes of a dead process's stderr kept
TOKEN_BYTES = 8
FRAME_HEADER = struct.Struct("<I8sBd")  # length of what follows the u32, token, kind, seconds


class Frame(IntEnum):
    """Frame kinds on a result channel (process -> worker)."""

    SYNTAX = 1  # the program does not compile; body: message (before any program code ran)
    BAD_PROBE = 2  # body: JSON [probe index or -1 for the setup, message]
    PLAN = 3  # body: JSON {"isolate": [probe indices] | "all", "deterministic": bool}
    LOADED = 4  # the program's module ran without raising (the first test's load)
    VALUES = 5  # a values claim: JSON [[encoded values], [name statuses]]
    RAISED = 6  # JSON [where, type name, message, category]
    STDOUT = 7  # a stdin/stdout program's claim: JSON [stdout, exception info or null]
    VERDICT = 8  # a test process's verdict: JSON ["pass" | "fail" | "error", message]
    ABNORMAL = 9  # the test must be re-run alone in a fresh process; body: reason
    TOO_LARGE = 10  # the claim exceeded the output cap
    LOAD_FAILED = 11  # like RAISED, for the program's module: the same for every test
    DONE = 12  # the runner finished a row and waits for the next one
    TIMED_OUT = 13  # the test ran past its time (the runner's own timer); body b"load": loading did


class Outcome(IntEnum):
    """How a cell ended (worker -> parent)."""

    CLAIM = 0  # payload: one kind byte (a Frame value) + the claim's JSON body
    TIMEOUT = 1  # wall-clock (or CPU) limit (payload LOAD_HANG: while loading the program; else
    # empty, or the JSON [values, name statuses] of the holes that ran before the hang)
    DIED = 2  # ended without a complete claim; exit_info: exit status or -signal
    OUTPUT_LIMIT = 3  # stdout, stderr, a file written or the claim reached the output cap
    SYNTAX = 4  # the program does not compile (payload: message)
    BAD_TEST = 5  # the test or the setup does not compile (payload: message)
    PROTOCOL = 6  # the process wrote something that is not a frame of its own
    SANDBOX = 7  # the sandbox could not run the cell (payload: message)
    MEMORY = 8  # the memory limit of the cell's process tree (cgroup) was hit
    FORBIDDEN = 9  # the process was stopped for an operation the sandbox forbids (payload: what)
    SKIPPED = 10  # an optional cell not run: its program had timed out in this row
    REQUEUE = 11  # not run: the row stopped after a timeout so that the executor can spread the rest


# a program loaded in a cell of its own (isolated or generic) may take this long to load (heavy
# imports: numpy takes ~0.15 s) before its test's own time starts, as in a harness that loads a
# program once and times each test; one that takes longer hangs for every test (settled by rule)
LOAD_ALLOWANCE = 1.0
LOAD_HANG = b"load"  # TIMEOUT payload: the program was still loading, no test code had run

REC = struct.Struct("<IBidIII")  # key, outcome, exit info, seconds, len(payload), len(stdout), len(stderr)


class CellRecord:
    """How one cell ended (worker -> parent): ``outcome``, exit status or -signal, seconds, the
    claim (``CLAIM``: one :class:`Frame` kind byte + JSON body) or a message, stdout, stderr."""

    __slots__ = ("key", "outcome", "exit_info", "seconds", "payload", "stdout", "stderr")

    def __init__(self, key: int, outcome: Outcome, exit_info: int = 0, seconds: float = 0.0,
                 payload: bytes = b"", stdout: bytes = b"", stderr: bytes = b""):
        self.key, self.outcome, self.exit_info, self.seconds = key, outcome, exit_info, seconds
        self.payload, self.stdout, self.stderr = payload, stdout, stderr

    def __repr__(self):
        return f"CellRecord({self.key}, {self.outcome!r}, {self.exit_info}, {self.seconds:.4f}, {self.payload[:60]!r})"


def pack_records(unit_id: int, records: list[CellRecord]) -> bytes:
    body = [b"U", struct.pack("<II", unit_id, len(records))]
    add, pack = body.append, REC.pack
    for r in records:
        payload, stdout, stderr = r.payload, r.stdout, r.stderr
        add(pack(r.key, r.outcome, r.exit_info, r.seconds, len(payload), len(stdout), len(stderr)))
        add(payload)
        if stdout or stderr:
            body.extend((stdout, stderr))
    return b"".join(body)


_OUTCOMES = {int(o): o for o in Outcome}


def unpack_records(frame: bytes) -> tuple[int, list[CellRecord]]:
    unit_id, n = struct.unpack_from("<II", frame, 1)
    off = 9
    out = []
    outcomes = _OUTCOMES
    unpack = REC.unpack_from
    size = REC.size
    for _ in range(n):
        key, outcome, info, secs, lp, lo, le = unpack(frame, off)
        off += size
        payload = frame[off:off + lp]
        off += lp
        stdout = frame[off:off + lo] if lo else b""
        off += lo
        stderr = frame[off:off + le] if le else b""
        off += le
        out.append(CellRecord(key, outcomes.get(outcome, Outcome.PROTOCOL), info, secs, payload, stdout, stderr))
    return unit_id, out


@dataclass
class Row:
    """One program against some tests: ``cells`` are (record key, probe index, optional)."""

    program: int  # index into Unit.programs
    setup: int  # index into Unit.setups
    kind: str  # "function" | "stdio"
    cells: list[tuple[int, int, bool]] = field(default_factory=list)


@dataclass
class Unit:
    """Work for a worker: distinct program and setup sources, probes (the sandbox side of each
    test, see :mod:`matrix.plans`), and rows. ``import_paths`` only matter at worker start."""

    programs: list[str]
    setups: list[str]
    probes: list[tuple]
    rows: list[Row]
    timeout: float

    def to_wire(self) -> dict:
        return {"programs": self.programs, "setups": self.setups, "probes": self.probes,
                "rows": [(r.program, r.setup, r.kind, r.cells) for r in self.rows],
                "timeout": self.timeout}

    @classmethod
    def from_wire(cls, d: dict) -> Unit:
        return cls(list(d["programs"]), list(d["setups"]), list(d["probes"]),
                   [Row(p, s, k, [tuple(c) for c in cells]) for p, s, k, cells in d["rows"]],
                   float(d["timeout"]))
