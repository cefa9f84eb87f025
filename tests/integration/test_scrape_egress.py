"""The browser's guard proxy (openmono_scrape.engines.egress) alone: tunnels, forwards, refusals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from openmono_contracts import NetGuard
from openmono_scrape.engines.egress import GuardProxy

from tests.support import fixture_web as fw
from tests.support.fixture_web import Canary

pytestmark = pytest.mark.integration


@pytest.fixture
async def proxy() -> AsyncIterator[GuardProxy]:
    async def resolve(host: str, port: int) -> list[str]:
        if host == "rebind.test":
            return ["127.0.0.3"]
        raise OSError("unknown")

    p = GuardProxy(NetGuard(["127.0.0.1/32"], resolver=resolve))
    await p.start()
    yield p
    await p.close()


async def raw(proxy: GuardProxy, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(1 << 20), 10)
    writer.close()
    return data


async def test_plain_http_is_forwarded(proxy: GuardProxy, web: str) -> None:
    async with httpx.AsyncClient(proxy=proxy.url, trust_env=False) as client:
        resp = await client.get(f"{web}/article", timeout=10)
    assert resp.status_code == 200 and fw.ARTICLE_SENTINEL in resp.text
    assert proxy.forwarded == 1


async def test_connect_tunnels_to_the_checked_address(proxy: GuardProxy, web: str) -> None:
    authority = web.removeprefix("http://")
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    await writer.drain()
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    writer.write(f"GET /plain HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    # Connection: close, so the whole answer is everything up to EOF (one read may stop at headers)
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200") and b"High water at Brest" in answer


async def test_refused_targets_get_403_and_no_connection(proxy: GuardProxy, canary: Canary) -> None:
    for request in (
        f"CONNECT {canary.host}:{canary.port} HTTP/1.1\r\n\r\n",
        f"CONNECT rebind.test:{canary.port} HTTP/1.1\r\n\r\n",
        f"GET {canary.url}/x HTTP/1.1\r\nHost: {canary.host}\r\n\r\n",
        f"GET http://rebind.test:{canary.port}/ HTTP/1.1\r\n\r\n",
        "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n",
        "GET http://[::ffff:127.0.0.3]/ HTTP/1.1\r\n\r\n",
    ):
        assert (await raw(proxy, request.encode())).startswith(b"HTTP/1.1 403"), request
    assert (await raw(proxy, b"GET /relative HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 400")
    assert (await raw(proxy, b"nonsense\r\n\r\n")).startswith(b"HTTP/1.1 400")
    assert canary.connections == 0 and proxy.forwarded == 0
    assert proxy.refused == 6
