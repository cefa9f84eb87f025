"""`openmono tunnel config`: write the frpc TOML that carries the gateway port to a relay."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from openmono_contracts.facts import LOOPBACK

from openmono.config import current_environ
from openmono.setup import SetupError, frpc
from openmono.stack import StackError, load_settings, set_env


@click.group()
def tunnel() -> None:
    """The frp tunnel: the gateway port, and nothing else, reachable through a relay (frps)."""


@tunnel.command("config")
@click.option("--server-addr", required=True, help="The relay (frps) host name or address.")
@click.option("--server-port", type=int, default=7000, show_default=True, help="frps bindPort.")
@click.option(
    "--token",
    required=True,
    envvar=frpc.TOKEN_ENV,
    help="frps auth.token, or env FRP_AUTH_TOKEN (kept in .env, not in the TOML).",
)
@click.option(
    "--remote-port", type=int, required=True, help="Port on the relay that agents connect to."
)
@click.option("--local-ip", default=None, help="Where frpc reaches the gateway.")
@click.option("--local-port", type=int, default=None, help="The gateway port frpc forwards to.")
@click.option(
    "--compose/--host",
    "compose",
    default=True,
    show_default=True,
    help="frpc runs in compose (reaches caddy:8443) or on the host (127.0.0.1:GATEWAY_TLS_PORT).",
)
@click.option(
    "--inline-token",
    is_flag=True,
    help="Write the token into the TOML (mode 0600) instead of reading it from the environment.",
)
@click.option("--output", type=click.Path(path_type=Path), default=None, help="TOML to write.")
@click.option("--dry-run", is_flag=True, help="Print the TOML; write nothing.")
def config(
    server_addr: str,
    server_port: int,
    token: str,
    remote_port: int,
    local_ip: str | None,
    local_port: int | None,
    compose: bool,
    inline_token: bool,
    output: Path | None,
    dry_run: bool,
) -> None:
    """Write frpc.toml: one tcp proxy, relay:REMOTE_PORT -> the gateway, TLS to frps on."""
    try:
        environ = current_environ()
        env_file = environ.file_path
        target = output or frpc.config_path(environ.checkout)
        if target is None:
            raise SetupError(f"{environ.checkout_problem}; or pass --output")
        if compose:
            ip, port = frpc.COMPOSE_TARGET
        else:
            try:
                ip, port = LOOPBACK, load_settings().gateway_tls_port
            except StackError as exc:
                raise SetupError(str(exc)) from exc
        spec = frpc.TunnelSpec(
            server_addr=server_addr,
            server_port=server_port,
            remote_port=remote_port,
            local_ip=local_ip or ip,
            local_port=local_port or port,
            token=token if inline_token else None,
        )
        doc = frpc.build(spec)
        problems = frpc.check(doc)
        if problems:
            raise SetupError("; ".join(problems))
        if dry_run:
            click.echo(frpc.render(doc), nl=False)
            return
        if not inline_token:
            if env_file is None:
                raise SetupError(
                    f"no .env to keep {frpc.TOKEN_ENV} in: use --inline-token or OPENMONO_ROOT"
                )
            if set_env(env_file, {frpc.TOKEN_ENV: token}):
                click.echo(f"stored {frpc.TOKEN_ENV} in {env_file} (mode 0600)")
        written = frpc.write(target, doc)
        where = f"{spec.local_ip}:{spec.local_port}"
        state = "wrote" if written else "unchanged"
        click.echo(f"{state} {target}: relay {server_addr}:{remote_port} -> gateway at {where}")
    except SetupError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
