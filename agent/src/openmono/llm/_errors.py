"""The LLM client's exception tree: one base, typed subclasses the loop can act on.

LLMError
├── AuthError              the endpoint refused the key (401/403): fix config, never retried
├── ContextOverflowError   the prompt does not fit (400 exceed_context_size_error): compact
├── HTTPStatusError        any other non-200 (429/5xx only once the retries ran out)
├── TransportError         connect/read failure (before the first token: once retries ran out)
├── StreamError            an error frame inside the stream, or the stream broke off
├── TrustError             the endpoint is not trusted: a certificate the anchor does not vouch
│                          for, a bad anchor, or plain http:// beyond loopback; never retried
└── LLMTimeoutError        the two stream guards (LLMErrors, not asyncio timeouts)
    ├── FirstTokenTimeout  no token within `first_token_timeout_s` of sending the request
    └── StallTimeout       the stream had started, then no byte for `stall_timeout_s`
"""

from __future__ import annotations

from openmono.errors import OpenMonoError


class LLMError(OpenMonoError):
    """Base of every error raised by `openmono.llm`."""


class AuthError(LLMError):
    """The endpoint refused our bearer token (or we sent none and it wants one)."""

    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.status = status


class ContextOverflowError(LLMError):
    """The request is larger than the context; the numbers are `None` when the server gave none."""

    def __init__(
        self, message: str, n_prompt_tokens: int | None = None, n_ctx: int | None = None
    ) -> None:
        super().__init__(message)
        self.n_prompt_tokens = n_prompt_tokens
        self.n_ctx = n_ctx


class HTTPStatusError(LLMError):
    """A non-200 answer that is neither an auth failure nor a context overflow."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class TransportError(LLMError):
    """The connection failed (refused, reset, cut mid-stream)."""


class TrustError(LLMError):
    """The endpoint cannot be trusted as configured; the message says what to do."""


class StreamError(LLMError):
    """An error frame arrived inside the stream, or the stream ended before the model finished."""

    def __init__(self, message: str, code: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code


class LLMTimeoutError(LLMError):
    """Base of the two stream guards; `timeout_s` is the limit that was hit."""

    def __init__(self, message: str, timeout_s: float) -> None:
        super().__init__(message)
        self.timeout_s = timeout_s


class FirstTokenTimeout(LLMTimeoutError):
    """No token within the first-token limit (covers connect, prompt processing, first delta)."""


class StallTimeout(LLMTimeoutError):
    """The stream went silent (not even a keep-alive) for longer than the stall limit."""
