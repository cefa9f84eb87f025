"""ACP mapping without processes: loop events → updates, replay, prompt blocks, SSE, token."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import EmbeddedResourceContentBlock, ResourceContentBlock, TextResourceContents
from openmono.acp import Translator, prompt_text, replay, resolve_token, sse_frame
from openmono.config import ConfigError, Settings, read_env_file
from openmono.loop import (
    Notice,
    PermissionAsked,
    ReasoningChunk,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from openmono.sessions import RecordedCall, SessionMessage


def test_text_reasoning_and_a_tool_call_lifecycle() -> None:
    t = Translator()
    out = [
        *t.updates(ReasoningChunk(text="hmm")),
        *t.updates(TextChunk(text="Hi")),
        *t.updates(PermissionAsked(call_id="c1", name="Bash", arguments={"command": "make"},
                                   reason="needs approval")),
        *t.updates(ToolStarted(call_id="c1", name="Bash", arguments={"command": "make"})),
        *t.updates(ToolFinished(call_id="c1", name="Bash", ok=False, output="", error="exit 2")),
    ]  # fmt: skip
    kinds = [u.session_update for u in out]
    assert kinds == [
        "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update",
        "tool_call_update",
    ]  # fmt: skip
    start = out[2]
    assert start.tool_call_id == "c1" and start.status == "pending" and start.kind == "execute"
    assert start.title == "Bash: make" and start.raw_input == {"command": "make"}
    assert out[3].status == "in_progress"
    assert out[4].status == "failed" and out[4].content[0].content.text == "exit 2"


def test_a_call_refused_before_it_started_is_announced_once() -> None:
    t = Translator()
    out = list(
        t.updates(
            ToolFinished(call_id="c9", name="FileWrite", ok=False, output="", error="denied",
                         denied=True)
        )
    )  # fmt: skip
    assert [u.session_update for u in out] == ["tool_call"]
    assert out[0].status == "failed" and out[0].kind == "edit"


def test_todo_write_becomes_a_plan() -> None:
    t = Translator()
    todos = [
        {"content": "a", "status": "completed", "active_form": "A"},
        {"content": "b", "status": "weird", "active_form": "B"},
    ]
    list(t.updates(ToolStarted(call_id="t", name="TodoWrite", arguments={"todos": todos})))
    out = list(t.updates(ToolFinished(call_id="t", name="TodoWrite", ok=True, output="ok")))
    plan = out[-1]
    assert plan.session_update == "plan"
    assert [(e.content, e.status) for e in plan.entries] == [("a", "completed"), ("b", "pending")]


def test_warnings_and_abnormal_stops_are_shown() -> None:
    t = Translator()
    assert list(t.updates(Notice(message="checkpoint"))) == []
    warn = list(t.updates(Notice(level="warning", message="compacting")))
    assert warn[0].content.text == "[warning] compacting\n"
    stop = list(t.updates(TurnDone(reason="doom_loop", error="repeating")))
    assert stop[0].content.text == "\n[stopped: doom_loop: repeating]"
    assert list(t.updates(TurnDone(reason="stop"))) == []


def test_replay_of_a_saved_conversation() -> None:
    messages = [
        SessionMessage(role="user", content="read it"),
        SessionMessage(role="assistant", content="Reading.", reasoning_content="plan",
                       tool_calls=[RecordedCall(id="r", name="FileRead",
                                                arguments='{"file_path": "a"}')]),
        SessionMessage(role="tool", content="1\talpha", tool_call_id="r"),
        SessionMessage(role="system", content="[truncated]"),
        SessionMessage(role="assistant", content="It says alpha."),
    ]  # fmt: skip
    out = list(replay(messages))
    assert [u.session_update for u in out] == [
        "user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call",
        "tool_call_update", "agent_message_chunk",
    ]  # fmt: skip
    assert out[3].locations[0].path == "a" and out[4].status == "completed"


def test_prompt_text_from_blocks() -> None:
    resource = EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(
            uri="file:///w/a.py", text="x = 1", mime_type="text/x-python"
        ),
    )
    link = ResourceContentBlock(type="resource_link", uri="file:///w/b.py", name="b.py")
    text = prompt_text([text_block("fix this"), resource, link])
    assert text == (
        "fix this\n[context: file:///w/a.py]\nx = 1\n[end of file:///w/a.py]\n[file: file:///w/b.py]"
    )
    assert prompt_text([]) == ""


def test_sse_frame() -> None:
    assert sse_frame("text", {"t": "é\n"}) == 'event: text\ndata: {"t": "é\\n"}\n\n'.encode()


def test_one_token_flag_settings_or_generated_into_the_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / "compose.env"
    settings = Settings(data_dir=tmp_path)
    token, where = resolve_token(settings, None, env_file)
    assert len(token) >= 40 and where == f"OPENMONO_ACP_TOKEN generated into {env_file}"
    assert read_env_file(env_file) == {"OPENMONO_ACP_TOKEN": token}
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert resolve_token(settings, None, env_file) == (token, f"OPENMONO_ACP_TOKEN in {env_file}")
    assert resolve_token(settings, "given", env_file) == ("given", "from --token")
    configured = Settings(data_dir=tmp_path, acp={"token": "from-settings"})
    assert resolve_token(configured, None, env_file)[0] == "from-settings"
    assert Settings().acp.host == "127.0.0.1" and Settings().acp.port == 7475
    with pytest.raises(ConfigError, match="no ACP token: set OPENMONO_ACP_TOKEN"):
        resolve_token(settings, None, None)


def test_an_old_token_file_moves_into_the_env_file(tmp_path: Path) -> None:
    (tmp_path / "acp-token").write_text("old-token\n")
    env_file = tmp_path / "compose.env"
    token, where = resolve_token(Settings(data_dir=tmp_path), None, env_file)
    assert token == "old-token" and "moved there from" in where
    assert read_env_file(env_file)["OPENMONO_ACP_TOKEN"] == "old-token"
    assert not (tmp_path / "acp-token").exists()  # one token, not two


def test_read_page_is_the_one_file_read_format() -> None:
    # The worker's FileRead and the ACP client-fs path both answer through this formatter.
    from openmono_worker.formatting import read_page, write_summary

    assert read_page(["a", "b"], 3, "x.py") == ("     3\ta\n     4\tb", 4)
    assert read_page([], 1, "x.py")[0] == "(x.py is empty)"
    paged, _ = read_page(["a"], 1, "x.py", total=5)
    assert paged.endswith("[x.py: showing lines 1-1 of 5; continue with offset=2]")
    more, _ = read_page(["a", "b"], 7, "x.py", more=True)
    assert more.endswith("[x.py: showing lines 7-8; continue with offset=9]")
    cut, last = read_page(["x" * 50, "y" * 50], 1, "x.py", total=2, budget=60)
    assert last == 1 and cut.endswith("continue with offset=2]")
    assert write_summary("x.py", "a\nb", existed=True, via="via the editor") == (
        "Overwrote x.py via the editor (2 lines, 3 bytes)"
    )
    assert write_summary("x.py", "", existed=False) == "Created x.py (0 lines, 0 bytes)"
