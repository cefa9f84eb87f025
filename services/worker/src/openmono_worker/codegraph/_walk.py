"""The bounded walk of a workspace: which source files the graph reads, and which it leaves out.

Before each use the whole workspace is walked and each source file's size and mtime compared
with the last walk (no file watcher: Bash, git and editors change files behind our back). The
walk never leaves the workspace: directory links are not followed (no symlink loops), a file link
is followed only when it resolves inside the workspace. Left out, with a reason: generated and
vendored folders (by name, and hidden ones), files over `MAX_FILE_BYTES`, minified bundles, and
everything past `MAX_FILES` source files or `MAX_ENTRIES` directory entries (so a 50,000-file
repository costs a bounded walk, never a hang). Binary content is found when a file is read.
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


def walk(workspace: Path, max_files: int = MAX_FILES, max_entries: int = MAX_ENTRIES) -> Walk:
    root = os.path.realpath(workspace)
    out = Walk()
    entries = 0
    todo = [""]
    while todo:
        rel_dir = todo.pop()
        try:
            with os.scandir(f"{root}/{rel_dir}" if rel_dir else root) as it:
                listing = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in listing:
            entries += 1
            if entries > max_entries:
                out.truncated = f"stopped after {max_entries:,} directory entries"
                return out
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_link = entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    if name.startswith(".") or name in GENERATED_DIRS:
                        continue
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
                out.skipped.append(Skipped(rel, "minified bundle"))
                continue
            try:
                if is_link and not _inside(os.path.realpath(entry.path), root):
                    out.skipped.append(Skipped(rel, "link to a file outside the workspace"))
                    continue
                st = entry.stat()
            except OSError:
                continue
            if st.st_size > MAX_FILE_BYTES:
                out.skipped.append(Skipped(rel, f"over {MAX_FILE_BYTES // 1024} KiB"))
                continue
            if len(out.files) >= max_files:
                out.truncated = f"stopped at {max_files:,} source files"
                return out
            out.files[rel] = (st.st_mtime_ns, st.st_size)
        todo.extend(reversed(subdirs))
    return out
