"""The sub-agent types the `Agent` tool offers, with the tools they get and their turn caps.

A type chooses its tools by what they declare (`openmono_contracts.toolfacts`), never by name: a
tool that reads files, one that writes them, the shell, the web, code intelligence. So a tool added
tomorrow (an MCP server's, a worker tool) goes to the types whose purpose it fits without anyone
editing a list. The choice is made among the parent's tools, so a child never gets a tool its
parent lacks; tools that declare `subagents = False` (`Agent` itself, the plan-mode switches) are
never handed down (no nesting, no mode changes behind the parent's back). `mode` is the child's own
mode guard: read-only types run in `ask` mode, so even a shell command that writes is refused.

A session may add types of its own beside these, never in place of one: custom agents a repository
or the user defines (`openmono.instructions`). Their files list tools by name (`names`: names and
shell-style wildcards, `mcp__*`), as the user wrote them; the same intersection applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from openmono_contracts.toolfacts import ToolFacts

from openmono.permissions import Mode
from openmono.subagents._errors import SubagentError

Choose = Callable[[ToolFacts], bool]


def reads(f: ToolFacts) -> bool:
    """Reads what it is pointed at (files, an MCP server's resources), no web, no code index."""
    return f.read_only and f.kind in ("read", "search") and not (f.web or f.code)


def reads_files(f: ToolFacts) -> bool:
    """Reads the workspace's files (it names paths in it)."""
    return reads(f) and bool(f.path_params)


def shell(f: ToolFacts) -> bool:
    return f.shell_param is not None


def plans(f: ToolFacts) -> bool:
    """A thinking aid kept in the conversation (the todo list)."""
    return f.conversation and f.kind == "think"


def investigates(f: ToolFacts) -> bool:
    """Anything that changes nothing, bar the conversation's own tools; and the shell."""
    return (f.read_only and not f.conversation) or shell(f)


@dataclass(frozen=True)
class AgentType:
    """One kind of sub-agent; `tools` says which of the parent's tools it gets, by their facts."""

    name: str
    description: str
    tools: Choose
    mode: Mode
    max_turns: int
    instructions: str
    # the model id its requests name (None: the parent's model); custom types may set one
    model: str | None = None
    # a custom type's own tool list, by name (None: `tools` chooses by facts)
    names: tuple[str, ...] | None = None

    def allows(self, tool: str, facts: ToolFacts) -> bool:
        if not facts.subagents:
            return False
        if self.names is not None:
            return any(fnmatchcase(tool, p) for p in self.names)
        return self.tools(facts)

    def select(self, parent_tools: Mapping[str, ToolFacts]) -> list[str]:
        """The parent's tools (name → facts) this type may use, in the parent's order."""
        return [t for t, facts in parent_tools.items() if self.allows(t, facts)]


AGENT_TYPES: dict[str, AgentType] = {
    t.name: t
    for t in (
        AgentType(
            "general-purpose",
            "Any multi-step task, with every tool the parent has.",
            lambda _f: True,
            "agent",
            20,
            "Complete the task, then reply with a concise report of what you found or did.",
        ),
        AgentType(
            "Explore",
            "Read-only investigation: find files, read code, answer a question about the project.",
            investigates,
            "ask",
            15,
            "You only investigate; you cannot change anything. Start from the repository map "
            "in your prompt (the files and definitions that matter most), then search and read "
            "(CodeIntel and Lsp answer definitions, references and dependents better than "
            "grep), then reply with the answer and the exact file paths and lines that support "
            "it.",
        ),
        AgentType(
            "Plan",
            "Read-only design: study the code and return a step-by-step implementation plan.",
            lambda f: reads(f) or f.web or shell(f) or plans(f),
            "ask",
            15,
            "You only plan; you cannot change anything. Read what you need, then reply with a "
            "numbered implementation plan naming the files to change.",
        ),
        AgentType(
            "Coder",
            "Make a well-specified code change and run the relevant tests.",
            lambda f: reads_files(f) or f.writes or shell(f) or plans(f),
            "agent",
            30,
            "Make the change asked for, keep it minimal, run the relevant tests, then reply with "
            "what you changed and the test result.",
        ),
        AgentType(
            "Verify",
            "Check a change: run the tests and linters, read the diff, report problems.",
            lambda f: reads_files(f) or f.code or shell(f),
            "agent",
            15,
            "Do not edit files. Run the tests and checks, read the relevant code (CodeIntel "
            "diagnostics and blast-radius show type errors and what a change reaches), and reply "
            "with a verdict (pass/fail) and the evidence.",
        ),
    )
}


def get_type(name: str | None, types: Mapping[str, AgentType] = AGENT_TYPES) -> AgentType:
    """The type called `name` (any case) among `types` (the built-in ones, or a session's)."""
    key = name or "general-purpose"
    found = types.get(key) or next((t for k, t in types.items() if k.lower() == key.lower()), None)
    if found is None:
        raise SubagentError(f"unknown agent_type {name!r}; choose one of {', '.join(types)}")
    return found
