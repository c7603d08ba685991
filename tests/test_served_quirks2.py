"""Real servers' quirks, second pass (session 19), against a local stub (tests/test_served_quirks.py's
``Server``): a server refusing a sampling parameter it does not support (OpenAI's reasoning models
refuse ``top_p`` and any ``temperature`` but 1, Mistral's API answers HTTP 422 "Extra inputs are not
permitted" for ``seed``, some gateways refuse ``n`` altogether). The request goes again without that
parameter, later ones never carry it, and one warning says so; what the user asked for explicitly
(``--api-stop``, ``--api-extra``) is never dropped."""

from __future__ import annotations

import json
import logging

import pytest

pytest.importorskip("openai")

from test_served_quirks import RIGHT, TESTS, Server, api, good, requests_for, send  # noqa: E402

from matrix.tasks import Task  # noqa: E402
from roles.api_client import ApiError, ApiGenerator  # noqa: E402
from roles.requests import role_request  # noqa: E402

ADD2 = Task("add2", "Return a + b + 2.", "function", "add2")
ADD3 = Task("add3", "Return a + b + 3.", "function", "add3")

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server():
    made: list[Server] = []

    def make(behave, **kw):
        made.append(Server(behave, **kw))
        return made[-1]

    yield make
    for s in made:
        s.close()


def openai_refusal(name: str, body: dict) -> dict:
    if name == "temperature":
        return {"error": {"message": f"Unsupported value: 'temperature' does not support {body[name]} with this "
                                     "model. Only the default (1) value is supported.",
                          "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}
    return {"error": {"message": f"Unsupported parameter: '{name}' is not supported with this model.",
                      "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}}


def mistral_refusal(name: str, body: dict) -> dict:
    return {"object": "error", "message": {"detail": [{"type": "extra_forbidden", "loc": ["body", name],
                                                       "msg": "Extra inputs are not permitted", "input": body[name]}]},
            "type": "invalid_request_message_error", "param": None, "code": None}


def refusing(name: str, shape, code: int = 400, seen: list | None = None):
    def behave(h, path, body, attempt):
        if seen is not None:
            seen.append(body)
        if name in body:
            send(h, code, shape(name, body))
        else:
            good(h, path, body, attempt)
    return behave


@pytest.mark.parametrize("name,shape,code", [("top_p", openai_refusal, 400), ("temperature", openai_refusal, 400),
                                             ("seed", openai_refusal, 400), ("seed", mistral_refusal, 422),
                                             ("n", openai_refusal, 400)],
                         ids=["top_p", "temperature", "seed", "seed-422", "n"])
def test_a_sampling_parameter_the_server_refuses_is_left_out(server, tmp_path, caplog, name, shape, code):
    """Each was 'HTTP 400: Unsupported parameter ...' after the first request, the run stopped."""
    seen: list[dict] = []
    s = server(refusing(name, shape, code, seen))
    gen = ApiGenerator(api(s, tmp_path))
    with caplog.at_level(logging.WARNING, logger="coevo"):
        samples = gen.generate(requests_for(n_codes=2, n_tests=1))
        assert [x.text for x in samples] == [RIGHT, RIGHT, TESTS]
        again = gen.generate(requests_for(n_codes=3, n_tests=2))  # later calls: never sent again
    assert len(again) == 5
    refused = [b for b in seen if name in b]
    assert 1 <= len(refused) <= 2  # (the first requests of the call, sent together)
    assert all(name not in b for b in seen[-3:])
    said = [r.getMessage() for r in caplog.records if name in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0], said


def test_a_refused_parameter_still_keys_the_cache_as_asked(server, tmp_path):
    seen: list[dict] = []
    s = server(refusing("seed", openai_refusal, seen=seen))
    ApiGenerator(api(s, tmp_path)).generate(requests_for())
    sent = len(seen)
    assert [x.text for x in ApiGenerator(api(s, tmp_path)).generate(requests_for())] == [RIGHT, RIGHT, TESTS]
    assert len(seen) == sent  # all from the cache


def test_what_the_user_asked_for_is_not_dropped(server, tmp_path):
    """--api-stop and --api-extra fields the server refuses stay an error (one line naming them)."""
    for name, kw in (("stop", {"stop": ["\n\n\n"]}), ("top_k", {"extra_body": {"top_k": 20}})):
        s = server(refusing(name, openai_refusal))
        with pytest.raises(ApiError) as err:
            ApiGenerator(api(s, tmp_path, cache=False, **kw)).generate(requests_for())
        assert f"'{name}' is not supported" in str(err.value) and "\n" not in str(err.value)


def test_a_bad_value_is_not_mistaken_for_an_unsupported_parameter(server, tmp_path):
    """'top_p must be <= 1' is the user's value, not a parameter the server lacks: an error."""
    def behave(h, path, body, attempt):
        send(h, 400, {"error": {"message": "Invalid value for 'top_p': must be between 0 and 1.", "param": "top_p",
                                "type": "invalid_request_error", "code": "invalid_value"}})

    s = server(behave)
    with pytest.raises(ApiError) as err:
        ApiGenerator(api(s, tmp_path, cache=False)).generate(requests_for(n_codes=1))
    assert "Invalid value for 'top_p'" in str(err.value)


# --------------------------------------------------------------------------------------------
# a call that stops (Ctrl-C, or a request failing) while others are still waiting for answers
# --------------------------------------------------------------------------------------------

def test_a_stopped_call_does_not_wait_for_the_answers_still_coming(server, tmp_path):
    """The requests in flight were left to run: the call waited 5 s for them (Ctrl-C on a served
    run took ~5 s to come back) and their threads lived on until the server answered (here 30 s).
    Their connections are now cut: the call returns at once and no request thread is left."""
    import threading
    import time

    def behave(h, path, body, attempt):
        if "Do not solve the task" in json.dumps(body):  # the Tester's: refused, once the others wait
            time.sleep(0.5)
            send(h, 400, {"error": {"message": "bad request"}})
        else:
            time.sleep(30)
            good(h, path, body, attempt)

    s = server(behave)
    gen = ApiGenerator(api(s, tmp_path, max_retries=3, concurrency=4, timeout=120.0))
    before = set(threading.enumerate())

    def left() -> list:
        return [t for t in threading.enumerate() if t.name.startswith("coevo-api") and t not in before]

    t0 = time.monotonic()
    with pytest.raises(ApiError, match="HTTP 400"):
        gen.generate(requests_for(n_codes=1, n_tests=1) + [role_request("coder", ADD2, 1),
                                                             role_request("coder", ADD3, 1)])
    assert time.monotonic() - t0 < 20.0  # (was 5.5 s: the wait; ~1 s now, more on a loaded machine)
    deadline = time.monotonic() + 10.0
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left()  # (they lived until the server answered, 30 s after they asked)
