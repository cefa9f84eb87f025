"""`/rules` and `/skills`: what was found, what is active and why, what hides what, what failed.

Both are markdown any surface can show (the interactive ones render it, `-p` prints it, ACP
sends it as the agent's message). `/rules` also walks the workspace (bounded: `MAX_WALK_FILES`
files, the usual build and dependency folders skipped) to find the rule folders and notes of
subfolders and to check that each glob rule matches some file.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from openmono_worker import glob_match

from openmono.instructions._catalog import Instructions
from openmono.instructions._files import SKIP_DIRS, Problem
from openmono.instructions._rules import Rule

MAX_WALK_FILES = 20_000
TRUST_HINT = "`openmono config trust` in the project trusts it"


@dataclass
class Walk:
    """The workspace's files (relative paths) and folders, as far as the walk went."""

    files: list[str] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    complete: bool = True


def walk(root: Path, limit: int = MAX_WALK_FILES) -> Walk:
    found = Walk()
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        folder = Path(here)
        if folder != root:
            found.folders.append(folder)
        rel = folder.relative_to(root).as_posix()
        for name in files:
            found.files.append(name if rel == "." else f"{rel}/{name}")
        if len(found.files) >= limit:
            found.complete = False
            break
    return found


def _matches_some(rule: Rule, files: list[str], root: Path) -> bool:
    prefix = "" if rule.scope == root else rule.scope.relative_to(root).as_posix() + "/"
    inside = (f[len(prefix) :] for f in files if f.startswith(prefix))
    return any(glob_match(g, rel) for rel in inside for g in rule.globs)


def _state(rule: Rule, delivered: Collection[Path], in_prompt: bool) -> str:
    if rule.activation == "always" and in_prompt:
        return "active: in the system prompt"
    if rule.file in delivered:
        return "active: came with a tool result this session"
    if rule.activation == "requested":
        return "listed in the system prompt"
    return "not active yet"


def _rule_line(ins: Instructions, rule: Rule, state: str, files: Walk | None) -> str:
    line = f"- **{rule.name}** ({ins.shown(rule.file)}, {rule.form}): {state}; {rule.why()}"
    if (
        rule.activation == "glob"
        and files is not None
        and not _matches_some(rule, files.files, ins.workspace)
    ):
        scope = "the workspace" if files.complete else "the files looked at"
        line += f" — its globs match no file in {scope}"
    if rule.cut:
        line += " (cut at 256 KiB)"
    return line


def rules_report(ins: Instructions, delivered: Collection[Path] = ()) -> str:
    files = walk(ins.workspace)
    lines = ["## Rules"]
    if ins.rule_folder is not None:
        lines.append(f"Read from {ins.shown(ins.rule_folder)}.")
    for skipped in ins.skipped_folders:
        lines.append(
            f"Not read: {ins.shown(skipped)} (the first folder of the chain that holds rules wins)."
        )
    for rule in ins.rules:
        lines.append(_rule_line(ins, rule, _state(rule, delivered, True), files))
    nested: list[str] = []
    notes: list[str] = []
    problems: list[Problem] = [*ins.problems]
    for folder in files.folders:
        held = ins.folder(folder)
        problems += held.problems
        notes += [
            f"- {n.label}: comes with the first tool call on a file under it" for n in held.notes
        ]
        for rule in held.rules:
            nested.append(_rule_line(ins, rule, _state(rule, delivered, False), files))
    if len(lines) == 1 and not nested:
        lines.append(
            "No rules (folders read: "
            + ", ".join(
                f"`{d}`"
                for d in (".openmono/rules", ".agents/rules", ".cursor/rules", ".claude/rules")
            )
            + ", and `<data dir>/rules`)."
        )
    if nested:
        lines += ["", "### Rules of subfolders (for the files under them)", *nested]
    if notes:
        lines += ["", "### Notes of subfolders", *notes]
    if not files.complete:
        lines.append(f"(The walk stopped after {MAX_WALK_FILES} files.)")
    lines += _untrusted(ins) + _problems(ins, problems)
    return "\n".join(lines)


def _untrusted(ins: Instructions) -> list[str]:
    if ins.trusted or not ins.untrusted:
        return []
    return [
        "",
        f"The project is not trusted, so these were not loaded: {'; '.join(ins.untrusted)} "
        f"({TRUST_HINT}).",
    ]


def _problems(ins: Instructions, problems: list[Problem]) -> list[str]:
    if not problems:
        return []
    shown = (
        f"- {ins.shown(p.file)}{f':{p.line}' if p.line else ''}: {p.message}" for p in problems
    )
    return ["", "### Problems", *dict.fromkeys(shown)]


def skills_report(
    ins: Instructions, builtins: Collection[str] = (), playbooks: Collection[str] = ()
) -> str:
    """The skills, custom commands and custom agents, and who wins each name."""
    lines = ["## Skills"]
    hidden_by: dict[str, list[str]] = {}
    for earlier, later in ins.skills.hidden:
        hidden_by.setdefault(later.name, []).append(f"the skill in {ins.shown(earlier.folder)}")
    for name, command in ins.commands.items():
        if name in ins.skills.skills and ins.skills.skills[name].user_invocable:
            hidden_by.setdefault(name, []).append(f"the custom command {ins.shown(command.file)}")
    for skill in ins.skills.skills.values():
        usage = f"/{skill.name}" + (f" {skill.argument_hint}" if skill.argument_hint else "")
        how = [usage if skill.user_invocable else "not a slash command"]
        if not skill.model_invocable:
            how.append("only the user invokes it")
        line = (
            f"- **{skill.name}** ({ins.shown(skill.folder)}; {', '.join(how)}): {skill.description}"
        )
        hides = list(hidden_by.get(skill.name, []))
        if skill.name in playbooks and skill.user_invocable:
            hides.append(f"the playbook {skill.name}")
        if hides:
            line += f"\n  - hides {', '.join(hides)}"
        if skill.name in builtins and skill.user_invocable:
            line += f"\n  - /{skill.name} is a built-in command here; the model can still load it"
        lines.append(line)
    if not ins.skills.skills:
        lines.append("No skills.")
    if ins.commands:
        lines += ["", "## Custom commands"]
        for command in ins.commands.values():
            usage = f"/{command.name}" + (
                f" {command.argument_hint}" if command.argument_hint else ""
            )
            line = f"- **{usage}** ({ins.shown(command.file)}): {command.description}"
            same = ins.skills.skills.get(command.name)
            if same is not None and same.user_invocable:
                line += f"\n  - hidden by the skill {command.name}"
            elif command.name in builtins:
                line += f"\n  - hidden by the built-in /{command.name}"
            elif command.name in playbooks:
                line += f"\n  - hides the playbook {command.name}"
            lines.append(line)
    if ins.agents:
        lines += ["", "## Custom agents (the Agent tool's types)"]
        for agent in ins.agents.values():
            tools = (
                ", ".join(agent.tools) if agent.tools is not None else "every tool of the parent"
            )
            lines.append(
                f"- **{agent.name}** ({ins.shown(agent.file)}; tools: {tools}): {agent.description}"
            )
    lines += _untrusted(ins) + _problems(ins, [*ins.skills.problems, *ins.other_problems])
    return "\n".join(lines)
