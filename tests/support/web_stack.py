"""The web side of the stack on loopback: a SearXNG-shaped server whose results point at local
pages, the real scrape service (asking that SearXNG for Firecrawl search) and the real gateway.

`local_searxng(urls)` answers every query with the recorded `offline_localjson.json` answer (three
results, see fake_searxng.py), its result URLs replaced by `urls` in order, so the scrape service
can read them (127.0.0.0/8 is allow-listed for tests). `web_stack(tmp, key, urls)` starts all
three and yields their URLs. The scrape service asks the box's model (the Firecrawl json and
summary formats) through that gateway, as in the stack: with `llama_upstream` unset, the
gateway's LLM route has no upstream (`/services` says `llm: false`). Used by the Firecrawl and
search-and-read tests and by bench/firecrawl.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.fake_searxng import FakeSearxng, fake_searxng
from tests.support.fixture_web import scrape_service
from tests.support.gateway import Gateway, closed_upstream, gateway
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.procs import free_port


@dataclass
class LocalSearxng:
    server: FakeServer
    fake: FakeSearxng

    @property
    def url(self) -> str:
        return self.server.url

    def searches(self) -> list[Seen]:
        return self.fake.searches()


@contextmanager
def local_searxng(urls: Sequence[str]) -> Iterator[LocalSearxng]:
    with fake_searxng() as fake:

        def handle(req: Seen) -> Reply:
            reply = fake.handle(req)
            if req.path != "/search" or reply.status != 200:
                return reply
            body = json.loads(reply.body)
            rows = body["results"]
            for row, url in zip(rows, urls, strict=False):
                row["url"] = url
            body["results"] = rows[: len(urls)] if urls else rows
            return Reply(200, json.dumps(body).encode(), "application/json")

        with serve(handle) as server:
            yield LocalSearxng(server, fake)


@dataclass
class WebStack:
    gateway: Gateway
    scrape: str  # the scrape service's own base URL (no auth)
    searxng: LocalSearxng

    @property
    def firecrawl(self) -> str:
        """The Firecrawl base URL as a client is given it."""
        return f"{self.gateway.url}/firecrawl"


@contextmanager
def web_stack(
    tmp: Path,
    api_key: str,
    result_urls: Sequence[str],
    scrape_env: Mapping[str, str] | None = None,
    scrape_enabled: str = "true",
    llama_upstream: str | None = None,
    gateway_env: Mapping[str, str] | None = None,
) -> Iterator[WebStack]:
    # the gateway's port is known before it starts: the scrape service is its LLM route's client
    port = free_port()
    env = {
        "SCRAPE_BROWSER_PATH": "",
        "SCRAPE_LLM_URL": f"http://127.0.0.1:{port}",
        "SCRAPE_LLM_API_KEY": api_key,
    }
    env.update(scrape_env or {})
    with local_searxng(result_urls) as sx:
        env["SCRAPE_SEARXNG_URL"] = sx.url
        with (
            scrape_service(tmp, env) as svc,
            gateway(
                tmp,
                api_key=api_key,
                llama_upstream=llama_upstream or closed_upstream(),
                scrape_upstream=svc.removeprefix("http://"),
                searxng_upstream=sx.url.removeprefix("http://"),
                scrape_enabled=scrape_enabled,
                search_enabled="true",
                extra_env=gateway_env,
                port=port,
            ) as gw,
        ):
            yield WebStack(gw, svc, sx)
