"""Crawl speed and the scrape service's memory, against a plain crawler measured in the same run.

    uv run python bench/crawl.py [--rounds 3] [--items 81] [--latency-ms 100] [--memory-items 331]

Stack (tests/support/crawl_stack.py): Redis, the scrape service with the broker set (so jobs run
in the scrape worker, and the scrape cache lives in Redis as in the native stack), one scrape
worker running 2 slices at once (a job's 2 driver chains; it reads the pages itself), the per-host
limit at its default of 4. Site:
tests/support/crawl_site.py, every page answering after `--latency-ms` (a remote site's
latency); `--items 81` makes it 501 pages, of which a crawl reads the 496 robots.txt allows.

1. Speed: the same crawl of the whole site, as pages per second, by
   - ours: `POST /firecrawl/v2/crawl` (`maxAge: 0`, so every page is fetched; markdown of the
     main content: full extraction) until its status says completed;
   - baseline: a plain asyncio + httpx crawler, 4 pages in flight, honouring robots.txt, taking
     the links from each page with lxml and nothing else (the floor a user could write).
   Rounds alternate the two so they share the machine's load; medians and their ratio.
2. Memory: the RSS (from /proc) of the process that reads a crawl's pages (the scrape worker)
   when ready, after one page, and its peak and end over a crawl of a `--memory-items` site
   (2,001 pages at 331), with no latency.
The load average is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from lxml import html as lxml_html

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from tests.support.crawl_site import crawl_site  # noqa: E402
from tests.support.crawl_stack import crawl_stack  # noqa: E402

KEY = "bench-crawl-key"
CONCURRENCY = 4


async def plain_crawl(start: str, concurrency: int = CONCURRENCY) -> int:
    """BFS over one host with `concurrency` fetches at once; returns the pages read."""
    host = urlsplit(start).netloc
    robots = RobotFileParser()
    seen = {start}
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait(start)
    pages = 0
    async with httpx.AsyncClient(follow_redirects=True, timeout=30) as client:
        robots.parse((await client.get(urljoin(start, "/robots.txt"))).text.splitlines())

        async def worker() -> None:
            nonlocal pages
            while True:
                url = await queue.get()
                try:
                    resp = await client.get(url)
                    if resp.status_code == 200 and "html" in resp.headers.get("content-type", ""):
                        pages += 1
                        root = lxml_html.document_fromstring(resp.content)
                        for _, _, link, _ in root.iterlinks():
                            absolute = urljoin(str(resp.url), link).split("#")[0]
                            parts = urlsplit(absolute)
                            if parts.netloc != host or absolute in seen:
                                continue
                            if robots.can_fetch("*", absolute):
                                seen.add(absolute)
                                queue.put_nowait(absolute)
                except httpx.HTTPError:
                    pass
                finally:
                    queue.task_done()

        tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
        await queue.join()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return pages


def our_crawl(client: httpx.Client, base: str, start: str, limit: int | None = None) -> int:
    body: dict[str, object] = {"url": start, "scrapeOptions": {"maxAge": 0}}
    if limit is not None:
        body["limit"] = limit
    r = client.post(f"{base}/v2/crawl", json=body)
    r.raise_for_status()
    job = r.json()["id"]
    while True:
        status = client.get(f"{base}/v2/crawl/{job}").json()
        if status["status"] != "scraping":
            if status["status"] != "completed":
                raise SystemExit(f"the crawl ended {status['status']}")
            return int(status["completed"])
        time.sleep(0.1)


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of `pid` and, recursively, its children now alive."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(fields[11]) + int(fields[12])) / _TICK
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return 0.0
    return own + sum(cpu_s(int(k)) for k in kids)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


class RssWatch:
    """Samples a process's RSS every 100 ms in a thread; `peak` is the largest seen."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.1)

    def __enter__(self) -> RssWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--items", type=int, default=81)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--memory-items", type=int, default=331, help="0: no memory run")
    parser.add_argument("--memory-crawls", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-crawl-"))
    print(f"load average before: {load()}")
    with crawl_stack(tmp, KEY, workers=1, worker_concurrency=2, slice_s=30.0) as stack:
        base = f"{stack.scrape}/firecrawl"
        # the crawl's pages are read in the scrape worker: its memory is what a crawl costs
        pid = stack.workers[0].proc.pid
        ready_rss = rss_mb(pid)
        with httpx.Client(timeout=60) as client:
            with crawl_site(tmp, items=args.items, latency_ms=args.latency_ms, slow_s=0) as site:
                our_crawl(client, base, site.url + "/docs/1", limit=1)
                warm_rss = rss_mb(pid)
                ours, plain, counts = [], [], set()
                # CPU per page: ours in the scrape service, the scrape worker and Redis; the
                # plain crawler in this process
                stack_pids = [stack.scrape_proc.pid, pid, stack.redis.proc.pid]  # type: ignore[union-attr]
                cpu_ours, cpu_plain = [], []
                for _ in range(args.rounds):
                    t0, c0 = time.perf_counter(), time.process_time()
                    n_plain = asyncio.run(plain_crawl(site.url + "/"))
                    plain.append(n_plain / (time.perf_counter() - t0))
                    cpu_plain.append((time.process_time() - c0) / n_plain * 1000)
                    t0, c0 = time.perf_counter(), sum(cpu_s(p) for p in stack_pids)
                    n_ours = our_crawl(client, base, site.url + "/")
                    ours.append(n_ours / (time.perf_counter() - t0))
                    cpu_ours.append((sum(cpu_s(p) for p in stack_pids) - c0) / n_ours * 1000)
                    counts.add((n_plain, n_ours))
            memory: list[tuple[int, float, float]] = []  # pages, seconds, peak RSS
            start_rss = rss_mb(pid)
            for _ in range(args.memory_crawls if args.memory_items else 0):
                with (
                    crawl_site(tmp, items=args.memory_items, latency_ms=0, slow_s=0) as big,
                    RssWatch(pid) as watch,
                ):
                    t0 = time.perf_counter()
                    n_big = our_crawl(client, base, big.url + "/")
                    memory.append((n_big, time.perf_counter() - t0, watch.peak))
            end_rss = rss_mb(pid)
    m_ours, m_plain = statistics.median(ours), statistics.median(plain)
    print(
        f"crawl of a {args.items * 6 + 15}-page local site answering in {args.latency_ms:g} ms, "
        f"per-host concurrency {CONCURRENCY}, {args.rounds} rounds (pages read: {sorted(counts)}):"
    )
    print(f"  plain asyncio+httpx crawler  median {m_plain:7.1f} pages/s  {plain}")
    print(f"  /firecrawl/v2/crawl (scrape worker) median {m_ours:7.1f} pages/s  {ours}")
    print(f"  ratio ours/plain = {m_ours / m_plain:.2f}")
    print(
        f"  CPU per page: plain {statistics.median(cpu_plain):.1f} ms, ours "
        f"{statistics.median(cpu_ours):.1f} ms (scrape service + scrape worker + Redis)"
    )
    if memory:
        print(
            f"scrape worker RSS: ready {ready_rss:.1f} MB, after one page {warm_rss:.1f} MB, "
            f"after the speed rounds {start_rss:.1f} MB"
        )
        for i, (pages, took, peak) in enumerate(memory, 1):
            print(
                f"  crawl {i}: {pages} pages in {took:.1f} s ({pages / took:.1f} p/s, no latency),"
                f" peak {peak:.1f} MB = start + {peak - start_rss:.1f} MB"
            )
        print(f"  end {end_rss:.1f} MB = start + {end_rss - start_rss:.1f} MB")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
