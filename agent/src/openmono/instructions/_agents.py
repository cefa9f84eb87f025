"""Custom sub-agents: markdown files whose front matter names a sub-agent type for `Agent`.

    ---
    name: code-review
    description: Review a change for ... Use when asked to review a branch or files.
    tools: Bash, Read, Glob, Grep        # optional: every tool of the parent when absent
    model: inherit                       # optional
    max_turns: 12                        # optional (ours; the other formats have none)
    ---
    You are a code reviewer. ...         # the body: the sub-agent's own instructions

Folders, lowest first; a later one wins a name:
    ~/.agents/agents   .agents/agents   ~/.claude/agents   .claude/agents
    <data dir>/agents   .openmono/agents
`tools` may use Claude Code's names (`Read`, `Write`, `Edit`, `MultiEdit`, `LS`), which mean
ours (`FileRead`, `FileWrite`, `FileEdit`, `ListDirectory`); a permission pattern after a name
(`Bash(git:*)`) is dropped (our permission rules decide), and a tool we do not have is left out
with a note. The list is intersected with the parent's tools, as for the built-in types.
`model`: `inherit` and Claude Code's `sonnet`/`opus`/`haiku` mean the parent's model; any other
value is the model id the sub-agent's requests name. `skills` (Claude Code's) names skills whose
content the sub-agent starts with. A name of a built-in type is not taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono.instructions._errors import InstructionsError
from openmono.instructions._files import Origin, Problem, each_file, read_text
from openmono.instructions._frontmatter import parse, split_list

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
CLAUDE_TOOLS: dict[str, str | None] = {
    "Read": "FileRead",
    "Write": "FileWrite",
    "Edit": "FileEdit",
    "MultiEdit": "FileEdit",
    "LS": "ListDirectory",
    "NotebookEdit": None,
    "NotebookRead": None,
    "Task": None,  # a sub-agent never starts another
}
INHERIT = frozenset({"inherit", "sonnet", "opus", "haiku"})


@dataclass(frozen=True)
class CustomAgent:
    """One custom sub-agent type, read; `tools` None means all of the parent's."""

    name: str
    description: str
    instructions: str
    file: Path
    origin: Origin
    tools: tuple[str, ...] | None = None
    model: str | None = None
    max_turns: int | None = None
    # skills whose content the sub-agent starts with (Claude Code's `skills:`)
    skills: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def agent_dirs(workspace: Path, data_dir: Path, home: Path) -> list[tuple[Path, Origin]]:
    return [
        (home / ".agents" / "agents", "user"),
        (workspace / ".agents" / "agents", "project"),
        (home / ".claude" / "agents", "user"),
        (workspace / ".claude" / "agents", "project"),
        (data_dir / "agents", "user"),
        (workspace / ".openmono" / "agents", "project"),
    ]


def _tools(value: Any) -> tuple[tuple[str, ...] | None, list[str]]:
    if value is None:
        return None, []
    items = value if isinstance(value, list) else split_list(str(value))
    tools: list[str] = []
    notes: list[str] = []
    for item in (str(i).strip() for i in items):
        name, _, pattern = item.partition("(")
        name = name.strip()
        if pattern:
            notes.append(f"`{item}`: the pattern is not used (permission rules decide)")
        mapped = CLAUDE_TOOLS.get(name, name)
        if mapped is None:
            notes.append(f"`{name}`: no such tool here; left out")
        elif mapped and mapped not in tools:
            tools.append(mapped)
    return tuple(tools), notes


def _names(value: Any) -> list[str]:
    items = value if isinstance(value, list) else split_list(str(value)) if value else []
    return [str(i).strip() for i in items if str(i).strip()]


def load_agent(file: Path, origin: Origin) -> CustomAgent:
    """One agent file (raises `FrontMatterError`, `InstructionsError`, `OSError`)."""
    doc = parse(file, read_text(file).text)
    fields = doc.fields
    name = str(fields.get("name") or file.stem).strip()
    if not NAME.match(name):
        raise InstructionsError(f"{file}: the name {name!r} cannot be an agent type")
    description = " ".join(str(fields.get("description") or "").split())
    if not description:
        raise InstructionsError(f"{file}: no `description`, so nothing says when to use it")
    tools, notes = _tools(fields.get("tools"))
    model = str(fields.get("model") or "").strip() or None
    turns = fields.get("max_turns", fields.get("maxTurns"))
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 1):
        raise InstructionsError(f"{file}: `max_turns` must be a whole number above 0")
    return CustomAgent(
        name=name,
        description=description,
        instructions=doc.body,
        file=file,
        origin=origin,
        tools=tools,
        model=None if model is None or model.lower() in INHERIT else model,
        max_turns=turns,
        skills=tuple(_names(fields.get("skills"))),
        notes=tuple(notes),
    )


def load_agents(
    dirs: list[tuple[Path, Origin]], workspace: Path, reserved: frozenset[str]
) -> tuple[dict[str, CustomAgent], list[Problem]]:
    """Every agent of `dirs` (lowest precedence first); `reserved`: the built-in types' names."""
    agents: dict[str, CustomAgent] = {}
    problems: list[Problem] = []
    for agent in each_file(dirs, workspace, lambda d: sorted(d.glob("*.md")), load_agent, problems):
        if agent.name.lower() in reserved:
            problems.append(Problem(agent.file, f"{agent.name!r} is a built-in type; not loaded"))
            continue
        problems += [Problem(agent.file, n) for n in agent.notes]
        if agent.name in agents:
            problems.append(Problem(agents[agent.name].file, f"hidden by {agent.file}"))
        agents[agent.name] = agent
    return agents, problems
