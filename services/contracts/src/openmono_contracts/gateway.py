"""How every OpenMono process talks to the gateway: the bearer header, the HTTP client, `/services`.

The agent's LLM client, `openmono doctor`, `openmono up`, the native stack's probes and the worker's
web tools all build their gateway requests here, so the gateway's auth (DESIGN.md §3) and its TLS
trust are decided in one place: `tls_context` is the one verifying context every gateway client
uses (a private trust anchor, such as Caddy's internal CA, goes in there and nowhere else).

    ContractError
     └── ServicesUnreadable  -- `/services` gave no capability document (the reason says why)
"""

from __future__ import annotations

import ssl
from functools import cache
from typing import Any

import httpx
from pydantic import ValidationError

from openmono_contracts.errors import ContractError
from openmono_contracts.services import ServicesInfo

__all__ = [
    "ServicesUnreadable",
    "async_client",
    "bearer",
    "read_services",
    "read_services_sync",
    "sync_client",
    "tls_context",
]


class ServicesUnreadable(ContractError):
    """`GET /services` failed; `reason` is a short sentence fit for a tool result or a check."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def bearer(api_key: str | None) -> dict[str, str]:
    """The gateway's auth header (none without a key: the gateway then answers 401)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


@cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle costs ~70 ms each time."""
    return httpx.create_ssl_context()


def _options(api_key: str | None, kw: dict[str, Any]) -> dict[str, Any]:
    headers = {**bearer(api_key), **dict(kw.pop("headers", None) or {})}
    return {"verify": tls_context(), "headers": headers, **kw}


def async_client(api_key: str | None = None, **kw: Any) -> httpx.AsyncClient:
    """An async client for the gateway (or an LLM endpoint): its TLS trust, and the bearer if
    `api_key` is given. Other keyword arguments go to `httpx.AsyncClient`."""
    return httpx.AsyncClient(**_options(api_key, kw))


def sync_client(api_key: str | None = None, **kw: Any) -> httpx.Client:
    """The blocking twin of `async_client` (CLI commands, the native stack's health probes)."""
    return httpx.Client(**_options(api_key, kw))


def _services_url(gateway: str) -> str:
    return f"{gateway.rstrip('/')}/services"


def _parse(resp: httpx.Response) -> ServicesInfo:
    if resp.status_code != 200:
        raise ServicesUnreadable(f"/services answered HTTP {resp.status_code}")
    try:
        return ServicesInfo.model_validate_json(resp.content)
    except ValidationError:
        raise ServicesUnreadable(
            "/services answered something that is not the capability JSON"
        ) from None


def _failure(exc: httpx.HTTPError, timeout_s: float) -> ServicesUnreadable:
    if isinstance(exc, httpx.TimeoutException):
        return ServicesUnreadable(f"/services did not answer within {timeout_s:g} s")
    return ServicesUnreadable(f"/services unreachable ({type(exc).__name__})")


async def read_services(
    client: httpx.AsyncClient, gateway: str, api_key: str | None, *, timeout_s: float
) -> ServicesInfo:
    """`GET {gateway}/services` with the bearer; raises `ServicesUnreadable`."""
    try:
        resp = await client.get(_services_url(gateway), headers=bearer(api_key), timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise _failure(exc, timeout_s) from exc
    return _parse(resp)


def read_services_sync(gateway: str, api_key: str | None, *, timeout_s: float) -> ServicesInfo:
    """`read_services` for code without an event loop (it opens and closes its own client)."""
    try:
        with sync_client(api_key, timeout=timeout_s) as client:
            resp = client.get(_services_url(gateway))
    except httpx.HTTPError as exc:
        raise _failure(exc, timeout_s) from exc
    return _parse(resp)
