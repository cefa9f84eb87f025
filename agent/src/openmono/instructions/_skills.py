"""Skills in the Agent Skills format: a folder holding a `SKILL.md` (front matter `name`,
`description`; a markdown body) and whatever files its instructions use.

Folders, lowest first; a later one wins a name (`/skills` shows the one it hides):
    ~/.agents/skills   .agents/skills   ~/.claude/skills   .claude/skills
    <data dir>/skills (~/.openmono/skills)   .openmono/skills
Read leniently, as the format's guide for clients advises: a name that is not the folder's is
kept; no `name` means the folder's; no `description` means the skill is not loaded (the model
could not know when to use it). Claude Code's `disable-model-invocation: true` keeps a skill out
of the model's index (only `/name` runs it), `user-invocable: false` out of the slash commands.

Progressive disclosure: the prompt lists names and descriptions within a token budget
(`skill_index`); the `Skill` tool (`_tool`) loads a body (`skill_content`) and lists the files
beside it, which the read tools may then read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from openmono.instructions._arguments import expand
from openmono.instructions._errors import InstructionsError
from openmono.instructions._files import LinkCheck, Origin, Problem, problem_of, read_text
from openmono.instructions._frontmatter import parse

SKILL_FILE = "SKILL.md"
# A name must be usable as `/name` and as the Skill tool's argument.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
MAX_LISTED_FILES = 60
# The loop's own estimate (characters per token of code-heavy English, `loop._state`).
CHARS_PER_TOKEN = 3.2
INDEX_HEAD = (
    "# Skills\n"
    "Skills hold instructions for particular tasks. When a task matches a skill's description, "
    "call the Skill tool with its name before you start, then follow what it says."
)


@dataclass(frozen=True)
class Skill:
    """One skill folder, read."""

    name: str
    description: str
    folder: Path
    body: str
    origin: Origin
    model_invocable: bool = True
    user_invocable: bool = True
    argument_hint: str = ""
    cut: bool = False

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE

    def files(self, limit: int = MAX_LISTED_FILES) -> tuple[list[str], bool]:
        """The files beside SKILL.md (relative paths), at most `limit`; True when there are more."""
        found: list[str] = []
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder)
            if rel.parts[0].startswith(".") or rel == Path(SKILL_FILE) or not path.is_file():
                continue
            if len(found) == limit:
                return found, True
            found.append(rel.as_posix())
        return found, False


@dataclass
class SkillSet:
    """The skills that won their names, the ones they hide (hidden, winner), and problems."""

    skills: dict[str, Skill] = field(default_factory=dict)
    hidden: list[tuple[Skill, Skill]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def skill_dirs(workspace: Path, data_dir: Path, home: Path) -> list[tuple[Path, Origin]]:
    """The skill folders in precedence order, lowest first (see the module docstring)."""
    return [
        (home / ".agents" / "skills", "user"),
        (workspace / ".agents" / "skills", "project"),
        (home / ".claude" / "skills", "user"),
        (workspace / ".claude" / "skills", "project"),
        (data_dir / "skills", "user"),
        (workspace / ".openmono" / "skills", "project"),
    ]


def skill_folders(root: Path) -> list[Path]:
    """The folders of `root` that hold a SKILL.md, in name order."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / SKILL_FILE).is_file())


def _flag(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return default


def load_skill(folder: Path, origin: Origin) -> Skill:
    """One skill folder (raises `FrontMatterError`, `InstructionsError`, `OSError`)."""
    file = folder / SKILL_FILE
    found = read_text(file)
    doc = parse(file, found.text)
    fields = doc.fields
    name = str(fields.get("name") or folder.name).strip()
    if not NAME.match(name):
        raise InstructionsError(f"{file}: the name {name!r} cannot be a command or tool argument")
    description = " ".join(str(fields.get("description") or "").split())
    if not description:
        raise InstructionsError(f"{file}: no `description`, so nothing says when to use it")
    hint = fields.get("argument-hint")
    return Skill(
        name=name,
        description=description,
        folder=folder,
        body=doc.body,
        origin=origin,
        model_invocable=not _flag(fields.get("disable-model-invocation"), False),
        user_invocable=_flag(fields.get("user-invocable"), True),
        argument_hint=str(hint).strip() if hint else "",
        cut=found.cut,
    )


def load_skills(dirs: list[tuple[Path, Origin]], workspace: Path) -> SkillSet:
    """Every skill of `dirs` (lowest precedence first); project ones stay inside `workspace`."""
    found = SkillSet()
    seen: set[Path] = set()
    link_out = LinkCheck(workspace)
    for root, origin in dirs:
        real_root = root.resolve() if root.is_dir() else root
        if real_root in seen:  # the workspace is the home: one folder named twice
            continue
        seen.add(real_root)
        for folder in skill_folders(root):
            problem = link_out(folder / SKILL_FILE) if origin == "project" else None
            if problem is not None:
                found.problems.append(problem)
                continue
            try:
                skill = load_skill(folder, origin)
            except (InstructionsError, OSError) as exc:
                found.problems.append(problem_of(folder / SKILL_FILE, exc))
                continue
            if skill.cut:
                found.problems.append(Problem(skill.file, "over 256 KiB: cut"))
            earlier = found.skills.get(skill.name)
            if earlier is not None:
                found.hidden.append((earlier, skill))
            found.skills[skill.name] = skill
    return found


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit < 8:
        return ""
    head = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.")
    return head + "…"


def _lines(skills: list[Skill], limit: int) -> list[str]:
    out = []
    for skill in skills:
        description = _cut(skill.description, limit)
        out.append(f"- {skill.name}: {description}" if description else f"- {skill.name}")
    return out


def skill_index(skills: list[Skill], budget_tokens: int) -> str | None:
    """The prompt's list of skills, within `budget_tokens` (estimated): whole descriptions when
    they fit, else each cut to the longest common length that fits (found by bisection), else
    names alone, and as many of those as fit."""
    offered = [s for s in skills if s.model_invocable]
    if not offered:
        return None

    def cost(lines: list[str]) -> int:
        return estimate_tokens("\n".join([INDEX_HEAD, *lines]))

    longest = max(len(s.description) for s in offered)
    if cost(_lines(offered, longest)) <= budget_tokens:
        return "\n".join([INDEX_HEAD, *_lines(offered, longest)])
    low, high = 0, longest
    while low < high:
        mid = (low + high + 1) // 2
        if cost(_lines(offered, mid)) <= budget_tokens:
            low = mid
        else:
            high = mid - 1
    lines = _lines(offered, low)
    while lines and cost([*lines, "- (and 999 more: /skills lists them)"]) > budget_tokens:
        lines.pop()
    if len(lines) < len(offered):
        lines.append(f"- (and {len(offered) - len(lines)} more: /skills lists them)")
    return "\n".join([INDEX_HEAD, *lines])


def skill_content(skill: Skill, shown_folder: str, arguments: str = "") -> str:
    """What loading a skill gives the model: its body, where it lives and the files beside it."""
    files, more = skill.files()
    listed = "\n".join(f"  {f}" for f in files) or "  (none)"
    if more:
        listed += "\n  (more files: list the folder)"
    body = expand(skill.body, arguments)
    return (
        f'<skill_content name="{skill.name}">\n{body}\n\n'
        f"Skill folder: {shown_folder}\n"
        "Relative paths in this skill are relative to its folder; run its scripts with Bash.\n"
        f"Files:\n{listed}\n</skill_content>"
    )
