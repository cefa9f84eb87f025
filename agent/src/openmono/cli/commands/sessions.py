"""`openmono sessions list|show`: what was said, from the JSONL files in the data dir."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from openmono.config import RunOptions
from openmono.llm import model_label
from openmono.sessions import SessionError, SessionStore


def _store(ctx: click.Context) -> SessionStore:
    opts: RunOptions = ctx.obj
    return SessionStore(opts.settings().data_dir)


@click.group()
def sessions() -> None:
    """List and show saved sessions."""


@sessions.command("list")
@click.option("--limit", "-n", default=20, show_default=True, help="How many, newest first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def list_(ctx: click.Context, limit: int, as_json: bool) -> None:
    """Saved sessions, newest first (resume one with `openmono --resume ID`)."""
    rows = _store(ctx).list_sessions()[:limit]
    if as_json:
        for row in rows:
            data = {k: str(v) if k == "path" else v for k, v in row.__dict__.items()}
            click.echo(json.dumps(data, ensure_ascii=False))
        return
    if not rows:
        click.echo("no sessions yet")
        return
    table = Table(Column("id", no_wrap=True), "updated", "model", "title", "directory", box=None)
    for row in rows:
        model = model_label(row.model or "")
        table.add_row(
            row.session_id, row.updated_at, escape(model), escape(row.title or ""),
            escape(row.working_directory),
        )  # fmt: skip
    Console().print(table)


@sessions.command()
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="The raw records (header first).")
@click.pass_context
def show(ctx: click.Context, session_id: str, as_json: bool) -> None:
    """Print one session (an id, a unique prefix, or `last`)."""
    try:
        loaded = _store(ctx).load(session_id)
    except SessionError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(loaded.header.model_dump_json())
        for message in loaded.messages:
            click.echo(message.model_dump_json())
        return
    console = Console(highlight=False)
    h = loaded.header
    console.print(f"[bold]{h.session_id}[/bold] · {h.started_at} · {escape(str(h.model))}")
    console.print(f"[dim]{escape(h.working_directory)}[/dim]")
    for m in loaded.messages:
        if m.role == "user" and m.summary:
            console.print(f"\n[bold magenta]summary[/bold magenta] {escape(m.content or '')}")
        elif m.role == "user":
            console.print(f"\n[bold green]user[/bold green] {escape(m.content or '')}")
        elif m.role == "assistant":
            if m.content:
                console.print(f"\n[bold blue]assistant[/bold blue] {escape(m.content)}")
            for call in m.tool_calls:
                console.print(f"  [cyan]● {escape(call.name)}[/cyan] {escape(call.arguments)}")
            if m.interrupted:
                console.print("  [yellow](interrupted)[/yellow]")
        elif m.role == "tool":
            first = (m.content or "").strip().splitlines()
            style = "red" if m.is_error else "dim"
            text = escape(first[0][:160]) if first else ""
            console.print(f"  [{style}]⎿ {escape(m.tool_name or '')}: {text}[/{style}]")
    if loaded.skipped_lines:
        console.print(f"\n[yellow]{loaded.skipped_lines} unreadable line(s) skipped[/yellow]")
