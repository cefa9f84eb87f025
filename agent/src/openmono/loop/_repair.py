"""Session repair on resume: make a saved conversation one the server accepts, and say what changed.

A session file can hold what an OpenAI-compatible server refuses with a 400: a tool call whose
result was never written (the process died mid-call), a result whose call is gone (a compaction or
a hand-edited file), an empty message, two user or two assistant messages in a row (a turn
interrupted before the model answered). `repair` fixes each, in one pass:

1. a call without a result gets an error result right after the results that did arrive;
2. a result without a call (or a second result for the same call) is dropped;
3. an empty user/assistant message (no text, no call) is dropped; an empty result says so;
4. two user or two assistant messages in a row are merged into one.

The file itself is left as it was (it is the record of what happened); the repair runs on every
resume and the surface shows its note.
"""

from __future__ import annotations

from dataclasses import dataclass

from openmono.llm import ChatMessage

MISSING_RESULT = (
    "Error: no result was recorded for this call (the session stopped before it finished); "
    "it may or may not have run. Check before repeating it."
)


@dataclass
class Repairs:
    """How many of each repair `repair` made."""

    missing_results: int = 0
    stray_results: int = 0
    empty: int = 0
    merged: int = 0

    def note(self) -> str | None:
        """One sentence for the user, or None when nothing needed repair."""
        parts = [
            (self.missing_results, "call without a result answered with an error",
             "calls without a result answered with an error"),
            (self.stray_results, "result without its call dropped",
             "results without their call dropped"),
            (self.empty, "empty message dropped", "empty messages dropped"),
            (self.merged, "message merged into the one before it (same role)",
             "messages merged into the one before them (same role)"),
        ]  # fmt: skip
        said = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
        return "Repaired the resumed session: " + "; ".join(said) + "." if said else None


def _empty(m: ChatMessage) -> bool:
    return not (m.content or "").strip() and not m.tool_calls


def _merge(first: ChatMessage, second: ChatMessage) -> ChatMessage:
    text = "\n\n".join(t for t in (first.content, second.content) if t and t.strip())
    thinking = "\n\n".join(t for t in (first.reasoning_content, second.reasoning_content) if t)
    return first.model_copy(
        update={
            "content": text or None,
            "reasoning_content": thinking or None,
            "tool_calls": [*first.tool_calls, *second.tool_calls],
        }
    )


def repair(messages: list[ChatMessage]) -> tuple[list[ChatMessage], Repairs]:
    """The conversation with the four repairs made (see the module docstring), and their count."""
    out: list[ChatMessage] = []
    done = Repairs()
    waiting: dict[str, str] = {}  # call id -> tool name, of the last assistant message

    def answer_missing() -> None:
        for call_id in waiting:
            out.append(ChatMessage(role="tool", content=MISSING_RESULT, tool_call_id=call_id))
            done.missing_results += 1
        waiting.clear()

    for message in messages:
        if message.role == "tool":
            if message.tool_call_id not in waiting:
                done.stray_results += 1
                continue
            waiting.pop(message.tool_call_id)
            if not (message.content or "").strip():
                message = message.model_copy(update={"content": "(the tool returned no output)"})
            out.append(message)
            continue
        answer_missing()
        if message.role in ("user", "assistant") and _empty(message):
            done.empty += 1
            continue
        if out and out[-1].role == message.role and message.role in ("user", "assistant"):
            out[-1] = _merge(out[-1], message)
            done.merged += 1
        else:
            out.append(message)
        if message.role == "assistant":
            waiting = {c.id: c.name for c in out[-1].tool_calls}
    answer_missing()
    return out, done
