"""Diagnostics baselines: `capture-baseline` records them, later `diagnostics` report the change.

Stored as JSON under the data dir, per session and workspace, keyed by scope (a file or the whole
workspace), so they survive a worker restart and reach whichever pool process runs the next call.
Findings are compared by (file, severity, rule, message) counts: an edit above an error moves its
line without making it new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

from openmono_contracts.privatefs import write_private

from openmono_worker.codeintel._pycheck import Finding


def _store(data_dir: Path, session_id: str, workspace: Path) -> Path:
    tag = hashlib.blake2b(os.fsencode(workspace), digest_size=8).hexdigest()
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)[:80] or "session"
    return data_dir / "codeintel" / "baselines" / f"{safe}-{tag}.json"


def save_baseline(
    data_dir: Path, session_id: str, workspace: Path, scope: str, findings: list[Finding]
) -> None:
    path = _store(data_dir, session_id, workspace)
    stored = load_all(path)
    stored[scope] = [[f.file, f.line, f.col, f.severity, f.message, f.code] for f in findings]
    write_private(path, json.dumps(stored))


def load_all(path: Path) -> dict[str, list[list[object]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_baseline(
    data_dir: Path, session_id: str, workspace: Path, scope: str
) -> list[Finding] | None:
    rows = load_all(_store(data_dir, session_id, workspace)).get(scope)
    if rows is None:
        return None
    out = []
    for row in rows:
        file, line, col, severity, message, code = row
        out.append(
            Finding(
                str(file), int(str(line)), int(str(col)), str(severity), str(message), str(code)
            )
        )
    return out


def compare(baseline: list[Finding], now: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(new since the baseline, fixed since the baseline), by key counts."""
    before = Counter(f.key for f in baseline)
    after = Counter(f.key for f in now)
    new: list[Finding] = []
    seen: Counter[tuple[str, str, str, str]] = Counter()
    for f in now:
        seen[f.key] += 1
        if seen[f.key] > before[f.key]:
            new.append(f)
    fixed: list[Finding] = []
    seen = Counter()
    for f in baseline:
        seen[f.key] += 1
        if seen[f.key] > after[f.key]:
            fixed.append(f)
    return new, fixed
