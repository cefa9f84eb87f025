"""What a permission pattern is matched against: the strings that say what a call touches.

A pattern `GLOB` matches when any subject of the call matches it (`*` also crosses `/`); a pattern
`key=GLOB` matches one named argument only. Paths are offered both as written and resolved against
the workspace, so `src/*` and `/work/proj/src/*` both work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openmono_contracts.toolfacts import ToolFacts

_PATCH_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", re.MULTILINE)


def resolve_path(raw: str, workspace: Path) -> Path:
    """`raw` made absolute against the workspace, `~` expanded, `..` and symlinks resolved."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workspace / path
    return path.resolve()


def written_paths(facts: ToolFacts, args: Mapping[str, Any]) -> list[str]:
    """The paths a call names as written: its path arguments, and the files its diffs touch."""
    raws = [str(args[k]) for k in facts.path_params if isinstance(args.get(k), str) and args[k]]
    for key in facts.diff_params:
        if isinstance(args.get(key), str):
            raws += [m for m in _PATCH_PATH.findall(args[key]) if m != "/dev/null"]
    return raws


def call_paths(facts: ToolFacts, args: Mapping[str, Any], workspace: Path) -> list[Path]:
    """Every filesystem path a call names, resolved."""
    return [resolve_path(r, workspace) for r in written_paths(facts, args)]


def call_subjects(facts: ToolFacts, args: Mapping[str, Any], workspace: Path) -> list[str]:
    """The strings a bare pattern is matched against."""
    if facts.shell_param:
        return [str(args.get(facts.shell_param, ""))]
    subjects: list[str] = []
    for key in facts.path_params:
        value = args.get(key)
        if isinstance(value, str) and value:
            subjects.append(value)
    subjects += [str(p) for p in call_paths(facts, args, workspace)]
    url = args.get("url")
    if isinstance(url, str):
        subjects += [url, urlsplit(url).hostname or ""]
    for key in ("query", "pattern"):
        value = args.get(key)
        if isinstance(value, str):
            subjects.append(value)
    if not subjects:
        subjects = [str(v) for v in args.values() if isinstance(v, str | int | float)]
    return subjects


def pattern_matches(
    pattern: str, facts: ToolFacts, args: Mapping[str, Any], workspace: Path
) -> bool:
    """Does one rule pattern match this call?"""
    if pattern in ("", "*"):
        return True
    key, sep, glob = pattern.partition("=")
    if sep and key.isidentifier() and key in args:
        return fnmatchcase(str(args[key]), glob)
    return any(fnmatchcase(s, pattern) for s in call_subjects(facts, args, workspace))
