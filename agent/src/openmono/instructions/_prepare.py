"""A user's message before it reaches the model: `/name` and `@rule` resolved, on every surface.

    /rules, /skills        answered here (`_report`), nothing goes to the model
    /NAME ARGUMENTS        a skill the user may invoke: the model gets its content (as the
                           Skill tool gives it) and the arguments; else a custom command: the
                           model gets its body, `$ARGUMENTS`/`$1`.. filled in
    @NAME in the message   a rule of that name is added below the message, once per message
Precedence of one name: a built-in slash command of the surface (the interactive ones have
`/help`, ...), then a skill, then a custom command, then a playbook (`/NAME` of a user-invocable
playbook, interactive surfaces only). Any other `/word` goes to the model as typed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from openmono.instructions._catalog import Instructions
from openmono.instructions._prompt import rule_text
from openmono.instructions._report import rules_report, skills_report
from openmono.instructions._skills import skill_content

MENTION = re.compile(r"(?<![\w@/.])@([A-Za-z0-9][A-Za-z0-9_.-]*)")
LISTINGS = ("rules", "skills")


@dataclass(frozen=True)
class Prepared:
    """What a message becomes: the model's prompt, or a reply given without the model."""

    prompt: str | None
    reply: str | None = None
    notices: tuple[str, ...] = field(default_factory=tuple)
    # the skill a `/name` loaded (its files become readable)
    skill: str | None = None


def slash_target(ins: Instructions, name: str) -> str | None:
    """What `/name` runs here: "skill", "command", a listing, or None."""
    if name in LISTINGS:
        return name
    skill = ins.skills.skills.get(name)
    if skill is not None and skill.user_invocable:
        return "skill"
    return "command" if name in ins.commands else None


def prepare(ins: Instructions, text: str, delivered: Collection[Path] = ()) -> Prepared:
    """Resolve `/name ...` and `@rule` in `text` (see the module docstring); `delivered`: the
    rule files that came with tool results so far (`/rules` shows them active)."""
    notices: list[str] = []
    skill: str | None = None
    stripped = text.strip()
    if stripped.startswith("/"):
        name, _, arguments = stripped[1:].partition(" ")
        target = slash_target(ins, name)
        if target == "rules":
            return Prepared(None, rules_report(ins, delivered))
        if target == "skills":
            return Prepared(None, skills_report(ins))
        if target == "skill":
            found = ins.skills.skills[name]
            text = skill_content(found, ins.for_model(found.folder), arguments)
            notices.append(f"/{name}: the skill {ins.shown(found.folder)}")
            skill = name
        elif target == "command":
            command = ins.commands[name]
            text = command.expand(arguments)
            notices.append(f"/{name}: the custom command {ins.shown(command.file)}")
    added: list[str] = []
    for found_name in dict.fromkeys(MENTION.findall(text)):
        rule = ins.rule_named(found_name)
        if rule is not None:
            added.append(
                rule_text(rule, f"{ins.shown(rule.file)}, brought in by @{rule.name}", 8000)
            )
            notices.append(f"@{rule.name}: the rule {ins.shown(rule.file)}")
    if added:
        text = text + "\n\n" + "\n\n".join(added)
    return Prepared(text, notices=tuple(notices), skill=skill)
