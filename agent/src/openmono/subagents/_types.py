"""The sub-agent types the `Agent` tool offers, with their tool allow-lists and turn caps.

An allow-list holds tool names and shell-style wildcards (`*` every tool, `mcp__*` every MCP tool,
`mcp__git__*` one server's). It is intersected with what the parent has, so a child never gets a
tool its parent lacks; tools that declare `subagents = False` (`Agent` itself, the plan-mode
switches) are never handed down (no nesting, no mode changes behind the parent's back). `mode`
is the child's own mode guard: read-only types run in `ask` mode, so even a shell command that
writes is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from openmono_contracts.toolfacts import ToolFacts

from openmono.permissions import Mode
from openmono.subagents._errors import SubagentError

READ_TOOLS = ("FileRead", "Glob", "Grep", "ListDirectory")
WEB_TOOLS = ("WebSearch", "WebFetch")
RESOURCE_TOOLS = ("ListMcpResources", "ReadMcpResource")
# Read-only code intelligence (language servers, the Python index): for whoever reads code.
CODE_TOOLS = ("Lsp", "CodeIntel")


@dataclass(frozen=True)
class AgentType:
    """One kind of sub-agent."""

    name: str
    description: str
    tools: tuple[str, ...]
    mode: Mode
    max_turns: int
    instructions: str

    def allows(self, tool: str, facts: ToolFacts) -> bool:
        return facts.subagents and any(fnmatchcase(tool, p) for p in self.tools)

    def select(self, parent_tools: Mapping[str, ToolFacts]) -> list[str]:
        """The parent's tools (name → facts) this type may use, in the parent's order."""
        return [t for t, facts in parent_tools.items() if self.allows(t, facts)]


AGENT_TYPES: dict[str, AgentType] = {
    t.name: t
    for t in (
        AgentType(
            "general-purpose",
            "Any multi-step task, with every tool the parent has.",
            ("*",),
            "agent",
            20,
            "Complete the task, then reply with a concise report of what you found or did.",
        ),
        AgentType(
            "Explore",
            "Read-only investigation: find files, read code, answer a question about the project.",
            (*READ_TOOLS, *CODE_TOOLS, "Bash", *WEB_TOOLS, *RESOURCE_TOOLS, "mcp__*"),
            "ask",
            15,
            "You only investigate; you cannot change anything. Search and read (CodeIntel and "
            "Lsp answer definitions, references and dependents better than grep), then reply "
            "with the answer and the exact file paths and lines that support it.",
        ),
        AgentType(
            "Plan",
            "Read-only design: study the code and return a step-by-step implementation plan.",
            (*READ_TOOLS, "Bash", *WEB_TOOLS, *RESOURCE_TOOLS, "TodoWrite"),
            "ask",
            15,
            "You only plan; you cannot change anything. Read what you need, then reply with a "
            "numbered implementation plan naming the files to change.",
        ),
        AgentType(
            "Coder",
            "Make a well-specified code change and run the relevant tests.",
            (*READ_TOOLS, "FileWrite", "FileEdit", "ApplyPatch", "Bash", "TodoWrite"),
            "agent",
            30,
            "Make the change asked for, keep it minimal, run the relevant tests, then reply with "
            "what you changed and the test result.",
        ),
        AgentType(
            "Verify",
            "Check a change: run the tests and linters, read the diff, report problems.",
            (*READ_TOOLS, *CODE_TOOLS, "Bash"),
            "agent",
            15,
            "Do not edit files. Run the tests and checks, read the relevant code (CodeIntel "
            "diagnostics and blast-radius show type errors and what a change reaches), and reply "
            "with a verdict (pass/fail) and the evidence.",
        ),
    )
}


def get_type(name: str | None) -> AgentType:
    key = name or "general-purpose"
    found = AGENT_TYPES.get(key) or next(
        (t for k, t in AGENT_TYPES.items() if k.lower() == key.lower()), None
    )
    if found is None:
        raise SubagentError(f"unknown agent_type {name!r}; choose one of {', '.join(AGENT_TYPES)}")
    return found
