"""A tiny real HTTP server on 127.0.0.1 for the SearXNG-shaped and page servers of the tests.

It runs in a daemon thread of the test process, answers through a handler function, and records
every request (method, path, query, headers, body) so tests can assert which path answered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Seen], Reply]


@dataclass
class FakeServer:
    """A running server: its base `url` and the requests it saw."""

    url: str
    port: int
    requests: list[Seen]

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


def _handler_class(handle: Handler, seen: list[Seen], lock: threading.Lock) -> type:
    class _H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body in one write, Nagle off: otherwise a kept-alive client (Caddy) waits
        # ~40 ms for a delayed ACK on every response.
        wbufsize = -1
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            query = parse_qs(parts.query, keep_blank_values=True)
            if self.command == "POST" and "form-urlencoded" in self.headers.get("Content-Type", ""):
                for key, values in parse_qs(body.decode(), keep_blank_values=True).items():
                    query.setdefault(key, []).extend(values)
            request = Seen(self.command, parts.path, query, dict(self.headers.items()), body)
            with lock:
                seen.append(request)
            reply = handle(request)
            self.send_response(reply.status)
            if reply.content_type:  # "" = send no content type at all
                self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = _serve
        do_POST = _serve
        do_HEAD = _serve

        def log_message(self, format: str, *args: object) -> None:
            pass

    return _H


@contextmanager
def serve(handle: Handler) -> Iterator[FakeServer]:
    """Start a server on a free loopback port; always shut it down."""
    seen: list[Seen] = []
    lock = threading.Lock()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(handle, seen, lock))
    httpd.daemon_threads = True
    port = int(httpd.server_address[1])
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield FakeServer(f"http://127.0.0.1:{port}", port, seen)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
