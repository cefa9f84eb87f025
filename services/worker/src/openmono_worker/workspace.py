"""The workspace guard: every path a tool touches is resolved inside the workspace or refused.

A path may be absolute (it must then lie inside the workspace) or relative to the workspace. It is
resolved component by component, following every symlink the way the kernel would (file and
directory links, absolute and relative targets, dangling links whose target does not exist yet), so
a path that does not exist yet is judged by where it would land. Refused: NUL bytes, a leading `~`
(never expanded: it would mean another home than the model thinks), `..` that climbs out, symlinks
that point out, symlink loops (more than 40 hops, the kernel's own limit), and a component that is
an existing non-directory with more path after it.

What remains is a time-of-check/time-of-use window: a process that swaps a directory for a symlink
between our check and the open can still redirect a write. The workspace is the model's own sandbox,
so we guard against mistakes and confused models, not against a hostile local process.
"""

# The resolver walks paths as strings, component by component, on purpose: pathlib collapses `.`
# and would hide the exact sequence the kernel follows. Hence os.path instead of pathlib here.
# ruff: noqa: PTH115, PTH117, PTH118, PTH120

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from openmono_worker.errors import PathRefused

_MAX_SYMLINK_HOPS = 40


def resolve_workspace(workspace: str | os.PathLike[str]) -> Path:
    """The real, absolute path of the workspace root; it must exist and be a directory."""
    raw = os.fspath(workspace)
    if "\x00" in raw:
        raise PathRefused(raw, "contains a NUL byte")
    if not os.path.isabs(raw):
        raise PathRefused(raw, "the workspace must be an absolute path")
    real = Path(os.path.realpath(raw))
    if not real.is_dir():
        raise PathRefused(raw, "the workspace is not an existing directory")
    return real


def _realpath(path: str, original: str) -> str:
    """Resolve `path` (absolute) like the kernel, also past components that do not exist yet."""
    pending = [p for p in reversed(path.split("/")) if p]
    resolved = "/"
    hops = 0
    while pending:
        name = pending.pop()
        if name == ".":
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, name)
        try:
            st = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            # Does not exist yet: the rest is taken literally (nothing below it can be a link).
            resolved = candidate
            continue
        except OSError as exc:
            raise PathRefused(original, f"cannot inspect {candidate!r}: {exc.strerror}") from exc
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > _MAX_SYMLINK_HOPS:
                raise PathRefused(original, "symlink loop (too many levels of symbolic links)")
            target = os.readlink(candidate)
            if os.path.isabs(target):
                resolved = "/"
            pending.extend(p for p in reversed(target.split("/")) if p)
            continue
        if pending and not stat.S_ISDIR(st.st_mode):
            raise PathRefused(original, f"{candidate!r} is not a directory")
        resolved = candidate
    return resolved


def is_inside(path: Path, root: Path) -> bool:
    """True when `path` is `root` or below it (both already resolved)."""
    return path == root or root in path.parents


def resolve_path(
    workspace: Path,
    path: str,
    *,
    extra_roots: Iterable[Path] = (),
) -> Path:
    """Resolve `path` against the (already resolved) `workspace`, or raise `PathRefused`.

    `extra_roots` are further resolved directories the path may land in (FileRead may read the
    artifact files it was pointed at, which live in the data dir, not in the workspace).
    """
    if not isinstance(path, str):
        raise PathRefused(repr(path), "not a string")
    if "\x00" in path:
        raise PathRefused(path, "contains a NUL byte")
    if path.strip() == "":
        raise PathRefused(path, "empty path")
    if path.startswith("~"):
        raise PathRefused(path, "'~' is not expanded; use a path relative to the workspace")
    joined = path if os.path.isabs(path) else os.path.join(os.fspath(workspace), path)
    real = Path(_realpath(joined, path))
    if is_inside(real, workspace):
        return real
    for root in extra_roots:
        if is_inside(real, root):
            return real
    raise PathRefused(
        path, f"resolves to {os.fspath(real)!r}, outside the workspace {os.fspath(workspace)!r}"
    )


def names_path(workspace: Path, names: Iterable[str], path: Path) -> bool:
    """Whether one of `names` resolves inside `workspace` to `path` (a resolved path): another
    spelling or a link inside that points at it counts; a name that no longer resolves does not."""
    for name in names:
        try:
            if resolve_path(workspace, name) == path:
                return True
        except PathRefused:
            continue  # gone, or never inside: not this file
    return False


def display_path(path: Path, workspace: Path) -> str:
    """How a path is shown to the model: relative to the workspace when inside it."""
    if is_inside(path, workspace):
        rel = os.path.relpath(path, workspace)
        return "." if rel == "." else rel
    return os.fspath(path)
