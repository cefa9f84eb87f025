"""Request-side types: chat messages and tool specs sent to the model; what a probe learns; and
the cheap token estimates of both, for what the server has not counted yet."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ToolCall(BaseModel):
    """A tool call inside an assistant message; `arguments` is a JSON string (a dict is dumped)."""

    id: str
    name: str
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _dump_dict(cls, value: Any) -> Any:
        # Callers often hold parsed arguments; the wire (and the session file) carry a JSON string.
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False)
        return value

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ChatMessage(BaseModel):
    """One message of the conversation as sent to an OpenAI-compatible endpoint."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    # an instruction of the loop's own in a user turn (a continuation, a nudge), not the user's
    # words: never sent as such, never stored; `_intent` looks past it for the request
    from_loop: bool = Field(default=False, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        """The message's JSON for `/v1/chat/completions` (empty fields left out)."""
        # "" rather than null: several chat templates break on a null content next to tool calls.
        out: dict[str, Any] = {"role": self.role, "content": self.content or ""}
        if self.reasoning_content:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [tc.to_wire() for tc in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


class ToolSpec(BaseModel):
    """A tool offered to the model: name, description and the JSON schema of its parameters.
    `writes`: the tool changes files (its facts say so); never sent, it lets the prompted
    protocol leave writers out of a request that only reads (`_intent`). `paths`: the arguments
    that name a path (its facts' `path_params`); never sent, they let the prompted protocol hold
    the picked call to the paths the request names (`_ground`). `shell`: the tool runs a command
    (its facts' `shell_param`); never sent, it lets `_pick` offer the shell among the tools that
    change something (a move or a delete is a command)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    writes: bool = Field(default=False, exclude=True)  # not in a dump: token estimates stay as sent
    paths: tuple[str, ...] = Field(default=(), exclude=True)
    shell: bool = Field(default=False, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def model_label(model: str) -> str:
    """The model as people read it: llama.cpp names a model by the path it loaded, so a GGUF
    path (`/…/.venv/…/SmolLM2-135M-Instruct.Q4_1.gguf`) shows as its file stem; a repository id
    (`Qwen/Qwen3-8B`) or a plain name stays as it is."""
    name = model.strip()
    if name.lower().endswith(".gguf"):
        return PurePath(name).name[: -len(".gguf")]
    if name.startswith(("/", "~", "./")):
        return PurePath(name).name
    return name


class ModelInfo(BaseModel):
    """What the startup probe learnt: the served model's name, its context size per slot, whether
    its chat template renders tools (None: unknown) and so which tool protocol is in use."""

    model: str
    n_ctx: int | None = None
    source: Literal["props", "models"] = "props"
    supports_tools: bool | None = None
    # where `supports_tools` came from: `/props` or a probe with and without a tool
    tools_known_from: Literal["props", "probe"] | None = None
    # the protocol the chat template asks for in a comment (`openmono:tool_protocol=...`)
    template_protocol: Literal["native", "prompted"] | None = None
    # the server is llama.cpp (it answered `/props`), which takes a per-request GBNF grammar
    takes_grammar: bool = False
    # decided by the tool protocol (`PromptedTools.probe`) from the above and the setting
    tool_protocol: Literal["native", "prompted"] = "native"
    # why that protocol: "auto: the chat template has no tool support (from props)", ...
    protocol_reason: str = ""
    # the model family and template style as told by the name and the template (`_family.py`)
    family: str = ""
    # whose chat template the server renders with (ours, the model's own, unknown)
    template: str = ""

    @property
    def label(self) -> str:
        """`model` as people read it (see `model_label`)."""
        return model_label(self.model)


# Rough characters per token for text we have no usage figures for yet (code-heavy English).
CHARS_PER_TOKEN = 3.2


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    """A cheap token estimate: characters / 3.2 plus a few tokens of framing per message."""
    chars = 0
    for m in messages:
        chars += len(m.content or "") + len(m.reasoning_content or "")
        for c in m.tool_calls:
            chars += len(c.name) + len(c.arguments) + 12
    return int(chars / CHARS_PER_TOKEN) + 6 * len(messages)


def native_tool_tokens(tools: Sequence[ToolSpec]) -> int:
    """About what the `tools` array costs in the prompt when the chat template renders it."""
    return sum(len(t.model_dump_json()) for t in tools) // 4
