"""The interactive session, driven through a prompt_toolkit pipe against the scripted server."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openmono.cli._repl import Repl
from openmono.config import RunOptions
from openmono.sessions import SessionStore
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "repl-key"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("OPENMONO_") or name == "LLAMA_API_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    return root


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp:
        yield inp


async def run_repl(llm: ScriptedLLM, ws: Path, pipe: PipeInput, lines: list[str]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)
    opts = RunOptions(endpoint=llm.url, api_key=KEY, workspace=ws)
    repl = Repl(opts, console, input=pipe, output=DummyOutput())
    pipe.send_text("".join(f"{line}\n" for line in lines))
    assert await repl.run() == 0
    return out.getvalue()


async def test_turns_permissions_and_slash_commands(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, pipe: PipeInput
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
        pipe,
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
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, pipe: PipeInput
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
    shown = await run_repl(llm, ws, pipe, ["deploy it", "d", "/exit"])
    assert shown.count("Allow Bash(make deploy)?") == 1  # denied for the session: asked once
    second = llm.chat_requests[2].json["messages"]
    results = [m["content"] for m in second if m["role"] == "tool"]
    assert "declined" in results[0] and "denied Bash for this session" in results[1]
    session_id = SessionStore(Path(os.environ["OPENMONO_DATA_DIR"])).resolve("last")
    with create_pipe_input() as second_pipe:
        shown = await run_repl(llm, ws, second_pipe, [f"/resume {session_id}", "hi", "/exit"])
    assert f"resumed {session_id}" in shown and "resumed fine" in shown
    sent = llm.chat_requests[3].json["messages"]
    assert sent[1]["content"] == "deploy it" and sent[-1]["content"] == "hi"


async def test_model_compact_resume_list_and_clear(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, pipe: PipeInput
) -> None:
    llm = scripted_llm([Turn(text="one"), Turn(text="two")], api_key=KEY, n_ctx=32768)
    shown = await run_repl(
        llm,
        ws,
        pipe,
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
    assert "model /models/scripted-model.gguf · n_ctx 32768 (from /props)" in shown
    assert llm.chat_requests[1].json["model"] == "other-model"
    assert "context ~" in shown  # /compact reports before → after
    assert "new session" in shown
    sessions = SessionStore(Path(os.environ["OPENMONO_DATA_DIR"])).list_sessions()
    assert len(sessions) == 2
    first_id = next(s.session_id for s in sessions if s.title == "first")
    listed = [line for line in shown.splitlines() if first_id in line and "first" in line]
    assert listed  # /resume without an id lists sessions with their titles
