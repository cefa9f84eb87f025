"""`openmono --version`: the installed version, the checkout it runs from, and its commit.

An editable install (`make install`) runs the checkout's code but keeps the metadata of the day it
was installed: when the checkout's `agent/pyproject.toml` says another version, the line says so
and how to catch up.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from openmono import __version__
from openmono.config import current_environ

_GIT_TIMEOUT_S = 5.0


def version_line() -> str:
    """`openmono 0.1.0 (checkout /path, commit abc1234)` and what differs, if anything."""
    checkout = current_environ().checkout
    if checkout is None:
        return f"openmono {__version__} (no checkout found)"
    parts = [f"checkout {checkout}"]
    commit = _commit(checkout)
    if commit:
        parts.append(f"commit {commit}")
    line = f"openmono {__version__} ({', '.join(parts)})"
    source = _source_version(checkout)
    if source and source != __version__:
        line += f"; the checkout is at {source}: run `make install` there to update"
    return line


def _commit(checkout: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "describe", "--always", "--dirty", "--abbrev=10"],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _source_version(checkout: Path) -> str:
    try:
        data = tomllib.loads((checkout / "agent" / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    value = data.get("project", {}).get("version", "")
    return value if isinstance(value, str) else ""
