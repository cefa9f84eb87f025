"""The token tap: the gateway's forward proxy for LLM requests, which records tokens per key.

Caddy passes response bodies on unread, so the gateway cannot count the tokens a key used. With
`GATEWAY_USAGE_TOKENS=on` its LLM route sends every attempt through this proxy
(`forward_proxy_url`), adding two headers: the key's name (`X-OpenMono-Key`) and the replica
Caddy chose (`X-OpenMono-Upstream`). Caddy still picks the replica (affinity, least_conn, health
checks, retries); the tap only relays the exchange to it, byte for byte and unbuffered, keeping the
last 16 KiB of the body, and once the response is over it appends one `TokenRecord` (numbers
only) to `tokens.log`. Only the gateway may use it: a request without the gateway's own secret
(openmono_keys.secret) is answered 401, dials nothing and records nothing. A box key's
`GET /props` and `GET /v1/models` are the responses it reads whole, to pass them on without the
model's path (openmono_keys.props); the gateway sends a box's request for them here whether or not
it counts tokens.

A replica it cannot reach, or one that closes before answering, makes the tap close the gateway's
connection without an answer: Caddy sees the same transport error as without the tap, so its
retries and passive health checks work as before. Only the listed upstreams (names resolved again
on a miss, so compose's `--scale` replicas count) are ever dialled: the tap is no open proxy for
whoever reaches its port.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

import h11
from openmono_contracts.gatewaykeys import (
    GATEWAY_HEADER,
    KEY_HEADER,
    OPERATOR,
    UPSTREAM_HEADER,
    TokenRecord,
)

from openmono_keys._chunked import ChunkedEnd
from openmono_keys.props import MAX_PROPS_BYTES, public_props
from openmono_keys.secret import from_gateway
from openmono_keys.tokens import Tail, TokenLog, counts

log = logging.getLogger("openmono_keys.tap")

_KEY = KEY_HEADER.lower().encode()
_UPSTREAM = UPSTREAM_HEADER.lower().encode()
_GATEWAY = GATEWAY_HEADER.lower().encode()
# hop-by-hop (RFC 9110 §7.6.1) and the proxy's own: never passed on in either direction
_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"proxy-authorization",
    b"proxy-authenticate",
    b"te",
    b"trailer",
    b"upgrade",
}
# The gateway sends the model at most 32 MiB (its body limit); the headers stay h11's default cap.
MAX_BODY = 33 * 1024 * 1024
DIAL_TIMEOUT_S = 3.0
# between two reads from a replica: a long prompt's prefill sends nothing for minutes on a CPU
UPSTREAM_IDLE_S = 900.0
# between two requests on a gateway connection (Caddy drops idle ones after 1 s itself)
CLIENT_IDLE_S = 60.0
# an idle replica connection is reused within this (llama-server closes idle ones after 5 s)
POOL_IDLE_S = 1.0
READ_CHUNK = 64 * 1024


class _Refused(Exception):
    """Close the gateway's connection without an answer (Caddy: a transport error)."""


@dataclass
class _Outcome:
    status: int
    complete: bool = False


class _Watch:
    """The gateway's side of an exchange until the replica answers. A gateway that hangs up then
    (its client cancelled during a long prefill) makes the tap close the replica's connection at
    once, which stops llama-server's work, as the gateway's own close does without the tap.
    Bytes that come meanwhile (a next request) go to the connection's parser."""

    def __init__(self, conn: h11.Connection, reader: asyncio.StreamReader) -> None:
        self.up: _Upstream | None = None
        self.gone = False
        self._task = asyncio.ensure_future(self._run(conn, reader))

    async def _run(self, conn: h11.Connection, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                data = await reader.read(READ_CHUNK)
            except ConnectionError:
                data = b""
            if not data:
                self.gone = True
                if self.up is not None:
                    self.up.close()
                return
            conn.receive_data(data)

    async def stop(self) -> None:
        # awaited: the reader must be free again before the exchange reads from it
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


@dataclass
class _Upstream:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    conn: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()


class Allowed:
    """The replicas the tap may dial: `host:port` entries, names resolved again on a miss.

    One lookup at a time, and a miss waits for a lookup that started after it asked: requests
    that miss together (the first ones, a new `--scale` replica) share one lookup and none is
    refused for arriving while it ran; a stream of unlisted targets costs one lookup after
    another, never several at once."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = [e for e in entries if e]
        self._resolved: set[str] = set()
        self._started = float("-inf")  # when the last lookup started
        self._lock = asyncio.Lock()

    async def check(self, target: str) -> bool:
        if target in self.entries or target in self._resolved:
            return True
        asked = time.monotonic()
        async with self._lock:
            if self._started < asked:
                self._started = time.monotonic()
                self._resolved = await self._resolve()
        return target in self._resolved

    async def _resolve(self) -> set[str]:
        loop = asyncio.get_running_loop()
        out: set[str] = set()
        for entry in self.entries:
            host, _, port = entry.rpartition(":")
            host = host.strip("[]")
            try:
                ipaddress.ip_address(host)
                continue  # a literal is matched as written
            except ValueError:
                pass
            try:
                infos = await asyncio.wait_for(
                    loop.getaddrinfo(host, int(port), type=socket.SOCK_STREAM), 2.0
                )
            except (OSError, TimeoutError, ValueError):
                continue
            for info in infos:
                addr = str(info[4][0])
                out.add(f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}")
        return out


class TokenTap:
    """The proxy. `start()` listens; each gateway connection is served by `_client`."""

    def __init__(self, allowed: Allowed, tokens: TokenLog, secret: str) -> None:
        self.allowed = allowed
        self.tokens = tokens
        self.secret = secret
        self._pool: dict[str, list[_Upstream]] = {}
        self._server: asyncio.Server | None = None
        self._write_failed = False

    async def start(self, host: str, port: int) -> asyncio.Server:
        self._server = await asyncio.start_server(self._client, host, port, limit=READ_CHUNK)
        return self._server

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for conns in self._pool.values():
            for up in conns:
                up.close()
        self._pool.clear()
        self.tokens.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        try:
            while True:
                event = await _next(conn, reader, CLIENT_IDLE_S)
                if not isinstance(event, h11.Request):
                    return
                body = await _body(conn, reader)
                await self._exchange(conn, reader, writer, event, body)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except _Refused:
            return
        except h11.RemoteProtocolError:
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                with contextlib.suppress(ConnectionError, h11.LocalProtocolError):
                    await _answer(conn, writer, 400, b'{"error":"bad_request"}')
            return
        except (TimeoutError, ConnectionError):
            return
        except Exception:  # one broken exchange must not take the tap down
            log.exception("token tap: exchange failed")
        finally:
            writer.close()

    async def _exchange(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        request: h11.Request,
        body: bytes,
    ) -> None:
        key, target, headers = "", "", []
        given: list[bytes] = []
        for name, value in request.headers:
            if name == _KEY:
                key = value.decode("latin-1")
            elif name == _UPSTREAM:
                target = value.decode("latin-1")
            elif name == _GATEWAY:
                given.append(value)
            elif name not in _HOP:
                headers.append((name, value))
        if len(given) != 1 or not from_gateway(given[0], self.secret):
            # not the gateway: nothing is dialled and nothing is recorded under `key`
            await _answer(conn, writer, 401, b'{"error":"unauthorized"}')
            return
        path = _origin_form(request.target)
        if request.method == b"CONNECT" or not path or not await self.allowed.check(target):
            log.warning("token tap: refused %s to %r", request.method.decode(), target)
            await _answer(conn, writer, 502, b'{"error":"tap_upstream_refused"}')
            return
        started = time.time()
        # watching the gateway's side until the response is over, not only until its head: its
        # end (a cancel and one more turn of the loop) stays off the way to the first event
        watch = _Watch(conn, reader)
        try:
            up, head = await self._open(target, request.method, path, headers, body, watch)
            tail = Tail() if request.method == b"POST" else None
            outcome = _Outcome(status=head.status_code)
            try:
                if request.method == b"GET" and key != OPERATOR and _is_public(path):
                    await self._relay_public_props(conn, writer, up, head, outcome)
                else:
                    await self._relay(conn, writer, up, head, tail, outcome, request.method)
            finally:
                self._release(target, up, outcome.complete)
                if tail is not None:
                    self._record(started, key, path, outcome, tail)
        finally:
            await watch.stop()

    async def _open(
        self,
        target: str,
        method: bytes,
        path: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        watch: _Watch,
    ) -> tuple[_Upstream, h11.Response]:
        """The request sent and the response's head read: on a pooled connection if one is
        open, and once more on a fresh one if the replica had closed that one under us."""
        out = h11.Request(method=method, target=path, headers=headers)
        for attempt in range(2):
            up = self._pooled(target) if attempt == 0 else None
            pooled = up is not None
            if up is None:
                up = await _dial(target)
            watch.up = up
            try:
                if watch.gone:
                    raise _Refused
                data = up.conn.send(out) or b""
                if body:
                    data += up.conn.send(h11.Data(data=body)) or b""
                data += up.conn.send(h11.EndOfMessage()) or b""
                up.writer.write(data)
                await up.writer.drain()
                return up, await _head(up)
            except (ConnectionError, h11.LocalProtocolError, _Refused):
                up.close()
                if not pooled or watch.gone:
                    raise _Refused from None
        raise _Refused

    async def _relay(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        up: _Upstream,
        head: h11.Response,
        tail: Tail | None,
        outcome: _Outcome,
        method: bytes,
    ) -> None:
        """Pass the response on as it comes; `outcome.complete` once it reached its end.

        What one read from the replica brought (the head and a first event, several events) goes
        on in one write as soon as it is parsed: nothing waits for more, and a send on loopback
        costs about as much as the parsing, so one per read rather than one per event. A chunked
        body (every stream) goes on as the replica's own bytes (`_pass_chunked`)."""
        headers = [(n, v) for n, v in head.headers if n not in _HOP]
        out = [conn.send(h11.Response(status_code=head.status_code, headers=headers)) or b""]
        if _chunked_both_ways(conn, head, method):
            await _pass_chunked(conn, writer, up, head, tail, outcome, b"".join(out))
            return
        try:
            while True:
                try:
                    event = up.conn.next_event()
                except h11.RemoteProtocolError:
                    raise _Refused from None
                if event is h11.NEED_DATA:
                    writer.write(b"".join(out))
                    out.clear()
                    await writer.drain()  # raises once the gateway went away: generation stops
                    up.conn.receive_data(await _read(up.reader, UPSTREAM_IDLE_S))
                elif isinstance(event, h11.Data):
                    if tail is not None:
                        tail.add(event.data)
                    out.append(conn.send(event) or b"")
                elif isinstance(event, h11.EndOfMessage):
                    out.append(conn.send(h11.EndOfMessage()) or b"")
                    writer.write(b"".join(out))
                    out.clear()
                    await writer.drain()
                    outcome.complete = True
                    return
                else:  # the replica broke off: the gateway's connection goes too
                    raise _Refused
        finally:
            if out:  # what came before a break is passed on before the close
                with contextlib.suppress(ConnectionError, RuntimeError):
                    writer.write(b"".join(out))

    async def _relay_public_props(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        up: _Upstream,
        head: h11.Response,
        outcome: _Outcome,
    ) -> None:
        """`/props` or `/v1/models` for anyone but the operator: read whole, its paths taken out
        (a 200 that is not a JSON object is `_Refused`: Caddy answers 502), then sent with its new
        length."""
        body = await _whole(up.conn, up.reader, UPSTREAM_IDLE_S, MAX_PROPS_BYTES, upstream=True)
        if head.status_code == 200:
            try:
                body = public_props(body)
            except ValueError:  # json's errors are ValueErrors too
                raise _Refused from None
        skip = _HOP | {b"content-length", b"transfer-encoding"}
        headers = [(n, v) for n, v in head.headers if n not in skip]
        headers.append((b"content-length", str(len(body)).encode()))
        writer.write(conn.send(h11.Response(status_code=head.status_code, headers=headers)) or b"")
        if body:
            writer.write(conn.send(h11.Data(data=body)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        outcome.complete = True

    def _pooled(self, target: str) -> _Upstream | None:
        conns = self._pool.get(target, [])
        while conns:
            up = conns.pop()
            if time.monotonic() - up.idle_since < POOL_IDLE_S and not up.reader.at_eof():
                return up
            up.close()
        return None

    def _release(self, target: str, up: _Upstream, complete: bool) -> None:
        states = (up.conn.our_state, up.conn.their_state)
        # IDLE: a passed-through body left the replica's connection ready for the next request
        if complete and states in ((h11.DONE, h11.DONE), (h11.IDLE, h11.IDLE)):
            if states[0] is h11.DONE:
                up.conn.start_next_cycle()
            up.idle_since = time.monotonic()
            self._pool.setdefault(target, []).append(up)
        else:
            up.close()  # mid-response: closing is what tells llama-server to stop generating

    def _record(self, started: float, key: str, path: bytes, outcome: _Outcome, tail: Tail) -> None:
        found = counts(tail.bytes())
        record = TokenRecord(
            ts=started,
            key=key,
            route=path.split(b"?", 1)[0].decode("latin-1"),
            status=outcome.status,
            prompt_tokens=found.prompt,
            completion_tokens=found.completion,
            cached_tokens=found.cached,
            complete=outcome.complete,
        )
        try:
            self.tokens.write(record)
            self._write_failed = False
        except OSError as exc:
            if not self._write_failed:  # once per failing spell, not once per request
                log.error(
                    "token tap: cannot write %s (%s); the requests go on, uncounted. A compose "
                    "volume made before token counts is root's: `docker compose run --rm -u 0 "
                    "keys chown 1000 /var/log/openmono` once",
                    self.tokens.path,
                    exc,
                )
            self._write_failed = True


def _chunked_both_ways(conn: h11.Connection, head: h11.Response, method: bytes) -> bool:
    """Whether the replica's response is chunked and goes on chunked: both sides HTTP/1.1, a
    body, `Transfer-Encoding: chunked` (h11 took nothing else with it). Then the replica's
    framing is what the gateway would get from h11 anyway, and its bytes go on as they are."""
    return (
        conn.their_http_version == b"1.1"
        and head.http_version == b"1.1"
        and method != b"HEAD"
        and head.status_code not in (204, 304)
        and conn.our_state is h11.SEND_BODY
        and any(n == b"transfer-encoding" and v == b"chunked" for n, v in head.headers)
    )


async def _pass_chunked(
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    up: _Upstream,
    head: h11.Response,
    tail: Tail | None,
    outcome: _Outcome,
    start: bytes,
) -> None:
    """The body as the replica's own bytes, each read written on at once (after `start`, the
    response's head), up to the end of its framing and not a byte further. The replica's
    connection is reused only when its answer ended exactly with a read and did not ask to be
    closed: it then gets a fresh parser, being where a new exchange starts."""
    scan = ChunkedEnd(tail.add if tail is not None else _skip)
    data = up.conn.trailing_data[0]  # what came with the head
    while True:
        try:
            end = scan.feed(data)
        except ValueError:
            raise _Refused from None
        if end is not None:
            writer.write(start + data[:end])
            await writer.drain()
            conn.send(h11.EndOfMessage())  # its bytes (the last chunk) went on above, the replica's
            outcome.complete = True
            closes = any(n == b"connection" and b"close" in v.lower() for n, v in head.headers)
            if end == len(data) and not closes:
                up.conn = h11.Connection(h11.CLIENT)
            return
        if start or data:
            writer.write(start + data)
            start = b""
            await writer.drain()  # raises once the gateway went away: generation stops
        data = await _read(up.reader, UPSTREAM_IDLE_S)
        if not data:  # the replica broke off: the gateway's connection goes too
            raise _Refused


def _skip(_data: bytes) -> None:
    pass


def _is_public(path: bytes) -> bool:
    """`/props` or `/v1/models` (each names the model by its path) in any spelling a server might
    take for it (escapes, doubled slashes, case)."""
    decoded = unquote_to_bytes(path.split(b"?", 1)[0])
    return re.sub(rb"/+", b"/", decoded).lower().rstrip(b"/") in (b"/props", b"/v1/models")


def _origin_form(target: bytes) -> bytes:
    """`http://host:port/p?q` (what a client sends a forward proxy) or `/p?q` → `/p?q`."""
    if target.startswith(b"/"):
        return target
    scheme, sep, rest = target.partition(b"://")
    if not sep or scheme.lower() != b"http":
        return b""
    slash = rest.find(b"/")
    return rest[slash:] if slash >= 0 else b"/"


async def _next(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    idle_s: float,
    upstream: bool = False,
) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
    """The next event of `conn`. From a replica (`upstream`), anything but a well-formed message
    (a closed connection, garbage, silence past `idle_s`) is `_Refused`: the gateway then gets
    the transport error it would have got from the replica itself."""
    try:
        while True:
            event = conn.next_event()
            if event is not h11.NEED_DATA:
                if upstream and isinstance(event, h11.ConnectionClosed):
                    raise _Refused
                return event
            conn.receive_data(await _read(reader, idle_s, upstream))
    except h11.RemoteProtocolError:
        if upstream:
            raise _Refused from None
        raise


async def _read(reader: asyncio.StreamReader, idle_s: float, upstream: bool = True) -> bytes:
    """One read (b"" at the end); from a replica (`upstream`), an error or silence past `idle_s`
    is `_Refused`."""
    try:
        # a timeout scope, not wait_for: no task per read (this is every chunk of a stream)
        async with asyncio.timeout(idle_s):
            return await reader.read(READ_CHUNK)
    except (ConnectionError, TimeoutError):
        if upstream:
            raise _Refused from None
        raise


async def _body(conn: h11.Connection, reader: asyncio.StreamReader) -> bytes:
    """The whole request body: the gateway has it buffered already, and a retry on a fresh
    replica connection needs it again."""
    return await _whole(conn, reader, CLIENT_IDLE_S, MAX_BODY)


async def _whole(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    idle_s: float,
    limit: int,
    *,
    upstream: bool = False,
) -> bytes:
    """A message's whole body, at most `limit` bytes (`_Refused` past it, or on anything but
    data and its end)."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await _next(conn, reader, idle_s, upstream=upstream)
        if isinstance(event, h11.Data):
            size += len(event.data)
            if size > limit:
                raise _Refused
            parts.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return b"".join(parts)
        else:
            raise _Refused


async def _dial(target: str) -> _Upstream:
    host, _, port = target.rpartition(":")
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host.strip("[]"), int(port), limit=READ_CHUNK),
            DIAL_TIMEOUT_S,
        )
    except (OSError, TimeoutError, ValueError):
        raise _Refused from None
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return _Upstream(reader, writer)


async def _head(up: _Upstream) -> h11.Response:
    while True:
        event = await _next(up.conn, up.reader, UPSTREAM_IDLE_S, upstream=True)
        if isinstance(event, h11.Response):
            return event
        if not isinstance(event, h11.InformationalResponse):
            raise _Refused


async def _answer(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, body: bytes
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    writer.write(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
    writer.write(conn.send(h11.Data(data=body)) or b"")
    writer.write(conn.send(h11.EndOfMessage()) or b"")
    await writer.drain()
