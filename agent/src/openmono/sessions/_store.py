"""Where sessions live: `<data_dir>/sessions/<id>.jsonl`, plus an append-only `index.jsonl`.

The index holds one line per session event worth listing (created, titled); `list_sessions` folds it
by id, last line wins, so concurrent writers never rewrite each other's entries.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openmono_contracts.privatefs import ensure_private_root, open_private

from openmono.sessions._errors import SessionError
from openmono.sessions._file import LoadedSession, SessionWriter, load_session
from openmono.sessions._records import SessionHeader, SessionMessage
from openmono.sessions._snapshots import Snapshots

INDEX = "index.jsonl"


@dataclass(frozen=True)
class SessionSummary:
    """One row of `openmono sessions list`."""

    session_id: str
    started_at: str
    updated_at: str
    working_directory: str
    model: str | None
    title: str | None
    path: Path


class SessionStore:
    """Creates, finds, lists and resumes sessions under one data dir."""

    def __init__(self, data_dir: Path) -> None:
        # every surface (-p, the TUI, ACP) opens its sessions here: a data dir an older version
        # left 0755 is tightened once, before anything is written into it
        ensure_private_root(data_dir)
        self.root = data_dir / "sessions"

    def path_for(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def snapshots(self, session_id: str) -> Snapshots:
        return Snapshots(self.root / session_id / "snapshots")

    def _index(self, entry: dict[str, Any]) -> None:
        with open_private(self.root / INDEX, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def create(self, header: SessionHeader) -> SessionWriter:
        """A new session file with `header` as line 1, registered in the index."""
        path = self.path_for(header.session_id)
        if path.exists():
            raise SessionError(f"session {header.session_id} already exists")
        writer = SessionWriter(path, header)
        self._index(header.model_dump(include={"session_id", "started_at", "working_directory",
                                               "model"}))  # fmt: skip
        return writer

    def set_title(self, session_id: str, title: str) -> None:
        self._index({"session_id": session_id, "title": " ".join(title.split())[:100]})

    def resolve(self, ref: str) -> str:
        """A full id from an id, a unique prefix, or `last`."""
        if ref == "last":
            rows = self.list_sessions()
            if not rows:
                raise SessionError("no sessions yet")
            return rows[0].session_id
        if self.path_for(ref).is_file():
            return ref
        matches = [p.stem for p in self.root.glob(f"{ref}*.jsonl")] if self.root.is_dir() else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionError(f"no session {ref!r}")
        raise SessionError(f"{ref!r} matches {len(matches)} sessions; give more of the id")

    def load(self, ref: str) -> LoadedSession:
        return load_session(self.path_for(self.resolve(ref)))

    def reopen(self, loaded: LoadedSession) -> SessionWriter:
        """A writer that appends to an existing session (resume)."""
        return SessionWriter(loaded.path, loaded.header)

    def list_sessions(self) -> list[SessionSummary]:
        """Newest first; sessions missing from the index (older files) are read from disk."""
        entries: dict[str, dict[str, Any]] = {}
        index = self.root / INDEX
        if index.is_file():
            for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict) and isinstance(row.get("session_id"), str):
                    entries.setdefault(row["session_id"], {}).update(row)
        rows: list[SessionSummary] = []
        for path in self.root.glob("*.jsonl") if self.root.is_dir() else ():
            if path.name == INDEX:
                continue
            entry = entries.get(path.stem)
            if entry is None or "started_at" not in entry:
                try:
                    header = load_session(path).header
                except SessionError:
                    continue
                entry = {**header.model_dump(), **(entry or {})}
            mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            rows.append(
                SessionSummary(
                    session_id=path.stem,
                    started_at=str(entry.get("started_at", "")),
                    updated_at=mtime.isoformat(timespec="seconds"),
                    working_directory=str(entry.get("working_directory", "")),
                    model=entry.get("model"),
                    title=entry.get("title"),
                    path=path,
                )
            )
        rows.sort(key=lambda r: (r.updated_at, r.session_id), reverse=True)
        return rows


def first_user_text(messages: list[SessionMessage]) -> str | None:
    for message in messages:
        if message.role == "user" and message.content:
            return message.content
    return None
