"""The `Model` protocol: the only thing the loop knows about a provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from openmono.llm._events import StreamEvent
from openmono.llm._messages import ChatMessage, ModelInfo, ToolSpec


@runtime_checkable
class Model(Protocol):
    """A chat model that streams our own events.

    Implement `stream` as an async generator (`async def ... yield`). Consume it inside
    `contextlib.aclosing(...)` so that stopping early (Ctrl-C, a doom-loop guard) closes the HTTP
    stream at once. Errors are `openmono.llm.LLMError` subclasses; `ContextOverflowError` means
    "compact and retry" (nothing has been yielded in that case).
    """

    def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        grammar: str | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation and yield events until `Done` (always the last event).

        `response_format`: the OpenAI `response_format` object, sent as given (llama.cpp turns a
        `json_schema` one into a grammar that constrains the reply). `grammar`: a GBNF grammar
        the reply must follow (llama.cpp's per-request `grammar`), sent as given."""
        ...

    async def probe(self) -> ModelInfo:
        """Ask the server which model it serves and how large its context is."""
        ...

    def tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        """About how many prompt tokens offering `tools` costs, the way this model is shown them
        (the loop's context estimate; the server's own count replaces it once known)."""
        ...
