"""`/debug`: a `Model` wrapper that reports each request and its stream events as they pass."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from rich.markup import escape

from openmono.llm import (
    ChatMessage,
    Done,
    Model,
    ModelInfo,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)


class DebugModel:
    """Delegates to `inner`; `report` gets one line of markup per request, per non-text event and
    a summary of the text and reasoning deltas at the end of each reply."""

    def __init__(self, inner: Model, report: Callable[[str], None]) -> None:
        self.inner = inner
        self.report = report

    async def probe(self) -> ModelInfo:
        return await self.inner.probe()

    def tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        return self.inner.tool_tokens(tools)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        grammar: str | None = None,
    ) -> AsyncIterator[StreamEvent]:
        chars = sum(len(m.content or "") for m in messages)
        self.report(
            f"[dim]debug › request: {len(messages)} messages ({chars} chars), "
            f"{len(tools or ())} tools, max_tokens={max_tokens}, temperature={temperature}[/dim]"
        )
        text = reasoning = deltas = 0
        events = self.inner.stream(
            messages,
            tools,
            max_tokens=max_tokens,
            temperature=temperature,
            response_format=response_format,
            grammar=grammar,
        )
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    text, deltas = text + len(event.text), deltas + 1
                elif isinstance(event, ReasoningDelta):
                    reasoning, deltas = reasoning + len(event.text), deltas + 1
                elif isinstance(event, Usage):
                    self.report(
                        f"[dim]debug › usage: prompt {event.prompt_tokens}, "
                        f"completion {event.completion_tokens} tokens[/dim]"
                    )
                elif not isinstance(event, Done):
                    self.report(f"[dim]debug › {escape(repr(event)[:300])}[/dim]")
                yield event
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
            self.report(
                f"[dim]debug › reply: {deltas} deltas, {text} text chars, "
                f"{reasoning} reasoning chars[/dim]"
            )
