"""Guards against a model that is stuck: repeated tool calls and degenerate streamed text.

`DoomLoopGuard` watches the sequence of call signatures (name + canonical arguments) of a turn: the
same signature 3 times in a row, or the last 2..4 signatures repeated as a cycle 3 times, trips it.
`RepetitionDetector` watches streamed text: the tail made of one short unit repeated over and over
(`the the the ...`, a line printed forty times) trips it; it looks only every few dozen characters.
"""

from __future__ import annotations

import json
from typing import Any

SAME_CALL_LIMIT = 3
CYCLE_REPEATS = 3
CYCLE_PERIODS = (2, 3, 4)


def call_signature(name: str, arguments: str) -> str:
    """Name + arguments with keys sorted, so formatting differences do not hide a repeat."""
    try:
        args: Any = json.loads(arguments)
        canon = json.dumps(args, sort_keys=True, separators=(",", ":"))
    except ValueError:
        canon = arguments.strip()
    return f"{name}:{canon}"


class DoomLoopGuard:
    """Trips when the model keeps issuing the same call, or the same short cycle of calls."""

    def __init__(self) -> None:
        self.history: list[str] = []
        self.trips = 0

    def check(self, signature: str) -> str | None:
        """Record one call; a message for the model when it repeats itself, else None."""
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

    def _trip(self, what: str) -> str:
        # History is kept: the same call right after a trip trips again (and ends the turn).
        self.trips += 1
        return (
            f"Stopped: {what}. Repeating it will not give a different result. Do not call it "
            "again; use what you already have, try a different approach, or answer the user "
            "and explain what is blocking you."
        )


class RepetitionDetector:
    """Spots degenerate streamed text: one unit (1..200 chars) repeated to fill the tail."""

    def __init__(self, min_span: int = 400, max_unit: int = 200, check_every: int = 48) -> None:
        self.min_span = min_span
        self.max_unit = max_unit
        self.check_every = check_every
        self._text: list[str] = []
        self._size = 0
        self._since = 0

    def feed(self, chunk: str) -> bool:
        """Add streamed text; True once the text has degenerated into repetition."""
        self._text.append(chunk)
        self._size += len(chunk)
        self._since += len(chunk)
        if self._since < self.check_every or self._size < self.min_span:
            return False
        self._since = 0
        tail = "".join(self._text)[-(self.min_span + self.max_unit) :]
        return is_repetitive(tail, self.min_span, self.max_unit)


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
