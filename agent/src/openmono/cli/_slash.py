"""Slash commands of the interactive session: each a small function, listed in `COMMANDS`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from openmono.agent import open_model, probe_model
from openmono.cli import _playbook_slash
from openmono.permissions import MODES
from openmono.sessions import SessionError, SessionStore

if TYPE_CHECKING:
    from openmono.cli._repl import Repl

Handler = Callable[["Repl", str], Awaitable[None]]


async def _help(repl: Repl, _arg: str) -> None:
    for name, (text, _) in COMMANDS.items():
        repl.console.print(f"  [bold]/{name}[/bold]  {escape(text)}")


async def _status(repl: Repl, _arg: str) -> None:
    agent = repl.current
    loop = agent.loop
    table = Table(show_header=False, box=None)
    rows = [
        ("session", agent.session_id),
        ("model", agent.info.model if agent.info else "(no probe)"),
        ("endpoint", repl.settings.llm.endpoint),
        ("context", f"~{loop.context_tokens()} of {loop.options.n_ctx} tokens"),
        ("messages", str(len(loop.conv.messages))),
        ("mode", loop.mode),
        ("workspace", str(agent.workspace)),
        ("session file", str(agent.writer.path)),
    ]
    if loop.todos:
        rows.append(("todos", "; ".join(f"[{t.status}] {t.content}" for t in loop.todos)))
    for key, value in rows:
        table.add_row(f"[dim]{key}[/dim]", escape(value))
    repl.console.print(table)


async def _model(repl: Repl, arg: str) -> None:
    agent = repl.current
    if arg:
        repl.settings = repl.settings.model_copy(
            update={"llm": repl.settings.llm.model_copy(update={"model": arg})}
        )
        await agent.switch_model(open_model(repl.settings))
    info = await probe_model(agent.loop.model)
    if info is None:
        repl.console.print("[red]the model did not answer /props or /v1/models[/red]")
        return
    if info.n_ctx:
        agent.loop.options.n_ctx = info.n_ctx
    repl.console.print(f"model {escape(info.model)} · n_ctx {info.n_ctx} (from /{info.source})")


async def _compact(repl: Repl, _arg: str) -> None:
    before = repl.current.loop.context_tokens()
    await repl.current.loop.fit_context(repl.renderer, force=True)
    repl.console.print(
        f"[dim]context ~{before} → ~{repl.current.loop.context_tokens()} tokens[/dim]"
    )


async def _clear(repl: Repl, _arg: str) -> None:
    await repl.open(None)
    repl.console.print(f"[dim]new session {repl.current.session_id}[/dim]")


async def _mode(repl: Repl, arg: str) -> None:
    if arg:
        if arg not in MODES:
            repl.console.print(f"[red]modes: {', '.join(MODES)}[/red]")
            return
        repl.current.loop.set_mode(arg)
    repl.console.print(f"mode: {repl.current.loop.mode}")


async def _resume(repl: Repl, arg: str) -> None:
    if not arg:
        rows = SessionStore(repl.settings.data_dir).list_sessions()[:10]
        for row in rows:
            repl.console.print(
                f"  {row.session_id}  [dim]{row.updated_at}[/dim]  {escape(row.title or '')}"
            )
        if not rows:
            repl.console.print("[dim]no sessions yet[/dim]")
        return
    try:
        agent = await repl.open(arg)
    except SessionError as exc:
        repl.console.print(f"[red]{escape(str(exc))}[/red]")
        return
    repl.console.print(
        f"[dim]resumed {agent.session_id}: {len(agent.loop.conv.messages)} messages[/dim]"
    )


async def _retry(repl: Repl, _arg: str) -> None:
    prompt = repl.current.loop.take_back_last_turn()
    if prompt is None:
        repl.console.print("[dim]nothing to retry[/dim]")
        return
    await repl.turn(prompt)


async def _undo(repl: Repl, _arg: str) -> None:
    restored = repl.current.undo()
    if not restored:
        repl.console.print("[dim]nothing to undo[/dim]")
        return
    for path in restored:
        shown = path.relative_to(repl.workspace) if path.is_relative_to(repl.workspace) else path
        repl.console.print(f"  restored {escape(str(Path(shown)))}")


async def _thinking(repl: Repl, _arg: str) -> None:
    text = repl.renderer.last_reasoning
    repl.console.print(f"[dim]{escape(text)}[/dim]" if text else "[dim]no thinking yet[/dim]")


async def _exit(repl: Repl, _arg: str) -> None:
    repl.running = False


COMMANDS: dict[str, tuple[str, Handler]] = {
    "help": ("this list", _help),
    "status": ("session, model, context use, mode", _status),
    "model": ("show the model (probe again); /model NAME switches", _model),
    "compact": ("compact the conversation now", _compact),
    "clear": ("start a new session", _clear),
    "mode": ("show or set the mode: agent, plan, ask", _mode),
    "resume": ("list recent sessions; /resume ID continues one", _resume),
    "retry": ("run the last message again", _retry),
    "undo": ("restore the files the last turn changed", _undo),
    "thinking": ("show the last reply's thinking", _thinking),
    "exit": ("leave (or Ctrl-D)", _exit),
}
COMMANDS.update(_playbook_slash.COMMANDS)


async def run_command(repl: Repl, line: str) -> None:
    name, _, arg = line[1:].partition(" ")
    name = {"quit": "exit", "q": "exit", "?": "help"}.get(name, name)
    entry = COMMANDS.get(name) or _playbook_slash.fallback(repl, name)
    if entry is None:
        repl.console.print(f"[red]unknown command /{escape(name)}[/red] (try /help)")
        return
    await entry[1](repl, arg.strip())
