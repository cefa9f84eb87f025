"""Append-only session files: each message is written and flushed before we go on.

Flushed means in the kernel: a process killed mid-write (kill -9) leaves at most one torn last
line; `load_session` skips it and `SessionWriter` cuts it off before appending again, so the file
stays one JSON object per line. For power loss the file is also fsynced, by a background thread
that coalesces appends: an fsync costs milliseconds on a busy disk, and the loop must not wait for
one per message. `close()` waits for the last fsync.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from openmono_contracts.privatefs import open_private, private_dir
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


class _Syncer:
    """Fsyncs one file descriptor in the background whenever `poke()` was called since last time."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._wake = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="session-fsync", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            try:
                os.fsync(self._fd)
            except OSError:
                return
            if self._stop:
                return

    def close(self) -> None:
        self._stop = True
        self._wake.set()
        self._thread.join(30)


class SessionWriter:
    """Appends messages to one session file, one flushed line each (fsynced in the background)."""

    def __init__(self, path: Path, header: SessionHeader, *, fsync: bool = True) -> None:
        self.path = path
        self.header = header
        private_dir(path.parent)
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            _cut_torn_tail(path)
        # tool outputs may hold secrets: the session is its owner's alone (privatefs)
        self._fh: IO[str] | None = open_private(path, "a", encoding="utf-8")
        self._syncer = _Syncer(self._fh.fileno()) if fsync else None
        if fresh:
            self._write(header.model_dump_json() + "\n")

    def _write(self, line: str) -> None:
        if self._fh is None:
            raise SessionError(f"{self.path}: writer is closed")
        self._fh.write(line)
        self._fh.flush()
        if self._syncer is not None:
            self._syncer.poke()

    def append(self, message: SessionMessage) -> None:
        """Write one message line; it is in the kernel (safe from a killed process) on return."""
        self._write(message.to_line())

    def close(self) -> None:
        if self._syncer is not None:
            self._syncer.close()
            self._syncer = None
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
