"""`openmono acp` driven by the ACP SDK's own client against the scripted LLM server (real HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import resource_block, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, TextResourceContents

from tests.support.acp_client import RecordingClient, acp_agent
from tests.support.acp_client import agent_env as acp_agent_env
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "acp-key"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root


def agent_env(tmp_path: Path, llm: ScriptedLLM) -> dict[str, str]:
    return acp_agent_env(tmp_path, llm.url, KEY)


async def start_session(conn: object, ws: Path, caps: ClientCapabilities | None = None) -> str:
    init = await conn.initialize(protocol_version=1, client_capabilities=caps)  # type: ignore[attr-defined]
    assert init.protocol_version == 1
    assert init.agent_capabilities.load_session is True
    assert init.agent_capabilities.session_capabilities.list is not None
    new = await conn.new_session(cwd=str(ws), mcp_servers=[])  # type: ignore[attr-defined]
    assert new.modes.current_mode_id == "agent"
    assert {m.id for m in new.modes.available_modes} == {"agent", "plan", "ask"}
    return str(new.session_id)


async def test_prompt_streams_updates_and_asks_permission(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    todos = [
        {"content": "write the file", "status": "in_progress", "active_form": "Writing"},
        {"content": "report", "status": "pending", "active_form": "Reporting"},
    ]
    llm = scripted_llm(
        [
            Turn(reasoning="The user wants a file.", text="Planning. ",
                 tool_calls=[Call("TodoWrite", {"todos": todos})]),
            Turn(text="Writing it.", tool_calls=[
                Call("FileWrite", {"file_path": "out.txt", "content": "hello\n"}, id="w1")]),
            Turn(text="Done: out.txt written."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    async with acp_agent(agent_env(tmp_path, llm), ws, tmp_path / "acp.log") as (conn, client):
        sid = await start_session(conn, ws)
        result = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("write out.txt")]), 60
        )
    assert result.stop_reason == "end_turn"
    assert (ws / "out.txt").read_text() == "hello\n"
    kinds = client.kinds()
    assert "agent_thought_chunk" in kinds
    assert client.text("agent_thought_chunk").startswith("The user wants a file.")
    assert client.text() == "Planning. Writing it.Done: out.txt written."
    # the plan from TodoWrite
    plans = client.of_kind("plan")
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("write the file", "in_progress"), ("report", "pending")
    ]  # fmt: skip
    # the write: announced (pending), asked about, then run and completed
    assert [p.tool_call_id for p in client.permissions] == ["w1"]
    starts = [u for u in client.of_kind("tool_call") if u.tool_call_id == "w1"]
    assert len(starts) == 1 and starts[0].status == "pending" and starts[0].kind == "edit"
    updates = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "w1"]
    assert [u.status for u in updates] == ["in_progress", "completed"]
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    # the permission request came after the client knew about the call
    assert llm.chat_requests[-1].json["messages"][-1]["role"] == "tool"


async def test_denied_permission_stays_denied(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Bash", {"command": "touch made.txt"}, id="b1")]),
            Turn(text="I could not run it."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    client = RecordingClient(answer="reject_once")
    env = agent_env(tmp_path, llm)
    async with acp_agent(env, ws, tmp_path / "acp.log", client) as (conn, client):
        sid = await start_session(conn, ws)
        result = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("make a file")]), 60
        )
    assert result.stop_reason == "end_turn"
    assert not (ws / "made.txt").exists()
    assert [p.tool_call_id for p in client.permissions] == ["b1"]
    final = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "b1"][-1]
    assert final.status == "failed"
    tool_msg = llm.chat_requests[-1].json["messages"][-1]
    assert tool_msg["role"] == "tool" and "declined" in tool_msg["content"]


async def test_cancel_mid_turn_then_prompt_again(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(text="x" * 4000, chunk_chars=4, chunk_delay_s=0.02),  # ~20 s if not cancelled
            Turn(text="second answer"),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    async with acp_agent(agent_env(tmp_path, llm), ws, tmp_path / "acp.log") as (conn, client):
        sid = await start_session(conn, ws)
        streaming = asyncio.Event()
        client.on_update = lambda u: (
            streaming.set() if u.session_update == "agent_message_chunk" else None
        )
        prompt = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=[text_block("talk for long")])
        )
        await asyncio.wait_for(streaming.wait(), 30)
        await conn.cancel(session_id=sid)
        result = await asyncio.wait_for(prompt, 15)
        assert result.stop_reason == "cancelled"
        partial = client.text()
        assert 0 < len(partial) < 4000
        client.updates.clear()
        again = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("now briefly")]), 30
        )
        assert again.stop_reason == "end_turn"
        assert client.text() == "second answer"
    # the second request carried the interrupted reply and the new prompt
    messages = llm.chat_requests[-1].json["messages"]
    assert messages[-1] == {"role": "user", "content": "now briefly"}
    assert any(m["role"] == "assistant" and m["content"].startswith("xxxx") for m in messages)


async def test_load_saved_session_replays_and_continues(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "notes.txt"}, id="r1")]),
            Turn(text="notes.txt has two lines."),
            Turn(text="The second line is beta."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    env = agent_env(tmp_path, llm)
    async with acp_agent(env, ws, tmp_path / "acp1.log") as (conn, _client):
        sid = await start_session(conn, ws)
        first = await conn.prompt(session_id=sid, prompt=[text_block("read notes.txt")])
        assert first.stop_reason == "end_turn"
    async with acp_agent(env, ws, tmp_path / "acp2.log") as (conn, client):
        await conn.initialize(protocol_version=1)
        listed = await conn.list_sessions(cwd=str(ws))
        assert [(s.session_id, s.title) for s in listed.sessions] == [(sid, "read notes.txt")]
        loaded = await asyncio.wait_for(conn.load_session(cwd=str(ws), session_id=sid), 30)
        assert loaded.modes.current_mode_id == "agent"
        replayed = client.kinds()
        assert replayed[0] == "user_message_chunk"
        assert client.text("user_message_chunk") == "read notes.txt"
        assert "tool_call" in replayed
        assert client.text() == "notes.txt has two lines."
        done = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "r1"]
        assert done[-1].status == "completed"
        client.updates.clear()
        result = await conn.prompt(session_id=sid, prompt=[text_block("and the second line?")])
        assert result.stop_reason == "end_turn"
        assert client.text() == "The second line is beta."
    history = llm.chat_requests[-1].json["messages"]
    assert [m["role"] for m in history[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    assert "beta" in history[3]["content"]


async def test_plan_mode_and_the_safety_floor_refuse_writes(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    """Writes are allowed without asking (`--allow FileWrite`), but plan mode refuses them, and
    so does the safety floor in a prompt that only reads: the user's own text decides, not the
    file the editor attached (whose words ask for a change)."""
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileWrite", {"file_path": "x.txt", "content": "x"}, id="w")]),
            Turn(text="Plan: write x.txt."),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "notes.txt", "content": "x\n"})]),
            Turn(text="notes.txt says alpha and beta."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    attached = resource_block(
        TextResourceContents(uri="file:///todo.md", text="write tests, then update the docs")
    )
    allowed = ("--allow", "FileWrite")
    env = agent_env(tmp_path, llm)
    async with acp_agent(env, ws, tmp_path / "acp.log", extra_args=allowed) as (conn, client):
        sid = await start_session(conn, ws)
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        assert client.of_kind("current_mode_update")[-1].current_mode_id == "plan"
        result = await conn.prompt(session_id=sid, prompt=[text_block("write x.txt")])
        assert result.stop_reason == "end_turn"
        assert not (ws / "x.txt").exists()
        assert client.permissions == []  # refused by the mode guard before anyone is asked
        tool_msg = llm.chat_requests[1].json["messages"][-1]
        assert "plan mode" in tool_msg["content"]
        await conn.set_session_mode(session_id=sid, mode_id="agent")
        prompt = [text_block("What does notes.txt say?"), attached]
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=prompt), 60)
    assert result.stop_reason == "end_turn"
    assert (ws / "notes.txt").read_text() == "alpha\nbeta\n" and client.permissions == []
    tool_msg = llm.chat_requests[-1].json["messages"][-1]
    assert tool_msg["content"].startswith("Error: FileWrite was not run")


async def test_client_fs_serves_reads_and_writes(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "notes.txt"}, id="r")]),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "new.txt", "content": "n\n"})]),
            # an existing file the session never read: refused before the editor is asked
            Turn(tool_calls=[Call("FileWrite", {"file_path": "other.txt", "content": "o\n"})]),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "notes.txt", "content": "m\n"})]),
            Turn(text="ok"),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    (ws / "other.txt").write_text("keep me\n")
    client = RecordingClient(answer="allow_once")
    client.files = {str(ws / "notes.txt"): "unsaved editor text\nsecond\n"}
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    env = agent_env(tmp_path, llm)
    async with acp_agent(env, ws, tmp_path / "acp.log", client) as (conn, client):
        sid = await start_session(conn, ws, caps)
        result = await conn.prompt(session_id=sid, prompt=[text_block("read and write")])
    assert result.stop_reason == "end_turn"
    assert client.reads == [str(ws / "notes.txt")]
    read_result = llm.chat_requests[1].json["messages"][-1]["content"]
    assert "unsaved editor text" in read_result and "alpha" not in read_result
    assert client.writes == [(str(ws / "new.txt"), "n\n"), (str(ws / "notes.txt"), "m\n")]
    assert not (ws / "new.txt").exists()  # the editor owns the write
    blind = llm.chat_requests[3].json["messages"][-1]["content"]
    assert "has not read it" in blind and (ws / "other.txt").read_text() == "keep me\n"


async def test_bad_requests_get_errors_and_the_agent_keeps_serving(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    from acp import RequestError

    llm = scripted_llm([Turn(text="still here")], api_key=KEY, n_ctx=32768)
    async with acp_agent(agent_env(tmp_path, llm), ws, tmp_path / "acp.log") as (conn, client):
        await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as bad_cwd:
            await conn.new_session(cwd=str(tmp_path / "missing"), mcp_servers=[])
        assert "not a directory" in str(bad_cwd.value.data)
        with pytest.raises(RequestError):
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(ws), session_id="no-such-session")
        new = await conn.new_session(cwd=str(ws), mcp_servers=[])
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=new.session_id, mode_id="wild")
        result = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
        assert result.stop_reason == "end_turn" and client.text() == "still here"


async def test_mcp_servers_from_the_client(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    import sys

    from acp.schema import McpServerStdio

    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("mcp__clock__get_current_time", {"timezone": "UTC"}, id="m")]),
            Turn(text="It is now."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    server = McpServerStdio(
        name="clock", command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[],
    )  # fmt: skip
    async with acp_agent(agent_env(tmp_path, llm), ws, tmp_path / "acp.log") as (conn, client):
        init = await conn.initialize(protocol_version=1)
        assert init.agent_capabilities.mcp_capabilities.http is True
        new = await conn.new_session(cwd=str(ws), mcp_servers=[server])
        result = await conn.prompt(session_id=new.session_id, prompt=[text_block("time?")])
    assert result.stop_reason == "end_turn"
    offered = {t["function"]["name"] for t in llm.chat_requests[0].json["tools"]}
    assert "mcp__clock__get_current_time" in offered
    done = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "m"][-1]
    assert done.status == "completed" and '"timezone": "UTC"' in done.content[0].content.text


async def test_ask_user_question_is_put_to_the_client(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    ask = {"question": "Which colour?", "options": ["red", "blue"]}
    llm = scripted_llm(
        [Turn(tool_calls=[Call("AskUser", ask, id="q")]), Turn(text="Blue it is.")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    client = RecordingClient(answer="choice-1")
    env = agent_env(tmp_path, llm)
    async with acp_agent(env, ws, tmp_path / "acp.log", client) as (conn, client):
        sid = await start_session(conn, ws)
        result = await conn.prompt(session_id=sid, prompt=[text_block("pick a colour")])
    assert result.stop_reason == "end_turn"
    assert [p.title for p in client.permissions] == ["Which colour?"]
    assert llm.chat_requests[-1].json["messages"][-1]["content"] == "The user answered: blue"
