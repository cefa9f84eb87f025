"""changeTracking on a cached page against a plain cached scrape, measured in the same run.

    uv run python bench/firecrawl_changes.py [--rounds 40]

Starts the real gateway, the real scrape service (its cache in memory) and a local page server
(tests/support/web_stack.py), all on free loopback ports. One page is fetched once, so every
request after is a cache hit; then each round makes two `POST /firecrawl/v2/scrape` calls
through the gateway, in alternating order so they share the machine's load: `formats:
["markdown"]` (the baseline) and `formats: ["markdown", {"type": "changeTracking", "modes":
["git-diff"]}]` (the snapshot read, compared and written back; `same` each time). Prints the
medians, their difference and ratio. Target (issue 41): at most 5 ms more than the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from tests.support.httpfake import Reply, Seen, serve  # noqa: E402
from tests.support.web_stack import web_stack  # noqa: E402

KEY = "bench-changes-key"
TEXT = "A tide table lists the times and heights of high and low water at one port. " * 60
TRACKED = ["markdown", {"type": "changeTracking", "modes": ["git-diff"]}]


def _page(req: Seen) -> Reply:
    body = f"<html><head><title>tides</title></head><body><article><h1>Tides</h1><p>{TEXT}</p>"
    body += "</article></body></html>"
    return Reply(200, body.encode(), "text/html; charset=utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-changes-"))
    with serve(_page) as origin, web_stack(tmp, KEY, []) as stack, httpx.Client(timeout=60) as c:
        url = f"{origin.url}/tides"
        scrape = f"{stack.firecrawl}/v2/scrape"

        def call(formats: list[object]) -> tuple[float, dict[str, object]]:
            start = time.perf_counter()
            resp = c.post(
                scrape,
                json={"url": url, "formats": formats, "maxAge": 600_000},
                headers=stack.gateway.auth,
            )
            took = (time.perf_counter() - start) * 1000.0
            resp.raise_for_status()
            return took, resp.json()["data"]

        call(["markdown"])  # the fetch: every call after is a cache hit
        first = call(TRACKED)[1]["changeTracking"]
        assert first["changeStatus"] == "new", first  # type: ignore[index]
        plain: list[float] = []
        tracked: list[float] = []
        for i in range(args.rounds):
            order = [(plain, ["markdown"]), (tracked, TRACKED)]
            for times, formats in order if i % 2 == 0 else order[::-1]:
                took, data = call(formats)
                assert data["metadata"]["cacheState"] == "hit"  # type: ignore[index]
                if formats is TRACKED:
                    assert data["changeTracking"]["changeStatus"] == "same"  # type: ignore[index]
                times.append(took)
        assert sum(1 for r in origin.requests if r.path == "/tides") == 1
    m_plain, m_tracked = statistics.median(plain), statistics.median(tracked)
    print(f"changeTracking on a cached page ({args.rounds} rounds, alternating)")
    print(f"  plain cached scrape      median {m_plain:7.2f} ms")
    print(
        f"  + changeTracking         median {m_tracked:7.2f} ms   "
        f"+{m_tracked - m_plain:.2f} ms, ratio {m_tracked / m_plain:.3f} (target: at most +5 ms)"
    )


if __name__ == "__main__":
    main()
