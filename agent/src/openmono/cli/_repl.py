"""`openmono` with no task: the interactive session (prompt_toolkit for input, rich for output).

Enter sends a message; a line starting with `/` is a command (`/help`). Ctrl-C during a turn stops
the model and running tools (what was said is kept); Ctrl-C at the prompt clears the line; Ctrl-D
leaves. Permission asks and AskUser questions are answered at the prompt.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from openmono_contracts.effects import AskUserEffect
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from rich.console import Console
from rich.markup import escape

from openmono.agent import Agent, open_agent
from openmono.cli._render import RichRenderer, call_label
from openmono.config import RunOptions, Settings, project_trust_question, record_project_trust
from openmono.permissions import Answer, PermissionRequest

ANSWERS: dict[str, Answer] = {
    "y": "once",
    "yes": "once",
    "a": "session",
    "always": "session",
    "n": "deny",
    "no": "deny",
    "d": "deny_session",
}


class Repl:
    """One interactive run; slash commands live in `_slash`."""

    def __init__(
        self,
        opts: RunOptions,
        console: Console | None = None,
        *,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.opts = opts
        self.console = console or Console(highlight=False)
        self.renderer = RichRenderer(self.console)
        self.settings: Settings = opts.settings()
        self.workspace: Path = opts.workspace_dir(self.settings)
        self.agent: Agent | None = None
        history = self.settings.data_dir / "history"
        history.parent.mkdir(parents=True, exist_ok=True)
        self.prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)), input=input, output=output
        )
        self.running = True

    @property
    def current(self) -> Agent:
        if self.agent is None:
            raise RuntimeError("no session is open")
        return self.agent

    async def open(self, resume: str | None = None) -> Agent:
        mode = self.opts.mode
        if self.agent is not None:
            mode = self.agent.loop.mode
            await self.agent.aclose()
            self.agent = None
        self.agent = await open_agent(
            self.settings,
            self.workspace,
            resume=resume,
            mode=mode,
            allow=self.opts.allow,
            yolo=self.opts.yolo,
            approver=self.approve,
            asker=self.ask_user,
        )
        return self.agent

    def banner(self) -> None:
        agent = self.current
        model = agent.info.model if agent.info else (self.settings.llm.model or "?")
        self.console.print(
            f"[bold]OpenMono[/bold] · {escape(Path(model).name)} · n_ctx {agent.loop.options.n_ctx}"
            f" · mode {agent.loop.mode} · session {agent.session_id}\n"
            f"[dim]{escape(str(self.workspace))} · /help for commands · Ctrl-D to leave[/dim]"
        )
        if agent.info is None:
            self.console.print(
                f"[yellow]The model at {escape(self.settings.llm.endpoint)} did not answer the "
                "probe; run `openmono doctor`.[/yellow]"
            )

    async def approve(self, request: PermissionRequest) -> Answer:
        label = call_label(request.tool, dict(request.arguments))
        self.console.print(
            f"[bold yellow]?[/bold yellow] Allow [bold]{escape(label)}[/bold]? "
            f"[dim]({escape(request.reason)})[/dim]"
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

    async def ask_user(self, effect: AskUserEffect) -> str:
        self.console.print(f"[bold magenta]?[/bold magenta] {escape(effect.question)}")
        for i, option in enumerate(effect.options, 1):
            self.console.print(f"  {i}. {escape(option)}")
        try:
            raw = (await self.prompt.prompt_async("  answer > ")).strip()
        except (KeyboardInterrupt, EOFError):
            return "(the user did not answer)"
        if raw.isdigit() and 1 <= int(raw) <= len(effect.options):
            return effect.options[int(raw) - 1]
        return raw or "(no answer)"

    async def turn(self, text: str) -> None:
        """Run one turn; Ctrl-C cancels it (stream and tools stop, the session keeps the text)."""
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self.current.run_turn(text, self.renderer))
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            self.console.print("\n[yellow]interrupted[/yellow]")
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    async def ask_trust(self) -> None:
        """Ask once per project whether its settings may run code (hooks, MCP, yolo)."""
        question = project_trust_question(self.workspace)
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
        from openmono.cli._playbook_slash import auto_trigger
        from openmono.cli._slash import run_command

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
            if self.agent is not None:
                await self.agent.aclose()
        return 0
