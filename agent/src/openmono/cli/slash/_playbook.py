"""Playbooks in the interactive session: `/playbook`, each playbook's own `/NAME`, auto-trigger.

    /playbook                          list the playbooks
    /playbook NAME k=v ... [--resume]  run one (`--yes` passes its gates)
    /NAME k=v ...                      the same, for a playbook with `user-invocable: true`
A gate shows the rendered step and asks at the prompt. A message that matches a playbook's
`trigger-patterns` as a whole runs it (when it needs no parameter that has no default); a weak
match only prints a suggestion, and the message goes to the model as usual. A project playbook
(one that came with the repository) is only ever suggested: its scripts and `{{shell:}}` commands
run code, so it runs when the user asks for it by name, never because a message matched.

The handlers have the slash-command signature (`async def handler(surface, arg)`) and use only the
`Surface` of `_table` (print, ask, interruptible, the session), so they run in the line REPL
and in the full-screen UI alike; the package face registers `COMMANDS` and `fallback` in the
shared table.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING

from rich.markup import escape

from openmono.playbooks import (
    UNTRUSTED,
    GateRequest,
    Host,
    Playbook,
    PlaybookError,
    PlaybookRunner,
    approve_all,
    discover,
    match_trigger,
    parse_assignments,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from openmono.cli.slash._table import Surface as Repl

    Handler = Callable[[Repl, str], Awaitable[None]]


async def _list(repl: Repl) -> None:
    catalog = discover(repl.workspace, repl.settings.data_dir)
    for pb in sorted(catalog.playbooks.values(), key=lambda p: p.name):
        slash = f"/{pb.name}" if pb.front.user_invocable else pb.name
        hint = f" {pb.front.argument_hint}" if pb.front.argument_hint else ""
        repl.print(
            f"  [bold]{escape(slash)}[/bold]{escape(hint)}  [dim]{escape(pb.source)}[/dim]  "
            f"{escape(pb.front.description)}"
        )
    for folder, exc in sorted(catalog.errors.items()):
        repl.print(f"  [red]{escape(folder)}: {escape(str(exc))}[/red]")
    for pb in catalog.shadowed:
        repl.print(
            f"  [dim](shadowed) {escape(pb.name)} from {pb.source}: {escape(str(pb.file))}[/dim]"
        )
    if catalog.untrusted:
        names = ", ".join(f.name for f in catalog.untrusted)
        repl.print(f"  [yellow]not loaded: {escape(names)}. {escape(UNTRUSTED)}[/yellow]")
    if not catalog.playbooks:
        repl.print("[dim]no playbooks[/dim]")


def _gate(repl: Repl) -> Callable[[GateRequest], Awaitable[bool]]:
    async def gate(request: GateRequest) -> bool:
        where = "before" if request.phase == "before" else "after"
        title = f"{request.kind} gate {where} step {request.step} · {request.playbook}"
        repl.print(f"[bold]{escape(title)}[/bold]\n{escape(request.text)}")
        raw = await repl.ask("go on? [y] yes  [n] no, stop here")
        return raw.strip().lower() in ("y", "yes")

    return gate


async def run_playbook(repl: Repl, pb: Playbook, arg: str) -> None:
    """Run `pb` with `arg` (`k=v` words, `--resume`, `--yes`); Ctrl-C stops it (resumable)."""
    try:
        words = shlex.split(arg)
        flags = {w for w in words if w in ("--resume", "--yes")}
        given = parse_assignments(w for w in words if w not in flags)
    except ValueError as exc:
        repl.print(f"[red]{escape(str(exc))}[/red]")
        return
    gate = approve_all if "--yes" in flags else _gate(repl)
    host = Host.of(
        repl.current.loop, repl.current.store.root / repl.current.session_id, repl.settings.data_dir
    )
    runner = PlaybookRunner(pb, host, gate, repl.sink)
    try:
        result = await repl.interruptible(runner.run(given, resume="--resume" in flags))
    except asyncio.CancelledError:
        repl.print("\n[yellow]interrupted[/yellow] (/playbook NAME --resume goes on)")
        return
    except PlaybookError as exc:
        repl.print(f"[red]{escape(str(exc))}[/red]")
        return
    colour = "green" if result.ok else "yellow"
    repl.print(f"[{colour}]{escape(result.message)}[/{colour}]")


async def playbook_command(repl: Repl, arg: str) -> None:
    """`/playbook` (list) or `/playbook NAME ...` (run)."""
    name, _, rest = arg.partition(" ")
    if not name:
        await _list(repl)
        return
    try:
        pb = discover(repl.workspace, repl.settings.data_dir).get(name)
    except PlaybookError as exc:
        repl.print(f"[red]{escape(str(exc))}[/red]")
        return
    await run_playbook(repl, pb, rest)


def fallback(repl: Repl, name: str) -> tuple[str, Handler] | None:
    """A user-invocable playbook's own `/NAME`, for a name the command table does not have."""
    pb = discover(repl.workspace, repl.settings.data_dir).playbooks.get(name)
    if pb is None or not pb.front.user_invocable:
        return None

    async def handler(repl: Repl, arg: str) -> None:
        await run_playbook(repl, pb, arg)

    return (pb.front.description, handler)


async def auto_trigger(repl: Repl, text: str) -> bool:
    """Run the playbook `text` asks for (True), or suggest one on a weak match (False)."""
    catalog = discover(repl.workspace, repl.settings.data_dir)
    found = match_trigger(text, catalog.playbooks.values())
    if found is None:
        return False
    pb = found.playbook
    needs = [p.name for p in pb.front.parameters if p.required and p.default is None]
    if found.strength == "weak" or needs or pb.source == "project":
        args = " ".join(f"{n}=..." for n in needs)
        repl.print(
            f"[dim]tip: the playbook {escape(pb.name)} may do this: "
            f"/playbook {escape(pb.name)} {escape(args)}[/dim]"
        )
        return False
    repl.print(f"[dim]running the playbook {escape(pb.name)} (matched {found.pattern!r})[/dim]")
    await run_playbook(repl, pb, "")
    return True


COMMANDS: dict[str, tuple[str, Handler]] = {
    "playbook": (
        "list playbooks; /playbook NAME k=v [--resume] [--yes] runs one",
        playbook_command,
    ),
}
