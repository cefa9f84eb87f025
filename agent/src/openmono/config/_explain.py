"""Which layer gave each setting its value (`openmono config show`).

The answer comes from the very sources that built the settings (`_layers`): for every leaf, the
highest source that holds it wins, exactly as pydantic-settings merged them; a leaf no source holds
is the default. Secrets are masked: `SecretStr` fields, every name in
`openmono_contracts.facts.SECRET_NAMES`, and the values of an MCP server's `env` and `headers`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts.facts import SECRET_NAMES
from pydantic import BaseModel, SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from openmono.config._environ import Environ
from openmono.config._layers import (
    FILE_LAYERS,
    ApiKeySource,
    MappingSource,
    agent_sources,
    plain_sources,
)
from openmono.config._load import build_settings, file_layers, flag_values
from openmono.config._settings import Settings

MASK = "********"
_MASKED_MAPS = ("env", "headers")


@dataclass(frozen=True)
class Resolved:
    """One setting: its name, the value as shown (secrets masked) and where it came from."""

    key: str
    value: str
    origin: str


def explain_agent(
    env: Environ,
    cwd: Path | None = None,
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Settings, list[Resolved]]:
    """The agent's settings for a run in `cwd`, and where each value came from."""
    notes: list[str] = []
    layers = file_layers(cwd, config_file, env, notes)
    flags = flag_values(overrides)
    settings = build_settings(layers, flags, env)
    settings.notes.extend(notes)
    token = FILE_LAYERS.set(tuple(layers))
    try:
        sources = agent_sources(Settings, env)
    finally:
        FILE_LAYERS.reset(token)
    named = [("flag", flags), *((label, _data(s)) for label, s in sources)]
    names = [_env_name(source, "OPENMONO_") for _, source in sources]
    return settings, list(_rows(settings, named, [None, *names], _dotted))


def explain_plain(settings: BaseSettings, env: Environ) -> list[Resolved]:
    """Where each value of a settings class read only from env and env file came from."""
    sources = plain_sources(type(settings), env)
    named = [(label, _data(s)) for label, s in sources]
    names = [_env_name(source, "") for _, source in sources]
    return list(_rows(settings, named, names, _upper))


def _data(source: PydanticBaseSettingsSource) -> dict[str, Any]:
    return source()


def _env_name(
    source: PydanticBaseSettingsSource, prefix: str
) -> Callable[[tuple[str, ...]], str] | None:
    """How a source names the variable behind a path (None: its label says it all)."""
    if isinstance(source, ApiKeySource) or not isinstance(source, MappingSource):
        return None
    return lambda path: prefix + "_".join(path).upper()


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _upper(path: tuple[str, ...]) -> str:
    return "_".join(path).upper()


def _rows(
    settings: BaseModel,
    named: list[tuple[str, dict[str, Any]]],
    names: list[Callable[[tuple[str, ...]], str] | None],
    key_of: Callable[[tuple[str, ...]], str],
) -> Iterator[Resolved]:
    for path, value in _leaves(settings, ()):
        key = key_of(path)
        origin = "default"
        for (label, data), name in zip(named, names, strict=True):
            if _holds(data, path):
                origin = f"{label} {name(path)}" if name is not None else label
                break
        yield Resolved(key, _shown(key, path, value), origin)


def _leaves(model: BaseModel, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, (*prefix, name))
        else:
            yield (*prefix, name), value


def _holds(data: Any, path: tuple[str, ...]) -> bool:
    node = data
    for part in path:
        if not isinstance(node, Mapping):
            return True  # a whole value given above this leaf (JSON for a section)
        if part not in node:
            return False
        node = node[part]
    return True


def _shown(key: str, path: tuple[str, ...], value: Any) -> str:
    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else ""
    if key.upper() in SECRET_NAMES or "_".join(path).upper() in SECRET_NAMES:
        return MASK if value else ""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return value
    return json.dumps(_masked(value), sort_keys=True, default=str)


def _masked(value: Any) -> Any:
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        return {
            k: {n: MASK for n in v} if k in _MASKED_MAPS and isinstance(v, dict) else _masked(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value
