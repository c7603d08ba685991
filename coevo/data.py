"""Dataset loaders: MBPP (full and sanitized), HumanEval-style, CodeContests/CURE-style stdio tasks
and our own tasks JSONL, all converted to :class:`matrix.tasks.Task`.

A JSON / JSON Lines file (optionally gzipped) is read with :func:`exact_records`, the plain
reader, whose :class:`InputError` names the file, the record's line (JSON Lines) or index, and
the field. A Parquet file, a directory saved with ``Dataset.save_to_disk`` and a local dataset
folder in the hub layout (data files, optionally a ``README.md`` card, under any sub-folders) are
read through the ``datasets`` library (``parquet`` builder, ``load_from_disk``,
``load_dataset(folder)``); from a ``DatasetDict`` the ``test`` split is used when there is one,
else the first. Nothing is fetched from a hub. Each record is converted with one function per
format.

JSON went through ``datasets`` too, until a red-team pass found two reasons not to: its Arrow
reader crashes the process (a segmentation fault, no message) on a line nested 20,000 deep, and
its cache knows a file by path and modification time, so a file replaced with ``cp -p`` or
``rsync -a`` converted to the old tasks without a word. ``datasets`` also names no line when a
file is malformed and unifies the records' fields (a key one record lacks comes back as ``None``;
it is dropped again here), so a Parquet file or folder whose records do not convert is reported
by record number.
"""

from __future__ import annotations

import ast
import builtins
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from coevo.data_formats import from_apps, from_deepcoder, from_livecodebench, from_verl
from matrix.errors import InputError
from matrix.jsonl import not_utf8 as _not_utf8
from matrix.tasks import Task, Test

FORMATS = ("auto", "coevo", "mbpp", "mbpp-sanitized", "mbpp-plus", "humaneval", "bigcodebench", "codecontests",
           "apps", "livecodebench", "deepcoder", "verl")


# ----------------------------------------------------------------------------- reading records

def load_with_datasets(path: str | Path):
    """The file or folder as a ``datasets.Dataset`` (see the module docstring); raises what
    ``datasets`` raises when it cannot read it."""
    import datasets

    p = Path(path)
    if p.is_dir():
        if (p / "dataset_info.json").exists() or (p / "dataset_dict.json").exists() or (p / "state.json").exists():
            ds = datasets.load_from_disk(str(p))
        else:  # a local dataset folder in the hub layout
            ds = datasets.load_dataset(str(p))
    elif p.name.endswith(".parquet"):
        ds = datasets.load_dataset("parquet", data_files=str(p), split="train")
    else:
        ds = datasets.load_dataset("json", data_files=str(p), split="train")
    if isinstance(ds, (datasets.DatasetDict, dict)):
        split = "test" if "test" in ds else next(iter(ds))
        ds = ds[split]
    return ds


def _unfilled(value: Any) -> Any:
    """A record from ``datasets`` without the ``None`` its schema unification put in for the keys
    a record lacks (nested dicts included)."""
    if isinstance(value, dict):
        return {k: _unfilled(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_unfilled(v) for v in value]
    return value


def _dataset_records(path: Path, limit: int | None = None) -> list[tuple[int, dict[str, Any]]] | None:
    """(position, record) through ``datasets`` (the first ``limit`` records, when given), or None
    when it cannot read the path (the exact reader then says why). Positions are record numbers,
    for messages only."""
    if not path.exists():
        return None
    if not path.is_dir() and not path.name.endswith(".parquet"):
        return None  # JSON (Lines): the exact reader (see the module doc)
    import logging

    try:
        import datasets  # (its import sets its loggers' levels: quieten them after it)
    except ImportError:
        return None
    quiet = logging.getLogger("datasets")  # its builders log a traceback for a file they cannot read
    level = quiet.level
    quiet.setLevel(logging.CRITICAL + 1)
    try:
        datasets.disable_progress_bars()
        ds = load_with_datasets(path)
        if limit is not None and limit < len(ds):  # every record makes one task, or an error
            ds = ds.select(range(limit))
        return [(i + 1, _unfilled(dict(row))) for i, row in enumerate(ds)]
    except Exception:  # noqa: BLE001 - malformed or unexpected: the exact reader reports it
        return None
    finally:
        quiet.setLevel(level)


def exact_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (position, record) with the plain JSON readers: position is the 1-based line for JSON
    Lines, else the index. The error path of :func:`load_any` (it names lines)."""
    if path.is_dir():
        raise InputError("not a dataset directory the datasets library can read (save_to_disk, or data "
                         "files in the hub layout)", file=str(path))
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.name.endswith(".parquet"):
        raise InputError("the datasets library cannot read this Parquet file", file=str(path))
    from matrix.jsonl import open_text  # gzip by suffix or first bytes, a UTF-8/UTF-16 byte order mark

    try:
        with open_text(path) as fh:
            head = fh.read(1 << 16).lstrip()
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read ({exc})", file=str(path)) from None
    if head.startswith("["):  # a JSON array (e.g. sanitized-mbpp.json)
        try:
            with open_text(path) as fh:
                rows = json.load(fh)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
        except RecursionError:
            raise InputError("malformed JSON (nested too deeply)", file=str(path)) from None
        except UnicodeDecodeError:
            raise _not_utf8(path) from None
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"cannot read ({exc})", file=str(path)) from None
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise InputError("expected an object", file=str(path), line=None, field=f"[{i}]")
            yield i + 1, row
        return
    from matrix.jsonl import read_jsonl  # JSON Lines: precise line numbers for every error

    try:
        yield from read_jsonl(path)
    except InputError as exc:
        if getattr(exc, "line", None) is None and "not UTF-8" in str(exc):
            raise _not_utf8(path) from None
        raise


# ----------------------------------------------------------------------------- format detection

def detect_format(record: dict[str, Any]) -> str:
    if "prompt" in record and "kind" in record and "task_id" in record:
        return "coevo"
    if "question" in record and ("test_input" in record or "test_output" in record):
        return "codecontests"
    if "question" in record and "input_output" in record:
        return "apps"
    if "question_content" in record and "public_test_cases" in record:
        return "livecodebench"
    if "reward_model" in record and "prompt" in record:
        return "verl"
    if "problem" in record and "tests" in record:
        return "deepcoder"
    if "complete_prompt" in record and "test" in record:
        return "bigcodebench"
    if "entry_point" in record and "test" in record:
        return "humaneval"
    if "entry_point" in record and "assertion" in record:
        return "mbpp-plus"
    if "test_list" in record and "prompt" in record:
        return "mbpp-sanitized"
    if "test_list" in record and "text" in record:
        return "mbpp"
    if "prompt" in record and "task_id" in record:
        return "coevo"
    raise ValueError("unrecognised record: expected coevo, MBPP, MBPP+, HumanEval, BigCodeBench, CodeContests, "
                     "APPS/TACO, LiveCodeBench, DeepCoder or verl fields")


# ----------------------------------------------------------------------------- converters

def _need(rec: dict, name: str, kind: type | tuple, where: dict) -> Any:
    if name not in rec:
        raise InputError("missing", field=name, **where)
    if not isinstance(rec[name], kind):
        raise InputError(f"has the wrong type ({type(rec[name]).__name__})", field=name, **where)
    return rec[name]


def _called_name(test_src: str, code: str = "") -> str | None:
    """The first function called in an assert (MBPP tests name the entry point this way); where
    the test calls only builtins' names, the one of them the reference defines (MBPP 126 asks for
    a function named ``sum``)."""
    try:
        tree = ast.parse(test_src)
    except SyntaxError:
        return None
    called = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for name in called:
        if name not in _BUILTINS and not hasattr(builtins, name):
            return name
    try:
        defined = {n.name for n in ast.parse(code).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    except (SyntaxError, ValueError):
        return None
    return next((name for name in called if name in defined), None)


_BUILTINS = {"set", "sorted", "list", "tuple", "abs", "round", "len", "str", "int", "float", "isclose",
             "math", "frozenset", "dict", "all", "any", "sum", "min", "max", "type", "isinstance"}


def _mbpp_common(rec: dict, prompt: str, setup: str, where: dict, prefix: str) -> Task:
    tests_src = _need(rec, "test_list", list, where)
    code = _need(rec, "code", str, where).replace("\r\n", "\n")
    if not tests_src:
        raise InputError("empty test list", field="test_list", **where)
    entry = _called_name(tests_src[0], code)
    tests = [Test.assertion(t.strip()) for t in tests_src]
    return Task(task_id=f"{prefix}/{rec['task_id']}", prompt=prompt, kind="function", entry_point=entry,
                setup=setup, tests=tests, solutions=[code], meta={"source": prefix})


def from_mbpp(rec: dict, where: dict) -> Task:
    text = _need(rec, "text", str, where)
    setup = (rec.get("test_setup_code") or "").replace("\r\n", "\n")
    task = _mbpp_common(rec, text, setup, where, "mbpp")
    challenge = rec.get("challenge_test_list") or []
    if challenge:
        task.meta["challenge_tests"] = [t.strip() for t in challenge]
    return task


def from_mbpp_sanitized(rec: dict, where: dict) -> Task:
    prompt = _need(rec, "prompt", str, where)
    setup = "\n".join(rec.get("test_imports") or [])
    return _mbpp_common(rec, prompt, setup, where, "mbpp-sanitized")


def from_humaneval(rec: dict, where: dict) -> Task:
    """``check(candidate)`` is split into one assert test per top-level assert where possible."""
    prompt = _need(rec, "prompt", str, where)
    entry = _need(rec, "entry_point", str, where)
    test_code = _need(rec, "test", str, where)
    task_id = str(rec.get("task_id", where.get("line")))
    try:
        tree = ast.parse(test_code)
    except SyntaxError as exc:
        raise InputError(f"does not parse ({exc.msg})", field="test", **where) from None
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None:
        raise InputError("defines no check(candidate) function", field="test", **where)
    others = [n for n in tree.body if n is not check]
    setup = "\n".join(ast.unparse(n) for n in others)
    if all(isinstance(s, ast.Assert) for s in check.body) and check.args.args:
        param = check.args.args[0].arg
        tests = []
        for stmt in check.body:
            stmt = _rename(stmt, param, entry)
            tests.append(Test.assertion(ast.unparse(stmt)))
    else:  # loops or helpers inside check: keep it whole
        setup = test_code
        tests = [Test.assertion(f"check({entry})")]
    sols = [prompt + rec["canonical_solution"]] if isinstance(rec.get("canonical_solution"), str) else []
    return Task(task_id=task_id, prompt=prompt, kind="function", entry_point=entry, setup=setup,
                tests=tests, solutions=sols, meta={"source": "humaneval"})


def from_bigcodebench(rec: dict, where: dict) -> Task:
    """BigCodeBench: ``complete_prompt`` (the imports, ``task_func``'s signature and docstring: the
    code a completion continues) is the prompt, so that its samples run as its harness runs them
    (``solution``: the whole program; ``completion``: after complete_prompt); ``test`` (a unittest
    ``TestCases`` class calling the entry point, with its own imports) is one test, run through
    unittest's runner as every test holding TestCase classes is (it passes where every method
    passes); the reference is complete_prompt + ``canonical_solution``. ``instruct_prompt`` (the
    task in words) is kept in ``meta``."""
    prompt = _need(rec, "complete_prompt", str, where)
    test_code = _need(rec, "test", str, where)
    entry = rec.get("entry_point") or "task_func"
    if not isinstance(entry, str) or not entry.isidentifier():
        raise InputError("must be a function name", field="entry_point", **where)
    try:
        ast.parse(test_code)
    except SyntaxError as exc:
        raise InputError(f"does not parse ({exc.msg})", field="test", **where) from None
    sol = rec.get("canonical_solution")
    meta: dict[str, Any] = {"source": "bigcodebench"}
    if isinstance(rec.get("instruct_prompt"), str):
        meta["instruct_prompt"] = rec["instruct_prompt"]
    return Task(task_id=str(rec.get("task_id", where.get("line"))), prompt=prompt, kind="function",
                entry_point=entry, tests=[Test.assertion(test_code)],
                solutions=[prompt + sol] if isinstance(sol, str) and sol else [], meta=meta)


def from_mbpp_plus(rec: dict, where: dict) -> Task:
    """evalplus's MbppPlus.jsonl: ``assertion`` holds MBPP's asserts (imports before them go to
    ``setup``; anything else keeps the field whole, one test), ``canonical_solution`` the whole
    program; the id stays evalplus's (``Mbpp/2``: its samples name tasks so). Its ``plus_input``
    tests are outputs of the canonical solution, not in the record: not converted."""
    prompt = _need(rec, "prompt", str, where)
    entry = _need(rec, "entry_point", str, where)
    src = _need(rec, "assertion", str, where).replace("\r\n", "\n")
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise InputError(f"does not parse ({exc.msg})", field="assertion", **where) from None
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    asserts = [n for n in tree.body if isinstance(n, ast.Assert)]
    if not asserts:
        raise InputError("holds no assert", field="assertion", **where)
    if len(imports) + len(asserts) == len(tree.body):
        setup = "\n".join(ast.get_source_segment(src, n) or ast.unparse(n) for n in imports)
        tests = [Test.assertion(ast.get_source_segment(src, n) or ast.unparse(n)) for n in asserts]
    else:
        setup, tests = "", [Test.assertion(src.strip())]
    sol = rec.get("canonical_solution")
    return Task(task_id=str(rec.get("task_id", where.get("line"))), prompt=prompt, kind="function",
                entry_point=entry, setup=setup, tests=tests, solutions=[sol] if isinstance(sol, str) and sol else [],
                meta={"source": "mbpp-plus"})


def _rename(node: ast.AST, old: str, new: str) -> ast.AST:
    class Renamer(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name):
            return ast.copy_location(ast.Name(id=new, ctx=n.ctx), n) if n.id == old else n

    return Renamer().visit(node)


CODECONTESTS_PYTHON3 = (3, "PYTHON3", "python3", "Python3", "python")  # DeepMind's language ids


def from_codecontests(rec: dict, where: dict) -> Task:
    question = _need(rec, "question", str, where)
    ins = _need(rec, "test_input", list, where)
    outs = _need(rec, "test_output", list, where)
    if len(ins) != len(outs):
        raise InputError(f"has {len(ins)} inputs but test_output has {len(outs)}", field="test_input",
                         **where)
    for i, (a, b) in enumerate(zip(ins, outs)):
        if not isinstance(a, str) or not isinstance(b, str):
            raise InputError("entries must be strings", field=f"test_input[{i}]", **where)
    tests = [Test.stdio(a, b) for a, b in zip(ins, outs)]
    raw = rec.get("solutions") or []
    if isinstance(raw, str):  # one solution
        raw = [raw]
    elif isinstance(raw, dict):  # the Hugging Face layout: parallel lists, Python 3 solutions kept
        sol, lang = raw.get("solution") or [], raw.get("language")
        if not isinstance(sol, list):
            raise InputError("must be a list of programs", field="solutions.solution", **where)
        raw = [x for k, x in enumerate(sol)
               if not isinstance(lang, list) or k >= len(lang) or lang[k] in CODECONTESTS_PYTHON3]
    elif not isinstance(raw, list):
        raise InputError("must be a list of programs", field="solutions", **where)
    sols = [x for x in raw if isinstance(x, str)]
    task_id = str(rec.get("task_id", rec.get("id", f"cc/{where.get('line')}")))
    return Task(task_id=task_id, prompt=question, kind="stdio", entry_point=None, tests=tests,
                solutions=sols, meta={"source": "codecontests"})


def from_coevo(rec: dict, where: dict) -> Task:
    return Task.from_json(rec, file=where["file"], line=where.get("line"))


CONVERTERS: dict[str, Callable[[dict, dict], Task]] = {
    "coevo": from_coevo,
    "mbpp": from_mbpp,
    "mbpp-sanitized": from_mbpp_sanitized,
    "humaneval": from_humaneval,
    "bigcodebench": from_bigcodebench,
    "mbpp-plus": from_mbpp_plus,
    "codecontests": from_codecontests,
    "apps": from_apps,
    "livecodebench": from_livecodebench,
    "deepcoder": from_deepcoder,
    "verl": from_verl,
}


def load_any(path: str | Path, fmt: str = "auto", limit: int | None = None) -> list[Task]:
    """Load tasks of any supported format; ``fmt="auto"`` detects it from the first record."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}", field="format")
    p = Path(path)
    rows = _dataset_records(p, limit)
    if rows is not None:
        try:
            return _convert(p, rows, fmt, limit)
        except InputError:
            pass  # the exact reader names the record's line
    return _convert(p, exact_records(p), fmt, limit)


def _convert(p: Path, rows, fmt: str, limit: int | None) -> list[Task]:
    tasks: list[Task] = []
    seen: set[str] = set()
    for pos, rec in rows:
        where = {"file": str(p), "line": pos}
        if fmt == "auto":
            try:
                fmt = detect_format(rec)
            except ValueError as exc:
                raise InputError(str(exc), **where) from None
        try:
            task = CONVERTERS[fmt](rec, where)
        except InputError:
            raise
        except KeyError as exc:  # a field the format needs, missing
            raise InputError("missing", field=str(exc.args[0]) if exc.args else None, **where) from None
        except (TypeError, AttributeError, ValueError, RecursionError, MemoryError) as exc:
            # a field of the wrong type or beyond what Python parses (nested too deep): one line
            raise InputError(f"not a {fmt} record ({type(exc).__name__}: {str(exc)[:160]})", **where) from None
        if task.task_id in seen:
            raise InputError(f"duplicate task_id {task.task_id!r}", field="task_id", **where)
        seen.add(task.task_id)
        tasks.append(task)
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise InputError("no tasks in file", file=str(p))
    return tasks


def filter_ids(tasks: list[Task], spec: str) -> list[Task]:
    """Tasks whose id ends in a number within ``A-B`` (inclusive), e.g. MBPP's ``601-974``."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", spec)
    if not m:
        raise InputError(f"expected A-B, got {spec!r}", field="--ids")
    lo, hi = int(m.group(1)), int(m.group(2))
    if lo > hi:
        raise InputError(f"{spec.strip()} is an empty range (A must be <= B)", field="--ids")
    out = []
    for t in tasks:
        num = re.search(r"(\d+)$", t.task_id)
        if num and lo <= int(num.group(1)) <= hi:
            out.append(t)
    if not out:
        raise InputError(f"no task id in {lo}-{hi}", field="--ids")
    return out
