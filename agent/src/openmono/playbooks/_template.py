"""Placeholders in playbook text: `{{parameters.X}}`, `{{state.X}}`, `{{constraints}}`,
`{{shell:COMMAND}}`.

`scan` finds them (the loader checks every one before anything runs); `render` fills them in.
A key that is not there is an error, never an empty string: a prompt that silently lost its input
is worse than a run that stops and says which key was missing. `{{state.X.y}}` reaches into a
JSON object a schema-validated step produced; a value that is not a string is shown as JSON.
Shell commands run through a callable the executor supplies (in the workspace, with a timeout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from openmono.playbooks._errors import TemplateError

PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}", re.S)
Kind = Literal["parameters", "state", "constraints", "shell"]
Shell = Callable[[str], Awaitable[str]]


@dataclass(frozen=True)
class Placeholder:
    kind: Kind
    key: str  # the parameter name, the state path, the shell command; "" for constraints
    raw: str


def scan(text: str) -> list[Placeholder]:
    """Every placeholder in `text`; raises `TemplateError` for one of no known kind."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        inner = match.group(1)
        if inner.startswith("shell:"):
            command = inner[len("shell:") :].strip()
            if not command:
                raise TemplateError(f"{match.group(0)!r} has no command")
            found.append(Placeholder("shell", command, match.group(0)))
            continue
        if inner == "constraints":
            found.append(Placeholder("constraints", "", match.group(0)))
            continue
        head, _, key = inner.partition(".")
        if head in ("parameters", "state") and key and " " not in key:
            kind: Kind = "parameters" if head == "parameters" else "state"
            found.append(Placeholder(kind, key, match.group(0)))
            continue
        raise TemplateError(
            f"unknown placeholder {match.group(0)!r} (known: {{{{parameters.NAME}}}}, "
            "{{state.KEY}}, {{constraints}}, {{shell:COMMAND}})"
        )
    return found


def shown(value: Any) -> str:
    """A value as it appears in a prompt."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def lookup_state(state: Mapping[str, Any], path: str) -> Any:
    head, *rest = path.split(".")
    if head not in state:
        known = ", ".join(sorted(state)) or "none yet"
        raise TemplateError(f"{{{{state.{path}}}}}: no state key {head!r} (state has: {known})")
    value = state[head]
    for i, part in enumerate(rest):
        if not isinstance(value, dict) or part not in value:
            where = ".".join([head, *rest[:i]])
            raise TemplateError(f"{{{{state.{path}}}}}: state.{where} has no key {part!r}")
        value = value[part]
    return value


async def render(
    text: str,
    *,
    parameters: Mapping[str, Any],
    state: Mapping[str, Any],
    constraints: str,
    shell: Shell | None,
) -> str:
    """`text` with every placeholder filled in (left to right; shell commands run in order)."""
    out: list[str] = []
    last = 0
    placeholders = {p.raw: p for p in scan(text)}
    for match in PLACEHOLDER.finditer(text):
        out.append(text[last : match.start()])
        last = match.end()
        p = placeholders[match.group(0)]
        if p.kind == "parameters":
            if p.key not in parameters:
                known = ", ".join(sorted(parameters)) or "none"
                raise TemplateError(f"{p.raw}: no parameter {p.key!r} (declared: {known})")
            out.append(shown(parameters[p.key]))
        elif p.kind == "state":
            out.append(shown(lookup_state(state, p.key)))
        elif p.kind == "constraints":
            out.append(constraints)
        else:
            if shell is None:
                raise TemplateError(f"{p.raw}: shell commands cannot run here")
            out.append(await shell(p.key))
    out.append(text[last:])
    return "".join(out)
