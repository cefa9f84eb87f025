"""Read and update a compose-style `.env` file in place, atomically, mode 0600 (holds secrets)."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from openmono_contracts.atomicfile import atomic_write

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_env(path: Path) -> dict[str, str]:
    """Keys and values of `path` (missing file: empty). Quotes around a value are removed."""
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        m = _LINE.match(raw)  # a comment never matches: a key starts with a letter or `_`
        if m:
            values[m.group(1)] = _unquote(m.group(2))
    return values


def set_env(path: Path, updates: dict[str, str]) -> list[str]:
    """Set keys in `path`, keeping comments and order; returns the keys whose value changed."""
    lines = path.read_text().splitlines() if path.is_file() else []
    changed: list[str] = []
    pending = dict(updates)
    for i, raw in enumerate(lines):
        m = _LINE.match(raw)
        if m and m.group(1) in pending:
            key = m.group(1)
            new = pending.pop(key)
            if _unquote(m.group(2)) != new:
                lines[i] = f"{key}={new}"
                changed.append(key)
    for key, value in pending.items():
        lines.append(f"{key}={value}")
        changed.append(key)
    if changed or not path.exists():
        write_private(path, "\n".join(lines) + "\n")
    return changed


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def ensure_secret(path: Path, key: str, nbytes: int = 32) -> tuple[str, bool]:
    """The value of `key` in `path`, generated (URL-safe random) when missing or empty."""
    current = read_env(path).get(key, "")
    if current:
        return current, False
    value = secrets.token_urlsafe(nbytes)
    set_env(path, {key: value})
    return value, True


def write_private(path: Path, text: str) -> None:
    """Replace `path` atomically, readable by its owner only: a crash never leaves a half-written
    secrets file."""
    atomic_write(path, text, mode=0o600)
