"""Effects: what an agent-side tool asks the loop to do, carried in `ToolResult.effect`.

Some tools do not change the workspace but the conversation (AskUser, TodoWrite, EnterPlanMode,
ExitPlanMode) or the agent's memory (MemorySave). They run through the same executor as every
other tool, so they validate their arguments like any tool, and their result carries a typed effect
the loop acts on (ask the user, keep the todo list, switch mode, reload memory). The union is
discriminated by `kind`, so an effect survives the JSON trip through Celery unchanged.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

TodoStatus = Literal["pending", "in_progress", "completed"]
MemoryType = Literal["user", "feedback", "project", "reference"]


class TodoItem(BaseModel):
    """One entry of the agent's todo list (TodoWrite's `todos[]`)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="What to do, imperative form.")
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    active_form: str = Field(
        min_length=1, description="Present continuous form shown while it runs ('Running tests')."
    )


class AskUserEffect(BaseModel):
    """The loop must put `question` to the user and send the answer back as the tool's output."""

    kind: Literal["ask_user"] = "ask_user"
    question: str
    options: list[str] = Field(default_factory=list)


class TodosEffect(BaseModel):
    """The loop replaces its todo list with `todos` (the whole list, not a diff)."""

    kind: Literal["todos"] = "todos"
    todos: list[TodoItem]


class PlanModeEffect(BaseModel):
    """The loop enters (`active=True`) or leaves plan mode (read-only tools only)."""

    kind: Literal["plan_mode"] = "plan_mode"
    active: bool
    reason: str | None = None


class MemorySavedEffect(BaseModel):
    """A memory file was written; the loop reloads memory into the next system prompt."""

    kind: Literal["memory_saved"] = "memory_saved"
    name: str
    type: MemoryType
    path: str


ToolEffect = Annotated[
    AskUserEffect | TodosEffect | PlanModeEffect | MemorySavedEffect,
    Field(discriminator="kind"),
]
