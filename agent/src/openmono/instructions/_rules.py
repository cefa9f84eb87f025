"""Rules: instructions a repository scopes to some of its files, in Cursor's or Claude Code's form.

Where: the first folder of `RULE_DIRS` that holds a rule file (`.md`, `.mdc`, in subfolders too)
is read, the others are not (`/rules` names them); the same chain applies in any folder below the
root, for the files under that folder. The user's rules are `<data dir>/rules`.

Two forms, by the file's suffix:
- `.mdc` is Cursor's: `alwaysApply: true` → always; else `globs` (a list, or a comma-separated
  string, unquoted as Cursor writes it) → when a file matching them is touched; else a
  `description` → requested (listed by its description; the model reads the file when it
  applies); else manual (`@name` in a message brings it in).
- `.md` is Claude Code's: `paths` (or `globs`) → when a matching file is touched; without them
  the rule always applies.
A glob without `/` matches a file name at any depth (`*.tsx`); one with `/` is matched against
the path from the rule's folder (`src/**/*.{ts,tsx}`); `**` crosses folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from openmono_worker import glob_match

from openmono.instructions._errors import InstructionsError
from openmono.instructions._files import Origin, Problem, Text, each_file, read_text
from openmono.instructions._frontmatter import parse, split_list

RULE_DIRS = (".openmono/rules", ".agents/rules", ".cursor/rules", ".claude/rules")
RULE_SUFFIXES = (".mdc", ".md")
Activation = Literal["always", "glob", "requested", "manual"]


@dataclass(frozen=True)
class Rule:
    """One rule file, read and classified; `scope` is the folder whose files it is about."""

    name: str
    file: Path
    body: str
    activation: Activation
    scope: Path
    origin: Origin
    globs: tuple[str, ...] = ()
    description: str = ""
    cut: bool = False

    @property
    def form(self) -> str:
        return "Cursor" if self.file.suffix == ".mdc" else "Claude Code"

    def matches(self, path: Path) -> bool:
        """Does this glob rule apply to `path` (resolved, inside `scope`)?"""
        if self.activation != "glob" or self.scope not in path.parents:
            return False
        rel = path.relative_to(self.scope).as_posix()
        return any(glob_match(g, rel) for g in self.globs)

    def why(self) -> str:
        """When it applies, in words (for `/rules`)."""
        if self.activation == "always":
            return "always" if self.file.suffix == ".mdc" else "always (no `paths`)"
        if self.activation == "glob":
            return "when a tool touches " + ", ".join(self.globs)
        if self.activation == "requested":
            return "the model reads it when its description applies"
        return f"when a message names @{self.name}"


def rule_files(folder: Path) -> Iterator[Path]:
    """The rule files of a rule folder, subfolders included (links to folders not followed),
    in name order."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from rule_files(Path(entry.path))
        elif entry.name.endswith(RULE_SUFFIXES) and entry.is_file():
            yield Path(entry.path)


def rule_folders(base: Path) -> list[Path]:
    """The folders of the chain under `base` that hold a rule file, in chain order."""
    found = []
    for name in RULE_DIRS:
        folder = base / name
        if folder.is_dir() and next(rule_files(folder), None) is not None:
            found.append(folder)
    return found


def _globs(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else split_list(str(value)) if value else []
    cleaned = (str(g).strip().strip("\"'").removeprefix("./").lstrip("/") for g in items)
    return tuple(g for g in cleaned if g)


def _flag(file: Path, name: str, value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InstructionsError(f"{file}: `{name}` must be true or false, not {value!r}")


def parse_rule(file: Path, found: Text, scope: Path, origin: Origin) -> Rule:
    """One rule from its text (raises `FrontMatterError` / `InstructionsError`)."""
    doc = parse(file, found.text)
    fields = doc.fields
    description = fields.get("description")
    description = str(description).strip() if description else ""
    activation: Activation
    if file.suffix == ".mdc":
        globs = _globs(fields.get("globs"))
        if _flag(file, "alwaysApply", fields.get("alwaysApply")):
            activation = "always"
        elif globs:
            activation = "glob"
        else:
            activation = "requested" if description else "manual"
    else:
        globs = _globs(fields.get("paths") or fields.get("globs"))
        activation = "glob" if globs else "always"
    return Rule(
        name=file.stem,
        file=file,
        body=doc.body,
        activation=activation,
        scope=scope,
        origin=origin,
        globs=globs if activation == "glob" else (),
        description=description,
        cut=found.cut,
    )


def load_rules(
    folder: Path, scope: Path, origin: Origin, workspace: Path
) -> tuple[list[Rule], list[Problem]]:
    """Every rule of one rule folder, about the files of `scope`; a project rule file must stay
    inside `workspace`."""
    problems: list[Problem] = []

    def load(file: Path, origin: Origin) -> Rule:
        return parse_rule(file, read_text(file), scope, origin)

    rules = list(each_file([(folder, origin)], workspace, rule_files, load, problems))
    problems += [Problem(r.file, "over 256 KiB: cut") for r in rules if r.cut]
    return rules, problems
