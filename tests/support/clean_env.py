"""A test's OpenMono environment, cut off from the shell it runs in.

The developer's (or CI's) `OPENMONO_*` variables, `LLAMA_API_KEY` and env file (`compose/.env` of
the checkout, which every command reads) would otherwise reach the settings layers under test, and
the data dir (sessions, memory, user playbooks) would be the real one. The test session points
`OPENMONO_ENV_FILE` at a file that does not exist (`tests/conftest.py`); the `clean_env` fixture
removes the other variables and puts the data dir under the test's tmp dir; `clean_environ()` is
the same cut for a child process's environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV_FILE = "OPENMONO_ENV_FILE"


def is_ours(name: str) -> bool:
    """A variable of the developer's OpenMono setup (the session's own env file is kept)."""
    return (name.startswith("OPENMONO_") and name != ENV_FILE) or name == "LLAMA_API_KEY"


def clean_environ() -> dict[str, str]:
    """A copy of this process's environment without `OPENMONO_*` and `LLAMA_API_KEY` (the env
    file stays the session's absent one)."""
    return {k: v for k, v in os.environ.items() if not is_ours(k)}


def isolate_env(monkeypatch: pytest.MonkeyPatch, data: Path) -> Path:
    """Drop every `OPENMONO_*` variable and `LLAMA_API_KEY`; point OPENMONO_DATA_DIR at `data` and
    the env file at `data`'s sibling `absent.env` (never created)."""
    for name in list(os.environ):
        if is_ours(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(data))
    monkeypatch.setenv(ENV_FILE, str(data.parent / "absent.env"))
    return data


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The isolated environment for one test; its data dir, `tmp_path / "data"` (not created)."""
    return isolate_env(monkeypatch, tmp_path / "data")
