"""EnterPlanMode: switch the session to plan mode (read-only tools only) to investigate and plan.

The switch happens in the loop, which acts on the `plan_mode` effect; the loop also enforces the
mode when each call executes (DESIGN.md §8), so saying it here is not what makes it true.
"""

from __future__ import annotations

from openmono_contracts import PlanModeEffect
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, description="Why planning first is needed.")


class EnterPlanMode(Tool[Params]):
    name = "EnterPlanMode"
    description = (
        "Enter plan mode: only read-only tools are allowed until ExitPlanMode. Use it to "
        "investigate and write a plan before changing anything."
    )
    read_only = True
    conversation = True
    plan_switch = "enter"
    kind = "switch_mode"
    subagents = False
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(
            f"Plan mode requested ({params.reason}). Only read-only tools run until ExitPlanMode.",
            effect=PlanModeEffect(active=True, reason=params.reason),
        )


TOOL = EnterPlanMode()
