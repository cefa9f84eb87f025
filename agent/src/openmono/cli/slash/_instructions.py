"""The workspace's instructions in the interactive session: `/rules`, `/skills`, and each skill's
and custom command's own `/NAME` (`openmono.instructions`).

`/NAME ARGS` of a skill or a custom command runs as a user turn of that text: the session
prepares it (`Agent.run_turn`: the skill's content or the command's body reaches the model), as
`-p` and ACP do. A built-in command keeps its name; `/skills` says what a name hides.
"""

from __future__ import annotations

from openmono.cli.slash._table import COMMANDS, Command, Handler, Surface, register
from openmono.instructions import rules_report, skills_report
from openmono.playbooks import discover


async def rules(s: Surface, _arg: str) -> None:
    found = s.current.instructions
    if found is None:
        s.print("[dim]no instructions in this session[/dim]")
        return
    s.markdown(rules_report(found.ins, found.attachments.delivered()))


async def skills(s: Surface, _arg: str) -> None:
    found = s.current.instructions
    if found is None:
        s.print("[dim]no instructions in this session[/dim]")
        return
    catalog = discover(s.workspace, s.settings.data_dir)
    playbooks = [p.name for p in catalog.invocable()]
    s.markdown(skills_report(found.ins, [c.name for c in COMMANDS], playbooks))


def _runs(name: str) -> Handler:
    async def handler(s: Surface, arg: str) -> None:
        await s.turn(f"/{name} {arg}".strip())

    return handler


def session_commands(s: Surface) -> list[Command]:
    """The open session's user-invocable skills, then its custom commands (a skill wins)."""
    agent = getattr(s, "agent", None)
    found = getattr(agent, "instructions", None)
    if found is None:
        return []
    ins = found.ins
    commands = [
        Command(k.name, k.description, _runs(k.name), k.argument_hint)
        for k in ins.skills.skills.values()
        if k.user_invocable
    ]
    taken = {c.name for c in commands}
    commands += [
        Command(c.name, c.description, _runs(c.name), c.argument_hint)
        for c in ins.commands.values()
        if c.name not in taken
    ]
    return commands


register("rules", "the rules found, which are active and why", rules)
register("skills", "the skills, custom commands and agents found, and what each name hides", skills)
