"""Served models' real answer shapes (robust36), against a stub OpenAI-compatible server on 127.0.0.1:

* a reasoning model whose server put the whole answer in ``reasoning_content`` (or ``reasoning``) and
  left ``content`` null or empty (vLLM's deepseek_r1 parser on a model that wrote no ``<think>`` tags,
  Qwen3 with thinking off): the code is there and is used; an answer cut at the length limit while
  still reasoning is none;
* a tool-call style answer (``content`` null, the code in ``tool_calls[].function.arguments``, as
  JSON ``{"code": ...}`` or as the text itself), also streamed;
* refusals, content filters and answers holding no choices: empty samples, counted and named in the
  status line (they ended the run, or went uncounted);
* a server that only streams (HTTP 400 "stream must be true", as DashScope's reasoning models):
  the requests go again as streams.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("openai")

from coevo.cli import main  # noqa: E402
from matrix.tasks import Task  # noqa: E402
from roles.api_client import ApiError, ApiGenerator, answers_note  # noqa: E402
from roles.api_config import ApiConfig  # noqa: E402
from roles.requests import role_request  # noqa: E402

pytestmark = pytest.mark.timeout(120)

ADD_TASK = {"task_id": "add", "prompt": "Return the sum of a and b.", "kind": "function", "entry_point": "add"}
ADD = Task.from_json(ADD_TASK)
RIGHT = "def add(a, b):\n    return a + b"
TESTS = "assert add(1, 2) == 3\nassert add(2, 2) == 4"


def is_tester(body: dict) -> bool:
    msgs = body.get("messages") or [{"content": body.get("prompt", "")}]
    text = "\n".join(str(m.get("content")) for m in msgs)
    return "Do not solve the task" in text or "<|role|>tester" in text


def fenced(body: dict) -> str:
    return "```python\n" + (TESTS if is_tester(body) else RIGHT) + "\n```"


class Stub:
    """``answer(body, i) -> (message, finish_reason)`` per choice, or ``raw(handler, body)`` writing the
    whole response itself."""

    def __init__(self, answer=None, raw=None):
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with stub.lock:
                    stub.bodies.append(body)
                if raw is not None:
                    raw(self, body)
                    return
                n = int(body.get("n") or 1)
                choices = []
                for i in range(n):
                    msg, finish = answer(body, i)
                    choices.append({"index": i, "message": dict(msg, role="assistant"), "finish_reason": finish})
                send(self, 200, {"id": "x", "object": "chat.completion", "model": "m", "choices": choices,
                                 "usage": {"prompt_tokens": 3, "completion_tokens": 5 * n}})

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def send(h, status: int, payload, ctype: str = "application/json") -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("content-type", ctype)
    h.send_header("content-length", str(len(data)))
    h.end_headers()
    try:
        h.wfile.write(data)
    except OSError:
        pass


@pytest.fixture
def stub():
    made: list[Stub] = []

    def make(answer=None, raw=None):
        s = Stub(answer, raw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def generator(s: Stub, tmp_path, **kw) -> ApiGenerator:
    kw.setdefault("cache_dir", str(tmp_path / "cache"))
    return ApiGenerator(ApiConfig(base_url=s.base, model="m", max_retries=0, timeout=20.0, **kw))


def sample(s: Stub, tmp_path, n_codes=2, n_tests=1, **kw):
    gen = generator(s, tmp_path, **kw)
    out = gen.generate([role_request("coder", ADD, n_codes), role_request("tester", ADD, n_tests)])
    return gen, out


def solve(s: Stub, tmp_path, capsys, *extra: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(dict(ADD_TASK, tests=[{"test": "assert add(1, 2) == 3"}])) + "\n")
    out = tmp_path / "codes.jsonl"
    rc = main(["solve", "--api-base", s.base, "--api-model", "m", "--tasks", str(tasks), "--out", str(out),
               "--n-codes", "2", "--n-tests", "1", "--consensus-inputs", "0", "--api-retries", "0",
               "--api-cache", str(tmp_path / "cache"), "--workers", "1", *extra])
    return rc, capsys.readouterr().err, out


# ---------------------------------------------------------------- reasoning fields

@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("content", [None, "", "\n\n"])
def test_an_answer_only_in_the_reasoning_field_is_used(stub, tmp_path, field, content):
    s = stub(lambda body, i: ({"content": content, field: "Let me think.\n" + fenced(body)}, "stop"))
    gen, out = sample(s, tmp_path)
    assert [o.text.endswith(fenced({}) if o.role == "coder" else "```") for o in out] == [True] * 3
    assert RIGHT in out[0].text and TESTS in out[2].text
    assert gen.stats["from_reasoning"] == 3 and "3 answers taken from the reasoning field" in answers_note(gen.stats)


def test_content_wins_over_the_reasoning_and_a_cut_reasoning_is_no_answer(stub, tmp_path):
    s = stub(lambda body, i: ({"content": fenced(body), "reasoning_content": "draft: def add(a, b): return 0"},
                              "stop"))
    gen, out = sample(s, tmp_path)
    assert RIGHT in out[0].text and "draft" not in out[0].text and gen.stats["from_reasoning"] == 0
    s2 = stub(lambda body, i: ({"content": None, "reasoning_content": "Let me think. " + fenced(body)}, "length"))
    gen, out = sample(s2, tmp_path / "2")
    assert [o.text for o in out] == [""] * 3 and all(o.truncated for o in out)
    assert gen.stats["cut_reasoning"] == 3
    assert "3 of 3 answers empty (3 cut at the length limit while reasoning)" in answers_note(gen.stats)


def test_the_cli_solves_from_reasoning_only_answers_and_says_so(stub, tmp_path, capsys):
    s = stub(lambda body, i: ({"content": None, "reasoning_content": fenced(body)}, "stop"))
    rc, err, out = solve(s, tmp_path, capsys)
    assert rc == 0, err
    assert json.loads(out.read_text())["code"] == RIGHT
    assert "3 answers taken from the reasoning field" in err and "2 parseable codes" in err


# ---------------------------------------------------------------- tool calls

@pytest.mark.parametrize("shape", ["json_code", "json_other_key", "raw_text", "legacy_function_call"])
def test_a_tool_call_answer_is_read_from_its_arguments(stub, tmp_path, shape):
    def answer(body, i):
        code = TESTS if is_tester(body) else RIGHT
        args = {"json_code": json.dumps({"code": code}), "json_other_key": json.dumps({"program": code}),
                "raw_text": code, "legacy_function_call": json.dumps({"code": code})}[shape]
        if shape == "legacy_function_call":
            return {"content": None, "function_call": {"name": "python", "arguments": args}}, "function_call"
        return {"content": None, "tool_calls": [{"id": "c", "type": "function",
                                                 "function": {"name": "run_python", "arguments": args}}]}, "tool_calls"
    s = stub(answer)
    gen, out = sample(s, tmp_path)
    assert RIGHT in out[0].text and RIGHT in out[1].text and TESTS in out[2].text
    assert gen.stats["from_tool_calls"] == 3 and "3 answers taken from tool calls" in answers_note(gen.stats)


def test_a_streamed_answer_keeps_its_reasoning_and_tool_call_pieces(stub, tmp_path):
    def raw(h, body):
        code = TESTS if is_tester(body) else RIGHT
        n = int(body.get("n") or 1)
        events = []
        for i in range(n):
            if i % 2 == 0:  # the reasoning in pieces, no content
                events += [{"choices": [{"index": i, "delta": {"role": "assistant", "reasoning_content": "think\n"}}]},
                           {"choices": [{"index": i, "delta": {"reasoning_content": "```python\n" + code}}]},
                           {"choices": [{"index": i, "delta": {"reasoning_content": "\n```"},
                                         "finish_reason": "stop"}]}]
            else:  # a tool call whose arguments come in pieces
                args = json.dumps({"code": code})
                events += [{"choices": [{"index": i, "delta": {"tool_calls": [
                    {"index": 0, "id": "c", "type": "function", "function": {"name": "py", "arguments": args[:7]}}]}}]},
                           {"choices": [{"index": i, "delta": {"tool_calls": [
                               {"index": 0, "function": {"arguments": args[7:]}}]}, "finish_reason": "tool_calls"}]}]
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        send(h, 200, data.encode(), "text/event-stream")
    s = stub(raw=raw)
    gen, out = sample(s, tmp_path)
    assert RIGHT in out[0].text and RIGHT in out[1].text and TESTS in out[2].text
    assert gen.stats["from_reasoning"] == 2 and gen.stats["from_tool_calls"] == 1


# ---------------------------------------------------------------- nothing usable: counted

def test_refusals_and_content_filters_are_empty_samples_counted_by_reason(stub, tmp_path):
    def answer(body, i):
        if is_tester(body):
            return {"content": None}, "content_filter"
        return ({"content": None, "refusal": "I can't help with that."}, "stop") if i == 0 else (
            {"content": fenced(body)}, "stop")
    s = stub(answer)
    gen, out = sample(s, tmp_path, n_codes=3, n_tests=2)
    assert [bool(o.text) for o in out] == [False, True, True, False, False]
    assert gen.stats["refused"] == 1 and gen.stats["filtered"] == 2
    assert "3 of 5 answers empty (1 refused, 2 stopped by the server's content filter)" in answers_note(gen.stats)


def test_an_answer_with_no_choices_costs_its_samples_not_the_run(stub, tmp_path, capsys):
    def raw(h, body):
        if is_tester(body):
            send(h, 200, {"id": "x", "object": "chat.completion", "choices": [],
                          "prompt_filter_results": [{"prompt_index": 0}]})
        else:
            send(h, 200, {"id": "x", "object": "chat.completion", "choices": [
                {"index": i, "message": {"role": "assistant", "content": fenced(body)}, "finish_reason": "stop"}
                for i in range(int(body.get("n") or 1))]})
    s = stub(raw=raw)
    gen, out = sample(s, tmp_path, n_codes=2, n_tests=2)
    assert [bool(o.text) for o in out] == [True, True, False, False]
    assert gen.stats["no_choices"] == 2 and "2 with no choice in the server's answer" in answers_note(gen.stats)
    assert len(s.bodies) == 2  # the empty answer is not asked again and again
    rc, err, path = solve(s, tmp_path / "cli", capsys)
    assert rc == 0, err
    assert "1 of 3 answers empty (1 with no choice in the server's answer)" in err
    assert json.loads(path.read_text())["code"] == RIGHT


def test_a_server_answering_no_choices_at_all_is_still_one_line(stub, tmp_path):
    s = stub(raw=lambda h, body: send(h, 200, {"id": "x", "object": "chat.completion", "choices": []}))
    with pytest.raises(ApiError, match="no choices") as err:
        sample(s, tmp_path)
    assert "\n" not in str(err.value)
    assert not list((tmp_path / "cache").rglob("*.json"))


# ---------------------------------------------------------------- a server that only streams

def test_a_server_that_only_streams_gets_streamed_requests(stub, tmp_path, capsys):
    def raw(h, body):
        if body.get("stream") is not True:
            send(h, 400, {"error": {"message": "This model only support stream mode, please enable the stream "
                                               "parameter to access the model.", "type": "invalid_request_error",
                                    "code": "invalid_parameter_error"}})
            return
        events = [{"choices": [{"index": 0, "delta": {"content": fenced(body)}, "finish_reason": "stop"}]},
                  {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}]
        send(h, 200, ("".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n").encode(),
             "text/event-stream")
    s = stub(raw=raw)
    rc, err, out = solve(s, tmp_path, capsys)
    assert rc == 0, err
    assert json.loads(out.read_text())["code"] == RIGHT
    assert "streams" in err and err.count("only support stream mode") == 1
    assert "3 requests, 0 answers" in err and "retried" not in err  # (a request sent again as a stream is no retry)
    # the cache key is the request as built: a re-run sends nothing
    before = len(s.bodies)
    rc, err, out = solve(s, tmp_path, capsys)
    assert rc == 0 and len(s.bodies) == before
