"""A recording HTTP upstream on a free loopback port: stands in for SearXNG / the scrape service /
llama-server behind the gateway when a test must know whether a request got through at all.

Every request is recorded (method, path with query, headers, body) and answered 200 with a small
JSON body naming the upstream, so a test can also see which upstream a path was routed to.
The gateway's own active health checks (marked with `X-Openmono-Health-Check`) are kept apart:
`requests()` is what clients sent through the gateway, `health_checks()` what Caddy asked itself.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# set by caddy/Caddyfile on its active health checks (`health_headers`)
HEALTH_CHECK_HEADER = "X-Openmono-Health-Check"


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def header_values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class RecordingUpstream:
    name: str
    address: str  # host:port, as the gateway's *_UPSTREAM variables take it
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self.lock:
            self.seen.clear()

    def requests(self) -> list[Seen]:
        """Requests that came through the gateway's routes and probes (not its health checks)."""
        with self.lock:
            return [r for r in self.seen if not r.header_values(HEALTH_CHECK_HEADER)]

    def health_checks(self) -> list[Seen]:
        with self.lock:
            return [r for r in self.seen if r.header_values(HEALTH_CHECK_HEADER)]


def _handler(upstream: RecordingUpstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _body(self) -> bytes:
            if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""
            body = b""
            while size := int(self._line().split(b";")[0].strip() or b"0", 16):
                chunk = self.rfile.read(size)
                if len(chunk) < size:
                    raise ConnectionError("the body was cut off")
                body += chunk
                self._line()  # the CRLF after each chunk
            while self._line().strip():  # trailers, up to the blank line
                pass
            return body

        def _line(self) -> bytes:
            line = self.rfile.readline()
            if not line.endswith(b"\n"):
                raise ConnectionError("the body was cut off")
            return line

        def _answer(self) -> None:
            try:
                body = self._body()
            except (ConnectionError, ValueError):  # the body was cut off (the gateway's limit)
                self.close_connection = True
                return
            with upstream.lock:
                upstream.seen.append(
                    Seen(self.command, self.path, list(self.headers.items()), body)
                )
            payload = json.dumps({"upstream": upstream.name, "path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _answer

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def recording_upstream(name: str) -> Iterator[RecordingUpstream]:
    """Serve on 127.0.0.1:<free port> in a daemon thread until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(RecordingUpstream(name, "")))
    host, port = server.server_address[:2]
    upstream = RecordingUpstream(name, f"{host}:{port}")
    server.RequestHandlerClass = _handler(upstream)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"upstream-{name}", daemon=True)
    thread.start()
    try:
        yield upstream
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
