"""Validation of Proposer tasks by execution (Absolute Zero-style, done safely).

A proposed task (parsed by :func:`roles.parsing.parse_task`) is accepted only if

1. its reference solution imports no forbidden module and calls no forbidden builtin (static AST
   check: process, file-system, network, introspection and randomness);
2. it has between ``min_inputs`` and ``max_inputs`` distinct, well-formed inputs;
3. it is not a known task, not even renamed (same solution up to the names of its function,
   arguments and variables, or same description), nor a copy of an earlier proposal of the
   same batch;
4. the reference runs on every input inside the sandbox without error or timeout;
5. two runs in separate sandboxed processes give identical outputs (determinism; the executor
   fixes ``PYTHONHASHSEED`` so string hashing cannot fake instability, and any remaining
   difference means the program depends on time, randomness or state);
6. the outputs are not all identical (a constant function teaches nothing), and not all equal to
   the input (an identity function teaches nothing either);
7. for a function task, the outputs are plain literals (they become ``f(x) == value`` tests).

Every rejection carries one reason code of :data:`REJECT_REASONS` (the loop logs their shares
per step as ``reject/<reason>``) and a :data:`GRADE` for the Proposer's graded penalty:
``broken`` (the program does not work as a task), ``copy`` (a known task, a held-out one, or a
copy within the batch) or ``degenerate`` (a new program that works but teaches nothing). A world may add its own
admission check before this (the tiny world's: the task must be a training-world composition, see
:mod:`coevo.tinyworld.proposals`).

Accepted tasks get ground-truth tests built from the reference outputs: ``assert f(args) == out``
for function tasks (checked on plain data by the matrix engine), stdin/stdout pairs for programs.
A task proposed without a description gets one here when the world gives none: it shows its
first input/output pairs (Absolute Zero's induction task) and keeps the rest as hidden tests.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass

from matrix.tasks import Task, Test

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "socket", "shutil", "pathlib", "signal", "ctypes", "multiprocessing",
    "threading", "asyncio", "random", "secrets", "time", "datetime", "inspect", "gc", "importlib",
    "builtins", "io", "tempfile", "pickle", "marshal", "resource", "urllib", "http", "requests", "uuid",
})
# input() stays allowed: a stdin/stdout task reads its input with it (sys is forbidden)
FORBIDDEN_CALLS = frozenset({"open", "exec", "eval", "compile", "__import__", "globals", "locals",
                             "vars", "breakpoint", "getattr", "setattr", "delattr", "id", "hash"})


def static_violations(code: str) -> list[str]:
    """Names of forbidden modules or builtins the code uses (empty when clean)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ["syntax"]
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                bad.append(node.module or "")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            bad.append(node.func.id)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            bad.append(node.attr)
    return bad


REJECT_REASONS = ("malformed", "not_world", "forbidden", "few_inputs", "duplicate", "repeat", "heldout",
                  "ref_error", "ref_timeout", "nondeterministic", "constant", "identity", "bad_outputs")
# graded penalty per reason (matrix.rewards.PROPOSAL_REWARDS): "broken" = not a working task, "copy" = a
# known task (even renamed, or behaving like one) or a copy of another proposal of the batch, graded like a
# broken task: copying what the model already knows must never be the easy step up from garbage;
# "degenerate" = a working new program that teaches nothing (constant, identity). A held-out task
# (``heldout``) is graded as a copy: it is a known task, only kept out of training; graded
# degenerate (-0.25, above a copy's -0.5) it earned a positive advantage in a group of copies and
# garbage, and the shared model was pushed towards the held-out evaluation's programs
GRADE = {"malformed": "malformed", "not_world": "broken", "forbidden": "broken", "few_inputs": "broken",
         "ref_error": "broken", "ref_timeout": "broken", "nondeterministic": "broken", "bad_outputs": "broken",
         "duplicate": "copy", "repeat": "copy", "heldout": "copy", "constant": "degenerate",
         "identity": "degenerate"}
assert set(GRADE) == set(REJECT_REASONS)


def fingerprint(text: str) -> str:
    """A normalisation-insensitive fingerprint (AST dump for code, collapsed words for prose)."""
    try:
        norm = ast.dump(ast.parse(text))
    except SyntaxError:
        norm = " ".join(text.lower().split())
    return hashlib.sha256(norm.encode()).hexdigest()[:16]


class _Renamer(ast.NodeTransformer):
    """Renames every name the code binds (functions, classes, arguments, variables) to ``v0, v1,
    ...`` in order of first appearance, and drops docstrings; free names (builtins) stay."""

    def __init__(self, bound: set[str]):
        self.bound = bound
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def _strip_doc(self, node):
        body = getattr(node, "body", None)
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]

    def visit_FunctionDef(self, node):
        node.name = self._new(node.name)
        self._strip_doc(node)
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self._new(node.name)
        self._strip_doc(node)
        return self.generic_visit(node)

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node


def structure_fingerprint(code: str) -> str:
    """A fingerprint of a program that ignores formatting, comments, docstrings and the names it
    binds: a known task copied under new names has the same one. Unparseable code falls back to
    :func:`fingerprint`."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return fingerprint(code)
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    tree = _Renamer(bound).visit(tree)
    norm = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(norm.encode()).hexdigest()[:16]


def task_fingerprints(task: Task) -> set[str]:
    """What makes a task known: its solution's structure and (when it has one) its description."""
    out = {structure_fingerprint(task.solutions[0])} if task.solutions else set()
    if task.prompt.strip():
        out.add(fingerprint(task.prompt))
    return out


@dataclass
class Verdict:
    task: Task | None
    valid: bool
    reason: str  # "ok" or one of REJECT_REASONS
    detail: str = ""

    @property
    def grade(self) -> str:
        """``valid`` or the penalty grade of the rejection (see :data:`GRADE`)."""
        return "valid" if self.valid else GRADE[self.reason]


def validate_proposals(proposals: list[Task], executor, known_fingerprints: set[str], *,
                       min_inputs: int = 2, max_inputs: int = 8, describe_shown: int = 2) -> list[Verdict]:
    """Validate parsed proposals (each with ``solutions[0]`` and ``meta['inputs']``), in order.

    A later proposal with the fingerprint of an earlier one in the same batch is not run again: it
    gets the earlier one's verdict, or ``repeat`` when that one is valid. A valid task without a
    description is described by its first ``describe_shown`` input/output pairs."""
    verdicts: list[Verdict | None] = [None] * len(proposals)
    to_run: list[int] = []
    first_of: dict[str, int] = {}  # fingerprint -> index of the batch's first proposal with it
    copies: dict[int, int] = {}
    for i, task in enumerate(proposals):
        ref = task.solutions[0] if task.solutions else ""
        inputs = list(dict.fromkeys(task.meta.get("inputs", [])))[:max_inputs]
        bad = static_violations(ref)
        fps = task_fingerprints(task)
        earlier = next((first_of[f] for f in fps if f in first_of), None)
        if earlier is not None:
            copies[i] = earlier
            continue
        first_of.update({f: i for f in fps})
        if bad:
            verdicts[i] = Verdict(None, False, "forbidden", ", ".join(sorted(set(bad))))
        elif len(inputs) < min_inputs:
            verdicts[i] = Verdict(None, False, "few_inputs", f"needs at least {min_inputs} distinct inputs")
        elif fps & known_fingerprints:
            verdicts[i] = Verdict(None, False, "duplicate",
                                  "same solution (up to names) or description as a known task")
        else:
            task.meta["inputs"] = inputs
            to_run.append(i)
    # two independent sandboxed runs of every reference on its inputs
    runs = _run_references([proposals[i] for i in to_run], executor)
    for i, (first, second) in zip(to_run, runs):
        verdicts[i] = _judge(proposals[i], first, second, describe_shown)
    for i, j in copies.items():
        v = verdicts[j]
        assert v is not None
        verdicts[i] = (Verdict(None, False, "repeat", "a copy of an earlier proposal of the same batch")
                       if v.valid else Verdict(None, False, v.reason, v.detail))
    return [v for v in verdicts if v is not None]


def _judge(task: Task, first: list, second: list, describe_shown: int) -> Verdict:
    bad = next((c for c in first + second if c.status != "pass"), None)
    if bad is not None:
        reason = "ref_timeout" if bad.status in ("timeout", "memory", "output_limit") else "ref_error"
        return Verdict(None, False, reason, f"reference {bad.status} on an input")
    a, b = [c.value for c in first], [c.value for c in second]
    if a != b:
        return Verdict(None, False, "nondeterministic", "two runs gave different outputs")
    if len({repr(v) for v in a}) < 2:
        return Verdict(None, False, "constant", "every input gives the same output")
    if _is_identity(task, a):
        return Verdict(None, False, "identity", "every output is the input (or one argument) unchanged")
    if task.kind == "function" and not all(_is_literal(v) for v in a):
        return Verdict(None, False, "bad_outputs", "outputs are not plain literals")
    task = _with_tests(task, a)
    if not task.prompt.strip():
        task.prompt = describe_by_examples(task, describe_shown)
    return Verdict(task, True, "ok")


def _call_args(call: str) -> list | None:
    """The literal positional arguments of a call expression, else ``None``."""
    try:
        node = ast.parse(call, mode="eval").body
        if not isinstance(node, ast.Call) or node.keywords:
            return None
        return [ast.literal_eval(a) for a in node.args]
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _is_identity(task: Task, outputs: list) -> bool:
    """Every output equals the input (stdio: modulo surrounding whitespace), or for a function
    task every output equals the argument at one fixed position."""
    inputs = task.meta["inputs"]
    if task.kind != "function":
        return all(str(o).strip() == str(x).strip() for x, o in zip(inputs, outputs))
    args = [_call_args(c) for c in inputs]
    if any(a is None for a in args):
        return False
    width = min(len(a) for a in args)  # type: ignore[arg-type]
    return any(all(repr(a[k]) == repr(o) for a, o in zip(args, outputs)) for k in range(width))  # type: ignore[index]


def describe_by_examples(task: Task, shown: int = 2) -> str:
    """A description for a task proposed without one: its first ``shown`` examples (Absolute
    Zero's induction task; the other tests stay hidden)."""
    if task.kind == "function":
        lines = [f"{t.call} == {t.expected}" for t in task.tests[:shown]]
        return (f"Write a function {task.entry_point} consistent with these examples:\n" + "\n".join(lines))
    lines = [f"input {t.input!r} -> output {t.output!r}" for t in task.tests[:shown]]
    return "Write a program (stdin -> stdout) consistent with these examples:\n" + "\n".join(lines)


def _run_references(tasks: list[Task], executor) -> list[tuple[list, list]]:
    out = []
    for task in tasks:
        ref = task.solutions[0]
        inputs = task.meta["inputs"]
        if task.kind == "function":
            rows = executor.run_calls(task, [ref, ref], inputs)
        else:
            rows = executor.run_stdin(task, [ref, ref], inputs)
        out.append((rows[0], rows[1]))
    return out


def _is_literal(value) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _with_tests(task: Task, outputs: list) -> Task:
    if task.kind == "function":
        task.tests = [Test.call_expected(call, repr(out)) for call, out in zip(task.meta["inputs"], outputs)]
    else:
        task.tests = [Test.stdio(inp, out) for inp, out in zip(task.meta["inputs"], outputs)]
    return task


# ----------------------------------------------------------------------------- run report

def run_report(run_dir, last: int = 20) -> dict:
    """Self-play figures of a run from its ``metrics.jsonl``: valid proposals overall and over
    the ``last`` steps, each rejection reason's share of all proposals, accepted tasks, proposed
    tasks in the curriculum at the end, and proposed tasks drawn by the curriculum in training
    steps (``python -c "from coevo.selfplay import run_report; print(run_report('runs/demo'))"``)."""
    from training.metrics_file import METRICS_FILE, read_metrics

    recs = sorted((r for r in read_metrics(f"{run_dir}/{METRICS_FILE}") if r.get("proposer/proposals")),
                  key=lambda r: r["step"])
    if not recs:
        return {"steps": 0, "proposals": 0}
    counts = [r["proposer/proposals"] for r in recs]
    total = sum(counts)
    tail = recs[-last:]
    reasons = sorted({k for r in recs for k in r if k.startswith("reject/")})
    return {
        "steps": len(recs),
        "proposals": int(total),
        "valid_frac": round(sum(r["proposer/accepted"] for r in recs) / total, 3),
        f"valid_frac_last_{last}": round(sum(r["proposer/accepted"] for r in tail)
                                         / sum(r["proposer/proposals"] for r in tail), 3),
        "accepted": int(sum(r["proposer/accepted"] for r in recs)),
        "proposed_in_curriculum": int(recs[-1].get("curriculum/proposed", 0)),
        "drawn_proposed": int(sum(r.get("curriculum/drawn_proposed", 0) for r in recs)),
        "reject": {k.split("/", 1)[1]: round(sum(r.get(k, 0.0) * c for r, c in zip(recs, counts)) / total, 3)
                   for k in reasons},
    }
