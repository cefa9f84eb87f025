"""Which conversation an LLM request belongs to: the `X-OpenMono-Session` header.

The gateway hashes it to pick the llama-server replica (caddy/Caddyfile, `llm_affinity`), so
every turn of a conversation lands where its prompt is already cached. A session's turns run
inside `conversation(session_id)`; a sub-agent's inside its own id (its prompt is another one).
A context variable, so each task keeps its own and nothing is threaded through the loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from openmono_contracts.gatewaykeys import SESSION_HEADER

_CURRENT: ContextVar[str | None] = ContextVar("openmono_llm_conversation", default=None)


@contextmanager
def conversation(session_id: str) -> Iterator[None]:
    """LLM requests made inside this block carry `session_id` as their conversation."""
    token = _CURRENT.set(session_id)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_conversation() -> str | None:
    """The conversation the current task speaks for (None outside any)."""
    return _CURRENT.get()


def affinity_header() -> dict[str, str]:
    current = _CURRENT.get()
    return {SESSION_HEADER: current} if current else {}
