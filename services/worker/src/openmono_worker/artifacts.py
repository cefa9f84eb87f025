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

from openmono_worker.settings import WorkerSettings

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Spilled:
    """The text the model gets, and where the whole output went (None if saving failed)."""

    text: str
    artifact: str | None


def _safe(name: str) -> str:
    cleaned = _UNSAFE.sub("_", name).lstrip(".")
    return cleaned[:128] or "_"


def artifact_path(settings: WorkerSettings, session_id: str, call_id: str) -> Path:
    """Where the artifact of one call is written (ids are sanitised: they come from the model)."""
    return settings.artifacts_root / _safe(session_id) / f"{_safe(call_id)}.txt"


def head(text: str, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8 from the start of `text`, cut at a line end when one is near."""
    raw = text.encode("utf-8")[:max_bytes]
    cut = raw.rfind(b"\n")
    if cut >= max_bytes // 2:
        raw = raw[: cut + 1]
    return raw.decode("utf-8", errors="ignore")


def spill(text: str, settings: WorkerSettings, session_id: str, call_id: str) -> Spilled | None:
    """If `text` is over the threshold: save it and return the head + reference, else None."""
    size = len(text.encode("utf-8"))
    if size <= settings.artifact_threshold_bytes:
        return None
    path = artifact_path(settings, session_id, call_id)
    shown = head(text, settings.artifact_head_bytes)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        note = f"[output truncated: {size} bytes in total; saving the rest failed: {exc}]"
        return Spilled(f"{shown.rstrip()}\n\n{note}", None)
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    note = (
        f"[output truncated: {size} bytes, {lines} lines in total; showing the first "
        f"{len(shown.encode('utf-8'))} bytes. Full output saved to {path} "
        "(read it with FileRead offset/limit, or search it with Grep)]"
    )
    return Spilled(f"{shown.rstrip()}\n\n{note}", os.fspath(path))
