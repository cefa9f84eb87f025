"""The router's sync loop against the real SGLang router: a replica that is still loading its model
is asked for once, not on every pass (the router's add is a job that waits for the replica's
health; asked again each pass, it queued four jobs a second per loading replica in compose).

The replica is a loopback HTTP server that answers 503 (llama-server's "Loading model") until the
test lets it answer; the router counts the requests it served in its own metrics.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.support.procs import free_port, running, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

KEY = "sync-test-key"


@contextmanager
def loading_replica() -> Iterator[tuple[str, threading.Event]]:
    """A replica at 127.0.0.1:PORT that answers 503 until the event is set, then 200."""
    loaded = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"status":"ok"}' if loaded.is_set() else b'{"error":"Loading model"}'
            self.send_response(200 if loaded.is_set() else 503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", loaded
    finally:
        server.shutdown()
        server.server_close()


def _served(metrics: str, method: str) -> int:
    """How many `method /workers` requests the router served (its own histogram's count)."""
    series = rf'smg_http_request_duration_seconds_count\{{method="{method}",path="/workers"\}}'
    pattern = rf"^{series} (\d+)"
    found = re.search(pattern, metrics, re.M)
    return int(found.group(1)) if found else 0


def test_a_loading_replica_is_asked_for_once_and_held_once_it_answers(tmp_path: Path) -> None:
    port, metrics_port = free_port(), free_port()
    with loading_replica() as (replica, loaded):
        env = {
            "LLM_ROUTER_PORT": str(port),
            "LLM_ROUTER_METRICS_PORT": str(metrics_port),
            "LLM_ROUTER_API_KEY": KEY,
            "LLM_ROUTER_WORKERS": replica,
            "LLM_ROUTER_REFRESH_S": "0.1",
            "LLM_ROUTER_HEALTH_INTERVAL_S": "1",
        }
        cmd = [sys.executable, "-m", "openmono.stack.router"]
        with running(cmd, tmp_path / "router.log", env) as proc:

            def metrics() -> str:
                return httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text

            # every pass asks GET /workers once: wait for 20 passes while the replica loads
            wait_until(lambda: _served(metrics(), "GET") >= 20, 60, "20 sync passes", proc)
            assert _served(metrics(), "POST") == 1

            loaded.set()

            def held() -> bool:
                resp = httpx.get(
                    f"http://127.0.0.1:{port}/workers",
                    headers={"Authorization": f"Bearer {KEY}"},
                    timeout=5,
                )
                return [w["url"] for w in resp.json()["workers"]] == [f"http://{replica}"]

            wait_until(held, 60, "the replica held once it answers", proc)
            assert _served(metrics(), "POST") == 1
