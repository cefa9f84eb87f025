"""The tools a loop offers: the union of its toolsets, in the order they were installed.

The catalog holds no tools of its own: it asks its toolsets (`_extensions.Toolset`) each time, so
an MCP server that reconnects with other tools is seen at the next request. The first toolset
that offers a name serves it. In plan and ask modes the model is shown only tools that can run
there; the mode guard in dispatch enforces it whatever the model calls.
"""

from __future__ import annotations

from collections.abc import Iterable

from openmono_contracts.toolfacts import ToolFacts

from openmono.llm import ToolSpec
from openmono.loop._extensions import Keep, Narrowed, OfferedTool, Toolset
from openmono.permissions import Mode, offered_in

UNKNOWN = ToolFacts()


class ToolCatalog:
    """Name -> the toolset serving it, its spec and facts; unknown names are simply absent."""

    def __init__(self, toolsets: Iterable[Toolset] = ()) -> None:
        self.toolsets: list[Toolset] = list(toolsets)

    def install(self, toolset: Toolset) -> None:
        """Offer one more group of tools (MCP servers' tools, `Agent`, `Playbook`)."""
        self.toolsets.append(toolset)

    def uninstall(self, toolset: Toolset) -> None:
        if toolset in self.toolsets:
            self.toolsets.remove(toolset)

    def narrowed(self, keep: Keep) -> ToolCatalog:
        """The same toolsets seen through `keep(name, facts)` (a sub-agent's, a playbook's)."""
        return ToolCatalog(Narrowed(t, keep) for t in self.toolsets)

    def entries(self) -> dict[str, tuple[OfferedTool, Toolset]]:
        found: dict[str, tuple[OfferedTool, Toolset]] = {}
        for toolset in self.toolsets:
            for name, tool in toolset.tools().items():
                found.setdefault(name, (tool, toolset))
        return found

    def lookup(self, name: str) -> tuple[OfferedTool, Toolset] | None:
        """The tool called `name` and the toolset that runs it, or None."""
        for toolset in self.toolsets:
            tool = toolset.tools().get(name)
            if tool is not None:
                return tool, toolset
        return None

    @property
    def specs(self) -> dict[str, ToolSpec]:
        return {name: tool.spec for name, (tool, _) in self.entries().items()}

    @property
    def facts(self) -> dict[str, ToolFacts]:
        return {name: tool.facts for name, (tool, _) in self.entries().items()}

    def facts_of(self, name: str) -> ToolFacts:
        """What `name` declares; an unknown name gets the cautious defaults."""
        found = self.lookup(name)
        return found[0].facts if found is not None else UNKNOWN

    def for_mode(self, mode: Mode) -> list[ToolSpec]:
        """What the model sees in `mode` (read-only modes: read-only tools, shell, conversation),
        each spec marked with whether the tool writes, which arguments are paths and whether it
        runs commands (the prompted protocol reads all three)."""
        shown = [t for t, _ in self.entries().values() if offered_in(mode, t.facts)]
        return [_marked(t.spec, t.facts) for t in shown]


def _marked(spec: ToolSpec, facts: ToolFacts) -> ToolSpec:
    """`spec` marked with what its facts say (the spec itself when it already is)."""
    marks = {"writes": facts.writes, "paths": facts.path_params, "shell": bool(facts.shell_param)}
    if all(getattr(spec, key) == value for key, value in marks.items()):
        return spec
    return spec.model_copy(update=marks)
