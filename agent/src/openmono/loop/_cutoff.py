"""Step 3b: a reply the output limit cut off is completed, not ended or dropped.

`finish_reason: length` with no tool call after the text (an answer cut mid-sentence, or thinking
that ran out of room), or with a tool call whose arguments were cut: the loop asks for the rest
with the partial reply and one instruction appended (never recorded), and joins what comes back:
text is appended where it stopped; a cut call is replaced by the call the model sends again.
At most `CONTINUE_LIMIT` times per reply; after that a cut call is answered with its error as
before (it is never applied half-written). A length finish with only complete calls is trusted
(small servers report `length` next to whole calls).
"""

from __future__ import annotations

from openmono.llm import ChatMessage
from openmono.loop._stream import Reply

CONTINUE_LIMIT = 2

TEXT_CUT = (
    "[Your reply was cut off by the output limit. Continue exactly where it stopped, without "
    "repeating anything you already wrote.]"
)


def is_cut_off(reply: Reply) -> bool:
    """Did the output limit cut this reply short in a way worth asking the rest of?"""
    if reply.finish_reason != "length" or reply.degenerate:
        return False
    if any(c.truncated for c in reply.calls):
        return True
    return not reply.calls


def continuation(reply: Reply) -> list[ChatMessage]:
    """The messages appended (for one request only) to ask for the rest of `reply`."""
    cut = [c for c in reply.calls if c.truncated]
    whole = [c for c in reply.calls if not c.truncated]
    partial = ChatMessage(
        role="assistant",
        content=reply.text,
        reasoning_content=reply.reasoning or None,
    )
    if not cut:
        return [partial, ChatMessage(role="user", content=TEXT_CUT, from_loop=True)]
    names = ", ".join(c.name or "tool" for c in cut)
    kept = f" Your other calls ({', '.join(c.name for c in whole)}) arrived whole." if whole else ""
    ask = (
        f"[Your {names} call was cut off by the output limit before its arguments were "
        "complete, so it was not run. Send that call again, complete, and nothing else; if it "
        f"writes a long file, write the first part and append the rest with FileEdit.{kept}]"
    )
    return [partial, ChatMessage(role="user", content=ask, from_loop=True)]


def join(reply: Reply, more: Reply) -> None:
    """Append `more` (the rest) to `reply`: text and thinking go on, cut calls are replaced."""
    reply.text_parts.extend(more.text_parts)
    reply.reasoning_parts.extend(more.reasoning_parts)
    reply.calls = [c for c in reply.calls if not c.truncated] + more.calls
    reply.finish_reason = more.finish_reason
    reply.usage = more.usage or reply.usage
    reply.degenerate = more.degenerate
    reply.finished_at = more.finished_at or reply.finished_at
