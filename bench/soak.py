"""Soak: the native stack with Redis and the worker under steady load, one service killed at a time.

    uv run python bench/soak.py [--minutes 30] [--kill-every 5] [--warmup 2] [--port-base P]
                                [--data-dir DIR] [--json OUT]

`--minutes` defaults to 30 run by hand and to `SOAK_MINUTES` when that is set: `make bench` sets it
to 2 (one kill, in the middle), so the full suite stays short; run this file by hand for the real
soak. Not in CI.

What runs (everything real, on 127.0.0.1): `openmono up` with OPENMONO_BROKER_URL (Redis and the
Celery worker), the scrape service (its cache in Redis, database 1) and llama-server serving the
bundled SmolLM2-135M, behind the Caddy gateway; the local fixture site (tests/support/
fixture_web.py) for pages. The load (bench/_soak_load.py): LLM streams, /scrape of a local page,
Firecrawl scrape answered from the cache, and Bash/FileRead/Grep calls through Celery. Every
`--kill-every` minutes one service is SIGKILLed with its process group (in turn: scrape, worker,
llama-server, gateway, redis), then `openmono up` starts it again, as a supervisor would; its kill
window runs from the kill until `up` says all is healthy, plus 10 s for the gateway's health
checks to see it back.

Reported: errors by kind and route, outside and inside the kill windows; p50/p99 latency per
route for each sixth of the run; the RSS and open fds of every process of the stack at the start
(after the warm-up) and at the end, and for every process that lived long enough its growth after
the warm-up (the highest values in the first third of its samples against those in the last third:
a leak raises the last); what Redis holds (memory, keys, expiring keys) at the start and the end.
Goal: no error outside the kill windows, RSS and fds growing by no more than 10 % after warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling

from openmono.stack.envfile import read_env  # noqa: E402

from bench._soak_load import Sample, Target, run_load  # noqa: E402
from bench._soak_procs import (  # noqa: E402
    RedisSample,
    Snapshot,
    drift,
    lives,
    pid_of,
    redis_sample,
    snapshot,
)
from tests.support.fixture_web import fixture_web  # noqa: E402
from tests.support.native_stack import native_stack_env, run_openmono  # noqa: E402
from tests.support.procs import free_port  # noqa: E402

SERVICES = ["redis", "worker", "llama-server", "scrape", "gateway"]
KILL_ORDER = ["scrape", "worker", "llama-server", "gateway", "redis"]
GRACE_S = 10.0  # after `up` returns: the gateway's active checks (every 2 s) see the service back
FLAT = 0.10


@dataclass
class Kill:
    service: str
    at: float
    back: float  # `openmono up` returned
    up_ok: bool
    note: str = ""

    @property
    def window(self) -> tuple[float, float]:
        return self.at, self.back + GRACE_S


def _pct(values: list[float], q: float) -> float:
    data = sorted(values)
    return data[min(len(data) - 1, int(q * len(data)))] if data else float("nan")


def _in_window(s: Sample, kills: list[Kill]) -> bool:
    """Whether the request overlapped a kill window."""
    windows = (k.window for k in kills)
    return any(s.t <= end and s.t + s.latency_s >= start for start, end in windows)


def _kill_times(minutes: float, every: float) -> list[float]:
    total = minutes * 60
    if total < 2 * every * 60:
        return [total / 2]
    times = (k * every * 60 for k in range(1, int(total // (every * 60)) + 1))
    return [at for at in times if at < total]


async def _killer(
    env: dict[str, str], stack: Path, times: list[float], t0: float, kills: list[Kill]
) -> None:
    for i, at in enumerate(times):
        await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
        service = KILL_ORDER[i % len(KILL_ORDER)]
        pid = pid_of(stack, service)
        killed = time.monotonic() - t0
        if pid is not None:
            os.killpg(pid, signal.SIGKILL)
        up = await asyncio.to_thread(run_openmono, ["up"], env, 300)
        back = time.monotonic() - t0
        note = "" if up.returncode == 0 else (up.stdout + up.stderr)[-300:]
        kills.append(Kill(service, killed, back, up.returncode == 0, note))
        print(f"[{killed:7.1f} s] killed {service} (pid {pid}); back after {back - killed:.1f} s")


async def _sampler(
    target: Target,
    stack: Path,
    every_s: float,
    stop: asyncio.Event,
    snaps: list[Snapshot],
    keyspace: list[RedisSample],
) -> None:
    while not stop.is_set():
        t = time.monotonic() - target.started
        snaps += snapshot(stack, SERVICES, t)
        if (held := await asyncio.to_thread(redis_sample, target.broker_url, t)) is not None:
            keyspace.append(held)
        waiter = asyncio.ensure_future(stop.wait())
        await asyncio.wait({waiter}, timeout=every_s)
        waiter.cancel()


async def _soak(
    args: argparse.Namespace, env: dict[str, str], target: Target, stack: Path
) -> tuple[list[Sample], list[Kill], list[Snapshot], list[RedisSample]]:
    samples: list[Sample] = []
    kills: list[Kill] = []
    snaps: list[Snapshot] = []
    keyspace: list[RedisSample] = []
    stop = asyncio.Event()
    t0 = target.started
    total = args.minutes * 60
    sample_every = min(30.0, total / 12)
    tasks = [
        asyncio.ensure_future(run_load(target, stop, samples)),
        asyncio.ensure_future(_sampler(target, stack, sample_every, stop, snaps, keyspace)),
    ]
    killer = asyncio.ensure_future(
        _killer(env, stack, _kill_times(args.minutes, args.kill_every), t0, kills)
    )
    await asyncio.sleep(max(0.0, t0 + total - time.monotonic()))
    await killer  # a kill late in the run finishes its restart first
    stop.set()
    await asyncio.gather(*tasks)
    snaps += snapshot(stack, SERVICES, time.monotonic() - t0)
    return samples, kills, snaps, keyspace


def _report(
    args: argparse.Namespace,
    samples: list[Sample],
    kills: list[Kill],
    snaps: list[Snapshot],
    keyspace: list[RedisSample],
    loads: tuple[tuple[float, ...], tuple[float, ...]],
) -> bool:
    total = args.minutes * 60
    warmup = args.warmup * 60
    print(f"\n== soak: {args.minutes:g} min, {len(samples)} requests, {os.cpu_count()} cores")
    print(f"load average at start {loads[0]}, at end {loads[1]}")
    print("\n-- kills (window: kill .. `openmono up` healthy + 10 s)")
    for k in kills:
        start, end = k.window
        print(f"{k.service:<13} at {start:7.1f} s  back {k.back - k.at:5.1f} s  window ends "
              f"{end:7.1f} s  up ok: {k.up_ok} {k.note}")  # fmt: skip
    outside = [s for s in samples if not s.ok and not _in_window(s, kills)]
    inside = [s for s in samples if not s.ok and _in_window(s, kills)]
    print("\n-- errors by kind (route: kind: count)")
    for label, errors in (("outside the kill windows", outside), ("inside", inside)):
        counts: dict[tuple[str, str], int] = {}
        for s in errors:
            counts[(s.route, s.kind)] = counts.get((s.route, s.kind), 0) + 1
        print(f"{label}: {len(errors)}")
        for (route, kind), n in sorted(counts.items()):
            print(f"    {route}: {kind}: {n}")
    print("\n-- latency per route (ms, successful requests) per sixth of the run")
    edges = [total * i / 6 for i in range(7)]
    routes = sorted({s.route for s in samples})
    spans = list(itertools.pairwise(edges))
    print("route      " + "".join(f"{f'{a / 60:.1f}-{b / 60:.1f} min':>22}" for a, b in spans))
    for route in routes:
        cells = []
        for a, b in spans:
            mine = (s for s in samples if s.route == route and s.ok)
            got = [s.latency_s * 1000 for s in mine if a <= s.t < b]
            cells.append(f"{_pct(got, 0.5):8.1f}/{_pct(got, 0.99):7.1f} n={len(got):<4}")
        print(f"{route:<10} " + "".join(f"{c:>22}" for c in cells))
    print("\n-- every process: RSS MB / open fds at the start (after warm-up) and at the end")
    first_t = min((s.t for s in snaps if s.t >= warmup), default=0.0)
    for label, at in (("start", first_t), ("end", max(s.t for s in snaps))):
        print(f"{label} ({at:.0f} s):")
        for snap in (s for s in snaps if s.t == at):
            for p in snap.procs:
                print(f"    {snap.service:<13} {p.pid:>7} {p.name:<16} {p.rss_kb / 1024:8.1f} MB "
                      f"{p.fds:5d} fds")  # fmt: skip
    print(f"\n-- per process life: growth after {args.warmup:g} min of warm-up")
    flat = True
    for life in lives(snaps):
        judged = life.judged(warmup)
        if judged is None:
            continue  # a pool process recycled soon, a service killed soon after its start
        a, b = judged
        rss, fds = drift(a.rss_mb, b.rss_mb), drift(a.fds, b.fds)
        ok = rss <= FLAT and fds <= FLAT  # a leak grows; fewer open connections is no leak
        flat &= ok
        verdict = "" if ok else "  NOT FLAT"
        print(f"{life.service:<13} {life.pid:>7} {life.name:<14} {a.t:6.0f}-{b.t:<6.0f}s RSS "
              f"{a.rss_mb:7.1f} -> {b.rss_mb:7.1f} MB ({rss:+6.1%})  fds {a.fds:4d} -> {b.fds:4d}"
              f" ({fds:+6.1%}){verdict}")  # fmt: skip
    print("\n-- what Redis holds (all databases): used memory, keys, keys that expire")
    print("   (at the start, at its most, at the end: a kill of Redis empties it)")
    if keyspace:
        most = max(keyspace, key=lambda r: r.keys)
        for r in (keyspace[0], most, keyspace[-1]):
            print(f"{r.t:7.0f} s  {r.used_mb:7.1f} MB  {r.keys:7d} keys  {r.expiring:7d} expiring")
    clean = not outside and all(k.up_ok for k in kills)
    print(f"\nGOAL no error outside the kill windows: {'met' if clean else 'MISSED'}")
    print(f"GOAL RSS and fds flat within {FLAT:.0%} after warm-up: {'met' if flat else 'MISSED'}")
    return clean and flat


def _stack_env(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> None:
    ports = (
        [args.port_base + i for i in range(5)]
        if args.port_base
        else [free_port() for _ in range(5)]
    )
    env.update(
        GATEWAY_PORT=str(ports[0]),
        GATEWAY_TLS_PORT=str(ports[1]),
        LLAMA_PORT=str(ports[2]),
        SCRAPE_PORT=str(ports[3]),
        OPENMONO_BROKER_URL=f"redis://127.0.0.1:{ports[4]}/0",
        WEB_SCRAPE_ENABLED="true",
        SCRAPE_ALLOW_CIDRS="127.0.0.0/8",
        LLAMA_CTX_SIZE="2048",
    )
    if args.data_dir:
        env["OPENMONO_DATA_DIR"] = str(args.data_dir)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    minutes = float(os.environ.get("SOAK_MINUTES") or 30)
    parser.add_argument("--minutes", type=float, default=minutes)
    parser.add_argument("--kill-every", type=float, default=5.0, help="minutes")
    parser.add_argument("--warmup", type=float, default=None, help="minutes (default 2)")
    parser.add_argument("--port-base", type=int, default=0, help="5 ports from here (else free)")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every sample here")
    args = parser.parse_args()
    if args.warmup is None:
        args.warmup = min(2.0, args.minutes / 5)
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp_name:
        tmp = Path(tmp_name)
        with native_stack_env(tmp) as env, fixture_web(tmp) as site:
            _stack_env(args, tmp, env)
            stack = Path(env["OPENMONO_DATA_DIR"]) / "stack"
            up = run_openmono(["up"], env, 300)
            print(up.stdout[-1500:])
            if up.returncode != 0:
                print(up.stderr[-1500:], file=sys.stderr)
                return 1
            key = read_env(Path(env["OPENMONO_ENV_FILE"]))["LLAMA_API_KEY"]
            workspace = tmp / "workspace"
            workspace.mkdir()
            target = Target(
                gateway=f"http://127.0.0.1:{env['GATEWAY_PORT']}",
                key=key,
                site=site,
                broker_url=env["OPENMONO_BROKER_URL"],
                workspace=workspace,
                started=time.monotonic(),
            )
            start_load = os.getloadavg()
            samples, kills, snaps, keyspace = asyncio.run(_soak(args, env, target, stack))
            loads = (start_load, os.getloadavg())
            met = _report(args, samples, kills, snaps, keyspace, loads)
            if args.json:
                args.json.write_text(
                    json.dumps(
                        {
                            "minutes": args.minutes,
                            "samples": [asdict(s) for s in samples],
                            "kills": [asdict(k) for k in kills],
                            "snapshots": [asdict(s) for s in snaps],
                            "redis": [asdict(r) for r in keyspace],
                            "load": loads,
                        }
                    )
                )
    print("(goal missed: see above)" if not met else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
