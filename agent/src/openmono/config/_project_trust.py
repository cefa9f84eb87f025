"""Trust of a project's settings file that can run code: hooks, MCP servers, `yolo`.

A `.openmono/settings.json` comes with the repository, so whoever wrote it could make the agent run
commands (hooks, stdio MCP servers) or skip every approval (`permissions.yolo`) the moment someone
opens the project. Those parts apply only once the user trusted the project, asked once per project
(like an editor's first-visit trust prompt) and recorded in `<data dir>/trusted-projects.json`:
`{"<project folder>": {"trusted": true|false, "at": "<ISO time>", "parts": [...]}}`.

Until then `load_settings` leaves those parts out and says so (`Settings.notes`); the interactive
`openmono` asks, `openmono config trust [--no]` answers without asking. Everything else in the
project file (endpoint, model, permission rules that only narrow) applies as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openmono_contracts.atomicfile import atomic_write

STORE_NAME = "trusted-projects.json"


def risky_parts(data: dict[str, Any]) -> list[str]:
    """The parts of a settings mapping that can run code or lift approvals."""
    parts = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and any(hooks.values()):
        parts.append("hooks")
    if data.get("mcp_servers"):
        parts.append("mcp_servers")
    permissions = data.get("permissions")
    if isinstance(permissions, dict) and permissions.get("yolo"):
        parts.append("permissions.yolo")
    return parts


def without_risky(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with hooks, MCP servers and `permissions.yolo` left out."""
    out = {k: v for k, v in data.items() if k not in ("hooks", "mcp_servers")}
    if isinstance(out.get("permissions"), dict):
        out["permissions"] = {k: v for k, v in out["permissions"].items() if k != "yolo"}
    return out


def store_path(data_dir: Path | None = None) -> Path:
    """`<data dir>/trusted-projects.json` (the data dir as every setting resolves it)."""
    from openmono.config._layers import environ

    return (data_dir or environ().data_dir()) / STORE_NAME


def _read(data_dir: Path | None) -> dict[str, Any]:
    try:
        data = json.loads(store_path(data_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def answer_for(project: Path, data_dir: Path | None = None) -> bool | None:
    """The recorded answer for `project` (its folder), or None when never asked."""
    entry = _read(data_dir).get(str(project.resolve()))
    value = entry.get("trusted") if isinstance(entry, dict) else None
    return value if isinstance(value, bool) else None


def record(project: Path, trusted: bool, parts: list[str], data_dir: Path | None = None) -> None:
    """Remember the user's answer for `project` (mode 0600: it lists folders the user opened)."""
    data = _read(data_dir)
    data[str(project.resolve())] = {
        "trusted": trusted,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "parts": parts,
    }
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    atomic_write(store_path(data_dir), text, mode=0o600)


@dataclass(frozen=True)
class ProjectTrustQuestion:
    """A project file whose risky parts wait for the user's answer."""

    project: Path  # the folder that holds `.openmono/`
    settings_file: Path
    parts: list[str]

    def prompt(self) -> str:
        return (
            f"{self.settings_file} turns on {', '.join(self.parts)}, which can run commands "
            "on this machine. Trust this project?"
        )

    def left_out(self) -> str:
        return (
            f"Left out {', '.join(self.parts)} from {self.settings_file}: the project is not "
            "trusted (answer once in the interactive `openmono`, or run `openmono config trust`)."
        )
