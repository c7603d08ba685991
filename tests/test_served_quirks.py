"""Real servers' quirks, reproduced by a local stub (a thread of http.server on 127.0.0.1), against
the served-model client (roles.api_client) and the CLI: a connection closed or stalled in the middle
of the body, content as a list of parts (Mistral-style), an event stream nobody asked for, HTML error
pages from a proxy or a web UI, and a model name the server does not know (it says which it serves).
Each either gives the right answer or stops with one line naming the URL (no traceback)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("openai")

from tinymodel import ADD_GOOD_TESTS, ADD_RIGHT, ADD_TASK  # noqa: E402

from coevo.cli import main  # noqa: E402
from matrix.tasks import Task  # noqa: E402
from roles.api_client import ApiError, ApiGenerator  # noqa: E402
from roles.api_config import ApiConfig  # noqa: E402
from roles.requests import role_request  # noqa: E402

pytestmark = pytest.mark.timeout(60)

ADD = Task.from_json(ADD_TASK)
RIGHT = "```python\n" + ADD_RIGHT + "\n```"
TESTS = "```python\n" + "\n".join(ADD_GOOD_TESTS) + "\n```"


def answer_text(body: dict) -> str:
    msgs = body.get("messages") or [{"content": body.get("prompt", "")}]
    text = "\n".join(str(m.get("content")) for m in msgs)
    return TESTS if "Do not solve the task" in text or "<|role|>tester" in text else RIGHT


def completion(path: str, texts: list, finish: str = "stop") -> dict:
    chat = path.endswith("/chat/completions")
    return {"id": "x", "object": "chat.completion" if chat else "text_completion", "created": 0, "model": "m",
            "choices": [({"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": finish}
                         if chat else {"index": i, "text": t, "finish_reason": finish})
                        for i, t in enumerate(texts)]}


class Server:
    """``behave(handler, path, body, attempt)`` writes the whole response itself (``attempt``: how
    many POSTs came before this one); ``models`` is what ``GET /v1/models`` lists."""

    def __init__(self, behave, models=("served/model-7b",)):
        self.posts = 0
        self.gets: list[str] = []
        self.lock = threading.Lock()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                srv.gets.append(self.path)
                if self.path.rstrip("/") == "/v1/models":
                    send(self, 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
                else:
                    send(self, 404, {"detail": "Not Found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with srv.lock:
                    attempt = srv.posts
                    srv.posts += 1
                try:
                    behave(self, self.path, body, attempt)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

            def handle_error(self, *args):  # a client that hung up is no news
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *a: None  # type: ignore[method-assign]
        # a short poll: shutdown() waits for the serving loop's next look (0.5 s by default, each test)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def send(h, status: int, payload, ctype: str = "application/json", headers: dict | None = None) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    h.send_response(status)
    h.send_header("content-type", ctype)
    h.send_header("content-length", str(len(data)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


def good(h, path, body, attempt):
    send(h, 200, completion(path, [answer_text(body)] * int(body.get("n") or 1)))


@pytest.fixture
def server():
    made: list[Server] = []

    def make(behave, **kw):
        s = Server(behave, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def api(s: Server, tmp_path, **kw) -> ApiConfig:
    kw.setdefault("cache_dir", str(tmp_path / "cache"))
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 10.0)
    return ApiConfig(base_url=s.base, model=kw.pop("model", "stub-model"), **kw)


def requests_for(n_codes=2, n_tests=1):
    return [role_request("coder", ADD, n_codes), role_request("tester", ADD, n_tests)]


def write_tasks(tmp_path) -> str:
    p = tmp_path / "tasks.jsonl"
    p.write_text(json.dumps(dict(ADD_TASK, tests=[{"test": t} for t in ADD_GOOD_TESTS])) + "\n")
    return str(p)


def solve(s: Server, tmp_path, capsys, *extra: str) -> tuple[int, str, object]:
    out = tmp_path / "codes.jsonl"
    rc = main(["solve", "--api-base", s.base, "--api-model", "stub-model", "--tasks", write_tasks(tmp_path),
               "--out", str(out), "--n-codes", "2", "--n-tests", "1", "--consensus-inputs", "0",
               "--api-cache", str(tmp_path / "cache"), "--quiet", *extra])
    return rc, capsys.readouterr().err, out


def one_line_error(rc: int, err: str, out) -> None:
    assert rc == 2 and err.startswith("coevo solve: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and not out.exists()


# --------------------------------------------------------------------------------------------
# a body cut short: the connection closed, or stalled past the timeout, after the headers
# --------------------------------------------------------------------------------------------

def cut_short(h, path, body, stall: float = 0.0):
    data = json.dumps(completion(path, [answer_text(body)] * int(body.get("n") or 1))).encode()
    h.send_response(200)
    h.send_header("content-type", "application/json")
    h.send_header("content-length", str(len(data)))
    h.end_headers()
    h.wfile.write(data[: len(data) // 2])
    h.wfile.flush()
    if stall:
        time.sleep(stall)
    h.close_connection = True
    h.connection.shutdown(socket.SHUT_RDWR)


@pytest.mark.parametrize("stall", [0.0, 2.0], ids=["closed", "stalled"])
def test_a_body_cut_short_is_retried_like_a_refused_connection(server, tmp_path, stall):
    # red-team pass 17: a server (or a proxy) closing the connection in the middle of the body, or
    # going silent there past the timeout, ended `coevo solve` with an httpx traceback (exit 1):
    # the client's retries cover only the wait for the headers
    s = server(lambda h, path, body, attempt: cut_short(h, path, body, stall) if attempt < 2
               else good(h, path, body, attempt))
    gen = ApiGenerator(api(s, tmp_path, max_retries=2, timeout=0.5, concurrency=1))
    samples = gen.generate(requests_for())
    assert [x.text for x in samples] == [RIGHT, RIGHT, TESTS]
    assert gen.stats["retries"] == 2 and gen.stats["requests"] == 2


@pytest.mark.parametrize("stall", [0.0, 2.0], ids=["closed", "stalled"])
def test_a_body_always_cut_short_is_one_line_after_the_retries(server, tmp_path, capsys, stall):
    s = server(lambda h, path, body, attempt: cut_short(h, path, body, stall))
    t0 = time.monotonic()
    rc, err, out = solve(s, tmp_path, capsys, "--api-retries", "1", "--api-timeout", "0.5")
    one_line_error(rc, err, out)
    assert s.base in err and "after 2 tries" in err
    assert ("no whole answer within 0.5 s" if stall else "the connection closed before the whole answer came") in err
    assert time.monotonic() - t0 < 30


# --------------------------------------------------------------------------------------------
# answers in another shape: content as a list of parts, an event stream nobody asked for
# --------------------------------------------------------------------------------------------

def test_content_as_a_list_of_parts_is_read_as_its_text_parts(server, tmp_path):
    # red-team pass 17: OpenAI's schema lets an assistant message's content be a list of parts, and
    # Mistral's reasoning models answer so ([{"type": "thinking", ...}, {"type": "text", ...}]); each
    # such answer stopped the run ("choice 0 has no text (got list)")
    def parts(h, path, body, attempt):
        text = answer_text(body)
        content = [{"type": "thinking", "thinking": [{"type": "text", "text": "def add(a, b): return 0"}]},
                   {"type": "text", "text": text[:10]}, {"type": "text", "text": text[10:]}]
        send(h, 200, completion(path, [content] * int(body.get("n") or 1)))

    s = server(parts)
    samples = ApiGenerator(api(s, tmp_path)).generate(requests_for())
    assert [x.text for x in samples] == [RIGHT, RIGHT, TESTS]


@pytest.mark.parametrize("content", [[{"type": "image_url", "image_url": {"url": "x"}}], [1, 2], {"text": "x"}])
def test_content_that_holds_no_text_is_still_an_error(server, tmp_path, content):
    s = server(lambda h, path, body, attempt: send(h, 200, completion(path, [content])))
    with pytest.raises(ApiError, match="not a completion: choice 0 has no text"):
        ApiGenerator(api(s, tmp_path)).generate(requests_for(1, 0))


def event_stream(path: str, texts: list[str], usage: bool = True) -> bytes:
    chat = path.endswith("/chat/completions")
    events: list[dict] = []
    for i, t in enumerate(texts):
        for j in range(0, len(t), 7):
            piece = {"index": i, "finish_reason": None}
            piece.update({"delta": {"content": t[j:j + 7]}} if chat else {"text": t[j:j + 7]})
            events.append({"id": "x", "object": "chat.completion.chunk", "choices": [piece]})
        events.append({"id": "x", "choices": [dict({"index": i, "finish_reason": "length" if i else "stop"},
                                                   **({"delta": {}} if chat else {"text": ""}))]})
    if usage:
        events.append({"id": "x", "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_an_event_stream_nobody_asked_for_is_read_whole(server, tmp_path, endpoint):
    # red-team pass 17: a server (or a gateway in front of it) that streams whatever the request
    # says answered every request with server-sent events, and each one stopped the run ("not JSON")
    s = server(lambda h, path, body, attempt: send(
        h, 200, event_stream(path, [answer_text(body)] * int(body.get("n") or 1)), "text/event-stream"))
    gen = ApiGenerator(api(s, tmp_path, endpoint=endpoint))
    samples = gen.generate(requests_for())
    assert [x.text for x in samples] == [RIGHT, RIGHT, TESTS]
    assert [x.truncated for x in samples] == [False, True, False]
    assert gen.stats["prompt_tokens"] == 14 and gen.stats["completion_tokens"] == 6


def test_an_event_stream_reporting_an_error_is_one_line(server, tmp_path):
    stream = b'data: {"error": {"message": "out of memory\\u001b[31m"}}\n\ndata: [DONE]\n\n'
    s = server(lambda h, path, body, attempt: send(h, 200, stream, "text/event-stream"))
    with pytest.raises(ApiError, match="the server reported an error: out of memory") as err:
        ApiGenerator(api(s, tmp_path)).generate(requests_for(1, 0))
    assert "\x1b" not in str(err.value)
    s = server(lambda h, path, body, attempt: send(h, 200, b"data: {not json\n\n", "text/event-stream"))
    with pytest.raises(ApiError, match="not JSON"):
        ApiGenerator(api(s, tmp_path)).generate(requests_for(1, 0))


# --------------------------------------------------------------------------------------------
# web pages instead of answers: a proxy's error page, a web UI at the address given
# --------------------------------------------------------------------------------------------

NGINX_502 = (b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
             b"</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n")


def test_an_html_error_page_is_named_by_its_text_not_its_markup(server, tmp_path, capsys):
    s = server(lambda h, path, body, attempt: send(h, 502, NGINX_502, "text/html"))
    rc, err, out = solve(s, tmp_path, capsys, "--api-retries", "0")
    one_line_error(rc, err, out)
    assert "HTTP 502: 502 Bad Gateway nginx/1.18.0" in err and "<" not in err


def test_a_web_page_where_the_api_should_be_says_to_check_the_address(server, tmp_path, capsys):
    page = (b"<!DOCTYPE html><html><head><script>var x = '<b>';</script><title>Open WebUI</title></head>"
            b"<body>" + b"app " * 500 + b"</body></html>")
    s = server(lambda h, path, body, attempt: send(h, 200, page, "text/html; charset=utf-8"))
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "a web page ('Open WebUI'), not JSON" in err and "is --api-base the API's address" in err


# --------------------------------------------------------------------------------------------
# a prompt the model's context cannot hold: the server refuses that one request
# --------------------------------------------------------------------------------------------

CONTEXT_ERRORS = {  # the servers' own words (HTTP status, body)
    "vllm": (400, {"object": "error", "type": "BadRequestError", "param": None, "code": 400, "message":
                   "This model's maximum context length is 128 tokens. However, you requested 612 tokens "
                   "(100 in the messages, 512 in the completion). Please reduce the length of the messages "
                   "or completion."}),
    "llama.cpp": (400, {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 700,
                                  "n_ctx": 512, "message": "the request exceeds the available context size, "
                                                           "try increasing it"}}),
    "tgi": (422, {"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. "
                           "Given: 4000 `inputs` tokens and 512 `max_new_tokens`",
                  "error_type": "validation"}),
    "openai": (400, {"error": {"message": "This model's maximum context length is 8192 tokens...",
                               "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    "sglang": (400, {"object": "error", "code": 400, "message": "The input (9000 tokens) is longer than the "
                     "model's context length (8192 tokens)."}),
}


@pytest.mark.parametrize("server_kind", sorted(CONTEXT_ERRORS))
def test_a_prompt_past_the_models_context_costs_its_samples_not_the_run(server, tmp_path, caplog, server_kind):
    # red-team pass 17: one task whose prompt (plus --max-new-tokens) the served model's context
    # could not hold stopped the whole run with "HTTP 400", and the rerun stopped at the same task,
    # so no run over that tasks file could finish. In process such a prompt gets an empty sample
    # and a warning; served alike now (the Tester's request here; the Coder's is answered)
    status, payload = CONTEXT_ERRORS[server_kind]

    def behave(h, path, body, attempt):
        if answer_text(body) == TESTS:
            send(h, status, payload)
        else:
            good(h, path, body, attempt)

    s = server(behave)
    gen = ApiGenerator(api(s, tmp_path))
    with caplog.at_level("WARNING", logger="coevo"):
        samples = gen.generate(requests_for(n_codes=2, n_tests=3))
    assert [x.text for x in samples] == [RIGHT, RIGHT, "", "", ""]
    assert s.posts == 2 and gen.stats["past_context"] == 3 and not gen.stats["n_ignored"]
    assert gen.stats["truncated"] == 0  # not "raise --max-new-tokens": the opposite helps
    warning = [r.getMessage() for r in caplog.records]
    assert len(warning) == 1 and "3 of 5 samples got no completion" in warning[0]
    assert "lower --max-new-tokens" in warning[0] and "\n" not in warning[0]
    assert not list((tmp_path / "cache").rglob("*.json"))[1:]  # only the Coder's answer is cached


def test_the_cli_names_the_prompts_past_the_context_and_writes_its_output(server, tmp_path, capsys):
    status, payload = CONTEXT_ERRORS["vllm"]
    s = server(lambda h, path, body, attempt: send(h, status, payload) if answer_text(body) == TESTS
               else good(h, path, body, attempt))
    out = tmp_path / "codes.jsonl"
    rc = main(["solve", "--api-base", s.base, "--api-model", "stub-model", "--tasks", write_tasks(tmp_path),
               "--out", str(out), "--n-codes", "2", "--n-tests", "1", "--consensus-inputs", "0",
               "--api-cache", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert rc == 0 and json.loads(out.read_text())["code"] == ADD_RIGHT
    assert "Traceback" not in err and err.count("1 of 3 samples got no completion") == 1, err


# --------------------------------------------------------------------------------------------
# the wrong model name or address: say what the server does serve
# --------------------------------------------------------------------------------------------

def test_an_unknown_model_name_is_answered_with_the_names_the_server_lists(server, tmp_path, capsys):
    def vllm_404(h, path, body, attempt):
        send(h, 404, {"object": "error", "message": f"The model `{body['model']}` does not exist.",
                      "type": "NotFoundError", "code": 404})

    s = server(vllm_404, models=("Qwen/Qwen2.5-Coder-7B-Instruct", "lora/adapter-1"))
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "HTTP 404: The model `stub-model` does not exist." in err
    assert "the server lists 'Qwen/Qwen2.5-Coder-7B-Instruct', 'lora/adapter-1': give one to --api-model" in err


def test_an_address_without_v1_says_so(server, tmp_path, capsys):
    def fastapi_404(h, path, body, attempt):
        send(h, 404, {"detail": "Not Found"})

    s = server(fastapi_404)
    s.base = s.base.removesuffix("/v1")  # the user left /v1 out: POST /chat/completions, GET /models 404
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "HTTP 404: Not Found" in err and "it usually ends in /v1" in err


# --------------------------------------------------------------------------------------------
# the API key from the environment
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["sk-abc\u00fcdef-secret", "sk-abc\ndef-secret", "sk-abc def-secret",
                                 "sk-abc\x1bdef-secret"], ids=["non-ascii", "newline", "space", "escape"])
def test_a_key_no_http_header_can_carry_is_a_usage_error_that_never_echoes_it(server, tmp_path, capsys,
                                                                              monkeypatch, key):
    # red-team pass 17: a key variable holding a non-ASCII character ended `coevo solve` with a
    # UnicodeEncodeError traceback; one holding a newline was sent 4 times and then printed, key
    # and all, as "cannot reach ...: Illegal header value b'Bearer sk-...' ... is the server running?"
    monkeypatch.setenv("MY_SERVED_KEY", key)
    s = server(good)
    rc, err, out = solve(s, tmp_path, capsys, "--api-key-env", "MY_SERVED_KEY")
    one_line_error(rc, err, out)
    assert "field '--api-key-env'" in err and "MY_SERVED_KEY" in err and "secret" not in err
    assert s.posts == 0


# --------------------------------------------------------------------------------------------
# a hosted API's newer models: max_completion_tokens instead of max_tokens
# --------------------------------------------------------------------------------------------

def test_a_model_that_wants_max_completion_tokens_gets_it(server, tmp_path):
    # red-team pass 17: OpenAI's reasoning models refuse max_tokens ("Use 'max_completion_tokens'
    # instead"), and --api-extra may not set max_completion_tokens (coevo sets it): no way through
    seen: list[dict] = []

    def openai_reasoning(h, path, body, attempt):
        seen.append(body)
        if "max_tokens" in body:
            send(h, 400, {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this "
                                               "model. Use 'max_completion_tokens' instead.",
                                    "type": "invalid_request_error", "param": "max_tokens",
                                    "code": "unsupported_parameter"}})
        else:
            good(h, path, body, attempt)

    s = server(openai_reasoning)
    gen = ApiGenerator(api(s, tmp_path), None)
    samples = gen.generate(requests_for(n_codes=2, n_tests=1))
    assert [x.text for x in samples] == [RIGHT, RIGHT, TESTS]
    assert seen[-1]["max_completion_tokens"] == 256 and "max_tokens" not in seen[-1]  # (the default)
    assert not gen.stats["n_ignored"] and len(seen) <= 4
    again = ApiGenerator(api(s, tmp_path))  # the cache holds the answers under the request as built
    assert [x.text for x in again.generate(requests_for(n_codes=2, n_tests=1))] == [RIGHT, RIGHT, TESTS]
    assert len(seen) <= 4


@pytest.mark.parametrize("suffix", ["/v1/chat/completions", "/v1/completions/", "/v1/models"])
def test_an_endpoint_url_given_as_the_base_is_a_usage_error(server, tmp_path, capsys, suffix):
    # red-team pass 17: the endpoint's own URL (as curl examples show it) was taken as the base,
    # requests went to .../v1/chat/completions/chat/completions, and the 404 advised adding /v1
    s = server(good)
    s.base = s.base.removesuffix("/v1") + suffix
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "field '--api-base'" in err and s.posts == 0
    assert "the API's base URL (ending in /v1), not the address of one endpoint" in err


def test_the_v1_hint_suggests_the_right_address(server, tmp_path, capsys):
    s = server(lambda h, path, body, attempt: send(h, 404, b"404 page not found", "text/plain"))
    root = s.base.removesuffix("/v1")
    s.base = root + "/api"  # Ollama's own API, not its OpenAI-compatible one
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "it usually ends in /v1" in err and root + "/api/v1" not in err
    s.base = root + "/"
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert f"it usually ends in /v1, e.g. {root}/v1)" in err


def test_an_event_stream_of_whole_messages_is_read_too(server, tmp_path):
    # some gateways wrap the whole non-streamed answer in one event ("message", not "delta")
    def one_event(h, path, body, attempt):
        data = json.dumps(completion(path, [answer_text(body)] * int(body.get("n") or 1))).encode()
        send(h, 200, b"data: " + data + b"\n\ndata: [DONE]\n\n", "text/event-stream")

    s = server(one_event)
    assert [x.text for x in ApiGenerator(api(s, tmp_path)).generate(requests_for())] == [RIGHT, RIGHT, TESTS]


def test_a_null_completion_text_is_an_empty_answer_as_a_null_message_content_is(server, tmp_path):
    # a completion cut to nothing (text null) stopped the run ("has no text (got NoneType)"), while a
    # chat message with null content (all tokens went to reasoning) reads as an empty answer
    def null_text(h, path, body, attempt):
        send(h, 200, {"choices": [{"index": 0, "text": None, "finish_reason": "length"}]})

    s = server(null_text)
    samples = ApiGenerator(api(s, tmp_path, endpoint="completions")).generate(requests_for(1, 0))
    assert [(x.text, x.truncated) for x in samples] == [("", True)]


def test_a_server_still_loading_its_model_says_so(server, tmp_path, capsys):
    # llama.cpp's server answers 503 "Loading model" until the weights are in
    s = server(lambda h, path, body, attempt: send(
        h, 503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
        headers={"retry-after-ms": "10"}))
    rc, err, out = solve(s, tmp_path, capsys, "--api-retries", "1")
    one_line_error(rc, err, out)
    assert "HTTP 503 after 2 tries: Loading model" in err
    assert "the server is still starting? run again once it answers, or raise --api-retries" in err


def test_a_retry_after_too_long_to_wait_is_named(server, tmp_path, capsys):
    # a hosted API's 429 asking for more than the client waits (2 min) was not retried, unexplained
    s = server(lambda h, path, body, attempt: send(h, 429, {"error": {"message": "Rate limit reached"}},
                                                   headers={"retry-after": "3600"}))
    rc, err, out = solve(s, tmp_path, capsys)
    one_line_error(rc, err, out)
    assert "HTTP 429: Rate limit reached (the server asks to wait 3600 s before trying again)" in err
    assert s.posts <= 2  # the Coder's and the Tester's request, neither retried


# --------------------------------------------------------------------------------------------
# proxies named in the environment
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("var, proxy", [("ALL_PROXY", "socks5://127.0.0.1:9"), ("HTTP_PROXY", "http://127.0.0.1:9"),
                                        ("http_proxy", "http://user:pw@127.0.0.1:9")])
def test_a_server_on_this_machine_is_reached_without_the_environments_proxy(server, tmp_path, monkeypatch,
                                                                              var, proxy):
    # red-team pass 17: with ALL_PROXY=socks5://... (a VPN client's setting) `coevo solve` against
    # a server on 127.0.0.1 ended with an ImportError traceback (httpx without socksio); with
    # HTTP_PROXY set it went through the proxy, which cannot reach this machine's loopback, and said
    # "cannot reach ...: is the server running?" while it was
    monkeypatch.setenv(var, proxy)
    s = server(good)
    for base in (s.base, s.base.replace("127.0.0.1", "localhost")):
        cfg = api(s, tmp_path, cache=False)
        cfg.base_url = base
        assert [x.text for x in ApiGenerator(cfg).generate(requests_for())] == [RIGHT, RIGHT, TESTS]


def test_an_unusable_proxy_for_a_remote_server_is_one_line_that_hides_its_credentials(tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setenv("ALL_PROXY", "socks5://proxyuser:proxysecret@127.0.0.1:9")
    cfg = ApiConfig(base_url="http://192.0.2.1:9/v1", model="m", cache=False, max_retries=0, timeout=2.0)
    with pytest.raises(ApiError) as err:
        ApiGenerator(cfg).generate(requests_for(1, 0))
    msg = str(err.value)
    assert "\n" not in msg and "proxysecret" not in msg and "192.0.2.1" in msg
    if importlib.util.find_spec("socksio") is None:
        assert "the proxy the environment names (ALL_PROXY)" in msg and "NO_PROXY" in msg


def test_a_json_answer_labelled_as_an_event_stream_is_read_as_json(server, tmp_path):
    s = server(lambda h, path, body, attempt: send(
        h, 200, completion(path, [answer_text(body)] * int(body.get("n") or 1)), "text/event-stream"))
    assert [x.text for x in ApiGenerator(api(s, tmp_path)).generate(requests_for())] == [RIGHT, RIGHT, TESTS]


@pytest.mark.parametrize("status", [502, 200])
def test_a_hostile_html_page_is_named_in_linear_time(server, tmp_path, capsys, status):
    # red-team pass 17 (found in this pass's own page reader): a page of 20,000 unclosed <script>
    # tags took 36 s to strip, so a broken proxy's error page could hold the command for minutes
    page = (b"<!DOCTYPE html><html>" + b"<title>" * 20000 + b"<script>" * 20000 + b"<style>" * 5000
            + b"<!--" * 20000 + b"<" * 50000 + b"</html>")
    s = server(lambda h, path, body, attempt: send(h, status, page, "text/html"))
    t0 = time.monotonic()
    rc, err, out = solve(s, tmp_path, capsys, "--api-retries", "0")
    one_line_error(rc, err, out)
    assert time.monotonic() - t0 < 10 and len(err) < 600
