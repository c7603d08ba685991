"""The task, code and test records of docs/contracts.md, and their validated JSONL loaders.

A :class:`Test` is one of three kinds:

* ``assert``: a Python statement such as ``assert add(1, 2) == 3`` (function tasks);
* ``stdio``: ``input`` fed on stdin, ``output`` the expected stdout (program tasks);
* ``call``: ``call`` is a call expression such as ``add(1, 2)`` and ``expected`` a Python literal
  such as ``3``; the comparison happens outside the candidate's process, on plain data.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from matrix.errors import InputError
from matrix.jsonl import read_jsonl

TASK_KINDS = ("function", "stdio")


@dataclass(frozen=True)
class Test:
    __test__ = False  # not a pytest test class

    kind: str
    test: str | None = None  # assert statement (kind == "assert")
    input: str | None = None  # stdin (kind == "stdio")
    output: str | None = None  # expected stdout (kind == "stdio")
    call: str | None = None  # call expression (kind == "call")
    expected: str | None = None  # Python literal of the expected value (kind == "call")

    @staticmethod
    def assertion(src: str) -> Test:
        return Test(kind="assert", test=src)

    @staticmethod
    def stdio(stdin: str, stdout: str) -> Test:
        return Test(kind="stdio", input=stdin, output=stdout)

    @staticmethod
    def call_expected(call: str, expected: str) -> Test:
        return Test(kind="call", call=call, expected=expected)

    def to_json(self) -> dict[str, Any]:
        """The tests-contract fields (without ``task_id``)."""
        if self.kind == "assert":
            return {"test": self.test}
        if self.kind == "stdio":
            return {"input": self.input, "output": self.output}
        return {"call": self.call, "expected": self.expected}

    def display(self) -> str:
        """A short human-readable form (for prompts, feedback and pytest files)."""
        if self.kind == "assert":
            return self.test or ""
        if self.kind == "stdio":
            return f"input:\n{self.input}\nexpected output:\n{self.output}"
        return f"assert {self.call} == {self.expected}"

    @staticmethod
    def from_json(obj: dict[str, Any], *, file: str | None = None, line: int | None = None,
                  prefix: str = "") -> Test:
        """Parse one test object; raises :class:`InputError` naming the offending field."""
        if "test" in obj:
            _require_str(obj, "test", file, line, prefix)
            return Test.assertion(obj["test"])
        if "input" in obj or "output" in obj:
            _require_str(obj, "input", file, line, prefix)
            _require_str(obj, "output", file, line, prefix)
            return Test.stdio(obj["input"], obj["output"])
        if "call" in obj or "expected" in obj:
            _require_str(obj, "call", file, line, prefix)
            _require_str(obj, "expected", file, line, prefix)
            return Test.call_expected(obj["call"], obj["expected"])
        raise InputError("a test needs 'test', or 'input' and 'output', or 'call' and 'expected'",
                         file=file, line=line, field=(prefix.rstrip(".") or "test"))


@dataclass
class Task:
    task_id: str
    prompt: str
    kind: str = "function"
    entry_point: str | None = None
    setup: str = ""
    tests: list[Test] = field(default_factory=list)
    solutions: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["tests"] = [t.to_json() for t in self.tests]
        return d

    @staticmethod
    def from_json(obj: dict[str, Any], *, file: str | None = None, line: int | None = None) -> Task:
        for name in ("task_id", "prompt"):
            _require_str(obj, name, file, line)
        kind = obj.get("kind", "function")
        if kind not in TASK_KINDS:
            raise InputError(f"must be one of {TASK_KINDS}, got {kind!r}", file=file, line=line,
                             field="kind")
        entry = obj.get("entry_point")
        if entry is not None and not isinstance(entry, str):
            raise InputError("must be a string or null", file=file, line=line, field="entry_point")
        setup = obj.get("setup", "") or ""
        if not isinstance(setup, str):
            raise InputError("must be a string", file=file, line=line, field="setup")
        tests_raw = obj.get("tests", []) or []
        if not isinstance(tests_raw, list):
            raise InputError("must be a list of tests", file=file, line=line, field="tests")
        tests = []
        for i, t in enumerate(tests_raw):
            if not isinstance(t, dict):
                raise InputError("must be an object", file=file, line=line, field=f"tests[{i}]")
            tests.append(Test.from_json(t, file=file, line=line, prefix=f"tests[{i}]."))
        sols = obj.get("solutions", []) or []
        if not isinstance(sols, list) or not all(isinstance(s, str) for s in sols):
            raise InputError("must be a list of strings", file=file, line=line, field="solutions")
        meta = obj.get("meta", {}) or {}
        if not isinstance(meta, dict):
            raise InputError("must be an object", file=file, line=line, field="meta")
        return Task(task_id=obj["task_id"], prompt=obj["prompt"], kind=kind, entry_point=entry,
                    setup=setup, tests=tests, solutions=list(sols), meta=dict(meta))


def _require_str(obj: dict[str, Any], name: str, file, line, prefix: str = "") -> None:
    if name not in obj:
        raise InputError("missing", file=file, line=line, field=prefix + name)
    if not isinstance(obj[name], str):
        raise InputError(f"must be a string, got {type(obj[name]).__name__}", file=file, line=line,
                         field=prefix + name)


def load_tasks(path: str | os.PathLike) -> list[Task]:
    """Load a tasks file; duplicate ids and an empty file are errors."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for lineno, obj in read_jsonl(path):
        task = Task.from_json(obj, file=str(path), line=lineno)
        if task.task_id in seen:
            raise InputError(f"duplicate task_id {task.task_id!r}", file=str(path), line=lineno,
                             field="task_id")
        seen.add(task.task_id)
        tasks.append(task)
    if not tasks:
        raise InputError("no tasks in file", file=str(path))
    return tasks


def resolve_task_id(raw: Any, known: Iterable[str] | None) -> str:
    """The task id of the tasks file that a codes or tests row's ``task_id`` names; raises
    ``ValueError`` (its message) when none or several do.

    The id as written first. Other harnesses write ids another way: an integer (MBPP's ``11``;
    as ``"11"`` too) names the task whose id is that number or ends in ``/11`` (``mbpp/11``), and
    a ``Prefix/N`` id names the task whose id is the same but for case or whose prefix begins
    with it (evalplus's ``Mbpp/2``: ``mbpp/2`` or ``mbpp-sanitized/2``), when exactly one does."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise TypeError(f"must be a string or an integer, got {type(raw).__name__}")
    tid = str(raw)
    if known is None or tid in known:
        return tid
    if tid.isdigit():
        hits = [k for k in known if k == tid or (k.rpartition("/")[2] == tid and k.rpartition("/")[0])]
    else:
        prefix, _, num = tid.lower().rpartition("/")
        hits = [k for k in known if k.lower() == tid.lower()]
        if not hits and prefix and num:
            hits = [k for k in known if k.rpartition("/")[2].lower() == num
                    and k.rpartition("/")[0].lower().startswith(prefix)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        names = sorted(hits)
        listed = ", ".join(repr(h) for h in names[:-1]) + f" or {names[-1]!r}"
        raise ValueError(f"task_id {raw!r} could be {listed} (several tasks of the tasks file)")
    raise ValueError(f"unknown task_id {raw!r} (not in the tasks file)")


def _check_known(obj, known: set[str] | None, file, lineno, seen: dict | None = None) -> str:
    """The row's task id (:func:`resolve_task_id`); ``seen`` caches the ids already resolved."""
    if "task_id" not in obj:
        raise InputError("missing", file=file, line=lineno, field="task_id")
    raw = obj["task_id"]
    key = (type(raw), raw) if isinstance(raw, (str, int)) else None
    if seen is not None and key in seen:
        return seen[key]
    try:
        tid = resolve_task_id(raw, known)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc), file=file, line=lineno, field="task_id") from None
    if seen is not None and key is not None:
        seen[key] = tid
    return tid


def load_codes(path: str | os.PathLike, known_ids: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Load a codes file: ``task_id -> [code, ...]`` in file order (the candidate index)."""
    known = set(known_ids) if known_ids is not None else None
    out: dict[str, list[str]] = {}
    seen: dict = {}
    for lineno, obj in read_jsonl(path):
        tid = _check_known(obj, known, str(path), lineno, seen)
        _require_str(obj, "code", str(path), lineno)
        out.setdefault(tid, []).append(obj["code"])
    if not out:
        raise InputError("no codes in file", file=str(path))
    return out


def load_tests(path: str | os.PathLike, known_ids: Iterable[str] | None = None, *,
               allow_empty: bool = False) -> dict[str, list[Test]]:
    """Load a tests file: ``task_id -> [Test, ...]`` in file order (an empty file is an error
    unless ``allow_empty``)."""
    known = set(known_ids) if known_ids is not None else None
    out: dict[str, list[Test]] = {}
    seen: dict = {}
    for lineno, obj in read_jsonl(path):
        tid = _check_known(obj, known, str(path), lineno, seen)
        out.setdefault(tid, []).append(Test.from_json(obj, file=str(path), line=lineno))
    if not out and not allow_empty:
        raise InputError("no tests in file", file=str(path))
    return out
