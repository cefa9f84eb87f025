"""Find, read and merge the settings files, then build `Settings` with env and flags on top."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from openmono.config import _project_trust
from openmono.config._errors import ConfigError
from openmono.config._layers import FILE_LAYERS
from openmono.config._settings import Settings

PROJECT_DIR = ".openmono"
FILE_NAME = "settings.json"


def user_settings_file() -> Path:
    """`$OPENMONO_DATA_DIR/settings.json`, else `~/.openmono/settings.json`."""
    base = os.environ.get("OPENMONO_DATA_DIR") or "~/.openmono"
    return Path(base).expanduser() / FILE_NAME


def find_project_file(cwd: Path | None = None) -> Path | None:
    """The nearest `.openmono/settings.json` in `cwd` or a parent (never the user file)."""
    user = user_settings_file().resolve()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_DIR / FILE_NAME
        if candidate.is_file() and candidate.resolve() != user:
            return candidate
    return None


def read_settings_file(path: Path) -> dict[str, Any]:
    """A settings file as nested dicts (dotted keys such as `"llm.endpoint"` are expanded)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read settings: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: settings must be a JSON object")
    return expand_dotted(data)


def expand_dotted(data: Mapping[str, Any]) -> dict[str, Any]:
    """`{"llm.endpoint": x}` → `{"llm": {"endpoint": x}}`, recursively merged with nested forms."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        parts = key.split(".")
        nested: Any = expand_dotted(value) if isinstance(value, Mapping) else value
        for part in reversed(parts[1:]):
            nested = {part: nested}
        out = deep_merge(out, {parts[0]: nested})
    return out


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """`top` over `base`; nested mappings merge, everything else is replaced."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def load_settings(
    cwd: Path | None = None,
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings for a run in `cwd`: files, env, then `overrides` (the flags; dotted keys ok)."""
    layers: dict[str, Any] = read_settings_file(user_settings_file())
    project = find_project_file(cwd)
    notes: list[str] = []
    if project is not None:
        data = read_settings_file(project)
        question = _untrusted(project, data)
        if question is not None:
            data = _project_trust.without_risky(data)
            notes.append(question.left_out())
        layers = deep_merge(layers, data)
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"--config {config_file}: no such file")
        layers = deep_merge(layers, read_settings_file(config_file))
    flags = expand_dotted({k: v for k, v in (overrides or {}).items() if v is not None})
    settings = build_settings(layers, flags)
    settings.notes.extend(notes)
    return settings


def _untrusted(
    settings_file: Path, data: dict[str, Any]
) -> _project_trust.ProjectTrustQuestion | None:
    parts = _project_trust.risky_parts(data)
    project = settings_file.parent.parent
    if not parts or _project_trust.answer_for(project) is True:
        return None
    return _project_trust.ProjectTrustQuestion(project, settings_file, parts)


def project_trust_question(cwd: Path | None = None) -> _project_trust.ProjectTrustQuestion | None:
    """The project file's risky parts when they wait for an answer (None: nothing to ask).

    A project the user declined is not asked again (its parts stay left out)."""
    project = find_project_file(cwd)
    if project is None:
        return None
    question = _untrusted(project, read_settings_file(project))
    if question is None or _project_trust.answer_for(question.project) is False:
        return None
    return question


def build_settings(files: Mapping[str, Any], flags: Mapping[str, Any]) -> Settings:
    """`Settings` from merged file layers below the environment and `flags` above it."""
    token = FILE_LAYERS.set(dict(files))
    try:
        return Settings(**flags)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {exc}") from exc
    finally:
        FILE_LAYERS.reset(token)
