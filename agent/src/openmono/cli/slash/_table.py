"""The slash-command table both interactive surfaces share, and the narrow surface it talks to.

A command is a name, a one-line description, an argument hint and an async handler
`handler(surface, arg)`. Handlers never know which surface runs them: they print through the
`Surface` protocol (markup, markdown, a table), ask through it, and reach the session through it.
The classic REPL (`_repl.Repl`) and the full-screen UI (`tui.OpenMonoApp`) implement it.

Groups of commands live in their own modules (`slash/_*.py`) and register themselves into
`COMMANDS`; any other module can do the same (`COMMANDS.register(...)`, or
`COMMANDS["name"] = (help, handler)` as the table used to be a dict), before the surface starts.
A name the table lacks is looked up in the session's own commands (`sources`: its skills and
custom commands), then in `fallbacks` (the playbooks' `/NAME`): built-ins always win.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rich.markup import escape

if TYPE_CHECKING:
    from openmono.agent import Agent
    from openmono.cli.host import SessionStats
    from openmono.config import RunOptions, Settings
    from openmono.llm import Model, OpenAICompatModel, RequestOptions
    from openmono.loop import EventSink


T = TypeVar("T")


class Surface(Protocol):
    """What a command handler may use: output, questions, the session and its settings."""

    opts: RunOptions
    settings: Settings
    workspace: Path
    running: bool
    debug: bool
    stats: SessionStats
    last_reasoning: str
    thinking: RequestOptions
    # The surface's own keys, (keys, what they do), listed by /help after the commands.
    keys: Sequence[tuple[str, str]]

    @property
    def current(self) -> Agent: ...

    @property
    def sink(self) -> EventSink:
        """Where loop events go (compactions and asides report through it)."""
        ...

    def print(self, markup: str = "") -> None:
        """One block of rich console markup (escape user text with `rich.markup.escape`)."""
        ...

    def markdown(self, text: str) -> None: ...

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None) -> None:
        """Plain-text cells (escaped by the surface)."""
        ...

    async def ask(self, question: str, options: Sequence[str] = ()) -> str:
        """Ask the user; the answer ('' when they gave none)."""
        ...

    async def open(self, resume: str | None = None) -> Agent:
        """Close the current session (if any) and open a new or resumed one."""
        ...

    async def turn(self, text: str) -> None:
        """Run `text` as a user turn, rendered like any other."""
        ...

    async def interruptible(self, work: Awaitable[T]) -> T:
        """Await `work` as the surface's interruptible task (Ctrl-C in the REPL, Esc in the full
        screen UI cancel it: `CancelledError` reaches the caller)."""
        ...

    def wire_model(self) -> None:
        """Apply the /think and /debug switches to the session's model."""
        ...

    def base_model(self) -> Model:
        """The session's model without the /debug wrapper."""
        ...

    def client(self) -> OpenAICompatModel | None:
        """The OpenAI-compatible client under the session's model, if that is what it uses."""
        ...


Handler = Callable[[Any, str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: Handler
    arg_hint: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.arg_hint}" if self.arg_hint else "")


class CommandTable:
    """Commands by name, in the order registered; aliases resolve to their command."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._aliases: dict[str, str] = {}
        # A session's own commands, asked for a name the table lacks and for completion:
        # surface -> the commands (skills and custom commands of the session that is open).
        self.sources: list[Callable[[Any], Sequence[Command]]] = []
        # Asked, in order, for a name neither has: (surface, name) -> (help, handler).
        self.fallbacks: list[Callable[[Any, str], tuple[str, Handler] | None]] = []

    def register(
        self,
        name: str,
        description: str,
        handler: Handler,
        *,
        arg_hint: str = "",
        aliases: Sequence[str] = (),
    ) -> Command:
        command = Command(name, description, handler, arg_hint, tuple(aliases))
        self._commands[name] = command
        for alias in aliases:
            self._aliases[alias] = name
        return command

    def __setitem__(self, name: str, entry: tuple[str, Handler] | Command) -> None:
        if isinstance(entry, Command):
            self._commands[name] = entry
        else:
            self.register(name, entry[0], entry[1])

    def get(self, name: str) -> Command | None:
        return self._commands.get(self._aliases.get(name, name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[Command]:
        return iter(list(self._commands.values()))

    def __len__(self) -> int:
        return len(self._commands)

    def session_commands(self, surface: Any) -> list[Command]:
        """The session's own commands the table does not hide (none without a surface)."""
        if surface is None:
            return []
        found: dict[str, Command] = {}
        for source in self.sources:
            for command in source(surface):
                if command.name not in self and command.name not in found:
                    found[command.name] = command
        return list(found.values())

    def complete(self, prefix: str, surface: Any = None) -> list[Command]:
        """Commands whose name starts with `prefix` (without the slash), the session's too."""
        every = [*self, *self.session_commands(surface)]
        return [c for c in every if c.name.startswith(prefix)]


COMMANDS = CommandTable()


def register(
    name: str,
    description: str,
    handler: Handler,
    *,
    arg_hint: str = "",
    aliases: Sequence[str] = (),
) -> Command:
    """Add a command to the shared table (from any module, before a surface starts)."""
    return COMMANDS.register(name, description, handler, arg_hint=arg_hint, aliases=aliases)


async def run_command(surface: Surface, line: str) -> None:
    """Run one `/name args` line on `surface`."""
    name, _, arg = line.strip()[1:].partition(" ")
    command = COMMANDS.get(name) or next(
        (c for c in COMMANDS.session_commands(surface) if c.name == name), None
    )
    handler = command.handler if command is not None else None
    for fallback in COMMANDS.fallbacks if handler is None else ():
        entry = fallback(surface, name)
        if entry is not None:
            handler = entry[1]
            break
    if handler is None:
        surface.print(f"[red]unknown command /{escape(name)}[/red] (try /help)")
        return
    await handler(surface, arg.strip())
