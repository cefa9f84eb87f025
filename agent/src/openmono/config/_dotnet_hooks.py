"""Hooks written in the .NET OpenMono's format, read as ours (or refused with our equivalent).

    "preToolUse": [{"if": {"tool": "Bash", "inputContains": "rm "}, "run": "log {{tool_name}}"}]

becomes

    "pre_tool_use": [{"matcher": "Bash", "input": "rm ", "command": "log \"$OPENMONO_TOOL_NAME\""}]

Events: `sessionStart`, `preToolUse`, `postToolUse`, `stop`. `if.tool` is a tool name (`*` and
`mcp__*`-style wildcards allowed), `if.inputContains` a substring of the call's JSON arguments.
`{{tool_name}}` and `{{tool_input}}` become the environment variables the runner sets for tool
events. Anything else (another event, condition, field or placeholder) is refused with a message
that shows the nearest equivalent in this format, never silently dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from openmono.config._errors import SettingInvalid

EVENTS = {
    "sessionStart": "session_start",
    "preToolUse": "pre_tool_use",
    "postToolUse": "post_tool_use",
    "stop": "stop",
}
TOOL_EVENTS = {"pre_tool_use", "post_tool_use"}
PLACEHOLDERS = {
    "tool_name": '"$OPENMONO_TOOL_NAME"',
    "tool_input": '"$OPENMONO_TOOL_INPUT"',
}
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
OURS = (
    'here a hook is {"command": "...", "matcher": "<regex over the tool name>", '
    '"input": "<text in the arguments JSON, or re:REGEX>", "timeout_s": 30}; the call\'s JSON is '
    "on stdin, and $OPENMONO_TOOL_NAME / $OPENMONO_TOOL_INPUT hold the tool and its arguments"
)


def _matcher(tool: str) -> str:
    if tool in ("", "*"):
        return "*"
    return ".*".join(re.escape(part) for part in tool.split("*"))


def _command(run: str, event: str, where: str) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS or event not in TOOL_EVENTS:
            raise SettingInvalid(
                f"{where}: {{{{{name}}}}} has no value for {event} hooks here; {OURS}"
            )
        return PLACEHOLDERS[name]

    return _PLACEHOLDER.sub(fill, run)


def _entry(raw: Any, event: str, where: str) -> Any:
    if not isinstance(raw, dict) or "run" not in raw:
        return raw  # our own format (or garbage our own validation reports)
    condition = raw.get("if") or {}
    extra = sorted(set(raw) - {"if", "run", "timeout_s"})
    unknown = (
        sorted(set(condition) - {"tool", "inputContains"})
        if isinstance(condition, dict)
        else ["if"]
    )
    equivalent: dict[str, Any] = {"command": raw["run"]}
    if isinstance(condition, dict):
        if condition.get("tool"):
            equivalent["matcher"] = _matcher(str(condition["tool"]))
        if condition.get("inputContains"):
            equivalent["input"] = str(condition["inputContains"])
    if extra or unknown:
        what = ", ".join([*extra, *(f"if.{k}" for k in unknown)])
        raise SettingInvalid(
            f"{where}: {what} has no equivalent here; {OURS}. Nearest equivalent of this hook: "
            f"{json.dumps({event: [equivalent]})}"
        )
    equivalent["command"] = _command(str(raw["run"]), event, where)
    if "timeout_s" in raw:
        equivalent["timeout_s"] = raw["timeout_s"]
    return equivalent


def from_dotnet(data: Any) -> Any:
    """`hooks` settings with .NET-style events and entries rewritten into ours."""
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for key, entries in data.items():
        key = str(key)
        event = EVENTS.get(key) or key
        if key not in EVENTS and key[:1].islower() and any(c.isupper() for c in key):
            known = ", ".join(EVENTS)
            raise SettingInvalid(f"hooks.{key}: no such event here (known: {known}); {OURS}")
        if isinstance(entries, list):
            entries = [_entry(e, event, f"hooks.{key}[{i}]") for i, e in enumerate(entries)]
        if event in out and isinstance(out[event], list) and isinstance(entries, list):
            out[event] = [*out[event], *entries]
        else:
            out[event] = entries
    return out
