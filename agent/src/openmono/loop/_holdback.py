"""The visible answer while a reply streams, without the markup of tool calls written as text.

Small models (the bundled SmolLM2 among them) write their calls into the answer, and the client
recovers them only once the reply is whole (`RecoveredText`). Shown as it came, the markup went to
the user: `openmono -p` printed `<tool_call>{...}</tool_call>` on stdout, as if it were the answer.
So the text is shown as it streams up to the first call marker, and held from there (a chunk that
ends in what could be the start of a marker holds that tail until the next chunk settles it). At
the end the rest is shown: the recovered text past what was shown when calls were taken out, else
what was held, as the model wrote it: nothing is lost, at worst it comes late.
"""

from __future__ import annotations

from openmono.llm import TAG_MARKERS

# A fenced ```json call is recovered too but not held: code blocks in answers would then wait for
# the end of every reply.
MARKERS = TAG_MARKERS


class CallHoldback:
    def __init__(self) -> None:
        self._shown: list[str] = []
        self._held = ""
        self._holding = False

    def feed(self, text: str) -> str:
        """What of `text` (and of the text held before it) may be shown now."""
        if self._holding:
            self._held += text
            return ""
        pending = self._held + text
        found = [i for i in (pending.find(m) for m in MARKERS) if i >= 0]
        if found:
            self._holding = True
            cut = min(found)
        else:
            cut = len(pending) - _open_prefix(pending)
        self._held = pending[cut:]
        self._shown.append(pending[:cut])
        return pending[:cut]

    def finish(self, recovered: str | None) -> str:
        """What is left to show once the stream ended; `recovered` is the text without the
        calls' markup, when calls were recovered from it."""
        held, self._held = self._held, ""
        if recovered is None:
            return held
        shown = "".join(self._shown)
        base = shown.rstrip()
        if not recovered.startswith(base):
            return held  # the recovery changed what was already shown: show the text as written
        rest = recovered[len(base) :]
        spaces = shown[len(base) :]
        return rest[len(spaces) :] if rest.startswith(spaces) else rest.lstrip()


def _open_prefix(text: str) -> int:
    """The length of the longest tail of `text` that a marker starts with (0 if none)."""
    best = 0
    for marker in MARKERS:
        for n in range(min(len(marker) - 1, len(text)), best, -1):
            if text.endswith(marker[:n]):
                best = n
                break
    return best
