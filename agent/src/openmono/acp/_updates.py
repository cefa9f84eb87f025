"""Loop events → ACP `session/update` payloads, and a recorded session → the same updates.

Mapping: text → `agent_message_chunk`; reasoning → `agent_thought_chunk`; a permission ask or the
start of a call → `tool_call` (status `pending`, then `in_progress` via `tool_call_update`); a
finished call → `tool_call_update` with status `completed` / `failed` and its output as content; a
successful TodoWrite → `plan`; a mode change → `current_mode_update`. `replay` turns a saved
conversation into the updates a client needs to show it again (`session/load`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_current_mode
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)
from openmono_worker import get_tool

from openmono.loop import (
    LoopEvent,
    Notice,
    PermissionAsked,
    ReasoningChunk,
    TextChunk,
    ToolCatalog,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from openmono.sessions import SessionMessage

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | CurrentModeUpdate
    | AvailableCommandsUpdate
)
OUTPUT_CAP = 20_000
# A tool's ACP kind is one of its declared facts; a session asks its own catalog (MCP tools and
# `Agent` included), and without one the worker's tools answer.
KindOf = Callable[[str], ToolKind]


def builtin_kind(name: str) -> ToolKind:
    """The kind a worker tool declares ("other" for any other name)."""
    tool = get_tool(name)
    return tool.kind if tool is not None else "other"


def kinds_of(catalog: ToolCatalog) -> KindOf:
    """The kinds a session's tools declare."""
    return lambda name: catalog.facts_of(name).kind


STATUSES = {"pending", "in_progress", "completed"}


def title_of(name: str, args: dict[str, Any]) -> str:
    """A short human title: the tool and what it touches."""
    for key in ("command", "file_path", "path", "pattern", "query", "url", "description"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{name}: {value[:120]}"
    return name


def _locations(args: dict[str, Any]) -> list[ToolCallLocation] | None:
    path = args.get("file_path") or args.get("path")
    return [ToolCallLocation(path=path)] if isinstance(path, str) and path else None


def plan_from_todos(todos: Any) -> AgentPlanUpdate | None:
    if not isinstance(todos, list):
        return None
    entries = []
    for item in todos:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            status = item.get("status")
            entries.append(
                plan_entry(
                    item["content"],
                    status=status if status in STATUSES else "pending",
                )
            )
    return update_plan(entries)


class Translator:
    """Turns one session's loop events into updates; remembers which calls were announced."""

    def __init__(self, kind_of: KindOf = builtin_kind) -> None:
        self.kind_of = kind_of
        self._announced: set[str] = set()
        self._args: dict[str, dict[str, Any]] = {}

    def start(self, call_id: str, name: str, args: dict[str, Any], status: str) -> Update:
        self._args[call_id] = args
        if call_id in self._announced:
            return update_tool_call(call_id, status="in_progress")
        self._announced.add(call_id)
        return start_tool_call(
            call_id,
            title_of(name, args),
            kind=self.kind_of(name),
            status=status,  # type: ignore[arg-type]
            locations=_locations(args),
            raw_input=args,
        )

    def updates(self, event: LoopEvent) -> Iterator[Update]:
        if isinstance(event, TextChunk):
            yield update_agent_message_text(event.text)
        elif isinstance(event, ReasoningChunk):
            yield update_agent_thought_text(event.text)
        elif isinstance(event, PermissionAsked):
            yield self.start(event.call_id, event.name, event.arguments, "pending")
        elif isinstance(event, ToolStarted):
            yield self.start(event.call_id, event.name, event.arguments, "in_progress")
        elif isinstance(event, ToolFinished):
            yield from self._finished(event)
        elif isinstance(event, Notice) and event.level != "info":
            yield update_agent_thought_text(f"[{event.level}] {event.message}\n")
        elif isinstance(event, TurnDone) and event.reason not in ("stop", "cancelled"):
            yield update_agent_message_text(
                f"\n[stopped: {event.reason}{': ' + event.error if event.error else ''}]"
            )

    def _finished(self, event: ToolFinished) -> Iterator[Update]:
        text = event.output if event.ok else f"{event.error or 'failed'}\n{event.output}".strip()
        content = [tool_content(text_block(text[:OUTPUT_CAP]))] if text else None
        status: ToolCallStatus = "completed" if event.ok else "failed"
        if event.call_id not in self._announced:
            self._announced.add(event.call_id)
            yield start_tool_call(
                event.call_id, event.name, kind=self.kind_of(event.name),
                status=status, content=content,
            )  # fmt: skip
        else:
            yield update_tool_call(
                event.call_id,
                status=status,
                content=content,
                raw_output={"ok": event.ok, "error": event.error, "denied": event.denied},
            )
        if event.name == "TodoWrite" and event.ok:
            plan = plan_from_todos(self._args.get(event.call_id, {}).get("todos"))
            if plan is not None:
                yield plan


def mode_update(mode: str) -> CurrentModeUpdate:
    return update_current_mode(mode)


def replay(messages: list[SessionMessage], kind_of: KindOf = builtin_kind) -> Iterator[Update]:
    """The updates that show a saved conversation again (summaries and markers skipped)."""
    names: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        if m.role == "system" or getattr(m, "summary", False):
            continue
        if m.role == "user" and m.content:
            yield update_user_message_text(m.content)
        elif m.role == "assistant":
            if m.reasoning_content:
                yield update_agent_thought_text(m.reasoning_content)
            if m.content:
                yield update_agent_message_text(m.content)
            for call in m.tool_calls:
                try:
                    args = json.loads(call.arguments or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                names[call.id] = (call.name, args)
                yield start_tool_call(
                    call.id, title_of(call.name, args), kind=kind_of(call.name),
                    status="pending", raw_input=args, locations=_locations(args),
                )  # fmt: skip
        elif m.role == "tool" and m.tool_call_id:
            status: ToolCallStatus = "failed" if m.is_error else "completed"
            text = (m.content or "")[:OUTPUT_CAP]
            yield update_tool_call(
                m.tool_call_id,
                status=status,
                content=[tool_content(text_block(text))] if text else None,
            )
