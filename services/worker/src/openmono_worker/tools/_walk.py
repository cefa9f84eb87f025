"""Walk a directory the way ripgrep does by default, for the tools that do it in Python.

Order: entries of each directory sorted by name, directories entered where they sort (the order of
`rg --sort path`). Skipped: hidden entries (leading `.`), symlinks (never followed, so a walk
never leaves the workspace), and what `.gitignore` files exclude, read from the workspace root down
to each directory. Supported `.gitignore` syntax: comments, `!` negation (last match wins), a
trailing `/` for directories only, a `/` inside or in front anchoring the pattern to that file's
directory, `*`, `?`, `**`, `[...]`. Not read: `.git/info/exclude`, the global excludes file,
`.ignore` files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from openmono_worker.tools._globs import compile_glob, glob_match

Override = Callable[[str], bool | None]


@dataclass(frozen=True)
class _Rule:
    base: str  # directory of the .gitignore, relative to the workspace ("" = root)
    pattern: str
    negate: bool
    dir_only: bool
    anchored: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not rel.startswith(self.base + "/"):
                return False
            rel = rel[len(self.base) + 1 :]
        if self.anchored:
            return compile_glob(self.pattern).match(rel) is not None
        return glob_match(self.pattern, rel)


def _read_rules(directory: Path, base: str) -> list[_Rule]:
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.lstrip("/")
        if line:
            rules.append(_Rule(base, line, negate, dir_only, anchored))
    return rules


def _ignored(rules: list[_Rule], rel: str, is_dir: bool) -> bool:
    verdict = False
    for rule in rules:
        if rule.matches(rel, is_dir):
            verdict = not rule.negate
    return verdict


def _rel(path: Path, workspace: Path) -> str:
    rel = path.relative_to(workspace).as_posix()
    return "" if rel == "." else rel


def walk_files(
    root: Path,
    workspace: Path,
    *,
    respect_ignore: bool = True,
    override: Override | None = None,
) -> Iterator[Path]:
    """Files under `root` (resolved, inside `workspace` or an extra read root), in rg order.

    `override(path relative to root)` decides for files like ripgrep's `--glob`: True includes
    the file even if hidden or ignored, False excludes it, None leaves it to the usual rules.
    """
    rules: list[_Rule] = []
    inside = root == workspace or workspace in root.parents
    if respect_ignore and inside:
        # The .gitignore files of the directories from the workspace root down to `root`'s parent
        # (`root`'s own is read by `_walk`).
        for directory in reversed(root.parents):
            if directory == workspace or workspace in directory.parents:
                rules.extend(_read_rules(directory, _rel(directory, workspace)))
    walk = _Walk(root, workspace if inside else root, respect_ignore, override)
    yield from walk.files(root, rules)


@dataclass(frozen=True)
class _Walk:
    root: Path
    base: Path
    respect: bool
    override: Override | None

    def files(self, directory: Path, rules: list[_Rule]) -> Iterator[Path]:
        if self.respect:
            rules = rules + _read_rules(directory, _rel(directory, self.base))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if not self._skipped(entry.name, path, rules, True):
                    yield from self.files(path, rules)
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            verdict = None
            if self.override is not None:
                verdict = self.override(path.relative_to(self.root).as_posix())
            if verdict or (verdict is None and not self._skipped(entry.name, path, rules, False)):
                yield path

    def _skipped(self, name: str, path: Path, rules: list[_Rule], is_dir: bool) -> bool:
        if name.startswith("."):
            return True
        return self.respect and _ignored(rules, _rel(path, self.base), is_dir)
