"""`openmono` interactive: the full-screen terminal UI (Textual). `--classic` is the line REPL.

Layout: the transcript (scrolls), slash completions, the prompt, a status bar. Enter sends what
was typed, and a message sent while a turn runs is queued and sent when it ends; Esc interrupts
the turn (what was said is kept); Ctrl+O opens and closes the tool panels; Ctrl-D (or /exit)
leaves (`KEYS`, which /help lists). Permission asks appear inline in the transcript and
take one key: y once, a always this session, n no, d deny the tool for the session. Commands come
from the shared table (`_commands`) and run on `TuiSurface`, the same `Surface` the REPL is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Sequence
from typing import Any, ClassVar, TypeVar

from openmono_contracts.privatefs import open_private
from prompt_toolkit.history import FileHistory
from rich.markdown import Markdown as RichMarkdown
from rich.markup import escape
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static

from openmono.agent import trust_question
from openmono.cli.host import SessionHost
from openmono.cli.render import rows_table
from openmono.cli.slash import COMMANDS, run_command
from openmono.cli.tui._transcript import Transcript
from openmono.cli.tui._widgets import PermissionPrompt, PromptArea, StatusBar, ToolPanel
from openmono.config import RunOptions, record_project_trust
from openmono.llm import Model
from openmono.loop import EventSink, LoopEvent, Question, UsageReport
from openmono.permissions import Answer, PermissionRequest

T = TypeVar("T")
# What /help lists after the commands (the bindings themselves: PromptArea, OpenMonoApp below).
KEYS = (
    ("Enter", "send exactly what was typed (queued while a turn runs)"),
    ("Shift+Enter, Ctrl+J", "a new line"),
    ("Tab", "complete a /command (the highlighted one)"),
    ("Up, Down", "the history (on the first / last line)"),
    ("Ctrl+O", "open or close the tool panels (a failed call's opens by itself)"),
    ("y a n d", "a permission: once, always this session, no, deny the tool"),
    ("Esc, Ctrl+C", "interrupt the turn"),
    ("Ctrl+D", "leave"),
)
CSS = """
Screen { layout: vertical; }
Transcript { height: 1fr; padding: 0 1; }
Transcript > .user { margin: 1 0 0 0; padding: 0 1; background: $boost; color: $text; }
Transcript > .note { color: $text-muted; }
Transcript > Markdown { margin: 0; padding: 0; }
Transcript > .permission { border: round $warning; padding: 0 1; }
Transcript > .permission:focus { border: round $accent; }
Collapsible { border: none; padding: 0; margin: 0; background: $surface; }
Collapsible.failed CollapsibleTitle { color: $error; }
#completions { height: auto; max-height: 10; display: none; }
#prompt { height: auto; max-height: 10; min-height: 1; border: tall $accent; }
#status { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
"""


class TuiSurface(SessionHost):
    """The `Surface` of the full-screen UI: output goes to the transcript, questions inline."""

    keys: Sequence[tuple[str, str]] = KEYS

    def __init__(self, app: OpenMonoApp, opts: RunOptions, model: Model | None = None) -> None:
        self.init_host(opts, model)
        self.app = app
        self.answering: asyncio.Future[str] | None = None

    @property
    def sink(self) -> EventSink:
        def both(event: LoopEvent) -> None:
            self.stats(event)
            self.app.transcript.render_event(event)
            self.last_reasoning = self.app.transcript.last_reasoning
            if isinstance(event, UsageReport):
                self.app.refresh_status()

        return both

    def print(self, markup: str = "") -> None:
        self.app.transcript.note(markup, classes="out")

    def markdown(self, text: str) -> None:
        self.app.transcript.add(Static(RichMarkdown(text), classes="out"))

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> None:
        table = rows_table(rows, header)
        self.app.transcript.add(Static(table, classes="out"))

    async def ask(self, question: str, options: Sequence[str] = ()) -> str:
        lines = [f"[bold magenta]?[/bold magenta] {escape(question)}"]
        lines += [f"  {i}. {escape(o)}" for i, o in enumerate(options, 1)]
        self.app.transcript.note("\n".join(lines), classes="question")
        self.answering = asyncio.get_running_loop().create_future()
        self.app.refresh_status()
        try:
            raw = (await self.answering).strip()
        finally:
            self.answering = None
        if raw.isdigit() and 1 <= int(raw) <= len(options):
            return options[int(raw) - 1]
        return raw

    async def ask_user(self, question: Question) -> str:
        return await self.ask(question.text, question.options) or "(the user did not answer)"

    async def approve(self, request: PermissionRequest) -> Answer:
        scope = request.session_pattern
        hint = f"{request.tool}" + (f" `{scope}`" if scope not in ("*", "") else "")
        prompt = PermissionPrompt(request, hint)
        self.app.transcript.add(prompt)
        prompt.focus()
        self.app.refresh_status("waiting for your answer")
        try:
            return await prompt.answer
        finally:
            self.app.prompt.focus()
            self.app.refresh_status()

    async def turn(self, text: str) -> None:
        await self.app.run_turn(text)

    async def interruptible(self, work: Awaitable[T]) -> T:
        task = asyncio.ensure_future(work)
        self.app.turn_task = task
        try:
            return await task
        finally:
            self.app.turn_task = None


class OpenMonoApp(App[int]):
    """The full-screen session (see the module docstring)."""

    CSS = CSS
    TITLE = "OpenMono"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "interrupt the turn", priority=True),
        Binding("ctrl+d", "leave", "leave", priority=True),
        Binding("ctrl+c", "interrupt", "interrupt", show=False, priority=True),
        Binding("ctrl+o", "toggle_panels", "open or close the tool panels", priority=True),
    ]

    def __init__(self, opts: RunOptions, model: Model | None = None) -> None:
        super().__init__()
        self.surface = TuiSurface(self, opts, model)
        self.queue: deque[str] = deque()
        self.turn_task: asyncio.Future[Any] | None = None
        self.busy = False
        self.interrupted = 0
        history_file = self.surface.settings.data_dir / "history"
        open_private(history_file, "a").close()  # what you typed is yours alone (privatefs)
        self.history_store = FileHistory(str(history_file))
        history = list(reversed(list(self.history_store.load_history_strings())))
        self.transcript = Transcript(id="transcript")
        self.completions = OptionList(id="completions")
        self.prompt = PromptArea(history, COMMANDS, self.surface, id="prompt")
        self.prompt.completions = self.completions
        self.status = StatusBar(id="status")
        self.ready = asyncio.Event()
        self._starter: asyncio.Task[None] | None = None
        self.drainer: asyncio.Task[None] | None = None

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.completions
        yield self.prompt
        yield self.status

    async def on_mount(self) -> None:
        import openmono.cli.slash  # noqa: F401 - registers the built-in commands

        self.prompt.focus()
        self._starter = asyncio.ensure_future(self._start())

    async def _start(self) -> None:
        s = self.surface
        try:
            await self._ask_trust()
            agent = await s.open(s.opts.resume)
        except Exception as exc:
            self.transcript.note(f"[red]openmono: {escape(str(exc))}[/red]")
            self.exit(2)
            return
        model = s.model_name()
        self.transcript.note(
            f"[bold]OpenMono[/bold] · {escape(model)} · n_ctx {agent.loop.options.n_ctx} · "
            f"session {agent.session_id}\n[dim]{escape(str(s.workspace))} · /help for commands · "
            "Enter sends, Shift+Enter a new line · Ctrl+O tool panels · Esc interrupts · "
            "Ctrl-D leaves[/dim]"
        )
        if agent.info is None:
            self.transcript.note(
                f"[yellow]The model at {escape(s.settings.llm.endpoint)} did not answer the "
                "probe; run `openmono doctor`.[/yellow]"
            )
        s.show_notices()
        self.refresh_status()
        self.ready.set()
        await self._drain()

    async def _ask_trust(self) -> None:
        s = self.surface
        question = trust_question(s.workspace)
        if question is None:
            return
        answer = await s.ask(f"{question.prompt()}  (y: trust it, n: not now and not again)")
        trusted = answer.lower() in ("y", "yes")
        record_project_trust(question.project, trusted, question.parts)
        if trusted:
            s.settings = s.opts.settings()

    # -- status ---------------------------------------------------------------------------------
    def refresh_status(self, doing: str | None = None) -> None:
        s = self.surface
        if s.agent is None:
            self.status.show(["starting…"])
            return
        loop = s.agent.loop
        used, n_ctx = loop.context_tokens(), loop.options.n_ctx
        speed = s.stats.last_tokens_per_s
        if doing is None:
            doing = (
                "answering"
                if s.answering
                else ("running · Esc interrupts" if self.busy else "ready")
            )
        queued = f"{len(self.queue)} queued" if self.queue else ""
        self.status.show(
            [
                s.model_name(),
                f"ctx {100 * used // max(n_ctx, 1)}%",
                f"tools {s.agent.tool_protocol}",
                loop.mode,
                f"{speed:.1f} tok/s" if speed else "",
                "think" if s.thinking.thinking else "",
                "debug" if s.debug else "",
                s.agent.session_id,
                doing,
                queued,
            ]
        )

    # -- input ----------------------------------------------------------------------------------
    def on_text_area_changed(self, _event: PromptArea.Changed) -> None:
        self.prompt.update_completions()

    async def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        text = message.text.strip()
        self.completions.display = False
        if not text:
            return
        with contextlib.suppress(ValueError):
            self.history_store.store_string(text)
        s = self.surface
        if s.answering is not None and not s.answering.done():
            self.transcript.user(text)
            s.answering.set_result(text)
            return
        self.queue.append(text)
        if self.busy or not self.ready.is_set():
            self.transcript.note(f"[dim]queued: {escape(text[:200])}[/dim]")
            self.refresh_status()
            return
        # Not awaited here: a message handler that waits blocks every key (Esc, y/n) meanwhile.
        self.drainer = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        """Run queued messages and commands one after the other."""
        if self.busy:
            return
        self.busy = True
        try:
            while self.queue and self.surface.running:
                text = self.queue.popleft()
                self.refresh_status()
                if text.startswith("/"):
                    self.transcript.user(text)
                    await self._command(text)
                elif not await self._playbook(text):
                    await self.run_turn(text)
        finally:
            self.busy = False
            self.refresh_status()
        if not self.surface.running:
            await self.action_leave()

    async def _playbook(self, text: str) -> bool:
        """A message a playbook's trigger matches runs that playbook (see `openmono.cli.slash`)."""
        from openmono.cli.slash import auto_trigger

        try:
            return await auto_trigger(self.surface, text)
        except Exception as exc:
            self.transcript.note(f"[red]{escape(type(exc).__name__)}: {escape(str(exc))}[/red]")
            return True

    async def _command(self, text: str) -> None:
        try:
            await run_command(self.surface, text)
        except Exception as exc:
            self.transcript.note(f"[red]{escape(type(exc).__name__)}: {escape(str(exc))}[/red]")

    async def run_turn(self, text: str) -> None:
        self.transcript.user(text)
        work = self.surface.interruptible(self.surface.current.run_turn(text, self.surface.sink))
        self.refresh_status()
        try:
            await work
        except asyncio.CancelledError:
            self.interrupted += 1
            self.transcript.note("[yellow]interrupted[/yellow]")
        except Exception as exc:
            self.transcript.note(f"[red]{escape(type(exc).__name__)}: {escape(str(exc))}[/red]")

    def on_key(self, event: events.Key) -> None:
        """A key that reached no input (the focus was on a panel title or the transcript, after
        a click) goes to the prompt, which takes the focus back: no keystroke is lost."""
        focused = self.focused
        if focused is self.prompt or isinstance(focused, PermissionPrompt):
            return
        if event.is_printable and event.character is not None:
            event.stop()
            self.prompt.focus()
            self.prompt.insert(event.character)

    # -- actions --------------------------------------------------------------------------------
    def action_toggle_panels(self) -> None:
        """Ctrl+O: open every tool panel, or close them all when all are open."""
        panels = list(self.transcript.query(ToolPanel))
        opening = any(p.collapsed for p in panels)
        for panel in panels:
            panel.collapsed = not opening

    def action_interrupt(self) -> None:
        if self.turn_task is not None and not self.turn_task.done():
            self.turn_task.cancel()
        elif self.completions.display:
            self.completions.display = False

    async def action_leave(self) -> None:
        if self.turn_task is not None and not self.turn_task.done():
            self.turn_task.cancel()
        await self.surface.close_host()
        self.exit(0)

    async def on_unmount(self) -> None:
        if self._starter is not None and not self._starter.done():
            self._starter.cancel()
        await self.surface.close_host()


def run_tui(opts: RunOptions) -> int:
    """Run the full-screen session; its exit code."""
    code = OpenMonoApp(opts).run()
    return code if isinstance(code, int) else 0
