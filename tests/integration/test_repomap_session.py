"""The repository map in a real session: the scripted model's requests show what the prompt held.

The map is asked of the worker's `RepoMap` tool through the session's executor before each turn
(a TypeScript fixture workspace): it is in the system prompt, never among the offered tools,
follows the files the tools touched and edits made behind its back, is off at `repomap.tokens`
0, reaches the Explore sub-agent, and `/map` shows it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.agents import OpenAgent
from tests.support.classic_repl import run_classic
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "map-key"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel" / "ts"
HEADING = "# Repository map"


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    return root.resolve()


@pytest.fixture
def agent_overrides() -> dict[str, object]:
    return {"llm.api_key": KEY}


def system_of(llm: ScriptedLLM, n: int) -> str:
    first = llm.chat_requests[n].json["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def the_map(system: str) -> str:
    """The map's body: after its heading and the paragraph that says how to read it."""
    return system.split(HEADING, 1)[1].split("changing it.\n", 1)[1]


async def test_the_map_is_in_the_prompt_and_follows_the_session(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "src/view.tsx"})]),
            Turn(text="read it"),
            Turn(text="second"),
        ],
        api_key=KEY,
        n_ctx=4096,  # budget 512 tokens: not every definition fits
    )
    agent = await open_with(llm)
    await agent.run_turn("where is totalArea used?")
    first = system_of(llm, 0)
    assert HEADING in first and "src/geometry.ts:" in the_map(first)
    assert "function totalArea" in the_map(first)  # the name in the prompt is in play
    offered = [t["function"]["name"] for t in llm.chat_requests[0].json.get("tools", [])]
    assert "FileRead" in offered and "RepoMap" not in offered
    # FileRead touched view.tsx; an edit behind the session's back adds a definition
    fmt = ws / "src" / "format.ts"
    fmt.write_text(fmt.read_text() + "\nexport function brandNewHelper(): void {}\n")
    await agent.run_turn("and now?")
    second = the_map(system_of(llm, 2))
    assert "src/view.tsx:" in second  # the file the tools touched is in play
    assert "brandNewHelper" in second


async def test_the_map_can_be_switched_off(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    llm = scripted_llm([Turn(text="hi")], api_key=KEY, n_ctx=8192)
    agent = await open_with(llm, settings={"repomap.tokens": 0})
    await agent.run_turn("hello")
    assert HEADING not in system_of(llm, 0) and agent.repomap is None


async def test_the_explore_subagent_gets_the_map(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    explore = Call(
        "Agent",
        {"description": "find users", "prompt": "who calls show?", "agent_type": "Explore"},
    )
    llm = scripted_llm(
        [Turn(tool_calls=[explore]), Turn(text="app.ts and view.tsx"), Turn(text="done")],
        api_key=KEY,
        n_ctx=8192,
    )
    agent = await open_with(llm)
    await agent.run_turn("who calls show?")
    child = system_of(llm, 1)
    assert "sub-agent (Explore)" in child and "src/format.ts:" in the_map(child)
    assert "Start from the repository map" in child


async def test_the_map_command_shows_it(scripted_llm: Callable[..., ScriptedLLM], ws: Path) -> None:
    llm = scripted_llm([], api_key=KEY, n_ctx=8192)
    shown = await run_classic(llm, ws, ["/map CircleView", "/exit"], KEY)
    assert "repository map (budget 1024 tokens" in shown
    assert "src/view.tsx:" in shown and "CircleView" in shown
