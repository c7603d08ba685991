"""Codes files as RL trainers and inference engines leave them (robust34): TRL's conversational
format keeps a completion as a list of messages (``"completion": [{"role": "assistant",
"content": ...}]``, several generations as a list of such lists), vLLM's offline ``RequestOutput``
dumped as ``"outputs": [{"text": ..., "finish_reason": ...}]``, an answer kept as one assistant
message object. Each was refused ("field 'completion[0]': must be a string, got dict")."""

import json

import pytest

from coevo.commands.codes_input import load_candidate_codes
from matrix.errors import InputError
from matrix.tasks import Task

F = "```"
TASK = Task(task_id="t/1", prompt="def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n", kind="function",
            entry_point="add")
RIGHT = f"Here it is:\n{F}python\ndef add(a, b):\n    return a + b\n{F}\n"
WRONG = f"{F}python\ndef add(a, b):\n    return a - b\n{F}"


def _load(tmp_path, rows):
    p = tmp_path / "codes.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    codes, _ = load_candidate_codes(p, [TASK])
    return codes["t/1"]


def _add(code):
    ns: dict = {}
    exec(compile(code, "<code>", "exec"), ns)
    return ns["add"](2, 3)


ROWS = {
    "trl_completion": [{"task_id": "t/1", "prompt": [{"role": "user", "content": "add"}],
                        "completion": [{"role": "assistant", "content": RIGHT}]}],
    "trl_completions": [{"task_id": "t/1", "completions": [[{"role": "assistant", "content": RIGHT}],
                                                           [{"role": "assistant", "content": WRONG}]]}],
    "vllm_outputs": [{"task_id": "t/1", "outputs": [{"index": 0, "text": RIGHT, "finish_reason": "stop"},
                                                    {"index": 1, "text": WRONG, "finish_reason": "length"}]}],
    "assistant_message": [{"task_id": "t/1", "response": {"role": "assistant", "content": RIGHT}}],
    "sharegpt_completion": [{"task_id": "t/1", "completion": [{"from": "gpt", "value": RIGHT}]}],
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_the_answers_are_read(tmp_path, name):
    codes = _load(tmp_path, ROWS[name])
    want = [5, -1][:len(codes)]
    assert [_add(c) for c in codes] == want
    assert len(codes) == (2 if name in ("trl_completions", "vllm_outputs") else 1)


def test_a_conversation_without_an_assistant_turn_is_one_line(tmp_path):
    with pytest.raises(InputError) as exc:
        _load(tmp_path, [{"task_id": "t/1", "completion": [{"role": "user", "content": "add"}]}])
    assert "codes.jsonl:1" in str(exc.value) and "completion" in str(exc.value)


def test_a_list_mixing_strings_and_objects_is_still_refused(tmp_path):
    with pytest.raises(InputError) as exc:
        _load(tmp_path, [{"task_id": "t/1", "code": [RIGHT, {"role": "assistant", "content": RIGHT}]}])
    assert "field 'code[1]'" in str(exc.value)


def test_reading_many_chat_answers_says_where_it_is(tmp_path):
    """Reading a codes file's chat answers takes ~0.5 ms a row here (20,000 rows: 6-16 s on the
    loaded 2-core machine) before the matrix's own status lines start: status lines with an ETA,
    at most every ``every_s`` seconds, none for the last row (the command's summary follows)."""
    tasks = [Task(task_id=f"t/{i}", prompt=TASK.prompt, kind="function", entry_point="add") for i in range(3)]
    p = tmp_path / "codes.jsonl"
    p.write_text("".join(json.dumps({"task_id": t.task_id, "code": c}) + "\n" for t in tasks for c in (RIGHT, WRONG)))
    said: list[str] = []
    codes, n = load_candidate_codes(p, tasks, say=said.append, every_s=0)
    assert n == 6 and [_add(c) for c in codes["t/2"]] == [5, -1]
    assert [s.split(" (")[0] for s in said] == ["reading codes: 2/6 rows", "reading codes: 4/6 rows"]
    assert all("ETA" in s for s in said)
    said.clear()
    load_candidate_codes(p, tasks, say=said.append)  # (default: every 30 s)
    assert said == []


def test_a_folder_without_samples_says_what_it_expected(tmp_path):
    """`--codes DIR` is evalplus's samples folder; a folder holding none (the user's project, a run
    directory) said "no codes in file"."""
    (tmp_path / "codes").mkdir()
    (tmp_path / "codes" / "notes.txt").write_text("x\n")
    with pytest.raises(InputError) as exc:
        load_candidate_codes(tmp_path / "codes", [TASK])
    msg = str(exc.value)
    assert "folder" in msg and "<n>.py" in msg and "in file" not in msg, msg
