"""Session file records (docs/architecture.md §8): a header line, then one message per line."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT_VERSION = 1


def now_iso() -> str:
    """UTC now, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_session_id() -> str:
    """Sortable by start time, unique enough: `20261129-172601-a1b2c3`."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class SessionHeader(BaseModel):
    """Line 1 of a session file."""

    model_config = ConfigDict(extra="allow")

    session_id: str = Field(default_factory=new_session_id)
    started_at: str = Field(default_factory=now_iso)
    working_directory: str
    model: str | None = None
    version: int = FORMAT_VERSION
    mode: str = "agent"


class RecordedCall(BaseModel):
    """A tool call as stored: arguments kept as the JSON string the model sent."""

    id: str
    name: str
    arguments: str = "{}"


class SessionMessage(BaseModel):
    """One conversation message as stored (a line after the header)."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[RecordedCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    timestamp: str = Field(default_factory=now_iso)
    reasoning_content: str | None = None
    # Set on the assistant message of a turn stopped early (Ctrl-C, a guard): what was said is kept.
    interrupted: bool = False
    # Set on a summary that replaced older messages (a checkpoint or a compaction).
    summary: bool = False

    def to_line(self) -> str:
        return self.model_dump_json(exclude_defaults=False) + "\n"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionMessage:
        return cls.model_validate(data)
