"""The settings sources of every settings class, in the one order `_environ` describes.

A source is a pydantic-settings source that turns one layer into nested values: the environment
and the env file are read by the same `MappingSource` (pydantic-settings' own env parsing, over a
mapping we hand it), so `OPENMONO_LLM_API_KEY` means the same in the shell and in `compose/.env`.
Each comes with a label, so `openmono config show` can say where a value came from using the very
sources that produced it.

The settings files depend on the working directory and `--config`, so `load_settings` puts them
in a context variable for the duration of one `Settings(...)` construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from openmono_contracts.facts import API_KEY_ENV, GATEWAY_PORT, LOOPBACK
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource

from openmono.config._environ import GATEWAY_PORT_ENV, Environ, current

KEY_ENV = API_KEY_ENV


@dataclass(frozen=True)
class FileLayer:
    """One settings file's (expanded) contents and what to call it."""

    label: str
    data: dict[str, Any]


# The settings files of this construction, lowest first (user, project, --config).
FILE_LAYERS: ContextVar[tuple[FileLayer, ...]] = ContextVar("openmono_file_layers", default=())
# The environment of this construction (tests and `config show` pass their own).
ENVIRON: ContextVar[Environ | None] = ContextVar("openmono_environ", default=None)


def environ() -> Environ:
    """The `Environ` of the construction under way, else the process's own, read now."""
    return ENVIRON.get() or current()


class MappingSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping (the env, or the env file)."""

    def __init__(self, settings_cls: type[BaseSettings], mapping: Mapping[str, str]) -> None:
        self._mapping = dict(mapping)
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        if self.case_sensitive:
            return dict(self._mapping)
        return {k.lower(): v for k, v in self._mapping.items()}


class ApiKeySource(PydanticBaseSettingsSource):
    """`LLAMA_API_KEY` (the stack's own name for the key) as `llm.api_key`, below `OPENMONO_*` of
    the same layer."""

    def __init__(self, settings_cls: type[BaseSettings], mapping: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._key = mapping.get(KEY_ENV, "")

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return {"llm": {"api_key": self._key}} if self._key else {}


class FileLayersSource(PydanticBaseSettingsSource):
    """The user, project and `--config` files, merged (`load_settings` read them)."""

    def __init__(self, settings_cls: type[BaseSettings], layers: tuple[FileLayer, ...]) -> None:
        super().__init__(settings_cls)
        self._layers = layers

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for layer in self._layers:
            merged = deep_merge(merged, layer.data)
        return merged


class GatewayDefaultSource(PydanticBaseSettingsSource):
    """The default endpoint follows `GATEWAY_PORT` (environment, then env file): the agent talks
    to the gateway the stack of this box runs."""

    def __init__(self, settings_cls: type[BaseSettings], env: Environ) -> None:
        super().__init__(settings_cls)
        self._port = env.get(GATEWAY_PORT_ENV)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        port = (self._port or "").strip()
        if not port or port == str(GATEWAY_PORT):
            return {}
        return {"llm": {"endpoint": f"http://{LOOPBACK}:{port}"}}


def agent_sources(
    settings_cls: type[BaseSettings], env: Environ | None = None
) -> list[tuple[str, PydanticBaseSettingsSource]]:
    """The agent's sources below the flags, highest first, each with its label."""
    env = env or environ()
    sources: list[tuple[str, PydanticBaseSettingsSource]] = [
        ("environment", MappingSource(settings_cls, env.process)),
        (f"environment {KEY_ENV}", ApiKeySource(settings_cls, env.process)),
        ("env file", MappingSource(settings_cls, env.file)),
        (f"env file {KEY_ENV}", ApiKeySource(settings_cls, env.file)),
    ]
    layers = FILE_LAYERS.get()
    for layer in reversed(layers):
        sources.append((layer.label, FileLayersSource(settings_cls, (layer,))))
    sources.append(
        (
            f"default from {GATEWAY_PORT_ENV} ({env.origin(GATEWAY_PORT_ENV)})",
            GatewayDefaultSource(settings_cls, env),
        )
    )
    return sources


def plain_sources(
    settings_cls: type[BaseSettings], env: Environ | None = None
) -> list[tuple[str, PydanticBaseSettingsSource]]:
    """A class read from the environment and the env file only (the stack's), highest first."""
    env = env or environ()
    return [
        ("environment", MappingSource(settings_cls, env.process)),
        ("env file", MappingSource(settings_cls, env.file)),
    ]


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """`top` over `base`; nested mappings merge, everything else is replaced."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
