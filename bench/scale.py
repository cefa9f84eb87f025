"""Replicas behind the gateway: throughput and time to first token, 1 vs 3 replicas.

    uv run python bench/scale.py [--levels 1,4,16,64] [--svg docs/scale-bench.svg]

Each replica is bench/_sse_upstream.py standing in for llama-server with a fixed per-token latency
(`--interval-ms`, default 20 ms) and a fixed number of slots (`--slots`, default 4, as
`--parallel 4`): a stream waits for a free slot, then yields `--tokens` events one interval apart.
One gateway (caddy/Caddyfile, least_conn) sits in front of 1 replica, another in front of 3; at
each concurrency level C, C clients send streamed requests back to back until `--per-client`
requests each (at least 2 x C requests in all) are done, first through one gateway, then the other,
in the same run. Prints tokens/s, p50/p99 time to first token and the throughput ratio 3 vs 1.
Goal: >= 2.7x throughput at 3 replicas once the load exceeds one replica's slots.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling (free ports, groups)

from bench._plot import Series, line_chart  # noqa: E402
from tests.support.gateway import gateway  # noqa: E402
from tests.support.sse_upstream import sse_upstream  # noqa: E402

API_KEY = "bench-scale-key"
BODY = {"messages": [{"role": "user", "content": "hi"}], "stream": True}


@dataclass
class Level:
    concurrency: int
    tokens_per_s: float
    ttft: list[float]

    def pct(self, q: float) -> float:
        ordered = sorted(self.ttft)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _one(client: httpx.AsyncClient, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    first = 0.0
    events = 0
    async with client.stream("POST", url, json=BODY) as resp:
        if resp.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {resp.status_code}")
        async for line in resp.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events += 1
                first = first or time.perf_counter() - started
    return first, events


async def _level(url: str, concurrency: int, per_client: int) -> Level:
    requests = max(per_client * concurrency, 2 * concurrency, 8)
    queue: asyncio.Queue[None] = asyncio.Queue()
    for _ in range(requests):
        queue.put_nowait(None)
    ttft: list[float] = []
    tokens = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    timeout = httpx.Timeout(120.0, connect=10.0)
    headers = {"Authorization": f"Bearer {API_KEY}"}
    async with httpx.AsyncClient(limits=limits, timeout=timeout, headers=headers) as client:

        async def worker() -> None:
            nonlocal tokens
            while not queue.empty():
                queue.get_nowait()
                first, events = await _one(client, url)
                ttft.append(first)
                tokens += events

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return Level(concurrency, tokens / wall, ttft)


def _replica(stack: ExitStack, tmp: Path, name: str, args: argparse.Namespace) -> str:
    url = stack.enter_context(
        sse_upstream(
            tmp / f"{name}.log",
            events=args.tokens,
            interval_ms=args.interval_ms,
            slots=args.slots,
            name=name,
        )
    )
    return url.removeprefix("http://")


def _svg(path: Path, levels: list[int], one: list[Level], three: list[Level]) -> None:
    chart = line_chart(
        title="Replicas behind the gateway (stand-in model: 4 slots, 20 ms/token)",
        x_label="concurrent streams",
        x_values=levels,
        panels=[
            (
                "throughput, tokens/s",
                [
                    Series("1 replica", [lv.tokens_per_s for lv in one]),
                    Series("3 replicas", [lv.tokens_per_s for lv in three]),
                ],
            ),
            (
                "time to first token p50, ms",
                [
                    Series("1 replica", [lv.pct(0.5) * 1e3 for lv in one]),
                    Series("3 replicas", [lv.pct(0.5) * 1e3 for lv in three]),
                ],
            ),
        ],
    )
    path.write_text(chart)
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--levels", default="1,4,16,64")
    ap.add_argument("--tokens", type=int, default=10)
    ap.add_argument("--interval-ms", type=float, default=20.0)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--per-client", type=int, default=2)
    ap.add_argument("--svg", type=Path, default=None, help="write the curves as an SVG plot")
    args = ap.parse_args()
    # SIGTERM (timeout, make) unwinds the ExitStack too, so no upstream or gateway is left behind
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    levels = [int(x) for x in args.levels.split(",")]

    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        replicas = [_replica(stack, tmp, f"r{i}", args) for i in range(3)]
        gw_one = stack.enter_context(
            gateway(tmp / "gw1", api_key=API_KEY, llama_upstream=replicas[0])
        )
        gw_three = stack.enter_context(
            gateway(tmp / "gw3", api_key=API_KEY, llama_upstream=" ".join(replicas))
        )
        chat = "/v1/chat/completions"
        asyncio.run(_level(f"{gw_three.url}{chat}", 4, 1))  # warm-up: pools, health checks
        one: list[Level] = []
        three: list[Level] = []
        for c in levels:
            one.append(asyncio.run(_level(f"{gw_one.url}{chat}", c, args.per_client)))
            three.append(asyncio.run(_level(f"{gw_three.url}{chat}", c, args.per_client)))

    print(
        f"\n== replicas behind the gateway: {args.slots} slots each, {args.interval_ms:g} ms/token,"
        f" {args.tokens} tokens a stream"
    )
    print(
        f"{'streams':>8}{'tok/s x1':>11}{'tok/s x3':>11}{'ratio':>8}"
        f"{'ttft p50 x1':>13}{'p99 x1':>9}{'ttft p50 x3':>13}{'p99 x3':>9}  (ms)"
    )
    for a, b in zip(one, three, strict=True):
        print(
            f"{a.concurrency:>8}{a.tokens_per_s:>11.1f}{b.tokens_per_s:>11.1f}"
            f"{b.tokens_per_s / a.tokens_per_s:>8.2f}"
            f"{a.pct(0.5) * 1e3:>13.1f}{a.pct(0.99) * 1e3:>9.1f}"
            f"{b.pct(0.5) * 1e3:>13.1f}{b.pct(0.99) * 1e3:>9.1f}"
        )
    saturated = [b.tokens_per_s / a.tokens_per_s for a, b in zip(one, three, strict=True)]
    best = max(saturated)
    print(f"median ratio over levels: {statistics.median(saturated):.2f}; best: {best:.2f}")
    print("goal: >= 2.7x throughput at 3 replicas once the load exceeds one replica's slots")
    if args.svg:
        _svg(args.svg, levels, one, three)


if __name__ == "__main__":
    main()
