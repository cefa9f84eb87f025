"""What the prompted protocol shows for what the request asks (`llm.tool_intent`, issue 42).

A small model copies the worked example nearest its request and calls what it saw called: the
270M Gemma wrote `FileWrite` in every read task of the eval, after a `FileWrite` example. When the
user's latest message only reads (`permissions.read_only_task`, the test the safety floor uses),
tools that write (`ToolSpec.writes`) are left out of what the model sees:

    off       every offered tool in the tool block, the grammar and the examples
    narrow    the tool block, the grammar and the worked examples offer only tools that do not
              write, so the model cannot call a writer in that turn (the shell stays: a read-only
              command is a read, and the floor refuses one that is not)

Any other request (a change, a run, an answer such as "yes, go ahead") sees every tool, exactly
as under `off`. Measured on two families (docs/agent-eval.md); a third setting, writers left out of
the examples alone, was not measured in time and is not offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from openmono.llm._messages import ChatMessage, ToolSpec
from openmono.permissions import read_only_task

ToolIntent = Literal["off", "narrow"]


@dataclass(frozen=True)
class Shown:
    """The tools for the block and grammar, and those the worked examples may use (the same
    under both settings; apart so that the examples can be chosen on their own)."""

    block: list[ToolSpec]
    examples: list[ToolSpec]
    read_only: bool


def latest_request(messages: Sequence[ChatMessage]) -> str | None:
    """The user's latest words (a tool result is a `tool` message, never a `user` one; the
    loop's own instructions are passed over: a continuation's "send that call again, ... append
    the rest with FileEdit" is not the user asking for a change)."""
    at = request_at(messages)
    return None if at is None else messages[at].content


def request_at(messages: Sequence[ChatMessage]) -> int | None:
    """Where the user's latest words are (`latest_request`): the turn is what follows."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role == "user" and message.content and not message.from_loop:
            return i
    return None


def shown_tools(tools: Sequence[ToolSpec], request: str | None, intent: ToolIntent) -> Shown:
    """What the model is shown of `tools` for `request` under `intent` (module docstring)."""
    every = list(tools)
    read_only = intent != "off" and request is not None and read_only_task(request)
    if not read_only:
        return Shown(every, every, False)
    readers = [t for t in every if not t.writes]
    if not readers:  # nothing but writers: leave them all, the floor still refuses the write
        return Shown(every, every, False)
    return Shown(readers, readers, True)
