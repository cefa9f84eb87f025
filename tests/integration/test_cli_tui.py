"""The full-screen UI, driven headless with Textual's Pilot against the scripted model."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from openmono.cli.slash._table import COMMANDS
from openmono.cli.tui import OpenMonoApp, PermissionPrompt, ToolPanel
from openmono.config import RunOptions
from textual import events

from tests.support.procs import ROOT
from tests.support.scripted_llm import Call, ScriptedLLM, Turn, user_texts
from tests.support.tui_driver import make_app, screen_text, send, wait_for

pytestmark = pytest.mark.integration

KEY = "tui-key"
SIZE = (110, 40)


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    return root


async def test_a_task_with_a_permission_prompt_answered(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    edit = Call("FileEdit", {"file_path": "app.py", "old_string": "v1", "new_string": "v2"})
    llm = scripted_llm(
        [
            Turn(reasoning="The user wants v2.", text="Updating **app.py**.", tool_calls=[edit]),
            Turn(tool_calls=[Call("Bash", {"command": "python app.py"})]),
            Turn(text="It prints v2 now."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await send(pilot, "make it print v2")
        await wait_for(pilot, lambda: bool(app.query(PermissionPrompt)), what="the FileEdit ask")
        assert "Allow FileEdit(app.py)?" in screen_text(app)
        assert "waiting for your answer" in str(app.status.render())
        await pilot.press("y")  # once
        await wait_for(pilot, lambda: len(app.query(PermissionPrompt)) == 2, what="Bash ask")
        await pilot.press("a")  # always, this session
        await wait_for(pilot, lambda: "It prints v2 now." in screen_text(app), what="the answer")
        await app.transcript.settle()
        shown = screen_text(app)
        panels = list(app.query(ToolPanel))
        status = str(app.status.render())
        diff = str(panels[0].query_one(".diff").render())
        bash_tail = str(panels[1].result.render())
        session_id = app.surface.current.session_id
    assert (ws / "app.py").read_text() == "print('v2')\n"
    assert "thought for" in shown and "The user wants v2." in shown  # folded, inside the block
    assert "Updating **app.py**." in shown
    assert "→ allowed once" in shown and "→ allowed for the session" in shown
    edit_panel, bash_panel = panels
    assert str(edit_panel.title).startswith("✓ FileEdit(app.py)") and not edit_panel.collapsed
    assert "\n-v1\n+v2" in diff and "--- a/app.py" in diff
    assert str(bash_panel.title).startswith("✓ Bash(python app.py)") and bash_panel.collapsed
    assert "v2" in bash_tail  # the output's tail
    for part in ("scripted-model", "ctx ", "tools native", "agent", "tok/s", "ready"):
        assert part in status
    assert "/models/" not in status and ".gguf" not in status  # the stem, not the path
    assert session_id in status


async def test_esc_interrupts_and_a_message_typed_meanwhile_is_queued(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    slow = " ".join(f"word{i}" for i in range(400))
    llm = scripted_llm(
        [
            Turn(text=slow, chunk_chars=6, chunk_delay_s=0.02),
            Turn(text="second answer"),
            Turn(text=slow, chunk_chars=6, chunk_delay_s=0.02),
            Turn(text="after the interruption"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await send(pilot, "write a lot")
        await wait_for(pilot, lambda: "word3 " in screen_text(app), what="streaming")
        await send(pilot, "and then this")  # typed during the turn: queued
        assert "queued: and then this" in screen_text(app)
        assert "1 queued" in str(app.status.render())
        await wait_for(pilot, lambda: "second answer" in screen_text(app), what="queued turn")
        assert user_texts(llm.chat_requests[1].json) == ["write a lot", "and then this"]
        assert "word399" in llm.chat_requests[1].json["messages"][2]["content"]
        await send(pilot, "again")
        await wait_for(pilot, lambda: "word3 " in screen_text(app).split("again")[-1], what="2")
        await pilot.press("escape")
        await wait_for(pilot, lambda: "interrupted" in screen_text(app), what="interrupted")
        assert app.interrupted == 1
        await send(pilot, "go on")
        await wait_for(pilot, lambda: "after the interruption" in screen_text(app), what="next")
    cut = llm.chat_requests[3].json["messages"]
    assert user_texts({"messages": cut})[-2:] == ["again", "go on"]
    assert "word399" not in cut[-2]["content"]  # the interrupted reply is kept as it was cut


async def test_completion_history_and_multi_line_paste(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    llm = scripted_llm([Turn(text="got both lines")], api_key=KEY, n_ctx=32768)
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await pilot.press("/", "t", "h")
        await pilot.pause()
        assert app.completions.display
        options = [
            str(app.completions.get_option_at_index(i).prompt)
            for i in range(app.completions.option_count)
        ]
        assert any("/think" in o and "thinking (off by default)" in o for o in options)
        assert any("/thinking" in o and "last reply's thinking" in o for o in options)
        await pilot.press("tab")
        assert app.prompt.text == "/think "
        app.prompt.clear()
        app.post_message(events.Paste("first line\nsecond line"))  # as a terminal sends it
        await pilot.pause()
        assert app.prompt.text == "first line\nsecond line"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "got both lines" in screen_text(app), what="the answer")
        await pilot.press("up")
        assert app.prompt.text == "first line\nsecond line"  # history
    assert user_texts(llm.chat_requests[0].json) == ["first line\nsecond line"]


async def test_every_command_runs_in_the_tui(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    llm = scripted_llm([Turn(text=f"answer {i}") for i in range(12)], api_key=KEY, n_ctx=32768)
    lines = {
        "help": "/help", "status": "/status", "stats": "/stats", "model": "/model",
        "think": "/think", "debug": "/debug", "btw": "/btw what now?", "compact": "/compact",
        "checkpoint": "/checkpoint", "retry": "/retry", "undo": "/undo", "mode": "/mode ask",
        "plan": "/plan a small thing", "init": "/init", "export": "/export out.html",
        "prompt": "/prompt", "memory": "/memory", "thinking": "/thinking", "resume": "/resume",
        "playbook": "/playbook", "rules": "/rules", "skills": "/skills", "map": "/map",
        "clear": "/clear",
    }  # fmt: skip
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        for turn in ("first", "second"):
            await send(pilot, turn)
            await wait_for(pilot, lambda: not app.busy, what=turn)
        for line in lines.values():
            before = len(app.transcript.children)
            await send(pilot, line)
            await wait_for(pilot, lambda: not app.busy, what=line)
            grew = lambda n=before: len(app.transcript.children) > n + 1  # noqa: E731
            await wait_for(pilot, grew, what=line)
        shown = screen_text(app)
        await send(pilot, "/exit")
        await wait_for(pilot, lambda: not app.is_running, what="/exit")
    groups = {
        f"openmono.cli.slash._{g}"
        for g in ("session", "model", "context", "project", "memory", "instructions")
    }
    built_in = {c.name for c in COMMANDS if c.handler.__module__ in groups}
    assert built_in | {"playbook"} == set(lines) | {"exit"}  # every command was invoked above
    assert "Error" not in shown and "Traceback" not in shown
    for sign in ("/checkpoint", "served:", "thinking: on", "debug: on", "compacted:",
                 "mode: ask", "mode: plan", "wrote ", "exported ", "system prompt for mode",
                 "no memories yet", "commit", "new session"):  # fmt: skip
        assert sign in shown, sign
    assert (ws / "OPENMONO.md").is_file() and (ws / "out.html").is_file()
    assert "answer" in shown


async def test_questions_are_answered_in_the_prompt(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, tmp_path: Path
) -> None:
    """The project-trust question and an AskUser question, answered by typing."""
    marker = tmp_path / "session-start-ran"
    (ws / ".openmono").mkdir()
    (ws / ".openmono" / "settings.json").write_text(
        '{"hooks": {"session_start": [{"command": "touch ' + str(marker) + '"}]}}'
    )
    ask = Call("AskUser", {"question": "Tabs or spaces?", "options": ["tabs", "spaces"]})
    llm = scripted_llm(
        [Turn(tool_calls=[ask]), Turn(text="Spaces it is.")], api_key=KEY, n_ctx=32768
    )
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "Trust this project?" in screen_text(app), what="trust")
        await send(pilot, "y")
        await wait_for(pilot, app.ready.is_set, what="the session")
        await send(pilot, "indent style?")
        await wait_for(pilot, lambda: "Tabs or spaces?" in screen_text(app), what="AskUser")
        assert "answering" in str(app.status.render())
        await send(pilot, "2")
        await wait_for(pilot, lambda: "Spaces it is." in screen_text(app), what="the answer")
    assert marker.exists()  # trusted: the project's hook ran
    results = [m for m in llm.chat_requests[1].json["messages"] if m["role"] == "tool"]
    assert "spaces" in results[0]["content"]


async def burst(app: OpenMonoApp, keys: str) -> None:
    """Keys as a fast typist sends them: all queued before the app has handled the first (Pilot's
    `press` waits for each; here the completion list lags behind, as under a streaming reply)."""
    driver = app._driver
    assert driver is not None
    for key in keys.split():
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        driver.send_message(event)


async def test_enter_sends_exactly_what_was_typed_while_a_reply_streams(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    """`/stats` + Enter typed during a reply became `/status` (the completion highlighted after
    `/st`) and sent nothing."""
    slow = " ".join(f"word{i}" for i in range(300))
    llm = scripted_llm(
        [Turn(text=slow, chunk_chars=6, chunk_delay_s=0.02)], api_key=KEY, n_ctx=32768
    )
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await send(pilot, "write a lot")
        await wait_for(pilot, lambda: "word3 " in screen_text(app), what="streaming")
        await pilot.press("/", "s", "t")
        await wait_for(pilot, lambda: app.completions.display, what="the completions")
        first = app.completions.get_option_at_index(app.completions.highlighted or 0).id
        assert first == "status"  # what Enter used to take
        await burst(app, "a t s enter")
        await wait_for(pilot, lambda: "queued: /stats" in screen_text(app), what="queued")
        assert app.prompt.text == ""
        await wait_for(pilot, lambda: "completion tokens" in screen_text(app), what="/stats")
        shown = screen_text(app)
    assert "/status" not in shown and "session file" not in shown  # /status never ran


async def test_tab_never_moves_the_focus_and_stray_keys_reach_the_prompt(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    """Tab on an empty prompt moved the focus to the transcript, unseen, and the next keys were
    lost."""
    llm = scripted_llm(
        [Turn(tool_calls=[Call("Bash", {"command": "echo hi"})]), Turn(text="said hi"),
         Turn(text="got it")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await pilot.press("tab", "shift+tab", "tab")
        assert app.focused is app.prompt
        await pilot.press("h", "i", "enter")
        await wait_for(pilot, lambda: "said hi" in screen_text(app), what="the answer")
        # a click on a panel's title focuses it; what is typed next still reaches the prompt
        title = app.query_one(ToolPanel).query_one("CollapsibleTitle")
        title.focus()
        await pilot.pause()
        assert app.focused is title
        await pilot.press("o", "k", "enter")
        await wait_for(pilot, lambda: "got it" in screen_text(app), what="the second answer")
        assert app.focused is app.prompt
    assert user_texts(llm.chat_requests[0].json) == ["hi"]
    assert user_texts(llm.chat_requests[2].json)[-1] == "ok"


async def test_tool_panels_open_with_a_key_and_a_failed_bash_shows_its_tail(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    """Bash and MCP panels started closed and no key opened them: a failing `pytest` could not be
    read."""
    failing = (
        "python -c \"print('collected 3 items'); print('FAILED test_app.py::test_v2'); exit(1)\""
    )
    llm = scripted_llm(
        [Turn(tool_calls=[Call("Bash", {"command": "echo fine"})]),
         Turn(tool_calls=[Call("Bash", {"command": failing})]), Turn(text="One test fails.")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await send(pilot, "/help")
        await wait_for(pilot, lambda: "Ctrl+O" in screen_text(app), what="/help")
        assert "open or close the tool panels" in screen_text(app)
        await send(pilot, "run the tests")
        await wait_for(pilot, lambda: bool(app.query(PermissionPrompt)), what="the ask")
        await pilot.press("y")  # `echo` ran without one; the python command needs it
        await wait_for(pilot, lambda: "One test fails." in screen_text(app), what="the answer")
        ok_panel, failed_panel = app.query(ToolPanel)
        tail = str(failed_panel.result.render())
        assert ok_panel.collapsed and not failed_panel.collapsed  # open without a key press
        assert failed_panel.result.region.height > 0  # on screen, not only in the widget
        await pilot.press("ctrl+o")
        assert not ok_panel.collapsed and not failed_panel.collapsed
        await pilot.press("ctrl+o")
        assert ok_panel.collapsed and failed_panel.collapsed
        await pilot.press("ctrl+o")
        assert not ok_panel.collapsed
        assert app.focused is app.prompt
    assert "FAILED test_app.py::test_v2" in tail and "collected 3 items" in tail
    assert "command failed (exit code 1)" in tail


async def test_an_mcp_call_is_asked_with_its_arguments_and_an_honest_reason(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, tmp_path: Path
) -> None:
    """The prompt for an MCP tool showed no arguments and said the call "changes files"."""
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "tests.support.mcp_fixture_server"],
              "cwd": str(ROOT)}  # fmt: skip
    gone = {"command": "/nonexistent/mcp-server"}
    config.write_text(json.dumps({"mcp_servers": {"fx": server, "gone": gone}}))
    echo = Call("mcp__fx__echo", {"text": "hello there", "lines": 2})
    llm = scripted_llm([Turn(tool_calls=[echo]), Turn(text="Echoed.")], api_key=KEY, n_ctx=32768)
    app = OpenMonoApp(RunOptions(endpoint=llm.url, api_key=KEY, workspace=ws, config=config))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        # told at once, not with the first reply
        assert "MCP server 'gone' could not connect (" in screen_text(app)
        await send(pilot, "echo it")
        await wait_for(pilot, lambda: bool(app.query(PermissionPrompt)), what="the MCP ask")
        asked = screen_text(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: "Echoed." in screen_text(app), what="the answer")
    assert 'Allow mcp__fx__echo(text="hello there", lines=2)?' in asked
    assert "does not declare what it changes" in asked and "changes files" not in asked
