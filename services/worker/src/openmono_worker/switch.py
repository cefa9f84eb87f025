"""Explicit on/off switches as people write them: 1/true/yes/on, 0/false/no/off, JSON booleans."""

from __future__ import annotations

TRUTHY = frozenset({"1", "true", "yes", "on"})
FALSY = frozenset({"0", "false", "no", "off"})


def parse_switch(value: object) -> bool | None:
    """True / False for a recognised switch, None for "not set" (None or an empty string).

    Anything else is an error rather than a silent guess: a typo in `OPENMONO_WEB_SEARCH` should
    not quietly decide where queries go.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in TRUTHY:
            return True
        if text in FALSY:
            return False
    raise ValueError(f"not an on/off switch: {value!r} (use true/false, 1/0, yes/no, on/off)")
