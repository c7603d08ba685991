"""Where a served model is and how to talk to it: :class:`ApiConfig` (no heavy imports, so the
run configuration can hold one: ``eval.api``). The client is :mod:`roles.api_client`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from matrix.errors import InputError

# body fields coevo sets itself; extra_body may not override them
RESERVED_FIELDS = frozenset({"model", "messages", "prompt", "n", "temperature", "top_p", "max_tokens",
                             "max_completion_tokens", "seed", "stop", "stream"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEY = re.compile(r"[\x21-\x7e]+\Z")  # what an Authorization header can carry after "Bearer "


def key_env_unset(name: str) -> bool:
    """``name`` is a well-formed environment variable name that holds no key (unset or blank)."""
    return bool(name) and bool(_ENV_NAME.match(name)) and not os.environ.get(name, "").strip()


@dataclass
class ApiConfig:
    """Where the served model is and how to talk to it (``eval.api`` in a run's config; the
    ``--api-*`` options of ``coevo solve`` / ``gen-tests`` / ``eval``)."""

    base_url: str = ""  # e.g. http://127.0.0.1:8000/v1; empty = no served model
    model: str = ""  # the model name the server knows
    key_env: str = ""  # name of the environment variable holding the API key; empty = no key
    endpoint: Literal["chat", "completions"] = "chat"  # /v1/chat/completions or /v1/completions
    prompt: Literal["auto", "chat", "plain"] = "auto"  # auto: chat on the chat endpoint, else plain
    stop: list[str] = field(default_factory=list)  # extra stop strings sent with every request
    extra_body: dict[str, Any] = field(default_factory=dict)  # more request fields (e.g. top_k)
    concurrency: int = 8  # requests in flight
    timeout: float = 300.0  # seconds per HTTP request
    max_retries: int = 3  # retries (with backoff) on 429, 5xx, timeouts and refused connections
    cache: bool = True  # answers cached on disk, keyed by the full request (a rerun costs nothing)
    cache_dir: str = ""  # empty: $COEVO_API_CACHE, else $XDG_CACHE_HOME/coevo/api, else ~/.cache/coevo/api

    # how messages name key_env: the run config's field here; an instance built from the command line's
    # --api-* options sets "--api-key-env" on itself (a class attribute: not a config field)
    key_option: ClassVar[str] = "eval.api.key_env"

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)

    @property
    def prompt_style(self) -> str:
        """``"chat"`` (the roles' chat messages) or ``"plain"`` (coevo's plain prompt format)."""
        if self.prompt != "auto":
            return self.prompt
        return "chat" if self.endpoint == "chat" else "plain"

    def validate(self):
        """Raises ``ValueError("field: message")`` (the config loader's convention)."""
        if not self.base_url:
            return
        if not re.match(r"https?://[^/\s]", self.base_url):
            raise ValueError("base_url: must be an http:// or https:// URL")
        if re.search(r"/(?:chat/completions|completions|models|embeddings)/*\Z", self.base_url):
            # requests went to .../v1/chat/completions/chat/completions, and the 404 said to add /v1
            raise ValueError("base_url: give the API's base URL (ending in /v1), not the address of one endpoint")
        if "@" in self.base_url.split("://", 1)[1].split("/", 1)[0]:
            raise ValueError("base_url: must not hold credentials; name an environment variable "
                             "holding the key instead (key_env / --api-key-env)")
        if not self.model:
            raise ValueError("model: the served model's name is needed with base_url")
        if self.key_env and not _ENV_NAME.match(self.key_env):
            # never echo the value: a user may have pasted the key itself here
            raise ValueError("key_env: must be the NAME of an environment variable (letters, digits, "
                             "_), not the key itself")
        if self.endpoint not in ("chat", "completions"):
            raise ValueError("endpoint: must be chat or completions")
        if self.prompt not in ("auto", "chat", "plain"):
            raise ValueError("prompt: must be auto, chat or plain")
        if self.endpoint == "completions" and self.prompt == "chat":
            raise ValueError("prompt: chat messages need the chat endpoint (use plain with completions)")
        if self.concurrency < 1:
            raise ValueError("concurrency: must be >= 1")
        if not self.timeout > 0:
            raise ValueError("timeout: must be > 0")
        if self.max_retries < 0:
            raise ValueError("max_retries: must be >= 0")
        if not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError("stop: must be non-empty strings")
        clash = sorted(RESERVED_FIELDS & set(self.extra_body))
        if clash:
            raise ValueError(f"extra_body: coevo sets {', '.join(clash)} itself")

    def api_key(self) -> str | None:
        """The key from the named environment variable (``None`` when none is named)."""
        if not self.key_env:
            return None
        value = os.environ.get(self.key_env, "")
        if not value.strip():
            raise InputError(f"the environment variable {self.key_env} (named as the API key) is not set "
                             "or empty", field=self.key_option)
        if not _KEY.match(value.strip()):
            # an HTTP header cannot carry it (a non-ASCII character ended the run with a traceback; a
            # newline was sent four times, then printed, key and all): never echo the value
            raise InputError(f"the environment variable {self.key_env} (named as the API key) holds a space, "
                             "a control or a non-ASCII character: an API key is one word of printable ASCII",
                             field=self.key_option)
        return value.strip()

    def cache_path(self) -> Path:
        if self.cache_dir:
            return Path(self.cache_dir).expanduser()
        env = os.environ.get("COEVO_API_CACHE")
        if env:
            return Path(env).expanduser()
        xdg = os.environ.get("XDG_CACHE_HOME")
        return (Path(xdg) if xdg else Path.home() / ".cache") / "coevo" / "api"
