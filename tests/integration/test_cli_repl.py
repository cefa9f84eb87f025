"""The interactive session, driven through a prompt_toolkit pipe against the scripted server."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from openmono.sessions import SessionStore

from tests.support.classic_repl import run_classic
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "repl-key"


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    return root


async def run_repl(llm: ScriptedLLM, ws: Path, lines: list[str]) -> str:
    return await run_classic(llm, ws, lines, KEY)


async def test_turns_permissions_and_slash_commands(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    edit = Call("FileWrite", {"file_path": "app.py", "content": "print('v2')\n"})
    llm = scripted_llm(
        [
            Turn(reasoning="The user wants v2.", text="Updating.", tool_calls=[edit]),
            Turn(text="Now it prints v2."),
            Turn(text="Again: v2."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    shown = await run_repl(
        llm,
        ws,
        [
            "/help",
            "make it print v2",
            "y",  # the permission prompt for FileWrite: once
            "/status",
            "/undo",
            "/mode plan",
            "/retry",
            "/thinking",
            "/nonsense",
            "/exit",
        ],
    )
    assert "/compact" in shown and "/resume" in shown  # help
    assert "▸ thought for" in shown and "FileWrite(app.py)" in shown
    assert "Allow FileWrite(app.py)?" in shown
    assert "Now it prints v2." in shown and "tok/s" in shown
    assert "context" in shown and "session" in shown  # status table
    assert "restored app.py" in shown
    assert (ws / "app.py").read_text() == "print('v1')\n"  # undone
    assert "mode: plan" in shown
    assert "Again: v2." in shown  # /retry ran the last message again
    assert "The user wants v2." in shown  # /thinking
    assert "unknown command /nonsense" in shown
    retried = llm.chat_requests[2].json["messages"]
    assert [m["content"] for m in retried if m["role"] == "user"] == ["make it print v2"]


async def test_denial_answers_and_resume(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    bash = Call("Bash", {"command": "make deploy"})
    llm = scripted_llm(
        [
            Turn(tool_calls=[bash]),
            Turn(tool_calls=[bash]),
            Turn(text="I will not deploy."),
            Turn(text="resumed fine"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    shown = await run_repl(llm, ws, ["deploy it", "d", "/exit"])
    assert shown.count("Allow Bash(make deploy)?") == 1  # denied for the session: asked once
    second = llm.chat_requests[2].json["messages"]
    results = [m["content"] for m in second if m["role"] == "tool"]
    assert "declined" in results[0] and "denied Bash for this session" in results[1]
    session_id = SessionStore(Path(os.environ["OPENMONO_DATA_DIR"])).resolve("last")
    shown = await run_repl(llm, ws, [f"/resume {session_id}", "hi", "/exit"])
    assert f"resumed {session_id}" in shown and "resumed fine" in shown
    sent = llm.chat_requests[3].json["messages"]
    assert sent[1]["content"] == "deploy it" and sent[-1]["content"] == "hi"


async def test_model_compact_resume_list_and_clear(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    llm = scripted_llm([Turn(text="one"), Turn(text="two")], api_key=KEY, n_ctx=32768)
    shown = await run_repl(
        llm,
        ws,
        [
            "first",
            "/model",
            "/model other-model",
            "second",
            "/compact",
            "/resume",
            "/clear",
            "/exit",
        ],
    )
    # the model by its file stem, not the path llama.cpp names it by
    assert "model scripted-model · n_ctx 32768 (from /props)" in shown
    assert "OpenMono · scripted-model · n_ctx" in shown
    assert llm.chat_requests[1].json["model"] == "other-model"
    assert "context ~" in shown  # /compact reports before → after
    assert "new session" in shown
    sessions = SessionStore(Path(os.environ["OPENMONO_DATA_DIR"])).list_sessions()
    assert len(sessions) == 2
    first_id = next(s.session_id for s in sessions if s.title == "first")
    listed = [line for line in shown.splitlines() if first_id in line and "first" in line]
    assert listed  # /resume without an id lists sessions with their titles


async def test_a_projects_risky_settings_are_asked_about_once(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "session-start-ran"
    (ws / ".openmono").mkdir()
    (ws / ".openmono" / "settings.json").write_text(
        '{"hooks": {"session_start": [{"command": "touch ' + str(marker) + '"}]}}'
    )
    llm = scripted_llm([Turn(text="hi"), Turn(text="hi again")], api_key=KEY, n_ctx=32768)
    shown = await run_repl(llm, ws, ["y", "hello", "/exit"])
    assert "brings hooks from" in shown and "run commands on this machine" in shown
    assert "Trust this project?" in shown
    assert marker.exists()  # trusted: the project's hook ran when the session opened
    store = (tmp_path / "data" / "trusted-projects.json").read_text()
    assert str(ws.resolve()) in store and '"trusted": true' in store
    marker.unlink()
    shown = await run_repl(llm, ws, ["hello", "/exit"])
    assert "Trust this project?" not in shown and marker.exists()
