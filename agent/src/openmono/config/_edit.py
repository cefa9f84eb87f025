"""`openmono config get|set`: read a dotted key from the effective settings, write one to a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.atomicfile import atomic_write
from openmono_contracts.facts import PROJECT_DIR
from pydantic import BaseModel, SecretStr

from openmono.config._errors import ConfigError
from openmono.config._layers import FileLayer, deep_merge
from openmono.config._load import (
    FILE_NAME,
    build_settings,
    expand_dotted,
    read_settings_file,
    user_settings_file,
)
from openmono.config._settings import Settings

Scope = Literal["user", "project"]


def settings_file(scope: Scope, cwd: Path | None = None) -> Path:
    """The file `config set` writes: the user file or `<cwd>/.openmono/settings.json`."""
    if scope == "user":
        return user_settings_file()
    return (cwd or Path.cwd()) / PROJECT_DIR / FILE_NAME


def get_value(settings: Settings, key: str, reveal: bool = False) -> Any:
    """The value at dotted `key` (secrets masked unless `reveal`)."""
    node: Any = settings
    for part in key.split("."):
        if isinstance(node, dict):
            if part not in node:
                raise ConfigError(f"unknown setting: {key}")
            node = node[part]
        elif isinstance(node, BaseModel) and part in type(node).model_fields:
            node = getattr(node, part)
        else:
            raise ConfigError(f"unknown setting: {key}")
    return _plain(node, reveal)


def _plain(value: Any, reveal: bool) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value() if reveal else "********"
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k), reveal) for k in type(value).model_fields}
    if isinstance(value, dict):
        return {k: _plain(v, reveal) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


def parse_value(raw: str) -> Any:
    """JSON when it parses (`true`, `3`, `["a"]`), else the plain string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def set_value(path: Path, key: str, raw: str) -> Any:
    """Set dotted `key` in the settings file at `path` (validated, written atomically)."""
    current = read_settings_file(path)
    value = parse_value(raw)
    candidates = [value] if value == raw else [value, raw]
    last: ConfigError | None = None
    for candidate in candidates:
        updated = deep_merge(current, expand_dotted({key: candidate}))
        try:
            settings = build_settings([FileLayer(str(path), updated)], {})
            get_value(settings, key)
        except ConfigError as exc:
            last = exc
            continue
        _write_atomic(path, updated)
        return candidate
    raise last or ConfigError(f"cannot set {key}")


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Replace the settings file whole; mode 0600 because it may hold the API key."""
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n", mode=0o600)
