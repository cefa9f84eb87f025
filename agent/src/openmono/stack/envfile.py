"""The stack's view of the env file: complete it from `compose/.env.example`, spot placeholders.

Reading and writing it is `openmono.config`'s (one parser, one writer); the names are
re-exported here for the stack's callers.

`ensure_compose_env` makes the one `.env` both paths use (compose and the native stack) complete:
every key of `compose/.env.example`, the secrets generated.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from openmono_contracts.facts import GENERATED_SECRETS

from openmono.config import (
    current_environ,
    ensure_secret,
    read_env_file,
    set_env,
    write_private,
)

__all__ = [
    "ensure_compose_env",
    "ensure_secret",
    "is_placeholder",
    "read_env",
    "set_env",
    "write_private",
]


read_env = read_env_file


PLACEHOLDER_PREFIX = "change-me"


def is_placeholder(value: str) -> bool:
    """True for an empty secret or one still starting with the example's `change-me`."""
    return not value.strip() or value.strip().lower().startswith(PLACEHOLDER_PREFIX)


def ensure_compose_env(path: Path, example: Path) -> list[str]:
    """Make `path` a complete compose env: a new file is the example with its comments, an existing
    one gets the example's keys it lacks (its own values are kept), and every secret in
    GENERATED_SECRETS that is empty or a placeholder is generated, unless the process environment
    sets a real one (compose and the stack read that first). Returns the generated keys."""
    if not path.exists() and example.is_file():
        write_private(path, example.read_text())
    current = read_env(path)
    environment = current_environ().process
    missing = {k: v for k, v in read_env(example).items() if k not in current}
    generated: dict[str, str] = {}
    for key in GENERATED_SECRETS:
        value = missing.get(key, current.get(key, ""))
        if is_placeholder(value) and is_placeholder(environment.get(key, "")):
            generated[key] = secrets.token_urlsafe(32)
    updates = {**missing, **generated}
    if updates or not path.exists():
        set_env(path, updates)
    path.chmod(0o600)
    return sorted(generated)
