"""TodoWrite: replace the todo list of the loop that calls it (the whole list each time).

The list lives with the conversation, not on disk: a sub-agent's list is its own, and the session's
is what `/status` shows. The output shows the list as a checklist, so the model sees what it just
wrote. At most one item should be in progress; more is allowed but called out in the output.
"""

from __future__ import annotations

from typing import Literal
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ConfigDict, Field

from openmono.conversation._base import ConversationTool, Turn
from openmono.loop import AgentLoop

TodoStatus = Literal["pending", "in_progress", "completed"]
_MARK = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


class TodoItem(BaseModel):
    """One entry of the agent's todo list (TodoWrite's `todos[]`)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="What to do, imperative form.")
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    active_form: str = Field(
        min_length=1, description="Present continuous form shown while it runs ('Running tests')."
    )


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(max_length=100, description="The complete, updated todo list.")


class TodoWrite(ConversationTool[Params]):
    name = "TodoWrite"
    description = (
        "Write the todo list for the current task (the whole list, replacing the previous one). "
        "Each item: content, status (pending | in_progress | completed), active_form. Keep "
        "exactly one item in_progress while working."
    )
    read_only = True  # touches no file: the list lives in the conversation
    kind = "think"
    params_model = Params

    def __init__(self) -> None:
        self._lists: WeakKeyDictionary[AgentLoop, list[TodoItem]] = WeakKeyDictionary()

    def todos(self, loop: AgentLoop) -> list[TodoItem]:
        """The list `loop` wrote last (empty before its first TodoWrite)."""
        return list(self._lists.get(loop, ()))

    async def run(self, params: Params, turn: Turn) -> str:
        todos = params.todos
        if turn.loop is not None:
            self._lists[turn.loop] = list(todos)
        counts = {s: sum(1 for t in todos if t.status == s) for s in _MARK}
        lines = [f"{_MARK[t.status]} {t.content}" for t in todos]
        summary = (
            f"Todo list updated: {len(todos)} items ({counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending)"
        )
        if counts["in_progress"] > 1:
            summary += "; note: more than one item is in progress"
        return "\n".join([summary, *lines])
