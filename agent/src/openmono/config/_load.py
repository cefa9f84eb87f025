"""Find, read and merge the settings files, then build `Settings` with env and flags on top."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openmono_contracts.facts import PROJECT_DIR
from pydantic import ValidationError

from openmono.config import _project_trust
from openmono.config._environ import Environ
from openmono.config._errors import ConfigError
from openmono.config._fieldtrust import untrusted_view
from openmono.config._layers import ENVIRON, FILE_LAYERS, FileLayer, deep_merge, environ
from openmono.config._settings import Settings

FILE_NAME = "settings.json"


def user_settings_file(env: Environ | None = None) -> Path:
    """`<data dir>/settings.json`: `OPENMONO_DATA_DIR` from the environment or the env file, else
    `~/.openmono`."""
    return (env or environ()).data_dir() / FILE_NAME


def find_project_file(cwd: Path | None = None, env: Environ | None = None) -> Path | None:
    """`<workspace>/.openmono/settings.json` when it exists (never the user file, never a
    parent's: the workspace is the project, `_project_trust` says why)."""
    user = user_settings_file(env).resolve()
    candidate = (cwd or Path.cwd()).resolve() / PROJECT_DIR / FILE_NAME
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


def load_settings(
    cwd: Path | None = None,
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Environ | None = None,
) -> Settings:
    """Settings for a run in `cwd`: files, env file, env, then `overrides` (the flags; dotted keys
    ok). `env` is the environment to resolve from (default: this process's, read now)."""
    env = env or environ()
    notes: list[str] = []
    layers = file_layers(cwd, config_file, env, notes)
    settings = build_settings(layers, flag_values(overrides), env)
    settings.notes.extend(notes)
    return settings


def file_layers(
    cwd: Path | None, config_file: Path | None, env: Environ, notes: list[str] | None = None
) -> list[FileLayer]:
    """The settings files of a run in `cwd`, lowest first: user, project, `--config`. Of an
    untrusted project's file only what cannot widen a permission or move where anything is
    sent applies (`_fieldtrust`); what was left out is added to `notes`."""
    layers = [FileLayer("user file", read_settings_file(user_settings_file(env)))]
    project = find_project_file(cwd, env)
    if project is not None:
        data = read_settings_file(project)
        if not _project_trust.workspace_trusted(project.parent.parent, env.data_dir()):
            data, left = untrusted_view(Settings, data)
            if left and notes is not None:
                notes.append(_question(project.parent.parent, [_waiting(project, left)]).left_out())
        layers.append(FileLayer(f"project file {project}", data))
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"--config {config_file}: no such file")
        layers.append(FileLayer(f"--config {config_file}", read_settings_file(config_file)))
    return layers


def flag_values(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The flags that were given (None = not given), as nested values."""
    return expand_dotted({k: v for k, v in (overrides or {}).items() if v is not None})


def _waiting(settings_file: Path, left: list[str]) -> tuple[str, list[str]]:
    return f"{', '.join(left)} from {settings_file}", left


def _question(
    workspace: Path, waiting: Sequence[tuple[str, list[str]]]
) -> _project_trust.ProjectTrustQuestion:
    return _project_trust.ProjectTrustQuestion(
        workspace.resolve(),
        tuple(what for what, _ in waiting),
        [part for _, parts in waiting for part in parts],
    )


def left_out_settings(cwd: Path | None = None, env: Environ | None = None) -> list[str]:
    """The dotted keys of the project file that wait for trust ([] when it is trusted)."""
    env = env or environ()
    workspace = (cwd or Path.cwd()).resolve()
    if _project_trust.workspace_trusted(workspace, env.data_dir()):
        return []
    return _keys_that_wait(workspace, env)


def _keys_that_wait(workspace: Path, env: Environ) -> list[str]:
    project = find_project_file(workspace, env)
    return [] if project is None else untrusted_view(Settings, read_settings_file(project))[1]


def project_trust_question(
    cwd: Path | None = None,
    also: Sequence[tuple[str, list[str]]] = (),
    *,
    even_if_answered: bool = False,
) -> _project_trust.ProjectTrustQuestion | None:
    """What of the workspace `cwd` waits for an answer: its settings file's keys that wait,
    plus `also` (what other packages found, each as (what, parts)). None: nothing waits, or
    (unless `even_if_answered`) the user answered already: trusted, or declined (not asked
    again; it stays left out)."""
    env = environ()
    workspace = (cwd or Path.cwd()).resolve()
    if not even_if_answered and _project_trust.answer_for(workspace, env.data_dir()) is not None:
        return None
    waiting = [*also]
    project = find_project_file(workspace, env)
    left = _keys_that_wait(workspace, env)
    if project is not None and left:
        waiting.insert(0, _waiting(project, left))
    return _question(workspace, waiting) if waiting else None


def build_settings(
    files: list[FileLayer], flags: Mapping[str, Any], env: Environ | None = None
) -> Settings:
    """`Settings` from the file layers (lowest first) below the env file and the environment,
    and `flags` above them."""
    layers_token = FILE_LAYERS.set(tuple(files))
    env_token = ENVIRON.set(env or environ())
    try:
        return Settings(**flags)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {exc}") from exc
    finally:
        ENVIRON.reset(env_token)
        FILE_LAYERS.reset(layers_token)
