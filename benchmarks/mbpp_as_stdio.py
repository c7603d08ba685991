"""MBPP (or any function benchmark) rewritten as stdin/stdout programs, for the stdio path of
``benchmarks/selection.py`` when no CodeContests-style data is at hand.

Each task's reference becomes a program that reads one line of Python literals (the arguments)
from stdin and prints ``repr`` of the result; each test with literal arguments becomes a stdin /
stdout pair whose output is what the reference prints (run in the sandbox). Tasks whose reference
fails on a test input are left out. Writes CodeContests-format JSON Lines.

    python benchmarks/mbpp_as_stdio.py --out mbpp_stdio.jsonl
    python benchmarks/selection.py --data mbpp_stdio.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_DATA = os.environ.get("COEVO_MBPP", "/work/shared/data/sanitized-mbpp.json")

READ_ARGS = """

import ast as _ast
import sys as _sys

_line = _sys.stdin.read().strip()
print(repr({entry}(*_ast.literal_eval("(" + _line + ",)"))))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help=f"function benchmark (default {DEFAULT_DATA})")
    ap.add_argument("--format", default="auto")
    ap.add_argument("--limit", type=int, default=None, help="first N tasks only")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from coevo.data import load_any
    from matrix.engine import ExecConfig, Executor
    from matrix.inputs import extract_calls
    from matrix.jsonl import write_jsonl_atomic
    from matrix.tasks import Task

    jobs = []
    for t in load_any(args.data, args.format, limit=args.limit):
        if t.kind != "function" or not t.solutions or not t.tests:
            continue
        calls = extract_calls(t.tests, t.entry_point)
        if not calls or any(c.kwargs for c in calls):
            continue
        program = (t.setup + "\n" if t.setup else "") + t.solutions[0] + READ_ARGS.format(entry=t.entry_point)
        inputs = list(dict.fromkeys(", ".join(repr(a) for a in c.args) + "\n" for c in calls))
        jobs.append((t, program, inputs))
    rows = []
    with Executor(ExecConfig(timeout=2.0)) as executor:
        for t, program, inputs in jobs:
            task = Task(task_id=t.task_id, prompt=t.prompt, kind="stdio", entry_point=None, tests=[],
                        solutions=[program])
            cells = executor.run_stdin(task, [program], inputs)[0]
            if all(c.status == "pass" for c in cells):
                rows.append({"task_id": f"stdio/{t.task_id}", "question": t.prompt, "solutions": [program],
                             "test_input": inputs, "test_output": [c.value for c in cells]})
    write_jsonl_atomic(args.out, rows)
    print(json.dumps({"tasks": len(rows), "of": len(jobs), "out": args.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
