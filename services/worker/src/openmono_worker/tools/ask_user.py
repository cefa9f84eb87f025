"""AskUser: put a question to the user and wait for the answer.

The tool itself only validates and hands the question back as an `ask_user` effect: the loop asks
(interactive prompt, or an ACP request to the editor), then sends the user's answer to the model as
this call's result. A run with nobody to ask answers with an error that says so. The output here is
what the model would see if a loop did not handle the effect.
"""

from __future__ import annotations

from openmono_contracts import AskUserEffect
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="The question, self-contained.")
    options: list[str] | None = Field(
        default=None, max_length=10, description="Suggested answers to choose from (optional)."
    )


class AskUser(Tool[Params]):
    name = "AskUser"
    description = (
        "Ask the user a question when you need a decision or information only they have. "
        "Offer options when the choices are known."
    )
    read_only = True
    conversation = True
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        options = [o for o in (params.options or []) if o.strip()]
        text = f"Question for the user: {params.question}"
        if options:
            text += "\nOptions: " + " | ".join(options)
        effect = AskUserEffect(question=params.question, options=options)
        return ToolOutcome(text, effect=effect)


TOOL = AskUser()
