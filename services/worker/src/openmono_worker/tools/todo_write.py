"""TodoWrite: replace the agent's todo list (the whole list each time).

The list lives in the loop, not on disk: the result carries a `todos` effect with the new list and
the output shows it as a checklist, so the model sees what it just wrote. At most one item should be
in progress; more is allowed but called out in the output.
"""

from __future__ import annotations

from openmono_contracts import TodoItem, TodosEffect
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome

_MARK = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(max_length=100, description="The complete, updated todo list.")


class TodoWrite(Tool[Params]):
    name = "TodoWrite"
    description = (
        "Write the todo list for the current task (the whole list, replacing the previous one). "
        "Each item: content, status (pending | in_progress | completed), active_form. Keep "
        "exactly one item in_progress while working."
    )
    read_only = True  # touches no file: the list lives in the conversation
    conversation = True
    kind = "think"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        todos = params.todos
        counts = {s: sum(1 for t in todos if t.status == s) for s in _MARK}
        lines = [f"{_MARK[t.status]} {t.content}" for t in todos]
        summary = (
            f"Todo list updated: {len(todos)} items ({counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending)"
        )
        if counts["in_progress"] > 1:
            summary += "; note: more than one item is in progress"
        return ToolOutcome("\n".join([summary, *lines]), effect=TodosEffect(todos=todos))


TOOL = TodoWrite()
