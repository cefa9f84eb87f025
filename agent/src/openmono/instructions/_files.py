"""Reading the files other agents leave in a repository: bounded, and never through a link out.

A file is read up to `MAX_BYTES` (256 KiB); a longer one is cut there, and the text says so. A
project file (or folder) that is a symbolic link resolving outside the workspace is not read: a
repository could otherwise make the agent read `~/.ssh/...` into its prompt. The user's own
folders (`~/.agents`, `~/.claude`, the data dir) may link anywhere: they are the user's.
What could not be used is a `Problem`, shown by `/rules` and `/skills`, never raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from openmono.instructions._errors import InstructionsError

T = TypeVar("T")

MAX_BYTES = 256 * 1024
CUT_NOTE = "[... cut here: the file is over 256 KiB]"
# Where a file came from: the repository (needs the user's trust, bar notes) or the user.
Origin = Literal["project", "user"]
# Folders never walked when looking for nested notes and rules (`/rules`, glob checks).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", "target", ".next", ".cache"}
)  # fmt: skip


@dataclass(frozen=True)
class Problem:
    """Something found but not used (or used in part), and why."""

    file: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Text:
    """A file's text; `cut` when it was longer than `MAX_BYTES`."""

    text: str
    cut: bool = False


def read_text(path: Path) -> Text:
    """The file's text, cut at `MAX_BYTES` (raises `OSError` when it cannot be read)."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    cut = len(raw) > MAX_BYTES
    text = raw[:MAX_BYTES].decode("utf-8", errors="replace")
    return Text(f"{text.rstrip()}\n{CUT_NOTE}" if cut else text, cut)


def outside(path: Path, root: Path) -> Path | None:
    """Where `path` really lands when that is outside `root` (a link out), else None."""
    real = Path(os.path.realpath(path))
    return None if real == root or root in real.parents else real


class LinkCheck:
    """`link_out` for many files of few folders: one `realpath` per folder, and one per file
    only for a file that is itself a link (loading 250 files took 17 ms of realpath alone)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[Path, Path] = {}

    def __call__(self, path: Path) -> Problem | None:
        if path.is_symlink():
            return link_out(path, self.root)
        real = self._folders.get(path.parent)
        if real is None:
            real = self._folders[path.parent] = Path(os.path.realpath(path.parent))
        if real == self.root or self.root in real.parents:
            return None
        return Problem(
            path, f"a symbolic link out of the workspace (to {real / path.name}); not read"
        )


def link_out(path: Path, root: Path) -> Problem | None:
    """The problem of a project file that links out of the workspace `root` (resolved)."""
    target = outside(path, root)
    if target is None:
        return None
    return Problem(path, f"a symbolic link out of the workspace (to {target}); not read")


def shown(path: Path, workspace: Path, home: Path) -> str:
    """A path as people read it: relative to the workspace, else with `~` for the home."""
    for root, prefix in ((workspace, ""), (home, "~/")):
        if path == root or root in path.parents:
            return prefix + path.relative_to(root).as_posix()
    return str(path)


def problem_of(file: Path, exc: Exception) -> Problem:
    """The problem an error reading `file` makes (its line, for front matter)."""
    line = getattr(exc, "line", None)
    problem = getattr(exc, "problem", None)
    if isinstance(line, int) and isinstance(problem, str):
        return Problem(file, f"malformed front matter: {problem}; not loaded", line)
    if isinstance(exc, OSError):
        return Problem(file, f"cannot be read: {exc.strerror or exc}")
    return Problem(file, str(exc).removeprefix(f"{file}: ") + "; not loaded")


def each_file(
    dirs: Iterable[tuple[Path, Origin]],
    workspace: Path,
    files: Callable[[Path], Iterable[Path]],
    load: Callable[[Path, Origin], T],
    problems: list[Problem],
) -> Iterator[T]:
    """`load(file, origin)` for each of the `files` of each folder, in order; a project file
    that links out of `workspace` or cannot be loaded is a problem instead."""
    check = LinkCheck(workspace)
    for root, origin in dirs:
        if not root.is_dir():
            continue
        for file in files(root):
            problem = check(file) if origin == "project" else None
            if problem is not None:
                problems.append(problem)
                continue
            try:
                yield load(file, origin)
            except (InstructionsError, OSError) as exc:
                problems.append(problem_of(file, exc))
