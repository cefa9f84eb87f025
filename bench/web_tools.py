"""WebSearch / WebFetch cost per call, by path, against a baseline measured in the same run.

    uv run python bench/web_tools.py [--rounds 200]

Starts the real gateway (caddy/Caddyfile) in front of the SearXNG-shaped test server, a local
DuckDuckGo stand-in and a local page, all on free loopback ports, and times `run_tool` calls:
WebSearch through the gateway (probe cached), WebSearch on the DuckDuckGo fallback, WebFetch on
the guarded direct fetch. Baseline: one plain `GET /search?format=json` to the gateway on a
kept-alive httpx connection, i.e. what the network path alone costs. Paths are interleaved every
round so they share the machine's load. Prints p50/p99 per path and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from openmono_contracts import ToolRequest, WebAccess  # noqa: E402
from openmono_worker import run_tool  # noqa: E402

from tests.support.fake_ddg import fake_duckduckgo  # noqa: E402
from tests.support.fake_searxng import fake_searxng  # noqa: E402
from tests.support.gateway import gateway  # noqa: E402
from tests.support.httpfake import Reply, serve  # noqa: E402

KEY = "bench-web-key"
PAGE = (
    b"<html><head><title>t</title></head><body><article><p>"
    + b"text " * 400
    + b"</p></article></body></html>"
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-web-"))
    with (
        fake_searxng() as sx,
        fake_duckduckgo() as ddg,
        serve(lambda req: Reply(200, PAGE, "text/html")) as page,
        serve(lambda req: Reply(200, b"{}", "application/json")) as llm,
        gateway(
            tmp,
            api_key=KEY,
            llama_upstream=llm.url,
            searxng_upstream=sx.url,
            search_enabled="true",
        ) as gw,  # fmt: skip
        httpx.Client() as client,
    ):
        os.environ["WORKER_WEB_DDG_URL"] = ddg.url
        os.environ["WORKER_WEB_FETCH_ALLOW_CIDRS"] = "127.0.0.0/8"
        via_gateway = WebAccess(gateway=gw.url, api_key=KEY)

        def tool(name: str, params: dict[str, object], web: WebAccess) -> Callable[[], None]:
            req = ToolRequest(
                tool=name, params=params, call_id="b", session_id="b", workspace=str(tmp), web=web
            )

            def go() -> None:
                result = run_tool(req)
                assert result.ok, result.error

            return go

        def baseline() -> None:
            resp = client.get(
                f"{gw.url}/search", params={"q": "hello", "format": "json"}, headers=gw.auth
            )
            assert resp.status_code == 200

        paths: dict[str, Callable[[], None]] = {
            "baseline GET /search via gateway": baseline,
            "WebSearch via gateway": tool("WebSearch", {"query": "hello"}, via_gateway),
            "WebSearch via DuckDuckGo fallback": tool(
                "WebSearch", {"query": "hello"}, WebAccess(search=False)
            ),
            "WebFetch via direct fetch": tool("WebFetch", {"url": f"{page.url}/a"}, WebAccess()),
        }
        samples: dict[str, list[float]] = {name: [] for name in paths}
        for fn in paths.values():  # warm-up: imports, TLS context, probe cache
            fn()
        for i in range(args.rounds):
            order = list(paths.items())
            if i % 2:
                order.reverse()
            for name, fn in order:
                start = time.perf_counter()
                fn()
                samples[name].append((time.perf_counter() - start) * 1000)
    base = statistics.median(samples["baseline GET /search via gateway"])
    print(f"{'path':<36} {'p50 ms':>8} {'p99 ms':>8} {'x base':>7}")
    for name, values in samples.items():
        p50 = statistics.median(values)
        print(f"{name:<36} {p50:8.2f} {_pct(values, 0.99):8.2f} {p50 / base:7.2f}")


if __name__ == "__main__":
    main()
