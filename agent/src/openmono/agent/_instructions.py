"""A session's instructions (`openmono.instructions`), plugged into the loop's extension points.

- the system prompt gets their blocks (notes, always rules, the skills index) after the base;
- the worker's toolset is seen through `WithInstructions` (notes and rules ride in results; a
  loaded skill's folder is readable), and `Skill` is one more toolset;
- the `Agent` tool offers the custom agents as types beside the built-in ones;
- a user's message is prepared before the loop sees it (`/skill`, `/command`, `@rule`,
  `/rules`, `/skills`), the same on every surface, since every surface calls `Agent.run_turn`.
Trust comes from `openmono.config.workspace_trusted`: an untrusted workspace brings notes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openmono.config import Settings, workspace_trusted
from openmono.instructions import (
    Attachments,
    CustomAgent,
    Instructions,
    Prepared,
    SkillTool,
    WithInstructions,
    prepare,
    skill_content,
)
from openmono.loop import Conversation, Toolset
from openmono.permissions import PermissionEngine
from openmono.subagents import AGENT_TYPES, AgentType

DEFAULT_MAX_TURNS = 20


def load_instructions(
    settings: Settings, workspace: Path, home: Path | None = None
) -> Instructions:
    """Everything `workspace` and the user's folders hold (the project's only when trusted)."""
    return Instructions.load(
        workspace,
        settings.data_dir,
        home or Path.home(),
        trusted=workspace_trusted(workspace, settings.data_dir),
        reserved_agents=frozenset(AGENT_TYPES),
    )


def load_notices(ins: Instructions) -> list[str]:
    """What a session says once at its start: what trust left out, what could not be used."""
    notices = []
    if ins.untrusted:
        notices.append(
            "Not loaded, the workspace is not trusted: " + "; ".join(ins.untrusted)
            + " (`openmono config trust` in the workspace trusts it)."
        )  # fmt: skip
    problems = len(ins.problems) + len(ins.skills.problems) + len(ins.other_problems)
    if problems:
        notices.append(
            f"{problems} rule, skill, agent or command file(s) could not be used in full: "
            "/rules and /skills say which and why."
        )
    return notices


def custom_type(agent: CustomAgent, ins: Instructions) -> AgentType:
    """A custom agent as a sub-agent type: its tools, its body (and preloaded skills) as the
    instructions, agent mode (its tool list is what limits it, as in Claude Code)."""
    parts = [agent.instructions]
    for name in agent.skills:
        skill = ins.skills.skills.get(name)
        if skill is not None:
            parts.append(skill_content(skill, ins.for_model(skill.folder)))
    return AgentType(
        agent.name,
        agent.description,
        lambda _facts: True,
        "agent",
        agent.max_turns or DEFAULT_MAX_TURNS,
        "\n\n".join(p for p in parts if p),
        model=agent.model,
        names=agent.tools,
    )


@dataclass
class SessionInstructions:
    """One session's instructions and the pieces that use them."""

    ins: Instructions
    attachments: Attachments
    skills: SkillTool

    @classmethod
    def of(
        cls, ins: Instructions, session_id: str, conv: Conversation, permissions: PermissionEngine
    ) -> SessionInstructions:
        attachments = Attachments(ins, session_id, lambda: conv.generation)
        return cls(ins, attachments, SkillTool(ins, permissions))

    def worker(self, tools: Toolset) -> Toolset:
        """The worker's toolset, with what applies to the files a call touches."""
        return WithInstructions(tools, self.attachments, self.skills.read_roots)

    def custom_types(self) -> list[AgentType]:
        return [custom_type(a, self.ins) for a in self.ins.agents.values()]

    def prepare(self, text: str) -> Prepared:
        """`text` as the model should get it (or a reply without the model)."""
        prepared = prepare(self.ins, text, self.attachments.delivered())
        if prepared.skill is not None:
            self.skills.open(self.ins.skills.skills[prepared.skill])
        return prepared
