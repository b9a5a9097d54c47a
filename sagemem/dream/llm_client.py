"""ChatEndpoint: the LLM planner's OpenAI-compatible endpoint, spoken with the stdlib only.

Two calls: ``GET {base}/models`` (is the configured model there at all) and
``POST {base}/chat/completions`` (OpenAI tool calling). Every failure — a refused
connection, a timeout, an HTTP status of 400 or more, a redirect, a body not of the
OpenAI shape — is one ``PlannerFailed`` line, never a traceback and never a fallback to
another planner.

The key rule: the API key goes in the ``Authorization: Bearer`` header and nowhere else.
It is never part of an error (a server that echoes it back has it replaced), a repr, a
note or a plan; it is read from ``SAGE_MEM_DREAM_LLM_KEY`` only, never from a file, and a
redirect is refused rather than followed (urllib would carry the header to the new host).
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import DREAM_LLM_KEY_ENV, Settings
from ..errors import PlannerFailed
from ..files.controls import visible

DEFAULT_TIMEOUT = 300.0
"""Seconds one request may take: a local model writing a long plan on a laptop CPU takes
minutes, and a request cut short wastes the whole answer."""
MAX_SERVER_MESSAGE = 200
"""How much of a server's error text an error quotes: enough for "model not loaded",
short enough that a server's HTML error page does not flood the terminal."""
MAX_RESPONSE_BYTES = 80 * 1024 * 1024
"""A completion carries at most a plan (64 MiB, ``plan.MAX_PLAN_BYTES``) and its JSON
quoting; anything bigger is not an answer, and is not read into memory."""
URL_SETTING = "SAGE_MEM_DREAM_LLM_URL"
MODEL_SETTING = "SAGE_MEM_DREAM_LLM_MODEL"


@dataclass(frozen=True)
class Completion:
    """One chat answer: the assistant ``message`` (role, content, tool_calls) and why the
    model stopped (``stop``, ``tool_calls``, ``length`` when it hit the token limit)."""

    message: dict[str, Any]
    finish_reason: str


@dataclass(frozen=True)
class ChatEndpoint:
    """An OpenAI-compatible endpoint (``http://127.0.0.1:8080/v1``) and the model to use."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", checked_url(self.base_url))

    def models(self) -> list[str]:
        """The model ids the endpoint serves (``{"data": [{"id": …}]}``)."""
        answer = self._request("GET", "/models")
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise self._shape("/models", 'no "data" list')
        ids = [item.get("id") for item in data if isinstance(item, dict)]
        return [i for i in ids if isinstance(i, str)]

    def complete(self, messages: Sequence[Mapping[str, Any]],
                 tools: Sequence[Mapping[str, Any]], max_tokens: int) -> Completion:
        """One chat completion with tool calling; the first choice is the answer."""
        body: dict[str, Any] = {"model": self.model, "messages": list(messages),
                                "max_tokens": max_tokens}
        if tools:
            body["tools"] = list(tools)
        answer = self._request("POST", "/chat/completions", body)
        return self._completion(answer)

    def _completion(self, answer: object) -> Completion:
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._shape("/chat/completions", 'no "choices" list')
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self._shape("/chat/completions", 'its first choice has no "message"')
        finish = choices[0].get("finish_reason")
        # Some servers send null while the answer is complete; only "length" means cut.
        return Completion(message, finish if isinstance(finish, str) else "stop")

    def _request(self, method: str, path: str, body: object = None) -> object:
        url = self.base_url + path
        request = urllib.request.Request(url, method=method, headers=self._headers())
        if body is not None:
            request.data = json.dumps(body).encode("utf-8")
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                data = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise self._http_error(url, exc) from None
        except TimeoutError:  # socket.timeout is TimeoutError since Python 3.10
            raise PlannerFailed(f"{url} did not answer within {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):  # timed out while connecting
                raise PlannerFailed(f"{url} did not answer within {self.timeout:g} s"
                                    ) from None
            raise PlannerFailed(f"cannot reach {url}: {self._quoted(str(exc.reason))}"
                                ) from None
        except (OSError, http.client.HTTPException) as exc:  # cut off mid-answer
            raise PlannerFailed(f"{url} broke off its answer: {self._quoted(str(exc))}"
                                ) from None
        return self._parsed(path, data)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _parsed(self, path: str, data: bytes) -> object:
        if len(data) > MAX_RESPONSE_BYTES:
            raise self._shape(path, f"it is over {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB")
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise self._shape(path, f"it is not JSON ({self._quoted(_text(data))!r})"
                              ) from None

    def _http_error(self, url: str, exc: urllib.error.HTTPError) -> PlannerFailed:
        if 300 <= exc.code < 400:
            target = self._quoted(exc.headers.get("Location") or "?")
            return PlannerFailed(f"{url} answered HTTP {exc.code}, a redirect to {target}, "
                                 "which is not followed; set dream_llm_url to the final "
                                 "address")
        try:
            data = exc.read(64 * 1024)
        except OSError:
            data = b""
        message = self._quoted(_server_message(data) or exc.reason or "")
        return PlannerFailed(f"{url} answered HTTP {exc.code}"
                             + (f": {message}" if message else ""))

    def _shape(self, path: str, problem: str) -> PlannerFailed:
        return PlannerFailed(f"{self.base_url}{path} answered with something that is not "
                             f"an OpenAI-compatible answer: {problem}")

    def _quoted(self, text: str) -> str:
        """A server's words on one line, at most ``MAX_SERVER_MESSAGE`` characters, with
        control characters shown as text and the key (if the server echoed it) removed."""
        if self.api_key:
            text = text.replace(self.api_key, "<REDACTED>")
        line = " ".join(visible(text).split())
        if len(line) > MAX_SERVER_MESSAGE:
            line = line[:MAX_SERVER_MESSAGE - 1] + "…"
        return line


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect becomes an HTTPError: following it would send the key to another host
    and turn the POST into a GET."""

    def redirect_request(self, *_: Any, **__: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects())


def _text(data: bytes) -> str:
    return data[:MAX_SERVER_MESSAGE * 4].decode("utf-8", "replace")


def _server_message(data: bytes) -> str:
    """The OpenAI error shape's ``error.message`` when there is one, else the raw text."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return _text(data)
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return _text(data)


def checked_url(url: str) -> str:
    """``url`` without its trailing slash, or PlannerFailed unless it is http(s)://host."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = " ".join(visible(url).split())[:MAX_SERVER_MESSAGE]
        raise PlannerFailed(f"dream_llm_url {shown!r} is not an http:// or https:// URL "
                            "(such as http://127.0.0.1:8080/v1)")
    return url.strip().rstrip("/")


def endpoint_from(settings: Settings, env: Mapping[str, str] | None = None) -> ChatEndpoint:
    """The endpoint the settings name; the key comes from ``SAGE_MEM_DREAM_LLM_KEY`` only
    (optional: a local server needs none)."""
    env = os.environ if env is None else env
    missing = [f"{variable} (or {key} in settings.json)" for variable, key, value in (
        (URL_SETTING, "dream_llm_url", settings.dream_llm_url),
        (MODEL_SETTING, "dream_llm_model", settings.dream_llm_model)) if not value]
    if missing:
        raise PlannerFailed("no LLM endpoint is configured; set " + " and ".join(missing))
    assert settings.dream_llm_url and settings.dream_llm_model
    return ChatEndpoint(settings.dream_llm_url, settings.dream_llm_model,
                        env.get(DREAM_LLM_KEY_ENV) or None)
