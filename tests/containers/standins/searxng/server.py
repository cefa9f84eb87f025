"""Stand-in for searxng/searxng: NOT SearXNG. It serves the recorded real SearXNG answers of
tests/fixtures/searxng through tests/support/fake_searxng.py (the same fake the native tests use) on
:8080, and says what it is in a log line, an `X-OpenMono-Standin` header and its /healthz body."""

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.support.fake_searxng import FIXTURES, body_for

BANNER = "stand-in for searxng/searxng: recorded SearXNG responses, not SearXNG"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _reply(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-OpenMono-Standin", BANNER)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        if self.command == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            for k, v in parse_qs(self.rfile.read(length).decode(), keep_blank_values=True).items():
                query.setdefault(k, []).extend(v)
        if parts.path == "/healthz":
            return self._reply(200, f"OK ({BANNER})".encode(), "text/plain; charset=utf-8")
        if parts.path != "/search":
            return self._reply(404, b"Not Found", "text/plain; charset=utf-8")
        if (query.get("format") or ["html"])[0] != "json":
            page = (FIXTURES / "forbidden_format.html").read_bytes()
            return self._reply(403, page, "text/html; charset=utf-8")
        q = (query.get("q") or [""])[0]
        if not q:
            return self._reply(400, b'{"error": "No query"}', "application/json")
        return self._reply(200, json.dumps(body_for(q)).encode(), "application/json")

    do_POST = do_GET
    do_HEAD = do_GET

    def log_message(self, format, *args):
        sys.stderr.write(f"searxng-standin: {format % args}\n")


def main():
    secret = os.environ.get("SEARXNG_SECRET", "")
    if not secret or secret == "ultrasecretkey":
        print("ERROR: server.secret_key is not changed (SEARXNG_SECRET)", file=sys.stderr)
        return 1
    httpd = ThreadingHTTPServer(("0.0.0.0", 8080), Handler)
    httpd.daemon_threads = True
    # PID 1 ignores a SIGTERM it has no handler for: without this, every `docker compose stop`
    # or `down` waited out compose's 10 s timeout. SearXNG itself stops on SIGTERM.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"searxng-standin: {BANNER}; listening on :8080", flush=True)
    httpd.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
