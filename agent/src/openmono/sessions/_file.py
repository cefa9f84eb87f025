"""Append-only session files: each message is written, flushed and fsynced before we go on.

A process killed mid-write leaves at most one torn last line; `load_session` skips it and
`SessionWriter` cuts it off before appending again, so the file stays one JSON object per line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from openmono.sessions._errors import SessionError
from openmono.sessions._records import SessionHeader, SessionMessage


@dataclass
class LoadedSession:
    """A session read back: header, messages, and how many unreadable lines were skipped."""

    path: Path
    header: SessionHeader
    messages: list[SessionMessage] = field(default_factory=list)
    skipped_lines: int = 0


def load_session(path: Path) -> LoadedSession:
    """Read a session file; a torn or corrupt line is skipped (and counted), never fatal."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"{path}: {exc}") from exc
    lines = raw.split(b"\n")
    header: SessionHeader | None = None
    messages: list[SessionMessage] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if header is None:
                header = SessionHeader.model_validate(data)
            else:
                messages.append(SessionMessage.model_validate(data))
        except (ValueError, ValidationError):
            skipped += 1
    if header is None:
        raise SessionError(f"{path}: no session header")
    return LoadedSession(path, header, messages, skipped)


def _cut_torn_tail(path: Path) -> None:
    """Drop bytes after the last newline (a line a killed writer never finished)."""
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        pos = size
        while pos > 0:
            step = min(4096, pos)
            fh.seek(pos - step)
            chunk = fh.read(step)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                fh.truncate(pos - step + idx + 1)
                return
            pos -= step
        fh.truncate(0)


class SessionWriter:
    """Appends messages to one session file, durably, one line each."""

    def __init__(self, path: Path, header: SessionHeader, *, fsync: bool = True) -> None:
        self.path = path
        self.header = header
        self._fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            _cut_torn_tail(path)
        self._fh: IO[str] | None = path.open("a", encoding="utf-8")
        if fresh:
            self._write(header.model_dump_json() + "\n")

    def _write(self, line: str) -> None:
        if self._fh is None:
            raise SessionError(f"{self.path}: writer is closed")
        self._fh.write(line)
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def append(self, message: SessionMessage) -> None:
        """Write one message line and make it durable before returning."""
        self._write(message.to_line())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
