"""Tell a JSON text that was cut off from one that is merely wrong.

A call whose arguments end inside a string or with brackets still open was cut off (token limit,
dropped stream): it must be reported as truncated, never "fixed" and applied.
"""

from __future__ import annotations


def json_cut_off(text: str) -> bool:
    """True when `text` ends inside a string or with `{`/`[` left open."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_string or depth > 0
