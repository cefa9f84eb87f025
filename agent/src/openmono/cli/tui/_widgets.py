"""The full-screen UI's widgets: the prompt (multi-line, history, slash completion), the inline
permission prompt, tool panels, the folded reasoning block and the status bar."""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.markup import escape
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Collapsible, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from openmono.cli.render import argument_lines, call_label, result_summary
from openmono.cli.slash import Command, CommandTable
from openmono.loop import ToolFinished, ToolStarted
from openmono.permissions import Answer, PermissionRequest

OUTPUT_TAIL_LINES = 15


class PromptArea(TextArea):
    """Enter sends exactly what was typed; Shift+Enter or Ctrl+J adds a line (pasted newlines are
    kept); Up on the first line and Down on the last walk the history; Tab takes the highlighted
    slash completion and otherwise does nothing (it never moves the focus away)."""

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self, history: list[str], commands: CommandTable, surface: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, compact=True, **kwargs)
        self.prompt_history = history
        self.commands = commands
        # whose session's own commands (skills, custom commands) complete too
        self.surface = surface
        self._walk: int | None = None
        self.completions: OptionList | None = None

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            # Never the completion: the list may lag behind fast typing (a streaming reply keeps
            # the loop busy), and `/stats` must not become the `/status` highlighted a key ago.
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.prompt_history.append(text)
            self._walk = None
            self.clear()
            self.post_message(self.Submitted(text))
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key in ("tab", "shift+tab"):
            event.stop()
            event.prevent_default()
            if key == "tab":
                self._accept_completion()
            return
        if key in ("up", "down") and self._complete_shown() and self.completions is not None:
            event.stop()
            event.prevent_default()
            if key == "up":
                self.completions.action_cursor_up()
            else:
                self.completions.action_cursor_down()
            return
        row = self.cursor_location[0]
        if key == "up" and row == 0 and self.prompt_history:
            event.stop()
            event.prevent_default()
            self._walk = (
                len(self.prompt_history) - 1 if self._walk is None else max(0, self._walk - 1)
            )
            self.load_text(self.prompt_history[self._walk])
            return
        if key == "down" and self._walk is not None and row == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self._walk += 1
            self.load_text(
                self.prompt_history[self._walk] if self._walk < len(self.prompt_history) else ""
            )
            if self._walk >= len(self.prompt_history):
                self._walk = None
            return
        await super()._on_key(event)

    def _complete_shown(self) -> bool:
        return self.completions is not None and self.completions.display

    def _matches(self) -> list[Command]:
        """The commands the text as it is now (a lone `/prefix`) could be completed to."""
        text = self.text
        if not text.startswith("/") or " " in text.rstrip() or "\n" in text:
            return []
        return self.commands.complete(text[1:].rstrip(), self.surface)

    def _accept_completion(self) -> None:
        """Put the highlighted command in the prompt: the one highlighted if it still fits what
        is typed now (the list may not have caught up yet), else the first that does."""
        matches = [c.name for c in self._matches()]
        if not matches:
            return
        name = matches[0]
        if self._complete_shown() and self.completions is not None:
            index = self.completions.highlighted
            shown = self.completions.get_option_at_index(index).id if index is not None else None
            if shown in matches:
                name = shown
        self.load_text(f"/{name} ")
        self.move_cursor(self.document.end)

    def update_completions(self) -> None:
        """Show the commands matching a `/prefix` with their descriptions (hidden otherwise)."""
        if self.completions is None:
            return
        matches = self._matches()
        self.completions.clear_options()
        if not matches:
            self.completions.display = False
            return
        self.completions.add_options(
            [
                Option(
                    Text.from_markup(
                        f"[bold]{escape(c.usage)}[/bold]  [dim]{escape(c.description)}[/dim]"
                    ),
                    id=c.name,
                )
                for c in matches
            ]
        )
        self.completions.highlighted = 0
        self.completions.display = True


class PermissionPrompt(Static, can_focus=True):
    """An inline question: y once, a always this session, n no, d deny the tool this session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "once"),
        Binding("a", "answer('session')", "session"),
        Binding("n", "answer('deny')", "deny"),
        Binding("d", "answer('deny_session')", "deny for the session"),
    ]
    LABELS: ClassVar[dict[str, str]] = {
        "once": "allowed once",
        "session": "allowed for the session",
        "deny": "denied",
        "deny_session": "denied for the session",
    }

    def __init__(self, request: PermissionRequest, hint: str) -> None:
        tool, args = request.tool, dict(request.arguments)
        # An edit's arguments are on screen already, as the diff in its panel.
        lines = [] if _diff(tool, args) is not None else argument_lines(tool, args)
        details = "".join(f"\n    [dim]{escape(line)}[/dim]" for line in lines)
        question = (
            f"[bold yellow]?[/bold yellow] Allow [bold]{escape(call_label(tool, args))}[/bold]? "
            f"[dim]({escape(request.reason)})[/dim]{details}\n"
            f"  [b]y[/b] once  [b]a[/b] always this session ({escape(hint)})  [b]n[/b] no  "
            f"[b]d[/b] deny {escape(tool)} for the session"
        )
        super().__init__(question, classes="permission")
        self.question = question
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    def action_answer(self, answer: str) -> None:
        if self.answer.done():
            return
        self.answer.set_result(answer)  # type: ignore[arg-type]
        self.update(f"{self.question}\n  [green]→ {self.LABELS[answer]}[/green]")
        self.can_focus = False


def _diff(name: str, args: dict[str, Any]) -> str | None:
    """A unified diff for an edit's arguments (the new content for a FileWrite)."""
    path = str(args.get("file_path") or args.get("path") or "")
    if name == "FileEdit" and isinstance(args.get("old_string"), str):
        old = str(args["old_string"]).splitlines()
        new = str(args.get("new_string") or "").splitlines()
        return "\n".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", lineterm=""))
    if name == "FileWrite" and isinstance(args.get("content"), str):
        return "".join(f"+{line}" for line in str(args["content"]).splitlines(keepends=True))
    for key in ("patch", "diff"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return None


def _diff_text(diff: str) -> Text:
    text = Text()
    for line in diff.splitlines()[:200]:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        style = "cyan" if line.startswith("@@") else style
        text.append(line + "\n", style=style)
    return text


class ToolPanel(Collapsible):
    """One tool call: its arguments (a diff for edits) and, when done, how it went (Bash: the
    tail of its output). Edits start open, the rest closed (Ctrl+O opens them); a call that
    failed opens by itself, so a failing `pytest` shows its output's tail at once."""

    def __init__(self, event: ToolStarted) -> None:
        self.call = event
        self.label = call_label(event.name, event.arguments)
        diff = _diff(event.name, event.arguments)
        body: Static
        if diff is not None:
            body = Static(_diff_text(diff), classes="diff")
        else:
            body = Static(Text(json.dumps(event.arguments, indent=2, ensure_ascii=False)[:4000]))
        self.result = Static("", classes="result")
        super().__init__(
            body, self.result, title=f"● {self.label}", collapsed=diff is None, classes="tool"
        )

    def finish(self, event: ToolFinished) -> None:
        mark = "✓" if event.ok else ("⊘" if event.denied else "✗")
        self.title = f"{mark} {self.label} · {result_summary(event)}"
        self.add_class("ok" if event.ok else "failed")
        if not event.ok and not event.denied:
            self.collapsed = False
        # A failed command's output matters most (pytest's failures): its tail, then the error.
        parts = [event.output.rstrip()] if event.ok else [event.output.rstrip(), event.error or ""]
        shown = "\n".join(p for p in parts if p)
        if event.name == "Bash" or not event.ok:
            tail = shown.splitlines()[-OUTPUT_TAIL_LINES:]
            self.result.update(Text("\n".join(tail), style="dim" if event.ok else "red"))
        else:
            self.result.update(Text(shown[:1500], style="dim"))


class ReasoningBlock(Collapsible):
    """The model's thinking, folded: one line while it streams, the text inside when opened."""

    def __init__(self) -> None:
        self.body = Static("", classes="reasoning")
        self.text = ""
        super().__init__(self.body, title="▸ thinking…", collapsed=True, classes="thinking")

    def feed(self, text: str) -> None:
        self.text += text

    def close(self, took_s: float) -> None:
        self.title = f"thought for {took_s:.1f}s ({len(self.text)} chars)"
        self.body.update(Text(self.text, style="dim italic"))


class StatusBar(Static):
    """model · context % · mode · tokens/s · session id · what is happening."""

    def show(self, parts: Sequence[str]) -> None:
        self.update(Text("  ·  ".join(p for p in parts if p)))
