"""How a call and a result look as text in the prompted protocol (one place for both shapes).

    <tool_call>
    {"name": "FileRead", "arguments": {"file_path": "a.py"}}
    </tool_call>

    <tool_response name="FileRead">
    ...the tool's output...
    </tool_response>

The call is the Hermes shape the text-call recovery reads; the grammar (`_grammar`) allows exactly
this layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
RESULT_CLOSE = "</tool_response>"


def call_text(name: str, arguments: str | Mapping[str, Any]) -> str:
    """One call as the model is asked to write it (and as earlier calls are shown to it)."""
    if isinstance(arguments, str):
        try:
            parsed: Any = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            parsed = arguments  # shown as it was sent: a string the model can see was wrong
    else:
        parsed = dict(arguments)
    body = json.dumps({"name": name, "arguments": parsed}, ensure_ascii=False)
    return f"{CALL_OPEN}\n{body}\n{CALL_CLOSE}"


def result_text(name: str | None, content: str) -> str:
    """One tool result, marked so that it cannot be mistaken for the user's words."""
    label = f' name="{name}"' if name else ""
    return f"<tool_response{label}>\n{content}\n{RESULT_CLOSE}"
