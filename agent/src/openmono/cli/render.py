"""Rendering loop events: plain text for `-p`, JSON lines for `stream-json`, rich for the REPL."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

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
MAX_DETAIL_CHARS, MAX_DETAIL_LINES = 200, 12
LABEL_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description")


def _short(value: object, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label_key(arguments: dict[str, Any]) -> str | None:
    return next((k for k in LABEL_KEYS if isinstance(arguments.get(k), str) and arguments[k]), None)


def call_label(name: str, arguments: dict[str, Any]) -> str:
    """`Bash(pytest -q)`, `FileRead(src/a.py)`: the argument that says most, shortened; a tool
    with none of those (an MCP server's) shows them all: `mcp__fx__echo(text="hi", n=2)`."""
    key = _label_key(arguments)
    if key is not None:
        return f"{name}({_short(arguments[key], MAX_ARG_CHARS)})"
    pairs = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{name}({_short(pairs, MAX_ARG_CHARS)})"


def argument_lines(name: str, arguments: dict[str, Any]) -> list[str]:
    """`key: value` for each argument `call_label` leaves out or cuts, for a permission prompt
    (whoever approves a call sees what it will be given); empty when the label shows it all."""
    key = _label_key(arguments)
    label = call_label(name, arguments)
    if key is None and not label.endswith("…)"):
        return []
    lines = [
        f"{k}: {_short(v, MAX_DETAIL_CHARS)}"
        for k, v in arguments.items()
        if k != key or len(_short(v, MAX_DETAIL_CHARS + 1)) > MAX_ARG_CHARS
    ]
    if len(lines) > MAX_DETAIL_LINES:
        more = len(lines) - MAX_DETAIL_LINES + 1
        lines = [*lines[: MAX_DETAIL_LINES - 1], f"… {more} more arguments"]
    return lines


def result_summary(event: ToolFinished) -> str:
    if not event.ok:
        first = (event.error or event.output or "failed").strip().splitlines()
        return (first[0] if first else "failed")[:200]
    lines = event.output.count("\n") + (1 if event.output else 0)
    return f"ok · {lines} line{'s' if lines != 1 else ''} · {event.elapsed_ms:.0f} ms"


def rows_table(rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> Table:
    """A borderless table of plain-text cells; without a header the first column is dim (a key)."""
    table = Table(show_header=header is not None, box=None)
    for i, name in enumerate(header or [""] * (len(rows[0]) if rows else 0)):
        table.add_column(name, style="dim" if i == 0 and header is None else None)
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}


def notice_markup(event: Notice) -> str:
    """A notice as rich markup, styled by its level (the REPL and the full-screen UI alike)."""
    style = NOTICE_STYLES[event.level]
    return f"[{style}]{escape(event.message)}[/{style}]"


def footer_markup(event: TurnDone, usage: UsageReport | None, *, context: bool) -> str | None:
    """The line after a turn: tokens, tok/s, with `context` the context use, and why it stopped
    unless it just ended; None when there is nothing to say."""
    parts = []
    if usage is not None:
        parts.append(f"{usage.completion_tokens} tokens")
        if usage.tokens_per_s:
            parts.append(f"{usage.tokens_per_s:.1f} tok/s")
        if context and usage.n_ctx:
            parts.append(f"context {usage.context_tokens}/{usage.n_ctx}")
    if event.reason != "stop":
        parts.append(f"stopped: {event.reason}" + (f" ({event.error})" if event.error else ""))
    if not parts:
        return None
    style = "dim" if event.reason == "stop" else "yellow"
    return f"[{style}]{escape(' · '.join(parts))}[/{style}]"


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
        # one entry per call, in the order the model made the calls: a call takes its place when it
        # starts (or when it is refused), since calls run together finish in any order; `_open`
        # finds a started call by id (servers that number calls per turn reuse ids across turns)
        self.tools: list[dict[str, Any]] = []
        self._open: dict[str, dict[str, Any]] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        # the model's calls by shape: valid (it could run), invalid arguments, unknown tool
        self.calls = {"valid": 0, "invalid": 0, "unknown_tool": 0}

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, ToolStarted):
            self._open[event.call_id] = {"name": event.name}
            self.tools.append(self._open[event.call_id])
        elif isinstance(event, ToolFinished):
            entry = self._open.pop(event.call_id, None)
            if entry is None:  # refused before it started
                entry = {"name": event.name}
                self.tools.append(entry)
            entry.update(
                ok=event.ok,
                denied=event.denied,
                problem=event.problem,
                writes=event.writes,
                refused_by=event.refused_by,
            )
            self.calls[event.problem or "valid"] += 1
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
            self.console.print(notice_markup(event))
        elif isinstance(event, UsageReport):
            self.last_usage = event
        elif isinstance(event, TurnDone):
            self._close_thinking()
            self._end_text()
            self._footer(event)

    def _footer(self, event: TurnDone) -> None:
        footer = footer_markup(event, self.last_usage, context=True)
        if footer is not None:
            self.console.print(footer)
