"""`openmono --classic`: the line REPL (prompt_toolkit for input, rich for output).

Enter sends a message; a line starting with `/` is a command (`/help`). Ctrl-C during a turn stops
the model and running tools (what was said is kept); Ctrl-C at the prompt clears the line; Ctrl-D
leaves. Permission asks and AskUser questions are answered at the prompt.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from openmono_contracts.privatefs import open_private
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from openmono.agent import trust_question
from openmono.cli.host import SessionHost
from openmono.cli.render import RichRenderer, argument_lines, call_label, rows_table
from openmono.cli.slash import COMMANDS, run_command
from openmono.config import RunOptions, record_project_trust
from openmono.loop import EventSink, LoopEvent, Question
from openmono.permissions import Answer, PermissionRequest

T = TypeVar("T")
KEYS = (
    ("Enter", "send the line; a line starting with / is a command"),
    ("Tab", "complete a /command"),
    ("Up, Down", "the history"),
    ("Ctrl-C", "interrupt the turn (at the prompt: clear the line)"),
    ("Ctrl-D", "leave"),
)
ANSWERS: dict[str, Answer] = {
    "y": "once",
    "yes": "once",
    "a": "session",
    "always": "session",
    "n": "deny",
    "no": "deny",
    "d": "deny_session",
}


class SlashCompleter(Completer):
    """Completes `/name` from the shared table and the session's own commands, with each
    command's description."""

    def __init__(self, surface: object = None) -> None:
        self.surface = surface

    def get_completions(self, document: Document, complete_event: object) -> list[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return []
        return [
            Completion(f"/{c.name}", -len(text), display=c.usage, display_meta=c.description)
            for c in COMMANDS.complete(text[1:], self.surface)
        ]


class Repl(SessionHost):
    """One interactive run in the terminal's scrollback; commands come from `_commands`."""

    keys: Sequence[tuple[str, str]] = KEYS

    def __init__(
        self,
        opts: RunOptions,
        console: Console | None = None,
        *,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.init_host(opts)
        self.console = console or Console(highlight=False)
        self.renderer = RichRenderer(self.console)
        history = self.settings.data_dir / "history"
        open_private(history, "a").close()  # what you typed is yours alone (FileHistory appends)
        self.prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            input=input,
            output=output,
            completer=SlashCompleter(self),
        )

    # -- Surface --------------------------------------------------------------------------------
    @property
    def sink(self) -> EventSink:
        def both(event: LoopEvent) -> None:
            self.stats(event)
            self.renderer(event)
            self.last_reasoning = self.renderer.last_reasoning

        return both

    def print(self, markup: str = "") -> None:
        self.console.print(markup)

    def markdown(self, text: str) -> None:
        self.console.print(Markdown(text))

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> None:
        table = rows_table(rows, header)
        self.console.print(table)

    async def ask(self, question: str, options: Sequence[str] = ()) -> str:
        self.console.print(f"[bold magenta]?[/bold magenta] {escape(question)}")
        for i, option in enumerate(options, 1):
            self.console.print(f"  {i}. {escape(option)}")
        try:
            raw = (await self.prompt.prompt_async("  answer > ")).strip()
        except (KeyboardInterrupt, EOFError):
            return ""
        if raw.isdigit() and 1 <= int(raw) <= len(options):
            return options[int(raw) - 1]
        return raw

    # -- the session ----------------------------------------------------------------------------
    def banner(self) -> None:
        agent = self.current
        self.console.print(
            f"[bold]OpenMono[/bold] · {escape(self.model_name())} · "
            f"n_ctx {agent.loop.options.n_ctx} · mode {agent.loop.mode} · "
            f"session {agent.session_id}"
            f"\n[dim]{escape(str(self.workspace))} · /help for commands · Ctrl-D to leave[/dim]"
        )
        if agent.info is None:
            self.console.print(
                f"[yellow]The model at {escape(self.settings.llm.endpoint)} did not answer the "
                "probe; run `openmono doctor`.[/yellow]"
            )
        self.show_notices()

    async def approve(self, request: PermissionRequest) -> Answer:
        args = dict(request.arguments)
        details = "".join(f"\n    {escape(line)}" for line in argument_lines(request.tool, args))
        self.console.print(
            f"[bold yellow]?[/bold yellow] Allow [bold]{escape(call_label(request.tool, args))}"
            f"[/bold]? [dim]({escape(request.reason)})[/dim]{details}"
        )
        scope = request.session_pattern
        hint = f"{request.tool}" + (f" `{scope}`" if scope not in ("*", "") else "")
        question = (
            f"  [y] once  [a] always this session ({hint})  [n] no  "
            f"[d] deny {request.tool} for the session > "
        )
        while True:
            try:
                raw = await self.prompt.prompt_async(question)
            except (KeyboardInterrupt, EOFError):
                return "deny"
            answer = ANSWERS.get(raw.strip().lower())
            if answer is not None:
                return answer

    async def ask_user(self, question: Question) -> str:
        return await self.ask(question.text, question.options) or "(the user did not answer)"

    async def interruptible(self, work: Awaitable[T]) -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(work)
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            return await task
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    async def turn(self, text: str) -> None:
        """Run one turn; Ctrl-C cancels it (stream and tools stop, the session keeps the text)."""
        try:
            await self.interruptible(self.current.run_turn(text, self.sink))
        except asyncio.CancelledError:
            self.console.print("\n[yellow]interrupted[/yellow]")

    async def ask_trust(self) -> None:
        """Ask once per workspace whether what it brings may act for the user."""
        question = trust_question(self.workspace)
        if question is None:
            return
        self.console.print(f"[bold yellow]?[/bold yellow] {escape(question.prompt())}")
        try:
            raw = await self.prompt.prompt_async("  [y] trust it  [n] not now and not again > ")
        except (KeyboardInterrupt, EOFError):
            return  # no answer: asked again next time, left out until then
        trusted = raw.strip().lower() in ("y", "yes")
        record_project_trust(question.project, trusted, question.parts)
        if trusted:
            self.settings = self.opts.settings()

    async def run(self) -> int:
        import openmono.cli.slash  # noqa: F401 - registers the built-in commands
        from openmono.cli.slash import auto_trigger

        await self.ask_trust()
        await self.open(self.opts.resume)
        self.banner()
        try:
            while self.running:
                try:
                    text = await self.prompt.prompt_async(f"{self.current.loop.mode} › ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
                text = text.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    await run_command(self, text)
                elif not await auto_trigger(self, text):
                    await self.turn(text)
        finally:
            await self.close_host()
        return 0
