"""`openmono up | down | status`: the native stack from the command line."""

from __future__ import annotations

import json
import sys

import click
from openmono_contracts.gateway import ServicesUnreadable, read_services_sync
from rich.table import Table

from openmono import stack as native
from openmono.cli.commands._table import table_console
from openmono.stack import (
    HOST,
    Context,
    StackError,
    ca_cert_path,
    ensure_compose_env,
    env_file_path,
    find_project_root,
    load_settings,
)


def _context() -> Context:
    root = find_project_root()
    return Context(root, load_settings(root))


def _say(line: str) -> None:
    click.echo(line)


@click.command()
def up() -> None:
    """Start the native stack (gateway, llama-server, what .env enables); wait until healthy."""
    try:
        root = find_project_root()
        env_file = env_file_path(root)
        generated = ensure_compose_env(env_file, root / "compose" / ".env.example")
        if generated:
            click.echo(f"generated {', '.join(generated)} into {env_file} (mode 0600)")
        ctx = Context(root, load_settings(root))
        native.up(ctx, _say)
    except StackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    s = ctx.settings
    gateway = f"http://{HOST}:{s.gateway_port}"
    click.echo(f"\ngateway   {gateway}   (bearer: LLAMA_API_KEY in {env_file})")
    click.echo(f"llm       {gateway}/v1   (OpenAI-compatible; llama.cpp /props, /metrics)")
    click.echo(
        f"https     https://{HOST}:{s.gateway_tls_port}   (what frpc tunnels; CA: "
        f"{ca_cert_path(s)}; agent boxes: `openmono setup join --relay-url URL`)"
    )
    click.echo(f"logs      {s.stack_dir / 'logs'}")
    try:
        key = s.llama_api_key.get_secret_value() or None
        services = read_services_sync(gateway, key, timeout_s=3.0)
    except ServicesUnreadable as exc:
        click.echo(f"/services could not be read: {exc.reason}", err=True)
    else:
        click.echo(f"/services {json.dumps(services.model_dump())}")


@click.command()
def down() -> None:
    """Stop exactly the processes this stack started (whole process groups)."""
    try:
        native.down(_context(), _say)
    except StackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@click.command()
@click.argument("services", nargs=-1, required=True)
def restart(services: tuple[str, ...]) -> None:
    """Restart SERVICES (e.g. `gateway`) so they re-read .env; starts what else is missing."""
    try:
        native.restart(_context(), list(services), _say)
    except StackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """Each service: pid, address, healthy, what the gateway's /services says of it, detail.
    Exit code 0 when all agree or nothing runs, 1 when something is unhealthy or disagrees."""
    from openmono.stack import running_anything
    from openmono.stack import status_rows as rows_of

    try:
        ctx = _context()
        shell = ctx.settings
        # the stack as `up` brought it up, not as this shell would (its ports, its replicas)
        applied = native.read_applied(shell)
        if applied is not None:
            ctx = Context(ctx.root, applied)
        rows = rows_of(ctx)
        if applied is not None and not running_anything(rows):
            ctx = Context(ctx.root, shell)  # a record left by a crash: nothing runs by it
            rows = rows_of(ctx)
    except StackError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    running = running_anything(rows)
    changes = native.drift(shell, ctx.settings) if running else []
    if as_json:
        click.echo(json.dumps([row.__dict__ for row in rows]))
    else:
        table = Table()
        for name in ("service", "pid", "address", "healthy", "restarts", "gateway says"):
            table.add_column(name, no_wrap=True)  # the detail wraps, never an address
        table.add_column("detail")
        for row in rows:
            table.add_row(
                row.service,
                str(row.pid or "-"),
                row.address,
                "[green]yes[/]" if row.healthy else "[red]no[/]",
                str(row.restarts) if row.pid is not None or row.restarts else "-",
                row.gateway if row.agrees else f"[red]{row.gateway}[/]",
                row.detail,
            )
        table_console().print(table)
        if not running:
            click.echo(f"the native stack is not running (data dir {ctx.settings.data_dir})")
    if changes:
        click.echo(
            "note: shown as `openmono up` applied it; `up` from this shell would change "
            + "; ".join(changes),
            err=as_json,
        )
    if running and not all(row.healthy and row.agrees for row in rows):
        sys.exit(1)
