"""Round trip of a no-op tool call: local executor vs Celery executor, measured in the same run.

Starts its own `redis-server` and worker (`python -m openmono_worker`, prefork, concurrency 2) on a
free loopback port, then times N sequential `ListDirectory {}` calls on an empty workspace (a tool
that does next to nothing) through `LocalExecutor` and through `CeleryExecutor`, after a warm-up.
As a second baseline it times Celery itself on the same worker: the built-in `celery.accumulate`
task (returns its argument) sent and awaited with Celery's own blocking `AsyncResult.get`. The
bare task and the executor's call alternate, one each in turn, so a change in the machine's load
during the run weighs on both alike (the machine is shared). Prints p50/p99 of each and the
ratios. Targets (issues 5, 29): Celery p50 <= 3 ms, p99 <= 10 ms; local p50 <= 0.5 ms; the
executor's call at most 1.1x the bare task at p50 and p99.

    uv run python bench/dispatch.py [--calls 500] [--loglevel WARNING]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from celery import Celery
from openmono.executor import Executor, LocalExecutor
from openmono.executor.celery import CeleryExecutor
from openmono_contracts import Route, ToolRequest
from openmono_contracts.routing import box_id
from openmono_worker import WorkerSettings
from openmono_worker.celery_app import create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with log.open("wb") as fh:
        return subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue


def wait(check: object, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except Exception:  # not up yet
            pass
        time.sleep(0.05)
    raise SystemExit(f"{what} did not come up in {timeout_s} s")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _noop(ws: Path, i: int) -> ToolRequest:
    return ToolRequest(
        tool="ListDirectory", params={}, call_id=f"b{i}", session_id="bench", workspace=str(ws)
    )


async def timed(executor: Executor, req: ToolRequest) -> float:
    t = time.perf_counter()
    result = await executor.run(req)
    took = time.perf_counter() - t
    if not result.ok:
        raise SystemExit(f"no-op call failed: {result.error}")
    return took * 1000.0


def bare_task(app: Celery, queue: str, i: int) -> float:
    """Celery's own round trip on the same worker: no claim, no heartbeat, no tool."""
    t = time.perf_counter()
    app.send_task("celery.accumulate", args=[i], queue=queue).get(timeout=10)
    return (time.perf_counter() - t) * 1000.0


async def measure(url: str, ws: Path, data: Path, calls: int, warmup: int) -> None:
    local = LocalExecutor(WorkerSettings(data_dir=data))
    remote = CeleryExecutor(url)
    app = create_app(WorkerSettings(broker_url=url))
    # The worker consumes its box's queue only (openmono_contracts.routing), no default queue.
    queue = Route(kind="box", id=box_id()).queue
    local_ms: list[float] = []
    bare_ms: list[float] = []
    celery_ms: list[float] = []
    try:
        for i in range(warmup + calls):
            local_t = await timed(local, _noop(ws, i))
            if i >= warmup:
                local_ms.append(local_t)
        for i in range(warmup + calls):
            bare_t = await asyncio.to_thread(bare_task, app, queue, i)
            celery_t = await timed(remote, _noop(ws, warmup + calls + i))
            if i >= warmup:
                bare_ms.append(bare_t)
                celery_ms.append(celery_t)
    finally:
        await local.aclose()
        await remote.aclose()
        app.close()
    lp50, lp99 = percentile(local_ms, 0.5), percentile(local_ms, 0.99)
    bp50, bp99 = percentile(bare_ms, 0.5), percentile(bare_ms, 0.99)
    cp50, cp99 = percentile(celery_ms, 0.5), percentile(celery_ms, 0.99)
    print(f"no-op tool call round trip, {calls} sequential calls each (after {warmup} warm-up)")
    print(f"  local executor     : p50 {lp50:7.3f} ms   p99 {lp99:7.3f} ms")
    print(f"  bare celery task   : p50 {bp50:7.3f} ms   p99 {bp99:7.3f} ms")
    print(f"  celery executor    : p50 {cp50:7.3f} ms   p99 {cp99:7.3f} ms")
    print(f"  celery executor / local     : p50 x{cp50 / lp50:.1f}   p99 x{cp99 / lp99:.1f}")
    print(f"  celery executor / bare task : p50 x{cp50 / bp50:.2f}   p99 x{cp99 / bp99:.2f}")
    print(f"  machine load (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    verdict = "ok" if cp50 <= 3.0 and cp99 <= 10.0 and lp50 <= 0.5 else "MISSED"
    print(f"  targets (celery p50<=3 ms, p99<=10 ms; local p50<=0.5 ms): {verdict}")
    ratio = "ok" if cp50 <= 1.1 * bp50 and cp99 <= 1.1 * bp99 else "MISSED"
    print(f"  target (celery executor <= 1.1x the bare task at p50 and p99): {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--loglevel", default="WARNING", help="worker log level (INFO logs each call)")
    args = ap.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    tmp = Path(tempfile.mkdtemp(prefix="openmono-bench-"))
    ws, data = tmp / "ws", tmp / "data"
    ws.mkdir()
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    redis = start(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly",
         "no"],
        tmp / "redis.log",
    )  # fmt: skip
    worker = None
    try:
        probe = create_app(WorkerSettings(broker_url=url))
        wait(lambda: probe.connection_for_write().ensure_connection(max_retries=1), "redis")
        node = f"bench-{port}@127.0.0.1"
        worker = start(
            [sys.executable, "-m", "openmono_worker", "--hostname", node, "--loglevel",
             args.loglevel, "--without-mingle", "--without-gossip"],
            tmp / "worker.log",
            # box mode: the calls' workspace has no id file, so they go to this box's queue
            # and the bench's temp folder is one of its roots (the worker refuses any other folder)
            {"OPENMONO_BROKER_URL": url, "WORKER_DATA_DIR": str(data), "WORKER_WORKSPACES": "",
             "WORKER_ROOTS": str(tmp)},
        )  # fmt: skip
        wait(lambda: probe.control.ping(destination=[node], timeout=1.0), "worker")
        probe.close()
        asyncio.run(measure(url, ws, data, args.calls, args.warmup))
    finally:
        if worker is not None:
            stop(worker)
        stop(redis)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
