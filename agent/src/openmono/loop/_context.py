"""Step 2: keep the conversation inside the context window.

Above 65 % of `n_ctx` a *checkpoint* asks the model for a summary of the older part; above 80 % (or
after the server said the prompt does not fit) a *compaction* works without the model: it keeps the
last 4 turns, drops what came before for a short digest, and evicts big tool outputs. Either way the
cutoff never falls between an assistant's tool calls and their results (an orphaned call or result
is rejected by chat templates), and the user's current request is always kept verbatim.
"""

from __future__ import annotations

from collections import Counter

from openmono.llm import ChatMessage, LLMError, Model, TextDelta, estimate_tokens
from openmono.loop._closing import closing_stream
from openmono.loop._state import Conversation

CHECKPOINT_RATIO = 0.65
COMPACT_RATIO = 0.80
KEEP_TURNS = 4
# After a checkpoint, system prompt + tools + kept tail use at most this share of the context.
TAIL_RATIO = 0.4
EVICT_OVER_CHARS = 2000
EVICT_OVER_CHARS_FORCED = 600
SUMMARY_INPUT_CHARS = 60_000

SUMMARY_PROMPT = (
    "Summarize the conversation below for your own later use: the user's goals and constraints, "
    "what was done (files read and changed, commands run and their outcome), decisions, open "
    "problems and the next steps. Keep file paths, names and error messages exact. Plain text, "
    "at most 300 words."
)


def safe_cutoff(messages: list[ChatMessage], index: int) -> int:
    """The nearest index ≤ `index` where a new prefix can end without splitting a tool exchange."""
    index = max(0, min(index, len(messages)))
    while 0 < index < len(messages) and messages[index].role == "tool":
        index -= 1
    return index


def turn_starts(messages: list[ChatMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if m.role == "user"]


def current_request(messages: list[ChatMessage]) -> str | None:
    starts = turn_starts(messages)
    return messages[starts[-1]].content if starts else None


def _digest(dropped: list[ChatMessage]) -> str:
    asks = [m.content.strip()[:200] for m in dropped if m.role == "user" and m.content]
    tools = Counter(c.name for m in dropped for c in m.tool_calls)
    lines = [f"[Earlier conversation compacted: {len(dropped)} messages removed to save context.]"]
    if asks:
        lines.append("Earlier user requests: " + " | ".join(asks[-6:]))
    if tools:
        lines.append("Tools used: " + ", ".join(f"{n} ×{k}" for n, k in tools.most_common()))
    return "\n".join(lines)


def _with_request(text: str, dropped: list[ChatMessage], kept: list[ChatMessage]) -> str:
    """Append the current request when its message was among the dropped ones."""
    request = current_request(dropped)
    if request and not turn_starts(kept):
        text += f"\n\n[The user's current request, verbatim]\n{request}"
    return text


def evict_outputs(messages: list[ChatMessage], over: int, spare_last: int) -> int:
    """Shorten tool outputs longer than `over` chars (but the last `spare_last` messages)."""
    evicted = 0
    end = max(0, len(messages) - spare_last)
    for i in range(end):
        m = messages[i]
        if m.role == "tool" and m.content and len(m.content) > over:
            head = m.content[: over // 3]
            note = (
                f"\n[... output evicted to save context: {len(m.content)} chars; rerun to see it]"
            )
            messages[i] = m.model_copy(update={"content": head + note})
            evicted += 1
    return evicted


def compact(conv: Conversation, n_ctx: int, overhead: int, force: bool = False) -> str | None:
    """Shrink the conversation without the model; a notice saying what was done, or None."""
    msgs = conv.messages
    target = int(n_ctx * (0.5 if force else 0.6))
    starts = turn_starts(msgs)
    cut = starts[-KEEP_TURNS] if len(starts) > KEEP_TURNS else 0
    # Still too big (one long turn): move the cutoff forward through the turn, safely.
    tail_budget = max(target - overhead, n_ctx // 10)
    while estimate_tokens(msgs[cut:]) > tail_budget and cut < len(msgs) - 2:
        nxt = cut + 1
        while nxt < len(msgs) - 2 and msgs[nxt].role == "tool":
            nxt += 1
        cut = nxt
    cut = safe_cutoff(msgs, cut)
    done: list[str] = []
    if cut > 0:
        dropped, kept = msgs[:cut], msgs[cut:]
        conv.replace_prefix(cut, _with_request(_digest(dropped), dropped, kept))
        done.append(f"dropped {cut} older messages")
    evicted = evict_outputs(
        conv.messages, EVICT_OVER_CHARS_FORCED if force else EVICT_OVER_CHARS, 0 if force else 2
    )
    if evicted:
        conv.known_tokens, conv.known_count = 0, 0
        conv.generation += 1
        done.append(f"evicted {evicted} big tool outputs")
    return f"Context compacted: {', '.join(done)}." if done else None


def _transcript(messages: list[ChatMessage]) -> str:
    parts = []
    for m in messages:
        text = (m.content or "")[:4000]
        calls = "; ".join(f"{c.name}({c.arguments[:300]})" for c in m.tool_calls)
        parts.append(f"{m.role.upper()}: {text}" + (f"\nCALLS: {calls}" if calls else ""))
    joined = "\n\n".join(parts)
    return joined[-SUMMARY_INPUT_CHARS:]


async def checkpoint(conv: Conversation, model: Model, n_ctx: int, overhead: int) -> str | None:
    """Summarise the older part with the model; falls back to `compact` if the model fails."""
    msgs = conv.messages
    budget = max(int(n_ctx * TAIL_RATIO) - overhead, n_ctx // 10)
    cut = len(msgs)
    while cut > 0 and estimate_tokens(msgs[cut - 1 :]) <= budget:
        cut -= 1
    cut = safe_cutoff(msgs, cut)
    if cut <= 1:
        return None
    request = [
        ChatMessage(role="system", content=SUMMARY_PROMPT),
        ChatMessage(role="user", content=_transcript(msgs[:cut])),
    ]
    parts: list[str] = []
    try:
        async with closing_stream(model.stream(request, None, max_tokens=600)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
    except LLMError:
        return compact(conv, n_ctx, overhead)
    summary = "".join(parts).strip()
    if not summary:
        return compact(conv, n_ctx, overhead)
    dropped, kept = msgs[:cut], msgs[cut:]
    text = f"[Checkpoint: summary of the earlier conversation]\n{summary}"
    conv.replace_prefix(cut, _with_request(text, dropped, kept))
    return f"Checkpoint: summarised {cut} older messages."
