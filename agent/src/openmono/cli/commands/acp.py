"""`openmono acp` (ACP over stdio, for editors such as Zed), `openmono serve` (ACP over HTTP/SSE).

Both take the root options (`--allow`, `--yolo`, `--mode`, `--config`, `--endpoint`, ...). `serve`
binds 127.0.0.1 unless `--host` / `acp.host` says otherwise, and always wants a bearer token:
`--token`, else `OPENMONO_ACP_TOKEN` (`acp.token`) from the environment, the env file or the
settings, else one is generated into the env file (`compose/.env`, mode 0600): the one token compose
gives its agent too. Bound beyond loopback it serves HTTPS with a self-signed certificate made
once under `<data dir>/acp-tls/` (its path and SHA-256 pin are logged for the client); `acp.tls=on`
does the same on loopback, `--insecure-http` keeps plain HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import click
from openmono_contracts.logurl import redact_handlers

from openmono.config import RunOptions

EXIT_CONFIG = 2


@click.command("acp")
@click.pass_obj
def acp(opts: RunOptions) -> None:
    """Serve the Agent Client Protocol on stdin/stdout (for editors)."""
    from openmono.acp import serve_stdio

    # stdout carries the protocol: every log line goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="openmono acp: %(message)s")
    redact_handlers()  # fetched URLs without query/userinfo (logurl.py)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(opts))


@click.command("serve")
@click.option("--acp-port", type=click.IntRange(0, 65535), help="Port (default acp.port, 7475).")
@click.option("--host", help="Address to bind (default acp.host, 127.0.0.1).")
@click.option("--token", help="The bearer clients must send (default acp.token, else generated).")
@click.pass_obj
def serve(opts: RunOptions, acp_port: int | None, host: str | None, token: str | None) -> None:
    """Serve ACP over HTTP/SSE (sessions, turns streamed as server-sent events)."""
    from openmono.acp import run_server
    from openmono.config import ConfigError

    try:
        settings = opts.settings()
    except ConfigError as exc:
        click.echo(f"openmono: {exc}", err=True)
        raise SystemExit(EXIT_CONFIG) from exc
    logging.basicConfig(level=logging.INFO, format="openmono serve: %(message)s")
    redact_handlers()  # fetched URLs (httpx logs each request) without query/userinfo
    try:
        run_server(opts, settings, host=host, port=acp_port, token=token)
    except ConfigError as exc:
        click.echo(f"openmono: {exc}", err=True)
        raise SystemExit(EXIT_CONFIG) from exc
