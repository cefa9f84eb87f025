"""Shared fixtures: the expensive real servers are session-scoped and started on free ports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llama import LlamaServer, llama_server

# The `scripted_llm` factory fixture (a scripted OpenAI-compatible server) lives with the server;
# `clean_env` (no OPENMONO_* from the shell) and `open_with` (agents on a test's `ws`) likewise.
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
