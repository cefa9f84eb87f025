"""Small HTTP helpers of the web paths: the open-web client, one request as a path's error, time
budgets, cancellable runs.

Gateway requests (bearer, TLS trust, `/services`) are built by `openmono_contracts.gateway`; the
client here is for the open web (DuckDuckGo, the direct fetch) and trusts the system's CAs only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
import threading
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any, TypeVar

import httpx

from openmono_worker.errors import CallCancelled
from openmono_worker.web._errors import WebPathError

T = TypeVar("T")

# How often the event loop looks at the executor's cancel flag.
_CANCEL_POLL_S = 0.05


@cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle costs ~70 ms each time."""
    return httpx.create_ssl_context()


def client(**kw: Any) -> httpx.AsyncClient:
    """An async HTTP client for the open web, sharing the process's TLS context."""
    return httpx.AsyncClient(verify=_ssl_context(), **kw)


async def request(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    who: str,
    error: type[WebPathError],
    timeout_s: float,
    **kw: Any,
) -> httpx.Response:
    """One request of a web path; no answer becomes `error`, saying `who` did not answer (a
    timeout) or is unreachable, never the transport's own message (it may name an address)."""
    try:
        return await client.request(method, url, timeout=timeout_s, **kw)
    except httpx.TimeoutException as exc:
        raise error(f"{who} did not answer within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise error(f"{who} unreachable ({type(exc).__name__})") from exc


def gateway_budget(configured_s: float, total_s: float | None, fallback_s: float) -> float:
    """How long the gateway path may take so the fallback still fits in the call's time limit.

    `total_s` is what is left of the call's `timeout_s` (None: no limit). At least 1 s, so a
    tight limit still tries the gateway briefly before falling back.
    """
    if total_s is None:
        return configured_s
    return max(1.0, min(configured_s, total_s - fallback_s - 1.0))


async def _watch(make: Callable[[], Awaitable[T]], cancel: threading.Event) -> T:
    task: asyncio.Future[T] = asyncio.ensure_future(make())
    while True:
        done, _ = await asyncio.wait({task}, timeout=_CANCEL_POLL_S)
        if done:
            return task.result()
        if cancel.is_set():
            task.cancel()
            await asyncio.wait({task})
            raise CallCancelled


def run_cancellable(make: Callable[[], Awaitable[T]], cancel: threading.Event) -> T:
    """Run a coroutine to completion in a fresh event loop; `cancel` stops it at once.

    Tools run in a worker thread (local executor) or a Celery process, neither of which has a
    loop. Should one be running in this thread anyway, the coroutine gets its own thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_watch(make, cancel))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _watch(make, cancel)).result()
