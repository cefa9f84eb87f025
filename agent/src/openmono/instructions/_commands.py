"""Custom slash commands: a markdown file whose body is a prompt, run as `/name arguments`.

    .claude/commands/review-pr.md        →  /review-pr 42
    ---
    description: Review a pull request
    argument-hint: "[number]"
    ---
    Review pull request $1 ...

Folders, lowest first; a later one wins a name (a subfolder only groups: `frontend/x.md` is `/x`):
    ~/.claude/commands   .claude/commands   <data dir>/commands   .openmono/commands
The body's `$ARGUMENTS` and `$1`..`$9` are filled in (`_arguments`). Claude Code's ``!`cmd` ``
lines are not run: the text goes to the model as written. `allowed-tools` and `model` are not
used (permission rules decide; the session's model answers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from openmono.instructions._arguments import expand
from openmono.instructions._errors import InstructionsError
from openmono.instructions._files import Origin, Problem, each_file, read_text
from openmono.instructions._frontmatter import parse

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")


@dataclass(frozen=True)
class CustomCommand:
    """One command file, read."""

    name: str
    description: str
    body: str
    file: Path
    origin: Origin
    argument_hint: str = ""

    def expand(self, arguments: str) -> str:
        return expand(self.body, arguments)


def command_dirs(workspace: Path, data_dir: Path, home: Path) -> list[tuple[Path, Origin]]:
    return [
        (home / ".claude" / "commands", "user"),
        (workspace / ".claude" / "commands", "project"),
        (data_dir / "commands", "user"),
        (workspace / ".openmono" / "commands", "project"),
    ]


def load_command(file: Path, origin: Origin) -> CustomCommand:
    """One command file (raises `FrontMatterError`, `InstructionsError`, `OSError`)."""
    if not NAME.match(file.stem):
        raise InstructionsError(f"{file}: {file.stem!r} cannot be a command name")
    doc = parse(file, read_text(file).text)
    description = " ".join(str(doc.fields.get("description") or "").split())
    first = doc.body.strip().splitlines()[0] if doc.body.strip() else ""
    hint = doc.fields.get("argument-hint")
    return CustomCommand(
        name=file.stem,
        description=description or first[:80],
        body=doc.body,
        file=file,
        origin=origin,
        argument_hint=str(hint).strip() if hint else "",
    )


def _command_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.md"))


def load_commands(
    dirs: list[tuple[Path, Origin]], workspace: Path
) -> tuple[dict[str, CustomCommand], list[Problem]]:
    """Every command of `dirs` (lowest precedence first)."""
    commands: dict[str, CustomCommand] = {}
    problems: list[Problem] = []
    for command in each_file(dirs, workspace, _command_files, load_command, problems):
        if command.name in commands:
            problems.append(Problem(commands[command.name].file, f"hidden by {command.file}"))
        commands[command.name] = command
    return commands, problems
