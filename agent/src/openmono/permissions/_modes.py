"""Modes: `agent` may change things; `plan` and `ask` are read-only, checked when a call executes.

The tool list the model sees may be filtered too (`offered_in`), but a model can still name a
hidden tool (or recover one from text), so the guard sits in the dispatch pipeline, not in the
prompt. Both read the tool's declared facts: read-only and conversation tools run everywhere; a
shell tool runs its read-only commands; a plan switch is offered only where it switches something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openmono_contracts.toolfacts import ToolFacts

from openmono.config import Mode
from openmono.permissions._bash import is_safe_read_only


def offered_in(mode: Mode, facts: ToolFacts) -> bool:
    """Is a tool with these facts shown to the model in `mode`?"""
    if facts.plan_switch == "exit" and mode != "plan":
        return False
    if facts.plan_switch == "enter" and mode == "plan":
        return False
    return mode == "agent" or facts.read_only or facts.conversation or bool(facts.shell_param)


def mode_denial(mode: Mode, tool: str, args: Mapping[str, Any], facts: ToolFacts) -> str | None:
    """Why `mode` forbids this call, or None when it may run."""
    if mode == "agent" or facts.read_only or facts.conversation:
        return None
    if facts.shell_param and is_safe_read_only(str(args.get(facts.shell_param, ""))):
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
