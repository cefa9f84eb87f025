"""The artifact store: big outputs are saved whole; the model gets a head and the file's path.

Files live at `<artifacts root>/<session_id>/<call_id>.txt` (root = `WORKER_ARTIFACT_DIR`, default
`<data dir>/artifacts`). FileRead and Grep may read them (the guard lets reads into the artifact
root), so the model can page through a big output with `offset`/`limit` instead of rerunning.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.privatefs import write_private

from openmono_worker.settings import WorkerSettings

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Spilled:
    """The text the model gets, and where the whole output went (None if saving failed)."""

    text: str
    artifact: str | None


def safe_name(name: str) -> str:
    cleaned = _UNSAFE.sub("_", name).lstrip(".")
    return cleaned[:128] or "_"


def artifact_path(settings: WorkerSettings, session_id: str, call_id: str) -> Path:
    """Where the artifact of one call is written (ids are sanitised: they come from the model)."""
    return settings.artifacts_root / safe_name(session_id) / f"{safe_name(call_id)}.txt"


def head(text: str, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8 from the start of `text`, cut at a line end when one is near."""
    raw = text.encode("utf-8")[:max_bytes]
    cut = raw.rfind(b"\n")
    if cut >= max_bytes // 2:
        raw = raw[: cut + 1]
    return raw.decode("utf-8", errors="ignore")


def tail(text: str, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8 from the end of `text`, starting at a line start when near."""
    if max_bytes <= 0:
        return ""
    raw = text.encode("utf-8")[-max_bytes:]
    cut = raw.find(b"\n")
    if 0 <= cut < max_bytes // 2:
        raw = raw[cut + 1 :]
    return raw.decode("utf-8", errors="ignore")


def spill(text: str, settings: WorkerSettings, session_id: str, call_id: str) -> Spilled | None:
    """If `text` is over the threshold: save it whole and return head + tail + reference.

    The tail is shown too because the end of an output (an exit code, a test summary, a traceback)
    is often what matters most.
    """
    size = len(text.encode("utf-8"))
    if size <= settings.artifact_threshold_bytes:
        return None
    path = artifact_path(settings, session_id, call_id)
    first = head(text, settings.artifact_head_bytes)
    last = tail(text, settings.artifact_tail_bytes)
    try:
        # a tool's whole output (a file it read, an env it printed): its owner's alone
        write_private(path, text)
    except OSError as exc:
        note = f"[output truncated: {size} bytes in total; saving the whole output failed: {exc}]"
        return Spilled(f"{first.rstrip()}\n\n{note}\n\n{last}", None)
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    note = (
        f"[output truncated: {size} bytes, {lines} lines in total; the first "
        f"{len(first.encode('utf-8'))} and the last {len(last.encode('utf-8'))} bytes are shown. "
        f"Full output saved to {path} (page through it with FileRead offset/limit, or Grep it)]"
    )
    return Spilled(f"{first.rstrip()}\n\n{note}\n\n{last}", os.fspath(path))
