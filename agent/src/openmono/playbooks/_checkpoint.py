"""A run's checkpoint: parameters, completed steps, state, written atomically after every step.

One file per (workspace, playbook): `<data dir>/playbook-runs/<workspace key>/<name>.json`, the
workspace key being its folder name plus a short hash of its path, so two projects never resume
each other's runs. `write_private` (atomic, 0600) means a crash leaves the previous checkpoint or
the new one, never a torn file; `--resume` continues after the last completed step.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.privatefs import write_private
from pydantic import BaseModel, Field, ValidationError

from openmono.playbooks._errors import ResumeError
from openmono.sessions import new_session_id, now_iso

RunStatus = Literal["running", "done", "denied", "failed", "stopped"]


class RunState(BaseModel):
    """What a run has done so far."""

    run_id: str = Field(default_factory=new_session_id)
    playbook: str
    version: str
    source: str
    workspace: str
    parameters: dict[str, Any]
    completed: list[str] = Field(default_factory=list)
    state: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, str] = Field(default_factory=dict)
    status: RunStatus = "running"
    stopped_at: str | None = None
    error: str | None = None
    transcript: str | None = None
    started_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)


def checkpoint_path(data_dir: Path, workspace: Path, name: str) -> Path:
    resolved = workspace.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return data_dir.expanduser() / "playbook-runs" / f"{resolved.name}-{digest}" / f"{name}.json"


def save(path: Path, run: RunState) -> None:
    run.updated_at = now_iso()
    text = json.dumps(run.model_dump(mode="json"), indent=2, ensure_ascii=False)
    write_private(path, text + "\n")


def load(path: Path) -> RunState:
    if not path.is_file():
        raise ResumeError(f"nothing to resume: no checkpoint at {path}")
    try:
        return RunState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        raise ResumeError(f"the checkpoint {path} cannot be read: {exc}") from None
