"""Rendering loop events: plain text for `-p`, JSON lines for `stream-json`, rich for the REPL."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape

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

MAX_ARG_CHARS = 80


def call_label(name: str, arguments: dict[str, Any]) -> str:
    """`Bash(pytest -q)`, `FileRead(src/a.py)`: the argument that says most, shortened."""
    for key in ("command", "file_path", "path", "pattern", "url", "query", "description"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            short = " ".join(value.split())
            if len(short) > MAX_ARG_CHARS:
                short = short[: MAX_ARG_CHARS - 1] + "…"
            return f"{name}({short})"
    return f"{name}()"


def result_summary(event: ToolFinished) -> str:
    if not event.ok:
        first = (event.error or event.output or "failed").strip().splitlines()
        return (first[0] if first else "failed")[:200]
    lines = event.output.count("\n") + (1 if event.output else 0)
    return f"ok · {lines} line{'s' if lines != 1 else ''} · {event.elapsed_ms:.0f} ms"


class PlainRenderer:
    """`-p` with `--output-format text`: the answer on stdout, everything else on stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._ended_with_newline = True

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, TextChunk):
            self.out.write(event.text)
            self.out.flush()
            self._ended_with_newline = event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            self._newline()
            self.err.write(f"● {call_label(event.name, event.arguments)}\n")
        elif isinstance(event, ToolFinished):
            mark = "⎿" if event.ok else "✗"
            self.err.write(f"  {mark} {event.name}: {result_summary(event)}\n")
        elif isinstance(event, Notice):
            self._newline()
            self.err.write(f"[{event.level}] {event.message}\n")
        elif isinstance(event, TurnDone):
            self._newline()
            if event.reason != "stop":
                self.err.write(f"[stopped: {event.reason}] {event.error or ''}\n")
        self.err.flush()

    def _newline(self) -> None:
        if not self._ended_with_newline:
            self.out.write("\n")
            self.out.flush()
            self._ended_with_newline = True


class JsonLinesRenderer:
    """`--output-format stream-json`: one JSON object per event, as it happens."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def emit_raw(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def __call__(self, event: LoopEvent) -> None:
        self.out.write(event.model_dump_json() + "\n")
        self.out.flush()


class Collector:
    """`--output-format json`: remember what is needed for the final object."""

    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, ToolFinished):
            self.tools.append({"name": event.name, "ok": event.ok, "denied": event.denied})
        elif isinstance(event, UsageReport):
            self.prompt_tokens += event.prompt_tokens
            self.completion_tokens += event.completion_tokens


class RichRenderer:
    """The REPL's view: the answer streamed as live markdown, thinking collapsed to one line,
    tool calls as they run, a footer with tokens/s and context use."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.reasoning_chars = 0
        self.reasoning_started: float | None = None
        self.last_reasoning = ""
        self.last_usage: UsageReport | None = None
        self._text = ""
        self._live: Live | None = None

    def _end_text(self) -> None:
        """Close the live markdown block (before anything else is printed)."""
        if self._live is not None:
            self._live.update(Markdown(self._text))
            self._live.stop()
            self._live = None
        self._text = ""

    def _close_thinking(self) -> None:
        if self.reasoning_started is not None:
            took = time.monotonic() - self.reasoning_started
            self.console.print(
                f"[dim]▸ thought for {took:.1f}s ({self.reasoning_chars} chars) · "
                "/thinking shows it[/dim]"
            )
            self.reasoning_started = None

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, ReasoningChunk):
            if self.reasoning_started is None:
                self._end_text()
                self.reasoning_started = time.monotonic()
                self.reasoning_chars = 0
                self.last_reasoning = ""
                self.console.print("[dim]▸ thinking…[/dim]")
            self.reasoning_chars += len(event.text)
            self.last_reasoning += event.text
        elif isinstance(event, TextChunk):
            self._close_thinking()
            self._text += event.text
            if self._live is None:
                self._live = Live(
                    Markdown(self._text),
                    console=self.console,
                    refresh_per_second=8,
                    vertical_overflow="visible",
                )
                self._live.start()
            else:
                self._live.update(Markdown(self._text))
        elif isinstance(event, ToolStarted):
            self._close_thinking()
            self._end_text()
            label = escape(call_label(event.name, event.arguments))
            self.console.print(f"[bold cyan]●[/bold cyan] {label}")
        elif isinstance(event, ToolFinished):
            self._end_text()
            style = "green" if event.ok else ("yellow" if event.denied else "red")
            self.console.print(f"  [{style}]⎿ {escape(result_summary(event))}[/{style}]")
        elif isinstance(event, PermissionAsked):
            self._close_thinking()
            self._end_text()
        elif isinstance(event, Notice):
            self._end_text()
            style = {"info": "dim", "warning": "yellow", "error": "red"}[event.level]
            self.console.print(f"[{style}]{escape(event.message)}[/{style}]")
        elif isinstance(event, UsageReport):
            self.last_usage = event
        elif isinstance(event, TurnDone):
            self._close_thinking()
            self._end_text()
            self._footer(event)

    def _footer(self, event: TurnDone) -> None:
        parts = []
        usage = self.last_usage
        if usage is not None:
            parts.append(f"{usage.completion_tokens} tokens")
            if usage.tokens_per_s:
                parts.append(f"{usage.tokens_per_s:.1f} tok/s")
            if usage.n_ctx:
                parts.append(f"context {usage.context_tokens}/{usage.n_ctx}")
        if event.reason != "stop":
            parts.append(f"stopped: {event.reason}" + (f" ({event.error})" if event.error else ""))
        if parts:
            style = "dim" if event.reason == "stop" else "yellow"
            self.console.print(f"[{style}]{escape(' · '.join(parts))}[/{style}]")
