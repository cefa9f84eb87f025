"""Open real agents (`open_agent`) on a test's workspace against a scripted model.

The `open_with` fixture is a factory, `await open_with(llm, **open_agent_kwargs)`: settings are
loaded from the requesting module's `ws` fixture with the model's endpoint plus that module's
`agent_overrides` (its key, its tool timeout), and every agent opened is closed after the test.

`make_agent` is the same without HTTP: `await make_agent(script, n_ctx=..., overrides=...,
**open_agent_kwargs)` opens an agent on `<tmp>/ws` (holding `a.txt`: "alpha") whose model is a
`ScriptedModel` replaying `script`, and returns both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.agent import Agent, open_agent
from openmono.config import load_settings

from tests.support.scripted_llm import ScriptedLLM
from tests.support.scripted_model import ScriptedModel

OpenAgent = Callable[..., Awaitable[Agent]]
MakeAgent = Callable[..., Awaitable[tuple[Agent, ScriptedModel]]]


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


@pytest.fixture
async def make_agent(tmp_path: Path, clean_env: Path) -> AsyncIterator[MakeAgent]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    agents: list[Agent] = []

    async def make(script: list[Any], n_ctx: int = 8192, **kw: Any) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(script, n_ctx=n_ctx)
        overrides = kw.pop("overrides", {})
        agent = await open_agent(load_settings(ws, overrides=overrides), ws, model=model, **kw)
        agents.append(agent)
        return agent, model

    yield make
    for agent in agents:
        await agent.aclose()
        await agent.executor.aclose()
