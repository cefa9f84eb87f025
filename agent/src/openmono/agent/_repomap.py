"""The repository map in the session's system prompt: asked of the worker, refreshed per turn.

The worker holds the workspace, so it computes the map (the `RepoMap` tool, never offered to
the model: `openmono_contracts.repomap`); the agent asks through its executor before each user
turn, with what is in play: the files the session's tool calls named (their path parameters)
and the recent user text (the paths and identifiers it names). The worker answers from its
cache while nothing changed, so the system prompt (and llama-server's cached prefix) only
changes when the code or the focus did. A failed or slow answer keeps the last map.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from openmono_contracts import ToolRequest
from openmono_contracts.repomap import MAX_IN_PLAY_TEXT, REPO_MAP_TOOL, RepoMapParams
from openmono_contracts.toolfacts import ToolFacts

from openmono.executor import Executor
from openmono.llm import ChatMessage

AUTO_SHARE = 8  # of n_ctx: ~1k tokens at 8k
AUTO_MAX = 4096
REFRESH_TIMEOUT_S = 60.0
MAX_FILES_IN_PLAY = 50
HEADING = (
    "# Repository map\n"
    "The files and definitions that matter most here, ranked by how the code uses them and by "
    "what this conversation touches (line│ first line of the definition). Read a file before "
    "changing it."
)


def map_budget(setting: int | None, n_ctx: int) -> int:
    """Tokens for the map: the setting when given (0: off), else a share of the context."""
    if setting is not None:
        return setting
    return min(AUTO_MAX, max(0, n_ctx // AUTO_SHARE))


def files_in_play(
    messages: Sequence[ChatMessage], facts_of: Callable[[str], ToolFacts] | None
) -> list[str]:
    """Paths the tool calls named, most recent first."""
    if facts_of is None:
        return []
    found: list[str] = []
    for msg in reversed(messages):
        for call in msg.tool_calls:
            params = facts_of(call.name).path_params
            if not params:
                continue
            try:
                args = json.loads(call.arguments)
            except ValueError:
                continue
            if isinstance(args, dict):
                found += [v for k in params if isinstance(v := args.get(k), str) and v]
        if len(found) >= MAX_FILES_IN_PLAY:
            break
    return list(dict.fromkeys(found))[:MAX_FILES_IN_PLAY]


def text_in_play(messages: Sequence[ChatMessage], prompt: str) -> str:
    """The new prompt and the last user messages before it, cut to what the request takes."""
    earlier = [m.content or "" for m in reversed(messages) if m.role == "user"][:2]
    texts = [prompt, *earlier]
    return "\n".join(t for t in texts if t)[:MAX_IN_PLAY_TEXT]


class RepoMapSource:
    """One session's map: `refresh()` asks the worker, `block()` is the system prompt part."""

    def __init__(self, executor: Executor, workspace: Path, session_id: str, budget: int) -> None:
        self.executor = executor
        self.workspace = workspace
        self.session_id = session_id
        self.budget = budget
        self.text = ""
        self.error: str | None = None
        self.facts_of: Callable[[str], ToolFacts] | None = None
        self._calls = itertools.count(1)

    async def refresh(self, messages: Sequence[ChatMessage], prompt: str = "") -> bool:
        """Ask the worker for the map of what is in play now; True when it changed."""
        if self.budget <= 0:
            return False
        params = RepoMapParams(
            budget_tokens=self.budget,
            files=files_in_play(messages, self.facts_of),
            text=text_in_play(messages, prompt),
        )
        result = await self.executor.run(
            ToolRequest(
                tool=REPO_MAP_TOOL,
                params=params.model_dump(),
                call_id=f"repomap-{self.session_id}-{next(self._calls)}",
                session_id=self.session_id,
                workspace=str(self.workspace),
                timeout_s=REFRESH_TIMEOUT_S,
            )
        )
        if not result.ok:
            self.error = result.error or "the map could not be built"
            return False
        self.error = None
        changed = result.output != self.text
        self.text = result.output
        return changed

    def block(self) -> str | None:
        return f"{HEADING}\n{self.text}" if self.text else None
