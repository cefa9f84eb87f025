"""The key service's HTTP face: `GET /health`, `GET /v1/rate` (Caddy's `forward_auth`) and
Firecrawl's `GET /firecrawl/{v1,v2}/team/{credit-usage,token-usage}` (`openmono_keys.firecrawl`:
the key's usage from the records kept here, asked by the gateway with the same secret).

The gateway calls `/v1/rate` for a key that has a rate limit, after Caddy checked the key itself,
with the key's name and limit in headers (never the key) and the gateway's own secret
(openmono_keys.secret): without it the answer is 401 and no budget is spent. 204 lets the
request through; 429 (`Retry-After`, the JSON error shape of the route) goes back to the client
as it is. A plain ASGI
callable: two routes do not need a framework, and this sits in front of a rate-limited key's
every request.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from openmono_contracts.gatewaykeys import (
    GATEWAY_HEADER,
    KEY_HEADER,
    KEY_NAME,
    RATE_HEADER,
    SHAPE_HEADER,
    RateLimitedBody,
)

from openmono_keys import firecrawl
from openmono_keys.ratelimit import RateLimiter
from openmono_keys.secret import from_gateway

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_JSON = (b"content-type", b"application/json")


class KeyService:
    """The ASGI application."""

    def __init__(
        self, secret: str, limiter: RateLimiter | None = None, usage_dir: Path | None = None
    ) -> None:
        self.secret = secret
        self.limiter = limiter or RateLimiter()
        self.usage_dir = usage_dir

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        if path == "/health":
            await _respond(send, 200, {"status": "ok"})
        elif path == "/v1/rate":
            await self._rate(scope, send)
        elif firecrawl.PATH.match(path):
            await self._team_usage(scope, send, path)
        else:
            await _respond(send, 404, {"error": "not_found"})

    async def _team_usage(self, scope: Scope, send: Send, path: str) -> None:
        """Firecrawl's team usage of the key the gateway names (`openmono_keys.firecrawl`)."""
        headers = _headers(scope)
        if not from_gateway(headers.get(GATEWAY_HEADER.lower()), self.secret):
            await _respond(send, 401, {"success": False, "error": "unauthorized"})
            return
        if scope.get("method") != "GET":
            await _respond(send, 405, {"success": False, "error": "use GET"})
            return
        name = headers.get(KEY_HEADER.lower(), "")
        match = firecrawl.PATH.match(path)
        if not KEY_NAME.fullmatch(name) or self.usage_dir is None or match is None:
            await _respond(send, 400, {"success": False, "error": "no key named"})
            return
        version: firecrawl.Version = "v1" if match.group(1) == "v1" else "v2"
        what: firecrawl.What = "credit-usage" if "credit" in match.group(2) else "token-usage"
        # every record file is read: off the event loop, which also answers /v1/rate
        body = await asyncio.to_thread(
            firecrawl.team_usage, self.usage_dir, name, version, what, time.time()
        )
        await _respond(send, 200, body)

    async def _rate(self, scope: Scope, send: Send) -> None:
        headers = _headers(scope)
        if not from_gateway(headers.get(GATEWAY_HEADER.lower()), self.secret):
            await _respond(send, 401, {"error": "unauthorized"})
            return
        name = headers.get(KEY_HEADER.lower(), "")
        rate_text = headers.get(RATE_HEADER.lower(), "")
        if not KEY_NAME.fullmatch(name) or not rate_text.isdigit() or int(rate_text) < 1:
            await _respond(send, 400, {"error": "bad_rate_request"})
            return
        rate = int(rate_text)
        wait = self.limiter.take(name, rate)
        if wait == 0:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body: dict[str, Any] = RateLimitedBody(
            key=name, limit_per_min=rate, retry_after_s=wait
        ).model_dump()
        if headers.get(SHAPE_HEADER.lower()) == "firecrawl":
            body = {"success": False, **body}
        await _respond(send, 429, body, [(b"retry-after", str(wait).encode())])


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        # a header given twice is not one value: make it fail the checks above
        out[name] = "\x00" if name in out else raw_value.decode("latin-1")
    return out


async def _respond(
    send: Send,
    status: int,
    body: dict[str, Any],
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = [_JSON, (b"content-length", str(len(data)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
