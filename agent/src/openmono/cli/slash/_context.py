"""Context commands: /compact [focus], /checkpoint, /export [file]."""

from __future__ import annotations

import time
from pathlib import Path

from openmono_contracts.privatefs import write_private
from rich.markup import escape

from openmono.cli.slash._export import FORMATS, export_text
from openmono.cli.slash._summary import summarize_history
from openmono.cli.slash._table import Surface, register


async def compact(s: Surface, arg: str) -> None:
    """The model's summary when it can give one; our digest (no model) otherwise."""
    loop = s.current.loop
    before = loop.context_tokens()
    done = await summarize_history(loop.conv, s.base_model(), "Earlier conversation", arg)
    if done is not None:
        how = f"summarised {done[0]} messages" + (f" (focus: {escape(arg)})" if arg else "")
    else:
        await loop.fit_context(s.sink, force=True)
        how = "digest (no model summary)"
    s.print(f"[dim]compacted: {how} · context ~{before} → ~{loop.context_tokens()} tokens[/dim]")


async def checkpoint(s: Surface, _arg: str) -> None:
    """Summarise the history into a checkpoint (kept in the session folder) to free context."""
    agent = s.current
    loop = agent.loop
    before = loop.context_tokens()
    done = await summarize_history(loop.conv, s.base_model(), "Checkpoint")
    if done is None:
        s.print("[dim]no checkpoint: too little history, or the model gave no summary[/dim]")
        return
    folder = agent.store.root / agent.session_id / "checkpoints"
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}.md"
    write_private(path, done[1] + "\n")  # in the session's folder: private like the session
    s.print(
        f"[dim]checkpoint: {done[0]} messages summarised · context ~{before} → "
        f"~{loop.context_tokens()} tokens · {escape(str(path))}[/dim]"
    )


def _target(workspace: Path, name: str) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else workspace / path


async def export(s: Surface, arg: str) -> None:
    agent = s.current
    path = _target(s.workspace, arg or f"openmono-{agent.session_id}.md")
    kind = path.suffix.lstrip(".").lower()
    if kind not in FORMATS:
        s.print(f"[red]export as {', '.join('.' + f for f in FORMATS)} (by the file's name)[/red]")
        return
    text = export_text(kind, agent.session_id, agent.loop.conv.system, agent.loop.conv.messages)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as exc:
        s.print(f"[red]cannot write {escape(str(path))}: {escape(str(exc))}[/red]")
        return
    s.print(f"exported {len(agent.loop.conv.messages)} messages to {escape(str(path))}")


register(
    "compact", "summarise the conversation now (FOCUS: what to keep)", compact, arg_hint="[FOCUS]"
)
register("checkpoint", "summarise the history into a checkpoint to free context", checkpoint)
register("export", "the conversation as .md, .json or .html", export, arg_hint="[FILE]")
