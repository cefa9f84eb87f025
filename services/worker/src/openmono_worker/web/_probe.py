"""`GET {gateway}/services`, cached per gateway URL (docs/architecture.md §6, step 3).

A good answer is kept for `probe_ttl_s`; a failed probe only for `probe_failure_ttl_s`, so an agent
that started before its gateway notices the gateway coming up. A gateway call that fails later
drops the entry (`forget`), so a gateway restarted with other services is asked again.
The cache is per process and shared by every call; a lock keeps it consistent across tool threads.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import httpx
from openmono_contracts import ServicesInfo
from openmono_contracts.gateway import ServicesUnreadable, read_services


@dataclass(frozen=True)
class Probe:
    """What `/services` said (`info`), or why it could not be read (`failure`)."""

    info: ServicesInfo | None
    failure: str | None
    expires_at: float


_cache: dict[str, Probe] = {}
_lock = threading.Lock()
# The clock the cache reads (a module attribute so tests can move time without sleeping).
_clock = time.monotonic


def forget(gateway: str) -> None:
    """Drop the cached answer for `gateway` (its next call probes again)."""
    with _lock:
        _cache.pop(gateway, None)


def clear() -> None:
    """Forget every gateway (tests, and `openmono setup` after it changed the services)."""
    with _lock:
        _cache.clear()


def _cached(gateway: str) -> Probe | None:
    with _lock:
        hit = _cache.get(gateway)
        if hit is not None and hit.expires_at > _clock():
            return hit
        return None


async def probe(
    client: httpx.AsyncClient,
    gateway: str,
    api_key: str | None,
    *,
    timeout_s: float,
    ttl_s: float,
    failure_ttl_s: float,
    anchor: str | None = None,
) -> Probe:
    """The gateway's capability document, from the cache or freshly asked."""
    hit = _cached(gateway)
    if hit is not None:
        return hit
    info: ServicesInfo | None = None
    failure: str | None = None
    try:
        info = await read_services(client, gateway, api_key, timeout_s=timeout_s, anchor=anchor)
    except ServicesUnreadable as exc:
        failure = exc.reason
    now = _clock()
    result = Probe(info, failure, now + (ttl_s if info is not None else failure_ttl_s))
    with _lock:
        _cache[gateway] = result
    return result
