"""The loop against the scripted OpenAI-compatible server (real HTTP + SSE) and the real tools."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.executor import LocalExecutor
from openmono.loop import LoopEvent, TextChunk, ToolStarted
from openmono.sessions import load_session
from openmono_contracts import ToolRequest, ToolResult

from tests.support.agents import OpenAgent
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "scripted-key"


class OverlapProbe:
    """Wraps the real local executor and records how many calls were in flight at once."""

    def __init__(self) -> None:
        self.inner = LocalExecutor()
        self.in_flight = 0
        self.max_in_flight = 0

    async def run(self, req: ToolRequest) -> ToolResult:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self.inner.run(req)
        finally:
            self.in_flight -= 1

    async def cancel(self, call_id: str) -> None:
        await self.inner.cancel(call_id)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(
        "import calc\nassert calc.add(2, 3) == 5, 'add is wrong'\nprint('tests passed')\n"
    )
    return root


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    return {"llm.api_key": KEY, "tool_timeout_s": 60}


def tool_messages(request_json: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request_json["messages"] if m["role"] == "tool"]


async def test_read_edit_run_tests_answer(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    run_tests = f"{sys.executable} test_calc.py"
    llm = scripted_llm(
        [
            Turn(text="Let me look.", tool_calls=[Call("FileRead", {"file_path": "calc.py"})]),
            Turn(
                tool_calls=[
                    Call(
                        "FileEdit",
                        {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
                    )
                ]
            ),
            Turn(tool_calls=[Call("Bash", {"command": run_tests})]),
            Turn(text="Fixed: add() subtracted; the tests pass now."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("FileEdit", f"Bash:{sys.executable} *"))
    events: list[LoopEvent] = []
    done = await agent.run_turn("fix add() and run the tests", events.append)
    assert done.reason == "stop", done
    assert done.text == "Fixed: add() subtracted; the tests pass now."
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    requests = [r.json for r in llm.chat_requests]
    assert len(requests) == 4
    assert all(r["stream"] is True for r in requests)
    assert {t["function"]["name"] for t in requests[0]["tools"]} >= {"FileRead", "Bash"}
    assert requests[0]["messages"][0]["role"] == "system"
    assert requests[0]["messages"][-1] == {"role": "user", "content": "fix add() and run the tests"}
    assert "return a - b" in tool_messages(requests[1])[-1]["content"]
    assert tool_messages(requests[3])[-1]["content"].count("tests passed") == 1
    # the assistant's call went back to the server with its id, and the result answers that id
    call = requests[1]["messages"][-2]["tool_calls"][0]
    assert call["function"]["name"] == "FileRead"
    assert tool_messages(requests[1])[-1]["tool_call_id"] == call["id"]
    started = [e.name for e in events if isinstance(e, ToolStarted)]
    assert started == ["FileRead", "FileEdit", "Bash"]
    # everything is in the session file, in order
    roles = [m.role for m in load_session(agent.writer.path).messages]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    # /undo restores the file the edit changed
    assert agent.undo() == [ws / "calc.py"]
    assert "a - b" in (ws / "calc.py").read_text()


async def test_parallel_reads_overlap(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    for i in range(4):
        (ws / f"f{i}.txt").write_text(f"content {i}\n")
    reads = [Call("FileRead", {"file_path": f"f{i}.txt"}) for i in range(4)]
    llm = scripted_llm(
        [Turn(tool_calls=reads), Turn(text="read all four")], api_key=KEY, n_ctx=32768
    )
    probe = OverlapProbe()
    agent = await open_with(llm, executor=probe)
    try:
        done = await agent.run_turn("read the four files")
    finally:
        await probe.aclose()
    assert done.reason == "stop"
    assert probe.max_in_flight == 4
    results = tool_messages(llm.chat_requests[1].json)
    # results come back in the order of the calls, each with its own file's content
    assert [r["content"].strip().split("\t")[-1] for r in results] == [
        f"content {i}" for i in range(4)
    ]


async def test_writes_run_in_order_not_in_parallel(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    writes = [Call("FileWrite", {"file_path": "out.txt", "content": f"v{i}"}) for i in range(3)]
    llm = scripted_llm([Turn(tool_calls=writes), Turn(text="ok")], api_key=KEY, n_ctx=32768)
    probe = OverlapProbe()
    agent = await open_with(llm, executor=probe, allow=("FileWrite",))
    try:
        await agent.run_turn("write")
    finally:
        await probe.aclose()
    assert probe.max_in_flight == 1
    assert (ws / "out.txt").read_text() == "v2"


async def test_denied_write_is_a_result_the_model_reads(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileWrite", {"file_path": "new.py", "content": "x = 1\n"})]),
            Turn(text="I could not write new.py; here is the content instead."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    done = await agent.run_turn("create new.py")
    assert done.reason == "stop"
    assert not (ws / "new.py").exists()
    result = tool_messages(llm.chat_requests[1].json)[0]["content"]
    assert "permission denied" in result and "non-interactive" in result
    assert "--allow FileWrite" in result
    stored = [m for m in load_session(agent.writer.path).messages if m.role == "tool"]
    assert stored[0].is_error and stored[0].tool_name == "FileWrite"


async def test_doom_loop_is_stopped(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    same = Turn(tool_calls=[Call("Grep", {"pattern": "add"})])
    llm = scripted_llm([same] * 6 + [Turn(text="never reached")], api_key=KEY, n_ctx=32768)
    agent = await open_with(llm)
    done = await agent.run_turn("find add")
    assert done.reason == "doom_loop"
    assert len(llm.chat_requests) == 5  # warned (the call ran), blocked, then stopped
    warned = tool_messages(llm.chat_requests[3].json)[-1]["content"]
    assert "[loop guard] Warning" in warned and "same call 3 times" in warned
    blocked = tool_messages(llm.chat_requests[4].json)[-1]["content"]
    assert blocked.startswith("Error: Not run")


async def test_context_overflow_compacts_and_succeeds(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    (ws / "big.py").write_text("".join(f"# line {i} " + "x" * 90 + "\n" for i in range(120)))
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "big.py"})]),
            Turn.context_overflow(n_prompt_tokens=40000, n_ctx=32768),
            Turn(text="Summary: big.py is 120 comment lines."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    done = await agent.run_turn("what is in big.py?")
    assert done.reason == "stop" and done.text.startswith("Summary")
    assert len(llm.chat_requests) == 3
    before, after = llm.chat_requests[1].json, llm.chat_requests[2].json
    assert len(json.dumps(after["messages"])) < len(json.dumps(before["messages"])) - 5000
    assert "evicted" in tool_messages(after)[0]["content"]
    # the retried request still answers every call it contains
    calls = {c["id"] for m in after["messages"] for c in m.get("tool_calls", [])}
    assert calls == {m["tool_call_id"] for m in tool_messages(after)}


async def test_cancel_mid_stream_keeps_the_partial_text(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    text = "".join(f"Sentence {i} of a long answer. " for i in range(300))
    llm = scripted_llm(
        [Turn(text=text, chunk_chars=10, chunk_delay_s=0.02)], api_key=KEY, n_ctx=32768
    )
    agent = await open_with(llm)
    got: list[str] = []
    enough = asyncio.Event()

    def sink(event: LoopEvent) -> None:
        if isinstance(event, TextChunk):
            got.append(event.text)
            if len(got) >= 5:
                enough.set()

    task = asyncio.ensure_future(agent.run_turn("write a long answer", sink))
    await asyncio.wait_for(enough.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    partial = "".join(got)
    assert 0 < len(partial) < len(text)
    last = load_session(agent.writer.path).messages[-1]
    assert last.role == "assistant" and last.interrupted
    assert last.content is not None and last.content.startswith(partial)
    assert len(last.content) < len(text)


async def test_cancel_stops_a_running_tool(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    marker = ws / "started"
    command = f"touch {marker} && sleep 47.25"
    llm = scripted_llm(
        [Turn(tool_calls=[Call("Bash", {"command": command})])], api_key=KEY, n_ctx=32768
    )
    agent = await open_with(llm, yolo=True)
    running = asyncio.Event()

    def sink(event: LoopEvent) -> None:
        if isinstance(event, ToolStarted):
            running.set()

    task = asyncio.ensure_future(agent.run_turn("sleep", sink))
    await asyncio.wait_for(running.wait(), 60)
    for _ in range(500):
        if marker.exists():
            break
        await asyncio.sleep(0.02)
    loop = asyncio.get_running_loop()
    started = loop.time()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert loop.time() - started < 20  # the tool group is killed, not waited out (47 s)
    leftovers = [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p).endswith("sleep 47.25")]
    assert leftovers == []
    messages = load_session(agent.writer.path).messages
    assert messages[-1].role == "tool" and "cancelled" in (messages[-1].content or "")


def _cmdline(proc_dir: Path) -> str:
    try:
        return (proc_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


async def test_tool_calls_written_as_text_are_recovered_and_run(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    qwen = (
        "I will read it.\n<tool_call>\n<function=FileRead>\n<parameter=file_path>\ncalc.py\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    hermes = '<tool_call>{"name": "Grep", "arguments": {"pattern": "def add"}}</tool_call>'
    llm = scripted_llm(
        [Turn(text=qwen), Turn(text=hermes), Turn(text="add() is in calc.py")],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    events: list[LoopEvent] = []
    done = await agent.run_turn("where is add?", events.append)
    assert done.reason == "stop" and done.text == "add() is in calc.py"
    assert [e.name for e in events if isinstance(e, ToolStarted)] == ["FileRead", "Grep"]
    shown = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert shown.startswith("I will read it.") and shown.endswith("add() is in calc.py")
    assert "<tool_call>" not in shown and "<function=" not in shown and "<param" not in shown
    second = llm.chat_requests[1].json["messages"]
    assistant = second[-2]
    assert assistant["content"].strip() == "I will read it."  # the markup is not sent back
    assert assistant["tool_calls"][0]["function"]["name"] == "FileRead"
    assert "return a - b" in tool_messages(llm.chat_requests[1].json)[0]["content"]
    assert "calc.py" in tool_messages(llm.chat_requests[2].json)[-1]["content"]


async def test_cut_off_over_http_is_continued_not_dropped(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    # The real client flags the call cut by `finish_reason: length`; the loop asks for it again.
    cut = Call("FileWrite", '{"file_path": "notes.txt", "content": "first li')
    whole = Call("FileWrite", {"file_path": "notes.txt", "content": "first line\n"})
    llm = scripted_llm(
        [
            Turn(text="Writing the notes", tool_calls=[cut], finish_reason="length"),
            Turn(tool_calls=[whole]),
            Turn(text="The notes are in notes", finish_reason="length"),
            Turn(text=".txt."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("FileWrite",))
    done = await agent.run_turn("write notes")
    assert done.reason == "stop" and done.text == "The notes are in notes.txt."
    assert (ws / "notes.txt").read_text() == "first line\n"
    asked = llm.chat_requests[1].json["messages"]
    assert asked[-2]["role"] == "assistant" and asked[-2]["content"] == "Writing the notes"
    assert "FileWrite call was cut off" in asked[-1]["content"]
    results = tool_messages(llm.chat_requests[2].json)
    assert len(results) == 1 and not results[0]["content"].startswith("Error")


async def test_each_llm_request_names_its_conversation_and_a_sub_agent_its_own(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    """X-OpenMono-Session: the gateway keeps a conversation on one replica by it."""
    llm = scripted_llm(
        [
            Turn(
                tool_calls=[
                    Call("Agent", {"description": "d", "prompt": "look", "agent_type": "Explore"})
                ]
            ),
            Turn(text="child done"),
            Turn(text="parent done"),
            Turn(text="second turn"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    assert (await agent.run_turn("go")).reason == "stop"
    assert (await agent.run_turn("again")).reason == "stop"
    sessions = [r.headers.get("x-openmono-session") for r in llm.chat_requests]
    parent, child = agent.session_id, sessions[1]
    assert sessions == [parent, child, parent, parent]
    assert child and child != parent
    assert (agent.writer.path.parent / agent.session_id / "agents" / f"{child}.jsonl").exists()


async def test_a_write_in_a_read_only_task_is_refused_also_in_a_sub_agent(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    """The safety floor: writes run without asking here (--allow FileWrite), but the user only
    asked a question, so neither the model nor the sub-agent it starts may write."""
    write = Call("FileWrite", {"file_path": "calc.py", "content": "broken\n"})
    sub = {"description": "d", "prompt": "Rewrite calc.py", "agent_type": "general-purpose"}
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Agent", sub)]),
            Turn(tool_calls=[write]),  # the sub-agent's
            Turn(text="child could not write"),
            Turn(tool_calls=[write]),
            Turn(text="calc.py subtracts; say if it should be changed."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("FileWrite",))
    done = await agent.run_turn("What does the function in calc.py return?")
    assert done.reason == "stop"
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    child = tool_messages(llm.chat_requests[2].json)[-1]["content"]
    parent = tool_messages(llm.chat_requests[4].json)[-1]["content"]
    for result in (child, parent):
        assert result.startswith("Error: FileWrite was not run")
        assert "no file was changed" in result and "ask the user" in result
