"""Stream events: what `Model.stream()` yields, a small union discriminated by `kind`.

Order within one turn: `Note`s about the request, if any (a refused grammar); any number of
`TextDelta` / `ReasoningDelta` / `ToolCallDelta` as they arrive; then, once the model finished, one
`ToolCallComplete` per call (index order; the server's calls first, then calls read from the text),
an optional `Usage`, and `Done` last. The `TextDelta`s are the answer as it is to be shown and
kept: the markup of calls written as text is never in them (`PromptedTools`). A
`ToolCallComplete` with `error` set must not be executed: answer it with the error as its tool
result.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class TextDelta(_Event):
    """A piece of the assistant's visible answer."""

    kind: Literal["text"] = "text"
    text: str


class ReasoningDelta(_Event):
    """A piece of the model's thinking (`reasoning_content`), shown apart from the answer."""

    kind: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallDelta(_Event):
    """A raw fragment of a native tool call, for live display; `id`/`name` often come once."""

    kind: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


class ToolCallComplete(_Event):
    """One whole tool call, arguments as a JSON string (coerced with the tool's schema).

    `source` says whether the server sent it as a structured call or we recovered it from the text.
    `truncated` means the body was cut off (length limit, stream end): it is never to be applied.
    `error` (set whenever `truncated` is, and for unknown tools or unparsable arguments) is a
    message the model can act on; such a call must be answered with that error, not executed.
    """

    kind: Literal["tool_call"] = "tool_call"
    index: int
    id: str
    name: str
    arguments: str
    source: Literal["native", "text"] = "native"
    truncated: bool = False
    error: str | None = None


class Usage(_Event):
    """Token counts of the turn, plus llama.cpp's `timings` (prompt_ms, predicted_per_second)."""

    kind: Literal["usage"] = "usage"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    timings: dict[str, Any] | None = None


class Note(_Event):
    """Something the user should know about how the model is driven (a grammar the server
    refused, tools the model cannot see); said once, never part of the answer."""

    kind: Literal["note"] = "note"
    level: Literal["info", "warning"] = "warning"
    message: str


class Done(_Event):
    """The turn is over. `finish_reason` is the server's word (stop/length/tool_calls) or None.

    Trust the tool calls, not `finish_reason`: llama.cpp may say `stop` while calls are present.
    """

    kind: Literal["done"] = "done"
    finish_reason: str | None = None


StreamEvent = Annotated[
    TextDelta | ReasoningDelta | ToolCallDelta | ToolCallComplete | Usage | Note | Done,
    Field(discriminator="kind"),
]
