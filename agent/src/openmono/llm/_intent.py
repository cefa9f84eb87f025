"""What the prompted protocol shows for what the request asks (`llm.tool_intent`, issue 42).

A small model copies the worked example nearest its request and calls what it saw called: the
270M Gemma wrote `FileWrite` in every read task of the eval, after a `FileWrite` example. When the
user's latest message only reads (`permissions.read_only_task`, the test the safety floor uses),
tools that write (`ToolSpec.writes`) are left out of what the model sees:

    off       every offered tool in the tool block, the grammar and the examples
    examples  the worked examples show only tools that do not write; block and grammar keep all
    narrow    the tool block and the grammar too offer only tools that do not write, so the model
              cannot call a writer in that turn (the shell stays: a read-only command is a read,
              and the floor refuses one that is not)

Any other request (a change, a run, an answer such as "yes, go ahead") sees every tool, exactly
as under `off`. Which setting won, measured on two families: docs/agent-eval.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from openmono.llm._messages import ChatMessage, ToolSpec
from openmono.permissions import read_only_task

ToolIntent = Literal["off", "examples", "narrow"]


@dataclass(frozen=True)
class Shown:
    """The tools for the block and grammar, and those the worked examples may use."""

    block: list[ToolSpec]
    examples: list[ToolSpec]
    read_only: bool


def latest_request(messages: Sequence[ChatMessage]) -> str | None:
    """The user's latest words (a tool result is a `tool` message, never a `user` one)."""
    for message in reversed(messages):
        if message.role == "user" and message.content:
            return message.content
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
    return Shown(readers if intent == "narrow" else every, readers, True)
