"""Trust of a workspace: whether what came with the repository may act for the user.

A repository can carry settings (`.openmono/settings.json`), playbooks and other files that
would make the agent run commands, skip approvals, or send the key and the prompt to a server of
the author's choosing the moment someone opens it. Those wait until the user trusted the
workspace: asked once per workspace (like an editor's first-visit trust prompt), or answered
with `openmono config trust [--no]`, and recorded in `<data dir>/trusted-projects.json`:
`{"<workspace folder>": {"trusted": true|false, "at": "<ISO time>", "parts": [...]}}`.

The workspace is the folder `openmono` runs in (`--workspace`, else the current directory): the
folder the tools are confined to, where `AGENTS.md`, memory and playbooks are read. Its own
`.openmono/` is the only project folder read (never a parent's: a folder above the workspace is
not the project the user opened). `workspace_trusted` is the one answer other packages ask for.
Which settings wait is declared on the settings fields (`_fieldtrust`); `load_settings` leaves
them out and says which (`Settings.notes`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openmono_contracts.privatefs import write_private

STORE_NAME = "trusted-projects.json"


def store_path(data_dir: Path | None = None) -> Path:
    """`<data dir>/trusted-projects.json`: the data dir of the environment and the env file,
    never of a settings file (a project file could name a folder that trusts it)."""
    from openmono.config._layers import environ

    return (data_dir or environ().data_dir()) / STORE_NAME


def _read(data_dir: Path | None) -> dict[str, Any]:
    try:
        data = json.loads(store_path(data_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def answer_for(project: Path, data_dir: Path | None = None) -> bool | None:
    """The recorded answer for the workspace `project`, or None when never asked."""
    entry = _read(data_dir).get(str(project.resolve()))
    value = entry.get("trusted") if isinstance(entry, dict) else None
    return value if isinstance(value, bool) else None


def workspace_trusted(workspace: Path, data_dir: Path | None = None) -> bool:
    """Whether the user trusted `workspace` (its folder exactly; a trusted parent does not
    count). Everything a repository brings that can act for the user waits for this."""
    return answer_for(workspace, data_dir) is True


def record(project: Path, trusted: bool, parts: list[str], data_dir: Path | None = None) -> None:
    """Remember the user's answer for `project` (mode 0600: it lists folders the user opened)."""
    data = _read(data_dir)
    data[str(project.resolve())] = {
        "trusted": trusted,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "parts": parts,
    }
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    write_private(store_path(data_dir), text)


HOW = "answer once in the interactive `openmono`, or run `openmono config trust` in the workspace"


@dataclass(frozen=True)
class ProjectTrustQuestion:
    """What of a workspace waits for the user's answer."""

    project: Path  # the workspace folder
    # one line per source: what it brings that waits
    waiting: tuple[str, ...]
    # what is recorded with the answer (dotted settings keys, "playbooks", ...)
    parts: list[str]

    def prompt(self) -> str:
        return (
            f"{self.project} brings {'; '.join(self.waiting)}. These can widen permissions, "
            "send your key and prompts to another server or run commands on this machine. "
            "Trust this project?"
        )

    def left_out(self) -> str:
        return f"Left out {'; '.join(self.waiting)}: the project is not trusted ({HOW})."
