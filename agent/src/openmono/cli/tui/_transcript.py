"""Loop events into the full-screen transcript: markdown streamed as it comes, thinking folded,
one panel per tool call, notices and a footer per turn.

Text arrives many times a second; `Streamer` coalesces the fragments that come while the widget is
still rendering the previous ones, so a fast stream never queues behind the screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown, Static

from openmono.cli.render import footer_markup, notice_markup
from openmono.cli.tui._widgets import ReasoningBlock, ToolPanel
from openmono.loop import (
    LoopEvent,
    Notice,
    PermissionAsked,
    ReasoningChunk,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    UsageReport,
)

APPEND_INTERVAL_S = 0.05


class Streamer:
    """Appends fragments to one Markdown widget, at most one update in flight.

    Between two appends it leaves the loop to keys and frames for up to `APPEND_INTERVAL_S`
    (a fast stream otherwise keeps it busy appending, and typing lags); `finish()` (the reply
    ended) cuts that pause short so the last words show at once.
    """

    def __init__(self, widget: Markdown) -> None:
        self.widget = widget
        self.pending: list[str] = []
        self.text = ""
        self.task: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()

    def feed(self, fragment: str) -> None:
        self.pending.append(fragment)
        self.text += fragment
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._run())

    def finish(self) -> None:
        self.finished.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            started = loop.time()
            chunk = "".join(self.pending)
            self.pending.clear()
            await self.widget.append(chunk)
            pause = APPEND_INTERVAL_S - (loop.time() - started)
            if pause > 0 and not self.finished.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.finished.wait(), pause)

    async def drain(self) -> None:
        while self.task is not None and not self.task.done():
            await self.task


class Transcript(VerticalScroll):
    """The conversation as it happens; `render_event` is the loop's sink."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.streamer: Streamer | None = None
        self.reasoning: ReasoningBlock | None = None
        self.reasoning_started = 0.0
        self.last_reasoning = ""
        self.tool_panels: dict[str, ToolPanel] = {}
        self.last_usage: UsageReport | None = None
        self.streamers: list[Streamer] = []

    def on_mount(self) -> None:
        # Anchored: stays at the bottom as content grows, until the user scrolls up.
        self.anchor()

    def add(self, widget: Widget) -> Widget:
        self.mount(widget)
        return widget

    def note(self, markup: str, classes: str = "note") -> None:
        self.add(Static(markup, classes=classes))

    def user(self, text: str) -> None:
        self._end_text()
        self.add(Static(Text(text), classes="user"))

    def _end_text(self) -> None:
        if self.streamer is not None:
            self.streamer.finish()
        self.streamer = None

    def _close_thinking(self) -> None:
        if self.reasoning is not None:
            self.reasoning.close(time.monotonic() - self.reasoning_started)
            self.last_reasoning = self.reasoning.text
            self.reasoning = None

    def render_event(self, event: LoopEvent) -> None:
        if isinstance(event, ReasoningChunk):
            if self.reasoning is None:
                self._end_text()
                self.reasoning = ReasoningBlock()
                self.reasoning_started = time.monotonic()
                self.add(self.reasoning)
            self.reasoning.feed(event.text)
        elif isinstance(event, TextChunk):
            self._close_thinking()
            if self.streamer is None:
                widget = Markdown("", classes="assistant")
                self.add(widget)
                self.streamer = Streamer(widget)
                self.streamers.append(self.streamer)
            self.streamer.feed(event.text)
        elif isinstance(event, ToolStarted):
            self._close_thinking()
            self._end_text()
            panel = ToolPanel(event)
            self.tool_panels[event.call_id] = panel
            self.add(panel)
        elif isinstance(event, ToolFinished):
            if event.call_id in self.tool_panels:
                self.tool_panels.pop(event.call_id).finish(event)
        elif isinstance(event, PermissionAsked):
            self._close_thinking()
            self._end_text()
        elif isinstance(event, Notice):
            self._end_text()
            self.note(notice_markup(event))
        elif isinstance(event, UsageReport):
            self.last_usage = event  # the reply is over: show its last words now
            if self.streamer is not None:
                self.streamer.finish()
        elif isinstance(event, TurnDone):
            self._close_thinking()
            self._end_text()
            self._footer(event)

    def _footer(self, event: TurnDone) -> None:
        # Context use is on the status bar here, so the footer leaves it out.
        footer = footer_markup(event, self.last_usage, context=False)
        if footer is not None:
            self.note(footer)

    async def settle(self) -> None:
        """Wait until every streamed fragment is on the widgets (tests, benchmarks)."""
        for streamer in self.streamers:
            await streamer.drain()
