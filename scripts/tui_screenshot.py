"""Render docs/images/tui.svg: a session of the full-screen UI, driven headless (Textual's Pilot)
against the scripted OpenAI-compatible server of the tests (real HTTP + SSE, scripted replies).

    uv run python scripts/tui_screenshot.py [docs/images/tui.svg]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openmono.cli.tui import PermissionPrompt

from tests.support.scripted_llm import Call, ScriptedLLM, Turn
from tests.support.tui_driver import make_app, send, wait_for

APP = """def greet(name):
    return "Hello " + name


print(greet("world"))
"""
EDIT = {
    "file_path": "greet.py",
    "old_string": 'def greet(name):\n    return "Hello " + name',
    "new_string": 'def greet(name: str) -> str:\n    return f"Hello, {name}!"',
}


async def render() -> str:
    root = Path(tempfile.mkdtemp(prefix="tui-shot-"))
    os.environ["OPENMONO_DATA_DIR"] = str(root / "data")
    ws = root / "demo"
    ws.mkdir()
    (ws / "greet.py").write_text(APP)
    llm = ScriptedLLM.start(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "greet.py"})],
                 reasoning="The user wants type hints and an f-string. Read the file first."),
            Turn(text="I will add type hints and use an f-string.",
                 tool_calls=[Call("FileEdit", EDIT)]),
            Turn(tool_calls=[Call("Bash", {"command": "python greet.py"})]),
            Turn(text="Done: `greet` is typed and uses an f-string; `python greet.py` prints "
                 "**Hello, world!**"),
        ],
        api_key="demo",
        n_ctx=8192,
    )  # fmt: skip
    try:
        app = make_app(llm.url, ws, "demo")
        async with app.run_test(size=(110, 36)) as pilot:
            await wait_for(pilot, app.ready.is_set, what="the session")
            await send(pilot, "add type hints to greet.py and run it")
            await wait_for(pilot, lambda: bool(app.query(PermissionPrompt)), what="the ask")
            await pilot.press("y")
            await wait_for(pilot, lambda: len(app.query(PermissionPrompt)) == 2, what="Bash ask")
            await pilot.press("a")
            await wait_for(pilot, lambda: not app.busy, what="the end of the turn")
            await app.transcript.settle()
            app.prompt.load_text("/th")
            await pilot.pause(0.3)
            svg = app.export_screenshot(title="openmono")
    finally:
        llm.stop()
    return svg


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/tui.svg")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(asyncio.run(render()))
    print(f"wrote {target}")
