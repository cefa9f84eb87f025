"""What the HTTP layer needs to know about the wire: URLs, error bodies, Retry-After.

Only this module and the client turn HTTP statuses and error bodies into `LLMError`s.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any
from urllib.parse import urlsplit

from openmono.llm._errors import ContextOverflowError, LLMError, StreamError

_API_SUFFIXES = ("/v1/chat/completions", "/chat/completions", "/v1")
_OVERFLOW_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded"})
_OVERFLOW_TEXT = re.compile(
    r"exceeds? the available context size|context length|maximum context|context window", re.I
)
_NUMBERS = re.compile(r"request \((\d+) tokens\).*?context size \((\d+) tokens\)", re.S)


class EndpointError(LLMError):
    """The configured endpoint is not an http(s) URL."""


def normalize_endpoint(endpoint: str) -> str:
    """The server root that `/v1/chat/completions` and `/props` hang off.

    Accepts `http://host:port`, a trailing slash, `.../v1`, `.../v1/chat/completions` and relay URLs
    with a path prefix (`https://relay/llm` → `/llm/props`, `/llm/v1/...`).
    """
    url = endpoint.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EndpointError(
            f"LLM endpoint {endpoint!r} is not an http(s) URL like http://host:port"
        )
    url = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    for suffix in _API_SUFFIXES:
        if url.endswith(suffix):
            url = url[: -len(suffix)]
            break
    return url.rstrip("/")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_object(body: str) -> dict[str, Any]:
    """The `error` object of an OpenAI/llama.cpp error body (`{"error": {...}}`), or {}."""
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return err
        if isinstance(err, str):
            return {"message": err}
    return {}


def error_message(body: str, limit: int = 300) -> str:
    err = error_object(body)
    msg = err.get("message")
    text = str(msg) if msg else body.strip()
    return text[:limit] or "(empty body)"


def overflow_error(err: dict[str, Any], body: str) -> ContextOverflowError | None:
    """A `ContextOverflowError` if this error object says the prompt is too long, else None."""
    kind = str(err.get("type") or err.get("code") or "")
    message = str(err.get("message") or body)
    if kind not in _OVERFLOW_TYPES and not _OVERFLOW_TEXT.search(message):
        return None
    n_prompt, n_ctx = _int(err.get("n_prompt_tokens")), _int(err.get("n_ctx"))
    if n_prompt is None or n_ctx is None:
        m = _NUMBERS.search(message)
        if m:
            n_prompt, n_ctx = n_prompt or int(m.group(1)), n_ctx or int(m.group(2))
    return ContextOverflowError(
        f"the prompt does not fit the model's context: {message}", n_prompt, n_ctx
    )


def frame_error(err: Any) -> LLMError:
    """The error for an error frame received inside a stream."""
    if isinstance(err, str):
        err = error_object(err) or {"message": err}
    if not isinstance(err, dict):
        err = {"message": str(err)}
    overflow = overflow_error(err, "")
    if overflow is not None:
        return overflow
    code = err.get("code", err.get("type"))
    msg = err.get("message") or json.dumps(err)
    return StreamError(f"the LLM server reported an error mid-stream: {msg}", code)


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
