"""A model served over an OpenAI-compatible HTTP API, as a text-only :class:`Generator`.

:class:`ApiGenerator` drives any server that speaks the OpenAI API (``vllm serve``, SGLang,
llama.cpp's server, Ollama, ``transformers serve``, a hosted API) through the ``openai`` client
library: chat completions (``endpoint="chat"``) or plain completions (``endpoint="completions"``).

What is sent
  * ``prompt="chat"``: the role's chat messages (system + user, ``GenRequest.messages``) to the
    chat endpoint; the server applies the model's own chat template (instruct models).
  * ``prompt="plain"``: coevo's plain prompt format (``GenRequest.prompt``, built without a
    tokenizer): as the prompt of the completions endpoint, or as the one user message of a chat
    request, for models trained on that format (the tiny world; its tokenizer's
    :data:`~coevo.tinyworld.tokenizer.PLAIN_CHAT_TEMPLATE` renders that message verbatim).
  * every request: ``model``, ``temperature``, ``top_p``, ``max_tokens`` (``max_new_tokens``;
    sent as ``max_completion_tokens`` once the server refuses ``max_tokens`` and asks for that, as
    OpenAI's reasoning models do), ``n``, ``seed``, ``stop`` (when given) and the user's
    ``extra_body`` fields.

Samples
  ``n`` samples per request in one call where the server honours ``n``; when it answers with
  fewer choices (``transformers serve`` ignores ``n``) or rejects ``n > 1`` with HTTP 400/422 (as
  llama.cpp does), the missing samples come from repeated single requests, each with its own
  seed. Seeds are derived from ``GenerationConfig.seed``, the prompt, its occurrence in the call
  and the sample index (as in the in-process engine), so identical prompts in one call still get
  different samples. ``temperature == 0`` sends one request per prompt and repeats its answer
  ``n`` times. ``finish_reason == "length"`` marks a sample ``truncated``. A request the server
  refuses as longer than the model's context (prompt + ``max_tokens``: HTTP 400/413/422 in vLLM's,
  SGLang's, llama.cpp's, TGI's or OpenAI's words) gives its samples no completion (empty,
  ``truncated``, counted in ``stats["past_context"]``, not cached) and one warning, as in process.
  Samples carry no token ids or log-probs (``None``).

Robustness
  At most ``concurrency`` requests in flight. The client retries connection errors, timeouts,
  HTTP 408/409/429 and 5xx ``max_retries`` times with exponential backoff (0.5 s doubling, capped
  at 8 s, with jitter; a ``Retry-After`` header wins); a body cut short after the headers (the
  connection closed, or silent past ``timeout``) is retried as often, with the same backoff.
  A sampling parameter coevo sends of its own accord (``seed``, ``top_p``, ``temperature``, ``n``)
  that the server refuses as unsupported (HTTP 400/422 naming it, as OpenAI's reasoning models and
  Mistral's API do) is left out of that request and every later one, with one warning; what the
  user asked for (``stop``, ``extra_body``) never is.
  Anything else, or a retried failure that persists, stops the call with :class:`ApiError`: one
  line naming the URL and what went wrong (server text sanitised: no control characters, at most
  200 characters; after an HTTP 404, the names the server lists at ``GET /models``, or that the
  address usually ends in ``/v1``). Answers are validated
  before use (a content given as a list of parts counts its text parts; server-sent events sent
  though nobody asked are joined into the completion they stream; an HTML page is named by its
  title or text): a body that is not JSON, has no choices or has non-text content is an error; extra
  choices are dropped; each text is capped at ``32 * max_tokens + 4096`` characters (then counted
  as truncated). The body is read as it arrives: within ``timeout`` seconds in all after the
  headers (the client's own timeout bounds the wait for them, and for each chunk), and up to
  ``n * 8 * (32 * max_tokens + 4096)`` bytes plus 32 MiB.

Proxies
  A base URL on this machine (localhost, 127.0.0.0/8, ::1) is reached directly, without the
  environment's proxy (which would reach its own loopback); others use the environment's
  ``*_PROXY``/``NO_PROXY`` settings (an unusable one is one line, its URL never echoed).

Cache
  Every validated answer is stored on disk under a SHA-256 of the full request (URL, and the
  JSON body: model, prompt or messages, every sampling parameter, ``n``, ``seed``, ``stop``, extra
  fields), one file per request written atomically (temporary file + rename), in ``cache_dir``
  (default ``$COEVO_API_CACHE``, else ``$XDG_CACHE_HOME/coevo/api``, else ``~/.cache/coevo/api``;
  directories created private, mode 0700). A re-run therefore sends nothing, and an interrupted
  run resumes where it stopped. ``cache=False`` turns it off. The API key is never part of the
  key, the file or any message; it is read from the environment variable named ``key_env``;
  without one no ``Authorization`` header is sent.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import random
import re
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matrix.errors import InputError
from matrix.tasks import REASONING_FIELDS as _REASONING_FIELDS
from matrix.tasks import answer_elsewhere as _answer_elsewhere
from roles.api_config import RESERVED_FIELDS, ApiConfig
from roles.generation import GenerationConfig, GenRequest, Sample, SamplingStatus

CACHE_VERSION = 1


class ApiError(InputError):
    """The served model gave no usable answer (unreachable, HTTP error, nonsense). One line."""


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]+")


def sanitize(text: Any, limit: int = 200) -> str:
    """Server text made safe for one terminal line: no control or bidi characters, <= limit chars."""
    s = _CONTROL.sub(" ", str(text))
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def derive_seed(seed: int, content: str, occurrence: int, index: int) -> int:
    """A request seed in [0, 2**31) from the call's seed, the prompt, its occurrence and a sample
    index (``-1`` for the request carrying all ``n`` samples)."""
    h = hashlib.blake2b(f"{int(seed)}\x00{occurrence}\x00{index}\x00".encode() +
                        content.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") & 0x7FFFFFFF


def request_key(url: str, body: dict) -> str:
    blob = json.dumps({"v": CACHE_VERSION, "url": url, "body": body}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """Validated answers on disk, one JSON file per request key, written atomically."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, url: str, body: dict) -> dict | None:
        """The stored answer for exactly this request, or None (missing, unreadable, or stored
        for another request: a stale or tampered file is a miss and gets overwritten)."""
        try:
            with open(self._path(key), encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError):
            return None
        if not (isinstance(rec, dict) and rec.get("v") == CACHE_VERSION and rec.get("url") == url
                and rec.get("body") == body):
            return None
        try:
            return {"choices": _validate_cached(rec.get("choices")), "usage": rec.get("usage") or {}}
        except ValueError:
            return None

    def put(self, key: str, url: str, body: dict, answer: dict) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"v": CACHE_VERSION, "url": url, "body": body, "choices": answer["choices"],
                           "usage": answer["usage"]}, f)  # (\u escapes: an answer may hold a lone surrogate)
            os.replace(tmp, path)
        except OSError as exc:  # a cache that cannot be written must not sink the run
            raise ApiError(f"cannot write the response cache in {self.root}: {exc.strerror or exc} "
                           "(--api-cache DIR elsewhere, or --no-api-cache)") from None


def _validate_cached(choices) -> list[dict]:
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices")
    for c in choices:
        if not (isinstance(c, dict) and isinstance(c.get("text"), str) and isinstance(c.get("truncated"), bool)):
            raise ValueError("bad choice")
    return [{"text": c["text"], "truncated": c["truncated"],
             **{k: c[k] for k in ("via", "empty") if isinstance(c.get(k), str)}} for c in choices]


def _tokens(usage) -> dict[str, int]:
    out = {}
    if isinstance(usage, dict):
        for k in ("prompt_tokens", "completion_tokens"):
            v = usage.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**40:
                out[k] = v
    return out


def _text_parts(parts: list) -> Any:
    """The text of a message content given as a list of parts (OpenAI's schema allows it; Mistral's
    reasoning models answer ``[{"type": "thinking", ...}, {"type": "text", "text": ...}]``): its text
    parts joined, the thinking and other parts left out. The list itself when no part is text."""
    texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("type") in ("text", "output_text")
             and isinstance(p.get("text"), str)]
    return "".join(texts) if texts else parts


def _from_event_stream(content: bytes, endpoint: str) -> dict:
    """The completion object that server-sent events (``data: {...}`` lines, as a server streaming
    when nobody asked for it sends) add up to: each choice's text pieces joined, its last
    ``finish_reason``, the reported usage; raises ValueError when an event is not JSON."""
    texts: dict[int, list[str]] = {}
    thoughts: dict[int, list[str]] = {}
    calls: dict[int, dict[int, dict]] = {}  # choice -> tool call index -> {"name", "arguments"}
    finish: dict[int, Any] = {}
    usage = None
    for line in content.decode("utf-8").splitlines():
        if not line.startswith("data:"):
            continue  # event:, id:, retry:, comments, blank separators
        payload = line[5:].strip()
        if not payload or payload == "[DONE]":
            continue
        event = json.loads(payload)
        if not isinstance(event, dict):
            raise ValueError("an event is not an object")
        if event.get("error"):
            return {"error": event["error"]}
        if event.get("usage"):
            usage = event["usage"]
        for c in event.get("choices") or []:
            if not isinstance(c, dict):
                raise ValueError("an event's choice is not an object")
            idx = c.get("index", 0)
            idx = idx if isinstance(idx, int) and not isinstance(idx, bool) else 0
            # (a gateway may wrap a whole answer in one event: "message", not "delta")
            msg = c.get("delta") or c.get("message") or {}
            piece = (msg.get("content") if isinstance(msg, dict) else None) if endpoint == "chat" else c.get("text")
            if isinstance(piece, list):
                piece = _text_parts(piece)
            if piece is not None and not isinstance(piece, str):
                raise ValueError(f"choice {idx} has no text (got {type(piece).__name__})")
            texts.setdefault(idx, []).append(piece or "")
            if endpoint == "chat" and isinstance(msg, dict):
                for field in _REASONING_FIELDS:  # the first one present: a server may send both
                    if isinstance(msg.get(field), str):  # (vLLM kept reasoning_content beside reasoning)
                        thoughts.setdefault(idx, []).append(msg[field])
                        break
                for k, tc in enumerate(msg.get("tool_calls") or []):
                    if not isinstance(tc, dict):
                        continue
                    at = tc.get("index", k)
                    call = calls.setdefault(idx, {}).setdefault(at if isinstance(at, int) else k,
                                                                {"name": "", "arguments": ""})
                    fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                    for part in ("name", "arguments"):
                        if isinstance(fn.get(part), str):
                            call[part] += fn[part]
            if c.get("finish_reason") is not None:
                finish[idx] = c["finish_reason"]
    choices = []
    for i, t in sorted(texts.items()):
        if endpoint != "chat":
            choices.append({"index": i, "text": "".join(t), "finish_reason": finish.get(i)})
            continue
        message: dict[str, Any] = {"content": "".join(t)}
        if i in thoughts:
            message["reasoning_content"] = "".join(thoughts[i])
        if i in calls:
            message["tool_calls"] = [{"type": "function", "function": calls[i][k]} for k in sorted(calls[i])]
        choices.append({"index": i, "message": message, "finish_reason": finish.get(i)})
    return {"choices": choices, "usage": usage}


def _is_event_stream(content: bytes, content_type: str) -> bool:
    start = content.lstrip()[:5]
    return start == b"data:" or ("text/event-stream" in content_type.lower() and start[:1] != b"{")


_HTML_CAP = 1 << 16  # characters of a page looked at: enough for any title or error text


def _web_page(text: str) -> str | None:
    """The title (else the start of the text) of an HTML page, or None when ``text`` is not one.
    Linear in the page (no backtracking regex: a page of unclosed tags took 36 s)."""
    text = text[:_HTML_CAP]
    head = text.lstrip()[:200].lower()
    if not (head.startswith("<!doctype html") or head.startswith("<html") or "<html" in head):
        return None
    low = text.lower()
    i = low.find("<title")
    j = low.find(">", i) if i >= 0 else -1
    k = low.find("</title", j) if j >= 0 else -1
    if k >= 0:
        return sanitize(html.unescape(text[j + 1:k]), 80)
    return sanitize(_html_text(text), 80)


_BLOCK = re.compile(r"<(script|style)\b", re.I)
_BLOCK_OR_HEAD = re.compile(r"<(script|style|head)\b", re.I)


def _html_text(text: str, drop_head: bool = False) -> str:
    """An HTML page's text: scripts, styles (and the head) and tags dropped, entities decoded;
    linear in the page."""
    text = text[:_HTML_CAP]
    low = text.lower()
    starts = _BLOCK_OR_HEAD if drop_head else _BLOCK
    out, i = [], 0
    while True:
        m = starts.search(text, i)
        if m is None:
            out.append(text[i:])
            break
        out.append(text[i:m.start()] + " ")
        k = low.find("</" + m.group(1).lower(), m.end())
        e = low.find(">", k) if k >= 0 else -1
        if e < 0:  # never closed: the rest is script (or head)
            break
        i = e + 1
    return html.unescape(re.sub(r"<[^<>]*>", " ", "".join(out)))


def parse_answer(data: Any, endpoint: str, n: int, max_chars: int) -> dict:
    """``{"choices": [{"text", "truncated"}], "usage": {...}}`` from a decoded response body;
    raises ValueError (a short reason) when it is not a completion."""
    if not isinstance(data, dict):
        raise ValueError(f"the answer is JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        err = data.get("error")
        if err:
            msg = err.get("message", err) if isinstance(err, dict) else err
            raise ValueError(f"the server reported an error: {sanitize(msg)}")
        if isinstance(choices, list):  # (an Azure prompt filter, a gateway): no sample, not the run's end
            return {"choices": [], "usage": _tokens(data.get("usage"))}
        raise ValueError("the answer has no choices")
    rows = []
    for i, c in enumerate(choices):
        if not isinstance(c, dict):
            raise ValueError(f"choice {i} is not an object")
        note = ""
        if endpoint == "chat":
            msg = c.get("message")
            if not isinstance(msg, dict):
                raise ValueError(f"choice {i} has no message")
            text = msg.get("content")
            if isinstance(text, list):
                text = _text_parts(text)
            if text is None or isinstance(text, str) and not text.strip():
                # the answer in the reasoning field or in tool calls; else empty (a refusal, a filter)
                alt, note = _answer_elsewhere(msg, c.get("finish_reason"))
                text = alt if alt is not None else (text or "")
        else:
            text = c.get("text")
            if text is None and "text" in c:  # a completion cut to nothing, as a null message content
                text = ""
            if isinstance(text, str) and not text.strip() and c.get("finish_reason") == "content_filter":
                note = "filtered"
        if not isinstance(text, str):
            raise ValueError(f"choice {i} has no text (got {type(text).__name__})")
        truncated = c.get("finish_reason") == "length"
        if len(text) > max_chars:
            text, truncated = text[:max_chars], True
        idx = c.get("index")
        row: dict[str, Any] = {"text": text, "truncated": truncated}
        if note.startswith("via "):
            row["via"] = note[4:]
        elif note and note != "empty":
            row["empty"] = note
        rows.append((idx, i, row))
    indices = [r[0] for r in rows]
    if all(isinstance(x, int) and not isinstance(x, bool) for x in indices) and len(set(indices)) == len(rows):
        rows.sort(key=lambda r: r[0])  # the server's order of choices is not a promise
    return {"choices": [r[2] for r in rows[:n]], "usage": _tokens(data.get("usage"))}


class _NRejected(Exception):
    """The server refused a request with n > 1 (HTTP 400/422)."""


class _PastContext(Exception):
    """The server refused a request as longer than the model's context (prompt + max_tokens)."""


# how vLLM, SGLang, llama.cpp, TGI, OpenAI and others word a request past the model's context
_PAST_CONTEXT = re.compile(r"context[ _](?:length|size|window)|maximum context|exceed_context|"
                           r"inputs`? tokens \+ `?max_new_tokens`? must be|prompt is too long|too many tokens",
                           re.I)


class _WantsStream(Exception):
    """The server refused a request that does not stream (DashScope's reasoning models: "only support
    stream mode"); the message is the server's."""


# how a server that answers only streams says so
_WANTS_STREAM = re.compile(r"\bonly\b[^.]{0,30}\bstream|\bstream(?:ing)?\b[^.]{0,40}\b(?:must|required|"
                           r"only|needs? to be)|\brequires?\b[^.]{0,30}\bstream", re.I)


class _WantsMaxCompletionTokens(Exception):
    """The server refused ``max_tokens`` and asked for ``max_completion_tokens`` (OpenAI's
    reasoning models); the message is the server's, for when the swap was already made."""


class _CutShort(Exception):
    """The connection closed, or stalled past the timeout, after the headers: ``size`` bytes came."""

    def __init__(self, size: int, timeout: bool):
        super().__init__(size, timeout)
        self.size, self.timeout = size, timeout


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP library's transport errors (a read failing mid-body): ``httpx``'s, or ``httpx2``'s
    where the openai client is built on that."""
    import importlib

    import openai

    found: list[type[BaseException]] = [openai.APIConnectionError]
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(found)


class _ParamRefused(Exception):
    """The server refused a sampling parameter it does not support (``name``); the message is the
    server's."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


# sampling parameters coevo sends of its own accord, which a request may go without where the
# server does not support them (what the user asked for, --api-stop and --api-extra, never is)
_DROPPABLE = ("seed", "top_p", "temperature", "n")
# how servers word a parameter they do not take: OpenAI ("Unsupported parameter: 'top_p' ...",
# "Unsupported value: 'temperature' does not support 0.8 ... Only the default (1) value is
# supported"), pydantic-based servers (Mistral's "Extra inputs are not permitted", "extra fields not
# permitted"), Azure's "Unrecognized request argument supplied: seed", and the like
_REFUSES = re.compile(r"unsupported|not supported|unrecogni[sz]ed|unknown (?:parameter|field|argument)|"
                      r"not allowed|not permitted|extra (?:inputs|fields)|does not support|only the default", re.I)
_DROP_NOTE = {"seed": "samples are not repeatable across runs",
              "top_p": "sampling over the whole distribution",
              "temperature": "sampling at the server's own temperature",
              "n": "one sample per request"}


def _refused_param(exc, detail: str, sent) -> str | None:
    """The parameter of ``_DROPPABLE`` (and among ``sent``) that an HTTP 400/422 says the server
    does not support: the error's ``param`` field (OpenAI) where it says so, else the one the text
    names (quoted, or as a word; ``n`` only quoted) next to words of refusal."""
    if not _REFUSES.search(detail):
        return None
    names = [k for k in _DROPPABLE if k in sent]
    resp = getattr(exc, "response", None)
    try:
        err = resp.json().get("error") if resp is not None else None
    except Exception:  # noqa: BLE001 - not JSON: the text alone
        err = None
    if isinstance(err, dict) and err.get("param") in names:
        return str(err["param"])
    for k in names:
        if re.search(rf"['\"`]{k}['\"`]" if k == "n" else rf"(?<![\w.-]){k}(?![\w-])", detail):
            return k
    return None


class _Connections:
    """Stands in for the HTTP pool's network backend (``httpcore``'s public ``NetworkBackend``
    interface, wrapped) to know the sockets it opened, so that a call that stops can cut the ones
    still waiting for an answer: closing the client leaves a request in flight waiting for the server
    (a Ctrl-C waited 5 s for them, and their threads lived on until the answer came)."""

    def __init__(self, backend):
        self._backend = backend
        self._streams: list = []
        self._lock = threading.Lock()

    @staticmethod
    def _open(stream) -> bool:
        try:
            sock = stream.get_extra_info("socket")
            return sock is not None and sock.fileno() != -1
        except Exception:  # noqa: BLE001 - a stream that cannot say: forgotten
            return False

    def _keep(self, stream):
        with self._lock:  # (the closed ones are forgotten: a long run opens many)
            self._streams = [s for s in self._streams if self._open(s)] + [stream]
        return stream

    def connect_tcp(self, *args, **kw):
        return self._keep(self._backend.connect_tcp(*args, **kw))

    def connect_unix_socket(self, *args, **kw):
        return self._keep(self._backend.connect_unix_socket(*args, **kw))

    def __getattr__(self, name):  # sleep(), and whatever else the pool asks of its backend
        return getattr(self._backend, name)

    def cut(self) -> None:
        """Shut every socket down (both ways): a thread blocked reading an answer wakes at once."""
        import socket

        with self._lock:
            streams, self._streams = self._streams, []
        for stream in streams:
            try:
                sock = stream.get_extra_info("socket")
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except Exception:  # noqa: BLE001 - already closed: nothing to cut
                pass

    @classmethod
    def install(cls, http) -> list[_Connections]:
        """Wrap the backend of each pool of the ``httpx`` client ``http`` (its transport and its
        proxies' mounts); where the library's insides differ, nothing (a stop then waits as before)."""
        out = []
        transports = [getattr(http, "_transport", None)] + list((getattr(http, "_mounts", None) or {}).values())
        for t in transports:
            pool = getattr(t, "_pool", None)
            backend = getattr(pool, "_network_backend", None)
            if pool is not None and backend is not None and all(hasattr(backend, m) for m in ("connect_tcp", "sleep")):
                wrapped = cls(backend)
                pool._network_backend = wrapped
                out.append(wrapped)
        return out


class _Stopped(Exception):
    """A queued request that was not sent because the call had already failed."""


@dataclass
class _Job:
    req: GenRequest
    body: dict  # without n and seed
    content: str  # the rendered prompt/messages, for seeds
    occurrence: int
    got: list[dict | None]


# --------------------------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------------------------

class _StatusBar:
    """The two calls the sampling loop makes on a tqdm bar, made on a :class:`SamplingStatus`."""

    def __init__(self, status: SamplingStatus):
        self.status = status

    def update(self, n: int) -> None:
        self.status.update(n)

    def close(self) -> None:
        pass


class ApiGenerator:
    """A text-only :class:`roles.generation.Generator` over an OpenAI-compatible server (module doc)."""

    token_level = False

    def __init__(self, api: ApiConfig, config: GenerationConfig | None = None):
        api.validate()
        if not api.enabled:
            raise ValueError("ApiGenerator needs api.base_url")
        self.api = api
        self.config = config or GenerationConfig()
        self.base_url = api.base_url.rstrip("/")
        self.url = self.base_url + ("/chat/completions" if api.endpoint == "chat" else "/completions")
        self._key = api.api_key()  # read once; never stored, logged or part of a cache key
        self.cache = ResponseCache(api.cache_path()) if api.cache else None
        self.stats: dict[str, float] = {}
        self.totals: dict[str, float] = {}  # over every call of this generator
        self.n_ignored = False  # the server answered n > 1 with fewer choices
        self.n_rejected = False  # the server refused n > 1
        self.max_completion_tokens = False  # the server wants max_completion_tokens, not max_tokens
        self.stream = False  # the server answers only streams: requests ask for one (read whole)
        self.dropped: set[str] = set()  # sampling parameters the server refused: sent no more
        self._lock = threading.Lock()
        # where no progress bar is drawn, status lines (roles.generation.SamplingStatus) go here
        self.say = None
        self.status_every_s = 30.0
        self._client = None
        self._connections: list[_Connections] = []
        self._attempts = 0
        self._resent = 0  # requests sent again as the server asked (a parameter left out, streamed): no retries

    # ---- the HTTP client (the openai library: retries, backoff, timeouts) -------------------

    def _openai(self):
        if self._client is None:
            import openai

            def on_request(request):
                with self._lock:
                    self._attempts += 1
                # only what we choose goes to the server: no key unless one is named, and no
                # organisation/project ids picked up from the environment
                for h in ("openai-organization", "openai-project"):
                    request.headers.pop(h, None)
                if self._key is None:
                    request.headers.pop("authorization", None)

            # a server on this machine is reached directly: a proxy from the environment would
            # reach its own loopback, not ours (HTTP_PROXY made "is the server running?" of a running
            # one; ALL_PROXY=socks5://... without socksio ended the run with an ImportError)
            try:
                http = openai.DefaultHttpxClient(event_hooks={"request": [on_request]},
                                                 trust_env=not _loopback(self.base_url))
            except (ImportError, ValueError) as exc:
                names = [v for v in ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                     "http_proxy") if os.environ.get(v)]
                why = ("a SOCKS proxy needs the socksio package: pip install 'httpx[socks]'"
                       if isinstance(exc, ImportError) else f"{type(exc).__name__} (is its URL right?)")
                raise ApiError(f"{self.base_url}: cannot use the proxy the environment names "
                               f"({', '.join(names) or 'a *_PROXY variable'}): {why}; or set NO_PROXY to "
                               "the server's host to reach it directly") from None
            self._connections = _Connections.install(http)
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._key or "none",
                                         timeout=self.api.timeout, max_retries=self.api.max_retries,
                                         http_client=http)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _cut(self) -> None:
        """Cut the connections of requests still in flight (a call that stopped)."""
        for c in self._connections:
            c.cut()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _tries(self) -> str:
        return f"after {self.api.max_retries + 1} tries" if self.api.max_retries else "no retries"

    def _error(self, exc, n: int, sent=None) -> Exception:
        """An :class:`ApiError` (one line) for an exception of the openai client."""
        import openai

        where = self.url
        if isinstance(exc, openai.APITimeoutError):
            return ApiError(f"{where}: no answer within {self.api.timeout:g} s ({self._tries()})")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return ApiError(f"cannot reach {where}: {sanitize(cause, 120) or type(cause).__name__} "
                            f"({self._tries()}); is the server running?")
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            detail = _status_detail(exc)
            if code in (400, 413, 422) and _PAST_CONTEXT.search(detail):
                return _PastContext(detail)
            if code in (400, 422) and _WANTS_STREAM.search(detail):
                return _WantsStream(f"{where}: HTTP {code}: {detail}")
            if code in (400, 422) and "max_completion_tokens" in detail and "max_tokens" in detail.replace(
                    "max_completion_tokens", ""):
                return _WantsMaxCompletionTokens(f"{where}: HTTP {code}: {detail}")
            if code in (400, 422):
                name = _refused_param(exc, detail, sent or ())
                if name is not None:
                    return _ParamRefused(name, f"{where}: HTTP {code}: {detail}")
            if code in (400, 422) and n > 1:
                return _NRejected()
            wait = _retry_after(exc)
            too_long = wait is not None and wait > 120  # the client does not wait that long: no retry
            retried = (code in (408, 409, 429) or code >= 500) and not too_long
            msg = f"{where}: HTTP {code}" + (f" {self._tries()}" if retried and self.api.max_retries else "")
            msg += f": {detail}" if detail else ""
            if code in (408, 409, 429) or code >= 500:
                if too_long:
                    msg += f" (the server asks to wait {wait:g} s before trying again)"
                elif code == 503 and "loading" in detail.lower():
                    msg += " (the server is still starting? run again once it answers, or raise --api-retries)"
            if code in (401, 403):
                msg += f" (does the server want an API key? name its variable with {self.api.key_option})"
            elif code == 404:
                msg += self._not_found_hint()
            elif (self.api.endpoint == "chat" and code in (400, 500)
                  and ("template" in detail.lower() or detail in ("", "Internal Server Error"))):
                msg += (" (a model without a chat template fails on the chat endpoint: try "
                        "--api-endpoint completions)")
            return ApiError(msg)
        return ApiError(f"{where}: {type(exc).__name__}: {sanitize(exc)}")

    def _not_found_hint(self) -> str:
        """What to check after an HTTP 404: the names the server lists (``GET /models``) when the
        model is not among them, else the address (``/v1``) and the endpoint."""
        names = self._served_models()
        if names is not None and self.api.model not in names:
            listed = ", ".join(repr(sanitize(x, 80)) for x in names[:8]) + (", ..." if len(names) > 8 else "")
            return (f" (the server lists {listed}: give one to --api-model)" if names
                    else " (the server lists no model)")
        if names is None and not re.search(r"/v\d+\w*$", self.base_url):
            root = re.fullmatch(r"(https?://[^/]+)/*", self.base_url)
            return (" (is --api-base right? it usually ends in /v1"
                    + (f", e.g. {sanitize(root.group(1), 80)}/v1)" if root else ")"))
        return (f" (is --api-base right, does the server know the model {self.api.model!r} and have "
                f"the {self.api.endpoint} endpoint?)")

    def _served_models(self) -> list[str] | None:
        """The model names the server lists at ``GET {base}/models`` (a few seconds at most), or
        None when it lists none that way."""
        try:
            page = self._openai().with_options(max_retries=0, timeout=min(10.0, self.api.timeout)).models.list()
            names = [m.id for m in page.data]
        except Exception:  # any failure only means no list to show
            return None
        return [x for x in names if isinstance(x, str)]

    def _post(self, body: dict, client, stop: threading.Event | None = None) -> dict:
        """One request (with the client's retries): the validated answer."""
        import openai

        with self._lock:
            self.stats["requests"] += 1
        api = client.chat.completions if self.api.endpoint == "chat" else client.completions
        typed = {k: v for k, v in body.items() if k in RESERVED_FIELDS}
        extra = {k: v for k, v in body.items() if k not in RESERVED_FIELDS}
        n = int(body.get("n", 1) or 1)
        cap = n * 8 * self._max_chars(body) + (32 << 20)  # bytes: UTF-8 and JSON escapes, and room for an
        # over-long text, which is cut (then counted truncated) rather than refused
        if self.max_completion_tokens and "max_tokens" in typed:
            typed["max_completion_tokens"] = typed.pop("max_tokens")
        attempt = 0
        while True:
            for k in self.dropped:  # refused by this server before (the cache key stays the request as built)
                if k == "n" and n > 1:
                    raise _NRejected()
                typed.pop(k, None)
            try:
                sent_extra = dict(extra, stream=True) if self.stream else extra
                with api.with_streaming_response.create(**typed, extra_body=sent_extra or None) as raw:
                    content = self._read_within(raw, cap)
                    content_type = raw.headers.get("content-type", "")
                break
            except openai.OpenAIError as exc:
                err = self._error(exc, n, typed)
                if (isinstance(err, _ParamRefused) and not (err.name == "n" and n > 1)
                        or isinstance(err, _WantsStream) and sent_extra.get("stream") is not True
                        or isinstance(err, _WantsMaxCompletionTokens) and "max_tokens" in typed):
                    with self._lock:  # sent again below, as the server asked: no retry
                        self._resent += 1
                if isinstance(err, _ParamRefused):
                    self._drop(err.name, str(err))
                    if err.name == "n" and n > 1:
                        raise _NRejected() from None
                    continue
                if isinstance(err, _WantsStream):
                    if sent_extra.get("stream") is True:  # refused as a stream too
                        raise ApiError(str(err)) from None
                    with self._lock:
                        first, self.stream = not self.stream, True
                    if first:
                        logging.getLogger("coevo").warning(
                            f"warning: the server answers only streams ({sanitize(err, 240)}): requests go as "
                            "streams from now on, each read whole")
                    continue
                if isinstance(err, _WantsMaxCompletionTokens) and "max_tokens" in typed:
                    # OpenAI's reasoning models refuse max_tokens and --api-extra may not set the
                    # other name: the same limit under the name the server asks for (the cache key
                    # stays the request as built)
                    self.max_completion_tokens = True
                    typed["max_completion_tokens"] = typed.pop("max_tokens")
                    continue
                raise (ApiError(str(err)) if isinstance(err, _WantsMaxCompletionTokens) else err) from None
            except _CutShort as cut:
                # the client retries only the wait for the headers: a body cut short is retried here
                # (a server or proxy closing the connection, or stalling, mid-answer ended the run
                # with an httpx traceback)
                if attempt == self.api.max_retries or (stop is not None and stop.is_set()):
                    what = (f"no whole answer within {self.api.timeout:g} s (it stalled after {cut.size:,} bytes"
                            if cut.timeout else
                            f"the connection closed before the whole answer came ({cut.size:,} bytes")
                    raise ApiError(f"{self.url}: {what}; {self._tries()})") from None
                time.sleep(min(0.5 * 2.0 ** attempt, 8.0) * (1 - 0.25 * random.random()))
                attempt += 1
        try:
            if _is_event_stream(content, content_type):
                # streamed though nobody asked (a server or gateway that always streams)
                data = _from_event_stream(content, self.api.endpoint)
            else:
                data = json.loads(content)
        except (ValueError, UnicodeDecodeError, RecursionError):  # (nested past the recursion limit)
            text = content[:4096].decode("utf-8", "replace")
            page = _web_page(text)
            if page is not None:
                raise ApiError(f"{self.url}: the answer is a web page ({page!r}), not JSON: is --api-base "
                               "the API's address (with vLLM, llama.cpp, Ollama, LM Studio it ends in /v1)?") from None
            head = sanitize(text[:80], 80)
            raise ApiError(f"{self.url}: the answer is not JSON ({len(content)} bytes: {head!r})") from None
        try:
            return parse_answer(data, self.api.endpoint, body.get("n", 1), self._max_chars(body))
        except ValueError as exc:
            raise ApiError(f"{self.url}: not a completion: {exc}") from None

    def _drop(self, name: str, message: str) -> None:
        """Send no ``name`` from now on (the server refused it), and say so once."""
        with self._lock:
            if name in self.dropped:
                return
            self.dropped.add(name)
        logging.getLogger("coevo").warning(
            f"warning: the server does not take '{name}' ({sanitize(message, 240)}): requests go without it "
            f"from now on ({_DROP_NOTE.get(name, 'its default')})")

    def _read_within(self, raw, cap: int) -> bytes:
        """The response body, read as it comes: past ``api.timeout`` seconds after the headers (the
        client's own timeout counts only the wait for each chunk, so a server sending a byte a
        second kept `coevo solve` waiting for ever) or past ``cap`` bytes (60 MB answers held three
        times their size before the texts were cut), an :class:`ApiError`."""
        deadline = time.monotonic() + float(self.api.timeout)
        parts, size = [], 0
        chunks = raw.iter_bytes()
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except _transport_errors() as exc:
                raise _CutShort(size, "timeout" in type(exc).__name__.lower()) from None
            parts.append(chunk)
            size += len(chunk)
            if size > cap:
                raise ApiError(f"{self.url}: the answer is larger than {cap:,} bytes (far more than "
                               "completions of the requested length)")
            if time.monotonic() > deadline:
                raise ApiError(f"{self.url}: no whole answer within {self.api.timeout:g} s (it was still "
                               f"arriving: {size:,} bytes)")
        return b"".join(parts)

    @staticmethod
    def _max_chars(body: dict) -> int:
        return 32 * int(body.get("max_tokens") or 0) + 4096

    def _call(self, body: dict, stop: threading.Event, client) -> dict:
        """The answer to ``body``: from the cache, else from the server (then cached). Does
        nothing once ``stop`` is set (the call failed or was interrupted)."""
        if stop.is_set():
            raise _Stopped()
        key = request_key(self.url, body) if self.cache is not None else ""
        if self.cache is not None:
            hit = self.cache.get(key, self.url, body)
            if hit is not None:
                with self._lock:
                    self.stats["cache_hits"] += 1
                return hit
        answer = self._post(body, client, stop)
        with self._lock:
            for k, v in answer["usage"].items():
                self.stats[k] += v
        if self.cache is not None and answer["choices"]:  # (an answer without choices is asked again next run)
            self.cache.put(key, self.url, body, answer)
        return answer

    # ---- generate -----------------------------------------------------------------------------

    def _base_body(self, req: GenRequest, r: int, cfg: GenerationConfig) -> tuple[dict, str]:
        style = self.api.prompt_style
        if style == "chat":
            if not req.messages:
                raise ValueError(f"request {r}: no chat messages (build requests with "
                                 "roles.requests.role_request, or use the plain prompt format)")
            messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in req.messages]
        else:
            if not req.prompt:
                raise ValueError(f"request {r}: empty prompt")
            messages = [{"role": "user", "content": req.prompt}]
        body: dict[str, Any] = {"model": self.api.model}
        if self.api.endpoint == "chat":
            body["messages"] = messages
            content = json.dumps(messages, ensure_ascii=False)
        else:
            body["prompt"] = req.prompt
            content = req.prompt
        body.update(temperature=float(cfg.temperature), top_p=float(cfg.top_p),
                    max_tokens=int(cfg.max_new_tokens))
        if self.api.stop:
            body["stop"] = list(self.api.stop)
        body.update(self.api.extra_body)
        return body, content

    def generate(self, requests: Sequence[GenRequest], progress: bool = False,
                 config: GenerationConfig | None = None) -> list[Sample]:
        """``n`` samples per request, in request order (all samples of request 0 first)."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        cfg = config or self.config
        jobs: list[_Job] = []
        seen: dict[str, int] = {}
        for r, req in enumerate(requests):
            if req.n < 0:
                raise ValueError(f"request {r}: n must be >= 0")
            body, content = self._base_body(req, r, cfg)
            occ = seen.get(content, 0)
            seen[content] = occ + 1
            jobs.append(_Job(req, body, content, occ, [None] * req.n))
        self.stats = {"samples": float(sum(len(j.got) for j in jobs)), "requests": 0.0, "cache_hits": 0.0,
                      "prompt_tokens": 0.0, "completion_tokens": 0.0, "retries": 0.0}
        attempts0, resent0 = self._attempts, self._resent
        bar = None
        if progress and sys.stderr.isatty():
            from tqdm import tqdm
            bar = tqdm(total=int(self.stats["samples"]), desc="sampling (served)", unit="sample",
                       leave=False, file=sys.stderr, dynamic_ncols=True)
        elif self.say is not None:  # no bar drawn: status lines at most every status_every_s
            bar = _StatusBar(SamplingStatus(int(self.stats["samples"]), self.say, every_s=self.status_every_s,
                                            label="sampling (served)"))
        greedy = cfg.temperature == 0
        t0 = time.perf_counter()
        pool = ThreadPoolExecutor(max_workers=self.api.concurrency, thread_name_prefix="coevo-api")
        pending: dict = {}
        past_context: dict[str, str] = {}
        stop = threading.Event()
        client = self._openai()  # made here, once: worker threads share it

        def submit(job: _Job, first: int, count: int):
            # count > 1 or first == 0: the request carrying `count` samples with the prompt's seed;
            # else a single repeat with its own seed
            seed = derive_seed(cfg.seed, job.content, job.occurrence, -1 if first == 0 else first)
            body = dict(job.body, n=count, seed=seed)
            pending[pool.submit(self._call, body, stop, client)] = (job, first, count)

        try:
            for job in jobs:
                n = len(job.got)
                if n == 0:
                    continue
                if greedy:
                    submit(job, 0, 1)
                elif n > 1 and self.n_rejected:
                    submit(job, 0, 1)
                    for j in range(1, n):
                        submit(job, j, 1)
                else:
                    submit(job, 0, n)
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    job, first, count = pending.pop(fut)
                    n = len(job.got)
                    try:
                        answer = fut.result()
                    except _NRejected:
                        self.n_rejected = True
                        submit(job, 0, 1)
                        for j in range(1, n):
                            submit(job, j, 1)
                        continue
                    except _PastContext as exc:  # as in process: no completion, and a warning
                        past_context.setdefault("detail", str(exc))
                        for j in range(first, n if greedy else first + count):
                            if job.got[j] is None:
                                job.got[j] = {"text": "", "truncated": True, "past_context": True}
                                if bar is not None:
                                    bar.update(1)
                        continue
                    choices = answer["choices"]
                    if not choices:  # no sample in the answer: these samples are empty, not asked again
                        choices = [{"text": "", "truncated": False, "empty": "no_choices"}] * (1 if greedy else count)
                    fill = choices[:1] * n if greedy else choices[:count]
                    placed = 0
                    for k, ch in enumerate(fill):
                        if job.got[first + k] is None:
                            job.got[first + k] = ch
                            placed += 1
                    if not greedy and len(choices) < count:
                        self.n_ignored = True
                        for j in range(first + len(choices), first + count):
                            submit(job, j, 1)
                    if bar is not None:
                        bar.update(placed)
        except BaseException:
            stop.set()  # requests a worker has picked up but not sent yet are dropped
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            self._cut()  # requests in flight stop waiting for their answers (before close() drops the sockets)
            self.close()  # and no new request goes out (a retry of one in flight fails at once)
            wait([f for f in pending if not f.done()], timeout=5.0)  # so none lands after we return
            raise
        finally:
            if bar is not None:
                bar.close()
        pool.shutdown(wait=True)
        dt = time.perf_counter() - t0
        st = self.stats
        st["retries"] = float(max(0, self._attempts - attempts0 - st["requests"] - (self._resent - resent0)))
        st["seconds"] = dt
        st["requests_per_s"] = st["requests"] / dt if dt > 0 else 0.0
        st["tokens_per_s"] = st["completion_tokens"] / dt if dt > 0 else 0.0
        st["n_ignored"] = float(self.n_ignored or self.n_rejected)
        got = [ch for job in jobs for ch in job.got if ch is not None]
        if got and all(ch.get("empty") == "no_choices" for ch in got):
            raise ApiError(f"{self.url}: not a completion: the answer has no choices (to each of "
                           f"{int(st['requests'])} requests)")
        st["past_context"] = float(sum(1 for ch in got if ch.get("past_context")))
        st["answers"] = float(len(got))
        st["from_reasoning"] = float(sum(1 for ch in got if ch.get("via") == "reasoning"))
        st["from_tool_calls"] = float(sum(1 for ch in got if ch.get("via") == "tool_calls"))
        st["empty_answers"] = float(sum(1 for ch in got if not ch["text"].strip() and not ch.get("past_context")))
        for why in _EMPTY_WHY:
            st[why] = float(sum(1 for ch in got if ch.get("empty") == why))
        # stopped by max_tokens (a prompt past the context is named apart: raising the limit would not help)
        st["truncated"] = float(sum(1 for ch in got if ch["truncated"] and not ch.get("past_context")))
        st["max_new_tokens"] = float(cfg.max_new_tokens)
        if st["past_context"]:
            logging.getLogger("coevo").warning(
                f"warning: {int(st['past_context'])} of {int(st['samples'])} samples got no completion: "
                f"the server refused their prompts as longer than the model's context with --max-new-tokens "
                f"{cfg.max_new_tokens} ({self.url}: {sanitize(past_context.get('detail', ''), 160)}); lower "
                "--max-new-tokens or serve the model with a longer context")
        for k, v in st.items():
            if k not in ("seconds", "requests_per_s", "tokens_per_s", "n_ignored", "max_new_tokens"):
                self.totals[k] = self.totals.get(k, 0.0) + v
        samples = []
        for job in jobs:
            for j, ch in enumerate(job.got):
                assert ch is not None
                samples.append(Sample(job.req.role, job.req.task_id, None, None, None, ch["text"],
                                      ch["truncated"], dict(job.req.meta), j))
        return samples


# why a served answer held no text, as answers_note words it
_EMPTY_WHY = {"refused": "refused", "filtered": "stopped by the server's content filter",
              "cut_reasoning": "cut at the length limit while reasoning",
              "no_choices": "with no choice in the server's answer"}


def answers_note(stats: dict[str, float]) -> str:
    """What a served generator's last call took from elsewhere than the message content (the
    reasoning field, tool calls) and how many answers held no text, by reason; "" when none."""
    parts = []
    took = [f"{int(stats[k])} answers taken from {where}" for k, where in (
        ("from_reasoning", "the reasoning field"), ("from_tool_calls", "tool calls")) if stats.get(k)]
    if took:
        parts.append(", ".join(took) + " (the message content was empty)")
    empty = int(stats.get("empty_answers", 0))
    if empty:
        why = [f"{int(stats[k])} {w}" for k, w in _EMPTY_WHY.items() if stats.get(k)]
        parts.append(f"{empty} of {int(stats.get('answers', 0))} answers empty"
                     + (f" ({', '.join(why)})" if why else ""))
    return "; ".join(parts)


def unreachable(base_url: str, timeout: float = 10.0) -> str | None:
    """Why nothing answers at ``base_url`` (connection refused, a host not found, no answer within
    ``timeout`` seconds), or None when something does: any HTTP answer to ``GET {base}/models``,
    an error status included. What a run checks before its first step when it evaluates with a
    served model (a run that cannot reach it otherwise failed at its first evaluation)."""
    import openai

    try:
        http = openai.DefaultHttpxClient(trust_env=not _loopback(base_url))
        with openai.OpenAI(base_url=base_url, api_key="none", timeout=timeout, max_retries=0,
                           http_client=http) as client:
            client.models.list()
    except openai.APIConnectionError as exc:  # (a timeout too)
        cause = exc.__cause__ or exc
        return f"{type(cause).__name__}: {sanitize(str(cause) or 'no answer', 160)}"
    except (ImportError, ValueError) as exc:  # a proxy that cannot be used, a malformed address
        return f"{type(exc).__name__}: {sanitize(str(exc), 160)}"
    except Exception:  # noqa: BLE001 - an HTTP error status or a reply of another shape: it answers
        return None
    return None


def _loopback(url: str) -> bool:
    """Whether ``url`` names this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _retry_after(exc) -> float | None:
    """The seconds an HTTP error's ``Retry-After`` header asks to wait (None if it names none)."""
    resp = getattr(exc, "response", None)
    try:
        return float(resp.headers.get("retry-after")) if resp is not None else None
    except (TypeError, ValueError):
        return None


def _status_detail(exc) -> str:
    """The server's own words about an HTTP error, sanitised (JSON ``error.message``/``detail``,
    else the body's text)."""
    resp = getattr(exc, "response", None)
    text = ""
    try:
        body = resp.json() if resp is not None else None
    except Exception:
        body = None
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        text = "" if err is None else str(err)
    elif resp is not None:
        try:
            text = resp.text
        except Exception:
            text = ""
        page = _web_page(text)
        if page is not None:  # a proxy's error page: its words, not its markup
            text = _html_text(text, drop_head=True).strip() or page
    return sanitize(text) if text else ""
