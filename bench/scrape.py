"""Scrape service throughput and latency against the local fixture site.

    uv run python bench/scrape.py [--requests 300] [--browser-requests 30]

Starts its own processes on free loopback ports and stops them at the end: the fixture web site
(tests/support/fixture_web.py), the scrape service (python -m openmono_scrape) and, when the
gateway support exists, the Caddy gateway in front of it. Measured in the same run:

- baseline: GET of the same fixture page by the bench client itself (no service): what the
  site and loopback cost, so the service's own share is the ratio against it;
- fast path (`fetcher` engine, /article as markdown) at concurrency 1 and 8, direct and through
  the gateway;
- browser path (`render: true`, Chromium) at concurrency 1 and 4 after one warm-up request (the
  browser starts on first use; its cold start is printed separately).

Prints requests/s and p50/p99 (ms) per row, and the p50 ratio against the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling

from tests.support.fixture_web import fixture_web, scrape_service  # noqa: E402

API_KEY = "bench-scrape-key"


@dataclass
class Row:
    name: str
    concurrency: int
    latencies_ms: list[float]
    wall_s: float

    @property
    def rps(self) -> float:
        return len(self.latencies_ms) / self.wall_s

    def pct(self, q: float) -> float:
        data = sorted(self.latencies_ms)
        return data[min(len(data) - 1, int(q * len(data)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms)


def run(
    name: str,
    n: int,
    concurrency: int,
    call: callable,  # type: ignore[valid-type]
) -> Row:
    latencies: list[float] = []

    def one(_: int) -> None:
        start = time.perf_counter()
        call()
        latencies.append((time.perf_counter() - start) * 1000)

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(n)))
    return Row(name, concurrency, latencies, time.perf_counter() - started)


def scrape_call(client: httpx.Client, base: str, body: dict[str, object]) -> callable:  # type: ignore[valid-type]
    def call() -> None:
        r = client.post(f"{base}/scrape", json=body, timeout=120)
        if r.status_code != 200:
            raise RuntimeError(f"{r.status_code}: {r.text[:300]}")

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="fast-path requests per row")
    parser.add_argument("--browser-requests", type=int, default=30, help="browser requests per row")
    args = parser.parse_args()
    rows: list[Row] = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-scrape-")))
        web = stack.enter_context(fixture_web(tmp))
        svc = stack.enter_context(scrape_service(tmp))
        targets = {"direct": svc}
        try:
            from tests.support.gateway import closed_upstream, gateway

            gw = stack.enter_context(
                gateway(
                    tmp,
                    api_key=API_KEY,
                    llama_upstream=closed_upstream(),
                    scrape_upstream=svc.removeprefix("http://"),
                    scrape_enabled="true",
                )
            )
            targets["gateway"] = gw.url
        except ImportError:
            print("(no tests/support/gateway.py: gateway rows skipped)")
        client = stack.enter_context(
            httpx.Client(
                limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
                headers={"Authorization": f"Bearer {API_KEY}"},
            )
        )
        page = f"{web}/article"

        def baseline() -> None:
            client.get(page, timeout=30).raise_for_status()

        for _ in range(20):  # warm-up: connections, the service's first fetch
            baseline()
            scrape_call(client, svc, {"url": page})()
        for c in (1, 8):
            rows.append(run("baseline GET (no service)", args.requests, c, baseline))
            for label, base in targets.items():
                call = scrape_call(client, base, {"url": page})
                rows.append(run(f"fast path, {label}", args.requests, c, call))
        render = scrape_call(client, svc, {"url": page, "render": True})
        cold = time.perf_counter()
        render()
        cold_ms = (time.perf_counter() - cold) * 1000
        js = scrape_call(client, svc, {"url": f"{web}/js-only"})
        for c in (1, 4):
            rows.append(run("browser path (render)", args.browser_requests, c, render))
            rows.append(run("escalated JS shell", args.browser_requests, c, js))
    base = {r.concurrency: r.p50 for r in rows if r.name.startswith("baseline")}
    print(f"\n{'row':32} {'conc':>4} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'p50/base':>9}")
    for r in rows:
        ratio = r.p50 / base.get(r.concurrency, base[1])
        print(
            f"{r.name:32} {r.concurrency:>4} {r.rps:>8.1f} {r.p50:>8.2f} {r.pct(0.99):>8.2f}"
            f" {ratio:>8.1f}x"
        )
    print(f"\nbrowser cold start (first render, includes launching Chromium): {cold_ms:.0f} ms")


if __name__ == "__main__":
    main()
