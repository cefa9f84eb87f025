"""EnterPlanMode and ExitPlanMode: switch the calling loop into plan mode (read-only tools only)
and out of it.

The mode guard enforces the mode on every call (docs/architecture.md §8: the pipeline), so
switching it here is what makes it true; leaving plan mode has already been approved by the user
when the call runs (the pipeline's mode step asks). Neither is offered to a sub-agent (no mode
changes behind the parent's back).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono.conversation._base import ConversationTool, Turn
from openmono.conversation._errors import ConversationError
from openmono.loop import Notice
from openmono.permissions import Mode


class EnterParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, description="Why planning first is needed.")


class ExitParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _switch(turn: Turn, mode: Mode) -> None:
    if turn.loop is None:
        raise ConversationError("the mode can only change inside a turn of the conversation")
    turn.loop.set_mode(mode)
    turn.emit(Notice(message=f"Mode: {turn.loop.mode}"))


class EnterPlanMode(ConversationTool[EnterParams]):
    name = "EnterPlanMode"
    description = (
        "Enter plan mode: only read-only tools are allowed until ExitPlanMode. Use it to "
        "investigate and write a plan before changing anything."
    )
    read_only = True
    plan_switch = "enter"
    kind = "switch_mode"
    subagents = False
    params_model = EnterParams

    async def run(self, params: EnterParams, turn: Turn) -> str:
        _switch(turn, "plan")
        return f"Plan mode is on ({params.reason}): only read-only tools run until ExitPlanMode."


class ExitPlanMode(ConversationTool[ExitParams]):
    name = "ExitPlanMode"
    description = (
        "Leave plan mode once the plan is written out in your reply; tools that change files "
        "are allowed again."
    )
    read_only = True
    plan_switch = "exit"
    kind = "switch_mode"
    subagents = False
    params_model = ExitParams

    async def run(self, params: ExitParams, turn: Turn) -> str:
        _switch(turn, "agent")
        return "Plan mode is off: tools that change files are allowed again."
