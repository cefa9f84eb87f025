"""The conversation tools run in the agent, on the loop that calls them, with the worker's schemas.

`tests/fixtures/conversation_tools.json` is what the worker offered for them before they moved
(descriptions, parameters, facts): the model's habits and the prompted protocol's examples depend
on those, so the agent must offer them unchanged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from openmono.conversation import ConversationTools, forget, read_memories, read_memory_dir
from openmono.loop import LoopEvent, Notice, Question
from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.facts import USER_MEMORY_DIR
from openmono_worker import WorkerSettings, get_tool, run_tool

from tests.support.agents import MakeAgent
from tests.support.scripted_model import reply

RECORDED = Path(__file__).parents[1] / "fixtures" / "conversation_tools.json"
NAMES = {"AskUser", "TodoWrite", "EnterPlanMode", "ExitPlanMode", "MemorySave"}


class Tools:
    """The conversation toolset on a workspace, called outside any loop's turn."""

    def __init__(self, tmp_path: Path) -> None:
        self.ws = tmp_path / "tools-ws"
        self.ws.mkdir()
        self.user_memory = tmp_path / "data" / USER_MEMORY_DIR
        self.toolset = ConversationTools(self.user_memory)
        self.events: list[LoopEvent] = []

    async def call(self, tool: str, workspace: Path | None = None, **params: Any) -> ToolResult:
        request = ToolRequest(
            tool=tool,
            params=params,
            call_id="c1",
            session_id="s",
            workspace=str(workspace or self.ws),
        )
        return await self.toolset.call(request, self.events.append)

    def read(self, name: str) -> str:
        return (self.ws / name).read_text()


@pytest.fixture
def tools(tmp_path: Path) -> Tools:
    return Tools(tmp_path)


def test_the_agent_offers_them_as_the_worker_did(tools: Tools) -> None:
    recorded = json.loads(RECORDED.read_text())
    offered = tools.toolset.tools()
    assert set(offered) == set(recorded) == NAMES
    for name, was in recorded.items():
        spec, facts = offered[name].spec, offered[name].facts.model_dump(mode="json")
        assert (spec.description, spec.parameters) == (was["description"], was["parameters"])
        assert {k: facts[k] for k in was["facts"]} == was["facts"], name


def test_the_worker_no_longer_has_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    request = ToolRequest(tool="AskUser", params={}, call_id="c", session_id="s", workspace=str(ws))
    result = run_tool(request, settings=WorkerSettings(data_dir=tmp_path / "data"))
    assert [get_tool(name) for name in sorted(NAMES)] == [None] * len(NAMES)
    assert not result.ok and result.error_kind == "unknown_tool"


async def test_todo_write_renders_the_list(tools: Tools) -> None:
    todos = [
        {"content": "Read code", "status": "completed", "active_form": "Reading code"},
        {"content": "Fix bug", "status": "in_progress", "active_form": "Fixing bug"},
        {"content": "Run tests", "status": "pending", "active_form": "Running tests"},
    ]
    r = await tools.call("TodoWrite", todos=todos)
    assert r.ok and r.output.splitlines() == [
        "Todo list updated: 3 items (1 completed, 1 in progress, 1 pending)",
        "[x] Read code",
        "[>] Fix bug",
        "[ ] Run tests",
    ]


async def test_todo_write_rejects_bad_status_in_the_workers_words(tools: Tools) -> None:
    bad = {"content": "x", "status": "doing", "active_form": "x"}
    r = await tools.call("TodoWrite", todos=[bad])
    assert not r.ok and r.error_kind == "invalid_params"
    assert (r.error or "").startswith("invalid parameters for TodoWrite: todos.0.status:")


async def test_todo_write_flags_two_in_progress(tools: Tools) -> None:
    item = {"content": "x", "status": "in_progress", "active_form": "x"}
    r = await tools.call("TodoWrite", todos=[item, item])
    assert "more than one item is in progress" in r.output


async def test_the_list_belongs_to_the_loop_that_wrote_it(make_agent: MakeAgent) -> None:
    todos = [{"content": "Write tests", "status": "in_progress", "active_form": "Writing tests"}]
    agent, _ = await make_agent([reply(calls=[("TodoWrite", {"todos": todos})]), reply("ok")])
    assert agent.todos == []
    await agent.run_turn("go")
    assert [(t.content, t.status) for t in agent.todos] == [("Write tests", "in_progress")]


async def test_ask_user_puts_the_question_to_the_surface(make_agent: MakeAgent) -> None:
    asked: list[Question] = []

    async def asker(question: Question) -> str:
        asked.append(question)
        return "postgres"

    call = ("AskUser", {"question": "Which DB?", "options": ["sqlite", "postgres", " "]})
    agent, model = await make_agent([reply(calls=[call]), reply("ok")], asker=asker)
    await agent.run_turn("set up the db")
    assert asked == [Question("Which DB?", ["sqlite", "postgres"])]
    assert model.requests[1][0][-1].content == "The user answered: postgres"


async def test_ask_user_without_anybody_to_ask(tools: Tools) -> None:
    r = await tools.call("AskUser", question="Use tabs?")
    assert r.ok and "non-interactive" in r.output
    bad = await tools.call("AskUser", question="")
    assert not bad.ok and bad.error_kind == "invalid_params"


async def test_plan_mode_switches_the_calling_loop(make_agent: MakeAgent) -> None:
    agent, model = await make_agent(
        [reply(calls=[("EnterPlanMode", {"reason": "risky migration"})]), reply("planning")]
    )
    events: list[LoopEvent] = []
    await agent.run_turn("migrate", events.append)
    assert agent.loop.mode == "plan"
    assert any(isinstance(e, Notice) and e.message == "Mode: plan" for e in events)
    assert "Plan mode is on (risky migration)" in (model.requests[1][0][-1].content or "")


async def test_plan_mode_arguments_are_checked(tools: Tools) -> None:
    assert (await tools.call("EnterPlanMode")).error_kind == "invalid_params"  # reason required
    assert (await tools.call("ExitPlanMode", plan="x")).error_kind == "invalid_params"
    outside = await tools.call("EnterPlanMode", reason="r")  # no loop's turn: nothing to switch
    assert not outside.ok and "inside a turn" in (outside.error or "")


async def test_memory_save_writes_file_and_index(tools: Tools) -> None:
    r = await tools.call(
        "MemorySave",
        name="Test command",
        type="project",
        description="how tests\nare run",
        content="Run `make test`.",
    )
    assert r.ok and r.output.endswith("in .openmono/memory/test-command.md")
    text = tools.read(".openmono/memory/test-command.md")
    assert text.startswith("---\nname: Test command\ndescription: how tests are run\n")
    assert "type: project" in text and text.endswith("Run `make test`.\n")
    index = tools.read(".openmono/memory/MEMORY.md")
    assert "- [Test command](test-command.md) — how tests are run" in index
    [memory] = read_memories(tools.ws)
    assert (memory.name, memory.type, memory.content) == (
        "Test command",
        "project",
        "Run `make test`.",
    )


async def test_memory_save_goes_into_the_next_system_prompt(make_agent: MakeAgent) -> None:
    saved = {"name": "Style", "type": "feedback", "description": "d", "content": "Use tabs."}
    agent, model = await make_agent([reply(calls=[("MemorySave", saved)]), reply("ok")])
    await agent.run_turn("remember: tabs")
    assert "Use tabs." not in (model.requests[0][0][0].content or "")
    assert "Use tabs." in (model.requests[1][0][0].content or "")


async def test_memory_save_same_name_replaces(tools: Tools) -> None:
    for content in ("first", "second"):
        await tools.call(
            "MemorySave", name="Style", type="feedback", description="d", content=content
        )
    await tools.call("MemorySave", name="Other", type="user", description="o", content="x")
    memories = {m.name: m for m in read_memories(tools.ws)}
    assert memories["Style"].content == "second" and set(memories) == {"Style", "Other"}
    index = tools.read(".openmono/memory/MEMORY.md")
    assert index.count("(style.md)") == 1 and index.count("(other.md)") == 1


async def test_memory_save_user_scope_writes_the_data_dir_and_forget_removes(tools: Tools) -> None:
    r = await tools.call(
        "MemorySave", name="Tabs", type="user", description="d", content="tabs", scope="user"
    )
    folder = tools.user_memory
    assert r.ok and "user memory 'Tabs'" in r.output and (folder / "tabs.md").is_file()
    assert read_memories(tools.ws) == []  # not the project's
    assert [m.name for m in read_memory_dir(folder)] == ["Tabs"]
    gone = forget(folder, "Tabs")
    assert gone is not None and read_memory_dir(folder) == []
    assert "tabs.md" not in (folder / "MEMORY.md").read_text()
    assert forget(folder, "Tabs") is None


async def test_memory_save_rejects_bad_type(tools: Tools) -> None:
    r = await tools.call("MemorySave", name="x", type="secret", description="d", content="c")
    assert not r.ok and r.error_kind == "invalid_params" and "type" in (r.error or "")


async def test_memory_save_cannot_be_redirected_out(tools: Tools, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, tools.ws / ".openmono")
    r = await tools.call("MemorySave", name="x", type="user", description="d", content="c")
    assert not r.ok and "outside the workspace" in (r.error or "")
    assert list(outside.iterdir()) == []


async def test_memory_save_of_a_workspace_on_another_box(tools: Tools, tmp_path: Path) -> None:
    elsewhere = tmp_path / "not-here" / "ws"
    r = await tools.call(
        "MemorySave", workspace=elsewhere, name="x", type="user", description="d", content="c"
    )
    assert not r.ok and "not a folder on this machine" in (r.error or "")
    assert not (tmp_path / "not-here").exists()
