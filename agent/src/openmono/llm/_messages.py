"""Request-side types: chat messages and tool specs sent to the model; what a probe learns."""

from __future__ import annotations

import json
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
    """A tool offered to the model: name, description and the JSON schema of its parameters."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

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
    tool_protocol: Literal["native", "prompted"] = "native"
    # why that protocol: "auto: the chat template has no tool support (from props)", ...
    protocol_reason: str = ""

    @property
    def label(self) -> str:
        """`model` as people read it (see `model_label`)."""
        return model_label(self.model)
