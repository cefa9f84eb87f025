"""Open real agents (`open_agent`) on a test's workspace against a scripted model.

The `open_with` fixture is a factory, `await open_with(llm, **open_agent_kwargs)`: settings are
loaded from the requesting module's `ws` fixture with the model's endpoint plus that module's
`agent_overrides` (its key, its tool timeout), and every agent opened is closed after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.agent import Agent, open_agent
from openmono.config import load_settings

from tests.support.scripted_llm import ScriptedLLM

OpenAgent = Callable[..., Awaitable[Agent]]


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    """Settings overrides for every agent a test opens; a module overrides this fixture."""
    return {}


@pytest.fixture
async def open_with(ws: Path, agent_overrides: dict[str, Any]) -> AsyncIterator[OpenAgent]:
    opened: list[Agent] = []

    async def make(llm: ScriptedLLM, *, settings: dict[str, Any] | None = None, **kw: Any) -> Agent:
        overrides = {"llm.endpoint": llm.url, **agent_overrides, **(settings or {})}
        agent = await open_agent(load_settings(ws, overrides=overrides), ws, **kw)
        opened.append(agent)
        return agent

    yield make
    for agent in opened:
        await agent.aclose()
