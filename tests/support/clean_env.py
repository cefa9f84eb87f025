"""A test's OpenMono environment, cut off from the shell it runs in.

The developer's (or CI's) `OPENMONO_*` variables and `LLAMA_API_KEY` would otherwise reach the
settings layers under test, and the data dir (sessions, memory, user playbooks) would be the real
one. The `clean_env` fixture removes those variables and puts the data dir under the test's tmp dir;
`clean_environ()` is the same cut for a child process's environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _ours(name: str) -> bool:
    return name.startswith("OPENMONO_") or name == "LLAMA_API_KEY"


def clean_environ() -> dict[str, str]:
    """A copy of this process's environment without `OPENMONO_*` and `LLAMA_API_KEY`."""
    return {k: v for k, v in os.environ.items() if not _ours(k)}


def isolate_env(monkeypatch: pytest.MonkeyPatch, data: Path) -> Path:
    """Drop every `OPENMONO_*` variable and `LLAMA_API_KEY`; point OPENMONO_DATA_DIR at `data`."""
    for name in list(os.environ):
        if _ours(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(data))
    return data


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The isolated environment for one test; its data dir, `tmp_path / "data"` (not created)."""
    return isolate_env(monkeypatch, tmp_path / "data")
