"""How every OpenMono process talks to the gateway: the bearer header, the HTTP client, `/services`.

The agent's LLM client, `openmono doctor`, `openmono up`, the native stack's probes and the worker's
web tools all build their gateway requests here, so the gateway's auth (docs/architecture.md §3)
and its TLS trust are decided in one place: `tls_context(anchor)` is the one verifying context
every gateway client uses. With an anchor (Caddy's internal CA, `OPENMONO_GATEWAY_CA`, see `trust`)
it trusts that CA alone; without one, the system's store. A failed certificate check becomes a
reason that says what to do (`trust.explain_tls_failure`).

    ContractError
     └── ServicesUnreadable  -- `/services` gave no capability document (the reason says why)
"""

from __future__ import annotations

import ssl
from functools import cache
from typing import Any

import httpx
from pydantic import ValidationError

from openmono_contracts import trust
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
def _system_context() -> ssl.SSLContext:
    # one per process: loading the CA bundle costs ~70 ms each time
    return httpx.create_ssl_context()


def tls_context(anchor: str | None = None) -> ssl.SSLContext:
    """The verifying context for the gateway: the anchor's CA alone (PEM, as `trust.load_anchor`
    returns it), else the system's store. Both are built once per process."""
    return trust.anchored_context(anchor) if anchor else _system_context()


def _options(api_key: str | None, anchor: str | None, kw: dict[str, Any]) -> dict[str, Any]:
    headers = {**bearer(api_key), **dict(kw.pop("headers", None) or {})}
    return {"verify": tls_context(anchor), "headers": headers, **kw}


def async_client(
    api_key: str | None = None, *, anchor: str | None = None, **kw: Any
) -> httpx.AsyncClient:
    """An async client for the gateway (or an LLM endpoint): its TLS trust (`anchor`: the
    gateway's CA PEM), and the bearer if `api_key` is given. Other keyword arguments go to
    `httpx.AsyncClient`."""
    return httpx.AsyncClient(**_options(api_key, anchor, kw))


def sync_client(
    api_key: str | None = None, *, anchor: str | None = None, **kw: Any
) -> httpx.Client:
    """The blocking twin of `async_client` (CLI commands, the native stack's health probes)."""
    return httpx.Client(**_options(api_key, anchor, kw))


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


def _failure(
    exc: httpx.HTTPError, timeout_s: float, gateway: str, anchor: str | None
) -> ServicesUnreadable:
    untrusted = trust.explain_tls_failure(exc, gateway, anchor)
    if untrusted is not None:
        return ServicesUnreadable(untrusted)
    if isinstance(exc, httpx.TimeoutException):
        return ServicesUnreadable(f"/services did not answer within {timeout_s:g} s")
    return ServicesUnreadable(f"/services unreachable ({type(exc).__name__})")


async def read_services(
    client: httpx.AsyncClient,
    gateway: str,
    api_key: str | None,
    *,
    timeout_s: float,
    anchor: str | None = None,
) -> ServicesInfo:
    """`GET {gateway}/services` with the bearer; raises `ServicesUnreadable`. `client` carries the
    TLS trust; `anchor` (the same one) only words a failed certificate check."""
    try:
        resp = await client.get(_services_url(gateway), headers=bearer(api_key), timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise _failure(exc, timeout_s, gateway, anchor) from exc
    return _parse(resp)


def read_services_sync(
    gateway: str, api_key: str | None, *, timeout_s: float, anchor: str | None = None
) -> ServicesInfo:
    """`read_services` for code without an event loop (it opens and closes its own client)."""
    try:
        with sync_client(api_key, anchor=anchor, timeout=timeout_s) as client:
            resp = client.get(_services_url(gateway))
    except httpx.HTTPError as exc:
        raise _failure(exc, timeout_s, gateway, anchor) from exc
    return _parse(resp)
