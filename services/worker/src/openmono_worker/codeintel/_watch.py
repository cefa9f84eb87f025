"""Noticing files that changed on disk behind the language server's back (Bash, git, an editor).

Our own edits reach the server as document syncs; anything else would leave it with stale
contents, since we do not run a file watcher. So before each use the server's workspace is
walked (source files of its language only, the usual vendored and cache directories skipped) and
compared with the last walk by size and mtime; what moved is sent as `didChangeWatchedFiles`, and
documents we hold open are synced again. A workspace too big to walk cheaply is not tracked.
"""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types as lsp

SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist"}
)
_MAX_TRACKED = 20_000

Stamp = tuple[int, int]


def _inside(path: str, workspace: str) -> bool:
    real = os.path.realpath(path)
    return real == workspace or real.startswith(workspace + os.sep)


def walk_sources(
    workspace: Path, suffixes: tuple[str, ...], limit: int | None = None
) -> list[Path]:
    """Files under `workspace` ending in `suffixes`, hidden and vendored directories skipped.

    Directory links are not followed (os.walk's default) and a file link that leads out of the
    workspace is left out: the index must not read what FileRead would refuse."""
    found: list[Path] = []
    root_s = os.fspath(workspace)
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(files):
            if not name.endswith(suffixes):
                continue
            full = Path(root, name)
            if full.is_symlink() and not _inside(os.fspath(full), root_s):
                continue
            found.append(full)
        if limit is not None and len(found) > limit:
            break
    return found


def _stamps(workspace: Path, suffixes: tuple[str, ...]) -> dict[Path, Stamp] | None:
    paths = walk_sources(workspace, suffixes, _MAX_TRACKED)
    if len(paths) > _MAX_TRACKED:
        return None
    out: dict[Path, Stamp] = {}
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue
        out[path] = (st.st_mtime_ns, st.st_size)
    return out


class Snapshot:
    """The last seen size/mtime of every source file of one language in a workspace."""

    def __init__(self, workspace: Path, suffixes: tuple[str, ...]) -> None:
        self.workspace = workspace
        self.suffixes = suffixes
        self._stamps = _stamps(workspace, suffixes)

    def changes(self) -> list[tuple[Path, lsp.FileChangeType]]:
        """What was created, changed or deleted since the last call (empty when not tracked)."""
        if self._stamps is None:
            return []
        now = _stamps(self.workspace, self.suffixes)
        if now is None:
            self._stamps = None
            return []
        before, self._stamps = self._stamps, now
        out = [
            (p, lsp.FileChangeType.Created if p not in before else lsp.FileChangeType.Changed)
            for p, stamp in now.items()
            if before.get(p) != stamp
        ]
        out += [(p, lsp.FileChangeType.Deleted) for p in before if p not in now]
        return out
