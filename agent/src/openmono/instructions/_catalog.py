"""Everything a workspace and its user say about working in it, loaded once per session.

`Instructions.load(workspace, data_dir, home, trusted=...)` reads the root rule folder and the
user's rules, the skills, the custom agents and the custom commands (`_rules`, `_skills`,
`_agents`, `_commands`). A project the user has not trusted contributes none of those (it could
otherwise put instructions in the prompt, and skills with scripts, the moment it is opened):
only the user's own folders are read, and `untrusted` says what was left out. Notes are read
whatever the trust, as `AGENTS.md` always was (`_notes`), fresh each time the prompt is built.

Folders below the root are looked at when a tool first touches a file under them (`folder`):
their notes and their rule folder, cached for the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from openmono.instructions._agents import CustomAgent, agent_dirs, load_agents
from openmono.instructions._commands import CustomCommand, command_dirs, load_commands
from openmono.instructions._files import Origin, Problem, shown
from openmono.instructions._notes import Note, nested_notes, root_notes
from openmono.instructions._rules import Rule, load_rules, rule_folders
from openmono.instructions._skills import SkillSet, load_skills, skill_dirs, skill_folders


@dataclass
class Folder:
    """What one folder below the root holds for the files under it."""

    notes: list[Note] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    rule_folder: Path | None = None
    skipped: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Instructions:
    """One session's instructions (see the module docstring)."""

    workspace: Path
    data_dir: Path
    home: Path
    trusted: bool
    rules: list[Rule] = field(default_factory=list)
    rule_folder: Path | None = None
    skipped_folders: list[Path] = field(default_factory=list)
    skills: SkillSet = field(default_factory=SkillSet)
    agents: dict[str, CustomAgent] = field(default_factory=dict)
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    # what could not be used: of the rules (`/rules` shows them), of agents and commands
    # (`/skills`, beside the skills' own)
    problems: list[Problem] = field(default_factory=list)
    other_problems: list[Problem] = field(default_factory=list)
    untrusted: list[str] = field(default_factory=list)
    _folders: dict[Path, Folder] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        workspace: Path,
        data_dir: Path,
        home: Path,
        *,
        trusted: bool,
        reserved_agents: frozenset[str] = frozenset(),
    ) -> Instructions:
        """Read everything of `workspace` (if `trusted`) and of the user's folders."""
        ins = cls(workspace.resolve(), data_dir.expanduser(), home, trusted)
        ws = ins.workspace
        folders = rule_folders(ws)
        if folders and trusted:
            ins.rule_folder, ins.skipped_folders = folders[0], folders[1:]
            rules, problems = load_rules(folders[0], ws, "project", ws)
            ins.rules += rules
            ins.problems += problems
        elif folders:
            ins.untrusted.append(_rules_phrase(folders[0], ws, home))
        user_rules = ins.data_dir / "rules"
        if user_rules.is_dir():
            rules, problems = load_rules(user_rules, ws, "user", ws)
            ins.rules += rules
            ins.problems += problems
        ins.skills = load_skills(ins._allowed(skill_dirs(ws, ins.data_dir, home), "skills"), ws)
        reserved = frozenset(n.lower() for n in reserved_agents)
        agents = ins._allowed(agent_dirs(ws, ins.data_dir, home), "agents")
        ins.agents, problems = load_agents(agents, ws, reserved)
        ins.other_problems += problems
        commands = ins._allowed(command_dirs(ws, ins.data_dir, home), "commands")
        ins.commands, problems = load_commands(commands, ws)
        ins.other_problems += problems
        return ins

    def _allowed(self, dirs: list[tuple[Path, Origin]], what: str) -> list[tuple[Path, Origin]]:
        """`dirs` without the project's when it is not trusted (noting any that hold files)."""
        if self.trusted:
            return dirs
        self.untrusted += _held(dirs, what, self.workspace, self.home)
        return [(f, o) for f, o in dirs if o == "user"]

    # -- what applies -------------------------------------------------------------------------
    def notes(self) -> tuple[list[Note], list[Problem]]:
        """The root notes as they are now (read at each call: `/init` may have written one)."""
        return root_notes(self.workspace, self.data_dir)

    def always_rules(self) -> list[Rule]:
        """The rules of the root and the user that go into the system prompt."""
        return [r for r in self.rules if r.activation == "always"]

    def requested_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.activation == "requested"]

    def folder(self, folder: Path) -> Folder:
        """What `folder` (below the root) holds for the files under it, read once."""
        cached = self._folders.get(folder)
        if cached is not None:
            return cached
        found = Folder()
        found.notes, found.problems = nested_notes(folder, self.workspace)
        rule_dirs = rule_folders(folder)
        if rule_dirs and self.trusted:
            found.rule_folder, found.skipped = rule_dirs[0], rule_dirs[1:]
            rules, problems = load_rules(rule_dirs[0], folder, "project", self.workspace)
            found.rules, found.problems = rules, found.problems + problems
        self._folders[folder] = found
        return found

    def applicable(self, path: Path) -> list[Note | Rule]:
        """What rides with a call touching `path` (resolved): the notes of the folders above it,
        their always and matching rules, and the root's and the user's matching glob rules."""
        ws = self.workspace
        if not (ws in path.parents or path == ws):
            return []
        inner = path if path.is_dir() else path.parent
        chain = [inner, *inner.parents]
        found: list[Note | Rule] = []
        for folder in reversed(chain[: chain.index(ws)] if ws in chain else []):
            held = self.folder(folder)
            found += held.notes
            found += [r for r in held.rules if r.activation == "always" or r.matches(path)]
        found += [r for r in self.rules if r.matches(path)]
        return found

    def rule_named(self, name: str) -> Rule | None:
        """The rule `@name` brings in: the root's and the user's, then those of folders seen."""
        every = [*self.rules, *(r for f in self._folders.values() for r in f.rules)]
        return next((r for r in every if r.name == name), None)

    def shown(self, path: Path) -> str:
        """A path for people: relative in the workspace, `~/...` in the home."""
        return shown(path, self.workspace, self.home)

    def for_model(self, path: Path) -> str:
        """A path the tools take: relative in the workspace, else absolute (never `~`)."""
        real = path.resolve()
        ws = self.workspace
        return real.relative_to(ws).as_posix() if ws in real.parents else str(real)


def _rules_phrase(folder: Path, workspace: Path, home: Path) -> str:
    return f"rules in {shown(folder, workspace, home)}"


def _held(dirs: list[tuple[Path, Origin]], what: str, workspace: Path, home: Path) -> list[str]:
    """A phrase for each project folder of `dirs` that holds something ("3 skills in ...")."""
    found = []
    users = {f.resolve() for f, o in dirs if o == "user" and f.is_dir()}
    for folder, origin in dirs:
        # a project folder that is also the user's (the workspace is the home) is the user's
        if origin != "project" or not folder.is_dir() or folder.resolve() in users:
            continue
        holds = skill_folders(folder) if what == "skills" else list(folder.rglob("*.md"))
        if holds:
            found.append(f"{len(holds)} {what} in {shown(folder, workspace, home)}")
    return found


def waiting(workspace: Path) -> list[str]:
    """What `workspace` brings that waits for the user's trust (its rules, skills, agents and
    commands), one phrase each, without reading any of it (the trust question names them)."""
    ws = workspace.resolve()
    nowhere = Path("/nonexistent-home")  # only the project's folders are looked at
    folders = rule_folders(ws)
    found = [_rules_phrase(folders[0], ws, nowhere)] if folders else []
    for what, dirs in (
        ("skills", skill_dirs(ws, nowhere, nowhere)),
        ("agents", agent_dirs(ws, nowhere, nowhere)),
        ("commands", command_dirs(ws, nowhere, nowhere)),
    ):
        found += _held(dirs, what, ws, nowhere)
    return found
