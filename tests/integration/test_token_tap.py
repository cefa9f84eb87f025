"""Tokens per key through the key service's token tap (openmono_keys.tap), at the real gateway.

The gateway as shipped (GATEWAY_USAGE_TOKENS=on) sends every LLM attempt through the tap; Caddy
still chooses the replica. These tests hold that the counts are the server's own (a real
llama-server), that affinity and the failover of a dead replica work through the tap as they do
without it, and that the tap dials nothing but the listed replicas.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from openmono_keys import usage

from tests.support.gateway import GATEWAY_SECRET
from tests.support.keys import KeyedGateway, key_service, keyed_gateway
from tests.support.llama import LlamaServer
from tests.support.procs import free_port, running, wait_until
from tests.support.rawhttp import read_request
from tests.support.sse_upstream import sse_upstream, sse_upstream_command

pytestmark = pytest.mark.integration

CHAT = "/v1/chat/completions"
# what the gateway adds to every request it sends the tap (the tap answers nothing else)
AS_GATEWAY = {"X-OpenMono-Gateway-Secret": GATEWAY_SECRET}
SESSION = "X-OpenMono-Session"


def _rows(folder: Path) -> dict[tuple[str, str], usage.UsageRow]:
    return {(r.key, r.route): r for r in usage.usage(folder).rows}


@pytest.fixture
def kg_llama(llama: LlamaServer, tmp_path: Path) -> Iterator[KeyedGateway]:
    with keyed_gateway(tmp_path, api_key=llama.api_key, llama_upstream=llama.url) as kg:
        yield kg


def test_tokens_per_key_are_the_servers_own_counts(kg_llama: KeyedGateway) -> None:
    kg = kg_llama
    box = kg.backend.add("laptop-anna", None, None).key
    body = {
        "messages": [{"role": "user", "content": "Name one colour. the-secret-prompt"}],
        "max_tokens": 6,
        "temperature": 0,
    }
    # (prompt, completion, cached) as the client saw them
    served: list[tuple[int, int, int]] = []
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {box}"}) as client:
        resp = client.post(f"{kg.gw.url}{CHAT}", json=body)
        assert resp.status_code == 200, resp.text
        u = resp.json()["usage"]
        served.append(
            (
                u["prompt_tokens"],
                u["completion_tokens"],
                u["prompt_tokens_details"]["cached_tokens"],
            )
        )
        # the same prompt again, streamed without `include_usage`: its last event has only
        # llama-server's `timings`; most of the prompt now comes from the slot's cache
        with client.stream("POST", f"{kg.gw.url}{CHAT}", json={**body, "stream": True}) as resp:
            assert resp.status_code == 200
            last = [line for line in resp.iter_lines() if '"timings"' in line][-1]
        t = json.loads(last.removeprefix("data: "))["timings"]
        assert "usage" not in last
        served.append((t["prompt_n"] + t["cache_n"], t["predicted_n"], t["cache_n"]))
    wait_until(lambda: _rows(kg.usage_dir)[("laptop-anna", CHAT)].counted == 2, 5, "the counts")
    row = _rows(kg.usage_dir)[("laptop-anna", CHAT)]
    assert row.prompt_tokens == sum(s[0] for s in served)
    assert row.completion_tokens == sum(s[1] for s in served)
    assert row.cached_tokens == sum(s[2] for s in served)
    assert served[1][2] > 0  # the second request's prompt came from the slot's cache
    # no prompt, no reply and no key in the records
    records = "".join(p.read_text() for p in kg.usage_dir.glob("*"))
    assert "the-secret-prompt" not in records and box[4:24] not in records


def test_affinity_and_failover_work_through_the_tap(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    replicas = [f"127.0.0.1:{p}" for p in ports]
    procs = []
    with (
        running(
            sse_upstream_command(ports[0], events=3, name="r0"),
            tmp_path / "r0.log",
            ready_url=f"http://{replicas[0]}/health",
        ) as r0,
        running(
            sse_upstream_command(ports[1], events=3, name="r1"),
            tmp_path / "r1.log",
            ready_url=f"http://{replicas[1]}/health",
        ) as r1,
        keyed_gateway(tmp_path, api_key="op-key", llama_upstream=" ".join(replicas)) as kg,
    ):
        procs = [r0, r1]
        with httpx.Client(timeout=10, headers={"Authorization": "Bearer op-key"}) as client:

            def replica(session: str) -> str:
                resp = client.post(f"{kg.gw.url}{CHAT}", json={}, headers={SESSION: session})
                assert resp.status_code == 200, resp.text
                return resp.headers["x-openmono-replica"]

            # each session stays on one replica; sessions spread over both
            chosen = {f"s{i}": replica(f"s{i}") for i in range(12)}
            for session, name in chosen.items():
                assert [replica(session) for _ in range(3)] == [name] * 3
            assert set(chosen.values()) == {"r0", "r1"}
            # a replica dies: its sessions move to the other one at once, no request fails
            procs[0].stop()
            for session in chosen:
                assert replica(session) == "r1"
        wait_until(lambda: ("operator", CHAT) in _rows(kg.usage_dir), 5, "the records")
        assert _rows(kg.usage_dir)[("operator", CHAT)].counted >= 12 * 4


def test_the_tap_dials_only_the_listed_replicas(tmp_path: Path) -> None:
    # a listener that is not on the list: the tap must never connect to it
    unlisted = socket.socket()
    unlisted.bind(("127.0.0.1", 0))
    unlisted.listen()
    unlisted.setblocking(False)
    port = unlisted.getsockname()[1]
    tap_port = free_port()
    with (
        sse_upstream(tmp_path / "sse.log", events=2) as listed,
        key_service(tmp_path, tmp_path / "keys", tmp_path / "usage", listed, tap_port),
        httpx.Client(timeout=10) as client,
    ):
        tap = f"http://127.0.0.1:{tap_port}"
        for target in (f"127.0.0.1:{port}", "10.0.0.1:8080", "169.254.169.254:80", ""):
            resp = client.post(
                f"{tap}{CHAT}", json={}, headers={**AS_GATEWAY, "X-OpenMono-Upstream": target}
            )
            assert resp.status_code == 502, target
            assert resp.json() == {"error": "tap_upstream_refused"}
        with pytest.raises(BlockingIOError):
            unlisted.accept()  # nobody ever connected
        # the listed one is served, and the headers meant for the tap stay with it
        resp = client.post(
            f"{tap}{CHAT}",
            json={},
            headers={
                **AS_GATEWAY,
                "X-OpenMono-Upstream": listed.removeprefix("http://"),
                "X-OpenMono-Key": "k",
            },
        )
        assert resp.status_code == 200 and resp.text.rstrip().endswith("data: [DONE]")
        # a malformed request gets a 400 (no upstream is asked), and the tap stays up
        with socket.create_connection(("127.0.0.1", tap_port), timeout=5) as raw:
            raw.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            assert raw.recv(200).startswith(b"HTTP/1.1 400 ")
        started = time.monotonic()
        resp = client.get(
            f"{tap}/health", headers={**AS_GATEWAY, "X-OpenMono-Upstream": listed[7:]}
        )
        assert resp.status_code == 200 and time.monotonic() - started < 5
    unlisted.close()


@contextmanager
def _raw_upstream(handle: Callable[[socket.socket], bool]) -> Iterator[str]:
    """A bare TCP upstream on 127.0.0.1 (yields host:port): `handle(conn)` serves each connection
    in turn, in one thread, until it returns False or the block ends."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                if not handle(conn):
                    return

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(15)
        server.close()


def test_a_pooled_connection_the_replica_closed_is_retried_on_a_fresh_one(tmp_path: Path) -> None:
    """llama-server closes a connection after a streamed response while advertising keep-alive:
    the tap's next request on it meets EOF instead of an answer, and must go out again on a new
    connection instead of failing."""

    def answer_then_close(conn: socket.socket) -> bool:
        # one request per connection, then a close some milliseconds later (no Connection: close)
        conn.settimeout(5)
        if read_request(conn) is None:
            return True
        body = b'{"usage":{"prompt_tokens":3,"completion_tokens":1}}'
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        conn.sendall(head + body)
        time.sleep(0.005)
        return True

    tap_port = free_port()
    with (
        _raw_upstream(answer_then_close) as upstream,
        key_service(tmp_path, tmp_path / "keys", tmp_path / "usage", upstream, tap_port),
        httpx.Client(timeout=10) as client,
    ):
        statuses = [
            client.post(
                f"http://127.0.0.1:{tap_port}{CHAT}",
                json={},
                headers={**AS_GATEWAY, "X-OpenMono-Upstream": upstream, "X-OpenMono-Key": "k"},
            ).status_code
            for _ in range(30)
        ]
    assert statuses == [200] * 30


def test_a_client_that_hangs_up_before_the_answer_frees_the_replica_at_once(
    tmp_path: Path,
) -> None:
    """An agent cancelled during a long prefill: the gateway closes its connection to the tap,
    and the tap must close the replica's then (llama-server stops the work), not when the answer
    would have started."""
    closed_after: list[float] = []

    def never_answer(conn: socket.socket) -> bool:
        # a POST gets no answer for 10 s; note when the tap closes that connection
        conn.settimeout(10)
        data = conn.recv(65536)
        started = time.monotonic()
        with contextlib.suppress(OSError):
            while conn.recv(65536):
                pass
        if data.startswith(b"POST"):
            closed_after.append(time.monotonic() - started)
            return False
        return True

    with (
        _raw_upstream(never_answer) as upstream,
        keyed_gateway(tmp_path, api_key="op-key", llama_upstream=upstream) as kg,
        httpx.Client(timeout=httpx.Timeout(10, read=0.5)) as client,
    ):
        with pytest.raises(httpx.ReadTimeout):  # the client gives up after 0.5 s
            client.post(
                f"{kg.gw.url}{CHAT}",
                json={"stream": True},
                headers={"Authorization": "Bearer op-key"},
            )
        wait_until(lambda: bool(closed_after), 8, "the tap closing the replica's connection")
    assert closed_after[0] < 2.0, closed_after


def test_a_stream_passes_as_the_replicas_own_bytes_and_its_connection_is_reused(
    tmp_path: Path,
) -> None:
    """A chunked answer goes on as the replica sent it (its framing read, not rewritten), however
    its reads split, with its counts recorded; its connection serves the next request. A replica
    that sends bytes past its body's end gets a new connection, and the gateway never sees
    them."""
    last = b'data: {"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n'
    body = b"6;ext=1\r\ndata: \r\n" + b"%x\r\n%s\r\n" % (len(last), last) + b"0\r\n\r\n"
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    served: list[int] = []  # requests per connection
    junk = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\njunk"

    def serve(conn: socket.socket, extra: bytes) -> bool:
        conn.settimeout(5)
        served.append(0)
        while read_request(conn) is not None:
            served[-1] += 1
            # the head alone, then the framing cut inside a size line and inside the data
            for piece in (head, body[:3], body[3:20], body[20:] + extra):
                conn.sendall(piece)
                time.sleep(0.002)
        return True

    tap_port = free_port()
    tokens = tmp_path / "usage" / "tokens.log"
    for extra, connections in ((b"", [3]), (junk, [1, 1, 1])):
        served.clear()
        with (
            _raw_upstream(functools.partial(serve, extra=extra)) as upstream,
            key_service(tmp_path, tmp_path / "keys", tmp_path / "usage", upstream, tap_port),
            httpx.Client(timeout=10) as client,
        ):
            for _ in range(3):
                resp = client.post(
                    f"http://127.0.0.1:{tap_port}{CHAT}",
                    json={"stream": True},
                    headers={**AS_GATEWAY, "X-OpenMono-Upstream": upstream, "X-OpenMono-Key": "k"},
                )
                assert resp.status_code == 200
                assert resp.content == b"data: " + last
            wait_until(lambda: len(_lines(tokens)) >= 3, 5, "three token records")
        assert served == connections
        lines = _lines(tokens)
        assert all(json.loads(ln)["prompt_tokens"] == 5 for ln in lines)
        tokens.unlink()


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
