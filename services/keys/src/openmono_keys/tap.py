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
import logging
import re
import time
from dataclasses import dataclass
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
from openmono_keys._h1 import (
    CLIENT_IDLE_S,
    READ_CHUNK,
    UPSTREAM_IDLE_S,
    Refused,
    Upstream,
    answer,
    dial,
    next_event,
    origin_form,
    read_chunk,
    request_body,
    response_head,
    whole_body,
)
from openmono_keys.props import MAX_PROPS_BYTES, public_props
from openmono_keys.secret import from_gateway
from openmono_keys.tapallow import Allowed
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
# an idle replica connection is reused within this (llama-server closes idle ones after 5 s)
POOL_IDLE_S = 1.0


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
        self.up: Upstream | None = None
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


class TokenTap:
    """The proxy. `start()` listens; each gateway connection is served by `_client`."""

    def __init__(self, allowed: Allowed, tokens: TokenLog, secret: str) -> None:
        self.allowed = allowed
        self.tokens = tokens
        self.secret = secret
        self._pool: dict[str, list[Upstream]] = {}
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
                event = await next_event(conn, reader, CLIENT_IDLE_S)
                if not isinstance(event, h11.Request):
                    return
                body = await request_body(conn, reader)
                await self._exchange(conn, reader, writer, event, body)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except Refused:
            return
        except h11.RemoteProtocolError:
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                with contextlib.suppress(ConnectionError, h11.LocalProtocolError):
                    await answer(conn, writer, 400, b'{"error":"bad_request"}')
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
            await answer(conn, writer, 401, b'{"error":"unauthorized"}')
            return
        path = origin_form(request.target)
        if request.method == b"CONNECT" or not path or not await self.allowed.check(target):
            log.warning("token tap: refused %s to %r", request.method.decode(), target)
            await answer(conn, writer, 502, b'{"error":"tap_upstream_refused"}')
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
    ) -> tuple[Upstream, h11.Response]:
        """The request sent and the response's head read: on a pooled connection if one is
        open, and once more on a fresh one if the replica had closed that one under us."""
        out = h11.Request(method=method, target=path, headers=headers)
        for attempt in range(2):
            up = self._pooled(target) if attempt == 0 else None
            pooled = up is not None
            if up is None:
                up = await dial(target)
            watch.up = up
            try:
                if watch.gone:
                    raise Refused
                data = up.conn.send(out) or b""
                if body:
                    data += up.conn.send(h11.Data(data=body)) or b""
                data += up.conn.send(h11.EndOfMessage()) or b""
                up.writer.write(data)
                await up.writer.drain()
                return up, await response_head(up)
            except (ConnectionError, h11.LocalProtocolError, Refused):
                up.close()
                if not pooled or watch.gone:
                    raise Refused from None
        raise Refused

    async def _relay(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        up: Upstream,
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
                    raise Refused from None
                if event is h11.NEED_DATA:
                    writer.write(b"".join(out))
                    out.clear()
                    await writer.drain()  # raises once the gateway went away: generation stops
                    up.conn.receive_data(await read_chunk(up.reader, UPSTREAM_IDLE_S))
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
                    raise Refused
        finally:
            if out:  # what came before a break is passed on before the close
                with contextlib.suppress(ConnectionError, RuntimeError):
                    writer.write(b"".join(out))

    async def _relay_public_props(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        up: Upstream,
        head: h11.Response,
        outcome: _Outcome,
    ) -> None:
        """`/props` or `/v1/models` for anyone but the operator: read whole, its paths taken out
        (a 200 that is not a JSON object is `Refused`: Caddy answers 502), then sent with its new
        length."""
        body = await whole_body(up.conn, up.reader, UPSTREAM_IDLE_S, MAX_PROPS_BYTES, upstream=True)
        if head.status_code == 200:
            try:
                body = public_props(body)
            except ValueError:  # json's errors are ValueErrors too
                raise Refused from None
        skip = _HOP | {b"content-length", b"transfer-encoding"}
        headers = [(n, v) for n, v in head.headers if n not in skip]
        headers.append((b"content-length", str(len(body)).encode()))
        writer.write(conn.send(h11.Response(status_code=head.status_code, headers=headers)) or b"")
        if body:
            writer.write(conn.send(h11.Data(data=body)) or b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        outcome.complete = True

    def _pooled(self, target: str) -> Upstream | None:
        conns = self._pool.get(target, [])
        while conns:
            up = conns.pop()
            if time.monotonic() - up.idle_since < POOL_IDLE_S and not up.reader.at_eof():
                return up
            up.close()
        return None

    def _release(self, target: str, up: Upstream, complete: bool) -> None:
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
    up: Upstream,
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
            raise Refused from None
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
        data = await read_chunk(up.reader, UPSTREAM_IDLE_S)
        if not data:  # the replica broke off: the gateway's connection goes too
            raise Refused


def _skip(_data: bytes) -> None:
    pass


def _is_public(path: bytes) -> bool:
    """`/props` or `/v1/models` (each names the model by its path) in any spelling a server might
    take for it (escapes, doubled slashes, case)."""
    decoded = unquote_to_bytes(path.split(b"?", 1)[0])
    return re.sub(rb"/+", b"/", decoded).lower().rstrip(b"/") in (b"/props", b"/v1/models")
