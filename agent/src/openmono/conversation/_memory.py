"""Memory: small markdown files the agent saves with MemorySave and reads at startup.

Two scopes with one layout. The project's memory lives inside the workspace; the user's lives in
the data dir and follows them from project to project:

    <workspace>/.openmono/memory/   project: facts about this code base
    <data dir>/memory/              user: who the user is, how they like to work
        MEMORY.md                   index, one line per memory: `- [name](file.md) — description`
        <slug>.md                   front matter (name, description, type) + the content

Saving a memory under an existing name replaces it (`index_with`, `render`: what MemorySave writes);
`read_memory_dir` lists one folder (the `/memory` command), `forget` removes one memory from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openmono_contracts.facts import PROJECT_MEMORY_DIR

MemoryType = Literal["user", "feedback", "project", "reference"]

INDEX = "MEMORY.md"
_SLUG = re.compile(r"[^a-z0-9]+")
_FRONT = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.DOTALL)


@dataclass(frozen=True)
class Memory:
    name: str
    type: str
    description: str
    content: str
    path: Path


def slug(name: str) -> str:
    """The file stem for a memory name: lowercase ASCII words joined by '-'."""
    return _SLUG.sub("-", name.lower()).strip("-")[:64] or "memory"


def render(name: str, type_: MemoryType, description: str, content: str) -> str:
    """The memory file's text."""
    body = content if content.endswith("\n") else content + "\n"
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}"


def index_with(index_text: str, file_name: str, name: str, description: str) -> str:
    """The index with the line for `file_name` added or replaced (other lines kept in order)."""
    entry = f"- [{name}]({file_name}) — {description}"
    lines = [ln for ln in index_text.splitlines() if f"]({file_name})" not in ln]
    if not lines:
        lines = ["# Memory", ""]
    lines.append(entry)
    return "\n".join(lines) + "\n"


def parse(path: Path) -> Memory | None:
    """A memory file, or None if it is not one."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = _FRONT.match(text)
    if match is None:
        return None
    meta: dict[str, str] = {}
    for line in match[1].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    return Memory(
        name=meta.get("name", path.stem),
        type=meta.get("type", "project"),
        description=meta.get("description", ""),
        content=match[2].strip("\n"),
        path=path,
    )


def index_without(index_text: str, file_name: str) -> str:
    """The index with the line for `file_name` removed."""
    lines = [ln for ln in index_text.splitlines() if f"]({file_name})" not in ln]
    return "\n".join(lines) + "\n" if lines else ""


def read_memories(workspace: Path) -> list[Memory]:
    """Every memory saved in this workspace, sorted by file name."""
    return read_memory_dir(workspace / PROJECT_MEMORY_DIR)


def forget(directory: Path, name: str) -> Memory | None:
    """Remove the memory called `name` (or whose file stem is `name`) from `directory`."""
    wanted = [m for m in read_memory_dir(directory) if name in (m.name, m.path.stem)]
    if not wanted:
        return None
    memory = wanted[0]
    memory.path.unlink()
    index = directory / INDEX
    if index.is_file() and not index.is_symlink():
        index.write_text(index_without(index.read_text(errors="replace"), memory.path.name))
    return memory


def read_memory_dir(directory: Path) -> list[Memory]:
    """Every memory in one memory folder (either scope), sorted by file name."""
    if not directory.is_dir() or directory.is_symlink():
        return []
    found = []
    for path in sorted(directory.glob("*.md")):
        if path.name == INDEX or path.is_symlink():
            continue
        memory = parse(path)
        if memory is not None:
            found.append(memory)
    return found
