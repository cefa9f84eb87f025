"""`/memory`: list, show and forget what MemorySave kept, for the user and for the project."""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.facts import PROJECT_MEMORY_DIR, USER_MEMORY_DIR
from rich.markup import escape

from openmono.cli.slash._table import Surface, register
from openmono.conversation import Memory, forget, read_memory_dir

USAGE = "usage: /memory [list] · /memory show NAME · /memory forget NAME"


def _folders(s: Surface) -> dict[str, Path]:
    return {
        "project": s.workspace / PROJECT_MEMORY_DIR,
        "user": s.settings.data_dir / USER_MEMORY_DIR,
    }


def _find(s: Surface, name: str) -> list[tuple[str, Memory]]:
    return [
        (scope, m)
        for scope, folder in _folders(s).items()
        for m in read_memory_dir(folder)
        if name in (m.name, m.path.stem)
    ]


async def memory(s: Surface, arg: str) -> None:
    action, _, name = arg.partition(" ")
    action, name = action or "list", name.strip()
    if action == "list":
        rows = [
            (scope, m.name, m.type, m.description)
            for scope, folder in _folders(s).items()
            for m in read_memory_dir(folder)
        ]
        if not rows:
            s.print("[dim]no memories yet (the model saves them with MemorySave)[/dim]")
            return
        s.table(rows, header=("scope", "name", "type", "description"))
    elif action == "show" and name:
        found = _find(s, name)
        if not found:
            s.print(f"[red]no memory called {escape(name)}[/red]")
        for scope, m in found:
            where = escape(f"({scope}, {m.type}: {m.path})")
            s.print(f"[bold]{escape(m.name)}[/bold] [dim]{where}[/dim]")
            s.markdown(m.content)
    elif action == "forget" and name:
        tried = [(scope, forget(folder, name)) for scope, folder in _folders(s).items()]
        gone = [(scope, hit) for scope, hit in tried if hit is not None]
        if not gone:
            s.print(f"[red]no memory called {escape(name)}[/red]")
            return
        for scope, hit in gone:
            s.print(f"forgot {escape(hit.name)} ({scope})")
        s.current.loop.refresh_system_prompt()
    else:
        s.print(f"[red]{USAGE}[/red]")


register("memory", "list, show or forget saved memories (user and project)", memory,
         arg_hint="[list|show NAME|forget NAME]")  # fmt: skip
