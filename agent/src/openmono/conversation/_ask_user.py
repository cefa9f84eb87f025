"""AskUser: put a question to the user and wait for the answer.

The surface asks (the interactive prompt, or an ACP request to the editor) through the calling
loop's `Asker`, and the user's answer is this call's result. A run with nobody to ask answers that
the model should assume and say so, rather than wait.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono.conversation._base import ConversationTool, Turn
from openmono.loop import Question

NOBODY = (
    "No user is available (non-interactive run). Make a reasonable assumption, state it, and "
    "continue."
)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="The question, self-contained.")
    options: list[str] | None = Field(
        default=None, max_length=10, description="Suggested answers to choose from (optional)."
    )


class AskUser(ConversationTool[Params]):
    name = "AskUser"
    description = (
        "Ask the user a question when you need a decision or information only they have. "
        "Offer options when the choices are known."
    )
    read_only = True
    params_model = Params

    async def run(self, params: Params, turn: Turn) -> str:
        asker = turn.loop.dispatcher.asker if turn.loop is not None else None
        if asker is None:
            return NOBODY
        options = [o for o in (params.options or []) if o.strip()]
        answer = await asker(Question(params.question, options))
        return f"The user answered: {answer}"
