"""Step 3: stream one model reply, forwarding text and thinking as it arrives.

Text and thinking each have a repetition detector; either one tripping closes the stream.

Tool calls come whole (`ToolCallComplete`), and the text is the answer as it is to be shown and
kept, whatever the tool protocol (`openmono.llm.PromptedTools`). The model's `Note`s (a grammar
the server refused, ...) become `Notice`s. The accumulator is owned by the caller, so a cancelled
stream still leaves what was said.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from openmono.llm import (
    ChatMessage,
    Done,
    Model,
    Note,
    ReasoningDelta,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    Usage,
)
from openmono.loop._closing import closing_stream
from openmono.loop._events import EventSink, Notice, ReasoningChunk, TextChunk
from openmono.loop._guards import RepetitionDetector


@dataclass
class Reply:
    """What one model reply produced (so far)."""

    text_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    calls: list[ToolCallComplete] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    degenerate: bool = False
    # Where the repetition was seen: "text" or "reasoning".
    degenerate_in: str | None = None
    first_token_at: float | None = None
    finished_at: float | None = None

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    def tokens_per_s(self) -> float | None:
        """llama.cpp's own figure when it sent timings, else completion tokens / stream time."""
        if self.usage is None:
            return None
        timings = self.usage.timings or {}
        rate = timings.get("predicted_per_second")
        if isinstance(rate, int | float) and rate > 0:
            return float(rate)
        if self.first_token_at and self.finished_at and self.usage.completion_tokens:
            span = self.finished_at - self.first_token_at
            return self.usage.completion_tokens / span if span > 0 else None
        return None


async def stream_reply(
    model: Model,
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    emit: EventSink,
    reply: Reply,
    *,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Reply:
    """Stream into `reply`; stops early (closing the HTTP stream) when the text degenerates."""
    # Visible text and thinking: where each goes, how it is shown, and its own detector.
    channels: dict[
        type, tuple[str, list[str], type[TextChunk | ReasoningChunk], RepetitionDetector]
    ]
    channels = {
        TextDelta: ("text", reply.text_parts, TextChunk, RepetitionDetector()),
        ReasoningDelta: ("reasoning", reply.reasoning_parts, ReasoningChunk, RepetitionDetector()),
    }
    stream = model.stream(messages, tools or None, max_tokens=max_tokens, temperature=temperature)
    async with closing_stream(stream) as events:
        async for event in events:
            if isinstance(event, TextDelta | ReasoningDelta):
                where, parts, shown, detector = channels[type(event)]
                if reply.first_token_at is None:
                    reply.first_token_at = time.monotonic()
                parts.append(event.text)
                emit(shown(text=event.text))
                if detector.feed(event.text):
                    reply.degenerate, reply.degenerate_in = True, where
                    break
            elif isinstance(event, ToolCallComplete):
                reply.calls.append(event)
            elif isinstance(event, Usage):
                reply.usage = event
            elif isinstance(event, Note):
                emit(Notice(level=event.level, message=event.message))
            elif isinstance(event, Done):
                reply.finish_reason = event.finish_reason
    reply.finished_at = time.monotonic()
    return reply
