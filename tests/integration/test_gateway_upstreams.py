"""Several upstreams per route behind the real gateway (native form: static lists).

Requests are spread over the replicas, a replica that is loading (503 on /health) gets none, each
replica gets its own key when it has one (a remote inference box), and /services is true while
any replica answers.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.support.gateway import closed_upstream, gateway
from tests.support.procs import free_port, running, wait_until
from tests.support.recording_upstream import RecordingUpstream, recording_upstream
from tests.support.sse_upstream import sse_upstream_command

pytestmark = pytest.mark.integration

KEY = "upstreams-test-key-9c1"
BEARER = {"Authorization": f"Bearer {KEY}"}


@contextmanager
def _replicas(n: int, name: str = "llm") -> Iterator[list[RecordingUpstream]]:
    with ExitStack() as stack:
        yield [stack.enter_context(recording_upstream(f"{name}{i}")) for i in range(n)]


def _spread(upstreams: list[RecordingUpstream]) -> Counter[str]:
    return Counter({u.name: len(u.requests()) for u in upstreams})


def test_requests_are_spread_over_every_replica(tmp_path: Path) -> None:
    with (
        _replicas(3) as llms,
        _replicas(2, "scrape") as scrapes,
        _replicas(2, "search") as searches,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=" ".join(u.address for u in llms),
            scrape_upstream=" ".join(u.address for u in scrapes),
            searxng_upstream=" ".join(u.address for u in searches),
        ) as gw,
        httpx.Client(timeout=10, headers=BEARER) as client,
    ):
        for _ in range(45):
            assert client.get(f"{gw.url}/v1/models").status_code == 200
        for _ in range(20):
            assert client.post(f"{gw.url}/scrape", json={}).status_code == 200
            assert client.get(f"{gw.url}/search?q=x").status_code == 200
        # least_conn with no request open breaks ties at random: every replica gets some
        for group in (llms, scrapes, searches):
            spread = _spread(group)
            assert all(count > 0 for count in spread.values()), spread
            assert sum(spread.values()) in (45, 20)
        # active health checks ask every replica, with the marker header and no key
        wait_until(lambda: all(u.health_checks() for u in llms), 10, "health checks")
        checks = [r for u in llms for r in u.health_checks()]
        assert {r.path for r in checks} == {"/health"}
        assert all(not r.header_values("Authorization") for r in checks)


@contextmanager
def _served(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` on a free loopback port, in a thread; its `host:port`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _loading() -> Iterator[tuple[str, list[str]]]:
    """A replica whose /health is 503 (a model still loading); records what else reached it."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/health":
                seen.append(self.path)
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with _served(Handler) as address:
        yield address, seen


def test_a_loading_or_dead_replica_gets_no_requests(tmp_path: Path) -> None:
    with (
        recording_upstream("ready") as ready,
        _loading() as (loading, seen),
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=f"{ready.address} {loading} {closed_upstream()}",
        ) as gw,
        httpx.Client(timeout=10, headers=BEARER) as client,
    ):
        # the first active check runs as the gateway starts; give it one interval to land
        wait_until(lambda: ready.health_checks() != [], 10, "first health check")
        for _ in range(30):
            resp = client.get(f"{gw.url}/v1/models")
            assert resp.status_code == 200, resp.text
        assert seen == []
        assert len(ready.requests()) == 30
        # /services: true, some replica answers now
        assert httpx.get(f"{gw.url}/services", timeout=10).json()["llm"] is True


def test_services_is_false_when_no_replica_answers(tmp_path: Path) -> None:
    with (
        _loading() as (loading, _),
        gateway(tmp_path, api_key=KEY, llama_upstream=f"{loading} {closed_upstream()}") as gw,
    ):
        assert httpx.get(f"{gw.url}/services", timeout=10).json()["llm"] is False


def test_each_replica_gets_its_own_key(tmp_path: Path) -> None:
    """A remote inference box checks its own key; local replicas get LLAMA_UPSTREAM_KEY."""
    with (
        recording_upstream("local") as local,
        recording_upstream("remote") as remote,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=f"{local.address} {remote.address}",
            extra_env={
                "LLAMA_UPSTREAM_KEY": "internal-key",
                "GATEWAY_LLAMA_KEYS": f"{remote.address} remote-box-key",
            },
        ) as gw,
        httpx.Client(timeout=10, headers=BEARER) as client,
    ):
        for _ in range(30):
            assert client.post(f"{gw.url}/v1/chat/completions", json={}).status_code == 200
        local_keys = {v for r in local.requests() for v in r.header_values("Authorization")}
        remote_keys = {v for r in remote.requests() for v in r.header_values("Authorization")}
        assert local_keys == {"Bearer internal-key"}
        assert remote_keys == {"Bearer remote-box-key"}
        # the client's own key never reaches either
        assert KEY not in str(local_keys | remote_keys)


@contextmanager
def _restarting() -> Iterator[tuple[str, list[str]]]:
    """A replica in the window before a health check sees it loading: /health still 200 (or no
    check at all, as with dns discovery), every other path 503 as llama-server's while it loads."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = 200 if self.path == "/health" else 503
            if self.path != "/health" or not self.headers.get("X-Openmono-Health-Check"):
                seen.append(self.path)
            body = b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}'
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    with _served(Handler) as address:
        yield address, seen


def test_a_loading_replica_between_health_checks_costs_no_request(tmp_path: Path) -> None:
    with (
        recording_upstream("ready") as ready,
        _restarting() as (loading, seen),
        gateway(tmp_path, api_key=KEY, llama_upstream=f"{loading} {ready.address}") as gw,
        httpx.Client(timeout=10, headers=BEARER) as client,
    ):
        for _ in range(20):
            resp = client.post(f"{gw.url}/v1/chat/completions", json={})
            assert resp.status_code == 200, resp.text
        assert len(ready.requests()) == 20
        assert seen, "least_conn never tried the loading replica: the test proves nothing"
        # its own health path is never retried away: a loading model stays visible
        with gateway(tmp_path / "one", api_key=KEY, llama_upstream=loading) as alone:
            resp = client.get(f"{alone.url}/v1/health")
            assert resp.status_code == 503
            assert resp.json()["error"]["message"] == "Loading model"


def test_a_conversation_stays_on_one_replica_and_moves_once_when_it_goes(tmp_path: Path) -> None:
    """X-OpenMono-Session is hashed over the replicas that are up: every request of a session
    reaches one replica; when that replica's process dies its sessions move, each to one other
    replica, with no request lost, and the other sessions stay where they were. No header:
    least_conn. (SSE upstreams as processes: a killed one drops its pooled connections too.)"""
    with ExitStack() as stack:
        procs, addresses = [], []
        for i in range(3):
            port = free_port()
            cmd = sse_upstream_command(port, name=f"llm{i}")
            url = f"http://127.0.0.1:{port}"
            procs.append(
                stack.enter_context(running(cmd, tmp_path / f"llm{i}.log", None, f"{url}/health"))
            )
            addresses.append(f"127.0.0.1:{port}")
        gw = stack.enter_context(gateway(tmp_path, api_key=KEY, llama_upstream=" ".join(addresses)))
        client = stack.enter_context(httpx.Client(timeout=10, headers=BEARER))

        def replica(headers: dict[str, str]) -> str:
            resp = client.post(f"{gw.url}/v1/chat/completions", json={}, headers=headers)
            assert resp.status_code == 200, resp.text
            return resp.headers["x-openmono-replica"]

        def homes(sessions: list[str]) -> dict[str, str]:
            found = {}
            for session in sessions:
                served = {replica({"X-OpenMono-Session": session}) for _ in range(4)}
                assert len(served) == 1, (session, served)
                found[session] = served.pop()
            return found

        sessions = [f"session-{i}" for i in range(30)]
        before = homes(sessions)
        assert set(before.values()) == {"llm0", "llm1", "llm2"}  # the hash spreads them
        assert homes(sessions) == before  # and keeps them
        gone = before["session-0"]
        procs[int(gone[-1])].stop()  # that replica dies: refused dials, its connections gone
        after = homes(sessions)
        for session, home in before.items():
            if home == gone:
                assert after[session] != gone
            else:
                assert after[session] == home, session
        spread = Counter(replica({}) for _ in range(20))
        assert set(spread) == {"llm0", "llm1", "llm2"} - {gone}, spread  # least_conn, at random
