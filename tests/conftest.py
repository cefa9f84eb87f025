"""Shared fixtures: the expensive real servers are session-scoped and started on free ports."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llama import LlamaServer, llama_server

# The `scripted_llm` factory fixture (a scripted OpenAI-compatible server) lives with the server;
# `clean_env` (no OPENMONO_* from the shell) and `open_with` (agents on a test's `ws`) likewise.
# Every command reads the checkout's compose/.env (openmono.config): a developer's own must never
# reach a test. The session's env file is a path that does not exist; tests that want one name
# their own (OPENMONO_ENV_FILE), child processes inherit this one.
_NO_ENV_DIR = Path(tempfile.mkdtemp(prefix="openmono-tests-"))
os.environ["OPENMONO_ENV_FILE"] = str(_NO_ENV_DIR / "absent.env")


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(_NO_ENV_DIR, ignore_errors=True)


pytest_plugins = [
    "tests.support.scripted_llm",
    "tests.support.scrape_fixtures",
    "tests.support.clean_env",
    "tests.support.agents",
]


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One real llama.cpp server (SmolLM2-135M) shared by every test that needs the real model."""
    with llama_server(tmp_path_factory.mktemp("llama")) as server:
        yield server
