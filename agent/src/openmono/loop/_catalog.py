"""The tools the loop offers: specs for the model plus the flags dispatch needs.

Specs come from the worker's registry (`openmono_worker.tool_specs`), so the schema the model
sees is the one the worker validates against. In plan and ask modes the model is shown only tools
that can run there; the mode guard in dispatch enforces it whatever the model calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from openmono_worker import tool_specs

from openmono.llm import ToolSpec
from openmono.permissions import CONVERSATION_TOOLS, Mode


@dataclass(frozen=True)
class ToolFlags:
    read_only: bool
    concurrency_safe: bool


class ToolCatalog:
    """Name → spec and flags; unknown names are simply absent."""

    def __init__(self, specs: Iterable[Mapping[str, Any]]) -> None:
        self.specs: dict[str, ToolSpec] = {}
        self.flags: dict[str, ToolFlags] = {}
        for raw in specs:
            name = str(raw["name"])
            self.specs[name] = ToolSpec(
                name=name,
                description=str(raw.get("description", "")),
                parameters=dict(raw.get("parameters") or {"type": "object", "properties": {}}),
            )
            self.flags[name] = ToolFlags(
                read_only=bool(raw.get("read_only", False)),
                concurrency_safe=bool(raw.get("concurrency_safe", False)),
            )

    @classmethod
    def from_worker(cls, exclude: Iterable[str] = ()) -> ToolCatalog:
        skip = set(exclude)
        return cls(s for s in tool_specs() if s["name"] not in skip)

    def add(self, spec: ToolSpec, flags: ToolFlags) -> None:
        """Offer one more tool (an agent-side one: an MCP tool, `Agent`); replaces a same name."""
        self.specs[spec.name] = spec
        self.flags[spec.name] = flags

    def remove(self, name: str) -> None:
        self.specs.pop(name, None)
        self.flags.pop(name, None)

    def flags_of(self, name: str) -> ToolFlags:
        return self.flags.get(name, ToolFlags(read_only=False, concurrency_safe=False))

    def for_mode(self, mode: Mode) -> list[ToolSpec]:
        """What the model sees in `mode` (read-only modes: read-only tools, Bash, conversation)."""
        if mode == "agent":
            return [s for n, s in self.specs.items() if n != "ExitPlanMode"]
        keep = CONVERSATION_TOOLS | {"Bash"}
        return [
            s
            for n, s in self.specs.items()
            if (self.flags[n].read_only or n in keep)
            and not (n == "EnterPlanMode" and mode == "plan")
            and not (n == "ExitPlanMode" and mode == "ask")
        ]
