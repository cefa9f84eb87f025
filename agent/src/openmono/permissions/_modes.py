"""Modes: `agent` may change things; `plan` and `ask` are read-only, checked when a call executes.

The tool list the model sees may be filtered too, but a model can still name a hidden tool (or
recover one from text), so the guard sits in the dispatch pipeline, not in the prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from openmono.permissions._bash import is_safe_read_only

Mode = Literal["agent", "plan", "ask"]
MODES: tuple[Mode, ...] = ("agent", "plan", "ask")

# Tools that change nothing outside the conversation itself.
CONVERSATION_TOOLS = frozenset({"TodoWrite", "AskUser", "EnterPlanMode", "ExitPlanMode"})


def mode_denial(mode: Mode, tool: str, args: Mapping[str, Any], read_only: bool) -> str | None:
    """Why `mode` forbids this call, or None when it may run."""
    if mode == "agent" or read_only or tool in CONVERSATION_TOOLS:
        return None
    if tool == "Bash" and is_safe_read_only(str(args.get("command", ""))):
        return None
    if mode == "plan":
        return (
            f"{tool} is not available in plan mode (read-only). Finish the plan, then call "
            "ExitPlanMode so the user can approve it before anything is changed."
        )
    return (
        f"{tool} is not available in ask mode (read-only: answer questions, change nothing). "
        "Describe the change instead of making it."
    )
