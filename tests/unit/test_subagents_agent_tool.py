"""Sub-agents through the loop (scripted in-process model, real tools): allow-lists, Explore cannot
write, a child's denial stays a denial, fresh context, turn caps, transcripts under the parent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.agent import Agent, open_agent
from openmono.config import load_settings
from openmono.loop import LoopEvent, OfferedTool, ToolCatalog, ToolFinished
from openmono.mcp._toolset import RESOURCE_TOOLS
from openmono.permissions import Answer, PermissionRequest
from openmono.sessions import load_session
from openmono.subagents import AGENT_TYPES, AgentTool, get_type
from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts

from tests.support.builtin_tools import builtin_facts
from tests.support.scripted_model import ScriptedModel, reply

MakeAgent = Callable[..., Awaitable[tuple[Agent, ScriptedModel]]]
WRITES = {"FileWrite", "FileEdit", "ApplyPatch"}


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture
async def make_agent(ws: Path) -> AsyncIterator[MakeAgent]:
    agents: list[Agent] = []

    async def make(script: list[Any], **kw: Any) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(script, n_ctx=32768)
        overrides = kw.pop("overrides", {})
        agent = await open_agent(load_settings(ws, overrides=overrides), ws, model=model, **kw)
        agents.append(agent)
        return agent, model

    yield make
    for agent in agents:
        await agent.aclose()
        await agent.executor.aclose()


def tool_names(model: ScriptedModel, request: int) -> set[str]:
    return {t.name for t in model.requests[request][1]}


def last_tool(model: ScriptedModel, request: int = -1) -> str:
    messages = model.requests[request][0]
    return next(m.content or "" for m in reversed(messages) if m.role == "tool")


def agent_call(prompt: str, agent_type: str, description: str = "a task") -> tuple[str, dict]:
    return ("Agent", {"description": description, "prompt": prompt, "agent_type": agent_type})


# -- tools chosen by their facts ----------------------------------------------------------------
def _parent() -> dict[str, ToolFacts]:
    """A parent with every built-in tool, `Agent`, the MCP resource tools and three server tools:
    one read-only, one read-only taking a path, one that may change anything."""
    return {
        **builtin_facts(),
        "Agent": AgentTool.facts(),
        **{name: tool.facts for name, tool in RESOURCE_TOOLS.items()},
        "mcp__time__get_current_time": ToolFacts(read_only=True, concurrency_safe=True),
        "mcp__fs__read_file": ToolFacts(read_only=True, path_params=("path",)),
        "mcp__git__commit": ToolFacts(),
    }


def test_each_type_chooses_the_parents_tools_by_their_facts() -> None:
    parent = _parent()
    chosen = {name: set(kind.select(parent)) for name, kind in AGENT_TYPES.items()}
    reads = {"FileRead", "Glob", "Grep", "ListDirectory"}
    resources, web, code = {"ListMcpResources", "ReadMcpResource"}, {"WebSearch", "WebFetch"}, {
        "Lsp", "CodeIntel"
    }  # fmt: skip
    read_only_mcp = {"mcp__time__get_current_time", "mcp__fs__read_file"}
    assert chosen["Explore"] == reads | resources | web | code | read_only_mcp | {"Bash"}
    assert chosen["Plan"] == reads | resources | web | {"Bash", "TodoWrite"}
    assert chosen["Coder"] == reads | {"FileWrite", "FileEdit", "ApplyPatch", "Bash", "TodoWrite"}
    assert chosen["Verify"] == reads | code | {"Bash"}
    # tools declaring subagents=False (Agent, the plan switches) are never handed down
    never = {"Agent", "EnterPlanMode", "ExitPlanMode"}
    assert chosen["general-purpose"] == set(parent) - never
    in_order = [name for name in parent if name in chosen["Verify"]]
    assert get_type("Verify").select(parent) == in_order  # the parent's order
    # a child never gets a tool its parent lacks
    assert get_type("Explore").select({"FileRead": parent["FileRead"]}) == ["FileRead"]
    # a tool nobody listed goes where its facts say: a read-only file tool to every reader
    new = ToolFacts(read_only=True, kind="search", path_params=("path",))
    takers = {name for name, kind in AGENT_TYPES.items() if kind.allows("Outline", new)}
    assert takers == set(AGENT_TYPES)
    assert {t.name for t in AGENT_TYPES.values()} == {
        "general-purpose", "Explore", "Plan", "Coder", "Verify"
    }  # fmt: skip
    assert get_type("explore").name == "Explore" and get_type(None).name == "general-purpose"


async def test_agent_tool_is_offered_with_its_schema(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply(text="hi")])
    await agent.run_turn("hi")
    spec = next(t for t in model.requests[0][1] if t.name == "Agent")
    assert spec.parameters["required"] == ["description", "prompt"]
    assert "Explore" in spec.description and "agent_type" in spec.parameters["properties"]


# -- Explore cannot write ----------------------------------------------------------------------
async def test_explore_cannot_write(make_agent: MakeAgent, ws: Path) -> None:
    marker = ws / "made.txt"
    agent, model = await make_agent(
        [
            reply(calls=[agent_call("look around", "Explore")]),
            # the child: tries to write three ways, then reads and answers
            reply(calls=[("FileWrite", {"file_path": "made.txt", "content": "x"})]),
            reply(calls=[("Bash", {"command": f"touch {marker}"})]),
            reply(calls=[("FileRead", {"file_path": "a.txt"})]),
            reply(text="a.txt says alpha."),
            # the parent again
            reply(text="The explorer says a.txt says alpha."),
        ],
        yolo=True,  # even with every call allowed, Explore's list and mode forbid writes
    )
    events: list[LoopEvent] = []
    done = await agent.run_turn("explore", events.append)
    assert done.text == "The explorer says a.txt says alpha."
    assert not marker.exists()
    child_tools = tool_names(model, 1)
    assert child_tools and not WRITES & child_tools and "Agent" not in child_tools
    assert "unknown tool 'FileWrite'" in last_tool(model, 2)
    assert "not available in ask mode" in last_tool(model, 3)
    assert "alpha" in last_tool(model, 4)
    result = last_tool(model, 5)
    assert result.startswith("a.txt says alpha.\n[sub-agent Explore ")
    # the child's activity is shown under the Agent call
    relayed = [e for e in events if isinstance(e, ToolFinished) and "/" in e.call_id]
    assert [e.name for e in relayed] == ["FileWrite", "Bash", "FileRead"]


async def test_fresh_context_and_transcript_under_the_parent(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    agent, model = await make_agent(
        [
            reply(text="First answer."),
            reply(calls=[agent_call("count the files", "general-purpose", "count files")]),
            reply(text="There is one file."),
            reply(text="Done."),
        ]
    )
    await agent.run_turn("first question")
    await agent.run_turn("delegate")
    child_messages = model.requests[2][0]
    assert [m.role for m in child_messages] == ["system", "user"]
    assert child_messages[1].content == "count the files"
    assert "sub-agent (general-purpose)" in (child_messages[0].content or "")
    folder = tmp_path / "data" / "sessions" / agent.session_id / "agents"
    files = list(folder.glob("*.jsonl"))
    assert len(files) == 1
    loaded = load_session(files[0])
    header = loaded.header.model_dump()
    assert header["parent_session"] == agent.session_id
    assert header["agent_type"] == "general-purpose" and header["description"] == "count files"
    assert [m.role for m in loaded.messages] == ["user", "assistant"]
    assert loaded.messages[-1].content == "There is one file."
    # the parent's own session file records the Agent call and its result
    parent = load_session(tmp_path / "data" / "sessions" / f"{agent.session_id}.jsonl")
    tool = [m for m in parent.messages if m.role == "tool"]
    assert tool[-1].content is not None and str(files[0]) in tool[-1].content


# -- a child's denial stays a denial -----------------------------------------------------------
async def test_child_denial_non_interactive(make_agent: MakeAgent, ws: Path) -> None:
    agent, model = await make_agent(
        [
            reply(calls=[agent_call("write b.txt", "Coder")]),
            reply(calls=[("FileWrite", {"file_path": "b.txt", "content": "b"})]),
            reply(text="I was not allowed to write b.txt."),
            reply(text="The coder was denied."),
        ]
    )
    await agent.run_turn("get b.txt written")
    assert not (ws / "b.txt").exists()
    assert "non-interactive" in last_tool(model, 2)
    assert last_tool(model, 3).startswith("I was not allowed to write b.txt.")


async def test_child_denial_for_the_session_binds_the_parent(
    make_agent: MakeAgent, ws: Path
) -> None:
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Answer:
        asked.append(request)
        return "deny_session"

    agent, model = await make_agent(
        [
            reply(calls=[agent_call("write b.txt", "Coder")]),
            reply(calls=[("FileWrite", {"file_path": "b.txt", "content": "b"})]),
            reply(text="Denied."),
            reply(calls=[("FileWrite", {"file_path": "b.txt", "content": "b"})]),
            reply(text="Also denied."),
        ],
        approver=approver,
    )
    await agent.run_turn("get b.txt written")
    assert not (ws / "b.txt").exists()
    assert len(asked) == 1  # the child asked; the parent's retry is refused without asking
    assert "user denied FileWrite for this session" in last_tool(model, -1)


async def test_child_approval_is_asked_through_the_parent(make_agent: MakeAgent, ws: Path) -> None:
    asked: list[str] = []

    async def approver(request: PermissionRequest) -> Answer:
        asked.append(request.tool)
        parent_call, _, child_call = request.call_id.partition("/")
        assert parent_call and child_call  # shown under the Agent call
        return "once"

    agent, _ = await make_agent(
        [
            reply(calls=[agent_call("write b.txt", "Coder")]),
            reply(calls=[("FileWrite", {"file_path": "b.txt", "content": "b"})]),
            reply(text="Wrote b.txt."),
            reply(text="ok"),
        ],
        approver=approver,
    )
    await agent.run_turn("get b.txt written")
    assert asked == ["FileWrite"] and (ws / "b.txt").read_text() == "b"


# -- caps and errors ---------------------------------------------------------------------------
async def test_turn_cap_stops_the_child(make_agent: MakeAgent) -> None:
    loop_reads = [reply(calls=[("FileRead", {"file_path": "a.txt", "offset": i})]) for i in (1, 1)]
    agent, model = await make_agent(
        [reply(calls=[agent_call("read forever", "Explore")]), *loop_reads, reply(text="ok")],
        overrides={"subagents.max_turns": 2},
    )
    done = await agent.run_turn("go")
    assert done.reason == "stop"
    result = last_tool(model)
    assert result.startswith("Error: the sub-agent stopped early (max_iterations")


async def test_unknown_type_and_bad_arguments(make_agent: MakeAgent) -> None:
    agent, model = await make_agent(
        [
            reply(calls=[agent_call("x", "Wizard")]),
            reply(calls=[("Agent", {"prompt": "no description"})]),
            reply(text="ok"),
        ]
    )
    await agent.run_turn("go")
    assert "unknown agent_type 'Wizard'" in last_tool(model, 1)
    assert "invalid arguments for Agent: description" in last_tool(model, 2)


async def test_plan_mode_parent_runs_read_only_children(make_agent: MakeAgent, ws: Path) -> None:
    agent, model = await make_agent(
        [
            reply(calls=[agent_call("change a.txt", "Coder")]),
            reply(calls=[("FileWrite", {"file_path": "a.txt", "content": "changed"})]),
            reply(text="Could not change it."),
            reply(text="Plan: change a.txt."),
        ],
        mode="plan",
        yolo=True,
    )
    await agent.run_turn("plan it")
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert "not available in ask mode" in last_tool(model, 2)


def test_catalog_install_narrow_uninstall() -> None:
    from openmono.subagents import agent_spec

    class AgentOnly:
        def tools(self) -> dict[str, OfferedTool]:
            return {"Agent": OfferedTool(agent_spec(), AgentTool.facts())}

        async def call(self, request: ToolRequest, emit: object) -> ToolResult:
            raise AssertionError("not called")

    catalog = ToolCatalog()
    toolset = AgentOnly()
    catalog.install(toolset)
    assert [s.name for s in catalog.for_mode("ask")] == ["Agent"]
    assert catalog.narrowed(lambda _name, facts: facts.subagents).specs == {}
    catalog.uninstall(toolset)
    assert catalog.specs == {} and catalog.lookup("Agent") is None
    assert json.loads(json.dumps(agent_spec().parameters))["type"] == "object"


async def test_a_childs_todo_list_is_its_own(make_agent: MakeAgent) -> None:
    mine = [{"content": "Delegate", "status": "in_progress", "active_form": "Delegating"}]
    theirs = [{"content": "Edit a.txt", "status": "pending", "active_form": "Editing"}]
    agent, model = await make_agent(
        [
            reply(calls=[("TodoWrite", {"todos": mine}), agent_call("edit it", "Coder")]),
            reply(calls=[("TodoWrite", {"todos": theirs})]),  # the child
            reply(text="planned"),
            reply(text="Delegated."),  # the parent again
        ]
    )
    await agent.run_turn("go")
    assert "Todo list updated: 1 items" in last_tool(model, 2)  # the child's TodoWrite ran
    assert [t.content for t in agent.todos] == ["Delegate"]
