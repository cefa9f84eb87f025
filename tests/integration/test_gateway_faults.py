"""Faults under load: one of three replicas dies while 20 streams run through the real gateway.

The replicas are real SSE servers (bench/_sse_upstream.py, a fixed latency per token), each its own
process group. Killing one mid-stream must end its streams with an error at once (never a hang),
leave the others' streams whole, send every new request to the live replicas, and give the
restarted replica traffic again once its health check passes.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.support.gateway import Gateway, gateway
from tests.support.procs import Proc, free_port, start, wait_http_ok
from tests.support.sse_upstream import sse_upstream_command

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEY = "faults-test-key-41d"
STREAMS = 20
EVENTS = 150
INTERVAL_MS = 20  # 150 events x 20 ms: a 3 s stream
BODY = {"messages": [{"role": "user", "content": "hi"}], "stream": True}


@dataclass
class Replica:
    name: str
    port: int
    log: Path
    proc: Proc | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        cmd = sse_upstream_command(
            self.port, events=EVENTS, interval_ms=INTERVAL_MS, name=self.name
        )
        self.proc = start(cmd, self.log)
        wait_http_ok(f"http://{self.address}/health", 30, self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.popen.wait(5)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()


@contextmanager
def _replicas(tmp: Path, n: int) -> Iterator[list[Replica]]:
    replicas = [Replica(f"r{i}", free_port(), tmp / f"r{i}.log") for i in range(n)]
    try:
        for replica in replicas:
            replica.start()
        yield replicas
    finally:
        for replica in replicas:
            replica.stop()


@dataclass
class Outcome:
    replica: str = ""
    started: threading.Event = field(default_factory=threading.Event)
    events: int = 0
    done: bool = False  # saw `data: [DONE]`
    error: str = ""
    ended_at: float = 0.0


def _stream(gw: Gateway, out: Outcome) -> None:
    timeout = httpx.Timeout(10.0, connect=5.0)  # bounded: a hang fails the test, never blocks it
    try:
        with httpx.stream(
            "POST", f"{gw.url}/v1/chat/completions", json=BODY, headers=gw.auth, timeout=timeout
        ) as resp:
            out.replica = resp.headers.get("x-openmono-replica", "")
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    out.events += 1
                    out.started.set()
                    out.done = out.done or line == "data: [DONE]"
    except httpx.HTTPError as exc:
        out.error = type(exc).__name__
    finally:
        out.ended_at = time.monotonic()
        out.started.set()


def _one(client: httpx.Client, gw: Gateway) -> tuple[int, str]:
    """A new request up to its first event (then dropped): which replica took it, and the status."""
    with client.stream("POST", f"{gw.url}/v1/chat/completions", json=BODY) as resp:
        if resp.status_code == 200:
            next(resp.iter_lines())
        return resp.status_code, resp.headers.get("x-openmono-replica", "")


def test_a_replica_killed_under_load(tmp_path: Path) -> None:
    with ExitStack() as stack:
        replicas = stack.enter_context(_replicas(tmp_path, 3))
        gw = stack.enter_context(
            gateway(tmp_path, api_key=KEY, llama_upstream=" ".join(r.address for r in replicas))
        )
        outcomes = [Outcome() for _ in range(STREAMS)]
        threads = [threading.Thread(target=_stream, args=(gw, o), daemon=True) for o in outcomes]
        for thread in threads:
            thread.start()
        for outcome in outcomes:
            assert outcome.started.wait(10), "a stream never started"
        spread = Counter(o.replica for o in outcomes)
        assert len(spread) == 3 and not any(o.error for o in outcomes), (spread, outcomes)

        victim = replicas[1]
        victim.kill()
        killed_at = time.monotonic()

        # new requests, issued right away: all answered, none by the dead replica
        client = stack.enter_context(httpx.Client(timeout=httpx.Timeout(10.0), headers=gw.auth))
        first_ok = 0.0
        served: Counter[str] = Counter()
        while time.monotonic() - killed_at < 2.0:
            status, replica = _one(client, gw)
            assert status == 200, status
            assert replica != victim.name
            first_ok = first_ok or time.monotonic() - killed_at
            served[replica] += 1
        assert first_ok < 2.0
        assert served.keys() <= {"r0", "r2"} and sum(served.values()) >= 5, served

        for thread in threads:
            thread.join(15)
            assert not thread.is_alive(), "a stream hung after its replica died"
        for outcome in outcomes:
            if outcome.replica == victim.name:
                # cut short with a transport error, at once (not at the 10 s read timeout)
                assert outcome.error and not outcome.done, outcome
                assert outcome.ended_at - killed_at < 2.0, outcome
            else:
                assert outcome.done and not outcome.error, outcome
                assert outcome.events == EVENTS + 2  # every token, the counts and [DONE]

        # back: the restarted replica gets traffic again once its active health check passes
        victim.start()
        back_at = time.monotonic()
        while time.monotonic() - back_at < 15:
            if _one(client, gw)[1] == victim.name:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the restarted replica got no request within 15 s")
