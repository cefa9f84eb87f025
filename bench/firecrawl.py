"""Scrape cache and search-and-read, each against a baseline measured in the same run.

    uv run python bench/firecrawl.py [--rounds 15] [--read-rounds 5] [--origin-delay-ms 200]

Starts the real gateway (caddy/Caddyfile), the real scrape service and the SearXNG-shaped test
server whose results point at a local page server (tests/support/web_stack.py), all on free
loopback ports.

1. Cache: `POST /firecrawl/v2/scrape` through the gateway for a URL never seen (a miss: the
   origin is asked, the page extracted and stored), then the same URL again (a hit: served from
   the cache, the origin not asked). First with an origin that answers at once, so the miss is
   the service's own cost (pinned fetch, extraction); then with one that takes
   `--origin-delay-ms`, standing in for a remote site, whose latency a hit skips.
2. Search-and-read: WebSearch with `read_top=3` (one call, the three pages read in parallel)
   against WebSearch followed by three WebFetch calls in a row, as a model would do without it,
   both through `run_tool` and the gateway. Here the result pages take `--origin-delay-ms` to
   answer, standing in for remote sites.
Rounds alternate the two sides so they share the machine's load. Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from openmono_contracts import ToolRequest, WebAccess  # noqa: E402
from openmono_worker import run_tool  # noqa: E402

from tests.support.httpfake import Reply, Seen, serve  # noqa: E402
from tests.support.web_stack import web_stack  # noqa: E402

KEY = "bench-firecrawl-key"
TEXT = "A tide table lists the times and heights of high and low water at one port. " * 60
_delay_s = 0.0


def _page(req: Seen) -> Reply:
    if _delay_s:
        time.sleep(_delay_s)
    name = req.path.strip("/") or "page"
    body = f"<html><head><title>{name}</title></head><body><article><h1>{name}</h1>"
    body += f"<p>{TEXT}</p><p>{name} {req.query}</p></article></body></html>"
    return Reply(200, body.encode(), "text/html; charset=utf-8")


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _tool(tool: str, params: dict[str, object], web: WebAccess, tmp: Path) -> None:
    req = ToolRequest(
        tool=tool, params=params, call_id="b", session_id="b", workspace=str(tmp), web=web
    )
    res = run_tool(req)
    if not res.ok or "via gateway" not in res.output:
        raise SystemExit(f"{tool} did not answer through the gateway: {res.error or res.output}")


def main() -> None:
    global _delay_s
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--read-rounds", type=int, default=5)
    parser.add_argument("--origin-delay-ms", type=float, default=200.0)
    args = parser.parse_args()
    os.environ["WORKER_WEB_FETCH_ALLOW_CIDRS"] = "127.0.0.0/8"
    tmp = Path(tempfile.mkdtemp(prefix="bench-firecrawl-"))
    counter = itertools.count()
    with serve(_page) as origin:
        urls = [f"{origin.url}/tides", f"{origin.url}/currents", f"{origin.url}/harbours"]
        with web_stack(tmp, KEY, urls) as stack, httpx.Client(timeout=60) as client:
            auth = stack.gateway.auth
            scrape = f"{stack.firecrawl}/v2/scrape"

            def fc(url: str) -> tuple[float, str]:
                start = time.perf_counter()
                resp = client.post(scrape, json={"url": url, "maxAge": 600_000}, headers=auth)
                took = _ms(start)
                resp.raise_for_status()
                return took, resp.json()["data"]["metadata"]["cacheState"]

            def miss_then_hit(rounds: int) -> tuple[list[float], list[float]]:
                """Each round a new page, twice: a miss (fetched and stored), then a hit."""
                miss: list[float] = []
                hit: list[float] = []
                for _ in range(rounds):
                    url = f"{origin.url}/page?i={next(counter)}"
                    for times, want in ((miss, "miss"), (hit, "hit")):
                        took, state = fc(url)
                        assert state == want, state
                        times.append(took)
                return miss, hit

            fc(f"{origin.url}/warm?i=-1")  # first request pays imports and connections
            miss, hit = miss_then_hit(args.rounds)
            asked = sum(1 for r in origin.requests if r.path == "/page")
            assert asked == args.rounds, f"the origin saw {asked} cache requests"
            m_miss, m_hit = statistics.median(miss), statistics.median(hit)

            _delay_s = args.origin_delay_ms / 1000.0
            slow_miss, slow_hit = miss_then_hit(args.read_rounds)
            web = WebAccess(gateway=stack.gateway.url, api_key=KEY)
            _tool("WebSearch", {"query": "hello"}, web, tmp)  # probe cached, imports done
            combined, sequential = [], []
            for _ in range(args.read_rounds):
                start = time.perf_counter()
                _tool("WebSearch", {"query": "hello", "read_top": 3}, web, tmp)
                combined.append(_ms(start))
                start = time.perf_counter()
                _tool("WebSearch", {"query": "hello"}, web, tmp)
                for url in urls:
                    _tool("WebFetch", {"url": url, "max_length": 4000}, web, tmp)
                sequential.append(_ms(start))

    s_miss, s_hit = statistics.median(slow_miss), statistics.median(slow_hit)
    m_comb, m_seq = statistics.median(combined), statistics.median(sequential)
    print(f"scrape cache via gateway /firecrawl/v2/scrape, {args.rounds} rounds, local origin:")
    print(f"  miss  median {m_miss:8.1f} ms")
    print(f"  hit   median {m_hit:8.1f} ms   hit/miss = {m_hit / m_miss:.2f}")
    print(f"same, {args.read_rounds} rounds, origin answering in {args.origin_delay_ms:g} ms:")
    print(f"  miss  median {s_miss:8.1f} ms")
    print(f"  hit   median {s_hit:8.1f} ms   hit/miss = {s_hit / s_miss:.2f}")
    print(
        f"search-and-read k=3, {args.read_rounds} rounds, pages answer in "
        f"{args.origin_delay_ms:g} ms:"
    )
    print(f"  WebSearch + 3 sequential WebFetch  median {m_seq:8.1f} ms")
    print(
        f"  WebSearch read_top=3               median {m_comb:8.1f} ms   "
        f"ratio = {m_comb / m_seq:.2f}"
    )


if __name__ == "__main__":
    main()
