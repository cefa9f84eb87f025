"""The bounded walk of a workspace: which source files the graph reads, and which it leaves out.

Before each use the whole workspace is walked and each source file's size and mtime compared
with the last walk (no file watcher: Bash, git and editors change files behind our back); a
directory is listed again only when its own mtime moved (an entry was added, removed, renamed).
The walk never leaves the workspace: directory links are not followed (no symlink loops), a file
link is followed only when it resolves inside the workspace. Left out, with a reason: generated
and vendored folders (by name, and hidden ones), files over `MAX_FILE_BYTES`, minified bundles,
and everything past `MAX_FILES` source files or `MAX_ENTRIES` directory entries (so a
50,000-file repository costs a bounded walk, never a hang). Binary content is found when a file
is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from openmono_worker.codegraph._langs import BY_EXTENSION
from openmono_worker.codegraph._tags import Skipped

MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 50_000
MAX_ENTRIES = 400_000
GENERATED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "jspm_packages",
        "vendor",
        "target",
        "dist",
        "build",
        "out",
        "__pycache__",
        "site-packages",
        "venv",
        "env",
        "coverage",
        "Pods",
        "DerivedData",
        "obj",
    }
)
_MINIFIED = (".min.js", ".min.mjs", ".bundle.js", "-min.js")

Stamp = tuple[int, int]  # (mtime_ns, size)


@dataclass
class Walk:
    """Source files found (workspace-relative path -> stamp), and what was left out."""

    files: dict[str, Stamp] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    truncated: str = ""  # why the walk stopped early ('' when it saw everything)


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root + os.sep)


@dataclass
class _Listing:
    """What one directory held when it had this mtime: its subdirectories and source files."""

    mtime_ns: int
    subdirs: list[str]
    files: list[str]  # workspace-relative paths of the source files (links inside included)
    skipped: list[Skipped]
    entries: int


class Walker:
    """Walks one workspace again and again, listing only the directories whose mtime moved.

    Creating, deleting or renaming an entry changes its directory's mtime; editing a file does
    not, so every source file is still stat-ed on every walk (that is how edits are seen)."""

    def __init__(
        self, workspace: Path, max_files: int = MAX_FILES, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.root = os.path.realpath(workspace)
        self.max_files = max_files
        self.max_entries = max_entries
        self._listings: dict[str, _Listing] = {}

    def _list(self, rel_dir: str, path: str, mtime_ns: int) -> _Listing:
        subdirs: list[str] = []
        files: list[str] = []
        skipped: list[Skipped] = []
        count = 0
        with os.scandir(path) as it:
            listing = sorted(it, key=lambda e: e.name)
        for entry in listing:
            count += 1
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_link = entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    if not (name.startswith(".") or name in GENERATED_DIRS):
                        subdirs.append(rel)
                    continue
                if is_link and entry.is_dir():
                    continue  # a directory link: never followed (loops, escapes)
            except OSError:
                continue
            dot = name.rfind(".")
            if dot <= 0 or name[dot:].lower() not in BY_EXTENSION:
                continue
            if name.endswith(_MINIFIED):
                skipped.append(Skipped(rel, "minified bundle"))
                continue
            if is_link and not _inside(os.path.realpath(entry.path), self.root):
                skipped.append(Skipped(rel, "link to a file outside the workspace"))
                continue
            files.append(rel)
        return _Listing(mtime_ns, subdirs, files, skipped, count)

    def walk(self) -> Walk:
        out = Walk()
        entries = 0
        listings: dict[str, _Listing] = {}
        todo = [""]
        root = self.root
        while todo:
            rel_dir = todo.pop()
            path = f"{root}/{rel_dir}" if rel_dir else root
            try:
                mtime = os.stat(path).st_mtime_ns  # noqa: PTH116 - no Path per entry (hot)
                found = self._listings.get(rel_dir)
                if found is None or found.mtime_ns != mtime:
                    found = self._list(rel_dir, path, mtime)
            except OSError:
                continue
            listings[rel_dir] = found
            entries += found.entries
            if entries > self.max_entries:
                out.truncated = f"stopped after {self.max_entries:,} directory entries"
                break
            out.skipped.extend(found.skipped)
            for rel in found.files:
                try:
                    st = os.stat(f"{root}/{rel}")  # noqa: PTH116 - as above
                except OSError:
                    continue
                if st.st_size > MAX_FILE_BYTES:
                    out.skipped.append(Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KiB"))
                    continue
                if len(out.files) >= self.max_files:
                    out.truncated = f"stopped at {self.max_files:,} source files"
                    break
                out.files[rel] = (st.st_mtime_ns, st.st_size)
            if out.truncated:
                break
            todo.extend(reversed(found.subdirs))
        self._listings = listings
        return out
