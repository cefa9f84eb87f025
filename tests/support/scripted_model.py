"""A scripted in-process `Model` (no HTTP) for loop tests: replays event lists, records requests.

    model = ScriptedModel([reply(text="hi"), reply(calls=[("FileRead", {"file_path": "a"})])])

Each scripted reply is a list of `openmono.llm` stream events, or a callable taking the request's
messages and returning one. `requests` holds (messages, tools) per `stream()` call, `grammars` the
grammar each came with (None: none).

`InProcessModel` is the base of every in-process model here and in the benchmarks: it states the
`Model` protocol's `stream` signature once and streams what the subclass's `reply` yields.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from openmono.llm import (
    ChatMessage,
    ContextOverflowError,
    Done,
    ModelInfo,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    Usage,
    native_tool_tokens,
)

_replies = itertools.count()  # unique call ids across replies
Script = list[StreamEvent] | Callable[[Sequence[ChatMessage]], list[StreamEvent]] | Exception


def reply(
    text: str = "",
    calls: Sequence[tuple[str, dict[str, Any] | str]] = (),
    chunk: int = 16,
    prompt_tokens: int = 0,
) -> list[StreamEvent]:
    """The events of one reply: text in chunks, then whole tool calls, usage, done."""
    events: list[StreamEvent] = [
        TextDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)
    ]
    n = next(_replies)
    for i, (name, args) in enumerate(calls):
        raw = args if isinstance(args, str) else json.dumps(args)
        events.append(ToolCallComplete(index=i, id=f"c{n}_{i}", name=name, arguments=raw))
    if prompt_tokens:
        events.append(Usage(prompt_tokens=prompt_tokens, completion_tokens=len(text) // 4 + 1))
    events.append(Done(finish_reason="tool_calls" if calls else "stop"))
    return events


class InProcessModel:
    """A `Model` without a server: `probe` answers `name` and `n_ctx`, `stream` streams `reply`.

    The sampling options (`max_tokens`, `temperature`, `response_format`, `grammar`) are accepted
    and not used: an in-process model's replies are fixed by the test or benchmark.
    """

    def __init__(self, name: str, n_ctx: int) -> None:
        self.name = name
        self.n_ctx = n_ctx
        self.grammars: list[str | None] = []  # the grammar each request came with

    async def probe(self) -> ModelInfo:
        return ModelInfo(model=self.name, n_ctx=self.n_ctx)

    def tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        return native_tool_tokens(tools)

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
        self.grammars.append(grammar)
        return self.reply(messages, tools)

    def reply(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None
    ) -> AsyncIterator[StreamEvent]:
        """The reply to one request: an async generator (so `aclosing` closes it early)."""
        raise NotImplementedError


class ScriptedModel(InProcessModel):
    """Replays scripted replies in order; an `Exception` entry is raised instead of streaming."""

    def __init__(self, script: Sequence[Script] = (), n_ctx: int = 8192) -> None:
        super().__init__("scripted", n_ctx)
        self.script = list(script)
        self.requests: list[tuple[list[ChatMessage], list[ToolSpec]]] = []
        self.closed_early = 0

    def add(self, *items: Script) -> None:
        self.script.extend(items)

    async def reply(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append((list(messages), list(tools or [])))
        if not self.script:
            raise AssertionError("scripted model: no reply left")
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        events = item(messages) if callable(item) else item
        finished = False
        try:
            for event in events:
                yield event
            finished = True
        finally:
            if not finished:
                self.closed_early += 1


def cut_off(
    text: str = "", call: tuple[str, str] | None = None, reasoning: str = "", chunk: int = 16
) -> list[StreamEvent]:
    """A reply the output limit stopped (`finish_reason: length`): text, and a cut call if given.

    `call` is (tool name, the arguments as far as they came), flagged truncated as the client
    flags a cut call.
    """
    events: list[StreamEvent] = [ReasoningDelta(text=reasoning)] if reasoning else []
    events += [TextDelta(text=text[i : i + chunk]) for i in range(0, len(text), chunk)]
    if call is not None:
        name, partial = call
        events.append(
            ToolCallComplete(
                index=0,
                id=f"c{next(_replies)}_cut",
                name=name,
                arguments=partial,
                truncated=True,
                error=f"the {name} call was cut off before its arguments were complete",
            )
        )
    events.append(Done(finish_reason="length"))
    return events


def overflow() -> ContextOverflowError:
    return ContextOverflowError("too big", n_prompt_tokens=9000, n_ctx=8192)
