"""`/services` `llm_replicas` (issue 40): the router's sync loop serves the replicas' names and
health (openmono.stack.router's status endpoint, here without a router behind it), and the real
gateway puts that list into `/services`, or `null` when no router is configured, the endpoint is
down, silent, stale, or something else answers on its port. Always valid JSON, within the
probe's bounds."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import httpx
import pytest
from openmono.stack.router import ReplicaView, status_server
from openmono_contracts import ServicesInfo

from tests.support.gateway import gateway
from tests.support.procs import free_port
from tests.support.recording_upstream import recording_upstream

pytestmark = pytest.mark.integration

KEY = "replicas-test-key-1c9a"


def _services(url: str) -> tuple[dict[str, object], float]:
    started = time.monotonic()
    resp = httpx.get(f"{url}/services", timeout=10)
    took = time.monotonic() - started
    assert resp.status_code == 200, resp.text
    body: dict[str, object] = resp.json()  # valid JSON whatever the endpoint did
    ServicesInfo.model_validate(body)  # and the agent's reader takes it
    return body, took


@contextmanager
def _other_program(port: int) -> Iterator[None]:
    """Something else on the status port: 200 with a body of its own, no header of ours."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"secret": "10.0.0.7:8080", "x": "{{ .Req }}"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def test_llm_replicas_is_the_routers_list_or_null(tmp_path: Path) -> None:
    port = free_port()
    status = f"127.0.0.1:{port}"
    with (
        recording_upstream("llm") as up,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=up.address,
            extra_env={"LLAMA_ROUTER_STATUS": status},
        ) as gw,
    ):
        # the endpoint is down (the router is restarting): null at once
        body, took = _services(gw.url)
        assert body["llm_replicas"] is None and body["llm"] is True
        assert took < 2

        view = ReplicaView(max_age_s=0.5)
        server = status_server("127.0.0.1", port, view)
        try:
            # up but nothing synced yet: null, never an empty list that would mean "none"
            assert _services(gw.url)[0]["llm_replicas"] is None
            view.update({"http://10.0.0.7:8080": True, "http://127.0.0.1:7474": False})
            body, _ = _services(gw.url)
            assert body["llm_replicas"] == [
                {"name": "llama-1", "healthy": True},
                {"name": "llama-2", "healthy": False},
            ]
            assert "10.0.0.7" not in httpx.get(f"{gw.url}/services", timeout=10).text
            # the sync loop stopped reaching the router: its last answer goes stale
            time.sleep(0.6)
            assert _services(gw.url)[0]["llm_replicas"] is None
        finally:
            server.shutdown()
            server.server_close()

        # another program took the port: its body never reaches /services
        with _other_program(port):
            body, _ = _services(gw.url)
            assert body["llm_replicas"] is None

        # one that accepts and never answers: null within the probe's header timeout
        with socket.create_server(("127.0.0.1", port)) as silent:
            silent.listen(8)
            body, took = _services(gw.url)
            assert body["llm_replicas"] is None
            assert took < 2


def test_without_a_router_llm_replicas_is_null_and_old_readers_still_parse(
    tmp_path: Path,
) -> None:
    with (
        recording_upstream("llm") as up,
        gateway(tmp_path, api_key=KEY, llama_upstream=up.address) as gw,
    ):
        body, _ = _services(gw.url)
        assert body["llm_replicas"] is None
    # an older gateway leaves the key out: the reader takes that too
    old = ServicesInfo.model_validate({"llm": True, "search": False, "scrape": False})
    assert old.llm_replicas is None
