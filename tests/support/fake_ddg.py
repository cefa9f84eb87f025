"""A local stand-in for DuckDuckGo's HTML endpoint (there is no internet here).

It serves the hand-written pages in tests/fixtures/duckduckgo, shaped like the real endpoint:
`mode` = "results" (200 + result blocks), "none" (200 + `.no-results`), "challenge" (202 + the
bot challenge page). Point `WORKER_WEB_DDG_URL` at `url + "/html/"`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.httpfake import FakeServer, Reply, Seen, serve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "duckduckgo"


def page(name: str) -> str:
    return (FIXTURES / name).read_text()


@dataclass
class FakeDuckDuckGo:
    server: FakeServer
    mode: str = "results"

    @property
    def url(self) -> str:
        return f"{self.server.url}/html/"

    def queries(self) -> list[str]:
        return [r.query.get("q", [""])[0] for r in self.server.requests if r.path == "/html/"]

    def handle(self, req: Seen) -> Reply:
        if req.path != "/html/":
            return Reply(404, b"not found")
        html = "text/html; charset=UTF-8"
        if self.mode == "challenge":
            return Reply(202, page("challenge.html").encode(), html)
        if self.mode == "none":
            return Reply(200, page("no_results.html").encode(), html)
        return Reply(200, page("results.html").encode(), html)


@contextmanager
def fake_duckduckgo(mode: str = "results") -> Iterator[FakeDuckDuckGo]:
    holder: list[FakeDuckDuckGo] = []
    with serve(lambda req: holder[0].handle(req)) as server:
        fake = FakeDuckDuckGo(server, mode)
        holder.append(fake)
        yield fake
