"""The conversation a loop works on, kept in memory and mirrored to the session file.

Every message added is persisted before the loop moves on. A checkpoint or compaction that replaces
the first `n` messages is persisted as one summary record with `summary_of: n`, so replaying the
file (`replay`) rebuilds the same list the loop had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openmono.llm import ChatMessage, ToolCall, estimate_tokens
from openmono.sessions import RecordedCall, SessionMessage, SessionWriter


def to_record(message: ChatMessage, **extra: Any) -> SessionMessage:
    """A chat message as a session line."""
    return SessionMessage(
        role=message.role,
        content=message.content,
        tool_calls=[
            RecordedCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
        ],
        tool_call_id=message.tool_call_id,
        reasoning_content=message.reasoning_content,
        **extra,
    )


def from_record(record: SessionMessage) -> ChatMessage:
    """A session line as a chat message."""
    return ChatMessage(
        role=record.role,
        content=record.content,
        reasoning_content=record.reasoning_content,
        tool_calls=[
            ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in record.tool_calls
        ],
        tool_call_id=record.tool_call_id,
    )


def replay(records: list[SessionMessage]) -> list[ChatMessage]:
    """The conversation a session file describes (summaries replace what they summarised)."""
    out: list[ChatMessage] = []
    for record in records:
        cut = getattr(record, "truncate_to", None)
        if isinstance(cut, int):
            out = out[:cut]
            continue
        replaced = getattr(record, "summary_of", None)
        if record.summary and isinstance(replaced, int):
            message = from_record(record)
            out = [ChatMessage(role="user", content=message.content), *out[replaced:]]
            continue
        if record.role != "system":
            out.append(from_record(record))
    return out


@dataclass
class Conversation:
    """System prompt + messages; `writer` (when set) receives every change durably."""

    system: str
    messages: list[ChatMessage] = field(default_factory=list)
    writer: SessionWriter | None = None
    # The real prompt size of the last request and how many messages it covered.
    known_tokens: int = 0
    known_count: int = 0
    # Moves whenever earlier messages are replaced, cut or shortened (compaction, checkpoint,
    # /retry): what was shown before may be gone (instructions that ride once show again).
    generation: int = 0

    def wire(self) -> list[ChatMessage]:
        return [ChatMessage(role="system", content=self.system), *self.messages]

    def add(self, message: ChatMessage, **extra: Any) -> None:
        self.messages.append(message)
        if self.writer is not None:
            self.writer.append(to_record(message, **extra))

    def replace_prefix(self, count: int, summary: str) -> None:
        """Replace the first `count` messages with one summary (a user message)."""
        message = ChatMessage(role="user", content=summary)
        self.messages = [message, *self.messages[count:]]
        self.known_tokens, self.known_count = 0, 0
        self.generation += 1
        if self.writer is not None:
            self.writer.append(to_record(message, summary=True, summary_of=count))

    def truncate(self, count: int) -> None:
        """Forget every message from index `count` on (persisted as a `truncate_to` record)."""
        self.messages = self.messages[:count]
        self.known_tokens, self.known_count = 0, 0
        self.generation += 1
        if self.writer is not None:
            marker = SessionMessage(role="system", content="[truncated]", truncate_to=count)
            self.writer.append(marker)

    def calibrate(self, prompt_tokens: int, covered: int) -> None:
        """Remember the server's count for the first `covered` messages (plus the system)."""
        self.known_tokens, self.known_count = prompt_tokens, covered

    def tokens(self) -> int:
        """Best estimate of the next prompt's size (server figure + estimate of what came after)."""
        if self.known_count and self.known_count <= len(self.messages):
            return self.known_tokens + estimate_tokens(self.messages[self.known_count :])
        return estimate_tokens(self.wire())
