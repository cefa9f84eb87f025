"""Drive the full-screen UI headless (Textual's Pilot) against the scripted model."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

from openmono.cli.tui import OpenMonoApp
from openmono.config import RunOptions
from textual.pilot import Pilot
from textual.widgets import Static


def make_app(url: str, ws: Path, key: str) -> OpenMonoApp:
    return OpenMonoApp(RunOptions(endpoint=url, api_key=key, workspace=ws))


def screen_text(app: OpenMonoApp) -> str:
    """What the transcript shows, as text (markdown sources, statics, tables, panel titles)."""
    from rich.console import Console
    from rich.table import Table
    from textual.widgets import Collapsible, Markdown

    parts: list[str] = []
    for widget in app.transcript.walk_children():
        if isinstance(widget, Markdown):
            parts.append(widget.source)
        elif isinstance(widget, Collapsible):
            parts.append(str(widget.title))
        elif isinstance(widget, Static) and not isinstance(widget.parent, Collapsible):
            if isinstance(widget.content, Table):
                console = Console(width=200, record=True, file=io.StringIO())
                console.print(widget.content)
                parts.append(console.export_text())
            else:
                parts.append(str(widget.render()))
    return "\n".join(parts)


async def wait_for(
    pilot: Pilot[int], check: Callable[[], bool], timeout: float = 30, what: str = ""
) -> None:
    """Let the app run until `check()` holds (or fail with what the transcript shows)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            app = pilot.app
            assert isinstance(app, OpenMonoApp)
            raise AssertionError(f"timed out waiting for {what}:\n{screen_text(app)[-3000:]}")
        await pilot.pause(0.02)


async def send(pilot: Pilot[int], text: str) -> None:
    """Type `text` into the prompt and press Enter."""
    app = pilot.app
    assert isinstance(app, OpenMonoApp)
    app.prompt.load_text(text)
    await pilot.press("enter")
