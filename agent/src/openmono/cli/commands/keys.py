"""`openmono keys add|list|revoke|rotate|usage`: a key per agent box at this gateway.

A key is printed once, by `add` and `rotate`, and stored nowhere but as a hash. Changes apply
without restarting anything: the command returns once the gateway runs the new table (both
listeners), so a revoked key is refused from then on. Mistakes (a bad or taken name, an unknown
one, a bad --expires/--rate/--since) exit with code 2, other failures with 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import click
from openmono_contracts.gatewaykeys import IssuedKey, KeyListing, UsageReport
from rich.table import Column, Table

from openmono.cli.commands._table import table_console
from openmono.cli.commands._via import via_option
from openmono.keys import Backend, KeysCommandError, open_backend

T = TypeVar("T")

_via = via_option("Whose store: auto = a running native gateway's, else the compose project's.")
_json = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _run(via: str, action: Callable[[Backend], T]) -> T:
    try:
        return action(open_backend(via, lambda line: click.echo(line, err=True)))
    except KeysCommandError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2 if exc.mistake else 1)


def _when(value: datetime | float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        value = datetime.fromtimestamp(value, UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _issued(issued: IssuedKey, as_json: bool, verb: str) -> None:
    if as_json:
        click.echo(issued.model_dump_json())
        return
    click.echo(f"{verb} key {issued.name!r} (shown once: only its hash is kept)")
    click.echo(issued.key)
    limits = []
    if issued.expires_at:
        limits.append(f"expires {_when(issued.expires_at)} UTC")
    if issued.rate_per_min:
        limits.append(f"{issued.rate_per_min} requests/min")
    if limits:
        click.echo(", ".join(limits))
    click.echo("on the box: export OPENMONO_LLM_API_KEY=<the key above>")


@click.group()
def keys() -> None:
    """A key per agent box: add, list, revoke, rotate, usage (LLAMA_API_KEY: the operator)."""


@keys.command()
@click.argument("name")
@click.option("--expires", type=float, metavar="DAYS", help="Refused after this many days.")
@click.option("--rate", metavar="N/min", help="At most N requests a minute (429 past it).")
@_via
@_json
def add(name: str, expires: float | None, rate: str | None, via: str, as_json: bool) -> None:
    """Issue a key for the box NAME ([a-z0-9-]{1,40}) and print it once."""
    _issued(_run(via, lambda b: b.add(name, expires, rate)), as_json, "added")


@keys.command()
@click.argument("name")
@_via
@_json
def rotate(name: str, via: str, as_json: bool) -> None:
    """Replace NAME's key (same expiry and limit); the old one is refused from now on."""
    _issued(_run(via, lambda b: b.rotate(name)), as_json, "rotated")


@keys.command()
@click.argument("name")
@_via
def revoke(name: str, via: str) -> None:
    """Remove NAME's key: refused from when this returns; its usage records stay."""
    _run(via, lambda b: b.revoke(name))
    click.echo(f"revoked {name!r}")


@keys.command("list")
@_via
@_json
def list_(via: str, as_json: bool) -> None:
    """Every key: created, last used, expiry, limit, usage (never the key)."""
    listing: KeyListing = _run(via, lambda b: b.listing())
    if as_json:
        click.echo(listing.model_dump_json())
        return
    if not listing.keys:
        click.echo("no box keys yet (`openmono keys add NAME`); LLAMA_API_KEY is the operator's")
    totals = _totals(listing.usage)
    table = Table(
        Column("name", no_wrap=True), "created", "last used", "expires", "rate", "requests",
        "tokens in/out", box=None,
    )  # fmt: skip
    for key in listing.keys:
        total = totals.get(key.name, _Total())
        expires = _when(key.expires_at) + (" (expired)" if key.expired else "")
        rate = f"{key.rate_per_min}/min" if key.rate_per_min else "-"
        table.add_row(
            key.name, _when(key.created_at), _when(total.last), expires, rate,
            str(total.requests), f"{total.prompt}/{total.completion}",
        )  # fmt: skip
    if listing.keys:
        table_console().print(table)
    operator = totals.get("operator")
    if operator:
        click.echo(
            f"operator (LLAMA_API_KEY): {operator.requests} requests, last "
            f"{_when(operator.last)}, tokens in/out {operator.prompt}/{operator.completion}"
        )


@dataclass
class _Total:
    requests: int = 0
    last: float | None = None
    prompt: int = 0
    completion: int = 0


def _totals(report: UsageReport) -> dict[str, _Total]:
    """Key name -> its requests, last use and tokens over all its routes."""
    out: dict[str, _Total] = {}
    for row in report.rows:
        total = out.setdefault(row.key, _Total())
        if row.last_used is not None:
            total.last = max(total.last or 0.0, row.last_used)
        total.requests += row.requests
        total.prompt += row.prompt_tokens
        total.completion += row.completion_tokens
    return out


@keys.command()
@click.option("--since", help="A span back from now (30m, 24h, 7d) or a date (2026-01-31).")
@_via
@_json
def usage(since: str | None, via: str, as_json: bool) -> None:
    """Requests, statuses, bytes out, upstream time and tokens per key and route."""
    report: UsageReport = _run(via, lambda b: b.usage(since))
    if as_json:
        click.echo(report.model_dump_json())
        return
    table = Table(
        Column("key", no_wrap=True), Column("route", no_wrap=True), "requests", "statuses",
        "bytes out", "upstream s", "tokens in/out", box=None,
    )  # fmt: skip
    for row in report.rows:
        statuses = " ".join(f"{code}:{n}" for code, n in sorted(row.statuses.items()))
        if row.dropped:
            statuses += f" (dropped:{row.dropped})"
        tokens = "-"
        if row.counted:
            tokens = f"{row.prompt_tokens}/{row.completion_tokens}"
            tokens += f" ({row.cached_tokens} cached)" if row.cached_tokens else ""
        table.add_row(
            row.key or "(refused)", row.route, str(row.requests), statuses, str(row.bytes_out),
            f"{row.upstream_ms / 1000:.1f}", tokens,
        )  # fmt: skip
    table_console().print(table)
    note = f"{report.records} requests"
    if report.since is not None:
        note += f" since {_when(report.since)} UTC"
    if report.unreadable:
        note += f"; {report.unreadable} lines were not access records"
    click.echo(note)
