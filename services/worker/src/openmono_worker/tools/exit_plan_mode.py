"""ExitPlanMode: leave plan mode so the plan can be carried out (the loop may ask the user first).

Like EnterPlanMode it only returns a `plan_mode` effect (active=False); the loop switches the mode.
"""

from __future__ import annotations

from openmono_contracts import PlanModeEffect
from pydantic import BaseModel, ConfigDict

from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExitPlanMode(Tool[Params]):
    name = "ExitPlanMode"
    description = (
        "Leave plan mode once the plan is written out in your reply; tools that change files "
        "are allowed again."
    )
    read_only = True
    conversation = True
    plan_switch = "exit"
    kind = "switch_mode"
    subagents = False
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(
            "Leaving plan mode requested; write tools are allowed again once the loop confirms.",
            effect=PlanModeEffect(active=False),
        )


TOOL = ExitPlanMode()
