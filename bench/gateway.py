"""Gateway overhead: time to first SSE event and full request latency, via Caddy vs direct.

    uv run python bench/gateway.py [--llama-rounds 40] [--local-rounds 400] [--keys 100]

Starts its own processes on free loopback ports and stops them at the end: the real llama.cpp server
(xllamacpp + SmolLM2-135M), a minimal local SSE upstream (bench/_sse_upstream.py, no work between
events, so it isolates the proxy's own cost), the key service, and two gateways in front of each:
caddy/Caddyfile as shipped (pooled upstream connections, usage records on, tokens per key through
the key service's token tap, a key store of `--keys` agent boxes' keys), the same with the tap off
(GATEWAY_USAGE_TOKENS=off), and the file with `keepalive off` in its `(pooled)` snippet (a new
upstream connection per request, as before pooling came back). Requests rotate over the paths
(order changed every round) on kept-alive client connections, so every path sees the same machine
load: direct; `operator-no-tap` (the gateway alone: LLAMA_API_KEY, tokens off); `operator` (the
shipped gateway, LLAMA_API_KEY); `box-key` (the same gateway, each
request one of the box keys in turn: the map lookup and Caddy's basic_auth, its verdict cached);
`rated` (a box key with a rate limit: the forward_auth round trip to the key service too);
`box-key-no-tap` (box keys, tokens off: the key check alone); `keepalive-off`; `router-alone`
(SGLang's router, `openmono.stack.router`, in front of the upstream, no gateway: the router's own
hop) and `router` (box keys, the tap and the router: the LLM route with several replicas, here
over the one upstream). Prints p50/p99
per path, the ratio and difference of each gateway path's medians against direct, and each hop's
share of the first event (differences of medians of paths that differ by that hop alone: the
gateway, the key check, the tap, the router). Goals: first event through the gateway with box
keys <= +0.35 ms on the median against the local upstream, <= 1.05x direct against llama-server;
issue 40: keys, tap and router <= +1.0 ms.
"""

from __future__ import annotations

import argparse
import itertools
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling (free ports, groups)

from tests.support.gateway import CADDYFILE, gateway  # noqa: E402
from tests.support.keys import KeyedGateway, keyed_gateway  # noqa: E402
from tests.support.llama import llama_server  # noqa: E402
from tests.support.router import llm_router  # noqa: E402
from tests.support.sse_upstream import sse_upstream  # noqa: E402

API_KEY = "bench-gateway-key"


@dataclass
class Samples:
    first: list[float] = field(default_factory=list)  # seconds to the first `data:` bytes
    total: list[float] = field(default_factory=list)  # seconds to the end of the stream


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _one(client: httpx.Client, url: str, key: str, body: dict[str, Any]) -> tuple[float, float]:
    """One streamed request; a kept-alive connection the server dropped meanwhile is retried once
    (llama-server closes idle connections after 5 s, less than one round under load)."""
    try:
        return _timed(client, url, key, body)
    except httpx.RemoteProtocolError:
        return _timed(client, url, key, body)


def _timed(client: httpx.Client, url: str, key: str, body: dict[str, Any]) -> tuple[float, float]:
    started = time.perf_counter()
    first = 0.0
    with client.stream("POST", url, json=body, headers={"Authorization": f"Bearer {key}"}) as resp:
        if resp.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {resp.status_code}: {resp.read()[:300]!r}")
        for chunk in resp.iter_raw():
            if not first and b"data:" in chunk:
                first = time.perf_counter() - started
    return first, time.perf_counter() - started


def _interleaved(
    rounds: int,
    warmup: int,
    paths: dict[str, Callable[[], tuple[float, float]]],
) -> dict[str, Samples]:
    results = {name: Samples() for name in paths}
    names = list(paths)
    for i in range(warmup + rounds):
        shift = i % len(names)
        order = names[shift:] + names[:shift]
        order = order if (i // len(names)) % 2 == 0 else order[::-1]
        for name in order:
            first, total = paths[name]()
            if i >= warmup:
                results[name].first.append(first)
                results[name].total.append(total)
    return results


def _report(title: str, results: dict[str, Samples], goal: str) -> None:
    direct = results["direct"]
    print(f"\n== {title}  ({len(direct.first)} interleaved rounds)")
    print(f"{'':22}{'p50 ms':>10}{'p99 ms':>10}")
    for metric in ("first", "total"):
        for name, s in results.items():
            values: list[float] = getattr(s, metric)
            label = f"{metric} {name}"
            print(f"{label:22}{_pct(values, 0.5) * 1e3:10.3f}{_pct(values, 0.99) * 1e3:10.3f}")
    for metric in ("first", "total"):
        d = statistics.median(getattr(direct, metric))
        for name, s in results.items():
            if name == "direct":
                continue
            v = statistics.median(getattr(s, metric))
            diff = f"{1e3 * (v - d):+.3f} ms"
            print(f"{metric:6} median {name:>14}/direct: ratio {v / d:6.3f}   difference {diff}")
    first = {name: statistics.median(s.first) for name, s in results.items()}
    hops = (
        ("gateway", "operator-no-tap", "direct"),
        ("key check", "box-key-no-tap", "operator-no-tap"),
        ("tap", "box-key", "box-key-no-tap"),
        ("router", "router", "box-key"),
    )
    shares = "   ".join(f"{hop} {1e3 * (first[a] - first[b]):+.3f}" for hop, a, b in hops)
    print(f"first event, each hop's share (ms): {shares}")
    print(f"goal: {goal}")


def _keepalive_off(caddyfile: Path, folder: Path) -> Path:
    """The same Caddyfile with its `(pooled)` snippet turned back to one connection per request."""
    text = caddyfile.read_text()
    pooled = "\t\tkeepalive 1s\n\t\tkeepalive_idle_conns_per_host 64\n"
    if pooled not in text:
        raise SystemExit(f"{caddyfile}: no `(pooled)` keepalive lines to turn off")
    out = folder / "Caddyfile.keepalive-off"
    out.write_text(text.replace(pooled, "\t\tkeepalive off\n"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--llama-rounds", type=int, default=40)
    ap.add_argument("--local-rounds", type=int, default=400)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--caddyfile", type=Path, default=CADDYFILE, help="compare another config")
    ap.add_argument("--keys", type=int, default=100, help="box keys in the gateway's table")
    args = ap.parse_args()
    # SIGTERM (timeout, make) unwinds the ExitStack too, so no upstream or gateway is left behind
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        sse_url = stack.enter_context(sse_upstream(tmp / "sse-upstream.log"))
        print("starting llama-server (SmolLM2-135M) ...", flush=True)
        llama = stack.enter_context(llama_server(tmp, api_key=API_KEY, parallel=1))
        off = _keepalive_off(args.caddyfile, tmp)
        keyed: dict[str, KeyedGateway] = {}
        box_keys: dict[tuple[str, str], list[str]] = {}
        rated: dict[str, str] = {}
        urls: dict[tuple[str, str], str] = {}
        for name, upstream in (("llama", llama.url), ("local", sse_url)):
            router = stack.enter_context(llm_router(tmp / f"router-{name}", API_KEY, [upstream]))
            urls[name, "router-alone"] = router.url
            routed = stack.enter_context(
                keyed_gateway(
                    tmp / f"gw-{name}-router", api_key=API_KEY, llama_upstream=upstream,
                    caddyfile=args.caddyfile, router=router,
                )
            )  # fmt: skip
            box_keys[name, "router"] = [
                routed.store.add(f"bench-box-{i}").key for i in range(args.keys)
            ]
            routed.backend.apply(routed.store.read().generation)
            urls[name, "router"] = routed.gw.url
            for tap, tokens in (("gateway", True), ("no-tap", False)):
                kg = stack.enter_context(
                    keyed_gateway(
                        tmp / f"gw-{name}-{tap}", api_key=API_KEY, llama_upstream=upstream,
                        caddyfile=args.caddyfile, tokens=tokens,
                    )
                )  # fmt: skip
                box_keys[name, tap] = [kg.store.add(f"bench-box-{i}").key for i in range(args.keys)]
                if tokens:
                    rated[name] = kg.store.add("bench-rated", rate_per_min=10**9).key
                    keyed[name] = kg
                kg.backend.apply(kg.store.read().generation)
                urls[name, tap] = kg.gw.url
            urls[name, "keepalive-off"] = stack.enter_context(
                gateway(
                    tmp / f"gw-{name}-keepalive-off",
                    api_key=API_KEY,
                    llama_upstream=upstream,
                    caddyfile=off,
                )
            ).url
        timeout = httpx.Timeout(120.0, connect=10.0)
        names = (
            "direct",
            "operator-no-tap",
            "operator",
            "box-key",
            "rated",
            "box-key-no-tap",
            "keepalive-off",
            "router-alone",
            "router",
        )
        clients = {name: stack.enter_context(httpx.Client(timeout=timeout)) for name in names}

        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": "Say hello."}],
            "stream": True,
            "max_tokens": args.max_tokens,
            "temperature": 0,
        }
        chat = "/v1/chat/completions"

        def paths(name: str, direct_url: str) -> dict[str, Callable[[], tuple[float, float]]]:
            gw, off_url, no_tap = (urls[name, n] for n in ("gateway", "keepalive-off", "no-tap"))
            boxes = itertools.cycle(box_keys[name, "gateway"])
            boxes_no_tap = itertools.cycle(box_keys[name, "no-tap"])
            boxes_router = itertools.cycle(box_keys[name, "router"])
            alone, routed_url = urls[name, "router-alone"], urls[name, "router"]
            c = clients
            return {
                "direct": lambda: _one(c["direct"], f"{direct_url}{chat}", API_KEY, body),
                "operator-no-tap": lambda: _one(
                    c["operator-no-tap"], f"{no_tap}{chat}", API_KEY, body
                ),
                "operator": lambda: _one(c["operator"], f"{gw}{chat}", API_KEY, body),
                "box-key": lambda: _one(c["box-key"], f"{gw}{chat}", next(boxes), body),
                "rated": lambda: _one(c["rated"], f"{gw}{chat}", rated[name], body),
                "box-key-no-tap": lambda: _one(
                    c["box-key-no-tap"], f"{no_tap}{chat}", next(boxes_no_tap), body
                ),
                "keepalive-off": lambda: _one(
                    c["keepalive-off"], f"{off_url}{chat}", API_KEY, body
                ),
                "router-alone": lambda: _one(c["router-alone"], f"{alone}{chat}", API_KEY, body),
                "router": lambda: _one(
                    c["router"], f"{routed_url}{chat}", next(boxes_router), body
                ),
            }

        local = _interleaved(args.local_rounds, warmup=20, paths=paths("local", sse_url))
        _report(
            f"local SSE upstream (8 events, no work): the proxy's own cost, {args.keys} box keys",
            local,
            "box-key first event <= +0.35 ms on the median; router <= +1.0 ms (issue 40)",
        )
        try:
            real = _interleaved(args.llama_rounds, warmup=3, paths=paths("llama", llama.url))
        except RuntimeError:
            errors = [ln for ln in keyed["llama"].logs().splitlines() if '"error"' in ln]
            print("gateway log (errors):", *errors[-5:], sep="\n", file=sys.stderr)
            raise
        _report(
            f"real llama-server, max_tokens={args.max_tokens}",
            real,
            "box-key first event ratio <= 1.05",
        )


if __name__ == "__main__":
    main()
