"""Hooks in the loop: a pre_tool_use hook blocks a call before it runs; post notes reach the model;
session_start / stop run with the session (scripted in-process model, real tools, real hooks)."""

from __future__ import annotations

import json
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
async def make_agent(tmp_path: Path, clean_env: Path) -> AsyncIterator[MakeAgent]:
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


async def test_dotnet_format_hooks_run_with_their_placeholders(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    log = tmp_path / "hook.log"
    marker = tmp_path / "ws" / "ran.txt"
    agent, _ = await make_agent(
        [
            reply(calls=[("Bash", {"command": f"touch {marker}"})]),
            reply(calls=[("Bash", {"command": "true"})]),
            reply(text="done"),
        ],
        {
            "preToolUse": [
                {
                    "if": {"tool": "Bash", "inputContains": "touch"},
                    "run": "echo {{tool_name}} {{tool_input}} >> " + str(log) + "; exit 2",
                }
            ],
            "postToolUse": [{"if": {"tool": "*"}, "run": f"echo post {{{{tool_name}}}} >> {log}"}],
        },
        yolo=True,
    )
    done = await agent.run_turn("touch it")
    assert done.reason == "stop" and not marker.exists()
    lines = log.read_text().splitlines()
    assert lines[0].startswith("Bash {") and json.loads(lines[0][5:]) == {
        "command": f"touch {marker}"
    }
    assert lines[1:] == ["post Bash"]  # the blocked call ran no post hook; the second did


def test_dotnet_hooks_that_have_no_equivalent_are_refused_with_ours(tmp_path: Path) -> None:
    from openmono.config import ConfigError

    bad = {"preToolUse": [{"if": {"tool": "FileWrite", "pathMatches": "*.env"}, "run": "x"}]}
    with pytest.raises(ConfigError) as refused:
        load_settings(tmp_path, overrides={"hooks": bad})
    text = str(refused.value)
    assert "if.pathMatches has no equivalent here" in text
    assert '{"pre_tool_use": [{"command": "x", "matcher": "FileWrite"}]}' in text
    with pytest.raises(ConfigError, match="no such event here"):
        load_settings(tmp_path, overrides={"hooks": {"userPromptSubmit": []}})
    with pytest.raises(ConfigError, match="has no value for stop hooks"):
        load_settings(tmp_path, overrides={"hooks": {"stop": [{"run": "echo {{tool_name}}"}]}})


async def test_an_untrusted_projects_hooks_and_yolo_wait_for_trust(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    from openmono.config import project_trust_question, record_project_trust

    ws = tmp_path / "ws"
    marker = tmp_path / "stop-hook-ran"
    (ws / ".openmono").mkdir()
    (ws / ".openmono" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {"stop": [{"command": f"touch {marker}"}]},
                "permissions": {"yolo": True},
                "max_iterations": 7,
            }
        )
    )
    question = project_trust_question(ws)
    assert question is not None and question.parts == ["hooks", "permissions.yolo"]
    write = ("FileWrite", {"file_path": "x.txt", "content": "x"})
    agent, _ = await make_agent([reply(calls=[write]), reply("ok")], {})
    events: list[LoopEvent] = []
    await agent.run_turn("write x", events.append)
    assert not marker.exists() and not (ws / "x.txt").exists()  # no hook, no yolo
    assert agent.loop.options.max_iterations == 7  # the rest of the file applies
    notes = [e.message for e in events if isinstance(e, Notice)]
    assert any("Left out hooks, permissions.yolo" in n and "not trusted" in n for n in notes)

    record_project_trust(ws, True, question.parts)  # what the interactive prompt records on "y"
    assert project_trust_question(ws) is None
    trusted, _ = await make_agent([reply(calls=[write]), reply("ok")], {})
    await trusted.run_turn("write x")
    assert marker.exists() and (ws / "x.txt").read_text() == "x"
    stored = json.loads((tmp_path / "data" / "trusted-projects.json").read_text())
    assert stored[str(ws.resolve())]["trusted"] is True

    record_project_trust(ws, False, question.parts)  # declined: never asked again, parts left out
    assert project_trust_question(ws) is None


def test_config_trust_answers_without_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner
    from openmono.cli import main
    from openmono.config import project_trust_question

    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "data"))
    ws = tmp_path / "proj"
    (ws / ".openmono").mkdir(parents=True)
    (ws / ".openmono" / "settings.json").write_text('{"mcp_servers": {"t": {"command": "x"}}}')
    assert project_trust_question(ws) is not None
    ok = CliRunner().invoke(main, ["--workspace", str(ws), "config", "trust"])
    assert ok.exit_code == 0 and "trusted: mcp_servers from" in ok.output, ok.output
    assert project_trust_question(ws) is None
    stored = json.loads((tmp_path / "data" / "trusted-projects.json").read_text())
    assert stored[str(ws.resolve())]["parts"] == ["mcp_servers"]
    no = CliRunner().invoke(main, ["--workspace", str(ws), "config", "trust", "--no"])
    assert no.exit_code == 0 and "not trusted" in no.output
    assert (
        json.loads((tmp_path / "data" / "trusted-projects.json").read_text())[str(ws.resolve())][
            "trusted"
        ]
        is False
    )
