"""Hooks in the loop: a pre_tool_use hook blocks a call before it runs; post notes reach the model;
session_start / stop run with the session (scripted in-process model, real tools, real hooks)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.agent import Agent, open_agent
from openmono.config import load_settings
from openmono.loop import LoopEvent, Notice, ToolFinished

from tests.support.scripted_model import ScriptedModel, reply

MakeAgent = Callable[..., Awaitable[tuple[Agent, ScriptedModel]]]


@pytest.fixture
async def make_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[MakeAgent]:
    for name in list(os.environ):
        if name.startswith("OPENMONO_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "data"))
    ws = tmp_path / "ws"
    ws.mkdir()
    agents: list[Agent] = []

    async def make(
        script: list[Any], hooks: dict[str, Any], **kw: Any
    ) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(script, n_ctx=32768)
        settings = load_settings(ws, overrides={"hooks": hooks})
        agent = await open_agent(settings, ws, model=model, **kw)
        agents.append(agent)
        return agent, model

    yield make
    for agent in agents:
        await agent.aclose()
        await agent.executor.aclose()


def last_tool_message(model: ScriptedModel) -> str:
    messages = model.requests[-1][0]
    return next(m.content or "" for m in reversed(messages) if m.role == "tool")


async def test_pre_hook_blocks_a_call_before_it_runs(make_agent: MakeAgent, tmp_path: Path) -> None:
    marker = tmp_path / "ws" / "ran.txt"
    agent, model = await make_agent(
        [reply(calls=[("Bash", {"command": f"touch {marker}"})]), reply(text="blocked, ok")],
        {"pre_tool_use": [{"command": "echo 'touch is not allowed here' >&2; exit 2",
                           "matcher": "Bash", "input": "touch"}]},
        yolo=True,
    )  # fmt: skip
    events: list[LoopEvent] = []
    done = await agent.run_turn("make a file", events.append)
    assert done.reason == "stop"
    assert not marker.exists()
    assert last_tool_message(model) == (
        "Error: blocked by a pre_tool_use hook: touch is not allowed here"
    )
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].denied and not finished[0].ok


async def test_pre_hook_allows_and_post_hook_adds_a_note(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    marker = tmp_path / "ws" / "ran.txt"
    agent, model = await make_agent(
        [reply(calls=[("Bash", {"command": f"touch {marker}"})]), reply(text="done")],
        {"pre_tool_use": [{"command": "cat > /dev/null"}],
         "post_tool_use": [{"command": "echo '{\"additional_context\": \"remember to commit\"}'"}]},
        yolo=True,
    )  # fmt: skip
    done = await agent.run_turn("make a file")
    assert done.reason == "stop" and marker.exists()
    assert last_tool_message(model).endswith("[post_tool_use hook] remember to commit")


async def test_hook_runs_after_permissions(make_agent: MakeAgent, tmp_path: Path) -> None:
    """A call the permission engine denies never reaches the pre hook."""
    log = tmp_path / "hook.log"
    agent, model = await make_agent(
        [reply(calls=[("FileWrite", {"file_path": "x.txt", "content": "x"})]), reply(text="ok")],
        {"pre_tool_use": [{"command": f"cat >> {log}"}]},
    )  # fmt: skip
    await agent.run_turn("write")
    assert "non-interactive" in last_tool_message(model)
    assert not log.exists()


async def test_session_start_and_stop_hooks(make_agent: MakeAgent, tmp_path: Path) -> None:
    started, stopped = tmp_path / "start.json", tmp_path / "stop.json"
    agent, _ = await make_agent(
        [reply(text="hello")],
        {"session_start": [{"command": f"cat > {started}"}, {"command": "echo x; exit 1"}],
         "stop": [{"command": f"cat > {stopped}"}]},
    )  # fmt: skip
    assert json.loads(started.read_text())["session_id"] == agent.session_id
    events: list[LoopEvent] = []
    await agent.run_turn("hi", events.append)
    stop = json.loads(stopped.read_text())
    assert stop["event"] == "stop" and stop["reason"] == "stop" and stop["text"] == "hello"
    warnings = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert warnings == ["session_start hook 'echo x; exit 1' failed: exited with 1: x"]
