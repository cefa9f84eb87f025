"""AskUser over ACP: the stable protocol has no question request, so a question with choices is put
as a `session/request_permission` whose options are the choices (plus "skip"); any client that
shows permission prompts can answer it. A free-text question offers "yes" / "no".
"""

from __future__ import annotations

import secrets
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from openmono.acp._live import LiveSession
from openmono.loop import Question

SKIP = "skip"
NO_ANSWER = "(the user skipped the question; make a reasonable assumption, say so, continue)"


def question_options(question: Question) -> list[PermissionOption]:
    choices = question.options or ["yes", "no"]
    options = [
        PermissionOption(option_id=f"choice-{i}", name=text, kind="allow_once")
        for i, text in enumerate(choices)
    ]
    options.append(PermissionOption(option_id=SKIP, name="Skip the question", kind="reject_once"))
    return options


async def ask_user(client: Any, live: LiveSession, question: Question) -> str:
    """The user's choice, or a note that there was none."""
    if client is None:
        return NO_ANSWER
    await live.flush()
    call = ToolCallUpdate(
        tool_call_id=f"question-{secrets.token_hex(4)}",
        title=question.text,
        kind="other",
        status="pending",
        raw_input={"question": question.text, "options": question.options},
    )
    response = await client.request_permission(
        session_id=live.session_id, tool_call=call, options=question_options(question)
    )
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith("choice-"):
        index = int(outcome.option_id.removeprefix("choice-"))
        choices = question.options or ["yes", "no"]
        if 0 <= index < len(choices):
            return choices[index]
    return NO_ANSWER
