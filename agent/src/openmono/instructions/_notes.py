"""Project notes: what a repository says about working in it, in the files agents read first.

At the root, every one that exists, nearest first (that order is the prompt's):
    OPENMONO.md, AGENTS.md, CLAUDE.md, CLAUDE.local.md   in the workspace
    OPENMONO.md                                          in the user's data dir (`~/.openmono`)
A second name for the same file (`CLAUDE.md` linked to `AGENTS.md`), or the same text twice, is
read once. They share `MAX_NOTES_CHARS`, as the one file read before did: what does not fit is
cut, with a line saying so.

Below the root, an `AGENTS.md` or `CLAUDE.md` applies to the files under its folder: it is not in
the system prompt but rides in the result of the first tool call that touches such a file
(`_attach`). Notes need no trust: they are read as `AGENTS.md` always was.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openmono.instructions._files import Problem, link_out, read_text

ROOT_NOTES = ("OPENMONO.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")
NESTED_NOTES = ("AGENTS.md", "CLAUDE.md")
USER_NOTE = "OPENMONO.md"
MAX_NOTES_CHARS = 12_000


@dataclass(frozen=True)
class Note:
    """One notes file; `folder` is where it applies (the workspace root for root notes)."""

    path: Path
    label: str
    text: str
    folder: Path
    cut: bool = False


def _read(path: Path, label: str, folder: Path, root: Path | None) -> Note | Problem | None:
    """The note at `path` (None: no such file); `root`: the workspace it must stay in."""
    if not path.is_file():
        return None
    if root is not None:
        problem = link_out(path, root)
        if problem is not None:
            return problem
    try:
        found = read_text(path)
    except OSError as exc:
        return Problem(path, f"cannot be read: {exc.strerror or exc}")
    return Note(path, label, found.text.strip(), folder, found.cut)


def root_notes(workspace: Path, data_dir: Path) -> tuple[list[Note], list[Problem]]:
    """The root notes that exist, in prompt order, each once (see the module docstring)."""
    candidates: list[tuple[Path, str, Path | None]] = [
        (workspace / n, n, workspace) for n in ROOT_NOTES
    ]
    candidates.append((data_dir / USER_NOTE, f"{USER_NOTE} in {data_dir}", None))
    notes: list[Note] = []
    problems: list[Problem] = []
    seen: set[Path] = set()
    texts: set[str] = set()
    for path, label, root in candidates:
        found = _read(path, label, workspace, root)
        if isinstance(found, Problem):
            problems.append(found)
        elif found is not None and found.text:
            real = path.resolve()
            if real in seen or found.text in texts:
                continue
            seen.add(real)
            texts.add(found.text)
            notes.append(found)
    return notes, problems


def nested_notes(folder: Path, workspace: Path) -> tuple[list[Note], list[Problem]]:
    """The notes of one folder below the workspace root (`AGENTS.md`, then `CLAUDE.md`)."""
    notes: list[Note] = []
    problems: list[Problem] = []
    rel = folder.relative_to(workspace).as_posix()
    for name in NESTED_NOTES:
        found = _read(folder / name, f"{rel}/{name}", folder, workspace)
        if isinstance(found, Problem):
            problems.append(found)
        elif found is not None and found.text:
            if any(n.text == found.text for n in notes):
                continue
            notes.append(found)
    return notes, problems


def notes_block(notes: list[Note], limit: int = MAX_NOTES_CHARS) -> str | None:
    """The root notes as one prompt block (a `# Project notes (NAME)` part each), at most
    `limit` characters of notes in all."""
    parts: list[str] = []
    left = limit
    for note in notes:
        if left <= 0:
            text = f"[... not shown: the notes are over {limit} characters in all]"
        elif len(note.text) > left:
            text = note.text[:left] + "\n[... cut: the notes are too long]"
        else:
            text = note.text
        left -= len(note.text)
        parts.append(f"# Project notes ({note.label})\n{text}")
    return "\n\n".join(parts) or None
