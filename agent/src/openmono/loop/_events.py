"""Loop events: what a running turn tells its surface (the CLI now, ACP later).

A small union discriminated by `kind`, JSON-ready for `--output-format stream-json`. Order within a
turn: text / reasoning chunks as they stream; per tool call `ToolStarted` then `ToolFinished`
(`PermissionAsked` in between when someone must approve); `UsageReport` after each model reply;
`Notice` for checkpoints, compactions and guards; `TurnDone` last, always.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class TextChunk(_Event):
    kind: Literal["text"] = "text"
    text: str


class ReasoningChunk(_Event):
    kind: Literal["reasoning"] = "reasoning"
    text: str


class ToolStarted(_Event):
    kind: Literal["tool_started"] = "tool_started"
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolFinished(_Event):
    """A call's end. `problem` says the model's call itself was bad: a tool that is not offered
    (`unknown_tool`), or arguments that do not parse or fit the schema (`invalid`). `writes`: the
    call was of the kind that changes files (`permissions.writes_call`), whether or not it ran;
    `refused_by`: the prepare step that refused it (`mode`, `read_only_task`, `permissions`...)."""

    kind: Literal["tool_finished"] = "tool_finished"
    call_id: str
    name: str
    ok: bool
    output: str
    error: str | None = None
    denied: bool = False
    artifact: str | None = None
    elapsed_ms: float = 0.0
    problem: Literal["unknown_tool", "invalid"] | None = None
    writes: bool = False
    refused_by: str | None = None


class PermissionAsked(_Event):
    kind: Literal["permission_asked"] = "permission_asked"
    call_id: str
    name: str
    arguments: dict[str, Any]
    reason: str


class UsageReport(_Event):
    kind: Literal["usage"] = "usage"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_per_s: float | None = None
    context_tokens: int = 0
    n_ctx: int = 0


class Notice(_Event):
    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str


StopReason = Literal[
    "stop", "max_iterations", "doom_loop", "repetition", "empty", "cancelled", "error", "context"
]


class TurnDone(_Event):
    kind: Literal["done"] = "done"
    reason: StopReason
    text: str = ""
    iterations: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason == "stop"


LoopEvent = Annotated[
    TextChunk
    | ReasoningChunk
    | ToolStarted
    | ToolFinished
    | PermissionAsked
    | UsageReport
    | Notice
    | TurnDone,
    Field(discriminator="kind"),
]
EventSink = Callable[[LoopEvent], None]


def discard(_event: LoopEvent) -> None:
    """A sink that drops events (benchmarks, background summaries)."""
