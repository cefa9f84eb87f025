"""A model-written summary of the conversation before its last turn (`/compact`, `/checkpoint`)."""

from __future__ import annotations

from contextlib import aclosing

from openmono.llm import ChatMessage, LLMError, Model, TextDelta
from openmono.loop import Conversation

SUMMARY_PROMPT = (
    "Summarize the conversation below for your own later use: the user's goals and constraints, "
    "what was done (files read and changed, commands run and their outcome), decisions, open "
    "problems and the next steps. Keep file paths, names and error messages exact. Plain text, "
    "at most 300 words."
)
INPUT_CHARS = 60_000


def last_turn_start(messages: list[ChatMessage]) -> int:
    """Index of the last user message (the tail a summary keeps verbatim); 0 when none."""
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    return starts[-1] if starts else 0


def transcript(messages: list[ChatMessage]) -> str:
    parts = []
    for m in messages:
        calls = "; ".join(f"{c.name}({c.arguments[:300]})" for c in m.tool_calls)
        text = (m.content or "")[:4000]
        parts.append(f"{m.role.upper()}: {text}" + (f"\nCALLS: {calls}" if calls else ""))
    return "\n\n".join(parts)[-INPUT_CHARS:]


async def summarize(model: Model, messages: list[ChatMessage], focus: str = "") -> str:
    """The model's summary of `messages` ('' if it could not give one)."""
    prompt = SUMMARY_PROMPT + (f" Focus on: {focus}." if focus else "")
    request = [
        ChatMessage(role="system", content=prompt),
        ChatMessage(role="user", content=transcript(messages)),
    ]
    parts: list[str] = []
    try:
        async with aclosing(model.stream(request, None, max_tokens=600)) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
    except LLMError:
        return ""
    return "".join(parts).strip()


async def summarize_history(
    conv: Conversation, model: Model, label: str, focus: str = ""
) -> tuple[int, str] | None:
    """Replace everything before the last turn with the model's summary.

    Returns (messages replaced, summary), or None when there is too little history or the model
    gave no summary (the conversation is then unchanged)."""
    cut = last_turn_start(conv.messages)
    if cut < 1:
        return None
    summary = await summarize(model, conv.messages[:cut], focus)
    if not summary:
        return None
    conv.replace_prefix(cut, f"[{label}: summary of the earlier conversation]\n{summary}")
    return cut, summary
