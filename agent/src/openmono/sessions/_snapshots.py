"""File snapshots for `/undo`: the content of each file before a turn first wrote it.

Snapshots are grouped by turn; `undo` restores the newest group (re-creating, rewriting or deleting
files) and forgets it, so repeated `/undo` walks back turn by turn.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

from openmono_contracts.privatefs import private_dir, write_private


class Snapshots:
    """Snapshot groups under one folder: `<n>/manifest.json` with the saved contents inline."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _groups(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(
            (p for p in self.root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
        )

    def _manifest(self, group: Path) -> dict[str, Any]:
        try:
            data = json.loads((group / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"turn": None, "files": {}}
        return data if isinstance(data, dict) else {"turn": None, "files": {}}

    def save(self, turn: str, path: Path) -> None:
        """Remember `path` as it is now, unless this turn already saved it."""
        groups = self._groups()
        group = groups[-1] if groups else None
        manifest = self._manifest(group) if group else {}
        if group is None or manifest.get("turn") != turn:
            group = self.root / str(int(group.name) + 1 if group else 1)
            private_dir(group)
            manifest = {"turn": turn, "files": {}}
        key = str(path)
        if key in manifest["files"]:
            return
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            manifest["files"][key] = {"existed": True, "data": data, "mode": path.stat().st_mode}
        else:
            manifest["files"][key] = {"existed": False}
        # the manifest holds copies of the files the turn changed: private like the session
        write_private(group / "manifest.json", json.dumps(manifest))

    def undo(self) -> list[Path]:
        """Restore the newest group; the paths it touched (empty when there is nothing to undo)."""
        groups = self._groups()
        if not groups:
            return []
        group = groups[-1]
        restored: list[Path] = []
        for key, entry in self._manifest(group).get("files", {}).items():
            path = Path(key)
            if entry.get("existed"):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(base64.b64decode(entry["data"]))
                if isinstance(entry.get("mode"), int):
                    path.chmod(entry["mode"] & 0o7777)
            else:
                path.unlink(missing_ok=True)
            restored.append(path)
        shutil.rmtree(group)
        return restored
