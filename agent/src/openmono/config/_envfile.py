"""The env file (`compose/.env`): its one parser and its one writer.

Read by every command (`_environ`), written by `make up`, `openmono setup`, `openmono serve` (the
ACP token) and `openmono tunnel config`: in place, keeping comments and order, atomically, mode
0600 (it holds secrets), so a crash never leaves half a secrets file.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from openmono_contracts.atomicfile import atomic_write

from openmono.config._errors import ConfigError

ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def unquote(value: str) -> str:
    """The value without one pair of surrounding quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def read_env_file(path: Path) -> dict[str, str]:
    """Keys and values of a compose-style `.env` file (missing file: empty); quotes removed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the env file: {exc.strerror or exc}") from exc
    values: dict[str, str] = {}
    for raw in text.splitlines():
        m = ENV_LINE.match(raw)  # a comment never matches: a key starts with a letter or `_`
        if m:
            values[m.group(1)] = unquote(m.group(2))
    return values


def set_env(path: Path, updates: dict[str, str]) -> list[str]:
    """Set keys in `path`, keeping comments and order; returns the keys whose value changed."""
    lines = path.read_text().splitlines() if path.is_file() else []
    changed: list[str] = []
    pending = dict(updates)
    for i, raw in enumerate(lines):
        m = ENV_LINE.match(raw)
        if m and m.group(1) in pending:
            key = m.group(1)
            new = pending.pop(key)
            if unquote(m.group(2)) != new:
                lines[i] = f"{key}={new}"
                changed.append(key)
    for key, value in pending.items():
        lines.append(f"{key}={value}")
        changed.append(key)
    if changed or not path.exists():
        write_private(path, "\n".join(lines) + "\n")
    return changed


def ensure_secret(path: Path, key: str, nbytes: int = 32) -> tuple[str, bool]:
    """The value of `key` in `path`, generated (URL-safe random) when missing or empty."""
    current = read_env_file(path).get(key, "")
    if current:
        return current, False
    value = secrets.token_urlsafe(nbytes)
    set_env(path, {key: value})
    return value, True


def write_private(path: Path, text: str) -> None:
    """Replace `path` atomically, readable by its owner only."""
    atomic_write(path, text, mode=0o600)
