"""Time to first token through the relay: the gateway's HTTPS listener vs its plain one.

    uv run python bench/relay_tls.py [--rounds 400] [--llama-rounds 30]

Starts its own processes on free loopback ports and stops them at the end: one gateway
(caddy/Caddyfile, internal CA) in front of a minimal SSE upstream (bench/_sse_upstream.py, no work
between events, so only transport costs differ) and, with --llama-rounds > 0, a second one in front
of the real llama.cpp server (SmolLM2-135M). Each path goes through its own TCP relay (the
stand-in for frps + frpc, tests/support/tcp_relay.py): relay -> plain listener, relay -> HTTPS
listener. The client keeps one connection alive per path, as the agent does (the TLS handshake is
paid once, reported apart); requests alternate plain / TLS, order flipped every round. Prints
p50/p99 of the first `data:` bytes per path and the ratio and difference of the medians.
Goal: TLS <= +1 ms on the median once the connection is up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling (free ports, groups)

from openmono_contracts import gateway as gw  # noqa: E402

from tests.support.gateway import Gateway, gateway  # noqa: E402
from tests.support.llama import llama_server  # noqa: E402
from tests.support.sse_upstream import sse_upstream  # noqa: E402
from tests.support.tcp_relay import tcp_relay  # noqa: E402

API_KEY = "bench-relay-tls-key"
CHAT = "/v1/chat/completions"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _first_token(client: httpx.Client, url: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    first = 0.0
    with client.stream("POST", url, json=body) as resp:
        if resp.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {resp.status_code}: {resp.read()[:300]!r}")
        for chunk in resp.iter_raw():
            if not first and b"data:" in chunk:
                first = time.perf_counter() - started
    return first


def _interleaved(
    rounds: int, warmup: int, paths: dict[str, Callable[[], float]]
) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {name: [] for name in paths}
    names = list(paths)
    for i in range(warmup + rounds):
        for name in names if i % 2 == 0 else names[::-1]:
            value = paths[name]()
            if i >= warmup:
                results[name].append(value)
    return results


def _report(title: str, results: dict[str, list[float]], handshake: float) -> None:
    plain, tls = results["plain"], results["tls"]
    print(f"\n== {title}  ({len(plain)} interleaved rounds, connections kept alive)")
    print(f"{'first token':16}{'p50 ms':>10}{'p99 ms':>10}")
    for name, values in (("plain relay", plain), ("TLS relay", tls)):
        print(f"{name:16}{_pct(values, 0.5) * 1e3:10.3f}{_pct(values, 0.99) * 1e3:10.3f}")
    p, t = statistics.median(plain), statistics.median(tls)
    print(f"median: ratio TLS/plain {t / p:6.3f}   difference {1e3 * (t - p):+.3f} ms")
    print(f"first request on a new TLS connection (handshake included): {handshake * 1e3:.2f} ms")
    print("goal: difference <= +1 ms once the connection is up")


def _clients(stack: ExitStack, g: Gateway) -> tuple[httpx.Client, httpx.Client, str, str]:
    plain_relay = stack.enter_context(tcp_relay(int(g.url.rsplit(":", 1)[1])))
    tls_relay = stack.enter_context(tcp_relay(int(g.tls_url.rsplit(":", 1)[1])))
    timeout = httpx.Timeout(120.0, connect=10.0)
    plain = stack.enter_context(gw.sync_client(API_KEY, timeout=timeout))
    # the agent's own client: the gateway's CA as the trust anchor, nothing else trusted
    tls = stack.enter_context(gw.sync_client(API_KEY, anchor=g.ca_pem, timeout=timeout))
    return plain, tls, plain_relay.url + CHAT, tls_relay.tls_url + CHAT


def _run(
    title: str, g: Gateway, stack: ExitStack, body: dict[str, Any], rounds: int, warmup: int
) -> None:
    plain, tls, plain_url, tls_url = _clients(stack, g)
    handshake = _first_token(tls, tls_url, body)
    results = _interleaved(
        rounds,
        warmup,
        {
            "plain": lambda: _first_token(plain, plain_url, body),
            "tls": lambda: _first_token(tls, tls_url, body),
        },
    )
    _report(title, results, handshake)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--llama-rounds", type=int, default=30)
    ap.add_argument("--max-tokens", type=int, default=8)
    args = ap.parse_args()
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": "Say hello."}],
        "stream": True,
        "max_tokens": args.max_tokens,
        "temperature": 0,
    }
    with tempfile.TemporaryDirectory(prefix="bench-relay-tls-") as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        sse_url = stack.enter_context(sse_upstream(tmp / "sse-upstream.log"))
        local = stack.enter_context(
            gateway(tmp / "gw-local", api_key=API_KEY, llama_upstream=sse_url)
        )
        _run("local SSE upstream (8 events, no work)", local, stack, body, args.rounds, 20)
        if args.llama_rounds > 0:
            print("\nstarting llama-server (SmolLM2-135M) ...", flush=True)
            llama = stack.enter_context(llama_server(tmp, api_key=API_KEY, parallel=1))
            real = stack.enter_context(
                gateway(tmp / "gw-llama", api_key=API_KEY, llama_upstream=llama.url)
            )
            title = f"real llama-server, max_tokens={args.max_tokens}"
            _run(title, real, stack, body, args.llama_rounds, 3)


if __name__ == "__main__":
    main()
