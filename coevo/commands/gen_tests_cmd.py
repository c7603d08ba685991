"""`coevo gen-tests`: test suites, two ways.

``coevo gen-tests PATH`` (a ``.py`` file, a package directory, or ``file.py::name``): a readable
pytest suite for your own code, one file per module, plus a JSON report per module (mutation
score, line and branch coverage, tests kept / tried, time, suspects). Works without a model; with
``--model`` the model's Tester tests and Coder implementations join the matrix. See
:mod:`coevo.testgen`.

``coevo gen-tests --model M --tasks T --out DIR`` (tasks in our JSONL format): the model writes
tests and programs, and the tests the code x test matrix judges reliable are kept. ``DIR``
receives:

* ``DIR/tests.jsonl``: the kept tests in the tests contract (``{"task_id", "test"}`` or
  ``{"task_id", "input", "output"}``), plus ``"score"``, the matrix's probability that the test is
  correct;
* ``DIR/test_<task>.py``: a ready-to-run pytest file per task holding the kept tests, each named
  for what it checks and commented with its reliability score (``DIR`` is a package, so suites in
  several directories run together). The code under test is ``$COEVO_SOLUTION`` (a Python file)
  when set, else ``DIR/solutions/<task>.py``, the program the matrix selected. Running the file
  imports that code in-process: it is not sandboxed. Files an earlier run wrote and this one does
  not are removed.
"""

from __future__ import annotations

import re
from pathlib import Path

from coevo.testgen.outdir import MANIFEST

HELP = "generate a pytest suite for your code (PATH), or model-written tests for a tasks file"
DESCRIPTION = HELP + """

Your code (no model needed):

  coevo gen-tests mylib/stats.py                 # -> tests/test_mylib_stats.py + .json report
  coevo gen-tests mylib/                         # every module of the package
  coevo gen-tests mylib/stats.py::median --out tests/generated --time-budget 30

Inputs come from type hints, defaults, constants in the code, docstring examples and hypothesis
draws, mutated towards lines and branches not yet reached (coverage.py decides); expected values
are the code's observed behaviour. The user's code only runs inside the sandbox. The matrix of
the code and its AST mutants x every candidate test picks a small suite that kills the most
mutants and covers the most branches; each kept test passes four times in fresh processes (four
hash seeds, both orders, every other run as another user on another machine 400 days later; under
the project's own pytest configuration and conftest.py files, where it has them) before the file
is written. The report lists "suspects": behaviours where the code disagrees with its own
docstring examples (or, with --model, with independent implementations that agree).
In this mode --timeout limits one call of your code (default: the budget / 40, between 0.1 and
1 s) and --seed seeds the input generation.

A tasks file (JSONL) and a model (local, or served with --api-base):

  coevo gen-tests --model runs/demo/model --tasks tasks.jsonl --out generated_tests/
  pytest generated_tests/          # runs them against the selected programs
"""


def add_arguments(parser) -> None:
    from coevo.commands.solve_cmd import add_model_arguments

    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="your code: a .py file, a package directory, or file.py::name "
                             "(a function, class or Class.method)")
    parser.add_argument("--out", metavar="DIR",
                        help="output directory (PATH mode default: the project's tests/ directory; "
                             "required with --tasks)")
    add_model_arguments(parser, n_tests_default=8)
    # PATH mode needs neither a model nor a tasks file (run() asks for them with --tasks)
    for action in parser._actions:
        if action.dest == "tasks":
            action.required = False
    for group in parser._mutually_exclusive_groups:
        if any(a.dest == "model" for a in group._group_actions):
            group.required = False
    parser.add_argument("--min-score", type=float, default=0.7, metavar="P",
                        help="--tasks mode: keep tests whose reliability (the probability that the "
                             "test is right) is at least P (default 0.7)")
    parser.add_argument("--calibration", metavar="REPORT",
                        help="--tasks mode: read the reliability scores through the tests map of a "
                             "`coevo eval` report (fitted on labelled tasks), so that --min-score P "
                             "keeps tests of which about a share P are right")
    parser.add_argument("--time-budget", type=float, default=60.0, metavar="S",
                        help="PATH mode: seconds per module (default 60)")
    parser.add_argument("--max-mutants", type=int, default=1000, metavar="N",
                        help="PATH mode: mutants per module at most (default 1000; they run while the "
                             "time budget lasts, spread over the module)")
    parser.add_argument("--report", metavar="FILE",
                        help="PATH mode: also write one JSON report for the whole run ('-': stdout)")


def safe_name(task_id: str) -> str:
    s = re.sub(r"\W", "_", task_id, flags=re.ASCII).strip("_") or "task"
    return s if not s[0].isdigit() else "t" + s


def _comment(text: str) -> str:
    return "\n".join(("# " + ln).rstrip() for ln in text.strip().splitlines()) or "#"


_HEADER = '''\
# Tests generated by `coevo gen-tests` for task {task_id!r}.
# Only tests the code x test matrix judged reliable are kept; "reliability" is its estimate of the
# probability that the test is correct.
# Code under test: $COEVO_SOLUTION if set, else {default} (the selected program).
# The code is imported into this process: this file is not a sandbox.
#
# Task:
{prompt}
import os
import pathlib
import subprocess
import sys

import pytest

_HERE = pathlib.Path(__file__).resolve().parent
_PATH = pathlib.Path(os.environ.get("COEVO_SOLUTION") or _HERE / {default!r})
_SETUP = {setup!r}
'''

_FUNCTION_LOADER = '''
_LOAD_ERROR = None
_NS = {"__name__": "solution"}
try:
    exec(compile(_SETUP + "\\n" + _PATH.read_text(encoding="utf-8"), str(_PATH), "exec"), _NS)
except BaseException as exc:  # reported by every test below
    _LOAD_ERROR = f"cannot load {_PATH}: {type(exc).__name__}: {exc}"
for _name, _obj in list(_NS.items()):
    if _name.startswith(("test", "Test")):  # the program's own names are not tests
        try:
            _obj.__test__ = False
        except Exception:
            pass
globals().update({k: v for k, v in _NS.items() if k not in globals()})


@pytest.fixture(autouse=True)
def _code_under_test():
    if _LOAD_ERROR:
        pytest.fail(_LOAD_ERROR)
'''

_STDIO_RUNNER = '''
TIMEOUT = {timeout!r}


def _lines(text):
    lines = [ln.rstrip() for ln in text.replace("\\r\\n", "\\n").split("\\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _run(stdin):
    if not _PATH.is_file():
        pytest.fail(f"no program at {{_PATH}}")
    src = _SETUP + "\\n" + _PATH.read_text(encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", src], input=stdin, capture_output=True, text=True,
                          timeout=TIMEOUT)
    return proc.stdout
'''


def test_names(tests: list, entry: str | None) -> list[str]:
    """Descriptive, distinct function names for a task's tests (``test_add_1_2_returns_3``,
    ``test_input_3_4``), instead of ``test_0..N``."""
    from coevo.testgen.writer import unique_names

    return unique_names([_safe_test_name(t, entry) for t in tests])


def _safe_test_name(t, entry: str | None) -> str:
    try:
        return _test_name(t, entry)
    except (RecursionError, ValueError, MemoryError):  # a test nested too deep to unparse, an int
        return "test_" + _snake_id(entry or "check")  # past the digit limit: a plain name


def _snake_id(name: str) -> str:
    from coevo.testgen.writer import _snake

    return _snake(name) or "check"


_NO_REWRITE = '"""PYTEST_DONT_REWRITE: a test here nests deeper than pytest\'s assertion rewriting goes."""\n'
REWRITE_DEPTH = 120  # AST levels past which pytest's assertion rewriting may exhaust the recursion limit


def _too_deep_to_rewrite(t) -> bool:
    """The test's syntax tree is deeper than :data:`REWRITE_DEPTH` (walked without recursion)."""
    import ast

    src = t.test if getattr(t, "kind", None) == "assert" else getattr(t, "call", None)
    if not src:
        return False
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > REWRITE_DEPTH:
            return True
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))
    return False


def indent_code(src: str, prefix: str = "    ") -> str:
    """``src`` with ``prefix`` before each of its lines, except the lines inside a multi-line
    string literal (their text is the string's value: indenting them changes what the test
    asserts). Lines are split at ``\n`` only (U+2028 inside a literal is not a line break)."""
    import io
    import tokenize

    inside: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src, newline="\n").readline):
            if tok.end[0] > tok.start[0] and (tok.type == tokenize.STRING
                                              or tokenize.tok_name[tok.type].startswith("FSTRING")):
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    lines = src.split("\n")
    return "\n".join(prefix + line if line.strip() and k + 1 not in inside else line
                     for k, line in enumerate(lines))


def _test_name(t, entry: str | None) -> str:
    import ast

    from coevo.testgen.writer import _snake, _value_word, _word_for

    if t.kind == "stdio":
        words = [_snake(w) or "x" for w in (t.input or "").split()[:3]]
        return "test_input_" + ("_".join(words) if words else "empty")
    src, value = None, None
    if t.kind == "call":
        src, value = t.call, t.expected
    else:
        try:
            node = ast.parse(t.test or "").body[0]
        except (SyntaxError, IndexError):
            node = None
        if isinstance(node, ast.Assert):
            test = node.test
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                src, value = ast.unparse(test.left), ast.unparse(test.comparators[0])
            else:
                calls = [n for n in ast.walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                         and n.func.id == entry]
                src = ast.unparse(calls[0]) if calls else None
                value = "True" if not isinstance(test, ast.UnaryOp) else "False"
    words = [_snake(entry or "check")]
    try:
        call = ast.parse(src or "", mode="eval").body
    except SyntaxError:
        call = None
    if isinstance(call, ast.Call):
        args = [_word_for(ast.unparse(a)) for a in call.args[:3]]
        words.append("_".join(args) if args else "no_arguments")
    if value is not None:
        try:
            words.append("returns_" + _value_word(ast.literal_eval(value)))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    name = "test_" + _snake("_".join(w for w in words if w))
    return name[:75].rstrip("_")


def render_pytest_file(task, kept: list[tuple[object, float]], solution_rel: str,
                       timeout: float = 10.0, n_generated: int | None = None) -> str:
    """The pytest module for one task; ``kept`` holds ``(Test, score)`` pairs. Without kept tests
    the file holds one skipped test and never loads the code (a program that does not compile is
    not an error when there is nothing to run on it)."""
    parts = [_HEADER.format(task_id=task.task_id, default=solution_rel, prompt=_comment(task.prompt),
                            setup=task.setup or "")]
    if not kept:
        why = ("the Tester wrote no parseable test for this task" if n_generated == 0 else
               f"the matrix judged none of the {n_generated} generated tests reliable" if n_generated else
               "the matrix judged none of the generated tests reliable")
        parts.append(f"\n\ndef test_no_reliable_test():\n    pytest.skip({why!r})\n")
        return "".join(parts).rstrip() + "\n"
    if task.kind == "stdio":
        parts.append(_STDIO_RUNNER.format(timeout=timeout))
    else:
        parts.append(_FUNCTION_LOADER)
    if any(_too_deep_to_rewrite(t) for t, _ in kept):
        # pytest's assertion rewriting recurses per level (`2+2+...+2` of 400 terms): the file
        # would not even be collected, so its asserts stay as written
        parts[0] = parts[0].replace("\nimport os\n", "\n" + _NO_REWRITE + "import os\n", 1)
    names = test_names([t for t, _ in kept], task.entry_point)
    for name, (t, score) in zip(names, kept):
        head = f"\n\n# reliability {score:.3f}\ndef {name}():\n"
        if t.kind == "stdio":
            body = (f"stdin = {t.input!r}\nexpected = {t.output!r}\n"
                    "assert _lines(_run(stdin)) == _lines(expected)\n")
        elif t.kind == "call":
            body = f"assert {t.call} == {t.expected}\n"
        else:
            body = (t.test or "").strip() + "\n"
        parts.append(head + indent_code(body))
    return "".join(parts).rstrip() + "\n"


def _contract_row(task_id: str, t, score: float) -> dict:
    from roles.prompts import test_as_assert

    row = {"task_id": task_id}
    if t.kind == "stdio":
        row.update(input=t.input, output=t.output)
    else:
        row["test"] = test_as_assert(t)
    row["score"] = round(float(score), 6)
    return row


def run(args) -> int:
    from matrix.errors import InputError

    if args.path:
        from coevo.testgen.driver import run_path_mode

        return run_path_mode(args)
    missing = [flag for flag, v in (("--tasks", args.tasks), ("--model", args.model or args.api_base),
                                    ("--out", args.out)) if not v]
    if missing:
        raise InputError("give PATH (your code), or --tasks with --model (or --api-base) and --out",
                         field=missing[0])
    return run_tasks_mode(args)


def _previous_files(out: Path) -> list[str]:
    """Files an earlier --tasks run wrote into ``out`` (from its manifest)."""
    import json

    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        files = data.get("tasks_files", [])
        return [f for f in files if isinstance(f, str) and "/" not in f.replace("solutions/", "", 1)
                and ".." not in f]
    except (OSError, ValueError, AttributeError):
        return []


def run_tasks_mode(args) -> int:
    import json

    from coevo.commands.solve_cmd import _say, build_pools
    from matrix.errors import InputError
    from matrix.jsonl import write_jsonl_atomic, write_text_atomic

    if not 0 <= args.min_score <= 1:
        raise InputError("must be in [0, 1]", field="--min-score")
    if args.out == "-":
        raise InputError("is a directory of test files; '-' (standard output) does not apply", field="--out")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", file=str(out))
    test_map = None
    if args.calibration:
        from matrix.calibration import read_calibration

        test_map = read_calibration(args.calibration, scores={}).get("tests")
        if test_map is None:
            raise InputError("holds no map for tests (calibration.tests.map)", file=args.calibration)
    _, pools, _ = build_pools(args, min_tests=1)
    if test_map is not None:
        for p in pools:
            p.test_scores = [float(x) for x in test_map(p.test_logits)] if p.tests else []
    out.mkdir(parents=True, exist_ok=True)
    (out / "solutions").mkdir(exist_ok=True)
    previous = _previous_files(out)
    rows, used, n_files = [], set(), 0
    written = ["tests.jsonl", "__init__.py"]
    for p in pools:
        name = safe_name(p.task.task_id)
        base, k = name, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        kept = [(t, s) for t, s in zip(p.tests, p.test_scores) if s >= args.min_score]
        kept.sort(key=lambda ts: -ts[1])
        rel = f"solutions/{name}.py"
        write_text_atomic(out / rel, p.code + ("\n" if p.code and not p.code.endswith("\n") else ""))
        timeout = float(args.timeout) if args.timeout else 10.0
        write_text_atomic(out / f"test_{name}.py",
                          render_pytest_file(p.task, kept, rel, timeout, n_generated=len(p.tests)))
        written += [rel, f"test_{name}.py"]
        n_files += 1
        rows += [_contract_row(p.task.task_id, t, s) for t, s in kept]
    write_jsonl_atomic(out / "tests.jsonl", rows)
    if not (out / "__init__.py").exists():  # a package: test files of several suites never collide
        write_text_atomic(out / "__init__.py", "")
    for stale in set(previous) - set(written):
        try:
            (out / stale).unlink()
        except FileNotFoundError:
            pass
    write_text_atomic(out / MANIFEST, json.dumps({"tasks_files": sorted(written)}, indent=2) + "\n")
    with_tests = sum(1 for p in pools if any(s >= args.min_score for s in p.test_scores))
    n_generated = sum(len(p.tests) for p in pools)
    if n_generated == 0:
        detail = "the Tester wrote no parseable test"
    else:
        detail = f"{len(rows)} reliable tests (of {n_generated} generated) for {with_tests}/{len(pools)} tasks"
    _say(args, f"wrote {out}: {detail}, {n_files} pytest files")
    return 0
