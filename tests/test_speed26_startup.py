"""`coevo matrix` spawns its workers before it imports what only the run needs (issue 23: every
millisecond of imports before the spawn delays the workers' boot, which the first unit waits
for): importing the executor does not import the planner and the judge, and reading codes files
does not import the chat-answer parser until a field needs it. The names both modules export
stay the same objects."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("matrix.dispatch", "matrix.plans", "matrix.verdicts", "matrix.sandbox.harness", "roles.parsing")


def _loaded_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_executor_is_importable_without_the_planner_and_the_judge():
    assert _loaded_after("from matrix.engine import ExecConfig, Executor") == []


def test_the_codes_reader_is_importable_without_the_chat_answer_parser():
    assert _loaded_after("import coevo.commands.codes_input") == []


def test_the_exported_names_are_the_same_objects():
    import coevo.commands.codes_input as ci
    import matrix.engine as engine
    import roles.parsing
    from matrix import verdicts

    assert engine.CellResult is verdicts.CellResult
    assert ci.prompt_imports is roles.parsing.prompt_imports
    assert ci.printed_checks is roles.parsing.printed_checks
    from coevo.commands.codes_input import prompt_imports
    from matrix.engine import CellResult

    assert CellResult is verdicts.CellResult and prompt_imports is roles.parsing.prompt_imports
