"""Each image's requirements.lock is exactly what its Dockerfile says to export from uv.lock.

The images install from these files, not from uv.lock: a dependency added to a pyproject and
locked, but not exported, builds an image that fails at import time (seen: the agent image
without the playbooks' jsonschema-rs). `uv export --frozen` reads uv.lock only: this runs offline.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = [
    "agent/Dockerfile",
    "scrapling/Dockerfile",
    "services/keys/Dockerfile",
    "services/router/Dockerfile",
    "services/worker/Dockerfile",
]


def _export_command(dockerfile: Path) -> list[str]:
    """The `uv export ...` of the Dockerfile's header comment, continuation lines joined."""
    lines = [line.removeprefix("#").strip() for line in dockerfile.read_text().splitlines()]
    text = " ".join(lines)
    found = re.search(r"(uv export .*?-o \S+)", text.replace("\\ ", " "))
    assert found, f"{dockerfile}: no `uv export ... -o FILE` in its header"
    return found.group(1).split()


@pytest.mark.parametrize("name", DOCKERFILES)
def test_requirements_lock_is_the_export_its_dockerfile_names(name: str, tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH (make setup links it into /usr/local/bin)"
    argv = _export_command(ROOT / name)
    out_index = argv.index("-o") + 1
    committed = ROOT / argv[out_index]
    argv[out_index] = str(tmp_path / "requirements.lock")
    done = subprocess.run(
        [uv, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    expected = (tmp_path / "requirements.lock").read_text()
    assert committed.read_text() == expected, (
        f"{committed.relative_to(ROOT)} is stale: run `{' '.join(_export_command(ROOT / name))}`"
    )
