"""The tools the loop offers: specs for the model plus each tool's facts.

Specs and facts come from the worker's registry (`openmono_worker.tool_specs`), so the schema the
model sees is the one the worker validates against, and what the loop knows about a tool is what
the tool declares (`openmono_contracts.toolfacts`). In plan and ask modes the model is shown only
tools that can run there; the mode guard in dispatch enforces it whatever the model calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from openmono_contracts.toolfacts import ToolFacts
from openmono_worker import tool_specs

from openmono.llm import ToolSpec
from openmono.permissions import Mode, offered_in

UNKNOWN = ToolFacts()


class ToolCatalog:
    """Name → spec and facts; unknown names are simply absent."""

    def __init__(self, specs: Iterable[Mapping[str, Any]]) -> None:
        self.specs: dict[str, ToolSpec] = {}
        self.facts: dict[str, ToolFacts] = {}
        for raw in specs:
            name = str(raw["name"])
            self.specs[name] = ToolSpec(
                name=name,
                description=str(raw.get("description", "")),
                parameters=dict(raw.get("parameters") or {"type": "object", "properties": {}}),
            )
            self.facts[name] = ToolFacts.model_validate(raw.get("facts") or {})

    @classmethod
    def from_worker(cls, exclude: Iterable[str] = ()) -> ToolCatalog:
        skip = set(exclude)
        return cls(s for s in tool_specs() if s["name"] not in skip)

    def add(self, spec: ToolSpec, facts: ToolFacts) -> None:
        """Offer one more tool (an agent-side one: an MCP tool, `Agent`); replaces a same name."""
        self.specs[spec.name] = spec
        self.facts[spec.name] = facts

    def remove(self, name: str) -> None:
        self.specs.pop(name, None)
        self.facts.pop(name, None)

    def facts_of(self, name: str) -> ToolFacts:
        """What `name` declares; an unknown name gets the cautious defaults."""
        return self.facts.get(name, UNKNOWN)

    def for_mode(self, mode: Mode) -> list[ToolSpec]:
        """What the model sees in `mode` (read-only modes: read-only tools, shell, conversation)."""
        return [s for n, s in self.specs.items() if offered_in(mode, self.facts[n])]
