"""Converters for the datasets RL-for-code training runs read: APPS / TACO and LiveCodeBench
(registered in :mod:`coevo.data`: ``FORMATS``, ``detect_format``, ``CONVERTERS``).

Each takes one record as the dataset ships it (a JSON Lines / JSON line, a Parquet row, a
``save_to_disk`` row) and returns a :class:`matrix.tasks.Task`; a record that does not fit is an
:class:`InputError` naming the field (``input_output.inputs[2]``, ``private_test_cases``...).

APPS / TACO (``codeparrot/apps``, ``BAAI/TACO``), followed from ``hendrycks/apps``
``eval/testing_util.py`` (``run_test``) and TACO's dataset card (the same fields and the same
testing code, ``rllm``'s ``code_utils/taco.py`` keeps its rule):

* ``question`` -> prompt (followed by ``starter_code`` in a fenced block when there is one);
  ``problem_id`` -> task id ``apps/<problem_id>``; TACO has none: ``taco/<record number>``;
  ``difficulty``, ``url``, ``source``, ``name`` -> ``meta``.
* ``solutions``: a JSON *string* of a list of programs -> ``solutions``, each preceded by the
  import header APPS's ``run_test`` puts before every program (``import sys``, ``math``,
  ``collections``, ``from typing import List, Tuple``...; ``numpy`` only for a program that names
  ``np.``): the references lean on it (``List[int]`` annotations without an import). A candidate
  the matrix runs for the task gets the same header, as ``run_test`` gives it
  (:func:`matrix.preludes.harness_header`; on one line, so that its line numbers move by one).
* ``input_output``: a JSON string ``{"inputs": [...], "outputs": [...]}``. Without ``fn_name`` a
  stdin problem: one stdio test per pair (an input or output given as a list of lines is joined
  with newlines, as ``run_test`` joins them); the output is compared as coevo compares stdout
  (lines of whitespace-separated tokens), not with ``run_test``'s chain of fallbacks (its float
  and set comparisons are not reproduced). With ``fn_name`` a call-based problem, a function
  task: each input is the list of arguments, and the test calls ``fn_name(*args)``, or
  ``Solution().fn_name(*args)`` when the starter code (else the first solution) has ``class
  Solution`` (``run_test`` decides by the same words in the program it runs: an answer defining
  ``fn_name`` without that class is called on its own function, through the task's ``setup``,
  :func:`solution_shim`; LiveCodeBench and DeepCoder likewise). Before the call,
  as ``run_test`` does, a first argument that is a dict gets int keys (and replaces the argument
  list), and an expected dict, or the dict an expected one-element list holds, gets int keys and
  is wrapped in a list (each step only where every key converts).
* APPS's comparison of a call's result ``out`` with the expected ``exp`` is reproduced exactly
  for the shapes JSON gives: ``out`` passes when, with a tuple result taken as a list, ``out ==
  exp``, or ``exp`` is a non-empty list and ``out == exp[0]`` (outputs are often wrapped in a
  one-element list), or ``out[0]`` is a tuple and ``[list(x) for x in out] == exp[0]``. The test
  is ``assert CALL in (V1, V2, ...)`` (or a ``call``/``expected`` test when one value is
  accepted), listing every value that passes: the call runs in the sandbox, and the parent
  compares its plain value with the listed ones, outside the program's process. The last rule
  is listed for rows that are all tuples, or a tuple then lists, and for every mix of tuples and
  lists of up to 4 rows; a row given as a string standing for the list of its characters is not.

LiveCodeBench ``code_generation_lite`` (``LiveCodeBench/LiveCodeBench``,
``lcb_runner/benchmarks/code_generation.py`` and ``lcb_runner/evaluation/testing_util.py``):

* ``question_content`` (+ ``starter_code``) -> prompt; ``question_id`` -> ``lcb/<question_id>``;
  ``platform``, ``difficulty``, ``contest_id``, ``contest_date``, ``question_title`` -> ``meta``.
* ``public_test_cases``: a JSON string of ``[{"input", "output", "testtype"}]``;
  ``private_test_cases``: the same JSON, or base64 of zlib of a *pickled* JSON string (the lite
  release). It is unpickled with an unpickler whose ``find_class`` refuses every name, so only
  plain data can come out (a pickled call of ``os.system`` is an error, and nothing runs), and
  the result must be a string. Tests: public, then private; ``meta["visible_tests"]`` lists the
  public ones (``coevo eval``'s hacking gap).
* ``testtype`` ``stdin``: a stdio test (``lcb_runner`` compares stripped lines, and lines of
  numbers as ``Decimal`` lists; coevo compares whitespace-separated tokens). ``functional``: the
  input is one JSON value per line (one per argument), the output one JSON value; the function
  is ``metadata``'s ``func_name`` (``metadata`` is a JSON string), called on ``Solution()`` when
  the starter code has ``class Solution``. ``lcb_runner`` passes ``prediction == expected`` with
  a tuple prediction taken as a list, and nothing more: the test accepts ``expected`` and, for
  a list, the tuple of its items.

DeepCoder (``agentica-org/DeepCoder-Preview-Dataset``; layouts followed from ``rllm-org/rllm``:
``rllm/rewards/code_reward.py``, ``cookbooks/deepcoder/prepare_deepcoder_data.py``, and NeMo-RL's
``deepcoder_preview.py`` filters): ``problem`` -> prompt (+ ``starter_code``), ``uid`` or
``deepcoder/<record number>`` -> id, ``metadata`` (JSON string or object) gives ``func_name``;
``tests`` is a JSON string laid out per subset: taco's APPS object ``{"inputs", "outputs",
"fn_name"}`` (read as APPS above), lcbv5's LiveCodeBench list (``testtype`` ``stdin`` /
``functional``, read as LiveCodeBench above), primeintellect's ``{"input", "output", "type":
"stdin_stdout"}`` and codeforces' ``{"input", "output"}`` (stdio tests), and primeintellect's
``{"input": [args], "output", "type": "function_call", "fn_name"}``, read as APPS's call-based
tests with the first test's ``fn_name`` (rllm's ``primeintellect_check_correctness`` hands them to
TACO's ``run_test``). Tests of any other ``type`` are refused by name.

verl rows as rllm's ``scripts/data/code_dataset.py`` writes them: ``prompt`` (chat messages; the
last user message is the task's prompt), ``data_source``, ``reward_model.ground_truth`` (the
tests above as a JSON string; a LiveCodeBench test may carry ``metadata.func_name`` itself) and
``extra_info.index`` (id ``<data_source>/<index>``). A ground truth that is test code (rllm's
``kodcode``, ``leetcode``, ``humanevalplus``) is refused with a line naming the data source.
"Class Solution" is looked for in the starter code (DeepCoder) or the prompt (verl).
"""

from __future__ import annotations

import base64
import binascii
import io
import itertools
import json
import math
import pickle
import re
import zlib
from typing import Any

from matrix.errors import InputError
from matrix.preludes import APPS_HEADER
from matrix.tasks import Task, Test

MAX_PRIVATE_BYTES = 1 << 30  # LiveCodeBench's private tests, decompressed (the largest are ~100 MB)
_MIXES_UP_TO = 4  # rows of APPS's list-of-tuples rule for which every tuple/list mix is listed


# ----------------------------------------------------------------------------- shared

def _text(rec: dict, name: str, where: dict, *, required: bool = True) -> str:
    value = rec.get(name)
    if value is None:
        if required:
            raise InputError("missing", field=name, **where)
        return ""
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {type(value).__name__}", field=name, **where)
    return value


def _json_field(rec: dict, name: str, where: dict) -> Any:
    """A field the dataset stores as a JSON string (already decoded values pass as they are)."""
    if name not in rec or rec[name] is None:
        raise InputError("missing", field=name, **where)
    value = rec[name]
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg} at character {exc.pos})", field=name, **where) from None
    except RecursionError:
        raise InputError("not JSON (nested too deeply)", field=name, **where) from None


def _py(value: Any) -> str:
    """Python source of a JSON value (tuples too): a literal :func:`matrix.plain.literal` reads."""
    if isinstance(value, float) and not math.isfinite(value):
        return "float('nan')" if math.isnan(value) else ("float('inf')" if value > 0 else "-float('inf')")
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, tuple):
        items = [_py(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _accepting(call: str, accepted: list) -> Test:
    """The test that passes when ``call`` returns one of ``accepted`` (judged by the parent)."""
    seen: list[str] = []
    for value in accepted:
        src = _py(value)
        if src not in seen:
            seen.append(src)
    if len(seen) == 1:
        return Test.call_expected(call, seen[0])
    return Test.assertion(f"assert {call} in ({', '.join(seen)})")


_SOLUTION_CALL = re.compile(r"\bSolution\(\)\.([A-Za-z_]\w*)\(")


def solution_shim(tests: list[Test]) -> str:
    """The ``setup`` of a task whose tests call ``Solution().fn(...)``: LiveCodeBench's
    ``compile_code`` (and APPS's ``run_test``) call ``Solution().fn`` only when the answer holds
    ``class Solution``, else the module's own ``fn``; an answer that defines ``fn`` and no
    ``Solution`` gets one whose ``fn`` is that function ("" where no test calls so)."""
    fn = next((m.group(1) for t in tests for m in [_SOLUTION_CALL.search(t.call or t.test or "")] if m), None)
    if fn is None:
        return ""
    return (f'if "Solution" not in globals() and callable(globals().get("{fn}")):  # the harness calls the '
            f"module's {fn}\n    class Solution:\n        {fn} = staticmethod({fn})\n")


def _prompt(question: str, starter: str) -> str:
    if not starter.strip():
        return question
    return f"{question.rstrip()}\n\nStarter code:\n```python\n{starter.rstrip()}\n```\n"


# ----------------------------------------------------------------------------- APPS / TACO

def _int_keys(d: dict) -> dict | None:
    try:
        return {int(k): v for k, v in d.items()}
    except (TypeError, ValueError):
        return None


def apps_arguments(inputs: list) -> list:
    """The arguments ``run_test`` calls with: a first argument that is a dict gets int keys and
    becomes the only one (where every key converts)."""
    if inputs and isinstance(inputs[0], dict):
        keyed = _int_keys(inputs[0])
        if keyed is not None:
            return [keyed]
    return inputs


def apps_expected(expected: Any) -> Any:
    """The expected output as ``run_test`` rewrites it before comparing (dicts get int keys)."""
    if isinstance(expected, dict):
        keyed = _int_keys(expected)
        if keyed is not None:
            expected = [keyed]
    if isinstance(expected, list) and expected and isinstance(expected[0], dict):
        keyed = _int_keys(expected[0])
        if keyed is not None:
            expected = [keyed]
    return expected


def apps_accepted(expected: Any) -> list:
    """Every value of the shapes a call can return that APPS's rule passes against ``expected``
    (see the module docstring), ``expected`` first."""
    out = [expected]
    if not isinstance(expected, list):
        return out  # a tuple result is taken as a list, and a list equals no other JSON value
    out.append(tuple(expected))
    if not expected:
        return out
    first = expected[0]
    out.append(first)
    if isinstance(first, list):
        out.append(tuple(first))
        if first and all(isinstance(row, list) for row in first):
            n = len(first) - 1
            shapes: list[tuple[type, ...]] = (list(itertools.product((tuple, list), repeat=n))
                                               if n < _MIXES_UP_TO else [(tuple,) * n, (list,) * n])
            for shape in shapes:
                rows = [tuple(first[0])] + [kind(row) for kind, row in zip(shape, first[1:])]
                out.extend([rows, tuple(rows)])
    return out


def _apps_lines(value: Any, field: str, where: dict) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "\n".join(value)
    raise InputError(f"must be a string or a list of lines, got {type(value).__name__}", field=field, **where)


def _solutions(rec: dict, where: dict) -> list[str]:
    raw = rec.get("solutions")
    if raw is None or raw == "":
        return []
    sols = _json_field(rec, "solutions", where)
    if not isinstance(sols, list):
        raise InputError(f"must be a list of programs, got {type(sols).__name__}", field="solutions", **where)
    for i, s in enumerate(sols):
        if not isinstance(s, str):
            raise InputError(f"must be a string, got {type(s).__name__}", field=f"solutions[{i}]", **where)
    return sols


def _with_header(program: str) -> str:
    header = APPS_HEADER + ("import numpy as np\n" if "np." in program else "")
    return header + program


def apps_tests(spec: Any, in_class: bool, where: dict,
               field: str = "input_output") -> tuple[str, str | None, list[Test]]:
    """``(kind, entry_point, tests)`` of APPS's ``{"inputs", "outputs", "fn_name"}`` (decoded)."""
    if not isinstance(spec, dict):
        raise InputError(f"must be an object with inputs and outputs, got {type(spec).__name__}",
                         field=field, **where)
    inputs, outputs = spec.get("inputs", []), spec.get("outputs", [])
    for name, value in (("inputs", inputs), ("outputs", outputs)):
        if not isinstance(value, list):
            raise InputError(f"must be a list, got {type(value).__name__}", field=f"{field}.{name}", **where)
    if len(inputs) != len(outputs):
        raise InputError(f"has {len(inputs)} inputs but {len(outputs)} outputs", field=field, **where)
    fn = spec.get("fn_name")
    if fn is None:  # standard input
        return "stdio", None, [Test.stdio(_apps_lines(a, f"{field}.inputs[{i}]", where),
                                          _apps_lines(b, f"{field}.outputs[{i}]", where))
                               for i, (a, b) in enumerate(zip(inputs, outputs))]
    if not isinstance(fn, str) or not fn.isidentifier():
        raise InputError(f"must be a function name, got {fn!r}", field=f"{field}.fn_name", **where)
    callee = f"Solution().{fn}" if in_class else fn
    tests = []
    for i, (args, expected) in enumerate(zip(inputs, outputs)):
        if not isinstance(args, list):
            raise InputError(f"must be a list of arguments, got {type(args).__name__}",
                             field=f"{field}.inputs[{i}]", **where)
        call = f"{callee}({', '.join(_py(a) for a in apps_arguments(args))})"
        tests.append(_accepting(call, apps_accepted(apps_expected(expected))))
    return "function", "Solution" if in_class else fn, tests


def from_apps(rec: dict, where: dict) -> Task:
    """An APPS or TACO record (see the module docstring)."""
    question = _text(rec, "question", where)
    starter = _text(rec, "starter_code", where, required=False)
    sols = _solutions(rec, where)
    source = "apps" if "problem_id" in rec else "taco"
    ident = rec.get("problem_id", where.get("line"))
    meta: dict[str, Any] = {"source": source}
    for key in ("difficulty", "url", "source", "name"):
        if isinstance(rec.get(key), str) and rec[key]:
            meta["origin" if key == "source" else key] = rec[key]
    raw_io = rec.get("input_output")
    spec = {} if raw_io is None or raw_io == "" else _json_field(rec, "input_output", where)
    in_class = "class Solution" in (starter if starter.strip() else (sols[0] if sols else ""))
    kind, entry, tests = apps_tests(spec, in_class, where)
    return Task(task_id=f"{source}/{ident}", prompt=_prompt(question, starter), kind=kind, entry_point=entry,
                setup=solution_shim(tests), tests=tests, solutions=[_with_header(s) for s in sols], meta=meta)


# ----------------------------------------------------------------------------- LiveCodeBench

# the opcodes of a pickled string (any protocol): nothing else is unpickled (a list of 2.5 million
# references to one object, 6.5 KB of pickle, was built before its type was looked at)
_STRING_OPCODES = frozenset({"PROTO", "FRAME", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
                             "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"})


def _only_a_string(raw: bytes) -> str | None:
    """Why ``raw`` is not a pickled string (an opcode that builds anything else), or None; read
    opcode by opcode, nothing built."""
    import pickletools

    try:
        for op, _, _ in pickletools.genops(raw):
            if op.name not in _STRING_OPCODES:
                return f"it holds {op.name}; only a pickled string is read"
    except Exception as exc:  # noqa: BLE001 - a damaged pickle
        return f"not a readable pickle ({type(exc).__name__}: {str(exc)[:120]})"
    return None


class _PlainUnpickler(pickle.Unpickler):
    """Builds plain data only: every class or function a pickle names is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"it names {module}.{name}; only a pickled string is read")


def lcb_private_tests(text: str, where: dict) -> Any:
    """``private_test_cases`` decoded: JSON, else base64 -> zlib -> (restricted) pickle -> JSON."""
    field = {"field": "private_test_cases", **where}
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise InputError("neither JSON nor base64 (LiveCodeBench's compressed tests)", **field) from None
    try:
        unzip = zlib.decompressobj()
        raw = unzip.decompress(packed, MAX_PRIVATE_BYTES)
    except zlib.error as exc:
        raise InputError(f"base64 of data that is not zlib-compressed ({exc})", **field) from None
    if unzip.unconsumed_tail or not unzip.eof:
        raise InputError(f"truncated, or decompresses to more than {MAX_PRIVATE_BYTES} bytes", **field)
    why = _only_a_string(raw)
    if why is not None:
        raise InputError(f"refused pickle: {why}", **field)
    try:
        payload = _PlainUnpickler(io.BytesIO(raw)).load()
    except pickle.UnpicklingError as exc:
        raise InputError(f"refused pickle: {exc}", **field) from None
    except Exception as exc:  # noqa: BLE001 - a damaged pickle: whatever it raises is one line
        raise InputError(f"not a readable pickle ({type(exc).__name__}: {str(exc)[:120]})", **field) from None
    if not isinstance(payload, str):
        raise InputError(f"must unpickle to a string of JSON, got {type(payload).__name__}", **field)
    try:
        return json.loads(payload)
    except json.JSONDecodeError as exc:
        raise InputError(f"unpickles to text that is not JSON ({exc.msg})", **field) from None
    except RecursionError:
        raise InputError("unpickles to JSON nested too deeply", **field) from None


def _lcb_cases(value: Any, name: str, where: dict) -> list[dict]:
    if not isinstance(value, list):
        raise InputError(f"must be a list of tests, got {type(value).__name__}", field=name, **where)
    for i, case in enumerate(value):
        if not isinstance(case, dict):
            raise InputError(f"must be an object, got {type(case).__name__}", field=f"{name}[{i}]", **where)
        for key in ("input", "output"):
            if not isinstance(case.get(key), str):
                raise InputError("must be a string", field=f"{name}[{i}].{key}", **where)
        if case.get("testtype") not in ("stdin", "functional"):
            raise InputError(f"must be 'stdin' or 'functional', got {case.get('testtype')!r}",
                             field=f"{name}[{i}].testtype", **where)
    return value


def _json_value(text: str, field: str, where: dict) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", field=field, **where) from None
    except RecursionError:
        raise InputError("not JSON (nested too deeply)", field=field, **where) from None


def from_livecodebench(rec: dict, where: dict) -> Task:
    """A LiveCodeBench ``code_generation`` / ``code_generation_lite`` record (see the module
    docstring)."""
    question = _text(rec, "question_content", where)
    starter = _text(rec, "starter_code", where, required=False)
    qid = rec.get("question_id")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or qid == "":
        raise InputError("missing" if qid is None else "must be a string", field="question_id", **where)
    public = _lcb_cases(_json_field(rec, "public_test_cases", where), "public_test_cases", where)
    raw_private = rec.get("private_test_cases")
    if raw_private is None or raw_private == "":
        private: list[dict] = []
    elif isinstance(raw_private, str):
        private = _lcb_cases(lcb_private_tests(raw_private, where), "private_test_cases", where)
    else:
        private = _lcb_cases(raw_private, "private_test_cases", where)
    metadata = _json_field(rec, "metadata", where) if rec.get("metadata") not in (None, "") else {}
    if not isinstance(metadata, dict):
        raise InputError(f"must be an object, got {type(metadata).__name__}", field="metadata", **where)
    cases = [(f"public_test_cases[{i}]", c) for i, c in enumerate(public)]
    cases += [(f"private_test_cases[{i}]", c) for i, c in enumerate(private)]
    kinds = {c["testtype"] for _, c in cases}
    if len(kinds) > 1:
        raise InputError("mixes stdin and functional tests", field="public_test_cases", **where)
    functional = kinds == {"functional"} or (not kinds and metadata.get("func_name") is not None)
    meta: dict[str, Any] = {"source": "livecodebench", "visible_tests": list(range(len(public)))}
    for key in ("platform", "difficulty", "contest_id", "contest_date", "question_title"):
        if isinstance(rec.get(key), str) and rec[key]:
            meta[key] = rec[key]
    task_id = f"lcb/{qid}"
    if not functional:
        tests = [Test.stdio(c["input"], c["output"]) for _, c in cases]
        return Task(task_id=task_id, prompt=_prompt(question, starter), kind="stdio", entry_point=None,
                    tests=tests, meta=meta)
    fn = metadata.get("func_name")
    kind, entry, tests = lcb_functional_tests(cases, fn, "class Solution" in starter, where, "metadata.func_name")
    return Task(task_id=task_id, prompt=_prompt(question, starter), kind=kind, entry_point=entry, tests=tests,
                setup=solution_shim(tests), meta=meta)


def lcb_functional_tests(cases: list[tuple[str, dict]], fn: Any, in_class: bool, where: dict,
                         fn_field: str) -> tuple[str, str | None, list[Test]]:
    """``(kind, entry_point, tests)`` of LiveCodeBench functional tests ``(field, case)``."""
    if not isinstance(fn, str) or not fn.isidentifier():
        raise InputError("missing" if fn is None else f"must be a function name, got {fn!r}", field=fn_field,
                         **where)
    callee = f"Solution().{fn}" if in_class else fn
    tests = []
    for name, c in cases:
        args = [_json_value(line, f"{name}.input", where) for line in c["input"].split("\n")]
        expected = _json_value(c["output"], f"{name}.output", where)
        accepted = [expected, tuple(expected)] if isinstance(expected, list) else [expected]
        tests.append(_accepting(f"{callee}({', '.join(_py(a) for a in args)})", accepted))
    return "function", "Solution" if in_class else fn, tests


# ----------------------------------------------------------------------------- DeepCoder / verl

_STDIN_TYPES = (None, "stdin", "stdin_stdout")


def deepcoder_tests(tests: Any, metadata: dict, in_class: bool, where: dict,
                    field: str) -> tuple[str, str | None, list[Test]]:
    """``(kind, entry_point, tests)`` of DeepCoder's test layouts (see the module docstring)."""
    if isinstance(tests, dict):  # taco / apps
        return apps_tests(tests, in_class, where, field)
    if not isinstance(tests, list):
        raise InputError(f"must be APPS's {{inputs, outputs}} or a list of tests, got {type(tests).__name__}",
                         field=field, **where)
    calls = [c for c in tests if isinstance(c, dict) and c.get("type") == "function_call"]
    if calls:  # primeintellect: rllm grades them with TACO's run_test (APPS's call-based rule)
        if len(calls) != len(tests):
            raise InputError("mixes function_call tests with others", field=field, **where)
        fn = calls[0].get("fn_name")
        if not isinstance(fn, str):
            raise InputError("missing" if fn is None else "must be a string", field=f"{field}[0].fn_name", **where)
        for i, c in enumerate(calls):
            if "input" not in c or "output" not in c:
                raise InputError("missing", field=f"{field}[{i}].{'input' if 'input' not in c else 'output'}",
                                 **where)
        spec = {"inputs": [c["input"] for c in calls], "outputs": [c["output"] for c in calls], "fn_name": fn}
        return apps_tests(spec, in_class, where, field)
    cases: list[tuple[str, dict]] = []
    functional: set[bool] = set()
    for i, case in enumerate(tests):
        name = f"{field}[{i}]"
        if not isinstance(case, dict):
            raise InputError(f"must be an object, got {type(case).__name__}", field=name, **where)
        for key in ("input", "output"):
            if not isinstance(case.get(key), str):
                raise InputError("must be a string", field=f"{name}.{key}", **where)
        key = "testtype" if "testtype" in case else "type"
        kind = case.get(key)
        if kind != "functional" and kind not in _STDIN_TYPES:
            raise InputError(f"{kind!r} tests are not read (only stdin, stdin_stdout, function_call and "
                             "LiveCodeBench's functional tests have a layout coevo follows)", field=f"{name}.{key}",
                             **where)
        functional.add(kind == "functional")
        cases.append((name, case))
    if len(functional) > 1:
        raise InputError("mixes stdin and functional tests", field=field, **where)
    if functional == {True}:
        own = cases[0][1].get("metadata")
        if isinstance(own, dict) and own.get("func_name") is not None:
            return lcb_functional_tests(cases, own["func_name"], in_class, where, f"{field}[0].metadata.func_name")
        return lcb_functional_tests(cases, metadata.get("func_name"), in_class, where, "metadata.func_name")
    return "stdio", None, [Test.stdio(c["input"], c["output"]) for _, c in cases]


def _metadata(rec: dict, where: dict) -> dict:
    if rec.get("metadata") in (None, ""):
        return {}
    meta = _json_field(rec, "metadata", where)
    if not isinstance(meta, dict):
        raise InputError(f"must be an object, got {type(meta).__name__}", field="metadata", **where)
    return meta


def from_deepcoder(rec: dict, where: dict) -> Task:
    """A DeepCoder-Preview-Dataset record: ``problem``, ``tests`` (see the module docstring)."""
    problem = _text(rec, "problem", where)
    starter = _text(rec, "starter_code", where, required=False)
    metadata = _metadata(rec, where)
    kind, entry, tests = deepcoder_tests(_json_field(rec, "tests", where), metadata, "class Solution" in starter,
                                         where, "tests")
    uid = rec.get("uid")
    task_id = uid if isinstance(uid, str) and uid else f"deepcoder/{where.get('line')}"
    meta: dict[str, Any] = {"source": "deepcoder"}
    if isinstance(rec.get("data_source"), str):
        meta["data_source"] = rec["data_source"]
    return Task(task_id=task_id, prompt=_prompt(problem, starter), kind=kind, entry_point=entry, tests=tests,
                setup=solution_shim(tests), meta=meta)


def from_verl(rec: dict, where: dict) -> Task:
    """A verl parquet row as rllm writes it for code (see the module docstring)."""
    chat = rec.get("prompt")
    if isinstance(chat, str):
        prompt = chat
    elif isinstance(chat, list):
        users = [m.get("content") for m in chat if isinstance(m, dict) and m.get("role") == "user"]
        if not users or not isinstance(users[-1], str):
            raise InputError("has no user message with text content", field="prompt", **where)
        prompt = users[-1]
    else:
        raise InputError("missing" if chat is None else f"must be a list of chat messages, got {type(chat).__name__}",
                         field="prompt", **where)
    source = rec.get("data_source") if isinstance(rec.get("data_source"), str) else None
    model = rec.get("reward_model")
    if not isinstance(model, dict) or "ground_truth" not in model:
        raise InputError("missing" if model is None else "must be an object with ground_truth",
                         field="reward_model.ground_truth" if isinstance(model, dict) else "reward_model", **where)
    truth = model["ground_truth"]
    field = "reward_model.ground_truth"
    if isinstance(truth, str):
        try:
            truth = json.loads(truth)
        except (json.JSONDecodeError, RecursionError):
            raise InputError(f"data_source {source!r}: not JSON tests (a ground truth that is test code, as "
                             "rllm writes for kodcode, leetcode and humanevalplus, is not read)", field=field,
                             **where) from None
    kind, entry, tests = deepcoder_tests(truth, {}, "class Solution" in prompt, where, field)
    extra = rec.get("extra_info")
    index = extra.get("index") if isinstance(extra, dict) else None
    ident = index if isinstance(index, (int, str)) and not isinstance(index, bool) else where.get("line")
    meta: dict[str, Any] = {"source": "verl"}
    if source:
        meta["data_source"] = source
    return Task(task_id=f"{source or 'verl'}/{ident}", prompt=prompt, kind=kind, entry_point=entry, tests=tests,
                setup=solution_shim(tests), meta=meta)
