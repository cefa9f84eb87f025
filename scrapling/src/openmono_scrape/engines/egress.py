"""The browser's only way out: a forward proxy on 127.0.0.1 that checks and pins every connection.

Why a proxy as well as the context route (`guardroute`): Chromium opens connections that no
Playwright route sees: speculative preconnects when a navigation or a link looks likely, keepalive
`fetch()` and `sendBeacon` requests, WebSockets, and its own DNS lookups after the guard's (a
rebinding window). Launched with this proxy for every destination (`<-loopback>` in the bypass
list removes Chromium's implicit loopback bypass), the browser reaches nothing but this listener,
and the listener:

- for `CONNECT host:port` (HTTPS, WebSockets over TLS): runs the guard on the host, connects to the
  checked address, then relays bytes (TLS stays end to end, so SNI and certificates are untouched);
- for a plain-HTTP request in absolute form: runs the guard on the URL, connects to the checked
  address, forwards the request in origin form with `Connection: close`, relays the answer and
  closes, so each client connection carries exactly one request to the host that was checked;
- answers 403 to anything refused, before any connection to the target is attempted.

Playwright's `route.fetch` (used for document hops) goes through the same proxy, because the proxy
is a launch option of the browser context rather than a command-line flag.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from urllib.parse import SplitResult, urlsplit

from openmono_contracts import NetGuard, NetGuardError

log = logging.getLogger("openmono_scrape.egress")

_HOP_HEADERS = frozenset(
    {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "upgrade"}
)
_REFUSED = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_UPSTREAM_DOWN = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class GuardProxy:
    """A minimal HTTP/1.1 forward proxy enforcing the net guard; one per browser."""

    def __init__(self, guard: NetGuard, connect_timeout_s: float = 15.0) -> None:
        self.guard = guard
        self.connect_timeout_s = connect_timeout_s
        self.refused = 0
        self.forwarded = 0  # connections made to checked targets
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=1 << 16)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except TimeoutError:
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _open(self, url: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        target = await self.guard.check(url)
        opened = await asyncio.wait_for(
            asyncio.open_connection(target.address, port), self.connect_timeout_s
        )
        self.forwarded += 1
        return opened

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            writer.write(_BAD)
            return
        if method.upper() == "CONNECT":
            await self._tunnel(target, reader, writer)
        else:
            await self._forward(method, target, version, lines[1:], reader, writer)

    async def _tunnel(
        self, authority: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        parts = urlsplit(f"//{authority}")
        try:
            port = parts.port or 443
        except ValueError:
            writer.write(_BAD)
            return
        try:
            up_reader, up_writer = await self._open(f"https://{authority}/", port)
        except NetGuardError:
            self.refused += 1
            writer.write(_REFUSED)
            return
        except (OSError, TimeoutError):
            writer.write(_UPSTREAM_DOWN)
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(_relay(reader, up_writer), _relay(up_reader, writer))

    async def _forward(
        self,
        method: str,
        url: str,
        version: str,
        header_lines: list[str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme.lower() != "http" or not parts.hostname:
            writer.write(_BAD)
            return
        try:
            port = parts.port or 80
            up_reader, up_writer = await self._open(url, port)
        except NetGuardError:
            self.refused += 1
            writer.write(_REFUSED)
            return
        except (OSError, TimeoutError, ValueError):
            writer.write(_UPSTREAM_DOWN)
            return
        try:
            await self._send_request(method, parts, version, header_lines, reader, up_writer)
            await _relay(up_reader, writer)
        finally:
            with contextlib.suppress(Exception):
                up_writer.close()

    @staticmethod
    async def _send_request(
        method: str,
        parts: SplitResult,
        version: str,
        header_lines: list[str],
        reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> None:
        """The client's request in origin form, one request per connection."""
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        kept = [
            line
            for line in header_lines
            if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS
        ]
        out = [f"{method} {path} {version}", *kept, "Connection: close", "", ""]
        up_writer.write("\r\n".join(out).encode("latin-1"))
        length = next(
            (
                int(line.split(":", 1)[1].strip())
                for line in kept
                if line.lower().startswith("content-length:")
                and line.split(":", 1)[1].strip().isdigit()
            ),
            0,
        )
        if length:
            up_writer.write(await reader.readexactly(length))
        await up_writer.drain()
