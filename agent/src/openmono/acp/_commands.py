"""The session's slash commands as ACP's `available_commands_update`.

An editor shows these when the user types `/` and sends `/name arguments` as the prompt's text;
the session prepares it like any message (`Agent.run_turn`): `/rules` and `/skills` are answered
without the model, a skill's `/NAME` gives the model its content, a custom command's its body.
"""

from __future__ import annotations

from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from openmono.agent import Agent


def _command(name: str, description: str, hint: str = "") -> AvailableCommand:
    given = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description or name, input=given)


def available_commands(agent: Agent) -> AvailableCommandsUpdate:
    """`/rules`, `/skills`, then the user-invocable skills and the custom commands (a skill
    hides a command of its name)."""
    commands = [
        _command("rules", "The rules found, which are active and why"),
        _command("skills", "The skills, custom commands and agents found"),
    ]
    found = agent.instructions
    if found is not None:
        skills = [s for s in found.ins.skills.skills.values() if s.user_invocable]
        commands += [_command(s.name, s.description, s.argument_hint) for s in skills]
        names = {s.name for s in skills} | {"rules", "skills"}
        commands += [
            _command(c.name, c.description, c.argument_hint)
            for c in found.ins.commands.values()
            if c.name not in names
        ]
    return update_available_commands(commands)
