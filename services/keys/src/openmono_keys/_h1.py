"""HTTP/1.1 on both sides of the token tap (openmono_keys.tap): reading a gateway's request and a
replica's answer with h11, within their bounds, and dialling a replica.

From a replica, anything but a well-formed answer (a closed connection, garbage, silence past its
bound) is `Refused`: the tap then closes the gateway's connection without an answer, the same
transport error the gateway would have got from the replica itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass, field

import h11

# The gateway sends the model at most 32 MiB (its body limit); the headers stay h11's default cap.
MAX_BODY = 33 * 1024 * 1024
DIAL_TIMEOUT_S = 3.0
# between two reads from a replica: a long prompt's prefill sends nothing for minutes on a CPU
UPSTREAM_IDLE_S = 900.0
# between two requests on a gateway connection (Caddy drops idle ones after 1 s itself)
CLIENT_IDLE_S = 60.0
READ_CHUNK = 64 * 1024


class Refused(Exception):
    """Close the gateway's connection without an answer (Caddy: a transport error)."""


@dataclass
class Upstream:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    conn: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()


def origin_form(target: bytes) -> bytes:
    """`http://host:port/p?q` (what a client sends a forward proxy) or `/p?q` → `/p?q`."""
    if target.startswith(b"/"):
        return target
    scheme, sep, rest = target.partition(b"://")
    if not sep or scheme.lower() != b"http":
        return b""
    slash = rest.find(b"/")
    return rest[slash:] if slash >= 0 else b"/"


async def next_event(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    idle_s: float,
    upstream: bool = False,
) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
    """The next event of `conn`. From a replica (`upstream`), anything but a well-formed message
    (a closed connection, garbage, silence past `idle_s`) is `Refused`: the gateway then gets
    the transport error it would have got from the replica itself."""
    try:
        while True:
            event = conn.next_event()
            if event is not h11.NEED_DATA:
                if upstream and isinstance(event, h11.ConnectionClosed):
                    raise Refused
                return event
            conn.receive_data(await read_chunk(reader, idle_s, upstream))
    except h11.RemoteProtocolError:
        if upstream:
            raise Refused from None
        raise


async def read_chunk(reader: asyncio.StreamReader, idle_s: float, upstream: bool = True) -> bytes:
    """One read (b"" at the end); from a replica (`upstream`), an error or silence past `idle_s`
    is `Refused`."""
    try:
        # a timeout scope, not wait_for: no task per read (this is every chunk of a stream)
        async with asyncio.timeout(idle_s):
            return await reader.read(READ_CHUNK)
    except (ConnectionError, TimeoutError):
        if upstream:
            raise Refused from None
        raise


async def request_body(conn: h11.Connection, reader: asyncio.StreamReader) -> bytes:
    """The whole request body: the gateway has it buffered already, and a retry on a fresh
    replica connection needs it again."""
    return await whole_body(conn, reader, CLIENT_IDLE_S, MAX_BODY)


async def whole_body(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    idle_s: float,
    limit: int,
    *,
    upstream: bool = False,
) -> bytes:
    """A message's whole body, at most `limit` bytes (`Refused` past it, or on anything but
    data and its end)."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await next_event(conn, reader, idle_s, upstream=upstream)
        if isinstance(event, h11.Data):
            size += len(event.data)
            if size > limit:
                raise Refused
            parts.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return b"".join(parts)
        else:
            raise Refused


async def dial(target: str) -> Upstream:
    host, _, port = target.rpartition(":")
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host.strip("[]"), int(port), limit=READ_CHUNK),
            DIAL_TIMEOUT_S,
        )
    except (OSError, TimeoutError, ValueError):
        raise Refused from None
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Upstream(reader, writer)


async def response_head(up: Upstream) -> h11.Response:
    while True:
        event = await next_event(up.conn, up.reader, UPSTREAM_IDLE_S, upstream=True)
        if isinstance(event, h11.Response):
            return event
        if not isinstance(event, h11.InformationalResponse):
            raise Refused


async def answer(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, body: bytes
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    writer.write(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
    writer.write(conn.send(h11.Data(data=body)) or b"")
    writer.write(conn.send(h11.EndOfMessage()) or b"")
    await writer.drain()
