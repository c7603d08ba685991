"""Reading the ``--tasks`` file of `coevo matrix`, `select`, `eval`, `solve` and `gen-tests --tasks`.

A file in the tasks contract (docs/contracts.md) is read by :func:`matrix.tasks.load_tasks`, whose
errors name the contract's fields. A problem file of another benchmark, as its users have it, is
read as `coevo data convert` would convert it (:func:`coevo.data.load_any`): HumanEval records
(``prompt``, ``entry_point``, ``test`` with ``check(candidate)``, ``canonical_solution``), MBPP
(full or sanitized, also the sanitized JSON array), CodeContests-style stdio records, a Parquet
file or a saved dataset directory. Which one a file is comes from its first record.
"""

from __future__ import annotations

from pathlib import Path

from matrix.jsonl import open_text, read_jsonl


def _first_record(path: Path):
    """The first JSON object of a JSON Lines file, "array" for a file that is one JSON array, or
    None (unreadable, empty, malformed: the contract's loader says what is wrong)."""
    try:
        with open_text(path) as fh:  # as the readers open it (a byte order mark read past)
            for raw in fh:
                if raw.strip():
                    if raw.lstrip().startswith("["):
                        return "array"
                    break
        for _, obj in read_jsonl(path):  # (an object pretty-printed over several lines too)
            return obj
    except Exception:  # noqa: BLE001 - any problem is reported by the contract's loader
        return None
    return None


def load_task_file(path):
    """The tasks of ``path``: the tasks contract, or a benchmark's own problem file (see the
    module docstring). Errors are :class:`matrix.errors.InputError` lines naming file, line and
    field."""
    from coevo.data import detect_format, load_any
    from matrix.tasks import load_tasks

    p = Path(path)
    if p.is_dir() or p.name.endswith(".parquet"):
        return load_any(p)
    first = _first_record(p) if p.is_file() else None
    if first == "array":
        return load_any(p)
    if isinstance(first, dict):
        try:
            fmt = detect_format(first)
        except ValueError:
            fmt = "coevo"
        if fmt != "coevo":
            return load_any(p, fmt)
    return load_tasks(p)


def task_line(path, task_id: str) -> int | None:
    """The line of the tasks file ``path`` where the task ``task_id`` starts (for an error about
    the task as a whole); None where no row has that id as written (a converted benchmark file
    spells its ids another way) or the file cannot be read again."""
    try:
        for line, obj in read_jsonl(Path(path)):
            if str(obj.get("task_id")) == task_id:
                return line
    except Exception:  # noqa: BLE001 - only a better message is lost
        return None
    return None
