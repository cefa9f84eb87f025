"""The gateway's request body limit per route (caddy/Caddyfile `body_limit`), on the real Caddy.

A body of exactly the route's limit reaches the upstream whole; one byte more is refused with 413
in the route's error shape (the Firecrawl API's own for /firecrawl) before the upstream is asked
(on its Content-Length), or as soon as a chunked body passes the limit (the upstream never gets
more than the limit). A refusal needs the key first: without it the
answer is 401, whatever the size.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.gateway import gateway
from tests.support.recording_upstream import recording_upstream

pytestmark = pytest.mark.integration

KEY = "bounds-test-key-0123456789"
BEARER = {"Authorization": f"Bearer {KEY}"}
KIB, MIB = 1024, 1024 * 1024

# (path, limit, upstream, the service named in the 413 body; None: the Firecrawl shape)
ROUTES = [
    ("/scrape", MIB, "scrape", "scrape"),
    ("/firecrawl/v1/scrape", MIB, "scrape", None),
    ("/v2/scrape", MIB, "scrape", None),
    ("/search", 64 * KIB, "searxng", "search"),
    ("/v1/chat/completions", 32 * MIB, "llama", "llm"),
]


def _limit_text(limit: int) -> str:
    return f"{limit // MIB}MiB" if limit >= MIB else f"{limit // KIB}KiB"


@pytest.mark.parametrize(("path", "limit", "upstream", "service"), ROUTES)
def test_a_body_over_the_routes_limit_is_a_413_in_its_shape(
    tmp_path: Path, path: str, limit: int, upstream: str, service: str | None
) -> None:
    with (
        recording_upstream("llama") as llama,
        recording_upstream("searxng") as searxng,
        recording_upstream("scrape") as scrape,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=llama.address,
            searxng_upstream=searxng.address,
            scrape_upstream=scrape.address,
        ) as gw,
        httpx.Client(timeout=120) as client,
    ):
        target = {"llama": llama, "searxng": searxng, "scrape": scrape}[upstream]
        url = f"{gw.url}{path}"

        fits = client.post(url, content=b"x" * limit, headers=BEARER)
        assert fits.status_code == 200, fits.text
        [seen] = target.requests()
        assert len(seen.body) == limit
        target.clear()

        over = client.post(url, content=b"x" * (limit + 1), headers=BEARER)
        assert over.status_code == 413, over.text
        assert over.headers["content-type"] == "application/json"
        said = _limit_text(limit)
        if service is None:
            assert over.json() == {
                "success": False,
                "error": f"request body over the gateway's limit of {said}",
            }
        else:
            assert over.json() == {"error": "request_too_large", "service": service, "limit": said}
        assert target.requests() == []  # refused on its Content-Length, before any upstream

        # chunked (no Content-Length): cut where it passes the limit, the same answer
        chunks = iter([b"x" * (limit // 2), b"x" * (limit // 2), b"x"])
        cut = client.post(url, content=chunks, headers=BEARER)
        assert cut.status_code == 413, cut.text
        assert cut.json() == over.json()
        assert all(len(r.body) <= limit for r in target.requests())

        # no key: refused before any body is read
        assert client.post(url, content=b"x" * (limit + 1)).status_code == 401
