"""A SearXNG-shaped HTTP server built from recorded real SearXNG answers (tests/fixtures/searxng).

`GET /search?q=..&format=json` answers a recorded JSON body chosen by the query:

    query contains      fixture                                what it exercises
    "mixed"             offline_mixed_failures.json            results + unresponsive_engines
    "typed"             offline_demo_typed_result.json         rows with `url: null`
    "offline"           default_engines_offline_first.json     no results, every engine failed
    "suspended"         default_engines_offline_suspended.json no results, engines suspended
    "legacy"            offline_localjson + number_of_results  the key older versions send
    "duplicates"        offline_localjson with repeated URLs   dedupe
    anything else       offline_localjson.json                 3 results + suggestions

The recorded `query` is replaced by the asked one. `json_enabled = False` makes it answer 403 with
Werkzeug's HTML page, as SearXNG does when `json` is not in `search.formats`; a missing `q` gets
400 `{"error": "No query"}`; `GET /healthz` answers OK. Every request is recorded.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.httpfake import FakeServer, Reply, Seen, serve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "searxng"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def body_for(query: str) -> dict[str, Any]:
    """The recorded answer this fake gives for `query` (see the table above)."""
    q = query.lower()
    if "mixed" in q:
        body = load("offline_mixed_failures.json")
    elif "typed" in q:
        body = load("offline_demo_typed_result.json")
    elif "offline" in q:
        body = load("default_engines_offline_first.json")
    elif "suspended" in q:
        body = load("default_engines_offline_suspended.json")
    else:
        body = load("offline_localjson.json")
        if "legacy" in q:
            body["number_of_results"] = 0
        if "duplicates" in q:
            extra = copy.deepcopy(body["results"][0])
            extra["url"] = extra["url"] + "#section"
            extra["score"] = 0.1
            body["results"].append(extra)
            body["results"].insert(2, copy.deepcopy(body["results"][1]))
    body["query"] = query
    return body


@dataclass
class FakeSearxng:
    server: FakeServer
    json_enabled: bool = True
    # Every request `handle` answered (also when another server delegates to it).
    seen: list[Seen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    def searches(self) -> list[Seen]:
        return [r for r in self.seen if r.path == "/search"]

    def handle(self, req: Seen) -> Reply:
        self.seen.append(req)
        if req.path == "/healthz":
            return Reply(200, b"OK")
        if req.path != "/search":
            return Reply(404, b"Not Found")
        fmt = (req.query.get("format") or ["html"])[0]
        if fmt != "json" or not self.json_enabled:
            page = (FIXTURES / "forbidden_format.html").read_bytes()
            return Reply(403, page, "text/html; charset=utf-8")
        query = (req.query.get("q") or [""])[0]
        if not query:
            return Reply(400, b'{"error": "No query"}', "application/json")
        return Reply(200, json.dumps(body_for(query)).encode(), "application/json")


@contextmanager
def fake_searxng() -> Iterator[FakeSearxng]:
    holder: list[FakeSearxng] = []

    def handle(req: Seen) -> Reply:
        return holder[0].handle(req)

    with serve(handle) as server:
        fake = FakeSearxng(server)
        holder.append(fake)
        yield fake
