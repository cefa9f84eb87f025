"""A loopback HTTP server whose pages answer only when the test says so: slow reads on demand.

Each GET is counted. Without a barrier, a request is held until `release` is set; with
`barrier=n`, each request is held until n requests were in flight at the same moment, and the page
says `together=True` if that happened (False after 30 s). Tests use it to put a read-only call
"in the middle" of its work, or to prove that two calls really overlapped.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.procs import free_port


class GatedPages:
    def __init__(self, barrier: int = 0) -> None:
        self.release = threading.Event()
        self.barrier = barrier
        self.arrived = threading.Condition()
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                together = False
                with pages.arrived:
                    pages.count += 1
                    pages.in_flight += 1
                    pages.max_in_flight = max(pages.max_in_flight, pages.in_flight)
                    pages.arrived.notify_all()
                    if pages.barrier:
                        # max_in_flight never goes down: a request that answered first cannot
                        # make the other one miss the moment they were both here.
                        together = pages.arrived.wait_for(
                            lambda: pages.max_in_flight >= pages.barrier, 30
                        )
                if not pages.barrier:
                    pages.release.wait(60)
                body = (
                    f"<html><head><title>gated</title></head><body><p>page {self.path} "
                    f"together={together}</p></body></html>"
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the worker that asked is dead
                finally:
                    with pages.arrived:
                        pages.in_flight -= 1

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def wait_count(self, n: int, timeout_s: float = 60) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: self.count >= n, timeout_s), self.count

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
