"""Guards against a model that is stuck: repeated tool calls and degenerate streamed text.

`DoomLoopGuard` watches the sequence of call signatures (name + canonical arguments) of a turn: the
same signature 3 times in a row, or the last 2..4 signatures repeated as a cycle 3 times, trips it.
It answers in tiers: the first trip warns (the call runs, the model reads the warning with its
result), the second blocks the call (an error result), the third stops the turn.
`RepetitionDetector` watches streamed text (the visible answer and the thinking, one detector each):
the tail made of one short unit repeated over and over (`the the the ...`, a line printed forty
times) trips it, and so does a longer period: the same paragraph (80+ characters, blank-line
separated, whitespace folded) written 3 times in the reply. It looks only every few dozen
characters, and for paragraphs only when a new one has ended.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

SAME_CALL_LIMIT = 3
CYCLE_REPEATS = 3
CYCLE_PERIODS = (2, 3, 4)
PARAGRAPH_MIN_CHARS = 80
PARAGRAPH_REPEATS = 3
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def call_signature(name: str, arguments: str) -> str:
    """Name + arguments with keys sorted, so formatting differences do not hide a repeat."""
    try:
        args: Any = json.loads(arguments)
        canon = json.dumps(args, sort_keys=True, separators=(",", ":"))
    except ValueError:
        canon = arguments.strip()
    return f"{name}:{canon}"


Tier = Literal["warn", "block", "stop"]
TIERS: tuple[Tier, ...] = ("warn", "block", "stop")


@dataclass(frozen=True)
class GuardVerdict:
    """What the guard does about one repeated call, and what the model is told."""

    tier: Tier
    message: str


class DoomLoopGuard:
    """Trips when the model keeps issuing the same call, or the same short cycle of calls."""

    def __init__(self) -> None:
        self.history: list[str] = []
        self.trips = 0

    @property
    def stopped(self) -> bool:
        return self.trips >= len(TIERS)

    def check(self, signature: str) -> GuardVerdict | None:
        """Record one call; a verdict when it repeats what came before, else None."""
        self.history.append(signature)
        h = self.history
        if len(h) >= SAME_CALL_LIMIT and len(set(h[-SAME_CALL_LIMIT:])) == 1:
            return self._trip(
                f"you have made the same call {SAME_CALL_LIMIT} times in a row with the same "
                "arguments"
            )
        for period in CYCLE_PERIODS:
            span = period * CYCLE_REPEATS
            if len(h) >= span:
                unit = h[-period:]
                if len(set(unit)) > 1 and h[-span:] == unit * CYCLE_REPEATS:
                    return self._trip(
                        f"you are repeating the same cycle of {period} calls "
                        f"({CYCLE_REPEATS} times now)"
                    )
        return None

    def _trip(self, what: str) -> GuardVerdict:
        # History is kept: the same call right after a trip trips again, one tier higher.
        self.trips += 1
        tier = TIERS[min(self.trips, len(TIERS)) - 1]
        advice = (
            "Repeating it will not give a different result. Use what you already have, try a "
            "different approach, or answer the user and explain what is blocking you."
        )
        if tier == "warn":
            return GuardVerdict(tier, f"Warning: {what}. {advice} The next repeat will not be run.")
        if tier == "block":
            return GuardVerdict(tier, f"Not run: {what}. Do not call it again. {advice}")
        return GuardVerdict(tier, f"Stopped: {what}; the turn ends here.")


class RepetitionDetector:
    """Spots degenerate streamed text: one unit (1..200 chars) repeated to fill the tail."""

    def __init__(self, min_span: int = 400, max_unit: int = 200, check_every: int = 48) -> None:
        self.min_span = min_span
        self.max_unit = max_unit
        self.check_every = check_every
        self._text: list[str] = []
        self._size = 0
        self._since = 0
        self._breaks = 0

    def feed(self, chunk: str) -> bool:
        """Add streamed text; True once the text has degenerated into repetition."""
        self._text.append(chunk)
        self._size += len(chunk)
        self._since += len(chunk)
        if self._since < self.check_every or self._size < self.min_span:
            return False
        self._since = 0
        text = "".join(self._text)
        self._text = [text]
        if is_repetitive(text[-(self.min_span + self.max_unit) :], self.min_span, self.max_unit):
            return True
        breaks = len(_PARAGRAPH_BREAK.findall(text))
        if breaks == self._breaks:
            return False
        self._breaks = breaks
        return repeated_paragraph(text)


def repeated_paragraph(text: str) -> bool:
    """True when one finished paragraph of 80+ characters stands 3 times in `text`."""
    finished = _PARAGRAPH_BREAK.split(text)[:-1]
    counts = Counter(" ".join(p.split()) for p in finished)
    return any(n >= PARAGRAPH_REPEATS and len(p) >= PARAGRAPH_MIN_CHARS for p, n in counts.items())


def is_repetitive(text: str, min_span: int, max_unit: int) -> bool:
    """True when the last `min_span` characters are one unit of ≤ `max_unit` chars, repeated."""
    if len(text) < min_span:
        return False
    window = text[-min_span:]
    for unit_len in range(1, max_unit + 1):
        # Needs at least 4 repeats of the unit; a long unit repeated twice is normal prose.
        if unit_len * 4 > min_span:
            break
        unit = window[-unit_len:]
        reps = -(-min_span // unit_len)
        if (unit * reps)[-min_span:] == window:
            return not unit.isspace()
    return False
