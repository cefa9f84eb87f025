"""The conversation tools as one `Toolset`, run in the agent beside `Agent` and `Playbook`.

AskUser, TodoWrite, EnterPlanMode, ExitPlanMode and MemorySave change the conversation, not the
workspace: the question goes to the user, the list and the mode belong to the loop, memory goes
into the next system prompt. So they run where the conversation is, on the loop that called them
(`openmono.loop.dispatching_loop`: a sub-agent's own loop inside its parent's call), and no worker
is asked. They validate their arguments like any tool; an invalid call is one `invalid_params`
result that names the parameter to fix, in the worker's words.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import format_validation_error
from pydantic import ValidationError

from openmono.conversation._ask_user import AskUser
from openmono.conversation._base import ConversationTool, Turn
from openmono.conversation._errors import ConversationError
from openmono.conversation._memory_save import MemorySave
from openmono.conversation._plan_mode import EnterPlanMode, ExitPlanMode
from openmono.conversation._todo_write import TodoItem, TodoWrite
from openmono.loop import AgentLoop, EventSink, OfferedTool, dispatching_loop


class ConversationTools:
    """The `Toolset` of the conversation tools; `user_memory` is where user-scope memory goes."""

    def __init__(self, user_memory: Path) -> None:
        self._todo = TodoWrite()
        tools: list[ConversationTool[Any]] = [
            AskUser(), EnterPlanMode(), ExitPlanMode(), MemorySave(user_memory), self._todo,
        ]  # fmt: skip
        self._tools = {t.name: t for t in tools}
        self._offered = {t.name: t.offered() for t in tools}

    def todos(self, loop: AgentLoop) -> list[TodoItem]:
        """The todo list `loop` keeps (what its last TodoWrite wrote)."""
        return self._todo.todos(loop)

    # -- the Toolset protocol -----------------------------------------------------------------
    def tools(self) -> Mapping[str, OfferedTool]:
        return self._offered

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        started = time.perf_counter()

        def result(ok: bool, output: str = "", **failure: str) -> ToolResult:
            elapsed = round((time.perf_counter() - started) * 1000.0, 3)
            return ToolResult(
                call_id=request.call_id, ok=ok, output=output, elapsed_ms=elapsed, **failure
            )

        tool = self._tools.get(request.tool)
        if tool is None:
            error = f"unknown tool {request.tool!r}; known tools: {', '.join(self._tools)}"
            return result(False, error=error, error_kind="unknown_tool")
        try:
            params = tool.params_model.model_validate(request.params)
        except ValidationError as exc:
            error = format_validation_error(tool.name, exc)
            return result(False, error=error, error_kind="invalid_params")
        try:
            output = await tool.run(params, Turn(request, emit, dispatching_loop()))
        except ConversationError as exc:
            return result(False, error=str(exc))
        return result(True, output)
